//===- Transforms.h - Rewrites of ovl programs for embedders ----*- C++ -*-===//
//
// The decompositions as functions on single ops, so that pipelines, tests
// and embedders can apply them without the pass's candidate selection.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAPDIALECT_DIALECT_OVL_TRANSFORMS_TRANSFORMS_H
#define OVERLAPDIALECT_DIALECT_OVL_TRANSFORMS_TRANSFORMS_H

#include "mlir/Support/LLVM.h"

#include <string>

namespace mlir {
class RewriterBase;

namespace ovl {
class AllGatherOp;
class ReduceScatterOp;

/// How a collective+einsum pair is decomposed.
struct DecomposeOptions {
  /// Ring steps per loop iteration: 1 or 2.
  unsigned unroll = 1;
  /// Half of the shards go each way round the ring.
  bool bidirectional = false;
};

/// Why a pair cannot be decomposed, for remarks; empty when it can.
std::string whyNotDecomposable(AllGatherOp gather);
std::string whyNotDecomposable(ReduceScatterOp scatter);

/// For remarks: which of the paper's cases each einsum of `gather` is.
std::string describeAllGatherCases(AllGatherOp gather);

/// Rewrites `gather` and the einsums it feeds into a ring loop. Fails,
/// changing nothing, when whyNotDecomposable(gather) is not empty.
LogicalResult decomposeAllGatherEinsum(RewriterBase &rewriter,
                                       AllGatherOp gather,
                                       const DecomposeOptions &options);

/// Rewrites `scatter` and the einsum that produces its input into a ring
/// loop. Fails, changing nothing, when whyNotDecomposable(scatter) is not
/// empty.
LogicalResult decomposeEinsumReduceScatter(RewriterBase &rewriter,
                                           ReduceScatterOp scatter,
                                           const DecomposeOptions &options);

} // namespace ovl
} // namespace mlir

#endif // OVERLAPDIALECT_DIALECT_OVL_TRANSFORMS_TRANSFORMS_H
