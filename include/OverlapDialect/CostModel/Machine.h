//===- Machine.h - A grid placed on a modelled pod --------------*- C++ -*-===//
//
// One object for "this grid on that machine": a hardware description, the
// physical topology, where the grid's devices sit on it, and the cost model
// over them. It prices communication the way the simulator plays it:
//
// - transfers issued together (a step of ring permutes, one round of a
//   collective) are routed on the topology for every device, each
//   point-to-point transfer split over its ports (Topology::routes); the
//   step lasts as long as the longest route's latency plus the bytes of the
//   busiest link over its bandwidth;
// - a blocking collective is a CollectivePlan, the rounds of the algorithm
//   a collective library would pick for its size and placement
//   (planCollective below); its time is the sum of its rounds'.
//
// The decomposition gate, the scheduler, `ovl-lower-to-ici` and
// `overlap-sim` all build it from the same three options (hardware,
// topology, device assignment), so they agree on what communication costs.
// No MLIR IR here.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAPDIALECT_COSTMODEL_MACHINE_H
#define OVERLAPDIALECT_COSTMODEL_MACHINE_H

#include "OverlapDialect/CostModel/CostModel.h"
#include "OverlapDialect/CostModel/Topology.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace mlir {
namespace ovl {

/// Transfers every group along `axes` issues at once: group index `source`
/// sends `bytes` to group index `target` for each of `pairs`. `negative`
/// sends a transfer between two members that are each other's neighbour
/// both ways round (a ring of two) the other way round the torus.
struct GroupTransfers {
  llvm::SmallVector<int16_t, 2> axes;
  std::vector<std::pair<int64_t, int64_t>> pairs;
  double bytes = 0;
  bool negative = false;
};

/// What a set of transfers issued together asks of the interconnect.
struct TransferLoad {
  /// The longest route, in hops.
  int64_t maxHops = 0;
  /// The most bytes any one link carries.
  double maxLinkBytes = 0;
  /// When the last transfer arrives, from their common start, without the
  /// launch overhead: each transfer streams after its route's latency (hops
  /// times the hop latency), and a link shared by several is busy until it
  /// has carried all the bytes that reached it; the latest link decides.
  double seconds = 0;
};

/// One send of a collective round: every member at group index i of every
/// group along `axes` sends `bytes` to index i + `shift`, modulo the group
/// size when `wraps` (a ring), else only when that index exists (a line).
struct CollectiveSend {
  llvm::SmallVector<int16_t, 2> axes;
  int64_t shift = 1;
  bool wraps = true;
  double bytes = 0;

  friend bool operator<(const CollectiveSend &a, const CollectiveSend &b) {
    return std::tie(a.axes, a.shift, a.wraps, a.bytes) <
           std::tie(b.axes, b.shift, b.wraps, b.bytes);
  }
};

/// Sends that start together; every device waits for its own sends and the
/// messages addressed to it before the next round.
struct CollectiveRound {
  llvm::SmallVector<CollectiveSend, 2> sends;
  /// Its estimated time: MachineModel::roundTime.
  double seconds = 0;
};

/// How one ring (the group along one or several axes) moves a collective's
/// data; the planner picks the fastest for the size and the placement.
enum class RingAlgorithm {
  /// N - 1 rounds one way round, the whole block each round.
  Unidirectional,
  /// N - 1 rounds, half of the block each way round.
  BidirectionalHalves,
  /// ceil((N - 1) / 2) rounds, the whole block each way round (the last
  /// one halved when N is even): half the latency of the halves.
  BidirectionalWhole,
  /// N - 1 rounds along the group in order without its closing edge, the
  /// whole block each way: what a group without wrap-around runs.
  Line,
};

llvm::StringRef stringifyRingAlgorithm(RingAlgorithm algorithm);

/// One ring of a plan: which group, on how much data, how.
struct CollectivePhase {
  /// The part of the data (0 .. parts - 1) it moves.
  unsigned part = 0;
  llvm::SmallVector<int16_t, 2> axes;
  int64_t size = 1;
  /// The block each member contributes (all-gather) or ends with
  /// (reduce-scatter) in this ring.
  double blockBytes = 0;
  RingAlgorithm algorithm = RingAlgorithm::Unidirectional;
  /// Its rounds, and what each of its sends carries in the first of them.
  int64_t numRounds = 0;
  double sendBytes = 0;

