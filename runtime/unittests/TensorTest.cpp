//===- TensorTest.cpp - Strided views and copies --------------------------===//
//
// Copies between views of every test layout (including rank 0, empty views
// and views whose dimensions merge), slices, and the checks of malformed
// views.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

using namespace ovlrt;
using namespace ovlrt::test;

namespace {

TEST(TensorViewTest, CopyBetweenAllLayouts) {
  const Layout layouts[] = {Layout::Dense, Layout::Window,
                            Layout::TransposedWindow};
  const std::vector<std::vector<int64_t>> shapes = {
      {5}, {3, 4}, {2, 3, 4}, {1, 4, 1}, {2, 1, 3, 2}};
  for (const auto &sizes : shapes)
    for (Layout from : layouts)
      for (Layout to : layouts) {
        TestTensor<int16_t> src(sizes, from), dst(sizes, to);
        auto value = [&](auto &i) {
          return static_cast<double>(linearIndex(sizes, i) + 1);
        };
        src.fill(value);
        copyView(dst.view(), src.view());
        dst.expect(value, "copy of " + formatList(sizes));
      }
}

TEST(TensorViewTest, RankZeroAndEmptyViews) {
  double a = 3.5, b = 0;
  copyView({&b, DType::F64, 0, nullptr, nullptr},
           {&a, DType::F64, 0, nullptr, nullptr});
  EXPECT_EQ(b, 3.5);

  int64_t sizes[] = {0, 4}, strides[] = {4, 1};
  TensorView empty{nullptr, DType::F32, 2, sizes, strides};
  EXPECT_EQ(numElements(empty), 0);
  EXPECT_EQ(checkView(empty), "");
  copyView(empty, empty);
}

TEST(TensorViewTest, ContiguityAndFormatting) {
  TestTensor<float> dense({2, 3}), window({2, 3}, Layout::Window);
  EXPECT_TRUE(isContiguous(dense.view()));
  EXPECT_FALSE(isContiguous(window.view()));
  EXPECT_EQ(formatType(dense.view()), "2x3xf32");
  EXPECT_EQ(numBytes(dense.view()), 24);
  // A unit dimension's stride does not matter.
  int64_t sizes[] = {1, 3}, strides[] = {99, 1};
  float data[3];
  EXPECT_TRUE(isContiguous({data, DType::F32, 2, sizes, strides}));
  EXPECT_EQ(formatType({data, DType::BF16, 0, nullptr, nullptr}), "bf16");
}

TEST(TensorViewTest, SliceOfAWindow) {
  TestTensor<int32_t> t({4, 6}, Layout::Window);
  t.fill([](auto &i) { return static_cast<double>(10 * i[0] + i[1]); });
  OwnedView columns = OwnedView(t.view()).slice(1, 2, 3);
  TestTensor<int32_t> out({4, 3});
  copyView(out.view(), columns.view());
  out.expect([](auto &i) { return static_cast<double>(10 * i[0] + i[1] + 2); },
             "slice");
}

TEST(TensorViewTest, ChecksMalformedViews) {
  float data[4];
  int64_t sizes[] = {2, 2}, strides[] = {2, 1};
  int64_t negativeSize[] = {2, -1}, negativeStride[] = {-2, 1};
  EXPECT_EQ(checkView({data, DType::F32, 2, sizes, strides}), "");
  EXPECT_EQ(checkView({data, static_cast<DType>(42), 2, sizes, strides}),
            "invalid element type 42");
  EXPECT_EQ(checkView({data, DType::F32, -1, sizes, strides}),
            "negative rank -1");
  EXPECT_EQ(checkView({data, DType::F32, 2, negativeSize, strides}),
            "negative size -1 in dim 1");
  EXPECT_EQ(checkView({data, DType::F32, 2, sizes, negativeStride}),
            "negative stride -2 in dim 0");
  EXPECT_EQ(checkView({nullptr, DType::F32, 2, sizes, strides}),
            "null data pointer");
  EXPECT_EQ(checkView({data, DType::F32, 2, nullptr, strides}),
            "missing sizes or strides");
}

} // namespace
