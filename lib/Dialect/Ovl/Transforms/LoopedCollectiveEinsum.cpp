//===- LoopedCollectiveEinsum.cpp - Either decomposition, by kind ---------===//
//
// The all_gather and reduce_scatter decompositions behind one entry each,
// so that the pass and the gate's pricing dispatch on the collective's kind
// in one place, and the loop variants the pass options allow.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/Dialect/Ovl/Transforms/Transforms.h"

#include "OverlapDialect/Dialect/Ovl/IR/OvlOps.h"

#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::ovl;

std::string mlir::ovl::whyNotDecomposable(Operation *collective) {
  if (auto gather = dyn_cast<AllGatherOp>(collective))
    return whyNotDecomposable(gather);
  if (auto scatter = dyn_cast<ReduceScatterOp>(collective))
    return whyNotDecomposable(scatter);
  return collective->getName().stripDialect().str() + " has no decomposition";
}

SmallVector<Operation *, 2>
mlir::ovl::getDecomposedEinsums(Operation *collective) {
  if (auto gather = dyn_cast<AllGatherOp>(collective))
    return getLoopEinsums(gather);
  if (auto scatter = dyn_cast<ReduceScatterOp>(collective))
    return getScatteredEinsums(scatter);
  return {};
}

std::optional<unsigned> mlir::ovl::getSplitDim(Operation *collective) {
  if (auto gather = dyn_cast<AllGatherOp>(collective))
    return getSplitDim(gather);
  if (auto scatter = dyn_cast<ReduceScatterOp>(collective))
    return getSplitDim(scatter);
  return std::nullopt;
}

DecomposeOptions mlir::ovl::resolveLoop(Operation *collective,
                                        DecomposeOptions options) {
  if (options.withGather) {
    auto scatter = dyn_cast<ReduceScatterOp>(collective);
    if (!scatter || !whyNotDecomposableTogether(scatter).empty())
      return DecomposeOptions{options.unroll, RingLoopDirection::Unidirectional,
                              false};
    bool split = options.direction == RingLoopDirection::Split &&
                 canSplitGatherScatter(scatter);
    return DecomposeOptions{
        1, split ? RingLoopDirection::Split : RingLoopDirection::Unidirectional,
        true};
  }
  if (options.direction == RingLoopDirection::Split && !getSplitDim(collective))
    options.direction = RingLoopDirection::Bidirectional;
  return options;
}

/// The gather-scatter forms among `collective`'s variants: one way round
/// the gather's ring where `direction` allows it, split (both ways) where
/// it allows that and the shards can be halved.
static SmallVector<DecomposeOptions, 2>
getGatherScatterVariants(Operation *collective, UnrollChoice unroll,
                         DirectionChoice direction,
                         GatherScatterChoice choice) {
  auto scatter = dyn_cast<ReduceScatterOp>(collective);
  if (!scatter || choice == GatherScatterChoice::Never ||
      !whyNotDecomposableTogether(scatter).empty())
    return {};
  if (choice == GatherScatterChoice::Auto) {
    // The group size is static where the pair qualifies.
    SymbolTableCollection symbols;
    int64_t rounds = *cast<CollectiveOpInterface>(
                          getGatherDecomposedWith(scatter).getOperation())
                          .getGroupSize(symbols);
    if (unroll != UnrollChoice::Auto || direction != DirectionChoice::Auto ||
        rounds > kMaxGatherScatterRounds)
      return {};
  }
  bool bothWays = direction != DirectionChoice::Unidirectional &&
                  canSplitGatherScatter(scatter);
  bool oneWay = !bothWays || direction == DirectionChoice::Auto;
  SmallVector<DecomposeOptions, 2> variants;
  if (oneWay)
    variants.push_back({1, RingLoopDirection::Unidirectional, true});
  if (bothWays)
    variants.push_back({1, RingLoopDirection::Split, true});
  return variants;
}

SmallVector<DecomposeOptions, 6>
mlir::ovl::getLoopVariants(Operation *collective, UnrollChoice unroll,
                           DirectionChoice direction,
                           GatherScatterChoice gatherScatter) {
  SmallVector<DecomposeOptions, 2> together =
      getGatherScatterVariants(collective, unroll, direction, gatherScatter);
  if (!together.empty() && gatherScatter == GatherScatterChoice::Always)
    return SmallVector<DecomposeOptions, 6>(together.begin(), together.end());
  static const std::pair<RingLoopDirection, DirectionChoice> directions[] = {
      {RingLoopDirection::Unidirectional, DirectionChoice::Unidirectional},
      {RingLoopDirection::Bidirectional, DirectionChoice::Bidirectional},
      {RingLoopDirection::Split, DirectionChoice::Split}};
  SmallVector<DecomposeOptions, 6> loops;
  for (unsigned steps : {1u, 2u}) {
    if (unroll != UnrollChoice::Auto &&
        (unroll == UnrollChoice::One) != (steps == 1))
      continue;
    for (auto [loopDirection, choice] : directions) {
      if (direction != DirectionChoice::Auto && direction != choice)
        continue;
      DecomposeOptions loop = resolveLoop(collective, {steps, loopDirection});
      if (!llvm::is_contained(loops, loop))
        loops.push_back(loop);
    }
  }
  llvm::append_range(loops, together);
  return loops;
}

FailureOr<DecomposedCollective>
mlir::ovl::decomposeCollective(RewriterBase &rewriter, Operation *collective,
                               const DecomposeOptions &options) {
  DecomposeOptions loop = resolveLoop(collective, options);
  if (auto gather = dyn_cast<AllGatherOp>(collective))
    return decomposeAllGatherEinsum(rewriter, gather, loop);
  if (auto scatter = dyn_cast<ReduceScatterOp>(collective))
    return loop.withGather
               ? decomposeGatherEinsumScatter(rewriter, scatter,
                                              loop.direction ==
                                                  RingLoopDirection::Split)
               : decomposeEinsumReduceScatter(rewriter, scatter, loop);
  return failure();
}
