//===- DecompositionCost.cpp - The cost-model gate's estimates ------------===//
//
// The gate prices what the rewrite builds. For one collective+einsum pair it
// copies the pair into a scratch module (with the collectives its einsums
// also read or feed, such as the other candidate of a figure 3 einsum; the
// values they read from elsewhere become function arguments, the grid is
// copied along), prices that function, applies the very rewrite the pass
// would apply (decomposeAllGatherEinsum / decomposeEinsumReduceScatter,
// then addAsyncCleanupPasses and scheduleRegions, as `ovl-overlap-pipeline`
// does next), and prices the result. Pricing is the simulator's own
// lowering of a function to steps (buildSimProgram: the same per-op
// estimates, loops unrolled) played by the event simulator on every device
// of the machine. Whatever the rewrite adds (zero fills, concatenations,
// additions) is priced because it is there, and on placements where the
// ring's edges differ (a line, a ring folded over torus dimensions) each
// device waits for its own neighbours, as it will when the program runs;
// nothing replays the loop's shape by hand, so the estimate and the loop
// cannot drift apart.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/Dialect/Ovl/Transforms/Transforms.h"

#include "OverlapDialect/Analysis/MachineModel.h"
#include "OverlapDialect/Analysis/SimProgramBuilder.h"
#include "OverlapDialect/Dialect/Ovl/IR/OvlOps.h"
#include "OverlapDialect/Simulator/Simulator.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ovl-decompose-collective-einsum"

using namespace mlir;
using namespace mlir::ovl;

namespace {
/// The pair copied into a scratch module: `func` computes exactly what the
/// pair's ops compute, from arguments standing for what they read.
struct ScratchPair {
  OwningOpRef<ModuleOp> module;
  func::FuncOp func;
  /// The copy of the collective.
  Operation *collective = nullptr;
};
} // namespace

/// Copies `ops` (one block's, in order) with the grid of `collective` into
/// a new module.
static ScratchPair copyPair(Operation *collective, ArrayRef<Operation *> ops) {
  MLIRContext *context = collective->getContext();
  Location loc = collective->getLoc();
  ScratchPair scratch;
  scratch.module = ModuleOp::create(loc);
  OpBuilder builder(context);
  builder.setInsertionPointToEnd(scratch.module->getBody());
  SymbolTableCollection symbols;
  shard::GridOp grid =
      cast<CollectiveOpInterface>(collective).getGridOp(symbols);
  builder.clone(*grid);

  llvm::SetVector<Operation *> inside(ops.begin(), ops.end());
  llvm::SetVector<Value> reads, results;
  for (Operation *op : ops) {
    for (Value operand : op->getOperands())
      if (!inside.contains(operand.getDefiningOp()))
        reads.insert(operand);
    for (Value result : op->getResults())
      if (llvm::any_of(result.getUsers(),
                       [&](Operation *user) { return !inside.contains(user); }))
        results.insert(result);
  }
  auto type = builder.getFunctionType(TypeRange(reads.getArrayRef()),
                                      TypeRange(results.getArrayRef()));
  scratch.func = func::FuncOp::create(builder, loc, "pair", type);
  Block *body = scratch.func.addEntryBlock();
  builder.setInsertionPointToEnd(body);
  IRMapping mapping;
  mapping.map(reads.getArrayRef(), body->getArguments());
  for (Operation *op : ops) {
    Operation *copy = builder.clone(*op, mapping);
    if (op == collective)
      scratch.collective = copy;
  }
  SmallVector<Value> returned;
  for (Value result : results)
    returned.push_back(mapping.lookup(result));
  func::ReturnOp::create(builder, loc, returned);
  return scratch;
}

/// The simulated run of `func` on `machine`; fails with the simulator
/// builder's or the simulator's message in `why`.
static FailureOr<SimReport>
price(func::FuncOp func, const MachineModel &machine, std::string &why) {
  ScopedDiagnosticHandler capture(func->getContext(), [&](Diagnostic &diag) {
    if (why.empty())
      why = diag.str();
    return success();
  });
  FailureOr<SimProgram> program = buildSimProgram(func, machine);
  if (failed(program))
    return failure();
  llvm::Expected<SimReport> report = simulate(*program, machine);
  if (!report) {
    why = llvm::toString(report.takeError());
    return failure();
  }
  return std::move(*report);
}