  /// Whether its members also send to their predecessor.
  bool bothWays() const { return algorithm != RingAlgorithm::Unidirectional; }
  /// Whether the last member sends to the first (and back).
  bool wraps() const { return algorithm != RingAlgorithm::Line; }
};

/// A blocking collective as the rounds every device runs. Multi-axis
/// collectives on a torus may split their data into one part per axis, each
/// running the axes in a rotated order, so that every axis' links carry
/// data at once; the parts' rounds run side by side.
struct CollectivePlan {
  CollectiveKind kind = CollectiveKind::AllGather;
  /// Parts the data is split into (1: the axes one after the other).
  unsigned parts = 1;
  std::vector<CollectivePhase> phases;
  std::vector<CollectiveRound> rounds;
  /// The launch overhead (0 for a trivial group) plus the rounds.
  double seconds = 0;

  /// "bidirectional-whole on axis 1 (N=4)", "2 parts: ...".
  std::string describe() const;
};

struct MachineModel {
  MachineModel(HardwareDescription hw, Topology topo, DeviceAssignment placed)
      : hardware(std::move(hw)), topology(std::move(topo)),
        assignment(std::move(placed)), costModel(hardware) {}

  HardwareDescription hardware;
  Topology topology;
  DeviceAssignment assignment;
  AnalyticalCostModel costModel;

  /// Calls `visit(link, bytes, hops)` for every link that a part of a
  /// transfer of `transfers` crosses, in every group: each transfer is
  /// routed on the topology and split over its ports (`bytes` is the part's,
  /// `hops` its route's length).
  void forEachLinkPart(
      const GroupTransfers &transfers,
      llvm::function_ref<void(int64_t link, double bytes, int64_t hops)> visit)
      const;
  /// Routes every transfer of `transfers` for every group on the topology,
  /// each over its ports, and finds the busiest links.
  TransferLoad getLoad(llvm::ArrayRef<GroupTransfers> transfers) const;
  /// Permutes issued together: the launch overhead plus their load's
  /// seconds; 0 when nothing moves.
  double transferTime(llvm::ArrayRef<GroupTransfers> transfers) const;

  /// The time of one collective round (its sends routed together, the
  /// load's seconds).
  double roundTime(const CollectiveRound &round) const;
  /// The transfers of `send` in every group along its axes.
  GroupTransfers getSendTransfers(const CollectiveSend &send) const;

  /// The plan of a blocking collective of `kind` along `axes`. `bytes` is
  /// the shard each device contributes for AllGather, the shard each device
  /// ends with for ReduceScatter, and the whole buffer each device holds for
  /// AllReduce; `direction` Unidirectional restricts the rings to one
  /// direction. Planned once per argument list; the reference stays valid
  /// as long as the model.
  const CollectivePlan &planCollective(CollectiveKind kind, double bytes,
                                       llvm::ArrayRef<int16_t> axes,
                                       RingDirection direction) const;
  double collectiveTime(CollectiveKind kind, double bytes,
                        llvm::ArrayRef<int16_t> axes,
                        RingDirection direction) const {
    return planCollective(kind, bytes, axes, direction).seconds;
  }

  /// Whether the ring of the groups along `ring` closes: its closing edge
  /// (last member to first) is no longer than its other edges.
  bool closes(llvm::ArrayRef<int16_t> ring) const;

private:
  CollectivePlan makePlan(CollectiveKind kind, double bytes,
                          llvm::ArrayRef<int16_t> axes,
                          RingDirection direction) const;

  /// Round times by their sends: a plan's rounds repeat, and the planner
  /// prices each candidate's.
  mutable std::map<std::vector<CollectiveSend>, double> roundTimes;
  /// Plans by their arguments: the scheduler and the gate play the same
  /// collectives in thousands of simulations.
  mutable std::map<
      std::tuple<CollectiveKind, double, std::vector<int16_t>, RingDirection>,
      CollectivePlan>
      plans;
};

/// Builds the model of a grid of `gridShape` on `hardware` (a built-in name or
/// a JSON file), on the topology `topology` ("AxBxC"; empty for the default
/// topology of the grid's device count) with logical device i on physical
/// device `assignment[i]` (empty for row-major placement).
llvm::Expected<MachineModel>
buildMachineModel(llvm::StringRef hardware, llvm::StringRef topology,
                  llvm::ArrayRef<int64_t> assignment,
                  llvm::ArrayRef<int64_t> gridShape);
/// The same from a hardware description in hand.
llvm::Expected<MachineModel>
buildMachineModel(const HardwareDescription &hardware, llvm::StringRef topology,
                  llvm::ArrayRef<int64_t> assignment,
                  llvm::ArrayRef<int64_t> gridShape);

} // namespace ovl
} // namespace mlir

#endif // OVERLAPDIALECT_COSTMODEL_MACHINE_H
