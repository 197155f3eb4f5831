//===- CollectivePlanTest.cpp - Blocking collectives and transfer loads ---===//
//
// MachineModel's one model of communication against formulas written out by
// hand on a made-up torus with round figures (every expected value exact):
// the algorithm the planner picks per ring (one way, both ways in halves or
// whole blocks, a line where the ring does not close), multi-axis
// collectives split so that every axis carries data at once, all-reduce,
// switches, and transfers split over the ports of their routes. Then the
// published figures of the JAX scaling book ("How to Scale Your Model",
// part "Sharded Matrices", jax-ml/scaling-book sharding.md), each cited
// next to its test.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/CostModel/Machine.h"

#include "TestHardware.h"

#include "gtest/gtest.h"

#include <cmath>

using namespace mlir::ovl;
using namespace mlir::ovl::test;

namespace {

constexpr double kShard = 64;
constexpr RingDirection kUni = RingDirection::Unidirectional;
constexpr RingDirection kBi = RingDirection::Bidirectional;
constexpr CollectiveKind kGather = CollectiveKind::AllGather;
constexpr CollectiveKind kScatter = CollectiveKind::ReduceScatter;

MachineModel mustBuild(const HardwareDescription &hw, llvm::StringRef topology,
                       llvm::ArrayRef<int64_t> grid,
                       llvm::ArrayRef<int64_t> assignment = {}) {
  llvm::Expected<MachineModel> machine =
      buildMachineModel(hw, topology, assignment, grid);
  if (!machine) {
    ADD_FAILURE() << llvm::toString(machine.takeError());
    std::abort();
  }
  return std::move(*machine);
}

double ceilHalf(int64_t n) { return static_cast<double>(n / 2); }

TEST(CollectivePlanTest, WrappedRingOneWay) {
  for (int64_t n : {2, 4, 8}) {
    SCOPED_TRACE(n);
    MachineModel machine = mustBuild(testTorus(1, 0), std::to_string(n), {n});
    for (CollectiveKind kind : {kGather, kScatter}) {
      CollectivePlan plan = machine.planCollective(kind, kShard, {0}, kUni);
      EXPECT_DOUBLE_EQ(plan.seconds,
                       kLaunch + (n - 1) * (kAlpha + kShard / kB));
      EXPECT_EQ(plan.rounds.size(), static_cast<size_t>(n - 1));
      ASSERT_EQ(plan.phases.size(), 1u);
      EXPECT_EQ(plan.phases[0].algorithm, RingAlgorithm::Unidirectional);
    }
  }
}

TEST(CollectivePlanTest, WrappedRingBothWaysTakesWholeBlocks) {
  // Whole blocks both ways: ceil((n - 1) / 2) rounds (the last one of
  // halves when n is even), half the latency of the half-block ring and the
  // same bandwidth term (n - 1) S / (2B). For n = 2 the two are one round.
  for (int64_t n : {2, 3, 4, 8}) {
    SCOPED_TRACE(n);
    MachineModel machine = mustBuild(testTorus(1, 0), std::to_string(n), {n});
    CollectivePlan plan = machine.planCollective(kGather, kShard, {0}, kBi);
    EXPECT_DOUBLE_EQ(plan.seconds, kLaunch + ceilHalf(n) * kAlpha +
                                       (n - 1) * kShard / (2 * kB));
    EXPECT_EQ(plan.rounds.size(), static_cast<size_t>(n / 2));
    if (n > 2)
      EXPECT_EQ(plan.phases[0].algorithm, RingAlgorithm::BidirectionalWhole);
    EXPECT_DOUBLE_EQ(machine.collectiveTime(kScatter, kShard, {0}, kBi),
                     plan.seconds);
  }
}

TEST(CollectivePlanTest, OpenLineRunsBothWaysWithoutTheClosingEdge) {
  // Without wrap-around a one-way ring waits n - 1 hops for its closing
  // edge each round; both ways along the line, every link direction
  // carries one whole block a round and no edge is longer than a hop.
  for (int64_t n : {3, 4, 8}) {
    SCOPED_TRACE(n);
    MachineModel machine = mustBuild(testTorus(1, 16), std::to_string(n), {n});
    EXPECT_FALSE(machine.closes({0}));
    EXPECT_DOUBLE_EQ(machine.collectiveTime(kGather, kShard, {0}, kUni),
                     kLaunch + (n - 1) * ((n - 1) * kAlpha + kShard / kB));
    CollectivePlan plan = machine.planCollective(kScatter, kShard, {0}, kBi);
    EXPECT_EQ(plan.phases[0].algorithm, RingAlgorithm::Line);
    EXPECT_DOUBLE_EQ(plan.seconds, kLaunch + (n - 1) * (kAlpha + kShard / kB));
  }
}

TEST(CollectivePlanTest, AllReduceIsReduceScatterThenAllGather) {
  for (int64_t n : {2, 4, 8}) {
    for (RingDirection direction : {kUni, kBi}) {
      SCOPED_TRACE(n);
      MachineModel machine = mustBuild(testTorus(1, 0), std::to_string(n), {n});
      double buffer = 256, shard = buffer / n;
      double allReduce = machine.collectiveTime(CollectiveKind::AllReduce,
                                                buffer, {0}, direction);
      EXPECT_DOUBLE_EQ(
          allReduce + kLaunch,
          machine.collectiveTime(kScatter, shard, {0}, direction) +
              machine.collectiveTime(kGather, shard, {0}, direction));
    }
  }
}

TEST(CollectivePlanTest, TwoAxesSplitTheDataOverBothAxesLinks) {
  // A 4x4 wrapped torus, gather over both axes: each half of the data runs
  // the axes in its own order, so both axes' links carry data in every
  // round and the bandwidth term halves against the axes one after the
  // other. Per half (S/2): a ring of 4 on S/2, then one on 2S, whole
  // blocks: 2 rounds each.
  MachineModel machine = mustBuild(testTorus(2, 4), "4x4", {4, 4});
  CollectivePlan plan = machine.planCollective(kGather, kShard, {0, 1}, kBi);
  EXPECT_EQ(plan.parts, 2u);
  double half = kShard / 2;
  double expected =
      kLaunch + 4 * kAlpha + (half + half / 2 + 4 * half + 2 * half) / kB;
  EXPECT_DOUBLE_EQ(plan.seconds, expected);
  // The same sizes one axis after the other: twice the bandwidth term.
  double sequential = kLaunch + 4 * kAlpha +
                      (kShard + kShard / 2 + 4 * kShard + 2 * kShard) / kB;
  EXPECT_LT(plan.seconds, sequential);
  // A reduce-scatter mirrors it.
  EXPECT_DOUBLE_EQ(machine.collectiveTime(kScatter, kShard, {0, 1}, kBi),
                   expected);
  // Two grid axes on one torus dimension share its links: splitting gains
  // nothing there, and the plan stays sequential.
  MachineModel line = mustBuild(testTorus(1, 0), "8", {2, 4});
  EXPECT_EQ(line.planCollective(kGather, kShard, {0, 1}, kUni).parts, 1u);
}

TEST(CollectivePlanTest, AlgorithmFollowsThePlacement) {
  std::optional<HardwareDescription> v4 = lookupHardware("tpu-v4");
  ASSERT_TRUE(v4);
  auto algorithmOf = [](const MachineModel &machine, int16_t axis) {
    CollectivePlan plan = machine.planCollective(kGather, 1e6, {axis}, kBi);
    EXPECT_EQ(plan.phases.size(), 1u);
    return plan.phases.front().algorithm;
  };
  // A whole cube wraps in every dimension; an axis over two wrapped
  // dimensions has two-hop edges, row changes and closing edge alike.
  MachineModel cube = mustBuild(*v4, "4x4x4", {4, 4, 4});
  for (int16_t axis = 0; axis < 3; ++axis)
    EXPECT_EQ(algorithmOf(cube, axis), RingAlgorithm::BidirectionalWhole);
  EXPECT_EQ(algorithmOf(mustBuild(*v4, "4x4x4", {4, 16}), 1),
            RingAlgorithm::BidirectionalWhole);
  // Without wrap-around the closing edge walks the line back: a line.
  MachineModel open = mustBuild(*v4, "2x2x8", {2, 2, 8});
  EXPECT_EQ(algorithmOf(open, 2), RingAlgorithm::Line);
  // A listed placement that folds the ring onto a line (0 2 3 1) has no
  // edge longer than two hops: a ring again.
  HardwareDescription line = testTorus(1, 16);
  EXPECT_NE(algorithmOf(mustBuild(line, "6", {4}, {0, 2, 3, 1}), 0),
            RingAlgorithm::Line);
  EXPECT_EQ(algorithmOf(mustBuild(line, "6", {4}), 0), RingAlgorithm::Line);
}

TEST(CollectivePlanTest, GroupOfOneDeviceCostsNothing) {
  MachineModel machine = mustBuild(testTorus(3, 4), "4x4x4", {1, 1, 64});
  for (CollectiveKind kind : {kGather, kScatter, CollectiveKind::AllReduce}) {
    CollectivePlan plan = machine.planCollective(kind, kShard, {0, 1}, kBi);
    EXPECT_EQ(plan.seconds, 0.0);
    EXPECT_TRUE(plan.rounds.empty());
  }
}

TEST(CollectivePlanTest, SwitchIsOneRingSharingEgress) {
  // Any member is one hop away; the device's egress E carries all it
  // sends, so both ways in whole blocks costs the same bandwidth per round
  // twice over and wins only the latency.
  MachineModel machine = mustBuild(testSwitch(), "8", {2, 4});
  double egress = 4 * kB;
  CollectivePlan uni = machine.planCollective(kScatter, kShard, {0, 1}, kUni);
  EXPECT_DOUBLE_EQ(uni.seconds, kLaunch + 7 * (kAlpha + kShard / egress));
  ASSERT_EQ(uni.phases.size(), 1u);
  EXPECT_EQ(uni.phases[0].size, 8);
  CollectivePlan bi = machine.planCollective(kScatter, kShard, {0, 1}, kBi);
  EXPECT_DOUBLE_EQ(bi.seconds, kLaunch + 4 * kAlpha + 7 * kShard / egress);
}

/// Permutes along axis 0 of a ring of `n` issued together, one per entry
/// of `shifts` (group index i sends kShard bytes to i + shift mod n).
double ringStep(const MachineModel &machine, int64_t n,
                llvm::ArrayRef<int64_t> shifts) {
  llvm::SmallVector<GroupTransfers> transfers;
  for (int64_t shift : shifts) {
    GroupTransfers &group = transfers.emplace_back();
    group.axes = {0};
    group.bytes = kShard;
    for (int64_t i = 0; i < n; ++i)
      group.pairs.emplace_back(i, ((i + shift) % n + n) % n);
  }
  return machine.transferTime(transfers);
}

TEST(CollectivePlanTest, RingStepsShareLinksWhereTheyOverlap) {
  // A shift of two on a wrapped line of 8: every link carries two
  // transfers; both directions at once use separate links.
  MachineModel machine = mustBuild(testTorus(1, 0), "8", {8});
  EXPECT_DOUBLE_EQ(ringStep(machine, 8, {1}), kLaunch + kAlpha + kShard / kB);
  EXPECT_DOUBLE_EQ(ringStep(machine, 8, {2}),
                   kLaunch + 2 * kAlpha + 2 * kShard / kB);
  EXPECT_DOUBLE_EQ(ringStep(machine, 8, {1, -1}),
                   kLaunch + kAlpha + kShard / kB);
  // Without wrap-around the closing edge walks back over every link, which
  // the other transfers' direction does not use.
  MachineModel open = mustBuild(testTorus(1, 16), "8", {8});
  EXPECT_DOUBLE_EQ(ringStep(open, 8, {-1}), kLaunch + 7 * kAlpha + kShard / kB);
}

TEST(CollectivePlanTest, TransfersSplitOverThePortsOfTheirRoutes) {
  // (0,0) -> (3,3) on an open 4x4: two routes, x then y and y then x,
  // share no link and carry half each.
  HardwareDescription hw = testTorus(2, 16);
  llvm::Expected<Topology> topology = Topology::parse(hw, "4x4");
  ASSERT_TRUE(static_cast<bool>(topology));
  llvm::SmallVector<llvm::SmallVector<int64_t, 8>, 3> routes;
  topology->routes(0, 15, routes);
  ASSERT_EQ(routes.size(), 2u);
  EXPECT_EQ(routes[0].size(), 6u);
  EXPECT_EQ(routes[1].size(), 6u);
  for (int64_t link : routes[0])
    EXPECT_FALSE(llvm::is_contained(routes[1], link));
  // Along one dimension there is one route.
  topology->routes(0, 3, routes);
  EXPECT_EQ(routes.size(), 1u);

  MachineModel machine = mustBuild(hw, "4x4", {16});
  GroupTransfers corner;
  corner.axes = {0};
  corner.pairs = {{0, 15}};
  corner.bytes = kShard;
  EXPECT_DOUBLE_EQ(machine.transferTime(corner),
                   kLaunch + 6 * kAlpha + kShard / (2 * kB));
}

//===----------------------------------------------------------------------===//
// Published figures
//===----------------------------------------------------------------------===//

/// Within 10% of a published figure.
void expectNear10(double actual, double published) {
  EXPECT_NEAR(actual, published, 0.1 * published)
      << "model " << actual * 1e6 << " us vs published " << published * 1e6
      << " us";
}

TEST(CollectivePlanTest, PublishedTwoAxisAllGatherOnTpuV4) {
  // Scaling book, sharding.md, "What happens when we AllGather over
  // multiple axes?": T = V / (W_ICI n_axes) with W_ICI the bidirectional
  // bandwidth, 9e10 B/s per axis on v4. 8.4 MB gathered over X and Y of a
  // 4x4x4 slice: 8.4e6 / (2 * 9e10) = 46.7 us.
  std::optional<HardwareDescription> hw = lookupHardware("tpu-v4");
  ASSERT_TRUE(hw);
  MachineModel machine = mustBuild(*hw, "4x4x4", {4, 4, 4});
  double shard = 8.4e6 / 16;
  expectNear10(machine.collectiveTime(kGather, shard, {0, 1}, kBi), 46.7e-6);
}

TEST(CollectivePlanTest, PublishedLatencyBoundAllGather) {
  // Scaling book, sharding.md, "A note on ICI latency": a latency-bound
  // bidirectional AllGather takes T_min |X| / 2, about 1 us per hop: 2 us
  // over a wrapped ring of 4. The book counts hops only; the launch
  // overhead is the description's own assumption and is left out here.
  std::optional<HardwareDescription> hw = lookupHardware("tpu-v4");
  ASSERT_TRUE(hw);
  MachineModel machine = mustBuild(*hw, "4x4x4", {4, 4, 4});
  double hops = machine.collectiveTime(kGather, 64, {2}, kBi) -
                hw->collectiveLaunchOverhead;
  expectNear10(hops, 2e-6);
}

TEST(CollectivePlanTest, PublishedPointToPointOverTwoPorts) {
  // Scaling book figures for TPU v5e (sharding.md: 4.5e10 B/s per link one
  // way, about 1 us per hop): 16.8 MB from (0,0) to (3,3) of a 4x4 slice,
  // which has no wrap-around (v5e wraps only axes of 16), splits over the
  // two ports of its routes: 8.4e6 / 4.5e10 = 187 us plus six hops and the
  // launch, about 194 us; on one route it would take 380 us.
  std::optional<HardwareDescription> hw = lookupHardware("tpu-v5e");
  ASSERT_TRUE(hw);
  hw->linkBandwidth = 4.5e10;
  MachineModel machine = mustBuild(*hw, "4x4", {16});
  GroupTransfers corner;
  corner.axes = {0};
  corner.pairs = {{0, 15}};
  corner.bytes = 16.8e6;
  expectNear10(machine.transferTime(corner), 194e-6);
}

} // namespace