/// The pair `collective` + `einsums` priced as written and as the rewrite
/// `decompose` builds it.
static FailureOr<DecompositionEstimate> estimatePair(
    Operation *collective, ArrayRef<Operation *> pairOps,
    const MachineModel &machine, MachineModelCache &machines, std::string &why,
    function_ref<LogicalResult(RewriterBase &, Operation *)> decompose) {
  llvm::SetVector<Operation *> unique(pairOps.begin(), pairOps.end());
  // The collectives next to the einsums run with them: the loop may hide
  // behind them once scheduled.
  for (Operation *op : pairOps) {
    if (!isa<EinsumOp>(op))
      continue;
    for (Value input : op->getOperands())
      if (Operation *producer = input.getDefiningOp<AllGatherOp>())
        unique.insert(producer);
    for (Operation *user : op->getUsers())
      if (isa<ReduceScatterOp>(user))
        unique.insert(user);
  }
  SmallVector<Operation *> ops(unique.begin(), unique.end());
  if (llvm::any_of(ops, [&](Operation *op) {
        return op->getBlock() != collective->getBlock();
      })) {
    why = "its einsums are in another block";
    return failure();
  }
  llvm::sort(ops,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  ScratchPair scratch = copyPair(collective, ops);
  FailureOr<SimReport> blocking = price(scratch.func, machine, why);
  if (failed(blocking))
    return failure();
  IRRewriter rewriter(collective->getContext());
  if (failed(decompose(rewriter, scratch.collective))) {
    why = "the rewrite does not apply";
    return failure();
  }
  PassManager cleanup(collective->getContext(),
                      func::FuncOp::getOperationName());
  addAsyncCleanupPasses(cleanup);
  if (failed(cleanup.run(scratch.func))) {
    why = "the loop does not survive the clean-up passes";
    return failure();
  }
  if (failed(scheduleRegions(scratch.func, machines, ScheduleOptions()))) {
    why = "the scheduler cannot order the loop";
    return failure();
  }
  FailureOr<SimReport> decomposed = price(scratch.func, machine, why);
  if (failed(decomposed))
    return failure();
  DecompositionEstimate estimate;
  estimate.blocking = blocking->stepTime;
  estimate.blockingCompute = blocking->computeTime;
  estimate.decomposed = decomposed->stepTime;
  estimate.decomposedCompute = decomposed->computeTime;
  SymbolTableCollection symbols;
  estimate.groupSize =
      cast<CollectiveOpInterface>(collective).getGroupSize(symbols).value_or(0);
  LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] " << collective->getName()
                          << " @ " << collective->getLoc() << ": blocking "
                          << estimate.blocking << " s (compute "
                          << estimate.blockingCompute << "), decomposed "
                          << estimate.decomposed << " s (compute "
                          << estimate.decomposedCompute << ")\n");
  return estimate;
}

FailureOr<DecompositionEstimate> mlir::ovl::estimateDecomposition(
    AllGatherOp gather, const MachineModel &machine,
    MachineModelCache &machines, const DecomposeOptions &options,
    std::string &why) {
  why = whyNotDecomposable(gather);
  if (!why.empty())
    return failure();
  SmallVector<Operation *> ops = {gather};
  llvm::append_range(ops, gather.getResult().getUsers());
  return estimatePair(gather, ops, machine, machines, why,
                      [&](RewriterBase &rewriter, Operation *copy) {
                        return decomposeAllGatherEinsum(
                            rewriter, cast<AllGatherOp>(copy), options);
                      });
}

FailureOr<DecompositionEstimate> mlir::ovl::estimateDecomposition(
    ReduceScatterOp scatter, const MachineModel &machine,
    MachineModelCache &machines, const DecomposeOptions &options,
    std::string &why) {
  why = whyNotDecomposable(scatter);
  if (!why.empty())
    return failure();
  SmallVector<Operation *> ops = {scatter.getInput().getDefiningOp(), scatter};
  return estimatePair(scatter, ops, machine, machines, why,
                      [&](RewriterBase &rewriter, Operation *copy) {
                        return decomposeEinsumReduceScatter(
                            rewriter, cast<ReduceScatterOp>(copy), options);
                      });
}
