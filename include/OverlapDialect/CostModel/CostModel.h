//===- CostModel.h - Estimated times of compute and transfers ---*- C++ -*-===//
//
// The cost model the decomposition gate, the scheduler and the simulator ask
// how long an einsum or a point-to-point transfer takes on one device. It
// works on numbers (FLOPs, bytes, hops) rather than operations, so that
// callers with or without IR share it; the ops' cost interfaces supply the
// numbers. AnalyticalCostModel prices them with closed forms: a roofline for
// compute, latency plus bandwidth for a transfer. What depends on the
// placement (collectives, transfers sharing links) is MachineModel's.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAPDIALECT_COSTMODEL_COSTMODEL_H
#define OVERLAPDIALECT_COSTMODEL_COSTMODEL_H

#include "OverlapDialect/CostModel/CollectiveKind.h"
#include "OverlapDialect/CostModel/Hardware.h"

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>

namespace mlir {
namespace ovl {

/// Estimated times, in seconds, on one device.
class CostModel {
public:
  virtual ~CostModel();

  /// An einsum (or any compute op) doing `flops` operations on `kind`
  /// elements and moving `bytes` to and from HBM.
  virtual double einsumTime(double flops, double bytes,
                            ElementKind kind) const = 0;

  /// A point-to-point transfer of `bytes` over `hops` links (0 when a device
  /// keeps its data).
  virtual double permuteTime(double bytes, int64_t hops) const = 0;
};

/// Closed-form estimates from a HardwareDescription; with alpha the hop
/// latency, B the link bandwidth per direction and E the egress bandwidth:
///
/// - einsum: max(flops / peak(kind), bytes / HBM bandwidth), the roofline.
/// - a transfer of s bytes over h hops: h alpha + s / B on a torus
///   (cut-through routing: the bytes stream once over the whole route),
///   alpha + s / E on a switch whatever h says; plus the launch overhead,
///   unless nothing moves (h = 0).
///
/// Collectives and steps of transfers that share links depend on where the
/// devices sit: MachineModel (CostModel/Machine.h) prices them.
class AnalyticalCostModel : public CostModel {
public:
  explicit AnalyticalCostModel(HardwareDescription hardware)
      : hw(std::move(hardware)) {}

  const HardwareDescription &getHardware() const { return hw; }

  double einsumTime(double flops, double bytes,
                    ElementKind kind) const override;
  double permuteTime(double bytes, int64_t hops) const override;

private:
  HardwareDescription hw;
};

} // namespace ovl
} // namespace mlir

#endif // OVERLAPDIALECT_COSTMODEL_COSTMODEL_H
