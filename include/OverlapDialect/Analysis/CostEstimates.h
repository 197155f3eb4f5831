//===- CostEstimates.h - Cost-model estimates of ops ------------*- C++ -*-===//
//
// The bridge between IR and the IR-free cost model: which numbers (FLOPs,
// bytes, element kind, ring dimensions) an operation hands to the model, and
// the estimated times that come back. Ops implementing the ovl cost
// interfaces are priced from them; other ops get a default so that programs
// mixing dialects can still be estimated.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAPDIALECT_ANALYSIS_COSTESTIMATES_H
#define OVERLAPDIALECT_ANALYSIS_COSTESTIMATES_H

#include "OverlapDialect/Analysis/MachineModel.h"

#include "mlir/IR/Operation.h"
#include "mlir/IR/Types.h"

#include <optional>

namespace mlir {
namespace ovl {

/// The ElementKind an MLIR element type is priced as: f32, bf16, f16 and i8
/// as themselves, other integers and floats as f32 (the slowest rate).
ElementKind getElementKind(Type elementType);

/// Bytes of a statically shaped tensor or memref, std::nullopt otherwise.
std::optional<double> getStaticBytes(Type type);

struct ComputeEstimate {
  double seconds = 0;
  double flops = 0;
  ElementKind kind = ElementKind::F32;
};

/// The estimated compute time of `op` on one device:
/// - ComputeCostOpInterface: the roofline of its FLOPs and bytes;
/// - ops without side effects that produce a statically shaped tensor
///   (elementwise arith and math, linalg on tensors, ...), except the ones
///   that only describe or reslice data: one pass over operands and results
///   at HBM bandwidth, counting one operation per result element;
/// - everything else (constants, views, slices, tensor.empty, control flow
///   such as scf.for, whose body is priced op by op,
///   communication): zero.
/// std::nullopt when the op needs a static shape it does not have.
std::optional<ComputeEstimate> estimateCompute(Operation *op,
                                               const CostModel &model);

/// The estimated time of a blocking ovl collective (all_gather,
/// reduce_scatter, all_reduce with rings in `direction`, collective_permute
/// with the longest route of its pairs) on `machine`; std::nullopt for other
/// ops or dynamic shapes.
std::optional<double> estimateCollective(Operation *op,
                                         const MachineModel &machine,
                                         RingDirection direction);

/// The transfer time of an `ovl.collective_permute` or of the asynchronous
/// transfer an `ovl.collective_permute_start` issues on `machine`:
/// permuteTime(bytes, the longest route of its pairs in hops). std::nullopt
/// for other ops or dynamic shapes.
std::optional<double> estimatePermuteTransfer(Operation *op,
                                              const MachineModel &machine);

} // namespace ovl
} // namespace mlir

#endif // OVERLAPDIALECT_ANALYSIS_COSTESTIMATES_H
