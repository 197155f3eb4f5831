//===- SimulatorTest.cpp - The event simulation against closed forms ------===//
//
// Collectives on 1-, 2- and 3-D tori with and without wrap-around and on a
// switch, both directions, against the time of their plan
// (MachineModel::collectiveTime, whose rounds the simulator plays) and
// against formulas written out by hand; permutes against permuteTime;
// looped einsum programs whose communication is hidden or exposed, DMA slot
// limits and link sharing against formulas derived by hand; asynchronous
// collectives against their blocking form, hidden behind compute, sharing
// links and slots; error reporting; the JSON report and the Chrome trace.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/Simulator/Simulator.h"

#include "llvm/Support/JSON.h"

#include "../CostModel/TestHardware.h"

#include "gtest/gtest.h"

using namespace mlir::ovl;
using namespace mlir::ovl::test;

namespace {

constexpr RingDirection kUni = RingDirection::Unidirectional;
constexpr RingDirection kBi = RingDirection::Bidirectional;
constexpr CollectiveKind kKinds[] = {CollectiveKind::AllGather,
                                     CollectiveKind::ReduceScatter,
                                     CollectiveKind::AllReduce};

template <typename T> std::string errorOf(llvm::Expected<T> value) {
  if (value)
    return "";
  return llvm::toString(value.takeError());
}

/// Relative 1e-9 (absolute 1e-12 near zero).
void expectClose(double actual, double expected) {
  EXPECT_NEAR(actual, expected, std::max(1e-12, 1e-9 * std::fabs(expected)));
}

/// A topology, a row-major assignment and a program on its grid.
struct Bench {
  HardwareDescription hw;
  Topology topology;
  DeviceAssignment assignment;
  SimProgram program;

  Bench(HardwareDescription hardware, llvm::ArrayRef<int64_t> extents,
        llvm::ArrayRef<int64_t> grid)
      : hw(std::move(hardware)) {
    llvm::Expected<Topology> t = Topology::get(hw, extents);
    EXPECT_TRUE(static_cast<bool>(t)) << errorOf(std::move(t));
    if (!t)
      return;
    topology = *t;
    llvm::Expected<DeviceAssignment> a =
        DeviceAssignment::rowMajor(grid, topology);
    EXPECT_TRUE(static_cast<bool>(a)) << errorOf(std::move(a));
    if (!a)
      return;
    assignment = *a;
    program.gridShape.assign(grid.begin(), grid.end());
  }

  uint32_t label(llvm::StringRef name) {
    for (auto [i, existing] : llvm::enumerate(program.labels))
      if (existing == name)
        return i;
    return program.addLabel(name.str());
  }

  void compute(llvm::StringRef name, double seconds, double flops = 0,
               ElementKind kind = ElementKind::BF16) {
    SimStep step;
    step.kind = SimStep::Kind::Compute;
    step.label = label(name);
    step.seconds = seconds;
    step.flops = flops;
    step.elementKind = kind;
    program.steps.push_back(step);
  }

  /// A Collective or CollectiveStart; returns its step index.
  uint32_t collective(CollectiveKind kind, double bytes,
                      llvm::ArrayRef<int16_t> axes, RingDirection direction,
                      SimStep::Kind stepKind = SimStep::Kind::Collective,
                      llvm::StringRef name = "collective") {
    SimStep step;
    step.kind = stepKind;
    step.label = label(name);
    step.collective = kind;
    step.bytes = bytes;
    step.axes.assign(axes.begin(), axes.end());
    step.direction = direction;
    program.steps.push_back(step);
    return program.steps.size() - 1;
  }

  /// A Permute or PermuteStart; returns its step index.
  uint32_t permute(SimStep::Kind kind, llvm::StringRef name, double bytes,
                   llvm::ArrayRef<int16_t> axes,
                   std::vector<std::pair<int64_t, int64_t>> pairs) {
    SimStep step;
    step.kind = kind;
    step.label = label(name);
    step.bytes = bytes;
    step.axes.assign(axes.begin(), axes.end());
    step.pairs = program.addPairs(std::move(pairs));
    program.steps.push_back(step);
    return program.steps.size() - 1;
  }

  /// A PermuteDone or CollectiveDone.
  void done(llvm::StringRef name, uint32_t start,
            SimStep::Kind kind = SimStep::Kind::PermuteDone) {
    SimStep step;
    step.kind = kind;
    step.label = label(name);
    step.start = start;
    program.steps.push_back(step);
  }

  llvm::Expected<SimReport> run(const SimOptions &options = {}) const {
    return simulate(program, MachineModel(hw, topology, assignment), options);
  }

  SimReport mustRun(const SimOptions &options = {}) const {
    llvm::Expected<SimReport> report = run(options);
    EXPECT_TRUE(static_cast<bool>(report)) << errorOf(std::move(report));
    if (!report)
      return SimReport();
    return std::move(*report);
  }

