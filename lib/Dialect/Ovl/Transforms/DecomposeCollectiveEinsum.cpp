//===- DecomposeCollectiveEinsum.cpp - The decomposition pass -------------===//
//
// Matches the function's candidates (every all_gather and reduce_scatter,
// and with async-collectives every all_reduce), asks the gate's planner
// (Gate/Planner.h) which to decompose and which to make asynchronous,
// pricing each form it asks for with DecompositionCost.cpp (each form built
// in a window of the block, scheduled and simulated), emits the remarks
// (GateRemarks.cpp) and rewrites what the plan says with
// LoopedAllGatherEinsum / LoopedEinsumReduceScatter /
// LoopedGatherEinsumScatter and the asynchronous collectives.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/Dialect/Ovl/Transforms/Passes.h"

#include "GateRemarks.h"

#include "OverlapDialect/Analysis/MachineModel.h"
#include "OverlapDialect/Dialect/Ovl/IR/OvlOps.h"
#include "OverlapDialect/Dialect/Ovl/Transforms/Transforms.h"
#include "OverlapDialect/Gate/Planner.h"
#include "OverlapDialect/Support/Progress.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/FormatVariadic.h"

#define DEBUG_TYPE "ovl-decompose-collective-einsum"

namespace mlir::ovl {
#define GEN_PASS_DEF_OVLDECOMPOSECOLLECTIVEEINSUMPASS
#include "OverlapDialect/Dialect/Ovl/Transforms/Passes.h.inc"
} // namespace mlir::ovl

using namespace mlir;
using namespace mlir::ovl;

namespace {

/// The planner's prices: each candidate's forms built in its window and
/// simulated on the machine of its grid (estimateCollectiveForms), each
/// block built as the pipeline would (estimateBlock).
class WindowPricing : public gate::Pricing {
public:
  WindowPricing(const MatchedCandidates &matched, MachineModelCache &machines,
                PricingCache &cache, SymbolTableCollection &symbols,
                overlap::Progress &progress)
      : matched(matched), machines(machines), cache(cache), symbols(symbols),
        progress(progress) {}

  LogicalResult price(size_t candidate, ArrayRef<DecomposeOptions> loops,
                      const gate::PriceContext &context,
                      std::optional<CollectiveEstimate> &result,
                      std::string &unpriced) override {
    Operation *op = matched.ops[candidate];
    FailureOr<const MachineModel *> machine = getMachine(op, unpriced);
    if (failed(machine))
      return failure();
    if (!*machine)
      return success();
    SmallVector<std::pair<Operation *, DecomposeOptions>> decomposed =
        getOps(context.decomposed);
    std::string why;
    FailureOr<CollectiveEstimate> estimate = estimateCollectiveForms(
        op, **machine, machines, loops,
        FormContext{context.asyncCollectives, decomposed,
                    context.priceDecomposition},
        &cache, why);
    ++priced;
    progress.update(priced, llvm::formatv("{0} reused", cache.hits).str());
    if (failed(estimate))
      unpriced = "the cost model cannot price it: " + why;
    else
      result = *estimate;
    return success();
  }

  LogicalResult priceBlock(unsigned block, bool asyncCollectives,
                           ArrayRef<gate::Loop> loops,
                           std::optional<double> &step,
                           std::string &why) override {
    // The machine of the block's first candidate that has one: a block's
    // collectives share their grid's machine wherever the gate prices them
    // together.
    const MachineModel *machine = nullptr;
    std::string unplaced;
    for (Operation *op : matched.ops) {
      if (op->getBlock() != matched.blocks[block])
        continue;
      std::string whyNot;
      FailureOr<const MachineModel *> placed = getMachine(op, whyNot);
      if (failed(placed))
        return failure();
      if ((machine = *placed))
        break;
      if (unplaced.empty())
        unplaced = whyNot;
    }
    if (!machine) {
      why = unplaced;
      return success();
    }
    SmallVector<std::pair<Operation *, DecomposeOptions>> decomposed =
        getOps(loops);
    FailureOr<double> priced = estimateBlock(
        matched.blocks[block], *machine, machines,
        FormContext{asyncCollectives, decomposed, true}, &cache, why);
    if (succeeded(priced))
      step = *priced;
    return success();
  }

  DecomposeOptions resolve(size_t candidate,
                           const DecomposeOptions &loop) override {
    return resolveLoop(matched.ops[candidate], loop);
  }

  std::string describe(size_t candidate) override {
    std::string text;
    llvm::raw_string_ostream os(text);
    Operation *op = matched.ops[candidate];
    os << op->getName() << " @ " << op->getLoc();
    return text;
  }

private:
  /// The machine of the grid of `op`; null, with `unpriced` saying why,
  /// when the grid cannot be placed; fails, with an error on `op`, when
  /// the machine cannot be built.
  FailureOr<const MachineModel *> getMachine(Operation *op,
                                             std::string &unpriced) {
    shard::GridOp grid = cast<CollectiveOpInterface>(op).getGridOp(symbols);
    if (!grid) {
      unpriced = "its grid is unresolved";
      return nullptr;
    }
    if (llvm::any_of(grid.getShape(), ShapedType::isDynamic)) {
      unpriced = "grid @" + grid.getSymName().str() +
                 " has a dynamic shape, which the cost model cannot place on "
                 "a machine";
      return nullptr;
    }
    return machines.getOrEmitError(op, symbols);
  }

