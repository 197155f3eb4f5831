//===- StepProgramTest.cpp - Step programs against closed forms -----------===//
//
// The simulator on step programs written by hand, on a made-up wrapped
// line with round figures: compute alone, a transfer hidden behind compute
// or exposed, blocking collectives at their plan's time, two transfers in
// flight at once sharing links fairly (the first to finish frees its share),
// the DMA slot limit, transfers never waited for, and transfers that move
// nothing.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/Simulator/Simulator.h"

#include "../CostModel/TestHardware.h"

#include "gtest/gtest.h"

using namespace mlir::ovl;
using namespace mlir::ovl::test;

namespace {

/// A wrapped line of `n` devices.
MachineModel line(int64_t n, unsigned dmaSlots = 4) {
  llvm::Expected<MachineModel> machine =
      buildMachineModel(testTorus(1, 0, dmaSlots), std::to_string(n), {}, {n});
  EXPECT_TRUE(static_cast<bool>(machine));
  return std::move(*machine);
}

/// The simulated step time of `program`, with `maxInFlight` transfers at
/// most (0: the hardware's dmaSlots).
double stepTime(const SimProgram &program, const MachineModel &machine,
                unsigned maxInFlight = 0) {
  SimOptions options;
  options.maxInFlight = maxInFlight;
  llvm::Expected<SimReport> report = simulate(program, machine, options);
  EXPECT_TRUE(static_cast<bool>(report));
  return report ? report->stepTime : -1;
}

struct Builder {
  SimProgram program;

  explicit Builder(int64_t n) {
    program.gridShape = {n};
    program.addLabel("op");
  }
  void compute(double seconds) {
    SimStep step;
    step.seconds = seconds;
    program.steps.push_back(step);
  }
  /// Every group index i sends `bytes` to i + shift.
  uint32_t start(double bytes, int64_t shift,
                 SimStep::Kind kind = SimStep::Kind::PermuteStart) {
    SimStep step;
    step.kind = kind;
    step.axes = {0};
    step.bytes = bytes;
    int64_t n = program.gridShape[0];
    std::vector<std::pair<int64_t, int64_t>> pairs;
    for (int64_t i = 0; i < n; ++i)
      pairs.push_back({i, ((i + shift) % n + n) % n});
    step.pairs = program.addPairs(std::move(pairs));
    program.steps.push_back(step);
    return program.steps.size() - 1;
  }
  void done(uint32_t start) {
    SimStep step;
    step.kind = SimStep::Kind::PermuteDone;
    step.start = start;
    program.steps.push_back(step);
  }
  void collective(CollectiveKind kind, double bytes) {
    SimStep step;
    step.kind = SimStep::Kind::Collective;
    step.collective = kind;
    step.axes = {0};
    step.bytes = bytes;
    program.steps.push_back(step);
  }
};

TEST(StepProgramTest, ComputeAdds) {
  Builder b(4);
  b.compute(3);
  b.compute(4.5);
  llvm::Expected<SimReport> report = simulate(b.program, line(4));
  ASSERT_TRUE(static_cast<bool>(report));
  EXPECT_DOUBLE_EQ(report->stepTime, 7.5);
  EXPECT_DOUBLE_EQ(report->computeTime, 7.5);
  EXPECT_DOUBLE_EQ(report->exposedCommTime, 0);
}

TEST(StepProgramTest, TransferHiddenOrExposed) {
  // One hop of 64 B: launch + alpha + 64 / B = 10.5 s.
  for (double compute : {4.0, 20.0}) {
    Builder b(4);
    uint32_t s = b.start(64, 1);
    b.compute(compute);
    b.done(s);
    EXPECT_DOUBLE_EQ(stepTime(b.program, line(4)),
                     std::max(compute, kLaunch + kAlpha + 64 / kB));
  }
  // A blocking permute waits for itself.
  Builder b(4);
  b.start(64, 1, SimStep::Kind::Permute);
  EXPECT_DOUBLE_EQ(stepTime(b.program, line(4)), kLaunch + kAlpha + 64 / kB);
}

TEST(StepProgramTest, BlockingCollectiveTakesItsPlan) {
  Builder b(8);
  b.collective(CollectiveKind::AllGather, 64);
  b.compute(1);
  MachineModel machine = line(8);
  EXPECT_DOUBLE_EQ(stepTime(b.program, machine),
                   machine.collectiveTime(CollectiveKind::AllGather, 64, {0},
                                          RingDirection::Bidirectional) +
                       1);
}

TEST(StepProgramTest, TransfersInFlightShareLinksFairly) {
  // Both one-hop, the same direction, on a wrapped line of 4: every link
  // carries one part of each. 64 B and 32 B started together: both stream
  // at B / 2 until the small one is through (after 8 s), then the large
  // one alone: 32 B left at B, 4 s more.
  Builder b(4);
  uint32_t large = b.start(64, 1);
  uint32_t small = b.start(32, 1);
  b.done(small);
  b.done(large);
  EXPECT_DOUBLE_EQ(stepTime(b.program, line(4)), kLaunch + kAlpha + 8 + 4);
  // Opposite directions use separate links: no sharing.
  Builder both(4);
  uint32_t left = both.start(64, -1);
  uint32_t right = both.start(64, 1);
  both.done(left);
  both.done(right);
  EXPECT_DOUBLE_EQ(stepTime(both.program, line(4)), kLaunch + kAlpha + 64 / kB);
}

TEST(StepProgramTest, LaterTransferJoinsTheLinksOfAnEarlierOne) {
  // 64 B streams alone from 2.5 s; a second 64 B starts after 2 s of
  // compute and streams from 4.5 s, when the first has 64 - 2 * 8 = 48 B
  // left. Sharing, the first is through 48 / 4 = 12 s later (16.5 s); the
  // second has 48 B done and 16 B left alone: 2 s more.
  Builder b(4);
  uint32_t first = b.start(64, 1);
  b.compute(2);
  uint32_t second = b.start(64, 1);
  b.done(first);
  b.done(second);
  EXPECT_DOUBLE_EQ(stepTime(b.program, line(4)), 18.5);
}

TEST(StepProgramTest, DmaSlotsLimitTransfersInFlight) {
  // One slot: the second start waits for the first transfer to arrive.
  Builder b(4);
  uint32_t first = b.start(64, 1);
  uint32_t second = b.start(64, -1);
  b.done(first);
  b.done(second);
  double one = kLaunch + kAlpha + 64 / kB;
  EXPECT_DOUBLE_EQ(stepTime(b.program, line(4), 1), 2 * one);
  EXPECT_DOUBLE_EQ(stepTime(b.program, line(4, 1)), 2 * one);
  EXPECT_DOUBLE_EQ(stepTime(b.program, line(4), 2), one);
}

TEST(StepProgramTest, TransfersNeverWaitedForEndWithTheProgram) {
  // The device is through when its last step is: a transfer it never waits
  // for is communication in flight until then, not a wait.
  Builder b(4);
  b.start(64, 1);
  b.compute(1);
  llvm::Expected<SimReport> report = simulate(b.program, line(4));
  ASSERT_TRUE(static_cast<bool>(report));
  EXPECT_DOUBLE_EQ(report->stepTime, 1);
  EXPECT_DOUBLE_EQ(report->commTime, 1);
  EXPECT_DOUBLE_EQ(report->exposedCommTime, 0);
}

TEST(StepProgramTest, TransferThatMovesNothingIsFree) {
  Builder b(4);
  uint32_t s = b.start(64, 0);
  b.done(s);
  b.compute(1);
  EXPECT_DOUBLE_EQ(stepTime(b.program, line(4)), 1);
}

} // namespace
