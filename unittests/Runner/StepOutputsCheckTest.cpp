//===- StepOutputsCheckTest.cpp - Every step's outputs checked ------------===//

#include "OverlapDialect/Runner/Launch.h"

#include "gtest/gtest.h"

using namespace overlap;

namespace {

std::vector<HostTensor> outputsOf(float value) {
  std::vector<HostTensor> outputs;
  HostTensor &tensor = outputs.emplace_back(TensorType{ovlrt::DType::F32, {2}});
  tensor.setFromDouble(0, value);
  tensor.setFromDouble(1, 1);
  return outputs;
}

TEST(StepOutputsCheckTest, FindsTheFirstStepThatDiffers) {
  StepOutputsCheck check;
  check.check(0, 4, outputsOf(2));
  check.check(1, 4, outputsOf(2));
  EXPECT_EQ(check.getChangedStep(), -1);
  check.check(2, 4, outputsOf(3));
  check.check(3, 4, outputsOf(4));
  EXPECT_EQ(check.getChangedStep(), 2);
}

TEST(StepOutputsCheckTest, ComparesBits) {
  // -0 == +0 as floats, not as bits: a step is a rerun on the same inputs.
  StepOutputsCheck check;
  check.check(0, 2, outputsOf(0.0f));
  check.check(1, 2, outputsOf(-0.0f));
  EXPECT_EQ(check.getChangedStep(), 1);
}

TEST(StepOutputsCheckTest, OneStepHasNothingToCompare) {
  StepOutputsCheck check;
  check.check(0, 1, outputsOf(2));
  EXPECT_EQ(check.getChangedStep(), -1);
}

TEST(StepOutputsCheckTest, EarliestStepThenLowestDevice) {
  EXPECT_FALSE(findChangedStep({-1, -1}).has_value());
  std::optional<ChangedStep> changed = findChangedStep({5, -1, 3, 3});
  ASSERT_TRUE(changed.has_value());
  EXPECT_EQ(changed->device, 2);
  EXPECT_EQ(changed->step, 3);
}

} // namespace
