//===- AsyncCollectives.cpp - Blocking collectives to start/done pairs ----===//
//
// Splits each ovl.collective_permute into a start at its place and a done
// before the first use of its result, and picks each start's destination so
// that the ring loops of the decomposition double-buffer: the permutes of
// one chain (a permute whose input comes from the previous one, directly or
// through an einsum's accumulator) take turns between two buffers. The
// other collectives, when asked for, split the same way into a fresh
// destination.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/Dialect/Ovl/Transforms/Passes.h"

#include "OverlapDialect/Dialect/Ovl/IR/OvlOps.h"
#include "OverlapDialect/Dialect/Ovl/Transforms/Transforms.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ovl-async-collectives"

namespace mlir::ovl {
#define GEN_PASS_DEF_OVLASYNCCOLLECTIVESPASS
#include "OverlapDialect/Dialect/Ovl/Transforms/Passes.h.inc"
} // namespace mlir::ovl

using namespace mlir;
using namespace mlir::ovl;

namespace {

/// The permute of the same block whose received data `value` is, directly
/// or as the in-place accumulator of einsums: its send buffer is free for
/// the next transfer of the chain.
CollectivePermuteOp findChainPredecessor(Value value, Block *block) {
  while (Operation *producer = value.getDefiningOp()) {
    if (producer->getBlock() != block)
      return nullptr;
    if (auto permute = dyn_cast<CollectivePermuteOp>(producer))
      return permute;
    auto einsum = dyn_cast<EinsumOp>(producer);
    if (!einsum || !einsum.getAcc())
      return nullptr;
    value = einsum.getAcc();
  }
  return nullptr;
}

/// A fresh buffer to receive into. Not a tensor.empty: CSE would merge two
/// of them, and One-Shot Bufferize then lets two loop iteration arguments
/// initialized with the same never-read tensor share one buffer, into which
/// two transfers would land.
Value createReceiveBuffer(OpBuilder &builder, Location loc, Type type) {
  return bufferization::AllocTensorOp::create(
      builder, loc, cast<RankedTensorType>(type), ValueRange());
}

/// The op of `block` that contains `op` (or is it).
Operation *getAncestorIn(Block *block, Operation *op) {
  while (op && op->getBlock() != block)
    op = op->getParentOp();
  return op;
}

/// Sets the insertion point right before the first use of `result` in
/// `op`'s block, or after `start` when nothing uses it: everything in
/// between overlaps the transfer.
void setInsertionPointBeforeFirstUse(OpBuilder &builder, Value result,
                                     Operation *op, Operation *start) {
  Block *block = op->getBlock();
  Operation *firstUse = nullptr;
  for (Operation *user : result.getUsers()) {
    Operation *ancestor = getAncestorIn(block, user);
    if (!firstUse || ancestor->isBeforeInBlock(firstUse))
      firstUse = ancestor;
  }
  if (firstUse)
    builder.setInsertionPoint(firstUse);
  else
    builder.setInsertionPointAfter(start);
}

/// The start of an asynchronous form of `op` into `dest`.
Operation *createStart(OpBuilder &builder, AllGatherOp op, Value dest) {
  return AllGatherStartOp::create(builder, op.getLoc(), op.getInput(), dest,
                                  op.getGridAttr(), op.getGridAxesAttr(),
                                  op.getGatherDimAttr());
}
Operation *createStart(OpBuilder &builder, ReduceScatterOp op, Value dest) {
  return ReduceScatterStartOp::create(
      builder, op.getLoc(), op.getInput(), dest, op.getGridAttr(),
      op.getGridAxesAttr(), op.getScatterDimAttr(), op.getReductionAttr());
}
Operation *createStart(OpBuilder &builder, AllReduceOp op, Value dest) {
  return AllReduceStartOp::create(builder, op.getLoc(), op.getInput(), dest,
                                  op.getGridAttr(), op.getGridAxesAttr(),
                                  op.getReductionAttr());
}

/// Splits `op` into a start at its place and a done before the first use
/// of its result.
/// Splits `op` unless its result has a dynamic shape, whose receive buffer
/// would need sizes only the running program knows: that one stays
/// blocking. Whether it was split.
template <typename OpTy> bool splitCollective(RewriterBase &rewriter, OpTy op) {
  if (!op.getType().hasStaticShape())
    return false;
  LLVM_DEBUG(llvm::dbgs() << "ovl-async-collectives: splitting " << op << "\n");
  rewriter.setInsertionPoint(op);
  Value dest = createReceiveBuffer(rewriter, op.getLoc(), op.getType());
  auto start = cast<AsyncStartOpInterface>(createStart(rewriter, op, dest));
  setInsertionPointBeforeFirstUse(rewriter, op.getResult(), op, start);
  auto done = CollectiveDoneOp::create(rewriter, op.getLoc(), op.getType(),
                                       start.getToken(), op.getInput(),
                                       start.getPending());
  rewriter.replaceOp(op, done.getResult());
  return true;
}

/// Splits every `OpTy` under `root`.
template <typename OpTy> unsigned splitCollectives(Operation *root) {
  SmallVector<OpTy> ops;
  root->walk([&](OpTy op) { ops.push_back(op); });
  IRRewriter rewriter(root->getContext());
  unsigned split = 0;
  for (OpTy op : ops)
    split += splitCollective(rewriter, op);
  return split;
}

} // namespace