  SmallVector<std::pair<Operation *, DecomposeOptions>>
  getOps(ArrayRef<gate::Loop> loops) const {
    SmallVector<std::pair<Operation *, DecomposeOptions>> ops;
    for (const auto &[candidate, loop] : loops)
      ops.push_back({matched.ops[candidate], loop});
    return ops;
  }

  const MatchedCandidates &matched;
  MachineModelCache &machines;
  PricingCache &cache;
  SymbolTableCollection &symbols;
  overlap::Progress &progress;
  /// Windows priced so far, for the progress line.
  uint64_t priced = 0;
};

struct OvlDecomposeCollectiveEinsumPass
    : public ovl::impl::OvlDecomposeCollectiveEinsumPassBase<
          OvlDecomposeCollectiveEinsumPass> {
  using Base::Base;

  void runOnOperation() override {
    SymbolTableCollection symbols;
    MatchedCandidates matched = match(symbols);
    // The windows of the function run before are gone with its IR.
    estimates.windows.clear();
    if (!machines)
      machines.emplace(hardware, topology, deviceAssignment);
    overlap::Progress progress(getArgument(), 0, "windows priced");
    WindowPricing pricing(matched, *machines, estimates, symbols, progress);
    gate::PlanOptions options{gate, asyncCollectives,
                              unroll == UnrollChoice::Auto ||
                                  bidirectional == DirectionChoice::Auto};
    FailureOr<gate::Plan> plan =
        gate::plan(matched.candidates, options, pricing);
    if (failed(plan))
      return signalPassFailure();
    numWindowsReused += std::exchange(estimates.hits, 0);
    if (remarks)
      emitGateRemarks(matched, *plan,
                      GateRemarkOptions{gate, asyncCollectives, gatherScatter});
    rewrite(matched, *plan);
  }

private:
  /// The candidates of the function, in program order.
  MatchedCandidates match(SymbolTableCollection &symbols) {
    MatchedCandidates matched;
    // all_reduce has no decomposition: it is a candidate only for its
    // asynchronous form.
    getOperation().walk([&](Operation *op) {
      if (isa<AllGatherOp, ReduceScatterOp>(op) ||
          (asyncCollectives && isa<AllReduceOp>(op)))
        matched.ops.push_back(op);
    });
    llvm::DenseMap<Operation *, size_t> indices;
    llvm::DenseMap<Operation *, unsigned> einsums;
    llvm::DenseMap<Block *, unsigned> blocks;
    for (auto [index, op] : llvm::enumerate(matched.ops))
      indices[op] = index;
    for (Operation *op : matched.ops) {
      gate::Candidate &candidate = matched.candidates.emplace_back();
      candidate.why = whyNotDecomposable(op);
      auto [block, added] =
          blocks.try_emplace(op->getBlock(), matched.blocks.size());
      if (added)
        matched.blocks.push_back(op->getBlock());
      candidate.block = block->second;
      for (Operation *einsum : getDecomposedEinsums(op))
        candidate.einsums.push_back(
            einsums.try_emplace(einsum, einsums.size()).first->second);
      candidate.variants =
          getLoopVariants(op, unroll, bidirectional, gatherScatter);
      if (auto scatter = dyn_cast<ReduceScatterOp>(op))
        if (AllGatherOp gather = getGatherDecomposedWith(scatter))
          if (auto it = indices.find(gather); it != indices.end())
            candidate.gatherAlong = it->second;
      candidate.staticResult =
          cast<ShapedType>(op->getResult(0).getType()).hasStaticShape();
      matched.groupSizes.push_back(
          cast<CollectiveOpInterface>(op).getGroupSize(symbols).value_or(0));
    }
    // gather-scatter=true: the reduce_scatters take these along.
    if (gatherScatter == GatherScatterChoice::Always)
      for (const gate::Candidate &candidate : matched.candidates)
        if (candidate.gatherAlong)
          matched.candidates[*candidate.gatherAlong].why =
              "gather-scatter=true decomposes it with the reduce_scatter of "
              "its einsum";
    return matched;
  }

  /// The decompositions, then the asynchronous collectives (a
  /// decomposition does not erase the collectives it keeps).
  void rewrite(const MatchedCandidates &matched, const gate::Plan &plan) {
    IRRewriter rewriter(&getContext());
    for (auto [op, decision] : llvm::zip(matched.ops, plan.decisions)) {
      if (decision.form != CollectiveForm::Decomposed)
        continue;
      // The rewrite erases the collective.
      bool gather = isa<AllGatherOp>(op);
      Location loc = op->getLoc();
      FailureOr<DecomposedCollective> built =
          decomposeCollective(rewriter, op, decision.loop);
      if (failed(built))
        continue;
      LLVM_DEBUG(llvm::dbgs()
                 << "[" DEBUG_TYPE "] decomposed the "
                 << (gather ? "all_gather" : "reduce_scatter") << " @ " << loc
                 << " (" << describeLoop(decision.loop) << ")"
                 << (built->loop ? "" : ", every round unrolled") << "\n");
      ++(gather ? numAllGathers : numReduceScatters);
    }
    for (auto [index, decision] : llvm::enumerate(plan.decisions))
      if (decision.form == CollectiveForm::Asynchronous &&
          !plan.takenAlong.contains(index) &&
          succeeded(makeCollectiveAsynchronous(rewriter, matched.ops[index])))
        ++numAsynchronous;
  }

  /// One machine per grid shape, from the pass options.
  std::optional<MachineModelCache> machines;
  /// The windows priced and the blocks scheduled, for the layers that
  /// repeat them.
  PricingCache estimates;
};
} // namespace
