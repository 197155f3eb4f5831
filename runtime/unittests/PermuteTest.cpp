//===- PermuteTest.cpp - Permutes, blocking and asynchronous --------------===//
//
// Ring shifts on 1-D and 2-D grids, strided buffers, several asynchronous
// permutes in flight with computation in between and completed in any
// order, the double-buffered ring loop that decomposed collectives run,
// permutes interleaved with collectives of other groups, and partitionId.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <chrono>
#include <thread>

using namespace ovlrt;
using namespace ovlrt::test;

namespace {

struct PermuteCase {
  std::vector<int64_t> gridShape, axes;
  int64_t shift;
};

class RingShiftTest : public testing::TestWithParam<PermuteCase> {};

/// The payload device `device` sends: distinct per device and element.
double payload(int64_t device, int64_t element) {
  return 1000.0 * static_cast<double>(device) + static_cast<double>(element);
}

TEST_P(RingShiftTest, BlockingPermuteDeliversTheSourcesInput) {
  const PermuteCase &param = GetParam();
  runWorld(product(param.gridShape), [&](Device &device) {
    Group group{param.gridShape, param.axes};
    ExpectedGroup expected =
        expectedGroup(group.gridShape, group.axes, device.id());
    int64_t n = static_cast<int64_t>(expected.members.size());
    std::vector<int64_t> pairs = shiftPairs(n, param.shift);
    std::vector<int64_t> sizes{3, 4};
    TestTensor<float> in(sizes, Layout::TransposedWindow),
        out(sizes, Layout::Window);
    in.fill(
        [&](auto &i) { return payload(device.id(), linearIndex(sizes, i)); });
    device.permute(in.view(), out.view(), group, pairsOf(pairs),
                   {"ovl.collective_permute", "test:1:1"});
    // Pairs i -> i + shift: group index t receives from t - shift.
    int64_t source =
        expected.members[((expected.index - param.shift) % n + n) % n];
    out.expect([&](auto &i) { return payload(source, linearIndex(sizes, i)); },
               "device " + std::to_string(device.id()));
  });
}

INSTANTIATE_TEST_SUITE_P(
    Rings, RingShiftTest,
    testing::Values(PermuteCase{{2}, {0}, 1}, PermuteCase{{3}, {0}, 1},
                    PermuteCase{{4}, {0}, 1}, PermuteCase{{4}, {0}, -1},
                    PermuteCase{{8}, {0}, 1}, PermuteCase{{8}, {0}, -1},
                    PermuteCase{{8}, {0}, 3}, PermuteCase{{8}, {0}, 0},
                    PermuteCase{{2, 2}, {0}, 1}, PermuteCase{{2, 2}, {1}, 1},
                    PermuteCase{{2, 4}, {1}, 1}, PermuteCase{{2, 4}, {1}, -1},
                    PermuteCase{{2, 4}, {0}, 1}, PermuteCase{{2, 4}, {0, 1}, 1},
                    PermuteCase{{2, 4}, {1, 0}, 1},
                    PermuteCase{{2, 4}, {1, 0}, -3},
                    PermuteCase{{2, 2}, {}, 0}));

TEST(PermuteTest, SwapPairsOnFourDevices) {
  // Hand-written pairs: 0 <-> 2, 1 <-> 3.
  runWorld(4, [](Device &device) {
    std::vector<int64_t> pairs{0, 2, 2, 0, 1, 3, 3, 1};
    TestTensor<int32_t> in({2}), out({2});
    in.at({0}) = static_cast<int32_t>(10 * device.id());
    in.at({1}) = static_cast<int32_t>(10 * device.id() + 1);
    device.permute(in.view(), out.view(), {{4}, {0}}, pairsOf(pairs));
    const double expected[4] = {20, 30, 0, 10};
    out.expect(
        [&](auto &i) {
          return expected[device.id()] + static_cast<double>(i[0]);
        },
        "swap");
  });
}

/// Burns CPU time: computation between a start and its done.
double compute(int64_t iterations) {
  volatile double acc = 0;
  for (int64_t i = 0; i < iterations; ++i)
    acc = acc + 1e-9 * static_cast<double>(i);
  return acc;
}

TEST(AsyncPermuteTest, EightInFlightCompletedInAnyOrder) {
  constexpr int64_t kInFlight = 8, kDevices = 4;
  runWorld(kDevices, [&](Device &device) {
    Group group{{kDevices}, {0}};
    std::vector<int64_t> sizes{16};
    std::vector<std::unique_ptr<TestTensor<float>>> ins, outs;
    std::vector<std::vector<int64_t>> pairs;
    std::vector<Request> requests;
    for (int64_t k = 0; k < kInFlight; ++k) {
      ins.push_back(std::make_unique<TestTensor<float>>(sizes));
      outs.push_back(
          std::make_unique<TestTensor<float>>(sizes, Layout::Window));
      ins[k]->fill(
          [&](auto &i) { return payload(device.id(), 100 * k + i[0]); });
      pairs.push_back(shiftPairs(kDevices, k + 1));
      requests.push_back(device.permuteStart(ins[k]->view(), outs[k]->view(),
                                             group, pairsOf(pairs[k])));
      compute(1000);
    }
    EXPECT_EQ(device.numInFlight(), kInFlight);
    compute(100000);
    // Even devices finish newest first, odd ones oldest first.
    for (int64_t j = 0; j < kInFlight; ++j) {
      int64_t k = device.id() % 2 == 0 ? kInFlight - 1 - j : j;
      device.permuteDone(requests[k]);
      int64_t source =
          ((device.id() - (k + 1)) % kDevices + kDevices) % kDevices;
      outs[k]->expect([&](auto &i) { return payload(source, 100 * k + i[0]); },
                      "permute " + std::to_string(k));
    }
    EXPECT_EQ(device.numInFlight(), 0);
  });
}

TEST(AsyncPermuteTest, AfterDoneTheSendBufferIsFree) {
  // Device 1 is slow to reach its done; device 0 overwrites its input as
  // soon as its own done returns. Device 1 must still receive the original.
  runWorld(2, [](Device &device) {
    std::vector<int64_t> swap = shiftPairs(2, 1);
    TestTensor<int32_t> in({64}), out({64});
    in.fill([&](auto &i) { return payload(device.id(), i[0]); });
    Request request =
        device.permuteStart(in.view(), out.view(), {{2}, {0}}, pairsOf(swap));
    if (device.id() == 1)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    device.permuteDone(request);
    in.fill([](auto &) { return -1.0; });
    int64_t source = 1 - device.id();
    out.expect([&](auto &i) { return payload(source, i[0]); }, "received");
  });
}

TEST(AsyncPermuteTest, DoubleBufferedRingGathersEveryShard) {
  // The loop a decomposed all-gather runs: pass the held shard to the left
  // neighbour while working on it, N - 1 times.
  constexpr int64_t kDevices = 8, kShard = 32;
  runWorld(kDevices, [&](Device &device) {
    Group group{{2, 4}, {1, 0}};
    ExpectedGroup expected =
        expectedGroup(group.gridShape, group.axes, device.id());
    std::vector<int64_t> ring = shiftPairs(kDevices, -1);
    std::vector<int64_t> sizes{kShard};
    TestTensor<float> buffers[2] = {TestTensor<float>(sizes),
                                    TestTensor<float>(sizes)};
    buffers[0].fill([&](auto &i) { return payload(device.id(), i[0]); });
    std::vector<double> seen;
    for (int64_t step = 0; step < kDevices; ++step) {
      TestTensor<float> &held = buffers[step % 2];
      TestTensor<float> &next = buffers[(step + 1) % 2];
      Request request{};
      if (step + 1 < kDevices)
        request =
            device.permuteStart(held.view(), next.view(), group, pairsOf(ring));
      seen.push_back(held.at({0}));
      compute(20000);
      if (step + 1 < kDevices)
        device.permuteDone(request);
    }
    // At step s the device holds the shard of group index (index + s) mod N.
    for (int64_t step = 0; step < kDevices; ++step) {
      int64_t owner = expected.members[(expected.index + step) % kDevices];
      EXPECT_EQ(seen[step], payload(owner, 0)) << "step " << step;
    }
  });
}

TEST(AsyncPermuteTest, CollectivesOfOtherGroupsRunWhilePermutesAreInFlight) {
  runWorld(8, [](Device &device) {
    Group rows{{2, 4}, {1}}, columns{{2, 4}, {0}};
    ExpectedGroup row = expectedGroup(rows.gridShape, rows.axes, device.id());
    ExpectedGroup column =
        expectedGroup(columns.gridShape, columns.axes, device.id());
    std::vector<int64_t> rowRing = shiftPairs(4, 1), swap = shiftPairs(2, 1);
    TestTensor<int64_t> in({4}), fromRow({4}), fromColumn({4});
    TestTensor<int64_t> one({1}), sum({1});
    in.fill([&](auto &i) { return payload(device.id(), i[0]); });
    one.at({0}) = device.id();

    Request rowRequest =
        device.permuteStart(in.view(), fromRow.view(), rows, pairsOf(rowRing));
    device.allReduce(one.view(), sum.view(), columns, Reduction::Sum);
    Request columnRequest = device.permuteStart(in.view(), fromColumn.view(),
                                                columns, pairsOf(swap));
    // Completed in the opposite order of issue.
    device.permuteDone(columnRequest);
    device.permuteDone(rowRequest);

    int64_t rowSource = row.members[(row.index + 3) % 4];
    int64_t columnSource = column.members[(column.index + 1) % 2];
    fromRow.expect([&](auto &i) { return payload(rowSource, i[0]); }, "row");
    fromColumn.expect([&](auto &i) { return payload(columnSource, i[0]); },
                      "column");
    EXPECT_EQ(sum.at({0}), column.members[0] + column.members[1]);
  });
}

TEST(PartitionIdTest, IndexInEveryGroupOfTheTestedGrids) {
  const std::vector<std::vector<int64_t>> axesList = {
      {}, {0}, {1}, {0, 1}, {1, 0}};
  for (const std::vector<int64_t> &gridShape :
       {std::vector<int64_t>{2, 2}, std::vector<int64_t>{2, 4}}) {
    runWorld(product(gridShape), [&](Device &device) {
      for (const std::vector<int64_t> &axes : axesList)
        EXPECT_EQ(device.partitionId({gridShape, axes}),
                  expectedGroup(gridShape, axes, device.id()).index)
            << "device " << device.id() << ", axes " << formatList(axes);
    });
  }
  runWorld(3, [](Device &device) {
    EXPECT_EQ(device.partitionId({{3}, {0}}), device.id());
  });
}

TEST(CurrentDeviceTest, EachThreadSeesItsOwnDevice) {
  runWorld(4, [](Device &device) {
    EXPECT_EQ(&currentDevice(), &device);
    EXPECT_EQ(currentDevice().numDevices(), 4);
  });
}

} // namespace
