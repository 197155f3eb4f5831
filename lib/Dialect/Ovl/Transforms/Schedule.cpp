//===- Schedule.cpp - Latency-hiding scheduling of async permutes ---------===//
//
// ovl-schedule reorders the operations of each block so that the transfers
// between ovl.collective_permute_start and ovl.collective_permute_done
// overlap computation (section 5.2 of the paper). Every block becomes a
// dependency graph (SSA uses, in-place writes, memory effects) whose nodes
// carry the cost model's times and the transfer slots they hold, and a list
// scheduler orders it under the in-flight budget: bottom-up (algorithm 2)
// or top-down. Transfers are timed as overlap-sim plays them, sharing the
// bandwidth of the links they cross (LinkFlows). A replay of the block on
// that model then improves the list order by single moves and guards the
// result: an order it prices slower than the input order is not kept. A
// block the event simulator can play on its own (BlockSimulation) is
// judged by the simulator instead, whose devices need not keep in step.
// Blocks are scheduled innermost first, so that a loop around permutes is
// priced by, and holds the slots of, its scheduled body.
//
// Expects a verified program on tensors or buffers, of any dialects: an op
// the cost model does not know is opaque compute with a default cost, an op
// with unknown memory effects is a barrier nothing moves across.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/Dialect/Ovl/Transforms/Passes.h"

#include "OverlapDialect/Analysis/CostEstimates.h"
#include "OverlapDialect/Analysis/MachineModel.h"
#include "OverlapDialect/Dialect/Ovl/IR/OvlOps.h"
#include "OverlapDialect/Dialect/Ovl/Transforms/Transforms.h"
#include "OverlapDialect/Simulator/Simulator.h"

#include "mlir/Analysis/AliasAnalysis/LocalAliasAnalysis.h"
#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/RegionKindInterface.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Debug.h"

#include <algorithm>
#include <limits>
#include <map>

#define DEBUG_TYPE "ovl-schedule"

namespace mlir::ovl {
#define GEN_PASS_DEF_OVLSCHEDULEPASS
#include "OverlapDialect/Dialect/Ovl/Transforms/Passes.h.inc"
} // namespace mlir::ovl

using namespace mlir;
using namespace mlir::ovl;

namespace {

/// The time, in seconds, of an op the cost model cannot price (an unknown
/// op, dynamic shapes), and of a transfer it cannot price: about a
/// collective's launch overhead, small next to the einsums a schedule is
/// about.
constexpr double kDefaultCost = 1e-6;

/// Estimates closer than this, relatively, are the same time: the
/// schedulers' and the replay's sums of the same costs in other orders
/// differ by rounding.
constexpr double kSameTime = 1e-9;

/// The replays Scheduler::improve may spend on one block, and the least
/// gain, relative to the block's time, for which it moves an op: smaller
/// gains are within the cost model's error and not worth a change of order
/// (buffers' lifetimes, the order a reader expects).
constexpr unsigned kImproveReplays = 4096;
constexpr double kImproveGain = 1e-2;

/// The most device-steps (devices x ops) of a block for which improve's
/// moves are judged by the event simulator rather than by the replay: a
/// few thousand plays of a small block take milliseconds.
constexpr int64_t kSimulatedImproveSize = 4096;

enum class NodeKind { Compute, Start, Done };

/// Transfers of one start whose routes have as many hops and that split
/// over as many ports.
struct TransferKind {
  /// The launch and the hops' latency, before the data moves.
  double setup = 0;
  /// The share of the start's bytes each of them streams: 1 / ports.
  double share = 1;
  /// The link classes (see BlockGraph) these transfers cross, with how many
  /// of them cross each link of the class.
  SmallVector<std::pair<unsigned, int>, 2> linkLoads;
};

/// One op of the block being scheduled.
struct Node {
  Operation *op = nullptr;
  NodeKind kind = NodeKind::Compute;
  /// Time on the device's stream: the op's compute, a blocking collective's
  /// transfer, a loop's scheduled body times its trip count; 0 for starts
  /// and dones.
  double cost = 0;
  /// A start's transfers, as the simulator plays them: `stream` is the time
  /// of its bytes at a link's bandwidth; those of its transfers (one per
  /// pair, in every group of the grid) whose routes are as long go
  /// together, as one of `kinds`: each waits out its setup (the launch and
  /// the hops' latency), then streams, sharing each link with the other
  /// transfers streaming over it. `latency` is the time the slowest takes
  /// alone: its done completes no earlier.
  double stream = 0;
  SmallVector<TransferKind, 1> kinds;
  double latency = 0;
  /// Tokens the op completes or passes on (its token operands and the ones
  /// its regions use from outside), and token results.
  int consumes = 0;
  int produces = 0;
  /// Transfer slots the op holds at its peak: max(consumes, produces, the
  /// peak of its scheduled regions).
  int slots = 0;
  /// Must follow a done of the block: uses the data it delivers, directly
  /// or through other ops.
  bool usesDone = false;
  /// A transitive predecessor of a start of the block.
  bool feedsStart = false;
  /// Consumes a token from outside the block (a loop's carried transfer).
  bool waitsOnEntry = false;
  /// A start whose token the terminator passes on (to the next iteration).
  bool leavesBlock = false;
  /// Reads or writes memory, or has unknown effects.
  bool touchesMemory = false;
  SmallVector<unsigned, 4> preds, succs;
  /// The starts whose token the op consumes: the edge carries the transfer.
  SmallVector<unsigned, 1> asyncPreds;
};

/// The dependency graph of one block, without its terminator.
struct BlockGraph {
  SmallVector<Node> nodes;
  /// Transfers in flight when the block begins (token arguments, tokens its
  /// ops use from outside) and when it ends (tokens the terminator passes
  /// on).
  int entryInFlight = 0;
  int exitInFlight = 0;
  /// Links crossed by as many transfers of each kind of the block's
  /// starts form one class: they are loaded alike whatever is in flight.
  unsigned numLinkClasses = 0;

