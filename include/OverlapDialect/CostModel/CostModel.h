//===- CostModel.h - Estimated times of compute and transfers ---*- C++ -*-===//
//
// The cost model the decomposition gate, the scheduler and the simulator ask
// how long an einsum, a collective or a permute takes on one device. It works
// on numbers (FLOPs, bytes, ring dimensions) rather than operations, so that
// callers with or without IR share it; the ops' cost interfaces supply the
// numbers. AnalyticalCostModel prices them with closed forms: a roofline for
// compute and ring algorithms along torus dimensions for collectives.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAPDIALECT_COSTMODEL_COSTMODEL_H
#define OVERLAPDIALECT_COSTMODEL_COSTMODEL_H

#include "OverlapDialect/CostModel/Hardware.h"

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>

namespace mlir {
namespace ovl {

enum class CollectiveKind { AllGather, ReduceScatter, AllReduce };

/// Whether a ring sends everything one way round, or half of every shard
/// each way round at once.
enum class RingDirection { Unidirectional, Bidirectional };

/// One physical dimension a collective's group spans: how many devices are
/// on it, and whether the last one links straight back to the first.
struct RingDim {
  int64_t size = 1;
  bool wrapAround = true;
};

/// Estimated times, in seconds, on one device.
class CostModel {
public:
  virtual ~CostModel();

  /// An einsum (or any compute op) doing `flops` operations on `kind`
  /// elements and moving `bytes` to and from HBM.
  virtual double einsumTime(double flops, double bytes,
                            ElementKind kind) const = 0;

  /// A collective over the group spanning `dims`. `bytes` is the shard each
  /// device contributes for AllGather, the shard each device ends with for
  /// ReduceScatter, and the whole buffer each device holds for AllReduce.
  virtual double collectiveTime(CollectiveKind kind, double bytes,
                                llvm::ArrayRef<RingDim> dims,
                                RingDirection direction) const = 0;

  /// A point-to-point transfer of `bytes` over `hops` links (0 when a device
  /// keeps its data).
  virtual double permuteTime(double bytes, int64_t hops) const = 0;
};

/// Closed-form estimates from a HardwareDescription; with alpha the hop
/// latency, B the link bandwidth per direction and E the egress bandwidth:
///
/// - einsum: max(flops / peak(kind), bytes / HBM bandwidth), the roofline.
/// - one ring of n devices passing shards of s bytes takes n - 1 steps, each
///   as long as its slowest transfer:
///   * torus with wrap-around, unidirectional: alpha + s / B.
///   * torus with wrap-around, bidirectional: half of each shard goes each
///     way round on the other direction of the same links, so the bandwidth
///     term halves, alpha + s / (2B); the latency stays: each half still
///     needs n - 1 steps to visit every device.
///   * torus without wrap-around: the ring follows device order, so its
///     closing edge n-1 -> 0 crosses all n - 1 links of the line backwards,
///     and each step waits for it: (n - 1) alpha + s / B. Unidirectional,
///     that edge has the backward directions to itself. Bidirectional, each
///     link direction carries one half-shard edge of each ring (the forward
///     ring's edges one way, the backward ring's closing edge the same way),
///     so B is shared by two flows of s / 2 and nothing is gained:
///     (n - 1) alpha + s / B again.
///   * switch: one hop to any device, and the device's egress E is shared by
///     all its destinations, so both directions cost the same: alpha + s / E.
/// - AllGather with shard S over dims n_1 .. n_k on a torus runs one ring per
///   dimension in the given order, each on the data gathered so far:
///     sum_i ring(S * n_1 * ... * n_{i-1}, dim i).
///   With every dimension wrapping, the bandwidth terms telescope to
///   (N - 1) S / B' (N the group size, B' the per-step bandwidth), as on one
///   ring, and the latency is sum_i (n_i - 1) alpha. ReduceScatter runs the
///   same rings in reverse order on shrinking data and costs the same.
///   On a switch the group is a single ring of N devices.
/// - AllReduce of D bytes: ReduceScatter then AllGather of shard D / N.
/// - permute of s bytes over h hops: h alpha + s / B on a torus (cut-through
///   routing: the bytes stream once over the whole route), alpha + s / E on
///   a switch whatever h says.
/// Collectives and permutes add the launch overhead once, unless the group
/// (or the transfer) is trivial and costs nothing.
class AnalyticalCostModel : public CostModel {
public:
  explicit AnalyticalCostModel(HardwareDescription hardware)
      : hw(std::move(hardware)) {}

  const HardwareDescription &getHardware() const { return hw; }

  double einsumTime(double flops, double bytes,
                    ElementKind kind) const override;
  double collectiveTime(CollectiveKind kind, double bytes,
                        llvm::ArrayRef<RingDim> dims,
                        RingDirection direction) const override;
  double permuteTime(double bytes, int64_t hops) const override;

  /// One ring along `dim` passing shards of `shardBytes`, without the launch
  /// overhead: the building block of the collective times.
  double ringTime(double shardBytes, RingDim dim,
                  RingDirection direction) const;

private:
  HardwareDescription hw;
};

} // namespace ovl
} // namespace mlir

#endif // OVERLAPDIALECT_COSTMODEL_COSTMODEL_H
