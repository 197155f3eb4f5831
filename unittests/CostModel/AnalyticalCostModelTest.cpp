//===- AnalyticalCostModelTest.cpp - Closed forms of the cost model -------===//
//
// The analytical model against the formulas written out by hand, on a
// made-up chip with round figures so that every expected value is exact:
// the roofline's change from compute- to memory-bound and single transfers.
// Collectives, which depend on the placement, are CollectivePlanTest's.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/CostModel/CostModel.h"

#include "TestHardware.h"

#include "gtest/gtest.h"

using namespace mlir::ovl;
using namespace mlir::ovl::test;

namespace {

/// A 3-D torus wrapping on whole 4x4x4 cubes.
HardwareDescription testTorus() { return test::testTorus(3, 4); }

constexpr double kShard = 64;

TEST(AnalyticalCostModelTest, HardwareDescriptionsAreValid) {
  EXPECT_FALSE(llvm::errorToBool(verifyHardware(testTorus())));
  EXPECT_FALSE(llvm::errorToBool(verifyHardware(testSwitch())));
}

TEST(AnalyticalCostModelTest, RooflineSwitchesFromComputeToMemoryBound) {
  AnalyticalCostModel model(testTorus());
  // bf16 at 400 FLOP/s, HBM at 50 B/s: the ridge is at 8 FLOP per byte.
  EXPECT_DOUBLE_EQ(model.einsumTime(4000, 100, ElementKind::BF16), 10.0);
  EXPECT_DOUBLE_EQ(model.einsumTime(800, 100, ElementKind::BF16), 2.0);
  EXPECT_DOUBLE_EQ(model.einsumTime(400, 100, ElementKind::BF16), 2.0);
  EXPECT_DOUBLE_EQ(model.einsumTime(800, 50, ElementKind::BF16), 2.0);
  // The element kind picks the peak: f32 at 100 FLOP/s is compute-bound
  // where bf16 was memory-bound.
  EXPECT_DOUBLE_EQ(model.einsumTime(800, 50, ElementKind::F32), 8.0);
  EXPECT_DOUBLE_EQ(model.einsumTime(800, 50, ElementKind::I8), 1.0);
}

TEST(AnalyticalCostModelTest, PermuteIsHopsTimesLatencyPlusBandwidth) {
  AnalyticalCostModel torus(testTorus());
  EXPECT_DOUBLE_EQ(torus.permuteTime(kShard, 1),
                   kLaunch + kAlpha + kShard / kB);
  EXPECT_DOUBLE_EQ(torus.permuteTime(kShard, 3),
                   kLaunch + 3 * kAlpha + kShard / kB);
  EXPECT_EQ(torus.permuteTime(kShard, 0), 0.0);

  AnalyticalCostModel switched(testSwitch());
  EXPECT_DOUBLE_EQ(switched.permuteTime(kShard, 3),
                   kLaunch + kAlpha + kShard / (4 * kB));
}

} // namespace