  /// Transfers in flight while node `i` runs when `inFlight` are before it.
  int during(unsigned i, int inFlight) const {
    const Node &node = nodes[i];
    return inFlight - node.consumes + node.slots;
  }
  /// Transfers in flight after node `i`.
  int after(unsigned i, int inFlight) const {
    const Node &node = nodes[i];
    return inFlight - node.consumes + node.produces;
  }
  /// `seeds` and every node they depend on (`up`) or that depends on them.
  llvm::BitVector closure(ArrayRef<unsigned> seeds, bool up) const {
    llvm::BitVector seen(nodes.size());
    SmallVector<unsigned> work(seeds.begin(), seeds.end());
    while (!work.empty()) {
      unsigned i = work.pop_back_val();
      if (seen.test(i))
        continue;
      seen.set(i);
      llvm::append_range(work, up ? nodes[i].preds : nodes[i].succs);
    }
    return seen;
  }
};

/// What a scheduled block amounts to, for the op around it.
struct BlockOutcome {
  /// The estimated time of one run of the block, stalls included.
  double makespan = 0;
  /// The most transfers in flight at any point.
  int peak = 0;
  /// The first op that runs with more transfers in flight than the budget
  /// beyond what it holds itself (a loop that alone needs more was reported
  /// inside), and that count.
  Operation *overBudgetAt = nullptr;
  int overBudgetCount = 0;
};

/// The cost and the peak in-flight count of an op whose regions were
/// scheduled.
struct RegionSummary {
  double cost = 0;
  int peak = 0;
};

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

/// Whether `value` is defined inside `op` (in one of its regions).
bool isDefinedInside(Value value, Operation *op) {
  Operation *parent = value.getParentRegion()->getParentOp();
  return parent && op->isAncestor(parent);
}

/// Whether `operand` is a tensor its op overwrites in place once bufferized:
/// the op's bufferization model says it writes it, or it is a destination
/// (DPS init), or an einsum's accumulator (which becomes linalg's output).
bool writesInPlace(OpOperand &operand,
                   const bufferization::AnalysisState &state) {
  Operation *op = operand.getOwner();
  // A call's model looks at its callee, another function; calls without
  // effects interfaces are barriers anyway.
  if (!isa<TensorType>(operand.get().getType()) || isa<CallOpInterface>(op))
    return false;
  if (auto bufferizable = dyn_cast<bufferization::BufferizableOpInterface>(op))
    return bufferizable.bufferizesToMemoryWrite(operand, state);
  if (auto dps = dyn_cast<DestinationStyleOpInterface>(op))
    return dps.isDpsInit(&operand);
  if (auto einsum = dyn_cast<EinsumOp>(op)) {
    MutableOperandRange acc = einsum.getAccMutable();
    return acc.size() == 1 && &acc[0] == &operand;
  }
  return false;
}

/// Ops whose tensor result is a view of their source once bufferized.
bool isTensorView(Operation *op) {
  return isa<ViewLikeOpInterface, tensor::ExtractSliceOp,
             tensor::CollapseShapeOp, tensor::ExpandShapeOp, tensor::CastOp,
             tensor::ReshapeOp>(op);
}

/// The users of `value` and of the views of it.
void collectReaders(Value value, SmallVectorImpl<Operation *> &readers,
                    unsigned depth = 0) {
  for (Operation *user : value.getUsers()) {
    readers.push_back(user);
    if (depth < 8 && isTensorView(user))
      for (Value result : user->getResults())
        collectReaders(result, readers, depth + 1);
  }
}

/// The memory effects that order ops: reads, writes and frees, except on
/// the communication resource (see buildGraph) and on values local to `op`.
/// std::nullopt when the effects are unknown.
std::optional<SmallVector<MemoryEffects::EffectInstance>>
getOrderingEffects(Operation *op) {
  // bufferization.alloc_tensor declares no effects but only makes a new
  // tensor (the receive buffers of ovl-async-collectives).
  if (isa<bufferization::AllocTensorOp>(op))
    return SmallVector<MemoryEffects::EffectInstance>();
  std::optional<SmallVector<MemoryEffects::EffectInstance>> all =
      getEffectsRecursively(op);
  if (!all)
    return std::nullopt;
  SmallVector<MemoryEffects::EffectInstance> kept;
  for (const MemoryEffects::EffectInstance &effect : *all) {
    if (isa<MemoryEffects::Allocate>(effect.getEffect()) ||
        effect.getResource() == CommunicationResource::get())
      continue;
    if (Value value = effect.getValue())
      if (isDefinedInside(value, op))
        continue;
    kept.push_back(effect);
  }
  return kept;
}

/// Whether two effects may touch the same memory with at least one write.
bool conflict(const MemoryEffects::EffectInstance &a,
              const MemoryEffects::EffectInstance &b,
              LocalAliasAnalysis &aliases) {
  if (a.getResource() != b.getResource())
    return false;
  if (isa<MemoryEffects::Read>(a.getEffect()) &&
      isa<MemoryEffects::Read>(b.getEffect()))
    return false;
  Value va = a.getValue(), vb = b.getValue();
  if (!va || !vb)
    return true;
  return !aliases.alias(va, vb).isNo();
}

/// Routes every transfer of `start` (each of its pairs, in every group of
/// the grid at once, as all devices run it) on `machine`'s topology, split
/// over its ports as the simulator splits it (MachineModel::forEachLinkPart),
/// and counts, for the parts of each route length in hops and share of the
/// bytes, how many cross each link.
void routeTransfers(
    CollectivePermuteStartOp start, const MachineModel &machine, double bytes,
    std::map<std::pair<int64_t, double>, std::map<int64_t, int>> &loadsByKind) {
  GroupTransfers group;
  ArrayRef<int16_t> axes = cast<CollectiveOpInterface>(*start).getGridAxes();
  group.axes.assign(axes.begin(), axes.end());
  group.bytes = bytes;
  for (auto [source, target] : start.getSourceTargetPairs())
    group.pairs.emplace_back(source, target);
  machine.forEachLinkPart(group, [&](int64_t link, double part, int64_t hops) {
    if (machine.topology.getKind() == InterconnectKind::Switch)
      hops = 1;
    ++loadsByKind[{hops, part / bytes}][link];
  });
}

/// The transfers of a block in flight, played as the simulator plays them:
/// a transfer waits out its setup, then streams its data, each of its
/// transfers over the most loaded link of its route at the link bandwidth
/// divided by the transfers streaming over that link; rates change
/// whenever a transfer begins or ends streaming. Two transfers that share
/// links thus take as long together as one after the other.
///
/// Either way in time: forwards (the top-down scheduler, the replay) a
/// transfer opens at its start and ends at its arrival; backwards (the
/// bottom-up scheduler, whose clock runs from the block's end) it opens at
/// its done and ends where its start may go, streaming first and then
/// waiting out the setup.
class LinkFlows {
public:
  LinkFlows(const BlockGraph &graph, bool backwards)
      : graph(graph), backwards(backwards), firstFlow(graph.nodes.size(), -1),
        loads(graph.numLinkClasses, 0) {}

  /// Opens the transfers of start `s` at time `at`, no earlier than the
  /// transfers played so far; backwards, opening them again restarts them.
  void open(unsigned s, double at) {
    advanceTo(at);
    const Node &node = graph.nodes[s];
    if (firstFlow[s] < 0) {
      firstFlow[s] = flows.size();
      flows.resize(flows.size() + node.kinds.size());
    }
    for (auto [k, kind] : llvm::enumerate(node.kinds)) {
      unsigned i = firstFlow[s] + k;
      Flow &flow = flows[i];
      if (flow.phase == 1)
        load(flow, -1);
      if (!flow.kind || flow.phase == 3)
        active.push_back(i);
      flow = Flow();
      flow.kind = &kind;
      flow.work[0] = backwards ? 0 : kind.setup;
      flow.work[1] = node.stream * kind.share;
      flow.work[2] = backwards ? kind.setup : 0;
      enterPhase(flow);
    }
    retire();
  }

  bool isOpen(unsigned s) const { return firstFlow[s] >= 0; }
  /// Whether the transfers of `s` have ended by the time played so far.
  bool hasEnded(unsigned s) const {
    return isOpen(s) && llvm::all_of(kindFlows(s), [](const Flow &flow) {
             return flow.phase == 3;
           });
  }

  /// Plays the open transfers up to `until`.
  void advanceTo(double until) {
    while (step(until)) {
    }
  }

  /// When the transfers of `s` end, playing on the open transfers; they
  /// are played up to then.
  double end(unsigned s) {
    assert(isOpen(s) && "the transfer was not opened");
    while (!hasEnded(s))
      step(std::numeric_limits<double>::infinity());
    double last = 0;
    for (const Flow &flow : kindFlows(s))
      last = std::max(last, flow.end);
    return last;
  }
  /// The same, without playing them.
  double predictEnd(unsigned s) const { return LinkFlows(*this).end(s); }

private:
  /// The transfers of one kind of a start.
  struct Flow {
    const TransferKind *kind = nullptr;
    /// Work left in each phase, in seconds at full rate: unshared, shared
    /// (streaming), unshared.
    double work[3] = {0, 0, 0};
    unsigned phase = 0;
    double end = 0;
  };