  /// The planned time of the program's single collective step.
  double planned() const {
    const SimStep &step = program.steps.front();
    return MachineModel(hw, topology, assignment)
        .collectiveTime(step.collective, step.bytes, step.axes, step.direction);
  }
};

/// Pairs shifting every group index by `shift` round a ring of `n`.
std::vector<std::pair<int64_t, int64_t>> shiftPairs(int64_t n, int64_t shift) {
  std::vector<std::pair<int64_t, int64_t>> pairs;
  for (int64_t i = 0; i < n; ++i)
    pairs.push_back({i, (i + shift) % n});
  return pairs;
}

std::string describe(CollectiveKind kind, RingDirection direction) {
  const char *names[] = {"all-gather", "reduce-scatter", "all-reduce"};
  return std::string(names[static_cast<int>(kind)]) +
         (direction == kBi ? " bidirectional" : " unidirectional");
}

//===----------------------------------------------------------------------===//
// Collectives against the closed form
//===----------------------------------------------------------------------===//

TEST(SimulatorTest, RingsOnOneDimensionMatchTheirPlan) {
  // Wrap-around always (unit 0) or never (unit 16) on a line of n.
  for (unsigned wrapUnit : {0u, 16u}) {
    for (int64_t n : {2, 3, 4, 8}) {
      for (CollectiveKind kind : kKinds) {
        for (RingDirection direction : {kUni, kBi}) {
          SCOPED_TRACE(describe(kind, direction) + " n=" + std::to_string(n) +
                       " wrapUnit=" + std::to_string(wrapUnit));
          Bench setup(testTorus(1, wrapUnit), {n}, {n});
          setup.collective(kind, 64, {0}, direction);
          SimReport report = setup.mustRun();
          expectClose(report.stepTime, setup.planned());
          EXPECT_EQ(report.computeTime, 0);
          expectClose(report.commTime, report.stepTime);
          expectClose(report.exposedCommTime, report.stepTime);
          EXPECT_EQ(report.overlapFraction, 0);
        }
      }
    }
  }
  // Spelt out once: a wrapped unidirectional ring of 4 passing 64 B.
  Bench setup(testTorus(1, 0), {4}, {4});
  setup.collective(CollectiveKind::AllGather, 64, {0}, kUni);
  expectClose(setup.mustRun().stepTime, kLaunch + 3 * (kAlpha + 64 / kB));
  // Without wrap-around the closing edge walks 3 hops back.
  Bench open(testTorus(1, 16), {4}, {4});
  open.collective(CollectiveKind::AllGather, 64, {0}, kUni);
  expectClose(open.mustRun().stepTime, kLaunch + 3 * (3 * kAlpha + 64 / kB));
}

TEST(SimulatorTest, BothWaysWithAndWithoutWrapAround) {
  // Two devices on a line share one link pair: both ways or not, a round is
  // alpha + s / B.
  {
    Bench setup(testTorus(1, 16), {2}, {2});
    setup.collective(CollectiveKind::AllGather, 64, {0}, kBi);
    expectClose(setup.mustRun().stepTime, kLaunch + kAlpha + 64 / kB);
  }
  // With wrap-around, two devices have two link pairs: the halves go round
  // both ways and the bandwidth term halves.
  {
    Bench setup(testTorus(1, 0), {2}, {2});
    setup.collective(CollectiveKind::AllGather, 64, {0}, kBi);
    expectClose(setup.mustRun().stepTime, kLaunch + kAlpha + 64 / (2 * kB));
  }
  for (int64_t n : {4, 8}) {
    SCOPED_TRACE(n);
    // Open: both ways along the line, a whole block per link and round.
    {
      Bench setup(testTorus(1, 16), {n}, {n});
      setup.collective(CollectiveKind::ReduceScatter, 64, {0}, kBi);
      expectClose(setup.mustRun().stepTime,
                  kLaunch + (n - 1) * (kAlpha + 64 / kB));
    }
    // Wrapped: whole blocks both ways, n / 2 rounds, the last of halves.
    {
      Bench setup(testTorus(1, 0), {n}, {n});
      setup.collective(CollectiveKind::AllGather, 64, {0}, kBi);
      expectClose(setup.mustRun().stepTime,
                  kLaunch + (n / 2) * kAlpha + (n - 1) * 64 / (2 * kB));
    }
  }
}

TEST(SimulatorTest, TwoDimensionalTorus) {
  struct Case {
    std::vector<int64_t> extents;
    std::vector<int16_t> axes;
    unsigned wrapUnit;
  };
  const Case cases[] = {
      {{4, 4}, {0, 1}, 4},  {{4, 8}, {1, 0}, 4},
      {{4, 4}, {1}, 4},     {{4, 4}, {0, 1}, 16}, // no wrap-around
      {{2, 8}, {1, 0}, 16},                       // no wrap-around
  };
  for (const Case &c : cases) {
    for (CollectiveKind kind : kKinds) {
      for (RingDirection direction : {kUni, kBi}) {
        SCOPED_TRACE(describe(kind, direction) + " on " +
                     std::to_string(c.extents[0]) + "x" +
                     std::to_string(c.extents[1]) +
                     " wrapUnit=" + std::to_string(c.wrapUnit));
        Bench setup(testTorus(2, c.wrapUnit), c.extents, c.extents);
        setup.collective(kind, 64, c.axes, direction);
        expectClose(setup.mustRun().stepTime, setup.planned());
      }
    }
  }
  // Spelt out: AllGather over 4x4 wrapped, unidirectional, in two halves
  // that take the axes in opposite orders at once: rings of 4 on 32 B, then
  // on 128 B.
  Bench setup(testTorus(2, 4), {4, 4}, {4, 4});
  setup.collective(CollectiveKind::AllGather, 64, {0, 1}, kUni);
  expectClose(setup.mustRun().stepTime,
              kLaunch + 3 * (kAlpha + 32 / kB) + 3 * (kAlpha + 128 / kB));
}

TEST(SimulatorTest, RingOfTwoOnALongerDimension) {
  // Grid [2, 4] on the first half of a wrapped 4x4 torus: axis 1 is a
  // wrapped ring of 4 along y, axis 0 a ring of two at x = 0 and 1 with one
  // link pair between them. The plan's rounds, whatever it picks, play as
  // priced.
  for (CollectiveKind kind : kKinds) {
    SCOPED_TRACE(describe(kind, kBi));
    Bench setup(testTorus(2, 4), {4, 4}, {2, 4});
    setup.collective(kind, 64, {0, 1}, kBi);
    expectClose(setup.mustRun().stepTime, setup.planned());
  }
}

TEST(SimulatorTest, ThreeDimensionalTpuV4) {
  HardwareDescription v4 = *lookupHardware("tpu-v4");
  for (CollectiveKind kind : kKinds) {
    for (RingDirection direction : {kUni, kBi}) {
      SCOPED_TRACE(describe(kind, direction));
      Bench cube(v4, {4, 4, 4}, {4, 4, 4});
      ASSERT_TRUE(cube.topology.hasWrapAround());
      cube.collective(kind, 16e6, {0, 1, 2}, direction);
      expectClose(cube.mustRun().stepTime, cube.planned());

      Bench reordered(v4, {4, 4, 4}, {4, 4, 4});
      reordered.collective(kind, 16e6, {2, 0}, direction);
      expectClose(reordered.mustRun().stepTime, reordered.planned());

      // 2x2x4 has no wrap-around.
      Bench open(v4, {2, 2, 4}, {2, 2, 4});
      ASSERT_FALSE(open.topology.hasWrapAround());
      open.collective(kind, 16e6, {2, 0, 1}, direction);
      expectClose(open.mustRun().stepTime, open.planned());
    }
  }
  // The hand-computed figure of the cost model's test: 16 MB shards on a
  // wrapped ring of 4, about 1.071 ms.
  Bench ring(v4, {4, 4, 4}, {4, 4, 4});
  ring.collective(CollectiveKind::AllGather, 16e6, {2}, kUni);
  expectClose(ring.mustRun().stepTime, 1e-6 + 3 * (1e-6 + 16e6 / 45e9));
}

TEST(SimulatorTest, SwitchIsOneRingThroughEgressAndIngress) {
  for (CollectiveKind kind : kKinds) {
    for (RingDirection direction : {kUni, kBi}) {
      SCOPED_TRACE(describe(kind, direction));
      Bench flat(testSwitch(), {8}, {8});
      flat.collective(kind, 64, {0}, direction);
      expectClose(flat.mustRun().stepTime, flat.planned());

      // A 2x4 group is one ring of 8 on a switch.
      Bench grid(testSwitch(), {8}, {2, 4});
      grid.collective(kind, 64, {0, 1}, direction);
      expectClose(grid.mustRun().stepTime, grid.planned());

      Bench h100(*lookupHardware("h100-nvlink"), {8}, {8});
      h100.collective(kind, 1 << 20, {0}, direction);
      expectClose(h100.mustRun().stepTime, h100.planned());
    }
  }
  // Spelt out: 7 steps of alpha + s / E one way, E = 32 B/s; both ways
  // the egress carries two blocks a round, in 4 rounds.
  Bench setup(testSwitch(), {8}, {8});
  setup.collective(CollectiveKind::AllGather, 64, {0}, kUni);
  expectClose(setup.mustRun().stepTime, kLaunch + 7 * (kAlpha + 64 / 32.0));
  Bench both(testSwitch(), {8}, {8});
  both.collective(CollectiveKind::AllGather, 64, {0}, kBi);
  expectClose(both.mustRun().stepTime, kLaunch + 4 * kAlpha + 7 * 64 / 32.0);
}

TEST(SimulatorTest, GroupOfOneCostsNothing) {
  Bench setup(testTorus(2, 4), {4, 4}, {1, 4});
  setup.collective(CollectiveKind::AllReduce, 64, {0}, kBi);
  SimReport report = setup.mustRun();
  EXPECT_EQ(report.stepTime, 0);
  EXPECT_EQ(report.commTime, 0);
  EXPECT_EQ(report.overlapFraction, 1);
  EXPECT_EQ(report.bytesSent, 0);
}

//===----------------------------------------------------------------------===//
// Permutes
//===----------------------------------------------------------------------===//

TEST(SimulatorTest, PermuteMatchesPermuteTime) {
  HardwareDescription v4 = *lookupHardware("tpu-v4");
  AnalyticalCostModel model(v4);
  // Group index 0 sends to 2 along z: two hops, no link shared.
  {
    Bench setup(v4, {4, 4, 4}, {4, 4, 4});
    setup.permute(SimStep::Kind::Permute, "permute", 1e6, {2}, {{0, 2}});
    SimReport report = setup.mustRun();
    expectClose(report.stepTime, model.permuteTime(1e6, 2));
    EXPECT_EQ(report.criticalDevice, 0);
    expectClose(report.bytesSent, 2e6);
    expectClose(report.exposedCommTime, report.stepTime);
  }
  // Every index to the next along x, one hop each on its own link.
  {
    Bench setup(v4, {4, 4, 4}, {4, 4, 4});
    setup.permute(SimStep::Kind::Permute, "permute", 1e6, {0},
                  shiftPairs(4, 1));
    expectClose(setup.mustRun().stepTime, model.permuteTime(1e6, 1));
  }
  // Three hops along a line without wrap-around.
  {
    Bench setup(testTorus(1, 16), {4}, {4});
    setup.permute(SimStep::Kind::Permute, "permute", 64, {0}, {{3, 0}});
    expectClose(setup.mustRun().stepTime,
                AnalyticalCostModel(setup.hw).permuteTime(64, 3));
  }
  // A switch: one hop whatever the devices.
  {
    Bench setup(testSwitch(), {8}, {8});
    setup.permute(SimStep::Kind::Permute, "permute", 64, {0}, {{1, 6}});
    SimReport report = setup.mustRun();
    expectClose(report.stepTime,
                AnalyticalCostModel(setup.hw).permuteTime(64, 1));
    expectClose(report.stepTime, kLaunch + kAlpha + 64 / 32.0);
  }
  // Keeping one's own data costs nothing, as permuteTime(s, 0).
  {
    Bench setup(testTorus(1, 0), {4}, {4});
    setup.permute(SimStep::Kind::Permute, "permute", 64, {0}, shiftPairs(4, 0));
    SimReport report = setup.mustRun();
    EXPECT_EQ(report.stepTime, 0);
    EXPECT_EQ(report.bytesSent, 0);
  }
}

TEST(SimulatorTest, PermuteOverSeveralAxesUsesGroupIndices) {
  // Grid [2, 4] on a 2x4 torus; over axes {1, 0} index = c1 * 2 + c0, so
  // index 1 is logical (1, 0) = 4 and index 6 is logical (0, 3) = 3:
  // physical (1,0) -> (0,3) is one hop along x and one along y (the 2x4
  // torus wraps, unit 0): the transfer splits over the two ports, x first
  // and y first, 32 B each.
  Bench setup(testTorus(2, 0), {2, 4}, {2, 4});
  setup.permute(SimStep::Kind::Permute, "permute", 64, {1, 0}, {{1, 6}});
  SimReport report = setup.mustRun();
  expectClose(report.stepTime, kLaunch + 2 * kAlpha + 32 / kB);
  // The sender (4) and the receiver (3) end together; the lower id is
  // critical.
  EXPECT_EQ(report.criticalDevice, 3);
}

/// The looped einsum of N devices on a ring: N - 1 iterations of (start the
/// shift to the next device, compute on the current block, wait), then the
/// last block's compute.
Bench loopedEinsum(double computeSeconds, double bytes) {
  constexpr int64_t n = 4;
  Bench setup(testTorus(1, 0), {n}, {n});
  for (int64_t i = 0; i + 1 < n; ++i) {
    uint32_t start = setup.permute(SimStep::Kind::PermuteStart, "start", bytes,
                                   {0}, shiftPairs(n, 1));
    setup.compute("einsum", computeSeconds, 1000);
    setup.done("done", start);
  }
  setup.compute("einsum", computeSeconds, 1000);
  return setup;
}

TEST(SimulatorTest, LoopedEinsumHidesCommunicationBehindCompute) {
  // One transfer: launch + one hop + 64 B at 8 B/s = 10.5 s; compute 20 s.
  double transfer = kLaunch + kAlpha + 64 / kB, compute = 20;
  ASSERT_GT(compute, transfer);
  SimReport report = loopedEinsum(compute, 64).mustRun();
  expectClose(report.stepTime, 4 * compute);
  expectClose(report.computeTime, 4 * compute);
  // Each start-to-done interval spans one compute; they abut.
  expectClose(report.commTime, 3 * compute);
  EXPECT_NEAR(report.exposedCommTime, 0, 1e-12);
  EXPECT_NEAR(report.overlapFraction, 1, 1e-12);
  expectClose(report.flops, 4000);
  expectClose(report.flopsPerSecond, 4000 / (4 * compute));
  expectClose(report.utilization, 4000 / (4 * compute) / 400);
  expectClose(report.bytesSent, 3 * 64);

  ASSERT_EQ(report.ops.size(), 3u);
  EXPECT_EQ(report.ops[0].label, "start");
  EXPECT_EQ(report.ops[1].label, "einsum");
  EXPECT_EQ(report.ops[2].label, "done");
  EXPECT_EQ(report.ops[0].count, 3);
  EXPECT_EQ(report.ops[1].count, 4);
  expectClose(report.ops[1].computeSeconds, 4 * compute);
  EXPECT_EQ(report.ops[2].exposedSeconds, 0);
}

TEST(SimulatorTest, LoopedEinsumExposesSlowCommunication) {
  double transfer = kLaunch + kAlpha + 64 / kB, compute = 4;
  ASSERT_LT(compute, transfer);
  SimReport report = loopedEinsum(compute, 64).mustRun();
  // Every iteration lasts as long as its transfer; the last compute follows.
  expectClose(report.stepTime, 3 * transfer + compute);
  expectClose(report.computeTime, 4 * compute);
  expectClose(report.commTime, 3 * transfer);
  expectClose(report.exposedCommTime, 3 * (transfer - compute));
  expectClose(report.overlapFraction, compute / transfer);
  ASSERT_EQ(report.ops.size(), 3u);
  expectClose(report.ops[2].exposedSeconds, 3 * (transfer - compute));
  EXPECT_EQ(report.ops[0].exposedSeconds, 0);
  EXPECT_EQ(report.ops[1].exposedSeconds, 0);
}

//===----------------------------------------------------------------------===//
// DMA slots and link sharing
//===----------------------------------------------------------------------===//

/// Five starts of the shift to the next device, then their five dones.
Bench fiveStarts(double bytes) {
  Bench setup(testTorus(1, 0), {4}, {4});
  std::vector<uint32_t> starts;
  for (int i = 0; i < 5; ++i)
    starts.push_back(setup.permute(SimStep::Kind::PermuteStart, "start", bytes,
                                   {0}, shiftPairs(4, 1)));
  for (uint32_t start : starts)
    setup.done("done", start);
  return setup;
}

TEST(SimulatorTest, DmaSlotsLimitTransfersInFlight) {
  Bench setup = fiveStarts(64);
  // Five slots: all five share the link, 5 * 64 B at 8 B/s after launch and
  // one hop.
  SimOptions five;
  five.maxInFlight = 5;
  SimReport all = setup.mustRun(five);
  expectClose(all.stepTime, kLaunch + kAlpha + 5 * 64 / kB);

  // Two slots: pairs of transfers, each pair launch + hop + 2 * 64 B / B,
  // then the fifth alone.
  SimOptions two;
  two.maxInFlight = 2;
  SimReport limited = setup.mustRun(two);
  double pair = kLaunch + kAlpha + 2 * 64 / kB;
  double single = kLaunch + kAlpha + 64 / kB;
  expectClose(limited.stepTime, 2 * pair + single);
  EXPECT_GT(limited.stepTime, all.stepTime);
  // The starts waited for slots: the third and fourth until the first pair
  // was through, the fifth until the second pair was.
  ASSERT_EQ(limited.ops.size(), 2u);
  expectClose(limited.ops[0].exposedSeconds, 2 * pair);
  expectClose(limited.ops[1].exposedSeconds, single);
  expectClose(limited.exposedCommTime, limited.stepTime);

  // Without maxInFlight the hardware's dmaSlots (4) apply: four, then one.
  expectClose(setup.mustRun().stepTime,
              (kLaunch + kAlpha + 4 * 64 / kB) + single);
}

TEST(SimulatorTest, TransfersSharingALinkTakeTwiceAsLong) {
  // Two starts from every device on the same link.
  Bench one(testTorus(1, 0), {4}, {4});
  one.done("done", one.permute(SimStep::Kind::PermuteStart, "start", 64, {0},
                               shiftPairs(4, 1)));
  Bench two(testTorus(1, 0), {4}, {4});
  uint32_t a = two.permute(SimStep::Kind::PermuteStart, "start", 64, {0},
                           shiftPairs(4, 1));
  uint32_t b = two.permute(SimStep::Kind::PermuteStart, "start", 64, {0},
                           shiftPairs(4, 1));
  two.done("done", a);
  two.done("done", b);
  double latency = kLaunch + kAlpha;
  expectClose(one.mustRun().stepTime - latency, 64 / kB);
  expectClose(two.mustRun().stepTime - latency, 2 * 64 / kB);

  // Different senders: on a line without latency 0 -> 2 and 1 -> 3 both
  // cross link 1 -> 2, so both run at B / 2 (the minimum over their links).
  HardwareDescription hw = testTorus(1, 16);
  hw.hopLatency = 0;
  Bench crossing(hw, {4}, {4});
  crossing.permute(SimStep::Kind::Permute, "permute", 64, {0},
                   {{0, 2}, {1, 3}});
  expectClose(crossing.mustRun().stepTime, kLaunch + 2 * 64 / kB);
  Bench apart(hw, {4}, {4});
  apart.permute(SimStep::Kind::Permute, "permute", 64, {0}, {{0, 1}, {2, 3}});
  expectClose(apart.mustRun().stepTime, kLaunch + 64 / kB);
}

TEST(SimulatorTest, LaterTransferSpeedsUpWhenTheFirstLeaves) {
  // 64 B and 192 B start together on one link: both at B / 2 until the
  // first is through (128 B sent, 16 s), then the rest of the second
  // (128 B) at B (16 s).
  HardwareDescription hw = testTorus(1, 0);
  hw.hopLatency = 0;
  hw.collectiveLaunchOverhead = 0;
  Bench setup(hw, {4}, {4});
  uint32_t a =
      setup.permute(SimStep::Kind::PermuteStart, "small", 64, {0}, {{0, 1}});
  uint32_t b =
      setup.permute(SimStep::Kind::PermuteStart, "large", 192, {0}, {{0, 1}});
  setup.done("done", a);
  setup.compute("mark", 1);
  setup.done("done", b);
  SimReport report = setup.mustRun();
  // Device 0: the first done at 16, compute to 17, the second done at 32.
  expectClose(report.stepTime, 32);
  expectClose(report.commTime, 32);
  expectClose(report.exposedCommTime, 31);
}

//===----------------------------------------------------------------------===//
// Asynchronous collectives
//===----------------------------------------------------------------------===//

constexpr SimStep::Kind kStart = SimStep::Kind::CollectiveStart;
constexpr SimStep::Kind kDone = SimStep::Kind::CollectiveDone;

/// An all-gather of 64 B one way round a wrapped ring of 4: launch, then 3
/// rounds of one hop each.
constexpr double kRingAllGather = kLaunch + 3 * (kAlpha + 64 / kB);

/// Start that all-gather, compute, wait for it.
Bench asyncAllGather(double computeSeconds) {
  Bench setup(testTorus(1, 0), {4}, {4});
  uint32_t start = setup.collective(CollectiveKind::AllGather, 64, {0}, kUni,
                                    kStart, "start");
  setup.compute("einsum", computeSeconds, 1000);
  setup.done("done", start, kDone);
  return setup;
}

TEST(SimulatorTest, AsyncCollectiveHidesBehindCompute) {
  double compute = 100;
  ASSERT_GT(compute, kRingAllGather);
  SimReport report = asyncAllGather(compute).mustRun();
  expectClose(report.stepTime, compute);
  expectClose(report.computeTime, compute);
  // In flight from start to done, as an async permute.
  expectClose(report.commTime, compute);
  EXPECT_NEAR(report.exposedCommTime, 0, 1e-12);
  EXPECT_NEAR(report.overlapFraction, 1, 1e-12);
  expectClose(report.bytesSent, 3 * 64);
  ASSERT_EQ(report.ops.size(), 3u);
  EXPECT_EQ(report.ops[0].label, "start");
  EXPECT_EQ(report.ops[2].label, "done");
  EXPECT_EQ(report.ops[0].exposedSeconds, 0);
  EXPECT_EQ(report.ops[2].exposedSeconds, 0);
}

TEST(SimulatorTest, AsyncCollectiveExposesWhatComputeDoesNotHide) {
  double compute = 10;
  ASSERT_LT(compute, kRingAllGather);
  SimReport report = asyncAllGather(compute).mustRun();
  expectClose(report.stepTime, kRingAllGather);
  expectClose(report.computeTime, compute);
  expectClose(report.commTime, kRingAllGather);
  expectClose(report.exposedCommTime, kRingAllGather - compute);
  expectClose(report.overlapFraction, compute / kRingAllGather);
  // The wait is the done's.
  ASSERT_EQ(report.ops.size(), 3u);
  expectClose(report.ops[2].exposedSeconds, kRingAllGather - compute);
  EXPECT_EQ(report.ops[0].exposedSeconds, 0);
  EXPECT_EQ(report.ops[1].exposedSeconds, 0);
}

TEST(SimulatorTest, StartThenDoneIsTheBlockingCollective) {
  struct Case {
    HardwareDescription hw;
    std::vector<int64_t> extents;
    std::vector<int64_t> grid;
    std::vector<int16_t> axes;
    double bytes;
  };
  HardwareDescription v4 = *lookupHardware("tpu-v4");
  const Case cases[] = {
      {testTorus(1, 0), {4}, {4}, {0}, 64},
      {testTorus(1, 16), {8}, {8}, {0}, 64}, // no wrap-around
      {testTorus(2, 4), {4, 4}, {4, 4}, {0, 1}, 64},
      {testTorus(2, 4), {4, 4}, {2, 4}, {0, 1}, 64},
      {testSwitch(), {8}, {2, 4}, {0, 1}, 64},
      {v4, {4, 4, 4}, {4, 4, 4}, {2, 0, 1}, 16e6},
  };
  for (const Case &c : cases) {
    for (CollectiveKind kind : kKinds) {
      for (RingDirection direction : {kUni, kBi}) {
        // Alone, and after a permute that delays devices 0 and 1 only: the
        // others' rounds wait for theirs alike in both forms.
        for (bool staggered : {false, true}) {
          SCOPED_TRACE(describe(kind, direction) + " on " + c.hw.name + " " +
                       std::to_string(c.extents.size()) +
                       "-D, staggered=" + std::to_string(staggered));
          Bench blocking(c.hw, c.extents, c.grid);
          Bench async(c.hw, c.extents, c.grid);
          if (staggered) {
            blocking.permute(SimStep::Kind::Permute, "permute", c.bytes,
                             {c.axes.back()}, {{0, 1}});
            async.permute(SimStep::Kind::Permute, "permute", c.bytes,
                          {c.axes.back()}, {{0, 1}});
          }
          blocking.collective(kind, c.bytes, c.axes, direction);
          async.done("done",
                     async.collective(kind, c.bytes, c.axes, direction, kStart),
                     kDone);
          SimReport expected = blocking.mustRun();
          SimReport actual = async.mustRun();
          EXPECT_EQ(actual.stepTime, expected.stepTime);
          EXPECT_EQ(actual.commTime, expected.commTime);
          EXPECT_EQ(actual.exposedCommTime, expected.exposedCommTime);
          EXPECT_EQ(actual.bytesSent, expected.bytesSent);
          EXPECT_EQ(actual.criticalDevice, expected.criticalDevice);
          EXPECT_EQ(actual.events, expected.events);
          if (!staggered)
            expectClose(actual.stepTime, blocking.planned());
        }
      }
    }
  }
}

TEST(SimulatorTest, AsyncCollectivesShareLinks) {
  // Two at once: every round's two blocks share each x+ link.
  Bench two(testTorus(1, 0), {4}, {4});
  uint32_t a =
      two.collective(CollectiveKind::AllGather, 64, {0}, kUni, kStart, "a");
  uint32_t b =
      two.collective(CollectiveKind::AllGather, 64, {0}, kUni, kStart, "b");
  two.done("done", a, kDone);
  two.done("done", b, kDone);
  SimReport both = two.mustRun();
  expectClose(both.stepTime, kLaunch + 3 * (kAlpha + 2 * 64 / kB));
  EXPECT_GT(both.stepTime, kRingAllGather);
  expectClose(both.commTime, both.stepTime);

  // With a permute to the next device: it streams beside the first round
  // (both launched at once, at B / 2), then the rounds go on alone.
  auto withPermute = [](int64_t shift) {
    Bench setup(testTorus(1, 0), {4}, {4});
    uint32_t collective = setup.collective(CollectiveKind::AllGather, 64, {0},
                                           kUni, kStart, "start");
    uint32_t permute = setup.permute(SimStep::Kind::PermuteStart, "shift", 64,
                                     {0}, shiftPairs(4, shift));
    setup.done("done", collective, kDone);
    setup.done("done", permute);
    return setup.mustRun().stepTime;
  };
  expectClose(withPermute(1),
              kLaunch + (kAlpha + 2 * 64 / kB) + 2 * (kAlpha + 64 / kB));
  // To the previous one it takes the x- links: no sharing.
  expectClose(withPermute(3), kRingAllGather);
}

TEST(SimulatorTest, AsyncCollectivesHoldDmaSlots) {
  Bench setup(testTorus(1, 0), {4}, {4});
  uint32_t a =
      setup.collective(CollectiveKind::AllGather, 64, {0}, kUni, kStart);
  uint32_t b =
      setup.collective(CollectiveKind::AllGather, 64, {0}, kUni, kStart);
  setup.done("done", a, kDone);
  setup.done("done", b, kDone);
  // One slot: the second start waits until the first is done, then runs
  // alone.
  SimOptions one;
  one.maxInFlight = 1;
  SimReport serial = setup.mustRun(one);
  expectClose(serial.stepTime, 2 * kRingAllGather);
  ASSERT_EQ(serial.ops.size(), 2u);
  expectClose(serial.ops[0].exposedSeconds, kRingAllGather);
  expectClose(serial.ops[1].exposedSeconds, kRingAllGather);
  // Two: both at once, sharing the links.
  SimOptions two;
  two.maxInFlight = 2;
  expectClose(setup.mustRun(two).stepTime,
              kLaunch + 3 * (kAlpha + 2 * 64 / kB));

  // Permutes and collectives take slots from one pool, either way round.
  double permute = kLaunch + kAlpha + 64 / kB;
  for (bool collectiveFirst : {true, false}) {
    SCOPED_TRACE(collectiveFirst);
    Bench mixed(testTorus(1, 0), {4}, {4});
    auto startCollective = [&] {
      return mixed.collective(CollectiveKind::AllGather, 64, {0}, kUni, kStart);
    };
    auto startPermute = [&] {
      return mixed.permute(SimStep::Kind::PermuteStart, "shift", 64, {0},
                           shiftPairs(4, 1));
    };
    uint32_t first = collectiveFirst ? startCollective() : startPermute();
    uint32_t second = collectiveFirst ? startPermute() : startCollective();
    mixed.done("done", first,
               collectiveFirst ? kDone : SimStep::Kind::PermuteDone);
    mixed.done("done", second,
               collectiveFirst ? SimStep::Kind::PermuteDone : kDone);
    expectClose(mixed.mustRun(one).stepTime, kRingAllGather + permute);
  }
}

TEST(SimulatorTest, AsyncCollectivesOfGroupsOfOneAreFree) {
  Bench setup(testTorus(2, 4), {4, 4}, {1, 4});
  uint32_t start =
      setup.collective(CollectiveKind::AllReduce, 64, {0}, kBi, kStart);
  setup.done("done", start, kDone);
  SimReport report = setup.mustRun();
  EXPECT_EQ(report.stepTime, 0);
  EXPECT_EQ(report.commTime, 0);
  EXPECT_EQ(report.bytesSent, 0);
}

TEST(SimulatorTest, AsyncCollectiveErrors) {
  Bench before(testTorus(1, 0), {4}, {4});
  before.done("done", 1, kDone);
  before.collective(CollectiveKind::AllGather, 64, {0}, kUni, kStart, "start");
  EXPECT_EQ(errorOf(before.run()),
            "step 0 (collective-done 'done'): waits for step 1, which does "
            "not come before it");

  Bench notStart(testTorus(1, 0), {4}, {4});
  notStart.compute("einsum", 1);
  notStart.done("done", 0, kDone);
  EXPECT_EQ(errorOf(notStart.run()),
            "step 1 (collective-done 'done'): waits for step 0, which is a "
            "compute rather than a collective-start");

  // The dones do not mix.
  Bench permuteStart(testTorus(1, 0), {4}, {4});
  permuteStart.done("done",
                    permuteStart.permute(SimStep::Kind::PermuteStart, "start",
                                         64, {0}, shiftPairs(4, 1)),
                    kDone);
  EXPECT_EQ(errorOf(permuteStart.run()),
            "step 1 (collective-done 'done'): waits for step 0, which is a "
            "permute-start rather than a collective-start");
  Bench collectiveStart(testTorus(1, 0), {4}, {4});
  collectiveStart.done("done",
                       collectiveStart.collective(CollectiveKind::AllGather, 64,
                                                  {0}, kUni, kStart, "start"));
  EXPECT_EQ(errorOf(collectiveStart.run()),
            "step 1 (permute-done 'done'): waits for step 0, which is a "
            "collective-start rather than a permute-start");

  Bench never(testTorus(1, 0), {4}, {4});
  never.collective(CollectiveKind::AllGather, 64, {0}, kUni, kStart, "start");
  never.compute("einsum", 1);
  EXPECT_EQ(errorOf(never.run()),
            "step 0 (collective-start 'start'): no collective-done waits for "
            "it");

  Bench twice(testTorus(1, 0), {4}, {4});
  uint32_t start = twice.collective(CollectiveKind::AllGather, 64, {0}, kUni,
                                    kStart, "start");
  twice.done("done", start, kDone);
  twice.done("done", start, kDone);
  EXPECT_EQ(errorOf(twice.run()),
            "step 2 (collective-done 'done'): waits for step 0 a second time");

  Bench axis(testTorus(1, 0), {4}, {4});
  axis.done("done",
            axis.collective(CollectiveKind::AllGather, 64, {1}, kUni, kStart,
                            "start"),
            kDone);
  EXPECT_EQ(errorOf(axis.run()),
            "step 0 (collective-start 'start'): axis 1 is outside the grid of "
            "rank 1");
}

TEST(SimulatorTest, RoundsOnThePlayedDevicesAreBounded) {
  // 4096 all_reduces on a ring of 4096 devices folded over a 64x64 torus:
  // 2^24 device-steps, within the bound before the symmetry; but each
  // collective plays the rounds of its ring on each of the 64 devices
  // played, 2^30 device-rounds and more.
  Bench big(testTorus(2, 0), {64, 64}, {4096});
  for (int i = 0; i < 4096; ++i)
    big.collective(CollectiveKind::AllReduce, 64, {0}, kUni);
  std::string error = errorOf(big.run());
  EXPECT_NE(error.find("on each of 64 devices played"), std::string::npos)
      << error;
  EXPECT_NE(error.find("more than 1073741824 device-rounds"), std::string::npos)
      << error;
  // One of them plays.
  Bench quarter(testTorus(2, 0), {64, 64}, {4096});
  quarter.collective(CollectiveKind::AllReduce, 64, {0}, kUni);
  EXPECT_EQ(errorOf(quarter.run()), "");
}

TEST(SimulatorTest, DeadlockInACollectiveNamesItsRound) {
  // Without bandwidth the first round never ends: each device waits for
  // its send and its receive.
  HardwareDescription hw = testTorus(1, 0);
  hw.linkBandwidth = 0;
  Bench blocking(hw, {4}, {4});
  blocking.collective(CollectiveKind::AllGather, 64, {0}, kUni);
  EXPECT_EQ(errorOf(blocking.run()),
            "deadlock: no events left at t = 2.5 s but device 0 (physical 0) "
            "is stuck at step 0 (collective 'collective'), waiting for 2 "
            "transfer(s) in round 1 of 3 of its collective");
  Bench async(hw, {4}, {4});
  uint32_t start = async.collective(CollectiveKind::AllGather, 64, {0}, kUni,
                                    kStart, "start");
  async.compute("einsum", 1);
  async.done("done", start, kDone);
  EXPECT_EQ(errorOf(async.run()),
            "deadlock: no events left at t = 2.5 s but device 0 (physical 0) "
            "is stuck at step 2 (collective-done 'done'), waiting for 2 "
            "transfer(s) in round 1 of 3 of its collective");
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

TEST(SimulatorTest, BadPairsAreErrors) {
  Bench outside(testTorus(1, 0), {4}, {4});
  outside.permute(SimStep::Kind::Permute, "shift", 64, {0}, {{0, 1}, {3, 4}});
  EXPECT_EQ(errorOf(outside.run()),
            "step 0 (permute 'shift'): permute pair (3, 4) is outside the "
            "group of 4 devices along axes [0]");

  Bench negative(testTorus(1, 0), {4}, {4});
  negative.compute("einsum", 1);
  negative.permute(SimStep::Kind::PermuteStart, "shift", 64, {0}, {{-1, 1}});
  EXPECT_EQ(errorOf(negative.run()),
            "step 1 (permute-start 'shift'): permute pair (-1, 1) is outside "
            "the group of 4 devices along axes [0]");

  Bench twice(testTorus(1, 0), {4}, {4});
  twice.permute(SimStep::Kind::Permute, "shift", 64, {0}, {{0, 1}, {0, 2}});
  EXPECT_NE(errorOf(twice.run())
                .find("group index 0 is the source of more "
                      "than one permute pair"),
            std::string::npos);
}

TEST(SimulatorTest, DoneBeforeStartIsAnError) {
  Bench setup(testTorus(1, 0), {4}, {4});
  setup.done("done", 1);
  setup.permute(SimStep::Kind::PermuteStart, "start", 64, {0},
                shiftPairs(4, 1));
  EXPECT_EQ(errorOf(setup.run()),
            "step 0 (permute-done 'done'): waits for step 1, which does not "
            "come before it");

  Bench notStart(testTorus(1, 0), {4}, {4});
  notStart.compute("einsum", 1);
  notStart.done("done", 0);
  EXPECT_EQ(errorOf(notStart.run()),
            "step 1 (permute-done 'done'): waits for step 0, which is a "
            "compute rather than a permute-start");

  Bench doneTwice(testTorus(1, 0), {4}, {4});
  uint32_t start = doneTwice.permute(SimStep::Kind::PermuteStart, "start", 64,
                                     {0}, shiftPairs(4, 1));
  doneTwice.done("done", start);
  doneTwice.done("done", start);
  EXPECT_EQ(errorOf(doneTwice.run()),
            "step 2 (permute-done 'done'): waits for step 0 a second time");
}

TEST(SimulatorTest, DeadlockNamesTheDeviceAndStep) {
  // A link without bandwidth never delivers: whoever waits for it is stuck
  // when the events run out. (A valid program on valid hardware cannot
  // deadlock: sends never wait for their receivers.)
  HardwareDescription hw = testTorus(1, 0);
  hw.linkBandwidth = 0;
  Bench setup(hw, {4}, {4});
  setup.compute("einsum", 1);
  setup.permute(SimStep::Kind::Permute, "shift", 64, {0}, {{2, 3}});
  EXPECT_EQ(errorOf(setup.run()),
            "deadlock: no events left at t = 3.5 s but device 2 (physical 2) "
            "is stuck at step 1 (permute 'shift'), waiting for 1 transfer(s)");
}

TEST(SimulatorTest, InconsistentProgramsAreErrors) {
  Bench axis(testTorus(1, 0), {4}, {4});
  axis.collective(CollectiveKind::AllGather, 64, {1}, kUni);
  EXPECT_EQ(errorOf(axis.run()),
            "step 0 (collective 'collective'): axis 1 is outside the grid of "
            "rank 1");

  Bench grid(testTorus(1, 0), {4}, {4});
  grid.program.gridShape = {2, 2};
  EXPECT_NE(errorOf(grid.run()).find("grid shape does not match"),
            std::string::npos);
}

//===----------------------------------------------------------------------===//
// Reports and traces
//===----------------------------------------------------------------------===//

TEST(SimulatorTest, UtilizationUsesTheKindWithMostFlops) {
  Bench setup(testTorus(1, 0), {4}, {4});
  setup.compute("bf16", 2, 800, ElementKind::BF16);
  setup.compute("f32", 1, 100, ElementKind::F32);
  SimReport report = setup.mustRun();
  expectClose(report.flops, 900);
  expectClose(report.flopsPerSecond, 300);
  expectClose(report.utilization, 300.0 / 400);
  EXPECT_EQ(report.commTime, 0);
  EXPECT_EQ(report.overlapFraction, 1);
}

TEST(SimulatorTest, ReportJSONHasEveryField) {
  SimReport report = loopedEinsum(4, 64).mustRun();
  std::string text;
  llvm::raw_string_ostream os(text);
  writeReportJSON(report, os);
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(text);
  ASSERT_TRUE(static_cast<bool>(parsed)) << errorOf(std::move(parsed));
  const llvm::json::Object *object = parsed->getAsObject();
  ASSERT_TRUE(object);
  const char *const keys[] = {"step_time_s",
                              "compute_time_s",
                              "comm_time_s",
                              "exposed_comm_time_s",
                              "overlap_fraction",
                              "lower_bound_s",
                              "flops",
                              "flops_per_second",
                              "utilization",
                              "bytes_sent",
                              "num_devices",
                              "simulated_devices",
                              "symmetry",
                              "critical_device",
                              "hardware",
                              "topology",
                              "events",
                              "peak_memory_bytes",
                              "hbm_capacity_bytes",
                              "fits_in_memory",
                              "ops"};
  for (llvm::StringRef key : keys)
    EXPECT_TRUE(object->get(key)) << key.str();
  EXPECT_EQ(object->size(), std::size(keys));
  // The simulator plays time, not memory: the caller fills the peak; the
  // test machine's HBM is unknown.
  EXPECT_EQ(object->get("peak_memory_bytes")->kind(), llvm::json::Value::Null);
  EXPECT_EQ(object->get("fits_in_memory")->kind(), llvm::json::Value::Null);
  report.peakMemoryBytes = 100;
  report.hbmCapacityBytes = 50;
  EXPECT_EQ(report.fitsInMemory(), std::optional<bool>(false));
  EXPECT_EQ(object->getNumber("lower_bound_s"),
            std::max(report.computeTime, report.commTime));
  EXPECT_EQ(object->getNumber("step_time_s"), report.stepTime);
  EXPECT_EQ(object->getNumber("exposed_comm_time_s"), report.exposedCommTime);
  EXPECT_EQ(object->getInteger("num_devices"), 4);
  EXPECT_EQ(object->getInteger("simulated_devices"), report.simulatedDevices);
  EXPECT_EQ(object->getString("symmetry"), report.symmetry);
  EXPECT_EQ(object->getString("hardware"), "test-torus");
  EXPECT_EQ(object->getString("topology"), "4 torus");
  EXPECT_EQ(object->getInteger("events"), report.events);

  const llvm::json::Array *ops = object->getArray("ops");
  ASSERT_TRUE(ops);
  ASSERT_EQ(ops->size(), 3u);
  const llvm::json::Object *done = (*ops)[2].getAsObject();
  ASSERT_TRUE(done);
  EXPECT_EQ(done->getString("label"), "done");
  EXPECT_EQ(done->getInteger("count"), 3);
  EXPECT_TRUE(done->getNumber("compute_time_s"));
  EXPECT_EQ(done->getNumber("exposed_comm_time_s"),
            report.ops[2].exposedSeconds);
}

TEST(SimulatorTest, PrintReportHasUnits) {
  SimReport report = loopedEinsum(4e-3, 64).mustRun();
  std::string text;
  llvm::raw_string_ostream os(text);
  printReport(report, os);
  EXPECT_NE(text.find("step time"), std::string::npos) << text;
  EXPECT_NE(text.find(" s\n"), std::string::npos) << text;
  EXPECT_NE(text.find(" ms"), std::string::npos) << text;
  EXPECT_NE(text.find("GFLOP/s"), std::string::npos) << text;
  EXPECT_NE(text.find("%"), std::string::npos) << text;
  EXPECT_NE(text.find("einsum"), std::string::npos) << text;
}

TEST(SimulatorTest, TraceIsValidJSONWithTheExpectedTracks) {
  Bench setup = loopedEinsum(4, 64);
  std::string text;
  llvm::raw_string_ostream os(text);
  SimOptions options;
  options.trace = &os;
  SimReport report = setup.mustRun(options);
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(text);
  ASSERT_TRUE(static_cast<bool>(parsed)) << errorOf(std::move(parsed));
  const llvm::json::Array *events =
      parsed->getAsObject()->getArray("traceEvents");
  ASSERT_TRUE(events);

  int computeSpans = 0, waitSpans = 0, commSpans = 0, linkSpans = 0;
  double waited = 0;
  std::vector<std::string> processes, linkThreads;
  for (const llvm::json::Value &value : *events) {
    const llvm::json::Object *event = value.getAsObject();
    ASSERT_TRUE(event);
    llvm::StringRef phase = *event->getString("ph");
    int64_t pid = *event->getInteger("pid");
    if (phase == "M") {
      llvm::StringRef name = *event->getObject("args")->getString("name");
      if (*event->getString("name") == "process_name")
        processes.push_back(name.str());
      else if (pid == 4)
        linkThreads.push_back(name.str());
      continue;
    }
    ASSERT_EQ(phase, "X");
    ASSERT_TRUE(event->getNumber("ts"));
    ASSERT_TRUE(event->getNumber("dur"));
    int64_t tid = *event->getInteger("tid");
    if (pid == 4) {
      ++linkSpans;
    } else if (tid == 0) {
      ++computeSpans;
      EXPECT_EQ(*event->getString("name"), "einsum");
    } else if (tid >= 2) {
      ++commSpans;
      EXPECT_EQ(*event->getString("cat"), "permute");
    } else {
      ASSERT_EQ(tid, 1);
      ++waitSpans;
      if (pid == report.criticalDevice)
        waited += *event->getNumber("dur") / 1e6;
    }
  }
  EXPECT_EQ(processes,
            std::vector<std::string>(
                {"device 0", "device 1", "device 2", "device 3", "links"}));
  // Every device sends over its own x+ link, three times.
  EXPECT_EQ(linkThreads,
            std::vector<std::string>({"(0) x+", "(1) x+", "(2) x+", "(3) x+"}));
  EXPECT_EQ(linkSpans, 4 * 3);
  EXPECT_EQ(computeSpans, 4 * 4);
  EXPECT_EQ(waitSpans, 4 * 3);
  // Each send in flight on its device's track.
  EXPECT_EQ(commSpans, 4 * 3);
  expectClose(waited, report.exposedCommTime);
}

TEST(SimulatorTest, TraceOfSomeDevices) {
  // Devices 1 and 3 of 4: their processes, the links that leave or enter
  // them, the same report; the note names what was left out.
  Bench setup = loopedEinsum(4, 64);
  std::string text;
  llvm::raw_string_ostream os(text);
  SimOptions options;
  options.trace = &os;
  options.traceDevices = {1, 3};
  SimReport report = setup.mustRun(options);
  expectClose(report.stepTime, setup.mustRun().stepTime);
  EXPECT_EQ(report.traceNote, "the trace shows devices 1,3 of 4 and their 4 "
                              "links that carried data");
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(text);
  ASSERT_TRUE(static_cast<bool>(parsed)) << errorOf(std::move(parsed));
  std::vector<std::string> processes, linkThreads;
  for (const llvm::json::Value &value :
       *parsed->getAsObject()->getArray("traceEvents")) {
    const llvm::json::Object *event = value.getAsObject();
    if (*event->getString("ph") != "M")
      continue;
    llvm::StringRef name = *event->getObject("args")->getString("name");
    if (*event->getString("name") == "process_name")
      processes.push_back(name.str());
    else if (*event->getInteger("pid") == 4)
      linkThreads.push_back(name.str());
  }
  EXPECT_EQ(processes,
            std::vector<std::string>({"device 1", "device 3", "links"}));
  // The x+ links out of 1 and 3 and into them, from 0 and 2.
  EXPECT_EQ(linkThreads,
            std::vector<std::string>({"(0) x+", "(1) x+", "(2) x+", "(3) x+"}));
}

TEST(SimulatorTest, TraceRefusesBadDevicesAndBounds) {
  Bench setup = loopedEinsum(4, 64);
  std::string text;
  llvm::raw_string_ostream os(text);
  SimOptions options;
  options.trace = &os;
  for (std::vector<int64_t> devices :
       {std::vector<int64_t>{4}, {-1}, {2, 1}, {1, 1}}) {
    options.traceDevices = devices;
    llvm::Expected<SimReport> report = setup.run(options);
    ASSERT_FALSE(static_cast<bool>(report));
    EXPECT_NE(errorOf(std::move(report)).find("is not one of the 4 devices"),
              std::string::npos);
  }
  options.traceDevices = {};
  options.traceMaxSpans = -1;
  llvm::Expected<SimReport> report = setup.run(options);
  ASSERT_FALSE(static_cast<bool>(report));
  EXPECT_NE(errorOf(std::move(report)).find("negative bound"),
            std::string::npos);
}

TEST(SimulatorTest, TraceShowsAsyncCollectives) {
  // The rounds on the links, the compute beside them, the wait at the done.
  SimOptions options;
  std::string text;
  llvm::raw_string_ostream os(text);
  options.trace = &os;
  SimReport report = asyncAllGather(10).mustRun(options);
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(text);
  ASSERT_TRUE(static_cast<bool>(parsed)) << errorOf(std::move(parsed));
  int computeSpans = 0, collectiveSpans = 0, linkSpans = 0;
  double waited = 0;
  for (const llvm::json::Value &value :
       *parsed->getAsObject()->getArray("traceEvents")) {
    const llvm::json::Object *event = value.getAsObject();
    if (*event->getString("ph") != "X")
      continue;
    int64_t pid = *event->getInteger("pid");
    if (pid == 4) {
      ++linkSpans;
      expectClose(*event->getNumber("dur") / 1e6, 64 / kB);
    } else if (*event->getInteger("tid") == 0) {
      ++computeSpans;
      EXPECT_EQ(*event->getNumber("ts"), 0);
    } else if (*event->getInteger("tid") >= 2) {
      // From the launch to the device's part done, on its in-flight track.
      ++collectiveSpans;
      EXPECT_EQ(*event->getString("cat"), "collective");
      EXPECT_EQ(*event->getNumber("ts"), 0);
      expectClose(*event->getNumber("dur") / 1e6, kRingAllGather);
    } else if (pid == report.criticalDevice) {
      EXPECT_EQ(*event->getString("name"), "done");
      waited += *event->getNumber("dur") / 1e6;
    }
  }
  // Three rounds, each device sending once a round.
  EXPECT_EQ(linkSpans, 4 * 3);
  EXPECT_EQ(computeSpans, 4);
  EXPECT_EQ(collectiveSpans, 4);
  expectClose(waited, kRingAllGather - 10);
}

} // namespace
