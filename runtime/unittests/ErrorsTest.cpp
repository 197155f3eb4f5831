//===- ErrorsTest.cpp - Every misuse ends the process with a message ------===//
//
// Death tests for the errors the runtime must report instead of hanging or
// computing garbage: peers that disagree about a collective, malformed
// permutations, missing peers (by timeout, or because their program ended),
// misuse of asynchronous permutes, bad arguments, and the replaceable fatal
// handler. Each test asserts the exit code and the message.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

using namespace ovlrt;
using namespace ovlrt::test;
using testing::ExitedWithCode;

namespace {

class ErrorsDeathTest : public testing::Test {
protected:
  void SetUp() override {
    // The worlds start threads; re-executing the test binary for each death
    // test is the safe way to fork then.
    GTEST_FLAG_SET(death_test_style, "threadsafe");
  }
};

const ExitedWithCode kFatal(kFatalExitCode);

/// Runs a world whose device 0 does `first` and whose other devices do
/// `second`. They disagree, which is reported as soon as they meet: the
/// timeout only has to outlast how far the threads drift apart on a loaded
/// machine, or a device would be reported missing instead.
void runSplit(int64_t devices, const std::function<void(Device &)> &first,
              const std::function<void(Device &)> &second) {
  runWorld(
      devices,
      [&](Device &device) {
        device.id() == 0 ? first(device) : second(device);
      },
      /*timeoutSeconds=*/30);
}

void allGatherOf(Device &device, std::vector<int64_t> inSizes, int64_t dim,
                 const char *location = "prog.mlir:5:3") {
  std::vector<int64_t> outSizes = inSizes;
  outSizes[dim] *= device.numDevices();
  TestTensor<float> in(inSizes), out(outSizes);
  device.allGather(in.view(), out.view(), {{device.numDevices()}, {0}}, dim,
                   {"ovl.all_gather", location});
}

void reduceScatterOf(Device &device, Reduction reduction) {
  TestTensor<float> in({4}), out({2});
  device.reduceScatter(in.view(), out.view(), {{2}, {0}}, 0, reduction,
                       {"ovl.reduce_scatter", "prog.mlir:9:3"});
}

//===----------------------------------------------------------------------===//
// Peers that disagree
//===----------------------------------------------------------------------===//

TEST_F(ErrorsDeathTest, DifferentCollectivesAtTheSameStep) {
  EXPECT_EXIT(runSplit(
                  2, [](Device &d) { allGatherOf(d, {2}, 0); },
                  [](Device &d) { reduceScatterOf(d, Reduction::Sum); }),
              kFatal,
              "ovlrt: error: device [01]: ovl\\.(all_gather|reduce_scatter) "
              "at prog\\.mlir:[59]:3: does not match device [01] \\(group "
              "index [01]\\), which called ovl\\.[a-z_]+ at prog\\.mlir:[59]:3 "
              "as call #0 on the group of axes \\[0\\] of grid 2: the "
              "operations differ");
}

TEST_F(ErrorsDeathTest, DifferentShapes) {
  EXPECT_EXIT(runSplit(
                  2, [](Device &d) { allGatherOf(d, {2, 3}, 0); },
                  [](Device &d) { allGatherOf(d, {2, 4}, 0); }),
              kFatal,
              "input shapes differ \\((2x3 here, 2x4|2x4 here, 2x3) there\\)");
}

TEST_F(ErrorsDeathTest, DifferentElementTypes) {
  auto gather = [](DType dtype) {
    return [dtype](Device &device) {
      int64_t inSizes[] = {2}, outSizes[] = {4}, strides[] = {1};
      double in[2] = {}, out[4] = {};
      device.allGather({in, dtype, 1, inSizes, strides},
                       {out, dtype, 1, outSizes, strides}, {{2}, {0}}, 0);
    };
  };
  EXPECT_EXIT(runSplit(2, gather(DType::F32), gather(DType::I32)), kFatal,
              "ovl\\.all_gather: does not match .* element types differ "
              "\\((f32 here, i32|i32 here, f32) there\\)");
}

TEST_F(ErrorsDeathTest, DifferentDims) {
  // The same 2x2 input gathered along dim 0 by one device and dim 1 by the
  // other: the first difference found is the dimension.
  EXPECT_EXIT(runSplit(
                  2, [](Device &d) { allGatherOf(d, {2, 2}, 0); },
                  [](Device &d) { allGatherOf(d, {2, 2}, 1); }),
              kFatal, "dims differ \\((0 here, 1|1 here, 0) there\\)");
}

TEST_F(ErrorsDeathTest, DifferentReductions) {
  EXPECT_EXIT(runSplit(
                  2, [](Device &d) { reduceScatterOf(d, Reduction::Sum); },
                  [](Device &d) { reduceScatterOf(d, Reduction::Max); }),
              kFatal,
              "reductions differ \\((sum|max) here, (max|sum) there\\)");
}

TEST_F(ErrorsDeathTest, DifferentAxisOrders) {
  auto allReduce = [](std::vector<int64_t> axes) {
    return [axes](Device &device) {
      TestTensor<int32_t> x({3});
      device.allReduce(x.view(), x.view(), {{2, 2}, axes}, Reduction::Sum);
    };
  };
  EXPECT_EXIT(runSplit(4, allReduce({0, 1}), allReduce({1, 0})), kFatal,
              "grid axes differ \\((\\[0, 1\\]|\\[1, 0\\]) here");
}

TEST_F(ErrorsDeathTest, DifferentPairs) {
  auto permute = [](int64_t shift) {
    return [shift](Device &device) {
      TestTensor<float> in({2}), out({2});
      std::vector<int64_t> pairs = shiftPairs(3, shift);
      device.permute(in.view(), out.view(), {{3}, {0}}, pairsOf(pairs),
                     {"ovl.collective_permute", "prog.mlir:7:5"});
    };
  };
  EXPECT_EXIT(runSplit(3, permute(1), permute(-1)), kFatal,
              "ovlrt: error: device [0-2]: ovl\\.collective_permute at "
              "prog\\.mlir:7:5: does not match device [0-2] .* pairs differ");
}

TEST_F(ErrorsDeathTest, PermuteAgainstCollective) {
  EXPECT_EXIT(runSplit(
                  2,
                  [](Device &device) {
                    TestTensor<float> in({2}), out({2});
                    std::vector<int64_t> swap = shiftPairs(2, 1);
                    device.permuteDone(device.permuteStart(
                        in.view(), out.view(), {{2}, {0}}, pairsOf(swap)));
                  },
                  [](Device &d) { allGatherOf(d, {2}, 0); }),
              kFatal,
              "the operations differ \\((ovl\\.collective_permute_start here, "
              "ovl\\.all_gather|ovl\\.all_gather here, "
              "ovl\\.collective_permute_start) there\\)");
}

//===----------------------------------------------------------------------===//
// Malformed permutations
//===----------------------------------------------------------------------===//

void permuteWith(std::vector<int64_t> pairs) {
  runWorld(2, [&](Device &device) {
    TestTensor<float> in({2}), out({2});
    device.permute(in.view(), out.view(), {{2}, {0}}, pairsOf(pairs),
                   {"ovl.collective_permute", "prog.mlir:7:5"});
  });
}

TEST_F(ErrorsDeathTest, PairsWithATargetTwice) {
  EXPECT_EXIT(permuteWith({0, 1, 1, 1}), kFatal,
              "device [01]: ovl\\.collective_permute at prog\\.mlir:7:5: "
              "invalid pairs \\[0->1, 1->1\\]: group index 1 is the target "
              "of more than one pair");
}

TEST_F(ErrorsDeathTest, PairsOutOfRange) {
  EXPECT_EXIT(permuteWith({0, 2, 1, 0}), kFatal,
              "invalid pairs \\[0->2, 1->0\\]: pair 0->2 is out of range for a "
              "group of 2 devices");
}

TEST_F(ErrorsDeathTest, PairsNotCoveringTheGroup) {
  EXPECT_EXIT(permuteWith({0, 1}), kFatal,
              "cover 1 of the 2 devices of the group; expected a permutation "
              "of the whole group");
}

//===----------------------------------------------------------------------===//
// Missing peers
//===----------------------------------------------------------------------===//

void sleepSeconds(double seconds) {
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

TEST_F(ErrorsDeathTest, PeerThatNeverArrivesTimesOut) {
  EXPECT_EXIT(runWorld(
                  3,
                  [](Device &device) {
                    if (device.id() == 2)
                      sleepSeconds(60);
                    allGatherOf(device, {2}, 0);
                  },
                  /*timeoutSeconds=*/0.3),
              kFatal,
              "device [01]: ovl\\.all_gather at prog\\.mlir:5:3: timed out "
              "after 0\\.3 s waiting for device 2 \\(group index 2\\) to "
              "reach call #0 on the group of axes \\[0\\] of grid 3");
}

TEST_F(ErrorsDeathTest, TimeoutNamesEveryMissingPeer) {
  EXPECT_EXIT(runWorld(
                  4,
                  [](Device &device) {
                    if (device.id() % 2 == 1)
                      sleepSeconds(60);
                    allGatherOf(device, {2}, 0);
                  },
                  /*timeoutSeconds=*/0.3),
              kFatal,
              "waiting for device 1 \\(group index 1\\), device 3 \\(group "
              "index 3\\) to reach");
}

TEST_F(ErrorsDeathTest, PermutePeerThatNeverStartsTimesOut) {
  EXPECT_EXIT(runWorld(
                  2,
                  [](Device &device) {
                    if (device.id() == 1)
                      sleepSeconds(60);
                    TestTensor<float> in({2}), out({2});
                    std::vector<int64_t> swap = shiftPairs(2, 1);
                    Request request = device.permuteStart(
                        in.view(), out.view(), {{2}, {0}}, pairsOf(swap),
                        {"ovl.collective_permute_start", "prog.mlir:3:1"});
                    device.permuteDone(request, {"ovl.collective_permute_done",
                                                 "prog.mlir:4:1"});
                  },
                  /*timeoutSeconds=*/0.3),
              kFatal,
              "device 0: ovl\\.collective_permute_done at prog\\.mlir:4:1: "
              "timed out after 0\\.3 s waiting for device 1 \\(group index "
              "1\\)");
}

TEST_F(ErrorsDeathTest, PeerWhoseProgramEndedIsReportedAtOnce) {
  // The timeout is long: the report must not wait for it.
  EXPECT_EXIT(runWorld(
                  3,
                  [](Device &device) {
                    if (device.id() != 1)
                      allGatherOf(device, {2}, 0);
                  },
                  /*timeoutSeconds=*/600),
              kFatal,
              "device [02]: ovl\\.all_gather at prog\\.mlir:5:3: device 1 "
              "\\(group index 1\\) ended its program without reaching call "
              "#0 on the group of axes \\[0\\] of grid 3");
}

//===----------------------------------------------------------------------===//
// Misused asynchronous permutes
//===----------------------------------------------------------------------===//

TEST_F(ErrorsDeathTest, DoneOfAnUnknownRequest) {
  EXPECT_EXIT(runWorld(1,
                       [](Device &device) {
                         device.permuteDone(
                             Request{99},
                             {"ovl.collective_permute_done", "prog.mlir:8:1"});
                       }),
              kFatal,
              "device 0: ovl\\.collective_permute_done at prog\\.mlir:8:1: "
              "request 99 is not in flight on this device: no permute start "
              "returned it");
}

TEST_F(ErrorsDeathTest, DoneTwice) {
  EXPECT_EXIT(runWorld(2,
                       [](Device &device) {
                         TestTensor<float> in({2}), out({2});
                         std::vector<int64_t> swap = shiftPairs(2, 1);
                         Request request = device.permuteStart(
                             in.view(), out.view(), {{2}, {0}}, pairsOf(swap));
                         device.permuteDone(request);
                         device.permuteDone(request);
                       }),
              kFatal,
              "request 1 is not in flight on this device: it has already "
              "completed");
}

TEST_F(ErrorsDeathTest, ProgramEndsWithPermutesInFlight) {
  EXPECT_EXIT(
      runWorld(2,
               [](Device &device) {
                 TestTensor<float> in({2}), out({2});
                 std::vector<int64_t> swap = shiftPairs(2, 1);
                 device.permuteStart(
                     in.view(), out.view(), {{2}, {0}}, pairsOf(swap),
                     {"ovl.collective_permute_start", "prog.mlir:3:1"});
               }),
      kFatal,
      "ovlrt: error: device [01]: the program ended with 1 permute\\(s\\) "
      "started and never done: ovl\\.collective_permute_start at "
      "prog\\.mlir:3:1 \\(request 1\\)");
}

//===----------------------------------------------------------------------===//
// Bad arguments
//===----------------------------------------------------------------------===//

TEST_F(ErrorsDeathTest, OutputOfTheWrongSize) {
  EXPECT_EXIT(runWorld(2,
                       [](Device &device) {
                         TestTensor<float> in({2, 3}), out({2, 5});
                         device.allGather(in.view(), out.view(), {{2}, {0}}, 1,
                                          {"ovl.all_gather", "prog.mlir:2:2"});
                       }),
              kFatal,
              "device [01]: ovl\\.all_gather at prog\\.mlir:2:2: gathering "
              "2x3xf32 along dim 1 over 2 devices into 2x5xf32: size 5 of dim "
              "1 should be 6");
}

TEST_F(ErrorsDeathTest, InvalidGroups) {
  EXPECT_EXIT(
      runWorld(2, [](Device &device) { device.partitionId({{2}, {1}}); }),
      kFatal,
      "device [01]: ovl\\.partition_id: grid axis 1 is out of range "
      "for grid \\[2\\]");
  EXPECT_EXIT(runWorld(2,
                       [](Device &device) {
                         TestTensor<float> x({2});
                         device.allReduce(x.view(), x.view(), {{4}, {0}},
                                          Reduction::Sum);
                       }),
              kFatal,
              "ovl\\.all_reduce: grid shape \\[4\\] has 4 devices but the "
              "world has 2");
}

TEST_F(ErrorsDeathTest, InvalidReductionValue) {
  EXPECT_EXIT(runWorld(1,
                       [](Device &device) {
                         TestTensor<float> x({2});
                         device.allReduce(x.view(), x.view(), {{1}, {0}},
                                          static_cast<Reduction>(9));
                       }),
              kFatal, "device 0: ovl\\.all_reduce: invalid reduction 9");
}

TEST_F(ErrorsDeathTest, NoDeviceOutsideAWorld) {
  EXPECT_EXIT(currentDevice(), kFatal,
              "ovlrt: error: no device on this thread");
}

TEST_F(ErrorsDeathTest, InvalidWorldOptions) {
  WorldOptions options;
  options.numDevices = 0;
  EXPECT_EXIT(ThreadsWorld{options}, kFatal,
              "a world needs at least one device, not 0");
}

//===----------------------------------------------------------------------===//
// The fatal handler
//===----------------------------------------------------------------------===//

void customHandler(const char *message) {
  std::fprintf(stderr, "custom handler got: %s\n", message);
  std::_Exit(3);
}

void returningHandler(const char *) {}

TEST_F(ErrorsDeathTest, HandlerIsReplaceable) {
  EXPECT_EXIT(
      {
        setFatalHandler(customHandler);
        fatal(4, {"ovl.all_gather", "x.mlir:1:2"}, "boom");
      },
      ExitedWithCode(3),
      "custom handler got: ovlrt: error: device 4: ovl\\.all_gather at "
      "x\\.mlir:1:2: boom");
  // A handler that returns still ends the process.
  EXPECT_EXIT(
      {
        setFatalHandler(returningHandler);
        fatal("boom");
      },
      kFatal, "");
}

TEST(FatalHandlerTest, SetReturnsThePreviousHandler) {
  FatalHandler original = setFatalHandler(customHandler);
  EXPECT_EQ(setFatalHandler(nullptr), customHandler);
  EXPECT_EQ(setFatalHandler(original), original);
}

TEST(FormatOpTest, PartsThatAreKnown) {
  EXPECT_EQ(formatOp({"ovl.all_gather", "a.mlir:1:1"}),
            "ovl.all_gather at a.mlir:1:1");
  EXPECT_EQ(formatOp({"ovl.all_gather", nullptr}), "ovl.all_gather");
  EXPECT_EQ(formatOp({nullptr, "a.mlir:1:1"}), "at a.mlir:1:1");
  EXPECT_EQ(formatOp({}), "");
}

} // namespace