  ArrayRef<Flow> kindFlows(unsigned s) const {
    return ArrayRef<Flow>(flows).slice(firstFlow[s],
                                       graph.nodes[s].kinds.size());
  }
  void load(const Flow &flow, int delta) {
    for (auto [linkClass, count] : flow.kind->linkLoads)
      loads[linkClass] += delta * count;
  }
  /// Enters the first phase of `flow` with work left from its current one.
  void enterPhase(Flow &flow) {
    while (flow.phase < 3 && flow.work[flow.phase] <= kEpsilon)
      ++flow.phase;
    if (flow.phase == 1)
      load(flow, +1);
    if (flow.phase == 3)
      flow.end = time;
  }
  /// How much slower than alone `flow` goes in its current phase.
  double slowdown(const Flow &flow) const {
    if (flow.phase != 1)
      return 1;
    int most = 1;
    for (auto [linkClass, count] : flow.kind->linkLoads)
      most = std::max(most, loads[linkClass]);
    return most;
  }
  /// Plays up to the next phase change, or to `until` if that comes first;
  /// returns whether a phase changed.
  bool step(double until) {
    double next = std::numeric_limits<double>::infinity();
    std::optional<unsigned> first;
    for (unsigned i : active) {
      const Flow &flow = flows[i];
      double at = time + flow.work[flow.phase] * slowdown(flow);
      if (at < next) {
        next = at;
        first = i;
      }
    }
    if (!first || next > until) {
      if (until != std::numeric_limits<double>::infinity())
        progress(until);
      return false;
    }
    progress(next);
    // The first to finish finishes whatever the rounding left.
    flows[*first].work[flows[*first].phase] = 0;
    SmallVector<unsigned, 4> changed;
    for (unsigned i : active)
      if (flows[i].work[flows[i].phase] <= kEpsilon)
        changed.push_back(i);
    for (unsigned i : changed) {
      Flow &flow = flows[i];
      if (flow.phase == 1)
        load(flow, -1);
      ++flow.phase;
      enterPhase(flow);
    }
    retire();
    return true;
  }
  void progress(double until) {
    double elapsed = until - time;
    if (elapsed > 0)
      for (unsigned i : active) {
        Flow &flow = flows[i];
        flow.work[flow.phase] -= elapsed / slowdown(flow);
      }
    time = std::max(time, until);
  }
  /// Drops the flows that ended from `active`, keeping its order.
  void retire() {
    llvm::erase_if(active, [&](unsigned i) { return flows[i].phase == 3; });
  }

  /// Work below this (a femtosecond) is done: absorbs rounding.
  static constexpr double kEpsilon = 1e-15;
  const BlockGraph &graph;
  bool backwards;
  double time = 0;
  /// The flows of each start's kinds, consecutive from firstFlow[start],
  /// and those that have not ended, in the order they were opened.
  SmallVector<Flow> flows;
  SmallVector<unsigned> active;
  SmallVector<int> firstFlow;
  SmallVector<int> loads;
};

/// A block played by the event simulator on every device of its machine,
/// in a given order. The replay (LinkFlows) keeps all devices in step, so
/// that each transfer waits for its slowest part in any group; on
/// placements where the groups' edges differ (a ring on a line, folded
/// over torus dimensions, a scrambled assignment) each device really waits
/// for its own neighbours only, and the orders the two prefer can differ.
/// Only blocks whose transfers all start and end in the block, on one
/// grid, can be played on their own; ops are priced as in the graph
/// (a loop as its scheduled body times its trip count).
class BlockSimulation {
public:
  static std::optional<BlockSimulation> build(const BlockGraph &graph,
                                              MachineModelCache &machines,
                                              SymbolTableCollection &symbols,
                                              unsigned maxInFlight);

  /// Devices times ops: what one play costs.
  int64_t size() const {
    return machine->assignment.getNumLogicalDevices() *
           static_cast<int64_t>(program.steps.size());
  }

  /// The simulated step time of the block in `order`; nullopt if the
  /// simulator refuses it.
  std::optional<double> stepTime(ArrayRef<unsigned> order) const {
    SimProgram played;
    played.gridShape = program.gridShape;
    played.labels = program.labels;
    played.pairLists = program.pairLists;
    SmallVector<uint32_t> position(order.size());
    for (auto [at, node] : llvm::enumerate(order))
      position[node] = at;
    for (unsigned node : order) {
      SimStep step = program.steps[node];
      if (step.kind == SimStep::Kind::PermuteDone)
        step.start = position[step.start];
      played.steps.push_back(std::move(step));
    }
    llvm::Expected<SimReport> report = simulate(played, *machine, options);
    if (!report) {
      llvm::consumeError(report.takeError());
      return std::nullopt;
    }
    return report->stepTime;
  }

private:
  const MachineModel *machine = nullptr;
  /// One step per node, in node order; a done's `start` is its start's node.
  SimProgram program;
  SimOptions options;
};

std::optional<BlockSimulation>
BlockSimulation::build(const BlockGraph &graph, MachineModelCache &machines,
                       SymbolTableCollection &symbols, unsigned maxInFlight) {
  if (graph.entryInFlight != 0 || graph.exitInFlight != 0)
    return std::nullopt;
  BlockSimulation sim;
  sim.options.maxInFlight = maxInFlight;
  sim.program.addLabel("block");
  for (const Node &node : graph.nodes) {
    if (node.waitsOnEntry || node.leavesBlock)
      return std::nullopt;
    SimStep step;
    switch (node.kind) {
    case NodeKind::Compute:
      if (!node.asyncPreds.empty())
        return std::nullopt;
      step.seconds = node.cost;
      break;
    case NodeKind::Start: {
      auto start = cast<CollectivePermuteStartOp>(node.op);
      FailureOr<const MachineModel *> machine =
          machines.getOrEmitError(start, symbols);
      std::optional<double> bytes = getStaticBytes(start.getInput().getType());
      if (failed(machine) || !*machine || !bytes ||
          (sim.machine && sim.machine != *machine))
        return std::nullopt;
      sim.machine = *machine;
      step.kind = SimStep::Kind::PermuteStart;
      ArrayRef<int16_t> axes =
          cast<CollectiveOpInterface>(*start).getGridAxes();
      step.axes.assign(axes.begin(), axes.end());
      step.bytes = *bytes;
      std::vector<std::pair<int64_t, int64_t>> pairs;
      for (auto [source, target] : start.getSourceTargetPairs())
        pairs.emplace_back(source, target);
      step.pairs = sim.program.addPairs(std::move(pairs));
      break;
    }
    case NodeKind::Done:
      if (node.asyncPreds.size() != 1 ||
          graph.nodes[node.asyncPreds[0]].kind != NodeKind::Start)
        return std::nullopt;
      step.kind = SimStep::Kind::PermuteDone;
      step.start = node.asyncPreds[0];
      break;
    }
    sim.program.steps.push_back(std::move(step));
  }
  if (!sim.machine)
    return std::nullopt;
  ArrayRef<int64_t> shape = sim.machine->assignment.getGridShape();
  sim.program.gridShape.assign(shape.begin(), shape.end());
  return sim;
}

/// The scheduler of one op's regions: builds each block's graph, orders it
/// and moves the ops.
class Scheduler {
public:
  Scheduler(MachineModelCache &machines, const AnalyticalCostModel &compute,
            const ScheduleOptions &options, unsigned budget)
      : machines(machines), compute(compute), options(options),
        budget(static_cast<int>(budget)),
        bufferizationState(bufferizationOptions) {}

  /// Schedules the blocks of `op`'s regions, nested control flow first, and
  /// returns what they amount to.
  FailureOr<RegionSummary> scheduleRegionsOf(Operation *op);

  ScheduleResult result;
  /// Blocks whose schedule the cost model priced slower than the input
  /// order, which they keep.
  unsigned keptInputBlocks = 0;

private:
  FailureOr<BlockOutcome> scheduleBlock(Block &block);
  LogicalResult buildGraph(Block &block, Operation *terminator,
                           BlockGraph &graph);
  FailureOr<double> costOf(Operation *op, bool touchesMemory);
  SmallVector<unsigned> bottomUp(const BlockGraph &graph,
                                 bool tradeCover) const;
  SmallVector<unsigned> topDown(const BlockGraph &graph) const;
  BlockOutcome replay(const BlockGraph &graph, ArrayRef<unsigned> order) const;
  BlockOutcome judge(const BlockGraph &graph, ArrayRef<unsigned> order,
                     const BlockSimulation *simulation) const;
  void improve(const BlockGraph &graph, SmallVector<unsigned> &order,
               BlockOutcome &outcome, const BlockSimulation *simulation) const;

