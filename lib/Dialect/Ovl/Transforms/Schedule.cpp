//===- Schedule.cpp - Latency-hiding scheduling of async permutes ---------===//
//
// ovl-schedule reorders the operations of each block so that the transfers
// between ovl.collective_permute_start and ovl.collective_permute_done
// overlap computation (section 5.2 of the paper). Each block becomes an
// IR-free dependency graph (ScheduleGraphBuilder), which the scheduling
// library orders (Scheduling/BlockScheduler.h: a list scheduler under the
// in-flight budget, improved and guarded on a replay or the event
// simulator); the ops are then moved into that order. Blocks are scheduled
// innermost first, so that a loop around permutes is priced by, and holds
// the slots of, its scheduled body.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/Dialect/Ovl/Transforms/Passes.h"

#include "ScheduleGraphBuilder.h"

#include "OverlapDialect/Analysis/MachineModel.h"
#include "OverlapDialect/Dialect/Ovl/Transforms/Transforms.h"
#include "OverlapDialect/Scheduling/BlockScheduleCache.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/RegionKindInterface.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "llvm/Support/Debug.h"

#include <algorithm>

#define DEBUG_TYPE "ovl-schedule"

namespace mlir::ovl {
#define GEN_PASS_DEF_OVLSCHEDULEPASS
#include "OverlapDialect/Dialect/Ovl/Transforms/Passes.h.inc"
} // namespace mlir::ovl

using namespace mlir;
using namespace mlir::ovl;

namespace {

/// Whether the blocks of `op`'s regions are scheduled: control flow and
/// loops (not payload regions such as linalg.generic's, which are priced as
/// a whole), in SSA-dominance regions, not isolated from above (a nested
/// function is scheduled by its own pass instance).
bool schedulesRegionsOf(Operation *op) {
  if (op->getNumRegions() == 0 ||
      op->hasTrait<OpTrait::IsIsolatedFromAbove>() ||
      !isa<RegionBranchOpInterface, LoopLikeOpInterface>(op))
    return false;
  if (auto kinds = dyn_cast<RegionKindInterface>(op))
    for (unsigned i = 0, e = op->getNumRegions(); i < e; ++i)
      if (!kinds.hasSSADominance(i))
        return false;
  return true;
}

/// The scheduler of one op's regions: builds each block's graph, orders it
/// and moves the ops.
class Scheduler {
public:
  Scheduler(MachineModelCache &machines, const AnalyticalCostModel &compute,
            const ScheduleOptions &options, unsigned budget)
      : builder(machines, compute, summaries) {
    blockOptions.algorithm = options.algorithm == ScheduleAlgorithm::TopDown
                                 ? sched::Algorithm::TopDown
                                 : sched::Algorithm::BottomUp;
    blockOptions.budget = static_cast<int>(budget);
    blockOptions.simulatedImproveReplays = options.simulatedImproveReplays;
    memoryBudget = options.memoryBudget;
    schedules = options.schedules;
  }

  /// Schedules the blocks of `op`'s regions, nested control flow first, and
  /// returns what they amount to.
  FailureOr<RegionSummary> scheduleRegionsOf(Operation *op);

  ScheduleResult result;
  /// Blocks whose schedule the cost model priced slower than the input
  /// order, which they keep.
  unsigned keptInputBlocks = 0;

private:
  FailureOr<sched::BlockOutcome> scheduleBlock(Block &block);

