//===- CollectivesTest.cpp - Blocking collectives on the threads world ----===//
//
// All-gather, reduce-scatter and all-reduce on 1-D grids of 2, 3, 4 and 8
// devices and on 2x2 and 2x4 grids along each axis and both (in both
// orders), for several tensor ranks and dims, on dense and strided views;
// then every reduction for f32, i32 and bf16, a few literal cases computed
// by hand, and the bit-identical repetition of a floating-point all-reduce.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <chrono>
#include <cmath>
#include <cstring>
#include <random>
#include <thread>

using namespace ovlrt;
using namespace ovlrt::test;

namespace {

struct GroupCase {
  std::vector<int64_t> gridShape, axes;
};

struct ShapeCase {
  /// The shape of one shard: the all-gather's input, the reduce-scatter's
  /// output.
  std::vector<int64_t> shard;
  int64_t dim;
};

const GroupCase kGroups[] = {
    {{2}, {0}},    {{3}, {0}},    {{4}, {0}},       {{8}, {0}},
    {{2, 2}, {0}}, {{2, 2}, {1}}, {{2, 2}, {0, 1}}, {{2, 2}, {1, 0}},
    {{2, 4}, {0}}, {{2, 4}, {1}}, {{2, 4}, {0, 1}}, {{2, 4}, {1, 0}},
    {{2, 2}, {}},
};

const ShapeCase kShapes[] = {
    {{3}, 0}, {{2, 3}, 0}, {{2, 3}, 1}, {{2, 2, 3}, 1}, {{1, 2, 3}, 2},
};

const Layout kLayouts[] = {Layout::Dense, Layout::Window,
                           Layout::TransposedWindow};

/// A different layout for the input than for the output, so that the
/// copies between unlike layouts are exercised too.
Layout inputLayoutFor(Layout out) {
  switch (out) {
  case Layout::Dense:
    return Layout::Window;
  case Layout::Window:
    return Layout::TransposedWindow;
  case Layout::TransposedWindow:
    return Layout::Dense;
  }
  return Layout::Dense;
}

/// What device `device` holds at `index` of a tensor of `sizes`: unique
/// per device and element, exact in every tested type.
double valueOf(int64_t device, const std::vector<int64_t> &sizes,
               const std::vector<int64_t> &index) {
  return 100.0 * static_cast<double>(device) +
         static_cast<double>(linearIndex(sizes, index));
}

using CollectiveParam = std::tuple<GroupCase, ShapeCase, Layout>;

class CollectiveTest : public testing::TestWithParam<CollectiveParam> {
protected:
  const GroupCase &groupCase() const { return std::get<0>(GetParam()); }
  const ShapeCase &shapeCase() const { return std::get<1>(GetParam()); }
  Layout outLayout() const { return std::get<2>(GetParam()); }
  Layout inLayout() const { return inputLayoutFor(outLayout()); }
  int64_t numDevices() const { return product(groupCase().gridShape); }
  int64_t groupSize() const {
    int64_t size = 1;
    for (int64_t axis : groupCase().axes)
      size *= groupCase().gridShape[axis];
    return size;
  }
  /// The shard's shape with `dim` scaled by the group size.
  std::vector<int64_t> wholeShape() const {
    std::vector<int64_t> whole = shapeCase().shard;
    whole[shapeCase().dim] *= groupSize();
    return whole;
  }
};

TEST_P(CollectiveTest, AllGather) {
  std::vector<int64_t> inSizes = shapeCase().shard, outSizes = wholeShape();
  int64_t dim = shapeCase().dim, part = inSizes[dim];
  runWorld(numDevices(), [&](Device &device) {
    Group group{groupCase().gridShape, groupCase().axes};
    ExpectedGroup expected =
        expectedGroup(group.gridShape, group.axes, device.id());
    TestTensor<float> in(inSizes, inLayout()), out(outSizes, outLayout());
    in.fill([&](auto &index) { return valueOf(device.id(), inSizes, index); });
    device.allGather(in.view(), out.view(), group, dim,
                     {"ovl.all_gather", "test:1:1"});
    out.expect(
        [&](const std::vector<int64_t> &index) {
          std::vector<int64_t> local = index;
          local[dim] %= part;
          int64_t member = expected.members[index[dim] / part];
          return valueOf(member, inSizes, local);
        },
        "device " + std::to_string(device.id()));
    // The input is only read.
    in.expect([&](auto &index) { return valueOf(device.id(), inSizes, index); },
              "input");
  });
}

TEST_P(CollectiveTest, ReduceScatterSum) {
  std::vector<int64_t> inSizes = wholeShape(), outSizes = shapeCase().shard;
  int64_t dim = shapeCase().dim, part = outSizes[dim];
  runWorld(numDevices(), [&](Device &device) {
    Group group{groupCase().gridShape, groupCase().axes};
    ExpectedGroup expected =
        expectedGroup(group.gridShape, group.axes, device.id());
    TestTensor<float> in(inSizes, inLayout()), out(outSizes, outLayout());
    in.fill([&](auto &index) { return valueOf(device.id(), inSizes, index); });
    device.reduceScatter(in.view(), out.view(), group, dim, Reduction::Sum,
                         {"ovl.reduce_scatter", "test:2:1"});
    out.expect(
        [&](const std::vector<int64_t> &index) {
          std::vector<int64_t> whole = index;
          whole[dim] += expected.index * part;
          double sum = 0;
          for (int64_t member : expected.members)
            sum += valueOf(member, inSizes, whole);
          return sum;
        },
        "device " + std::to_string(device.id()));
  });
}

TEST_P(CollectiveTest, AllReduceSum) {
  std::vector<int64_t> sizes = shapeCase().shard;
  runWorld(numDevices(), [&](Device &device) {
    Group group{groupCase().gridShape, groupCase().axes};
    ExpectedGroup expected =
        expectedGroup(group.gridShape, group.axes, device.id());
    TestTensor<float> in(sizes, inLayout()), out(sizes, outLayout());
    in.fill([&](auto &index) { return valueOf(device.id(), sizes, index); });
    device.allReduce(in.view(), out.view(), group, Reduction::Sum,
                     {"ovl.all_reduce", "test:3:1"});
    out.expect(
        [&](const std::vector<int64_t> &index) {
          double sum = 0;
          for (int64_t member : expected.members)
            sum += valueOf(member, sizes, index);
          return sum;
        },
        "device " + std::to_string(device.id()));
  });
}

std::string paramName(const testing::TestParamInfo<CollectiveParam> &info) {
  const auto &[groupCase, shapeCase, layout] = info.param;
  std::string name = "grid";
  for (int64_t size : groupCase.gridShape)
    name += "_" + std::to_string(size);
  name += "_axes";
  for (int64_t axis : groupCase.axes)
    name += "_" + std::to_string(axis);
  name += "_shard";
  for (int64_t size : shapeCase.shard)
    name += "_" + std::to_string(size);
  name += "_dim" + std::to_string(shapeCase.dim);
  const char *layoutNames[] = {"Dense", "Window", "Transposed"};
  return name + "_" + layoutNames[static_cast<int>(layout)];
}

INSTANTIATE_TEST_SUITE_P(Grids, CollectiveTest,
                         testing::Combine(testing::ValuesIn(kGroups),
                                          testing::ValuesIn(kShapes),
                                          testing::ValuesIn(kLayouts)),
                         paramName);

//===----------------------------------------------------------------------===//
// Reductions per element type
//===----------------------------------------------------------------------===//

template <typename T> class ReductionTest : public testing::Test {};
using ReducedTypes = testing::Types<float, int32_t, BF16>;
TYPED_TEST_SUITE(ReductionTest, ReducedTypes);

/// Small values, negative and positive, whose products stay exact in bf16
/// for groups of up to 4.
double smallValue(int64_t device, int64_t element) {
  const double values[] = {-2, -1, 1, 2, 3};
  return values[(device * 7 + element * 3 + 1) % 5];
}

double combine(Reduction reduction, double a, double b) {
  switch (reduction) {
  case Reduction::Sum:
    return a + b;
  case Reduction::Prod:
    return a * b;
  case Reduction::Max:
    return std::max(a, b);
  case Reduction::Min:
    return std::min(a, b);
  }
  return 0;
}

TYPED_TEST(ReductionTest, AllReduceAndReduceScatter) {
  const GroupCase groups[] = {{{4}, {0}}, {{2, 2}, {1, 0}}, {{2, 4}, {1}}};
  for (const GroupCase &groupCase : groups) {
    for (Reduction reduction :
         {Reduction::Sum, Reduction::Prod, Reduction::Max, Reduction::Min}) {
      SCOPED_TRACE(std::string(reductionName(reduction)) + " over axes " +
                   formatList(groupCase.axes));
      runWorld(product(groupCase.gridShape), [&](Device &device) {
        Group group{groupCase.gridShape, groupCase.axes};
        ExpectedGroup expected =
            expectedGroup(group.gridShape, group.axes, device.id());
        int64_t n = static_cast<int64_t>(expected.members.size());
        std::vector<int64_t> wholeSizes{2, 2 * n}, partSizes{2, 2};
        auto fillValue = [&](const std::vector<int64_t> &index) {
          return smallValue(device.id(), linearIndex(wholeSizes, index));
        };
        auto reduced = [&](const std::vector<int64_t> &index) {
          int64_t element = linearIndex(wholeSizes, index);
          double acc = smallValue(expected.members[0], element);
          for (int64_t i = 1; i < n; ++i)
            acc = combine(reduction, acc,
                          smallValue(expected.members[i], element));
          return acc;
        };

        TestTensor<TypeParam> in(wholeSizes, Layout::Window);
        in.fill(fillValue);
        TestTensor<TypeParam> all(wholeSizes, Layout::TransposedWindow);
        device.allReduce(in.view(), all.view(), group, reduction);
        all.expect(reduced, "all-reduce");

        TestTensor<TypeParam> part(partSizes, Layout::Window);
        device.reduceScatter(in.view(), part.view(), group, 1, reduction);
        part.expect(
            [&](const std::vector<int64_t> &index) {
              return reduced({index[0], index[1] + 2 * expected.index});
            },
            "reduce-scatter");
      });
    }
  }
}

//===----------------------------------------------------------------------===//
// Literal cases
//===----------------------------------------------------------------------===//

TEST(LiteralCollectiveTest, AllGatherTwoDevicesAlongDimOne) {
  runWorld(2, [](Device &device) {
    std::vector<int64_t> inSizes{2, 2}, outSizes{2, 4};
    TestTensor<int32_t> in(inSizes), out(outSizes);
    int32_t base = device.id() == 0 ? 1 : 5;
    in.at({0, 0}) = base;
    in.at({0, 1}) = base + 1;
    in.at({1, 0}) = base + 2;
    in.at({1, 1}) = base + 3;
    device.allGather(in.view(), out.view(), {{2}, {0}}, 1);
    // [[1, 2], [3, 4]] and [[5, 6], [7, 8]] side by side.
    const double expected[2][4] = {{1, 2, 5, 6}, {3, 4, 7, 8}};
    out.expect([&](auto &i) { return expected[i[0]][i[1]]; }, "gathered");
  });
}

TEST(LiteralCollectiveTest, ReduceScatterTwoDevices) {
  runWorld(2, [](Device &device) {
    TestTensor<float> in({4}), out({2});
    for (int64_t i = 0; i < 4; ++i)
      in.at({i}) = static_cast<float>((i + 1) * (device.id() == 0 ? 1 : 10));
    device.reduceScatter(in.view(), out.view(), {{2}, {0}}, 0, Reduction::Sum);
    // [1, 2, 3, 4] + [10, 20, 30, 40] = [11, 22 | 33, 44].
    const double expected[2][2] = {{11, 22}, {33, 44}};
    out.expect([&](auto &i) { return expected[device.id()][i[0]]; },
               "scattered");
  });
}

TEST(LiteralCollectiveTest, AllReduceMaxAndMinOfThree) {
  runWorld(3, [](Device &device) {
    const int32_t inputs[3][3] = {{4, -9, 0}, {-1, 7, 2}, {3, 3, -5}};
    TestTensor<int32_t> in({3}), maxOut({3}), minOut({3});
    for (int64_t i = 0; i < 3; ++i)
      in.at({i}) = inputs[device.id()][i];
    device.allReduce(in.view(), maxOut.view(), {{3}, {0}}, Reduction::Max);
    device.allReduce(in.view(), minOut.view(), {{3}, {0}}, Reduction::Min);
    const double maxima[3] = {4, 7, 2}, minima[3] = {-1, -9, -5};
    maxOut.expect([&](auto &i) { return maxima[i[0]]; }, "max");
    minOut.expect([&](auto &i) { return minima[i[0]]; }, "min");
  });
}

TEST(LiteralCollectiveTest, AllReduceInPlace) {
  runWorld(4, [](Device &device) {
    TestTensor<int32_t> x({2});
    x.at({0}) = static_cast<int32_t>(device.id());
    x.at({1}) = 1;
    device.allReduce(x.view(), x.view(), {{4}, {0}}, Reduction::Sum);
    x.expect([](auto &i) { return i[0] == 0 ? 6.0 : 4.0; }, "in place");
  });
}

TEST(LiteralCollectiveTest, BFloat16SumRoundsOnceAtTheEnd) {
  // 256 + 1 + 1: rounding after every step would give 256 (257 is a tie
  // between 256 and 258, and rounds to even); combined in float, 258 is
  // exact in bf16.
  runWorld(3, [](Device &device) {
    TestTensor<BF16> in({1}), out({1});
    in.at({0}) = fromDouble<BF16>(device.id() == 0 ? 256 : 1);
    device.allReduce(in.view(), out.view(), {{3}, {0}}, Reduction::Sum);
    EXPECT_EQ(asDouble(out.at({0})), 258.0);
  });
}

TEST(LiteralCollectiveTest, RankZeroAllReduce) {
  runWorld(4, [](Device &device) {
    double in = 1.5 * static_cast<double>(device.id()), out = 0;
    TensorView inView{&in, DType::F64, 0, nullptr, nullptr};
    TensorView outView{&out, DType::F64, 0, nullptr, nullptr};
    device.allReduce(inView, outView, {{2, 2}, {1, 0}}, Reduction::Sum);
    EXPECT_EQ(out, 9.0);
  });
}

TEST(LiteralCollectiveTest, GroupOfOneCopies) {
  runWorld(2, [](Device &device) {
    TestTensor<float> in({3}), out({3});
    in.fill([&](auto &i) { return static_cast<double>(i[0] + device.id()); });
    device.allGather(in.view(), out.view(), {{2}, {}}, 0);
    out.expect([&](auto &i) { return static_cast<double>(i[0] + device.id()); },
               "copy");
  });
}

//===----------------------------------------------------------------------===//
// Determinism
//===----------------------------------------------------------------------===//

TEST(DeterminismTest, FloatAllReduceIsBitIdenticalAcrossRuns) {
  // Values of very different magnitudes make float addition visibly
  // non-associative, so any change of combination order would show.
  constexpr int64_t kElements = 1000, kDevices = 8;
  std::vector<std::vector<float>> inputs(kDevices,
                                         std::vector<float>(kElements));
  std::mt19937 generator(42);
  std::uniform_real_distribution<float> mantissa(-1, 1);
  std::uniform_int_distribution<int> exponent(-20, 20);
  for (auto &values : inputs)
    for (float &value : values)
      value = std::ldexp(mantissa(generator), exponent(generator));

  // Axes [1, 0] on a 2x4 grid: group order is not device order.
  Group group{{2, 4}, {1, 0}};
  std::vector<float> expected(kElements);
  ExpectedGroup order = expectedGroup(group.gridShape, group.axes, 0);
  for (int64_t e = 0; e < kElements; ++e) {
    float acc = inputs[order.members[0]][e];
    for (int64_t i = 1; i < kDevices; ++i)
      acc += inputs[order.members[i]][e];
    expected[e] = acc;
  }

  for (int run = 0; run < 20; ++run) {
    runWorld(kDevices, [&](Device &device) {
      // Shuffle the arrival order from run to run.
      std::this_thread::sleep_for(std::chrono::microseconds(
          ((device.id() * 7 + run * 3) % kDevices) * 200));
      std::vector<float> out(kElements);
      int64_t sizes[] = {kElements}, strides[] = {1};
      TensorView in{inputs[device.id()].data(), DType::F32, 1, sizes, strides};
      TensorView outView{out.data(), DType::F32, 1, sizes, strides};
      device.allReduce(in, outView, group, Reduction::Sum);
      EXPECT_EQ(
          std::memcmp(out.data(), expected.data(), kElements * sizeof(float)),
          0)
          << "run " << run << ", device " << device.id();
    });
  }
}

} // namespace
