//===- Transforms.h - Rewrites of ovl programs for embedders ----*- C++ -*-===//
//
// The decompositions as functions on single ops, so that pipelines, tests
// and embedders can apply them without the pass's candidate selection.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAPDIALECT_DIALECT_OVL_TRANSFORMS_TRANSFORMS_H
#define OVERLAPDIALECT_DIALECT_OVL_TRANSFORMS_TRANSFORMS_H

#include "mlir/Support/LLVM.h"

#include <algorithm>
#include <cstdint>
#include <string>

namespace mlir {
class RewriterBase;

namespace ovl {
class AllGatherOp;
class ReduceScatterOp;
struct MachineModel;

/// How a collective+einsum pair is decomposed.
struct DecomposeOptions {
  /// Ring steps per loop iteration: 1 or 2.
  unsigned unroll = 1;
  /// Half of the shards go each way round the ring.
  bool bidirectional = false;
};

/// How `ovl-decompose-collective-einsum` decides which decomposable pairs
/// to rewrite (the paper's section 5.5).
enum class DecomposeGate {
  /// Those whose estimated gain is not negative.
  Cost,
  /// All of them, whatever the estimates say.
  Always,
  /// None.
  Never,
};

/// The cost-model gate's terms for one pair, in seconds on one device:
/// the pair is worth decomposing when
///   comp + comm >= max(comp, ring) + epilogue.
struct DecompositionEstimate {
  /// The original einsum (all the einsums an all_gather feeds).
  double comp = 0;
  /// The loop's einsums: N partial einsums, each priced on its own shapes.
  double loopComp = 0;
  /// The original blocking collective, on bidirectional rings.
  double comm = 0;
  /// The loop's permute steps that overlap an einsum.
  double ring = 0;
  /// What the loop cannot overlap: permute steps whose consumer directly
  /// waits for them, einsums that run with no transfer in flight, and the
  /// work after the loop.
  double epilogue = 0;
  /// Devices in the collective's group.
  int64_t groupSize = 0;

  double original() const { return comp + comm; }
  double decomposed() const { return std::max(loopComp, ring) + epilogue; }
  double gain() const { return original() - decomposed(); }
};

/// Estimates of decomposing the pair with `options` on `machine` (built
/// for the collective's grid). Fails when the pair is not decomposable or
/// its shapes cannot be priced.
FailureOr<DecompositionEstimate>
estimateDecomposition(AllGatherOp gather, const MachineModel &machine,
                      const DecomposeOptions &options);
FailureOr<DecompositionEstimate>
estimateDecomposition(ReduceScatterOp scatter, const MachineModel &machine,
                      const DecomposeOptions &options);

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