  sched::BlockScheduleOptions blockOptions;
  /// The memory budget when the pass gives one (0: the graph's, the HBM).
  double memoryBudget = 0;
  /// Schedules made before, when given.
  sched::BlockScheduleCache *schedules = nullptr;
  /// Ops whose regions were scheduled.
  DenseMap<Operation *, RegionSummary> summaries;
  ScheduleGraphBuilder builder;
};

FailureOr<RegionSummary> Scheduler::scheduleRegionsOf(Operation *op) {
  RegionSummary summary;
  // Region branch ops run one of their regions (scf.if), loops all of them
  // (scf.while's condition and body) once per iteration.
  bool sumRegions = isa<LoopLikeOpInterface>(op);
  for (Region &region : op->getRegions()) {
    double regionCost = 0;
    for (Block &block : region) {
      for (Operation &nested : block)
        if (schedulesRegionsOf(&nested)) {
          FailureOr<RegionSummary> inner = scheduleRegionsOf(&nested);
          if (failed(inner))
            return failure();
          summaries[&nested] = *inner;
        }
      FailureOr<sched::BlockOutcome> outcome = scheduleBlock(block);
      if (failed(outcome))
        return failure();
      regionCost += outcome->makespan;
      summary.peak = std::max(summary.peak, outcome->peak);
    }
    summary.cost = sumRegions ? summary.cost + regionCost
                              : std::max(summary.cost, regionCost);
  }
  if (auto loop = dyn_cast<LoopLikeOpInterface>(op))
    if (std::optional<APInt> trips = loop.getStaticTripCount())
      summary.cost *= static_cast<double>(trips->getZExtValue());
  return summary;
}

FailureOr<sched::BlockOutcome> Scheduler::scheduleBlock(Block &block) {
  Operation *terminator = nullptr;
  if (!block.empty() && block.back().mightHaveTrait<OpTrait::IsTerminator>())
    terminator = &block.back();
  SmallVector<Operation *> ops;
  FailureOr<sched::ScheduleGraph> graph = builder.build(block, terminator, ops);
  if (failed(graph))
    return failure();
  if (memoryBudget > 0)
    graph->memoryBudget = memoryBudget;
  sched::BlockSchedule schedule =
      schedules ? schedules->schedule(*graph, blockOptions)
                : sched::scheduleBlock(*graph, blockOptions);
  const sched::BlockOutcome &outcome = schedule.outcome;
  keptInputBlocks += schedule.keptInput;
  if (outcome.overBudgetAt) {
    ++result.overBudgetBlocks;
    ops[*outcome.overBudgetAt]->emitWarning("ovl-schedule: ")
        << outcome.overBudgetCount
        << " asynchronous transfers in flight here, more than max-in-flight = "
        << blockOptions.budget
        << ": the dependencies allow no order within the budget";
  }
  if (outcome.overMemoryAt) {
    ++result.overBudgetBlocks;
    ops[*outcome.overMemoryAt]->emitWarning("ovl-schedule: ")
        << static_cast<int64_t>(outcome.overMemoryBytes)
        << " bytes of transfer buffers in flight here, more than the memory "
           "budget of "
        << static_cast<int64_t>(graph->memoryBudget)
        << ": the dependencies allow no order within it";
  }
  result.peakInFlight =
      std::max(result.peakInFlight, static_cast<unsigned>(outcome.peak));
  ++result.blocks;
  LLVM_DEBUG({
    llvm::dbgs() << "[ovl-schedule] order:";
    for (unsigned i : schedule.order)
      llvm::dbgs() << " " << i;
    llvm::dbgs() << "\n";
  });
  result.movedOps += applyOrder(block, terminator, ops, schedule.order);
  return outcome;
}

/// scheduleRegions, also counting in `keptInput` the blocks left in their
/// input order by the guard.
FailureOr<ScheduleResult> scheduleAndCount(Operation *root,
                                           MachineModelCache &machines,
                                           const ScheduleOptions &options,
                                           unsigned &keptInput) {
  llvm::Expected<const AnalyticalCostModel *> compute = machines.getCostModel();
  if (!compute) {
    root->emitError("ovl-schedule: ") << llvm::toString(compute.takeError());
    return failure();
  }
  unsigned budget = options.maxInFlight ? options.maxInFlight
                                        : (*compute)->getHardware().dmaSlots;
  Scheduler scheduler(machines, **compute, options, std::max(budget, 1u));
  // The root's own regions, whatever kind of op it is (a function), unless
  // they are graph regions, whose order means nothing.
  if (auto kinds = dyn_cast<RegionKindInterface>(root))
    for (Region &region : root->getRegions())
      if (!kinds.hasSSADominance(region.getRegionNumber()))
        return scheduler.result;
  if (failed(scheduler.scheduleRegionsOf(root)))
    return failure();
  keptInput = scheduler.keptInputBlocks;
  return scheduler.result;
}

struct OvlSchedulePass
    : public ovl::impl::OvlSchedulePassBase<OvlSchedulePass> {
  using Base::Base;

  void runOnOperation() override {
    if (!machines)
      machines.emplace(hardware, topology, deviceAssignment);
    ScheduleOptions options;
    options.algorithm = algorithm;
    options.maxInFlight = maxInFlight;
    for (auto [name, range, value] :
         {std::tuple("max-in-flight", ranges::kMaxInFlight,
                     double(maxInFlight)),
          std::tuple("memory-budget", ranges::kOptionalFigure,
                     double(memoryBudget))}) {
      std::string error = overlap::checkNumber(name, range, value);
      if (!error.empty()) {
        getOperation()->emitError("ovl-schedule: ") << error;
        return signalPassFailure();
      }
    }
    options.memoryBudget = memoryBudget;
    options.schedules = &schedules;
    unsigned keptInput = 0;
    FailureOr<ScheduleResult> result =
        scheduleAndCount(getOperation(), *machines, options, keptInput);
    if (failed(result))
      return signalPassFailure();
    numBlocks += result->blocks;
    numMoved += result->movedOps;
    numOverBudget += result->overBudgetBlocks;
    numKeptInput += keptInput;
  }

  /// One machine per grid shape, from the pass options.
  std::optional<MachineModelCache> machines;
  /// The blocks ordered, for the layers that repeat them (valid with
  /// `machines`).
  sched::BlockScheduleCache schedules;
};
} // namespace

FailureOr<ScheduleResult>
mlir::ovl::scheduleRegions(Operation *root, MachineModelCache &machines,
                           const ScheduleOptions &options) {
  unsigned keptInput = 0;
  return scheduleAndCount(root, machines, options, keptInput);
}
