//===- DTypeTest.cpp - Element types and the reduction kernel -------------===//
//
// The 16-bit float conversions (exhaustively for round trips, and on the
// rounding ties, subnormals, overflow and NaN) and reduceBuffers for every
// element type and reduction, including integer wrap-around, NaN
// propagation and the combination order.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace ovlrt;
using namespace ovlrt::test;

namespace {

TEST(DTypeTest, SizesAndNames) {
  EXPECT_EQ(dtypeSize(DType::BF16), 2);
  EXPECT_EQ(dtypeSize(DType::F64), 8);
  EXPECT_EQ(dtypeSize(DType::I8), 1);
  EXPECT_STREQ(dtypeName(DType::F16), "f16");
  EXPECT_STREQ(reductionName(Reduction::Prod), "prod");
  // The compiler passes these as integers.
  EXPECT_EQ(static_cast<int>(Reduction::Sum), 0);
  EXPECT_EQ(static_cast<int>(Reduction::Prod), 1);
  EXPECT_EQ(static_cast<int>(Reduction::Max), 2);
  EXPECT_EQ(static_cast<int>(Reduction::Min), 3);
  EXPECT_TRUE(isValidDType(7));
  EXPECT_FALSE(isValidDType(8));
  EXPECT_FALSE(isValidReduction(-1));
}

TEST(HalfTest, EveryNonNaNValueRoundTrips) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    float value = halfToFloat(static_cast<uint16_t>(bits));
    if (std::isnan(value))
      continue;
    ASSERT_EQ(floatToHalf(value), bits) << "bits " << bits;
  }
}

TEST(HalfTest, KnownValues) {
  EXPECT_EQ(halfToFloat(0x3c00), 1.0f);
  EXPECT_EQ(halfToFloat(0xc000), -2.0f);
  EXPECT_EQ(halfToFloat(0x7bff), 65504.0f);
  EXPECT_EQ(halfToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(floatToHalf(1.0f), 0x3c00);
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even (1).
  EXPECT_EQ(floatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  // 1 + 3 * 2^-11 is halfway between 1 + 2^-10 and 1 + 2^-9: the even one.
  EXPECT_EQ(floatToHalf(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  // Just above the tie rounds up.
  EXPECT_EQ(floatToHalf(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)),
            0x3c01);
  // Overflow and the largest value that still rounds to 65504.
  EXPECT_EQ(floatToHalf(65519.0f), 0x7bff);
  EXPECT_EQ(floatToHalf(65520.0f), 0x7c00);
  EXPECT_EQ(floatToHalf(1e10f), 0x7c00);
  EXPECT_EQ(floatToHalf(-1e10f), 0xfc00);
  // Subnormals: half of the smallest subnormal ties to zero, 1.5 of it to 2.
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -25)), 0x0000);
  EXPECT_EQ(floatToHalf(3 * std::ldexp(1.0f, -25)), 0x0002);
  EXPECT_EQ(floatToHalf(-0.0f), 0x8000);
  EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(std::nanf("")))));
  EXPECT_TRUE(std::isinf(halfToFloat(0x7c00)));
}

TEST(BFloat16Test, EveryNonNaNValueRoundTrips) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    float value = bfloat16ToFloat(static_cast<uint16_t>(bits));
    if (std::isnan(value))
      continue;
    ASSERT_EQ(floatToBFloat16(value), bits) << "bits " << bits;
  }
}

TEST(BFloat16Test, KnownValues) {
  EXPECT_EQ(bfloat16ToFloat(0x3f80), 1.0f);
  EXPECT_EQ(floatToBFloat16(1.0f), 0x3f80);
  // 1 + 2^-8 ties to even (1); 1 + 3 * 2^-8 ties to 1 + 2^-6.
  EXPECT_EQ(floatToBFloat16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);
  EXPECT_EQ(floatToBFloat16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);
  EXPECT_EQ(floatToBFloat16(257.0f), floatToBFloat16(256.0f));
  EXPECT_EQ(floatToBFloat16(259.0f), floatToBFloat16(260.0f));
  EXPECT_EQ(floatToBFloat16(std::numeric_limits<float>::max()), 0x7f80);
  uint16_t nan = floatToBFloat16(std::nanf(""));
  EXPECT_TRUE(std::isnan(bfloat16ToFloat(nan)));
  // A NaN whose payload sits only in the dropped bits stays a NaN.
  uint32_t lowPayload = 0x7f800001;
  float sneaky;
  std::memcpy(&sneaky, &lowPayload, sizeof(sneaky));
  EXPECT_TRUE(std::isnan(bfloat16ToFloat(floatToBFloat16(sneaky))));
}

template <typename T>
std::vector<T> reduce(Reduction reduction,
                      const std::vector<std::vector<T>> &inputs) {
  std::vector<const void *> pointers;
  for (const auto &input : inputs)
    pointers.push_back(input.data());
  std::vector<T> out(inputs[0].size());
  reduceBuffers(dtypeOf<T>(), reduction, pointers.data(),
                static_cast<int64_t>(pointers.size()), out.data(),
                static_cast<int64_t>(out.size()));
  return out;
}

TEST(ReduceBuffersTest, IntegerReductions) {
  std::vector<std::vector<int32_t>> inputs = {
      {1, -5, 7}, {2, 3, -7}, {-4, 0, 2}};
  EXPECT_EQ(reduce(Reduction::Sum, inputs), (std::vector<int32_t>{-1, -2, 2}));
  EXPECT_EQ(reduce(Reduction::Prod, inputs),
            (std::vector<int32_t>{-8, 0, -98}));
  EXPECT_EQ(reduce(Reduction::Max, inputs), (std::vector<int32_t>{2, 3, 7}));
  EXPECT_EQ(reduce(Reduction::Min, inputs), (std::vector<int32_t>{-4, -5, -7}));
}