  MachineModelCache &machines;
  const AnalyticalCostModel &compute;
  const ScheduleOptions &options;
  int budget;
  SymbolTableCollection symbols;
  LocalAliasAnalysis aliases;
  bufferization::BufferizationOptions bufferizationOptions;
  bufferization::AnalysisState bufferizationState;
  /// Ops whose regions were scheduled.
  DenseMap<Operation *, RegionSummary> summaries;
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
      FailureOr<BlockOutcome> outcome = scheduleBlock(block);
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

FailureOr<double> Scheduler::costOf(Operation *op, bool touchesMemory) {
  if (isa<CollectivePermuteStartOp, CollectivePermuteDoneOp>(op))
    return 0.0;
  auto summary = summaries.find(op);
  if (summary != summaries.end())
    return summary->second.cost;
  if (isa<CollectiveOpInterface>(op)) {
    FailureOr<const MachineModel *> machine =
        machines.getOrEmitError(op, symbols);
    if (failed(machine))
      return failure();
    if (*machine)
      if (std::optional<double> time =
              estimateCollective(op, **machine, RingDirection::Bidirectional))
        return *time;
    return kDefaultCost;
  }
  std::optional<ComputeEstimate> estimate = estimateCompute(op, compute);
  if (!estimate)
    return kDefaultCost;
  // estimateCompute prices what it knows; an op that touches memory and
  // that it prices at nothing (a call, an op of an unknown dialect, a
  // buffer copy) is opaque work.
  if (estimate->seconds == 0 && touchesMemory &&
      !isa_and_nonnull<OvlDialect>(op->getDialect()))
    return kDefaultCost;
  return estimate->seconds;
}

LogicalResult Scheduler::buildGraph(Block &block, Operation *terminator,
                                    BlockGraph &graph) {
  DenseMap<Operation *, unsigned> indexOf;
  for (Operation &op : block) {
    if (&op == terminator)
      break;
    indexOf[&op] = graph.nodes.size();
    graph.nodes.emplace_back();
    graph.nodes.back().op = &op;
  }
  unsigned n = graph.nodes.size();
  SmallVector<llvm::SmallSetVector<unsigned, 4>> preds(n);
  auto addEdge = [&](unsigned from, unsigned to) {
    assert(from < to && "edges follow the input order");
    preds[to].insert(from);
  };
  // The node of the block an op belongs to; none for the terminator and
  // ops outside the block.
  auto nodeOf = [&](Operation *op) -> std::optional<unsigned> {
    Operation *ancestor = op ? block.findAncestorOpInBlock(*op) : nullptr;
    auto it = ancestor ? indexOf.find(ancestor) : indexOf.end();
    if (it == indexOf.end())
      return std::nullopt;
    return it->second;
  };

  for (BlockArgument arg : block.getArguments())
    graph.entryInFlight += isa<TokenType>(arg.getType());
  llvm::SmallSetVector<Value, 4> capturedTokens;

  // SSA uses, also from inside the node's regions, and the tokens it
  // consumes.
  for (unsigned i = 0; i < n; ++i) {
    Node &node = graph.nodes[i];
    Operation *op = node.op;
    node.kind = isa<CollectivePermuteStartOp>(op)  ? NodeKind::Start
                : isa<CollectivePermuteDoneOp>(op) ? NodeKind::Done
                                                   : NodeKind::Compute;
    llvm::SmallSetVector<Value, 2> tokens;
    op->walk([&](Operation *inner) {
      for (Value operand : inner->getOperands()) {
        if (isDefinedInside(operand, op))
          continue;
        if (isa<TokenType>(operand.getType()))
          tokens.insert(operand);
        std::optional<unsigned> def = nodeOf(operand.getDefiningOp());
        if (!def)
          continue;
        addEdge(*def, i);
        if (graph.nodes[*def].kind == NodeKind::Start &&
            isa<TokenType>(operand.getType()))
          node.asyncPreds.push_back(*def);
      }
    });
    for (Value token : tokens) {
      if (nodeOf(token.getDefiningOp()))
        continue;
      node.waitsOnEntry = true;
      if (!isa<BlockArgument>(token) || token.getParentBlock() != &block)
        capturedTokens.insert(token);
    }
    node.consumes = tokens.size();
    node.produces =
        llvm::count_if(op->getResultTypes(), llvm::IsaPred<TokenType>);
    llvm::sort(node.asyncPreds);
    node.asyncPreds.erase(llvm::unique(node.asyncPreds), node.asyncPreds.end());
  }
  graph.entryInFlight += capturedTokens.size();
  if (terminator)
    for (Value operand : terminator->getOperands()) {
      if (!isa<TokenType>(operand.getType()))
        continue;
      ++graph.exitInFlight;
      // Only a start's transfer is played; a token from any other op (a
      // buffer permute, an scf.if) is opaque work done by then.
      std::optional<unsigned> def = nodeOf(operand.getDefiningOp());
      if (def && graph.nodes[*def].kind == NodeKind::Start)
        graph.nodes[*def].leavesBlock = true;
    }

  // In-place writes: an op that overwrites a tensor it takes as destination
  // (a start's receive buffer, an insert_slice's, an einsum's accumulator)
  // stays after the earlier readers of that tensor and its views, so that
  // bufferization writes in place as it did before (no copy, no extra
  // buffer) and a start's send buffer is not reused before its done.
  for (unsigned i = 0; i < n; ++i) {
    Operation *op = graph.nodes[i].op;
    for (OpOperand &operand : op->getOpOperands()) {
      if (!writesInPlace(operand, bufferizationState))
        continue;
      SmallVector<Operation *> readers;
      collectReaders(operand.get(), readers);
      for (Operation *reader : readers)
        if (std::optional<unsigned> j = nodeOf(reader))
          if (*j < i)
            addEdge(*j, i);
    }
  }

  // Memory effects. The communication resource of the ovl collectives is
  // dropped (getOrderingEffects): it keeps collectives in program order
  // against passes that do not know them, but all devices run this same
  // program and this scheduler is deterministic, so whatever order it gives
  // the collectives is the same on every device and the transfers still
  // pair up. Ops with unknown effects are barriers: each depends on
  // everything since the previous barrier, and everything after on it.
  SmallVector<std::optional<SmallVector<MemoryEffects::EffectInstance>>>
      effects;
  effects.reserve(n);
  for (unsigned i = 0; i < n; ++i) {
    effects.push_back(getOrderingEffects(graph.nodes[i].op));
    graph.nodes[i].touchesMemory = !effects.back() || !effects.back()->empty();
  }
  std::optional<unsigned> lastBarrier;
  for (unsigned i = 0; i < n; ++i) {
    if (lastBarrier)
      addEdge(*lastBarrier, i);
    if (!effects[i]) {
      for (unsigned j = lastBarrier ? *lastBarrier + 1 : 0; j < i; ++j)
        addEdge(j, i);
      lastBarrier = i;
      continue;
    }
    if (effects[i]->empty())
      continue;
    for (unsigned j = lastBarrier ? *lastBarrier + 1 : 0; j < i; ++j) {
      if (!effects[j] || effects[j]->empty())
        continue;
      bool conflicts = llvm::any_of(*effects[i], [&](const auto &a) {
        return llvm::any_of(*effects[j], [&](const auto &b) {
          return conflict(a, b, aliases);
        });
      });
      if (conflicts)
        addEdge(j, i);
    }
  }

  for (unsigned i = 0; i < n; ++i) {
    Node &node = graph.nodes[i];
    node.preds.assign(preds[i].begin(), preds[i].end());
    llvm::sort(node.preds);
    for (unsigned j : node.preds)
      graph.nodes[j].succs.push_back(i);
  }
  // What must follow a done, transitively (edges go forwards).
  for (unsigned i = 0; i < n; ++i) {
    Node &node = graph.nodes[i];
    if (node.kind == NodeKind::Done || node.usesDone)
      for (unsigned j : node.succs)
        if (graph.nodes[j].kind != NodeKind::Done)
          graph.nodes[j].usesDone = true;
  }
  // Predecessors of starts, transitively.
  for (unsigned i = n; i-- > 0;) {
    Node &node = graph.nodes[i];
    if (node.kind == NodeKind::Start || node.feedsStart)
      for (unsigned j : node.preds)
        graph.nodes[j].feedsStart = true;
  }

  // Costs, latencies and slots.
  for (Node &node : graph.nodes) {
    FailureOr<double> cost = costOf(node.op, node.touchesMemory);
    if (failed(cost))
      return failure();
    node.cost = *cost;
    int regionPeak = 0;
    if (auto summary = summaries.find(node.op); summary != summaries.end())
      regionPeak = summary->second.peak;
    else if (node.op->getNumRegions() > 0)
      // Regions this scheduler does not order: each start in them may be in
      // flight at once.
      node.op->walk([&](CollectivePermuteStartOp) { ++regionPeak; });
    node.slots = std::max({node.consumes, node.produces, regionPeak});
  }

  // Transfers: their time alone and the links they share.
  std::map<int64_t, SmallVector<std::tuple<unsigned, unsigned, int>, 2>>
      linkUsers;
  for (auto [i, node] : llvm::enumerate(graph.nodes)) {
    if (node.kind != NodeKind::Start)
      continue;
    FailureOr<const MachineModel *> machine =
        machines.getOrEmitError(node.op, symbols);
    if (failed(machine))
      return failure();
    auto start = cast<CollectivePermuteStartOp>(node.op);
    std::optional<double> bytes = getStaticBytes(start.getInput().getType());
    if (!*machine || !bytes) {
      node.kinds.push_back({kDefaultCost, 1, {}});
      continue;
    }
    if (*bytes == 0) {
      // Nothing streams (and the shares of nothing would be 0 / 0): the
      // launch alone.
      node.kinds.push_back(
          {(*machine)->hardware.collectiveLaunchOverhead, 1, {}});
      continue;
    }
    std::map<std::pair<int64_t, double>, std::map<int64_t, int>> loadsByKind;
    routeTransfers(start, **machine, *bytes, loadsByKind);
    const HardwareDescription &hw = (*machine)->hardware;
    node.stream = (*machine)->topology.getKind() == InterconnectKind::Switch
                      ? *bytes / hw.egressBandwidth()
                      : *bytes / hw.linkBandwidth;
    for (auto &[kind, loads] : loadsByKind) {
      auto [hops, share] = kind;
      for (auto [link, load] : loads)
        linkUsers[link].push_back({static_cast<unsigned>(i),
                                   static_cast<unsigned>(node.kinds.size()),
                                   load});
      node.kinds.push_back({hw.collectiveLaunchOverhead +
                                static_cast<double>(hops) * hw.hopLatency,
                            share,
                            {}});
    }
  }
  std::map<SmallVector<std::tuple<unsigned, unsigned, int>, 2>, unsigned>
      classes;
  for (auto &[link, users] : linkUsers) {
    auto [it, inserted] = classes.try_emplace(users, graph.numLinkClasses);
    if (!inserted)
      continue;
    ++graph.numLinkClasses;
    for (auto [i, kind, load] : users)
      graph.nodes[i].kinds[kind].linkLoads.push_back({it->second, load});
  }
  for (Node &node : graph.nodes)
    for (const TransferKind &kind : node.kinds) {
      int selfLoad = 1;
      for (auto [linkClass, load] : kind.linkLoads)
        selfLoad = std::max(selfLoad, load);
      node.latency = std::max(node.latency,
                              kind.setup + node.stream * kind.share * selfLoad);
    }
  return success();
}

/// Which ops may lie within each transfer of a block, between its start
/// and the first op consuming its token: those that neither precede the
/// start nor follow a consumer. Keeps, for the transfers the bottom-up
/// scheduler has not opened yet (no consumer placed), the compute still
/// unplaced that could hide them.
class CoverAccount {
public:
  explicit CoverAccount(const BlockGraph &graph) : graph(graph) {
    unsigned n = graph.nodes.size();
    for (unsigned s = 0; s < n; ++s) {
      if (graph.nodes[s].kind != NodeKind::Start)
        continue;
      SmallVector<unsigned> consumers;
      for (unsigned c : graph.nodes[s].succs)
        if (llvm::is_contained(graph.nodes[c].asyncPreds, s))
          consumers.push_back(c);
      // Tokens that leave the block: the transfer has no window here.
      if (consumers.empty())
        continue;
      // The start and what precedes it, its consumers and what follows.
      llvm::BitVector excluded = graph.closure(s, /*up=*/true);
      excluded |= graph.closure(consumers, /*up=*/false);
      Transfer transfer;
      transfer.start = s;
      transfer.mayCover = excluded.flip();
      for (unsigned i : transfer.mayCover.set_bits())
        if (graph.nodes[i].kind == NodeKind::Compute)
          transfer.available += graph.nodes[i].cost;
      transfers.push_back(std::move(transfer));
    }
  }

