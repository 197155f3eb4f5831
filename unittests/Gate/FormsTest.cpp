//===- FormsTest.cpp - The gate's forms and prices as text ----------------===//

#include "OverlapDialect/Gate/Forms.h"

#include "gtest/gtest.h"

using namespace mlir::ovl;

namespace {

TEST(FormsTest, TimesHaveThreeDigitsInTheirUnit) {
  EXPECT_EQ(formatTime(0), "0 s");
  EXPECT_EQ(formatTime(1.2e-3), "1.20 ms");
  EXPECT_EQ(formatTime(450e-6), "450 us");
  EXPECT_EQ(formatTime(-3.07e-6), "-3.07 us");
  EXPECT_EQ(formatTime(12.34e-9), "12.3 ns");
  // Rounds up to the next unit rather than printing "1000 us".
  EXPECT_EQ(formatTime(999.7e-6), "1.00 ms");
}

TEST(FormsTest, LoopsAreDescribedByVariant) {
  EXPECT_EQ(describeLoop({}), "unroll 1, unidirectional");
  EXPECT_EQ(describeLoop({2, RingLoopDirection::Split, false}),
            "unroll 2, split");
  EXPECT_EQ(describeLoop({1, RingLoopDirection::Split, true}),
            "gather-scatter, split, with the all_gather of its einsum");
}

TEST(FormsTest, AGainIsOverTheBestKeptForm) {
  CollectiveEstimate estimate;
  estimate.blocking = {10e-6, 4e-6};
  estimate.asynchronous = FormEstimate{8e-6, 4e-6};
  estimate.decomposed = FormEstimate{5e-6, 4.5e-6};
  estimate.loops = {{DecomposeOptions(), *estimate.decomposed}};
  EXPECT_EQ(estimate.bestKept(), CollectiveForm::Asynchronous);
  EXPECT_DOUBLE_EQ(estimate.gain(), 3e-6);
  EXPECT_TRUE(estimate.decompositionPays());
  EXPECT_EQ(describeEstimate(estimate),
            "predicted 10.0 us blocking (compute 4.00 us), 8.00 us "
            "asynchronous (compute 4.00 us), 5.00 us decomposed (compute "
            "4.50 us), gain 3.00 us");
  // Within a millionth of the kept time, decomposing is a tie.
  estimate.decomposed->step = 8e-6 - 1e-12;
  EXPECT_FALSE(estimate.decompositionPays());
}

} // namespace