unsigned mlir::ovl::makePermutesAsynchronous(Operation *root) {
  SmallVector<CollectivePermuteOp> permutes;
  root->walk([&](CollectivePermuteOp permute) { permutes.push_back(permute); });

  // Chains, found before anything changes.
  llvm::DenseMap<Operation *, CollectivePermuteOp> predecessor;
  llvm::DenseMap<Operation *, CollectivePermuteOp> successor;
  for (CollectivePermuteOp permute : permutes) {
    if (CollectivePermuteOp pred =
            findChainPredecessor(permute.getInput(), permute->getBlock())) {
      predecessor[permute] = pred;
      successor[pred] = permute;
    }
  }

  IRRewriter rewriter(root->getContext());
  // Chain starts inside loops receive into a new iteration argument that
  // the loop yields back as the chain's last send buffer.
  llvm::DenseMap<Operation *, Value> spareOf;
  llvm::MapVector<scf::ForOp, SmallVector<CollectivePermuteOp>> loopStarts;
  for (CollectivePermuteOp permute : permutes)
    if (!predecessor.count(permute))
      if (auto loop = dyn_cast<scf::ForOp>(permute->getParentOp()))
        loopStarts[loop].push_back(permute);
  for (auto &[loop, starts] : loopStarts) {
    rewriter.setInsertionPoint(loop);
    SmallVector<Value> inits;
    for (CollectivePermuteOp start : starts)
      inits.push_back(createReceiveBuffer(rewriter, loop.getLoc(),
                                          start.getInput().getType()));
    SmallVector<CollectivePermuteOp> chainStarts = starts;
    auto lastSendBuffers = [&](OpBuilder &, Location, ArrayRef<BlockArgument>) {
      SmallVector<Value> yields;
      for (CollectivePermuteOp link : chainStarts) {
        while (successor.count(link))
          link = successor.lookup(link);
        yields.push_back(link.getInput());
      }
      return yields;
    };
    auto newLoop = cast<scf::ForOp>(*loop.replaceWithAdditionalYields(
        rewriter, inits, /*replaceInitOperandUsesInLoop=*/false,
        lastSendBuffers));
    ArrayRef<BlockArgument> spares =
        newLoop.getRegionIterArgs().take_back(starts.size());
    for (auto [start, spare] : llvm::zip(starts, spares))
      spareOf[start] = spare;
  }

  // Permutes are converted in program order, so a chain predecessor has
  // become a start by the time its successor needs its send buffer.
  llvm::DenseMap<Operation *, CollectivePermuteStartOp> startOf;
  for (CollectivePermuteOp permute : permutes) {
    Location loc = permute.getLoc();
    rewriter.setInsertionPoint(permute);
    Value dest;
    if (CollectivePermuteOp pred = predecessor.lookup(permute))
      dest = startOf.lookup(pred).getInput();
    else if (Value spare = spareOf.lookup(permute))
      dest = spare;
    else
      dest = createReceiveBuffer(rewriter, loc, permute.getInput().getType());
    auto start = CollectivePermuteStartOp::create(
        rewriter, loc, permute.getInput(), dest, permute.getGridAttr(),
        permute.getGridAxesAttr(), permute.getPairsAttr());
    startOf[permute] = start;

    setInsertionPointBeforeFirstUse(rewriter, permute.getResult(), permute,
                                    start);
    auto done = CollectivePermuteDoneOp::create(
        rewriter, loc, permute.getResult().getType(), start.getToken(),
        permute.getInput(), start.getPending());
    rewriter.replaceOp(permute, done.getResult());
  }
  return permutes.size();
}

