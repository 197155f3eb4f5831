//===- OvlCanonicalization.cpp - Canonicalization of ovl ops --------------===//
//
// Rewrites that are plainly right: a collective over a group of one device
// (blocking or a start/done pair), or a permute whose pairs keep every shard
// in place, is the identity; a partition id in a one-device group is zero.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/Dialect/Ovl/IR/OvlOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::ovl;

/// Whether the op's groups hold a single device. Looks the grid up; the
/// verifier has made sure it resolves.
static bool isSingleDeviceGroup(Operation *op, FlatSymbolRefAttr gridSymbol,
                                ArrayRef<int16_t> axes) {
  auto grid =
      SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(op, gridSymbol);
  return grid && shard::collectiveProcessGroupSize(axes, grid) == 1;
}

/// Whether every (source, target) pair sends a device's data to itself.
static bool isIdentityPermutation(ArrayRef<int64_t> pairs) {
  for (size_t i = 0; i + 1 < pairs.size(); i += 2)
    if (pairs[i] != pairs[i + 1])
      return false;
  return true;
}

namespace {
/// all_gather, reduce_scatter, all_reduce or collective_permute in a group of
/// one device: the result is the input.
template <typename OpTy>
struct FoldSingleDeviceCollective : public OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    if (!isSingleDeviceGroup(op, op.getGridAttr(), op.getGridAxes()))
      return rewriter.notifyMatchFailure(op, "group has more than one device");
    if (op.getInput().getType() != op.getResult().getType())
      return rewriter.notifyMatchFailure(op, "input and result types differ");
    rewriter.replaceOp(op, op.getInput());
    return success();
  }
};

/// collective_permute whose pairs all map a device to itself.
struct FoldIdentityPermute : public OpRewritePattern<CollectivePermuteOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(CollectivePermuteOp op,
                                PatternRewriter &rewriter) const override {
    if (!isIdentityPermutation(op.getPairs()))
      return rewriter.notifyMatchFailure(op, "pairs move data");
    rewriter.replaceOp(op, op.getInput());
    return success();
  }
};

/// A start/done pair that moves nothing (identity pairs or a one-device
/// group): the done's result is the data that was kept.
struct FoldTrivialPermuteDone
    : public OpRewritePattern<CollectivePermuteDoneOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(CollectivePermuteDoneOp done,
                                PatternRewriter &rewriter) const override {
    CollectivePermuteStartOp start = done.getStartOp();
    if (!start)
      return rewriter.notifyMatchFailure(done, "start is not visible");
    if (!isIdentityPermutation(start.getPairs()) &&
        !isSingleDeviceGroup(start, start.getGridAttr(), start.getGridAxes()))
      return rewriter.notifyMatchFailure(done, "the permute moves data");
    if (!start.getPending().hasOneUse())
      return rewriter.notifyMatchFailure(done, "pending tensor has other uses");
    rewriter.replaceOp(done, done.getKeep());
    rewriter.eraseOp(start);
    return success();
  }
};

/// An asynchronous all_gather, reduce_scatter or all_reduce in a group of
/// one device: the done's result is the data that was kept.
struct FoldSingleDeviceCollectiveDone
    : public OpRewritePattern<CollectiveDoneOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(CollectiveDoneOp done,
                                PatternRewriter &rewriter) const override {
    AsyncStartOpInterface start = done.getStartOp();
    if (!start)
      return rewriter.notifyMatchFailure(done, "start is not visible");
    auto collective = cast<CollectiveOpInterface>(start.getOperation());
    if (!isSingleDeviceGroup(start, collective.getGridAttr(),
                             collective.getGridAxes()))
      return rewriter.notifyMatchFailure(done,
                                         "group has more than one device");
    if (done.getKeep().getType() != done.getType())
      return rewriter.notifyMatchFailure(done, "input and result types differ");
    if (!start.getPending().hasOneUse())
      return rewriter.notifyMatchFailure(done, "pending tensor has other uses");
    rewriter.replaceOp(done, done.getKeep());
    rewriter.eraseOp(start);
    return success();
  }
};

/// partition_id in a one-device group is 0.
struct FoldSingleDevicePartitionId : public OpRewritePattern<PartitionIdOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(PartitionIdOp op,
                                PatternRewriter &rewriter) const override {
    if (!isSingleDeviceGroup(op, op.getGridAttr(), op.getGridAxes()))
      return rewriter.notifyMatchFailure(op, "group has more than one device");
    rewriter.replaceOpWithNewOp<arith::ConstantIndexOp>(op, 0);
    return success();
  }
};
} // namespace

void AllGatherOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                              MLIRContext *context) {
  results.add<FoldSingleDeviceCollective<AllGatherOp>>(context);
}

void ReduceScatterOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                                  MLIRContext *context) {
  results.add<FoldSingleDeviceCollective<ReduceScatterOp>>(context);
}

void AllReduceOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                              MLIRContext *context) {
  results.add<FoldSingleDeviceCollective<AllReduceOp>>(context);
}

void CollectivePermuteOp::getCanonicalizationPatterns(
    RewritePatternSet &results, MLIRContext *context) {
  results.add<FoldSingleDeviceCollective<CollectivePermuteOp>,
              FoldIdentityPermute>(context);
}

void CollectivePermuteDoneOp::getCanonicalizationPatterns(
    RewritePatternSet &results, MLIRContext *context) {
  results.add<FoldTrivialPermuteDone>(context);
}

void CollectiveDoneOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                                   MLIRContext *context) {
  results.add<FoldSingleDeviceCollectiveDone>(context);
}

void PartitionIdOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                                MLIRContext *context) {
  results.add<FoldSingleDevicePartitionId>(context);
}
