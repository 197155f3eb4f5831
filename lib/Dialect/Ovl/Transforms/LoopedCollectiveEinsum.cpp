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
  SmallVector<Operation *, 2> einsums;
  if (!whyNotDecomposable(collective).empty())
    return einsums;
  if (auto gather = dyn_cast<AllGatherOp>(collective))
    llvm::append_range(einsums, gather.getResult().getUsers());
  else
    einsums.push_back(
        cast<ReduceScatterOp>(collective).getInput().getDefiningOp());
  return einsums;
}

SmallVector<DecomposeOptions, 4>
mlir::ovl::getLoopVariants(UnrollChoice unroll, DirectionChoice direction) {
  SmallVector<DecomposeOptions, 4> loops;
  for (unsigned steps : {1u, 2u}) {
    if (unroll != UnrollChoice::Auto &&
        (unroll == UnrollChoice::One) != (steps == 1))
      continue;
    for (bool both : {false, true})
      if (direction == DirectionChoice::Auto ||
          (direction == DirectionChoice::Bidirectional) == both)
        loops.push_back({steps, both});
  }
  return loops;
}

std::string mlir::ovl::describeLoop(const DecomposeOptions &loop) {
  return "unroll " + std::to_string(loop.unroll) +
         (loop.bidirectional ? ", bidirectional" : ", unidirectional");
}

LogicalResult mlir::ovl::decomposeCollective(RewriterBase &rewriter,
                                             Operation *collective,
                                             const DecomposeOptions &options) {
  if (auto gather = dyn_cast<AllGatherOp>(collective))
    return decomposeAllGatherEinsum(rewriter, gather, options);
  if (auto scatter = dyn_cast<ReduceScatterOp>(collective))
    return decomposeEinsumReduceScatter(rewriter, scatter, options);
  return failure();
}