  /// What compute op `c` is worth to the transfers not opened yet: the most
  /// it would cut from one's exposed time, were that transfer hidden by all
  /// the compute it may have, this op last.
  double worthElsewhere(unsigned c) const {
    double cost = graph.nodes[c].cost, worth = 0;
    for (const Transfer &transfer : transfers) {
      if (transfer.opened || !transfer.mayCover.test(c))
        continue;
      double short_ =
          graph.nodes[transfer.start].latency - (transfer.available - cost);
      worth = std::max(worth, std::min(cost, short_));
    }
    return worth;
  }

  /// The unplaced compute that may hide the transfer of start `s`, besides
  /// op `c`; std::nullopt when `c` may not hide it.
  std::optional<double> availableBesides(unsigned s, unsigned c) const {
    for (const Transfer &transfer : transfers)
      if (transfer.start == s && transfer.mayCover.test(c))
        return transfer.available - graph.nodes[c].cost;
    return std::nullopt;
  }

  /// Node `i` is placed: it no longer hides what it may, and if it consumes
  /// a transfer's token that transfer is opened.
  void place(unsigned i) {
    const Node &node = graph.nodes[i];
    for (Transfer &transfer : transfers) {
      if (node.kind == NodeKind::Compute && transfer.mayCover.test(i))
        transfer.available -= node.cost;
      if (llvm::is_contained(node.asyncPreds, transfer.start))
        transfer.opened = true;
    }
  }

private:
  struct Transfer {
    unsigned start = 0;
    llvm::BitVector mayCover;
    double available = 0;
    bool opened = false;
  };
  const BlockGraph &graph;
  SmallVector<Transfer> transfers;
};

/// Whether the transfers of starts `a` and `b` cross a common link.
bool shareLinks(const BlockGraph &graph, unsigned a, unsigned b) {
  for (const TransferKind &kindA : graph.nodes[a].kinds)
    for (const TransferKind &kindB : graph.nodes[b].kinds)
      for (auto [linkClass, count] : kindA.linkLoads)
        for (auto [other, otherCount] : kindB.linkLoads)
          if (linkClass == other)
            return true;
  return false;
}

/// The bottom-up list scheduler of the paper's algorithm 2. Runs from the
/// terminator upwards on a clock of estimated time since the block's end.
/// An op becomes a candidate when all its successors are placed. A done
/// opens its transfer (LinkFlows, played backwards: transfers over shared
/// links slow each other down); its start is pending until enough has been
/// placed below it to cover the transfer, then ready. Among the ready
/// candidates that keep the in-flight count within the budget it takes, in
/// order: a done (which places it right before its first user), a start
/// whose transfer is covered (so a start goes no earlier than its transfer
/// needs: buffers live no longer than necessary), then compute; ties go to
/// the op that came last in the input, which keeps the input order where
/// nothing else decides. With no ready candidate it takes the pending one
/// ready first and lets the clock jump there (a stall).
///
/// Two rules keep the cover where it is worth most (CoverAccount):
/// - each transfer keeps compute between its start and its done when some
///   is available: once a pending start's transfer hides some compute, the
///   start goes (stalling on what is left of it) rather than take an op
///   that would cut more from the exposed time of a transfer above than
///   from its own (worthElsewhere). Without it the transfer placed first
///   (the last of the block) takes all the compute that could hide it, and
///   the one before it, whose only cover that was, runs exposed: in an
///   unrolled collective matmul, the second permute's done right after its
///   start;
/// - compute goes by what the transfers above would lose without it, the
///   least first (what follows their dones, then what they could do
///   without), so that what may hide them stays for them; it generalizes
///   the users of a done going first, so that the done can go as late as
///   possible.
/// A done that would exceed the budget waits; the next candidate goes
/// instead.
SmallVector<unsigned> Scheduler::bottomUp(const BlockGraph &graph,
                                          bool tradeCover) const {
  unsigned n = graph.nodes.size();
  SmallVector<unsigned> remaining(n);
  SmallVector<unsigned> candidates;
  for (unsigned i = 0; i < n; ++i) {
    remaining[i] = graph.nodes[i].succs.size();
    if (remaining[i] == 0)
      candidates.push_back(i);
  }
  LinkFlows flows(graph, /*backwards=*/true);
  CoverAccount cover(graph);
  // In flight below the point being filled: after it in program order.
  int inFlight = graph.exitInFlight;
  double clock = 0;
  // The compute placed so far, and how much of it was when each transfer
  // opened: what hides the transfer.
  double placedWork = 0;
  SmallVector<double> workAtOpen(n, 0);
  SmallVector<unsigned> reversed;
  auto isPending = [&](unsigned i) {
    return graph.nodes[i].kind == NodeKind::Start && flows.isOpen(i) &&
           !flows.hasEnded(i);
  };
  // Transfers in flight above op i (before it) and while it runs, the
  // larger of the two.
  auto overBudget = [&](unsigned i) {
    const Node &node = graph.nodes[i];
    return inFlight - node.produces + node.slots - budget;
  };
  while (!candidates.empty()) {
    std::optional<unsigned> best;
    // Ready and within the budget: a done, a ready start, then compute by
    // what the transfers above would lose (the least first), then the users
    // of a done, then the later input op.
    SmallVector<double> elsewhere(n, 0);
    auto key = [&](unsigned i) {
      const Node &node = graph.nodes[i];
      int tier = node.kind == NodeKind::Done    ? 2
                 : node.kind == NodeKind::Start ? 1
                                                : 0;
      return std::make_tuple(tier, -elsewhere[i],
                             node.kind == NodeKind::Compute && node.usesDone,
                             i);
    };
    for (unsigned i : candidates) {
      if (overBudget(i) > 0 || isPending(i))
        continue;
      if (tradeCover && graph.nodes[i].kind == NodeKind::Compute)
        elsewhere[i] = cover.worthElsewhere(i);
      if (!best || key(i) > key(*best))
        best = i;
    }
    // The pending starts within the budget, the one ready first first.
    SmallVector<std::pair<double, unsigned>> pending;
    for (unsigned i : candidates)
      if (isPending(i) && overBudget(i) <= 0)
        pending.push_back({flows.predictEnd(i), i});
    llvm::sort(pending, [](auto a, auto b) {
      return a.first < b.first || (a.first == b.first && a.second > b.second);
    });
    // The first rule above: a covered pending start yields the op.
    if (tradeCover && best && graph.nodes[*best].kind == NodeKind::Compute &&
        elsewhere[*best] > 0)
      for (auto [end, i] : pending)
        if (placedWork > workAtOpen[i]) {
          if (elsewhere[*best] > std::min(graph.nodes[*best].cost, end - clock))
            best = i;
          break;
        }
    if (!best && !pending.empty())
      best = pending.front().second;
    // Nothing fits: the least excess, then ready first.
    if (!best)
      for (unsigned i : candidates) {
        auto excess = [&](unsigned k) {
          const Node &node = graph.nodes[k];
          int kind = node.kind == NodeKind::Done    ? 3
                     : node.kind == NodeKind::Start ? 2
                                                    : node.usesDone;
          return std::make_tuple(-overBudget(k), !isPending(k), kind, k);
        };
        if (!best || excess(i) > excess(*best))
          best = i;
      }
    unsigned chosen = *best;
    const Node &node = graph.nodes[chosen];
    llvm::erase(candidates, chosen);
    reversed.push_back(chosen);
    if (isPending(chosen))
      clock = std::max(clock, flows.end(chosen));
    clock += node.cost;
    flows.advanceTo(clock);
    if (node.kind == NodeKind::Compute)
      placedWork += node.cost;
    inFlight = inFlight - node.produces + node.consumes;
    cover.place(chosen);
    for (unsigned j : node.asyncPreds) {
      flows.open(j, clock);
      workAtOpen[j] = placedWork;
    }
    for (unsigned j : node.preds)
      if (--remaining[j] == 0)
        candidates.push_back(j);
  }
  assert(reversed.size() == n && "the graph is acyclic");
  return SmallVector<unsigned>(llvm::reverse(reversed));
}

/// The top-down list scheduler. Runs forwards on a clock of estimated time
/// since the block's start, over the candidates whose predecessors are
/// placed, the transfers played by LinkFlows. It takes, in order:
/// 1. a start that fits the budget (as early as its operands allow, bounded
///    by the budget), the one with the longest chain of compute and
///    transfers after it first, unless it would stream over links a
///    transfer in flight streams over (then step 5);
/// 2. a done whose transfer has arrived when that lets a start go (its data
///    is what the start sends, or its slot is what the start waits for):
///    this rebalances the work between the transfers by cost, the work up
///    to the arrival covering the first and the rest the next, rather than
///    all of it piling up behind the first;
/// 3. an op that is neither, those feeding a start first, then in input
///    order; but if the transfer that would let a start go arrives while
///    that op would run, and the wait is shorter than what the op would
///    then hide of the start's transfer beyond the rest of the compute
///    that may hide it, that done instead: the op hides the next transfer;
/// 4. only when nothing else can go, the done whose transfer arrives first
///    (a done goes as late as its users allow);
/// 5. a start left for its links: the transfer in flight arrives sooner
///    alone, and the two take as long together as one after the other.
SmallVector<unsigned> Scheduler::topDown(const BlockGraph &graph) const {
  unsigned n = graph.nodes.size();
  SmallVector<unsigned> remaining(n);
  SmallVector<bool> placed(n, false);
  LinkFlows flows(graph, /*backwards=*/false);
  // Whether the transfers op i waits for have arrived by the clock, and
  // when they will.
  auto arrived = [&](unsigned i) {
    return llvm::all_of(graph.nodes[i].asyncPreds,
                        [&](unsigned j) { return flows.hasEnded(j); });
  };
  auto arrival = [&](unsigned i) {
    double at = 0;
    for (unsigned j : graph.nodes[i].asyncPreds)
      at = std::max(at, flows.predictEnd(j));
    return at;
  };
  SmallVector<unsigned> candidates;
  for (unsigned i = 0; i < n; ++i) {
    remaining[i] = graph.nodes[i].preds.size();
    if (remaining[i] == 0)
      candidates.push_back(i);
  }
  int inFlight = graph.entryInFlight;
  double clock = 0;
  SmallVector<unsigned> order;
  auto fits = [&](unsigned i) { return graph.during(i, inFlight) <= budget; };
  auto isStart = [&](unsigned i) {
    return graph.nodes[i].kind == NodeKind::Start;
  };
  auto isDone = [&](unsigned i) {
    return graph.nodes[i].kind == NodeKind::Done;
  };
  // A start whose done is not in the block (its token leaves through the
  // terminator: the next iteration's transfer) holds its slot to the end of
  // the block; it goes only when the slots that the ops still to place
  // need remain free besides it, or it would force them over the budget.
  SmallVector<bool> escapes(n, false);
  for (unsigned i = 0; i < n; ++i)
    escapes[i] =
        isStart(i) && llvm::none_of(graph.nodes[i].succs, [&](unsigned s) {
          return llvm::is_contained(graph.nodes[s].asyncPreds, i);
        });
  auto startFits = [&](unsigned i) {
    if (!fits(i))
      return false;
    if (!escapes[i])
      return true;
    int needed = 0;
    for (unsigned k = 0; k < n; ++k) {
      const Node &other = graph.nodes[k];
      if (placed[k] || k == i || other.kind == NodeKind::Done)
        continue;
      needed = std::max(needed, other.kind == NodeKind::Start
                                    ? 1
                                    : other.slots - other.consumes);
    }
    return graph.during(i, inFlight) + needed <= budget;
  };
  // The start that placing done `d` lets go: all that it still waits for
  // is `d` and ops that wait only for `d`.
  // The starts that placing done `d` lets go: all that each still waits for
  // is `d` and ops that wait only for `d`.
  auto unblockedStarts = [&](unsigned d) {
    auto waitsOnlyFor = [&](unsigned s, unsigned depth, auto &self) -> bool {
      for (unsigned p : graph.nodes[s].preds) {
        if (placed[p] || p == d)
          continue;
        if (depth == 0 || isStart(p) || isDone(p) || !self(p, depth - 1, self))
          return false;
      }
      return true;
    };
    llvm::SmallSetVector<unsigned, 2> starts;
    for (unsigned s : graph.nodes[d].succs)
      if (isStart(s) && waitsOnlyFor(s, 2, waitsOnlyFor))
        starts.insert(s);
    for (unsigned s : graph.nodes[d].succs)
      for (unsigned t : graph.nodes[s].succs)
        if (isStart(t) && !placed[s] && waitsOnlyFor(t, 2, waitsOnlyFor))
          starts.insert(t);
    return starts.takeVector();
  };
  // Whether placing done `d` lets a start go: a start (or a loop of
  // transfers) waits for a slot, or for `d`.
  bool slotWaiting = false;
  auto unblocksStart = [&](unsigned d) {
    return slotWaiting || !unblockedStarts(d).empty();
  };
  CoverAccount cover(graph);

  // The longest chain of compute and transfers from each op to the block's
  // end: of two starts, the one more waits for goes first.
  SmallVector<double> unblocks(n, 0);
  for (unsigned i = n; i-- > 0;) {
    double tail = 0;
    for (unsigned s : graph.nodes[i].succs)
      tail = std::max(
          tail, unblocks[s] + (llvm::is_contained(graph.nodes[s].asyncPreds, i)
                                   ? graph.nodes[i].latency
                                   : 0.0));
    unblocks[i] = graph.nodes[i].cost + tail;
  }
  // Whether start i would slow down a transfer in flight: it shares links
  // with it and streams longer than its setup, the most overlapping the two
  // would gain.
  SmallVector<unsigned> started;
  auto sharesLinks = [&](unsigned i) {
    const Node &node = graph.nodes[i];
    if (llvm::all_of(node.kinds, [&](const TransferKind &kind) {
          return node.stream * kind.share <= kind.setup;
        }))
      return false;
    return llvm::any_of(started, [&](unsigned j) {
      return !flows.hasEnded(j) && shareLinks(graph, i, j);
    });
  };
  auto takeStart = [&](std::optional<unsigned> &best, bool sharing) {
    for (unsigned i : candidates)
      if (isStart(i) && startFits(i) && sharesLinks(i) == sharing &&
          (!best || std::make_pair(-unblocks[i], i) <
                        std::make_pair(-unblocks[*best], *best)))
        best = i;
  };

  while (!candidates.empty()) {
    std::optional<unsigned> best;
    auto takeFirst = [&](auto &&accept) {
      for (unsigned i : candidates)
        if (accept(i) && (!best || i < *best))
          best = i;
    };
    takeStart(best, /*sharing=*/false);
    slotWaiting = llvm::any_of(candidates, [&](unsigned i) {
      return (isStart(i) || (graph.nodes[i].kind == NodeKind::Compute &&
                             graph.nodes[i].slots > 0)) &&
             !fits(i);
    });
    if (!best)
      takeFirst([&](unsigned i) {
        return isDone(i) && arrived(i) && unblocksStart(i);
      });
    if (!best) {
      for (unsigned i : candidates) {
        if (isStart(i) || isDone(i) || !fits(i))
          continue;
        auto key = [&](unsigned k) {
          return std::make_pair(!graph.nodes[k].feedsStart, k);
        };
        if (!best || key(i) < key(*best))
          best = i;
      }
      // Rather than run op c while the transfer that would let starts go
      // arrives, wait for it when the wait is shorter than what c would
      // then hide of their transfers (as long as they take together)
      // beyond the rest of the compute that may hide them: c then hides
      // the next transfers.
      auto worthWaiting = [&](unsigned d, unsigned c) {
        SmallVector<unsigned> starts = unblockedStarts(d);
        LinkFlows together(graph, /*backwards=*/false);
        double needs = 0;
        std::optional<double> rest;
        for (unsigned s : starts) {
          together.open(s, 0);
          if (std::optional<double> besides = cover.availableBesides(s, c))
            rest = std::min(rest.value_or(*besides), *besides);
        }
        for (unsigned s : starts)
          needs = std::max(needs, together.end(s));
        return rest &&
               arrival(d) - clock < std::min(graph.nodes[c].cost, needs) -
                                        std::min(*rest, needs);
      };
      std::optional<unsigned> wait;
      if (best)
        for (unsigned d : candidates)
          if (isDone(d) && (!wait || d < *wait) && worthWaiting(d, *best))
            wait = d;
      if (wait)
        best = wait;
    }
    if (!best) {
      double first = 0;
      for (unsigned i : candidates) {
        if (!isDone(i))
          continue;
        double at = arrival(i);
        if (!best || at < first || (at == first && i < *best)) {
          best = i;
          first = at;
        }
      }
    }
    if (!best)
      takeStart(best, /*sharing=*/true);
    if (!best)
      for (unsigned i : candidates) {
        auto key = [&](unsigned k) {
          return std::make_pair(graph.during(k, inFlight), k);
        };
        if (!best || key(i) < key(*best))
          best = i;
      }
    unsigned chosen = *best;
    const Node &node = graph.nodes[chosen];
    llvm::erase(candidates, chosen);
    placed[chosen] = true;
    order.push_back(chosen);
    for (unsigned j : node.asyncPreds)
      clock = std::max(clock, flows.end(j));
    if (node.kind == NodeKind::Start) {
      flows.open(chosen, clock);
      started.push_back(chosen);
    }
    cover.place(chosen);
    clock += node.cost;
    flows.advanceTo(clock);
    inFlight = graph.after(chosen, inFlight);
    for (unsigned s : node.succs)
      if (--remaining[s] == 0)
        candidates.push_back(s);
  }
  assert(order.size() == n && "the graph is acyclic");
  return order;
}

/// Plays `order` on the cost model: its estimated time (each op after the
/// previous one, a done not before its transfer arrives, transfers sharing
/// links as LinkFlows plays them, a transfer passed on to the next
/// iteration exposed by what is left of it when that iteration waits for
/// it), its peak in-flight count and where it exceeds the budget.
BlockOutcome Scheduler::replay(const BlockGraph &graph,
                               ArrayRef<unsigned> order) const {
  LinkFlows flows(graph, /*backwards=*/false);
  BlockOutcome outcome;
  int inFlight = graph.entryInFlight;
  outcome.peak = inFlight;
  double clock = 0;
  // When the first op waiting for a transfer from outside the block begins.
  std::optional<double> firstWait;
  for (unsigned i : order) {
    const Node &node = graph.nodes[i];
    for (unsigned j : node.asyncPreds)
      clock = std::max(clock, flows.end(j));
    if (node.waitsOnEntry && !firstWait)
      firstWait = clock;
    if (node.kind == NodeKind::Start)
      flows.open(i, clock);
    clock += node.cost;
    int during = graph.during(i, inFlight);
    if (during > budget && during > node.slots && !outcome.overBudgetAt) {
      outcome.overBudgetAt = node.op;
      outcome.overBudgetCount = during;
    }
    outcome.peak = std::max(outcome.peak, during);
    inFlight = graph.after(i, inFlight);
  }
  outcome.peak = std::max(outcome.peak, inFlight);
  // A transfer passed on to the next run of the block (a loop's next
  // iteration), which waits for such transfers where this one did: what
  // is left of it then is exposed.
  double exposed = 0;
  if (firstWait)
    for (unsigned i : order)
      if (graph.nodes[i].leavesBlock)
        exposed = std::max(exposed, flows.end(i) - clock - *firstWait);
  outcome.makespan = clock + exposed;
  return outcome;
}

/// The replay of `order`, its makespan the simulated step time when
/// `simulation` is given (the budget and the peak still the replay's).
BlockOutcome Scheduler::judge(const BlockGraph &graph, ArrayRef<unsigned> order,
                              const BlockSimulation *simulation) const {
  BlockOutcome outcome = replay(graph, order);
  if (simulation)
    if (std::optional<double> simulated = simulation->stepTime(order))
      outcome.makespan = *simulated;
  return outcome;
}

/// Whether the replay prices `candidate` faster than `current`, which it
/// then replaces: it must not exceed the budget where `current` does not
/// (the replay does not price the wait for a slot).
bool isFaster(const BlockOutcome &candidate, const BlockOutcome &current) {
  return candidate.makespan < current.makespan * (1 - kSameTime) &&
         (!candidate.overBudgetAt || current.overBudgetAt);
}

/// Moves the starts and dones of `order`, one at a time, to where the
/// replay finds the block faster: each in turn to the best position within
/// the budget, in passes until none helps. A start moved up takes along
/// the ops it needs that it passes (they go right before it, in their
/// order), a done moved down the ops that need it; so a start can go above
/// the einsum that computes what it sends. The list schedulers decide by
/// local rules, and some trade-offs only the replay of the whole block
/// settles: whether two transfers that share links should overlap one
/// einsum (together they take as long as one after the other, so the einsum
/// hides part of both) or follow each other (so that the einsum their data
/// feeds can hide the second). Spends at most kImproveReplays replays on a
/// block: a few passes over the blocks this pass usually sees (loop bodies
/// of a few transfers), part of one on the largest.
void Scheduler::improve(const BlockGraph &graph, SmallVector<unsigned> &order,
                        BlockOutcome &outcome,
                        const BlockSimulation *simulation) const {
  unsigned n = order.size();
  unsigned replays = 0;
  SmallVector<unsigned> trial, moved, stayed;
  // The ops op x depends on, or that depend on it, directly or not.
  // `order` with x moved to position `at`, what it passes and depends on
  // (or that depends on it) moved along.
  auto moveTo = [&](unsigned from, unsigned at, const llvm::BitVector &along) {
    unsigned x = order[from];
    unsigned lo = std::min(from, at), hi = std::max(from, at);
    moved.clear();
    stayed.clear();
    for (unsigned i = lo; i <= hi; ++i)
      if (i != from)
        (along.test(order[i]) ? moved : stayed).push_back(order[i]);
    trial.assign(order.begin(), order.begin() + lo);
    if (at < from) {
      llvm::append_range(trial, moved);
      trial.push_back(x);
      llvm::append_range(trial, stayed);
    } else {
      llvm::append_range(trial, stayed);
      trial.push_back(x);
      llvm::append_range(trial, moved);
    }
    trial.append(order.begin() + hi + 1, order.end());
  };
  for (bool changed = true; changed && replays < kImproveReplays;) {
    changed = false;
    for (unsigned x = 0; x < n && replays < kImproveReplays; ++x) {
      if (graph.nodes[x].kind == NodeKind::Compute)
        continue;
      unsigned from = llvm::find(order, x) - order.begin();
      // x itself is in both; moveTo never moves it along.
      llvm::BitVector before = graph.closure(x, /*up=*/true);
      llvm::BitVector after = graph.closure(x, /*up=*/false);
      std::optional<unsigned> bestAt;
      BlockOutcome best = outcome;
      for (unsigned at = 0; at < n && replays < kImproveReplays; ++at) {
        // Next to an op that takes no time is where the op beyond it is.
        const Node &passed = graph.nodes[order[at]];
        if (at == from ||
            (passed.kind == NodeKind::Compute && passed.cost == 0))
          continue;
        moveTo(from, at, at < from ? before : after);
        BlockOutcome tried = judge(graph, trial, simulation);
        ++replays;
        if (tried.overBudgetAt && !outcome.overBudgetAt)
          continue;
        if (tried.makespan < best.makespan &&
            tried.makespan < outcome.makespan * (1 - kImproveGain)) {
          best = tried;
          bestAt = at;
        }
      }
      if (!bestAt)
        continue;
      moveTo(from, *bestAt, *bestAt < from ? before : after);
      order.assign(trial.begin(), trial.end());
      outcome = best;
      changed = true;
    }
  }
}

FailureOr<BlockOutcome> Scheduler::scheduleBlock(Block &block) {
  Operation *terminator = nullptr;
  if (!block.empty() && block.back().mightHaveTrait<OpTrait::IsTerminator>())
    terminator = &block.back();
  BlockGraph graph;
  if (failed(buildGraph(block, terminator, graph)))
    return failure();
  // The event simulator judges where the block can be played on its own:
  // every move of improve when that is cheap, else the final choice.
  std::optional<BlockSimulation> simulation =
      BlockSimulation::build(graph, machines, symbols, budget);
  const BlockSimulation *moves =
      simulation && simulation->size() <= kSimulatedImproveSize ? &*simulation
                                                                : nullptr;
  // Bottom-up's rules that trade cover between transfers judge from what
  // may hide each transfer, not from where it goes, and can misjudge: the
  // order without them is judged too and the faster one kept.
  SmallVector<unsigned> order;
  BlockOutcome outcome;
  if (options.algorithm == ScheduleAlgorithm::TopDown) {
    order = topDown(graph);
    outcome = judge(graph, order, moves);
  } else {
    order = bottomUp(graph, /*tradeCover=*/true);
    outcome = judge(graph, order, moves);
    SmallVector<unsigned> plain = bottomUp(graph, /*tradeCover=*/false);
    BlockOutcome plainOutcome = judge(graph, plain, moves);
    if (isFaster(plainOutcome, outcome)) {
      order = std::move(plain);
      outcome = plainOutcome;
    }
  }
  improve(graph, order, outcome, moves);
  if (simulation && !moves)
    outcome = judge(graph, order, &*simulation);
  StringRef parentName =
      block.getParentOp() ? block.getParentOp()->getName().getStringRef() : "?";
  LLVM_DEBUG(llvm::dbgs() << "[ovl-schedule] block of " << parentName << ": "
                          << graph.nodes.size() << " ops, makespan "
                          << outcome.makespan << " s ("
                          << (simulation ? "simulated" : "replayed")
                          << "), peak in flight " << outcome.peak << "\n");
  // The guard: an order priced slower than the input order is not kept.
  auto input = llvm::to_vector(llvm::seq<unsigned>(0, graph.nodes.size()));
  if (order != input) {
    BlockOutcome kept =
        judge(graph, input, simulation ? &*simulation : nullptr);
    if (isFaster(kept, outcome)) {
      LLVM_DEBUG(llvm::dbgs()
                 << "[ovl-schedule] block of " << parentName
                 << ": the input order takes " << kept.makespan
                 << " s, less than the schedule; keeping the input order\n");
      ++keptInputBlocks;
      order = std::move(input);
      outcome = kept;
    }
  }
  if (outcome.overBudgetAt) {
    ++result.overBudgetBlocks;
    outcome.overBudgetAt->emitWarning("ovl-schedule: ")
        << outcome.overBudgetCount
        << " asynchronous transfers in flight here, more than max-in-flight = "
        << budget << ": the dependencies allow no order within the budget";
  }
  result.peakInFlight =
      std::max(result.peakInFlight, static_cast<unsigned>(outcome.peak));
  ++result.blocks;
  for (auto [position, index] : llvm::enumerate(order)) {
    if (position != index)
      ++result.movedOps;
    Operation *op = graph.nodes[index].op;
    if (terminator)
      op->moveBefore(terminator);
    else
      op->moveBefore(&block, block.end());
  }
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
};
} // namespace

FailureOr<ScheduleResult>
mlir::ovl::scheduleRegions(Operation *root, MachineModelCache &machines,
                           const ScheduleOptions &options) {
  unsigned keptInput = 0;
  return scheduleAndCount(root, machines, options, keptInput);
}