TEST(ReduceBuffersTest, SmallIntegersWrapAndCompareSigned) {
  std::vector<std::vector<int8_t>> bytes = {{100, -128, -1}, {100, -1, 1}};
  EXPECT_EQ(reduce(Reduction::Sum, bytes), (std::vector<int8_t>{-56, 127, 0}));
  EXPECT_EQ(reduce(Reduction::Max, bytes), (std::vector<int8_t>{100, -1, 1}));
  std::vector<std::vector<int16_t>> shorts = {{-32768, 300}, {-1, 300}};
  // 300 * 300 = 90000 wraps to 90000 - 65536.
  EXPECT_EQ(reduce(Reduction::Prod, shorts),
            (std::vector<int16_t>{-32768, 24464}));
  std::vector<std::vector<int64_t>> longs = {
      {std::numeric_limits<int64_t>::max()}, {1}};
  EXPECT_EQ(reduce(Reduction::Sum, longs),
            (std::vector<int64_t>{std::numeric_limits<int64_t>::min()}));
}

TEST(ReduceBuffersTest, FloatMaxAndMinPropagateNaN) {
  float nan = std::nanf("");
  std::vector<std::vector<float>> inputs = {{nan, 1, 2}, {0, nan, 3}};
  std::vector<float> max = reduce(Reduction::Max, inputs);
  std::vector<float> min = reduce(Reduction::Min, inputs);
  EXPECT_TRUE(std::isnan(max[0]) && std::isnan(max[1]));
  EXPECT_TRUE(std::isnan(min[0]) && std::isnan(min[1]));
  EXPECT_EQ(max[2], 3.0f);
  EXPECT_EQ(min[2], 2.0f);
}

TEST(ReduceBuffersTest, CombinesInTheOrderGiven) {
  // (1e8 + 1) - 1e8 == 0 in float, (1e8 - 1e8) + 1 == 1.
  std::vector<float> a{1e8f}, b{1}, c{-1e8f};
  EXPECT_EQ(reduce(Reduction::Sum, std::vector<std::vector<float>>{a, b, c})[0],
            0.0f);
  EXPECT_EQ(reduce(Reduction::Sum, std::vector<std::vector<float>>{a, c, b})[0],
            1.0f);
}

TEST(ReduceBuffersTest, SixteenBitFloatsRoundOnce) {
  auto bf = [](float v) { return floatToBFloat16(v); };
  auto half = [](float v) { return floatToHalf(v); };
  // bf16: 256 + 1 + 1 = 258 exactly; f16: 2048 + 1 + 1 = 2050 exactly,
  // where rounding after each addition would have stayed at 256 / 2048.
  std::vector<const void *> inputs;
  uint16_t bfIn[3] = {bf(256), bf(1), bf(1)}, bfOut;
  for (uint16_t &v : bfIn)
    inputs.push_back(&v);
  reduceBuffers(DType::BF16, Reduction::Sum, inputs.data(), 3, &bfOut, 1);
  EXPECT_EQ(bfloat16ToFloat(bfOut), 258.0f);
  inputs.clear();
  uint16_t halfIn[3] = {half(2048), half(1), half(1)}, halfOut;
  for (uint16_t &v : halfIn)
    inputs.push_back(&v);
  reduceBuffers(DType::F16, Reduction::Sum, inputs.data(), 3, &halfOut, 1);
  EXPECT_EQ(halfToFloat(halfOut), 2050.0f);
  reduceBuffers(DType::F16, Reduction::Prod, inputs.data(), 3, &halfOut, 1);
  EXPECT_EQ(halfToFloat(halfOut), 2048.0f);
}

TEST(ReduceBuffersTest, SixteenBitFloatsCompareAsFloats) {
  // As bit patterns, -2 (0xc000) would be larger than 1 (0x3c00 / 0x3f80).
  for (DType type : {DType::F16, DType::BF16}) {
    bool isHalf = type == DType::F16;
    auto to = [&](float v) {
      return isHalf ? floatToHalf(v) : floatToBFloat16(v);
    };
    auto from = [&](uint16_t v) {
      return isHalf ? halfToFloat(v) : bfloat16ToFloat(v);
    };
    uint16_t a[2] = {to(-2), to(1)}, b[2] = {to(1), to(-0.5f)}, out[2];
    const void *inputs[] = {a, b};
    reduceBuffers(type, Reduction::Max, inputs, 2, out, 2);
    EXPECT_EQ(from(out[0]), 1.0f);
    EXPECT_EQ(from(out[1]), 1.0f);
    reduceBuffers(type, Reduction::Min, inputs, 2, out, 2);
    EXPECT_EQ(from(out[0]), -2.0f);
    EXPECT_EQ(from(out[1]), -0.5f);
  }
}

TEST(ReduceBuffersTest, OutputMayBeAnInputAndSpanManyBlocks) {
  // More elements than one accumulator block, reduced in place.
  std::vector<double> acc(2000), other(2000);
  for (size_t i = 0; i < acc.size(); ++i) {
    acc[i] = static_cast<double>(i);
    other[i] = 0.5;
  }
  const void *inputs[] = {acc.data(), other.data(), other.data()};
  reduceBuffers(DType::F64, Reduction::Sum, inputs, 3, acc.data(), 2000);
  for (size_t i = 0; i < acc.size(); ++i)
    ASSERT_EQ(acc[i], static_cast<double>(i) + 1.0) << i;
}

} // namespace
