//===- LinkEmulationTest.cpp - Emulated interconnect timing ---------------===//
//
// The closed-form times, the sharing of a directed link, and lower bounds
// on the wall-clock time of permutes and collectives in an emulating world.
// Only lower bounds are checked: a loaded machine may always be slower.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include "ovlrt/LinkEmulation.h"

using namespace ovlrt;
using namespace ovlrt::test;
using std::chrono::microseconds;

namespace {

TEST(LinkModelTest, ClosedForms) {
  LinkModel model(/*bandwidthGBps=*/2, /*latencyUs=*/10);
  EXPECT_EQ(model.wireTime(2'000'000), microseconds(1000));
  EXPECT_EQ(model.transferTime(2'000'000), microseconds(1010));
  // A ring all-gather of 4 shards of 2 KB: 3 * (10 us + 1 us).
  EXPECT_EQ(model.collectiveTime(CallKind::AllGather, 4, 2000),
            microseconds(33));
  EXPECT_EQ(model.collectiveTime(CallKind::ReduceScatter, 4, 2000),
            microseconds(33));
  // An all-reduce of 8 KB over 4: reduce-scatter and all-gather of 2 KB.
  EXPECT_EQ(model.collectiveTime(CallKind::AllReduce, 4, 8000),
            microseconds(66));
  EXPECT_EQ(model.collectiveTime(CallKind::AllGather, 1, 2000),
            microseconds(0));
  LinkModel off(0, 10);
  EXPECT_FALSE(off.enabled());
  EXPECT_EQ(off.transferTime(1 << 20), microseconds(0));
}

TEST(LinkScheduleTest, TransfersOnOneLinkTakeTurns) {
  LinkSchedule links(LinkModel(/*bandwidthGBps=*/1, /*latencyUs=*/5));
  Clock::time_point start = Clock::now();
  // 1000 bytes at 1 GB/s: 1 us on the wire, 6 us in all.
  EXPECT_EQ(links.book(0, 1, 1000, start) - start, microseconds(6));
  EXPECT_EQ(links.book(0, 1, 1000, start) - start, microseconds(7));
  // The opposite direction and another pair have links of their own.
  EXPECT_EQ(links.book(1, 0, 1000, start) - start, microseconds(6));
  EXPECT_EQ(links.book(2, 1, 1000, start) - start, microseconds(6));
  // A device's data for itself does not travel.
  EXPECT_EQ(links.book(3, 3, 1000, start) - start, microseconds(0));
}

WorldOptions emulating(int64_t devices, double bandwidthGBps,
                       double latencyUs) {
  WorldOptions options;
  options.numDevices = devices;
  options.linkBandwidthGBps = bandwidthGBps;
  options.linkLatencyUs = latencyUs;
  return options;
}

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

TEST(LinkEmulationTest, PermuteTakesAtLeastWireTimeAndLatency) {
  // 1 MiB of f32 at 1 GB/s: 4.19 ms, plus 2 ms latency.
  constexpr int64_t kElements = 1 << 20;
  const double expected = 4.0 * kElements / 1e9 + 2e-3;
  ThreadsWorld(emulating(4, 1, 2000)).run([&](Device &device) {
    TestTensor<float> in({kElements}), out({kElements});
    std::vector<int64_t> ring = shiftPairs(4, 1);
    Clock::time_point start = Clock::now();
    device.permute(in.view(), out.view(), {{4}, {0}}, pairsOf(ring));
    EXPECT_GE(secondsSince(start), expected) << "device " << device.id();
  });
}

TEST(LinkEmulationTest, AsyncPermutesOnOneLinkShareIt) {
  // Two permutes to the same neighbour: their wire times add up.
  constexpr int64_t kElements = 1 << 18;
  const double wire = 4.0 * kElements / 1e9, latency = 1e-3;
  ThreadsWorld(emulating(2, 1, 1000)).run([&](Device &device) {
    TestTensor<float> in({kElements}), out1({kElements}), out2({kElements});
    std::vector<int64_t> swap = shiftPairs(2, 1);
    Clock::time_point start = Clock::now();
    Request first =
        device.permuteStart(in.view(), out1.view(), {{2}, {0}}, pairsOf(swap));
    Request second =
        device.permuteStart(in.view(), out2.view(), {{2}, {0}}, pairsOf(swap));
    device.permuteDone(first);
    EXPECT_GE(secondsSince(start), wire + latency);
    device.permuteDone(second);
    EXPECT_GE(secondsSince(start), 2 * wire + latency);
  });
}

TEST(LinkEmulationTest, CollectivesTakeTheirRingTime) {
  // All-gather of 4 shards of 1 MB at 1 GB/s and 100 us: 3 * 1.1 ms.
  constexpr int64_t kElements = 250'000;
  ThreadsWorld(emulating(4, 1, 100)).run([&](Device &device) {
    TestTensor<float> in({kElements}), out({4 * kElements});
    Clock::time_point start = Clock::now();
    device.allGather(in.view(), out.view(), {{4}, {0}}, 0);
    EXPECT_GE(secondsSince(start), 3 * 1.1e-3);
    start = Clock::now();
    device.allReduce(out.view(), out.view(), {{4}, {0}}, Reduction::Sum);
    // Reduce-scatter then all-gather of 1 MB shards: 6 * 1.1 ms.
    EXPECT_GE(secondsSince(start), 6 * 1.1e-3);
  });
}

} // namespace