unsigned mlir::ovl::makeCollectivesAsynchronous(Operation *root,
                                                ArrayRef<AsyncKind> kinds) {
  unsigned count = 0;
  if (llvm::is_contained(kinds, AsyncKind::AllGather))
    count += splitCollectives<AllGatherOp>(root);
  if (llvm::is_contained(kinds, AsyncKind::ReduceScatter))
    count += splitCollectives<ReduceScatterOp>(root);
  if (llvm::is_contained(kinds, AsyncKind::AllReduce))
    count += splitCollectives<AllReduceOp>(root);
  return count;
}

LogicalResult mlir::ovl::makeCollectiveAsynchronous(RewriterBase &rewriter,
                                                    Operation *collective) {
  return TypeSwitch<Operation *, LogicalResult>(collective)
      .Case<AllGatherOp, ReduceScatterOp, AllReduceOp>(
          [&](auto op) { return success(splitCollective(rewriter, op)); })
      .Default([](Operation *) { return failure(); });
}

namespace {
struct OvlAsyncCollectivesPass
    : public ovl::impl::OvlAsyncCollectivesPassBase<OvlAsyncCollectivesPass> {
  using Base::Base;

  LogicalResult initialize(MLIRContext *context) override {
    chosen.clear();
    for (const std::string &kind : kinds) {
      std::optional<AsyncKind> parsed =
          llvm::StringSwitch<std::optional<AsyncKind>>(kind)
              .Case("permute", AsyncKind::Permute)
              .Case("all_gather", AsyncKind::AllGather)
              .Case("reduce_scatter", AsyncKind::ReduceScatter)
              .Case("all_reduce", AsyncKind::AllReduce)
              .Default(std::nullopt);
      if (!parsed)
        return emitError(UnknownLoc::get(context))
               << "ovl-async-collectives: unknown kind '" << kind
               << "' in kinds; expected permute, all_gather, reduce_scatter "
                  "or all_reduce";
      chosen.push_back(*parsed);
    }
    if (chosen.empty())
      chosen.push_back(AsyncKind::Permute);
    return success();
  }

  void runOnOperation() override {
    if (llvm::is_contained(chosen, AsyncKind::Permute))
      numPermutes += makePermutesAsynchronous(getOperation());
    numCollectives += makeCollectivesAsynchronous(getOperation(), chosen);
  }

  SmallVector<AsyncKind> chosen;
};
} // namespace

void mlir::ovl::addAsyncCleanupPasses(OpPassManager &funcPm) {
  funcPm.addPass(createOvlAsyncCollectivesPass());
  funcPm.addPass(createCanonicalizerPass());
  funcPm.addPass(createCSEPass());
}
