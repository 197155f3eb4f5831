//===- NumericRangeTest.cpp - overlap::checkNumber and the ranges ---------===//

#include "OverlapDialect/CostModel/Hardware.h"

#include "gtest/gtest.h"

#include <cmath>
#include <limits>

using namespace mlir::ovl;
using overlap::checkNumber;

TEST(NumericRangeTest, IntegersWithinTheirBounds) {
  EXPECT_EQ(checkNumber("dmaSlots", ranges::kDmaSlots, 1), "");
  EXPECT_EQ(checkNumber("dmaSlots", ranges::kDmaSlots, 65536), "");
  EXPECT_EQ(checkNumber("dmaSlots", ranges::kDmaSlots, 0),
            "dmaSlots must be an integer between 1 and 65536, got 0");
  EXPECT_EQ(checkNumber("dmaSlots", ranges::kDmaSlots, 65537),
            "dmaSlots must be an integer between 1 and 65536, got 65537");
  EXPECT_EQ(checkNumber("dmaSlots", ranges::kDmaSlots, 1.5),
            "dmaSlots must be an integer between 1 and 65536, got 1.5");
}

TEST(NumericRangeTest, ZeroMeansTheDefaultWhereAllowed) {
  EXPECT_EQ(checkNumber("max-in-flight", ranges::kMaxInFlight, 0), "");
  EXPECT_EQ(checkNumber("x", ranges::kOptionalFigure, 0), "");
  EXPECT_EQ(checkNumber("x", ranges::kOptionalFigure, 1e-31),
            "x must be 0 or between 1e-30 and 1e+30, got 1e-31");
  EXPECT_NE(checkNumber("x", ranges::kFigure, 0), "");
  EXPECT_NE(checkNumber("x", ranges::kOptionalFigure, -0.5), "");
}

TEST(NumericRangeTest, NaNAndInfinitiesAreInNoRange) {
  double nan = std::numeric_limits<double>::quiet_NaN();
  double inf = std::numeric_limits<double>::infinity();
  for (const overlap::NumericRange &range :
       {ranges::kFigure, ranges::kOptionalFigure, ranges::kMaxInFlight,
        ranges::kTorusRank}) {
    EXPECT_NE(checkNumber("x", range, nan), "");
    EXPECT_NE(checkNumber("x", range, inf), "");
    EXPECT_NE(checkNumber("x", range, -inf), "");
  }
  EXPECT_EQ(checkNumber("x", ranges::kFigure, inf),
            "x must be between 1e-30 and 1e+30, got inf");
}

TEST(NumericRangeTest, CountsFitTheTypesThatHoldThem) {
  // The counts are held in unsigned and compared in signed 32-bit counters
  // (the simulator's transfers in flight) or doubled (2 * torusRank links).
  for (const overlap::NumericRange &range :
       {ranges::kDmaSlots, ranges::kMaxInFlight, ranges::kLinksPerChip,
        ranges::kTorusRank, ranges::kWrapAroundUnit}) {
    EXPECT_TRUE(range.integer);
    EXPECT_GE(range.min, 0);
    EXPECT_LE(2 * range.max, std::numeric_limits<int32_t>::max());
  }
  EXPECT_LE(2 * ranges::kTorusRank.max, ranges::kLinksPerChip.max);
}
