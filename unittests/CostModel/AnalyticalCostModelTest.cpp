//===- AnalyticalCostModelTest.cpp - Closed forms of the cost model -------===//
//
// The analytical model against the formulas written out by hand, on a
// made-up chip with round figures so that every expected value is exact:
// rings of 2, 4 and 8 devices, both directions, with and without
// wrap-around, multi-dimensional groups, the switch, permutes and the
// roofline's change from compute- to memory-bound.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/CostModel/CostModel.h"

#include "gtest/gtest.h"

using namespace mlir::ovl;

namespace {

// Latency 2 s, link 8 B/s, so that times are small exact binary fractions.
constexpr double kAlpha = 2, kB = 8, kLaunch = 0.5;

HardwareDescription testTorus() {
  HardwareDescription hw;
  hw.name = "test-torus";
  hw.peakFlops = {100, 400, 200, 800};
  hw.hbmBandwidth = 50;
  hw.linkBandwidth = kB;
  hw.linksPerChip = 6;
  hw.hopLatency = kAlpha;
  hw.dmaSlots = 4;
  hw.collectiveLaunchOverhead = kLaunch;
  hw.interconnect = InterconnectKind::Torus;
  hw.torusRank = 3;
  hw.wrapAroundUnit = 4;
  return hw;
}

HardwareDescription testSwitch() {
  HardwareDescription hw = testTorus();
  hw.name = "test-switch";
  hw.linksPerChip = 4; // Egress E = 32 B/s.
  hw.interconnect = InterconnectKind::Switch;
  hw.torusRank = 0;
  hw.wrapAroundUnit = 0;
  return hw;
}

constexpr int64_t kSizes[] = {2, 4, 8};
constexpr double kShard = 64;
constexpr RingDirection kUni = RingDirection::Unidirectional;
constexpr RingDirection kBi = RingDirection::Bidirectional;

TEST(AnalyticalCostModelTest, HardwareDescriptionsAreValid) {
  EXPECT_FALSE(llvm::errorToBool(verifyHardware(testTorus())));
  EXPECT_FALSE(llvm::errorToBool(verifyHardware(testSwitch())));
}

TEST(AnalyticalCostModelTest, RooflineSwitchesFromComputeToMemoryBound) {
  AnalyticalCostModel model(testTorus());
  // bf16 at 400 FLOP/s, HBM at 50 B/s: the ridge is at 8 FLOP per byte.
  EXPECT_DOUBLE_EQ(model.einsumTime(4000, 100, ElementKind::BF16), 10.0);
  EXPECT_DOUBLE_EQ(model.einsumTime(800, 100, ElementKind::BF16), 2.0);
  EXPECT_DOUBLE_EQ(model.einsumTime(400, 100, ElementKind::BF16), 2.0);
  EXPECT_DOUBLE_EQ(model.einsumTime(800, 50, ElementKind::BF16), 2.0);
  // The element kind picks the peak: f32 at 100 FLOP/s is compute-bound
  // where bf16 was memory-bound.
  EXPECT_DOUBLE_EQ(model.einsumTime(800, 50, ElementKind::F32), 8.0);
  EXPECT_DOUBLE_EQ(model.einsumTime(800, 50, ElementKind::I8), 1.0);
}

TEST(AnalyticalCostModelTest, UnidirectionalRingWithWrapAround) {
  AnalyticalCostModel model(testTorus());
  for (int64_t n : kSizes) {
    SCOPED_TRACE(n);
    double expected = kLaunch + (n - 1) * (kAlpha + kShard / kB);
    RingDim dim{n, true};
    EXPECT_DOUBLE_EQ(
        model.collectiveTime(CollectiveKind::AllGather, kShard, dim, kUni),
        expected);
    EXPECT_DOUBLE_EQ(
        model.collectiveTime(CollectiveKind::ReduceScatter, kShard, dim, kUni),
        expected);
  }
}

TEST(AnalyticalCostModelTest, BidirectionalRingHalvesOnlyTheBandwidthTerm) {
  AnalyticalCostModel model(testTorus());
  for (int64_t n : kSizes) {
    SCOPED_TRACE(n);
    RingDim dim{n, true};
    double bi =
        model.collectiveTime(CollectiveKind::AllGather, kShard, dim, kBi);
    double uni =
        model.collectiveTime(CollectiveKind::AllGather, kShard, dim, kUni);
    EXPECT_DOUBLE_EQ(bi, kLaunch + (n - 1) * (kAlpha + kShard / (2 * kB)));
    EXPECT_DOUBLE_EQ(uni - bi, (n - 1) * kShard / (2 * kB));
  }
}

TEST(AnalyticalCostModelTest, RingWithoutWrapAroundPaysTheClosingEdge) {
  AnalyticalCostModel model(testTorus());
  for (int64_t n : kSizes) {
    SCOPED_TRACE(n);
    RingDim dim{n, false};
    double expected = kLaunch + (n - 1) * ((n - 1) * kAlpha + kShard / kB);
    EXPECT_DOUBLE_EQ(
        model.collectiveTime(CollectiveKind::AllGather, kShard, dim, kUni),
        expected);
    // Both rings' edges share every link direction: no gain from going
    // both ways.
    EXPECT_DOUBLE_EQ(
        model.collectiveTime(CollectiveKind::ReduceScatter, kShard, dim, kBi),
        expected);
  }
  // Two devices: the closing edge is the one link backwards, as with
  // wrap-around.
  EXPECT_DOUBLE_EQ(model.ringTime(kShard, RingDim{2, false}, kUni),
                   model.ringTime(kShard, RingDim{2, true}, kUni));
}

TEST(AnalyticalCostModelTest, AllReduceIsReduceScatterThenAllGather) {
  AnalyticalCostModel model(testTorus());
  for (int64_t n : kSizes) {
    for (RingDirection direction : {kUni, kBi}) {
      SCOPED_TRACE(n);
      RingDim dim{n, true};
      double buffer = 256;
      double shard = buffer / n;
      double step =
          direction == kBi ? kAlpha + shard / (2 * kB) : kAlpha + shard / kB;
      double allReduce = model.collectiveTime(CollectiveKind::AllReduce, buffer,
                                              dim, direction);
      EXPECT_DOUBLE_EQ(allReduce, kLaunch + 2 * (n - 1) * step);
      EXPECT_DOUBLE_EQ(allReduce + kLaunch,
                       model.collectiveTime(CollectiveKind::ReduceScatter,
                                            shard, dim, direction) +
                           model.collectiveTime(CollectiveKind::AllGather,
                                                shard, dim, direction));
    }
  }
}

TEST(AnalyticalCostModelTest, MultiDimensionalGroupRunsRingsPerDimension) {
  AnalyticalCostModel model(testTorus());
  RingDim dims2[] = {{4, true}, {2, true}};
  // 4-ring on the shard, then a 2-ring on the 4 gathered shards.
  double expected2 =
      kLaunch + 3 * (kAlpha + kShard / kB) + 1 * (kAlpha + 4 * kShard / kB);
  EXPECT_DOUBLE_EQ(
      model.collectiveTime(CollectiveKind::AllGather, kShard, dims2, kUni),
      expected2);
  EXPECT_DOUBLE_EQ(
      model.collectiveTime(CollectiveKind::ReduceScatter, kShard, dims2, kUni),
      expected2);

  // 3-D, bidirectional: bandwidth terms telescope to (N - 1) S / (2B),
  // latency is sum (n_i - 1) alpha, whatever the order.
  RingDim dims3[] = {{2, true}, {4, true}, {8, true}};
  RingDim reversed[] = {{8, true}, {4, true}, {2, true}};
  double expected3 =
      kLaunch + (1 + 3 + 7) * kAlpha + (64 - 1) * kShard / (2 * kB);
  EXPECT_DOUBLE_EQ(
      model.collectiveTime(CollectiveKind::AllGather, kShard, dims3, kBi),
      expected3);
  EXPECT_DOUBLE_EQ(
      model.collectiveTime(CollectiveKind::AllGather, kShard, reversed, kBi),
      expected3);

  // AllReduce over the 3-D group: twice the AllGather of buffer / 64.
  EXPECT_DOUBLE_EQ(
      model.collectiveTime(CollectiveKind::AllReduce, 64 * kShard, dims3, kBi),
      kLaunch + 2 * (expected3 - kLaunch));
}

TEST(AnalyticalCostModelTest, MultiDimensionalGroupWithOneOpenDimension) {
  AnalyticalCostModel model(testTorus());
  // The second dimension (4 devices) has no wrap-around: its steps wait
  // 3 hops for the closing edge and get no bidirectional gain.
  RingDim dims[] = {{2, true}, {4, false}};
  double expected = kLaunch + 1 * (kAlpha + kShard / (2 * kB)) +
                    3 * (3 * kAlpha + 2 * kShard / kB);
  EXPECT_DOUBLE_EQ(
      model.collectiveTime(CollectiveKind::AllGather, kShard, dims, kBi),
      expected);
}

TEST(AnalyticalCostModelTest, GroupOfOneDeviceCostsNothing) {
  AnalyticalCostModel model(testTorus());
  RingDim dims[] = {{1, true}, {1, false}};
  for (CollectiveKind kind :
       {CollectiveKind::AllGather, CollectiveKind::ReduceScatter,
        CollectiveKind::AllReduce})
    EXPECT_EQ(model.collectiveTime(kind, kShard, dims, kUni), 0.0);
  EXPECT_EQ(model.collectiveTime(CollectiveKind::AllGather, kShard, {}, kUni),
            0.0);
}

TEST(AnalyticalCostModelTest, SwitchSharesEgressAndFlattensGroups) {
  AnalyticalCostModel model(testSwitch());
  double egress = 4 * kB;
  for (int64_t n : kSizes) {
    SCOPED_TRACE(n);
    RingDim dim{n, true};
    double expected = kLaunch + (n - 1) * (kAlpha + kShard / egress);
    EXPECT_DOUBLE_EQ(
        model.collectiveTime(CollectiveKind::AllGather, kShard, dim, kUni),
        expected);
    EXPECT_DOUBLE_EQ(
        model.collectiveTime(CollectiveKind::AllGather, kShard, dim, kBi),
        expected);
  }
  // A 2x4 group is one ring of 8 on a switch.
  RingDim dims[] = {{2, true}, {4, true}};
  EXPECT_DOUBLE_EQ(
      model.collectiveTime(CollectiveKind::ReduceScatter, kShard, dims, kUni),
      kLaunch + 7 * (kAlpha + kShard / egress));
}

TEST(AnalyticalCostModelTest, PermuteIsHopsTimesLatencyPlusBandwidth) {
  AnalyticalCostModel torus(testTorus());
  EXPECT_DOUBLE_EQ(torus.permuteTime(kShard, 1),
                   kLaunch + kAlpha + kShard / kB);
  EXPECT_DOUBLE_EQ(torus.permuteTime(kShard, 3),
                   kLaunch + 3 * kAlpha + kShard / kB);
  EXPECT_EQ(torus.permuteTime(kShard, 0), 0.0);

  AnalyticalCostModel switched(testSwitch());
  EXPECT_DOUBLE_EQ(switched.permuteTime(kShard, 3),
                   kLaunch + kAlpha + kShard / (4 * kB));
}

TEST(AnalyticalCostModelTest, TpuV4AllGatherMatchesHandComputedFigure) {
  std::optional<HardwareDescription> hw = lookupHardware("tpu-v4");
  ASSERT_TRUE(hw);
  AnalyticalCostModel model(*hw);
  // 16 MB shards on a wrapped ring of 4: 1 us launch + 3 * (1 us + 16e6 /
  // 45e9 s), about 1.071 ms.
  double time = model.collectiveTime(CollectiveKind::AllGather, 16e6,
                                     RingDim{4, true}, kUni);
  EXPECT_NEAR(time, 1e-6 + 3 * (1e-6 + 16e6 / 45e9), 1e-12);
}

} // namespace
