//===- AsyncCollectivesTest.cpp - Asynchronous collectives ----------------===//
//
// allGatherStart, reduceScatterStart and allReduceStart with collectiveDone
// on the threads world: bit-identical to the blocking forms for several
// element types, groups (sub-groups of a 2x2 and a 2x4 grid among them),
// reductions and strided views; several in flight on one and on different
// groups, with permutes and blocking calls in between, done in another
// order than started; starts matched with other members' blocking calls;
// link emulation (the transfer starts at the start, so computation before
// the done hides it); misuse as death tests; and the C entry points.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include "ovlrt/CInterface.h"
#include "ovlrt/LinkEmulation.h"

#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <thread>
#include <type_traits>

using namespace ovlrt;
using namespace ovlrt::test;
using testing::ExitedWithCode;

namespace {

struct GroupCase {
  std::vector<int64_t> gridShape, axes;
};

const GroupCase kGroups[] = {
    {{2}, {0}},    {{3}, {0}},       {{4}, {0}},
    {{2, 2}, {0}}, {{2, 2}, {1}},    {{2, 2}, {1, 0}},
    {{2, 4}, {1}}, {{2, 4}, {0, 1}}, {{2, 2}, {}},
};

const Reduction kReductions[] = {Reduction::Sum, Reduction::Prod,
                                 Reduction::Max, Reduction::Min};

/// Varied values, exact in every tested type after its own rounding: for
/// floating point, magnitudes from 2^-12 to 2^12 of both signs, so that
/// any change in the order of combination would show in the bits (and
/// products of 8 stay finite); for integers, -100..100 (products wrap).
template <typename T> double testValue(int64_t device, int64_t element) {
  int64_t mix = device * 131 + element * 71;
  if (std::is_integral_v<T>)
    return static_cast<double>(mix % 201 - 100);
  double mantissa = 1 + static_cast<double>(mix % 97) / 97;
  int exponent = static_cast<int>((device * 17 + element * 13) % 25) - 12;
  return (mix % 2 ? -1 : 1) * std::ldexp(mantissa, exponent);
}

/// Expects `actual` to hold the same bits as `expected` in every element,
/// and its border (if a window) to be untouched.
template <typename T>
void expectBitIdentical(TestTensor<T> &actual, TestTensor<T> &expected,
                        const std::string &what) {
  int mismatches = 0;
  forEachIndex(actual.sizes, [&](const std::vector<int64_t> &index) {
    if (std::memcmp(&actual.at(index), &expected.at(index), sizeof(T)) != 0 &&
        mismatches++ < 5)
      ADD_FAILURE() << what << ": element " << formatList(index) << " is "
                    << asDouble(actual.at(index)) << ", blocking gave "
                    << asDouble(expected.at(index));
  });
  actual.expect([&](auto &index) { return asDouble(expected.at(index)); },
                what);
}

enum class Kind { AllGather, ReduceScatter, AllReduce };

/// Runs one collective blocking and asynchronously on every device of the
/// group case's grid and compares the two outputs bit for bit.
template <typename T>
void compareWithBlocking(const GroupCase &groupCase, Kind kind,
                         Reduction reduction, int64_t dim) {
  runWorld(product(groupCase.gridShape), [&](Device &device) {
    Group group{groupCase.gridShape, groupCase.axes};
    int64_t n = static_cast<int64_t>(
        expectedGroup(group.gridShape, group.axes, device.id()).members.size());
    std::vector<int64_t> shard{2, 3}, whole = shard;
    whole[dim] *= n;
    std::vector<int64_t> inSizes = kind == Kind::ReduceScatter ? whole : shard;
    std::vector<int64_t> outSizes = kind == Kind::AllGather ? whole : shard;
    TestTensor<T> in(inSizes, Layout::TransposedWindow);
    in.fill([&](auto &index) {
      return testValue<T>(device.id(), linearIndex(inSizes, index));
    });
    TestTensor<T> blocking(outSizes, Layout::Window),
        async(outSizes, Layout::Window);
    Request request;
    switch (kind) {
    case Kind::AllGather:
      device.allGather(in.view(), blocking.view(), group, dim);
      request = device.allGatherStart(in.view(), async.view(), group, dim);
      break;
    case Kind::ReduceScatter:
      device.reduceScatter(in.view(), blocking.view(), group, dim, reduction);
      request = device.reduceScatterStart(in.view(), async.view(), group, dim,
                                          reduction);
      break;
    case Kind::AllReduce:
      device.allReduce(in.view(), blocking.view(), group, reduction);
      request =
          device.allReduceStart(in.view(), async.view(), group, reduction);
      break;
    }
    EXPECT_EQ(device.numInFlight(), 1);
    device.collectiveDone(request);
    EXPECT_EQ(device.numInFlight(), 0);
    expectBitIdentical(async, blocking,
                       "device " + std::to_string(device.id()));
  });
}

template <typename T> class AsyncEqualsBlockingTest : public testing::Test {};
using AsyncTypes =
    testing::Types<float, double, BF16, int8_t, int32_t, int64_t>;
TYPED_TEST_SUITE(AsyncEqualsBlockingTest, AsyncTypes);

TYPED_TEST(AsyncEqualsBlockingTest, AllGather) {
  for (const GroupCase &groupCase : kGroups)
    for (int64_t dim : {0, 1}) {
      SCOPED_TRACE("axes " + formatList(groupCase.axes) + " of grid " +
                   formatList(groupCase.gridShape) + ", dim " +
                   std::to_string(dim));
      compareWithBlocking<TypeParam>(groupCase, Kind::AllGather, Reduction::Sum,
                                     dim);
    }
}

TYPED_TEST(AsyncEqualsBlockingTest, ReduceScatter) {
  int64_t variant = 0;
  for (const GroupCase &groupCase : kGroups)
    for (Reduction reduction : kReductions) {
      int64_t dim = variant++ % 2;
      SCOPED_TRACE(std::string(reductionName(reduction)) + " over axes " +
                   formatList(groupCase.axes) + " of grid " +
                   formatList(groupCase.gridShape) + ", dim " +
                   std::to_string(dim));
      compareWithBlocking<TypeParam>(groupCase, Kind::ReduceScatter, reduction,
                                     dim);
    }
}

TYPED_TEST(AsyncEqualsBlockingTest, AllReduce) {
  for (const GroupCase &groupCase : kGroups)
    for (Reduction reduction : kReductions) {
      SCOPED_TRACE(std::string(reductionName(reduction)) + " over axes " +
                   formatList(groupCase.axes) + " of grid " +
                   formatList(groupCase.gridShape));
      compareWithBlocking<TypeParam>(groupCase, Kind::AllReduce, reduction, 0);
    }
}

//===----------------------------------------------------------------------===//
// Several in flight
//===----------------------------------------------------------------------===//

/// The payload device `device` holds: distinct per device and element.
double payload(int64_t device, int64_t element) {
  return 1000.0 * static_cast<double>(device) + static_cast<double>(element);
}

/// Burns CPU time: computation between a start and its done.
double compute(int64_t iterations) {
  volatile double acc = 0;
  for (int64_t i = 0; i < iterations; ++i)
    acc = acc + 1e-9 * static_cast<double>(i);
  return acc;
}

TEST(AsyncCollectivesTest, ManyInFlightWithPermutesDoneInAnyOrder) {
  // On a 2x2 grid: rows (axis 1), columns (axis 0) and the whole grid.
  runWorld(4, [](Device &device) {
    Group rows{{2, 2}, {1}}, columns{{2, 2}, {0}}, all{{2, 2}, {0, 1}};
    ExpectedGroup row = expectedGroup(rows.gridShape, rows.axes, device.id());
    ExpectedGroup column =
        expectedGroup(columns.gridShape, columns.axes, device.id());
    std::vector<int64_t> swap = shiftPairs(2, 1);
    TestTensor<int64_t> x({3}), gathered({6}, Layout::Window);
    TestTensor<int64_t> x2({2, 2}), gathered2({2, 4}, Layout::Window);
    TestTensor<int64_t> swapped({3});
    TestTensor<int64_t> y({8}), scattered({2}, Layout::Window);
    TestTensor<int64_t> z({3}, Layout::Window);
    TestTensor<int64_t> one({1}), columnSum({1});
    x.fill([&](auto &i) { return payload(device.id(), i[0]); });
    x2.fill([&](auto &i) { return payload(device.id(), 10 * i[0] + i[1]); });
    y.fill([&](auto &i) { return payload(device.id(), i[0]); });
    z.fill([&](auto &i) { return payload(device.id(), i[0]); });
    one.at({0}) = device.id();

    Request a = device.allGatherStart(x.view(), gathered.view(), rows, 0);
    Request p =
        device.permuteStart(x.view(), swapped.view(), columns, pairsOf(swap));
    compute(1000);
    // A blocking call of another group while both are in flight.
    device.allReduce(one.view(), columnSum.view(), columns, Reduction::Sum);
    Request b = device.reduceScatterStart(y.view(), scattered.view(), all, 0,
                                          Reduction::Sum);
    // In place: `out` aliases `in`.
    Request c = device.allReduceStart(z.view(), z.view(), rows, Reduction::Max);
    // A second all-gather on the rows while the first is in flight.
    Request d = device.allGatherStart(x2.view(), gathered2.view(), rows, 1);
    EXPECT_EQ(device.numInFlight(), 5);
    compute(100000);
    if (device.id() % 2 == 0) {
      device.collectiveDone(d);
      device.collectiveDone(c);
      device.permuteDone(p);
      device.collectiveDone(b);
      device.collectiveDone(a);
    } else {
      // collectiveDone also completes a permute.
      device.collectiveDone(a);
      device.collectiveDone(b);
      device.collectiveDone(p);
      device.collectiveDone(c);
      device.collectiveDone(d);
    }
    EXPECT_EQ(device.numInFlight(), 0);

    gathered.expect(
        [&](auto &i) { return payload(row.members[i[0] / 3], i[0] % 3); },
        "all-gather of the rows");
    gathered2.expect(
        [&](auto &i) {
          return payload(row.members[i[1] / 2], 10 * i[0] + i[1] % 2);
        },
        "second all-gather of the rows");
    swapped.expect(
        [&](auto &i) {
          return payload(column.members[1 - column.index], i[0]);
        },
        "permute of the columns");
    scattered.expect(
        [&](auto &i) {
          double sum = 0;
          for (int64_t member = 0; member < 4; ++member)
            sum += payload(member, 2 * device.id() + i[0]);
          return sum;
        },
        "reduce-scatter of the grid");
    // Payloads grow with the device id: the row's maximum is its last.
    z.expect([&](auto &i) { return payload(row.members[1], i[0]); },
             "in-place all-reduce of the rows");
    EXPECT_EQ(columnSum.at({0}), column.members[0] + column.members[1]);
  });
}

TEST(AsyncCollectivesTest, StartsMatchOtherMembersBlockingCalls) {
  // Even devices start, odd ones call the blocking forms at the same
  // points: a start takes its step like a blocking call there.
  runWorld(4, [](Device &device) {
    Group group{{4}, {0}};
    std::vector<int64_t> ring = shiftPairs(4, 1);
    TestTensor<float> in({2}), gathered({8}), shifted({2}), sum({2});
    in.fill([&](auto &i) { return payload(device.id(), i[0]); });
    if (device.id() % 2 == 0) {
      Request gather =
          device.allGatherStart(in.view(), gathered.view(), group, 0);
      Request permute =
          device.permuteStart(in.view(), shifted.view(), group, pairsOf(ring));
      Request reduce =
          device.allReduceStart(in.view(), sum.view(), group, Reduction::Sum);
      device.collectiveDone(reduce);
      device.permuteDone(permute);
      device.collectiveDone(gather);
    } else {
      device.allGather(in.view(), gathered.view(), group, 0);
      device.permute(in.view(), shifted.view(), group, pairsOf(ring));
      device.allReduce(in.view(), sum.view(), group, Reduction::Sum);
    }
    gathered.expect([](auto &i) { return payload(i[0] / 2, i[0] % 2); },
                    "all-gather");
    shifted.expect(
        [&](auto &i) { return payload((device.id() + 3) % 4, i[0]); },
        "permute");
    sum.expect(
        [](auto &i) {
          return payload(0, i[0]) + payload(1, i[0]) + payload(2, i[0]) +
                 payload(3, i[0]);
        },
        "all-reduce");
  });
}

TEST(AsyncCollectivesTest, TheInputIsPackedAtTheStart) {
  // The contract forbids modifying `in` before the done; the threads
  // transport copies it at the start anyway, so that a peer reading late
  // never sees the next iteration's data. A slow peer makes that visible.
  runWorld(2, [](Device &device) {
    TestTensor<int32_t> in({4}), out({8});
    in.fill([&](auto &i) { return payload(device.id(), i[0]); });
    Request request =
        device.allGatherStart(in.view(), out.view(), {{2}, {0}}, 0);
    if (device.id() == 1)
      std::this_thread::sleep_for(std::chrono::milliseconds(30));
    device.collectiveDone(request);
    out.expect([](auto &i) { return payload(i[0] / 4, i[0] % 4); }, "gathered");
  });
}

//===----------------------------------------------------------------------===//
// Link emulation
//===----------------------------------------------------------------------===//

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

TEST(AsyncLinkEmulationTest, DoneWaitsForTheRingTime) {
  // As LinkEmulationTest.CollectivesTakeTheirRingTime, asynchronously: 4
  // shards of 1 MB at 1 GB/s and 100 us take 3 * 1.1 ms to all-gather or
  // reduce-scatter, and twice that to all-reduce.
  constexpr int64_t kElements = 250'000;
  ThreadsWorld(emulating(4, 1, 100)).run([&](Device &device) {
    Group group{{4}, {0}};
    TestTensor<float> shard({kElements}), whole({4 * kElements});
    Clock::time_point start = Clock::now();
    device.collectiveDone(
        device.allGatherStart(shard.view(), whole.view(), group, 0));
    EXPECT_GE(secondsSince(start), 3 * 1.1e-3) << "all-gather";
    start = Clock::now();
    device.collectiveDone(device.reduceScatterStart(whole.view(), shard.view(),
                                                    group, 0, Reduction::Sum));
    EXPECT_GE(secondsSince(start), 3 * 1.1e-3) << "reduce-scatter";
    start = Clock::now();
    device.collectiveDone(device.allReduceStart(whole.view(), whole.view(),
                                                group, Reduction::Sum));
    EXPECT_GE(secondsSince(start), 6 * 1.1e-3) << "all-reduce";
  });
}

TEST(AsyncLinkEmulationTest, ComputationBetweenStartAndDoneHidesTheTransfer) {
  // An all-gather of 4 shards of 1 MB over links of 10 MB/s without
  // latency: 3 * 100 ms on the wire. Computing (sleeping) that long between
  // start and done takes about as long as the transfer alone; after a
  // blocking all-gather it takes the sum. The bounds are generous (a loaded
  // machine is slower, never faster): the overlapped run must save at least
  // half of the transfer.
  constexpr int64_t kElements = 250'000;
  const double transfer = 3 * 4.0 * kElements / 1e7, work = transfer;
  ThreadsWorld(emulating(4, 0.01, 0)).run([&](Device &device) {
    Group group{{4}, {0}};
    TestTensor<float> shard({kElements}), whole({4 * kElements});
    TestTensor<float> one({1});
    auto sleepForWork = [&] {
      std::this_thread::sleep_for(std::chrono::duration<double>(work));
    };
    // Start together (a scalar takes microseconds on these links).
    device.allReduce(one.view(), one.view(), group, Reduction::Sum);

    Clock::time_point start = Clock::now();
    Request request =
        device.allGatherStart(shard.view(), whole.view(), group, 0);
    EXPECT_LT(secondsSince(start), transfer / 2) << "the start waited";
    sleepForWork();
    device.collectiveDone(request);
    double overlapped = secondsSince(start);
    EXPECT_GE(overlapped, transfer);
    EXPECT_GE(overlapped, work);
    EXPECT_LT(overlapped, work + transfer / 2)
        << "the transfer did not overlap the work";

    device.allReduce(one.view(), one.view(), group, Reduction::Sum);
    start = Clock::now();
    device.allGather(shard.view(), whole.view(), group, 0);
    sleepForWork();
    EXPECT_GE(secondsSince(start), work + transfer) << "blocking";
  });
}

//===----------------------------------------------------------------------===//
// Misuse
//===----------------------------------------------------------------------===//

class AsyncCollectivesDeathTest : public testing::Test {
protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

const ExitedWithCode kFatal(kFatalExitCode);

void sleepSeconds(double seconds) {
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

/// An all-gather start of `inSizes` along dim 0 over the whole world.
Request gatherStart(Device &device, TestTensor<float> &in,
                    TestTensor<float> &out,
                    const char *location = "prog.mlir:3:1") {
  return device.allGatherStart(in.view(), out.view(),
                               {{device.numDevices()}, {0}}, 0,
                               {"ovl.all_gather_start", location});
}

TEST_F(AsyncCollectivesDeathTest, DoneTwice) {
  EXPECT_EXIT(runWorld(2,
                       [](Device &device) {
                         TestTensor<float> in({2}), out({4});
                         Request request = gatherStart(device, in, out);
                         device.collectiveDone(request);
                         device.collectiveDone(request,
                                               {nullptr, "prog.mlir:4:1"});
                       }),
              kFatal,
              "device [01]: ovl\\.collective_done at prog\\.mlir:4:1: request "
              "1 is not in flight on this device: it has already completed");
}

TEST_F(AsyncCollectivesDeathTest, DoneOfAnUnknownRequest) {
  EXPECT_EXIT(runWorld(1,
                       [](Device &device) {
                         device.collectiveDone(Request{42},
                                               {nullptr, "prog.mlir:8:1"});
                       }),
              kFatal,
              "device 0: ovl\\.collective_done at prog\\.mlir:8:1: request 42 "
              "is not in flight on this device: no start returned it");
}

TEST_F(AsyncCollectivesDeathTest, PermuteDoneOfACollective) {
  EXPECT_EXIT(runWorld(2,
                       [](Device &device) {
                         TestTensor<float> in({2}), out({4});
                         device.permuteDone(gatherStart(device, in, out));
                       }),
              kFatal,
              "device [01]: ovl\\.collective_permute_done: request 1 was "
              "returned by ovl\\.all_gather_start at prog\\.mlir:3:1, not by "
              "a permute start: a collective done completes it");
}

TEST_F(AsyncCollectivesDeathTest, ProgramEndsWithACollectiveInFlight) {
  EXPECT_EXIT(runWorld(2,
                       [](Device &device) {
                         TestTensor<float> in({4}), out({2});
                         device.reduceScatterStart(
                             in.view(), out.view(), {{2}, {0}}, 0,
                             Reduction::Sum,
                             {"ovl.reduce_scatter_start", "prog.mlir:3:1"});
                       }),
              kFatal,
              "ovlrt: error: device [01]: the program ended with 1 "
              "collective\\(s\\) started and never done: "
              "ovl\\.reduce_scatter_start at prog\\.mlir:3:1 \\(request 1\\)");
}

TEST_F(AsyncCollectivesDeathTest, ProgramEndsWithAPermuteAndACollective) {
  EXPECT_EXIT(
      runWorld(2,
               [](Device &device) {
                 TestTensor<float> in({2}), out({2}), x({2});
                 std::vector<int64_t> swap = shiftPairs(2, 1);
                 Request permute = device.permuteStart(
                     in.view(), out.view(), {{2}, {0}}, pairsOf(swap),
                     {"ovl.collective_permute_start", "prog.mlir:3:1"});
                 device.allReduceStart(
                     x.view(), x.view(), {{2}, {0}}, Reduction::Max,
                     {"ovl.all_reduce_start", "prog.mlir:4:1"});
                 device.permuteDone(permute);
                 device.allReduceStart(
                     x.view(), x.view(), {{2}, {0}}, Reduction::Max,
                     {"ovl.all_reduce_start", "prog.mlir:5:1"});
                 device.permuteStart(
                     in.view(), out.view(), {{2}, {0}}, pairsOf(swap),
                     {"ovl.collective_permute_start", "prog.mlir:6:1"});
               }),
      kFatal,
      "device [01]: the program ended with 1 permute\\(s\\) and 2 "
      "collective\\(s\\) started and never done: ovl\\.all_reduce_start at "
      "prog\\.mlir:4:1 \\(request 2\\), ovl\\.all_reduce_start at "
      "prog\\.mlir:5:1 \\(request 3\\), ovl\\.collective_permute_start at "
      "prog\\.mlir:6:1 \\(request 4\\)");
}

// The devices below disagree, which is reported as soon as they meet: the
// timeout only has to outlast how far the threads drift apart on a loaded
// machine, or a device would be reported missing instead.
TEST_F(AsyncCollectivesDeathTest, StartAgainstAnotherCollective) {
  EXPECT_EXIT(
      runWorld(
          2,
          [](Device &device) {
            TestTensor<float> in({4}), out({8}), part({2});
            if (device.id() == 0) {
              device.collectiveDone(gatherStart(device, in, out),
                                    {nullptr, "prog.mlir:4:1"});
            } else {
              device.reduceScatter(in.view(), part.view(), {{2}, {0}}, 0,
                                   Reduction::Sum,
                                   {"ovl.reduce_scatter", "prog.mlir:9:3"});
            }
          },
          /*timeoutSeconds=*/30),
      kFatal,
      "device [01]: ovl\\.(collective_done at prog\\.mlir:4:1|reduce_scatter "
      "at prog\\.mlir:9:3): does not match device [01] \\(group index [01]\\), "
      "which called ovl\\.(reduce_scatter|all_gather_start) at "
      "prog\\.mlir:[39]:[13] as call #0 on the group of axes \\[0\\] of grid "
      "2: the operations differ \\((ovl\\.all_gather_start here, "
      "ovl\\.reduce_scatter|ovl\\.reduce_scatter here, "
      "ovl\\.all_gather_start) there\\)");
}

TEST_F(AsyncCollectivesDeathTest, StartsOfDifferentShapes) {
  EXPECT_EXIT(runWorld(
                  2,
                  [](Device &device) {
                    int64_t size = device.id() == 0 ? 3 : 4;
                    TestTensor<float> in({2, size}), out({4, size});
                    device.collectiveDone(gatherStart(device, in, out));
                  },
                  /*timeoutSeconds=*/30),
              kFatal,
              "ovl\\.collective_done: does not match device [01] .* input "
              "shapes differ \\((2x3 here, 2x4|2x4 here, 2x3) there\\)");
}

TEST_F(AsyncCollectivesDeathTest, StartsCheckTheirArguments) {
  EXPECT_EXIT(runWorld(2,
                       [](Device &device) {
                         TestTensor<float> in({2, 3}), out({2, 5});
                         device.allGatherStart(
                             in.view(), out.view(), {{2}, {0}}, 1,
                             {"ovl.all_gather_start", "prog.mlir:2:2"});
                       }),
              kFatal,
              "device [01]: ovl\\.all_gather_start at prog\\.mlir:2:2: "
              "gathering 2x3xf32 along dim 1 over 2 devices into 2x5xf32: "
              "size 5 of dim 1 should be 6");
  EXPECT_EXIT(runWorld(2,
                       [](Device &device) {
                         TestTensor<float> in({4}), out({2});
                         device.reduceScatterStart(in.view(), out.view(),
                                                   {{2}, {0}}, 1,
                                                   Reduction::Sum);
                       }),
              kFatal,
              "ovl\\.reduce_scatter_start: scattering 4xf32 along dim 1 over "
              "2 devices into 2xf32: input dim 1 is out of range for 2xf32");
  EXPECT_EXIT(runWorld(1,
                       [](Device &device) {
                         TestTensor<float> x({2});
                         device.allReduceStart(x.view(), x.view(), {{1}, {0}},
                                               static_cast<Reduction>(9));
                       }),
              kFatal, "device 0: ovl\\.all_reduce_start: invalid reduction 9");
  EXPECT_EXIT(runWorld(2,
                       [](Device &device) {
                         TestTensor<float> x({2});
                         device.allReduceStart(x.view(), x.view(), {{4}, {0}},
                                               Reduction::Sum);
                       }),
              kFatal,
              "ovl\\.all_reduce_start: grid shape \\[4\\] has 4 devices but "
              "the world has 2");
}

TEST_F(AsyncCollectivesDeathTest, DoneTimesOutWaitingForAPeer) {
  EXPECT_EXIT(runWorld(
                  2,
                  [](Device &device) {
                    if (device.id() == 1)
                      sleepSeconds(60);
                    TestTensor<float> in({2}), out({4});
                    device.collectiveDone(gatherStart(device, in, out),
                                          {nullptr, "prog.mlir:4:1"});
                  },
                  /*timeoutSeconds=*/0.3),
              kFatal,
              "device 0: ovl\\.collective_done at prog\\.mlir:4:1: timed out "
              "after 0\\.3 s waiting for device 1 \\(group index 1\\) to "
              "reach call #0 on the group of axes \\[0\\] of grid 2");
}

TEST_F(AsyncCollectivesDeathTest, PeerWhoseProgramEndedIsReportedAtOnce) {
  // The timeout is long: the report must not wait for it.
  EXPECT_EXIT(runWorld(
                  3,
                  [](Device &device) {
                    if (device.id() == 1)
                      return;
                    TestTensor<float> in({2}), out({6});
                    device.collectiveDone(gatherStart(device, in, out));
                  },
                  /*timeoutSeconds=*/600),
              kFatal,
              "device [02]: ovl\\.collective_done: device 1 \\(group index "
              "1\\) ended its program without reaching call #0 on the group "
              "of axes \\[0\\] of grid 3");
}

//===----------------------------------------------------------------------===//
// The C entry points
//===----------------------------------------------------------------------===//

/// MLIR's descriptors, as compiled code passes them (see CInterface.h).
template <typename T> struct MemRef1D {
  T *allocated;
  T *aligned;
  int64_t offset;
  int64_t size;
  int64_t stride;
};

struct UnrankedMemRef {
  int64_t rank;
  void *descriptor;
};

/// A ranked descriptor {allocated, aligned, offset, sizes, strides} of a
/// test tensor, and the unranked memref that points to it.
class MemRef {
public:
  template <typename T> explicit MemRef(TestTensor<T> &tensor) {
    TensorView view = tensor.view();
    words.push_back(reinterpret_cast<int64_t>(view.data));
    words.push_back(reinterpret_cast<int64_t>(view.data));
    words.push_back(0);
    words.insert(words.end(), view.sizes, view.sizes + view.rank);
    words.insert(words.end(), view.strides, view.strides + view.rank);
    memref = {view.rank, words.data()};
  }
  MemRef(const MemRef &) = delete;
  MemRef &operator=(const MemRef &) = delete;

  UnrankedMemRef *get() { return &memref; }

private:
  std::vector<int64_t> words;
  UnrankedMemRef memref;
};

using StartFn = int64_t (*)(UnrankedMemRef *, UnrankedMemRef *,
                            MemRef1D<int64_t> *, MemRef1D<int8_t> *);
using BlockingFn = void (*)(UnrankedMemRef *, UnrankedMemRef *,
                            MemRef1D<int64_t> *, MemRef1D<int8_t> *);
using DoneFn = void (*)(int64_t, MemRef1D<int8_t> *);

void *findSymbol(const std::string &name) {
  for (const CSymbol &symbol : getCInterfaceSymbols())
    if (name == symbol.name)
      return symbol.address;
  ADD_FAILURE() << "no C entry point " << name;
  return nullptr;
}

TEST(AsyncCInterfaceTest, EveryTypeHasItsStarts) {
  for (const char *type :
       {"f32", "f64", "f16", "bf16", "i8", "i16", "i32", "i64"})
    for (const char *op : {"all_gather", "reduce_scatter", "all_reduce"}) {
      std::string name =
          std::string("_mlir_ciface_ovlrt_") + op + "_start_" + type;
      EXPECT_NE(findSymbol(name), nullptr) << name;
      EXPECT_NE(
          findSymbol(std::string("_mlir_ciface_ovlrt_") + op + "_" + type),
          nullptr);
    }
  EXPECT_NE(findSymbol("_mlir_ciface_ovlrt_collective_done"), nullptr);
}

/// The config array of a collective on axes [1] of a 2x2 grid (layout in
/// CInterface.h).
std::vector<int64_t> rowConfig(int64_t dim, Reduction reduction) {
  return {2, 2, 2, 1, 1, dim, static_cast<int64_t>(reduction), 0};
}

template <typename T> MemRef1D<T> memref1D(std::vector<T> &values) {
  return {values.data(), values.data(), 0, static_cast<int64_t>(values.size()),
          1};
}

TEST(AsyncCInterfaceTest, StartsAndDoneEqualTheBlockingEntryPoints) {
  runWorld(4, [](Device &device) {
    std::vector<int8_t> where = {'t', '.', 'm', 'l', 'i', 'r', ':', '1', 0};
    MemRef1D<int8_t> location = memref1D(where);
    auto done = reinterpret_cast<DoneFn>(
        findSymbol("_mlir_ciface_ovlrt_collective_done"));
    struct Case {
      const char *op;
      std::vector<int64_t> inSizes, outSizes;
      int64_t dim;
      Reduction reduction;
    };
    const Case cases[] = {
        {"all_gather", {2, 3}, {2, 6}, 1, Reduction::Sum},
        {"reduce_scatter", {4, 3}, {2, 3}, 0, Reduction::Prod},
        {"all_reduce", {2, 3}, {2, 3}, 0, Reduction::Max},
    };
    for (const Case &c : cases) {
      SCOPED_TRACE(c.op);
      TestTensor<float> in(c.inSizes, Layout::TransposedWindow);
      in.fill([&](auto &index) {
        return testValue<float>(device.id(), linearIndex(c.inSizes, index));
      });
      TestTensor<float> blocking(c.outSizes, Layout::Window),
          async(c.outSizes, Layout::Window);
      MemRef inRef(in), blockingRef(blocking), asyncRef(async);
      std::vector<int64_t> config = rowConfig(c.dim, c.reduction);
      MemRef1D<int64_t> configRef = memref1D(config);
      std::string name = std::string("_mlir_ciface_ovlrt_") + c.op;
      reinterpret_cast<BlockingFn>(findSymbol(name + "_f32"))(
          inRef.get(), blockingRef.get(), &configRef, &location);
      int64_t request =
          reinterpret_cast<StartFn>(findSymbol(name + "_start_f32"))(
              inRef.get(), asyncRef.get(), &configRef, &location);
      EXPECT_EQ(device.numInFlight(), 1);
      done(request, &location);
      EXPECT_EQ(device.numInFlight(), 0);
      expectBitIdentical(async, blocking,
                         "device " + std::to_string(device.id()));
    }
  });
}

TEST_F(AsyncCollectivesDeathTest, CDoneIsNamedAfterItsStart) {
  // The C done has no op name of its own: its errors name the start's done.
  EXPECT_EXIT(runWorld(
                  2,
                  [](Device &device) {
                    if (device.id() == 1)
                      sleepSeconds(60);
                    std::vector<int8_t> where = {'p', ':', '7', 0};
                    MemRef1D<int8_t> location = memref1D(where);
                    TestTensor<float> x({2});
                    MemRef ref(x);
                    std::vector<int64_t> config = {1, 2, 1, 0, 0, 0, 0};
                    MemRef1D<int64_t> configRef = memref1D(config);
                    int64_t request = reinterpret_cast<StartFn>(
                        findSymbol("_mlir_ciface_ovlrt_all_reduce_start_f32"))(
                        ref.get(), ref.get(), &configRef, &location);
                    reinterpret_cast<DoneFn>(
                        findSymbol("_mlir_ciface_ovlrt_collective_done"))(
                        request, &location);
                  },
                  /*timeoutSeconds=*/0.3),
              kFatal,
              "device 0: ovl\\.collective_done at p:7: timed out after 0\\.3 s "
              "waiting for device 1 \\(group index 1\\)");
}

} // namespace
