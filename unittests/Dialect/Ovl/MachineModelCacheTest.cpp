//===- MachineModelCacheTest.cpp - Tests of the shared machine cache ------===//
//
// The machines the cost-driven passes (ovl-decompose-collective-einsum,
// ovl-schedule) build from their hardware, topology and device-assignment
// options: one per grid shape, errors located on the collective, and the
// transfer time of a permute, blocking or started.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/Analysis/CostEstimates.h"
#include "OverlapDialect/Analysis/MachineModel.h"
#include "OverlapDialect/Dialect/Ovl/IR/OvlOps.h"
#include "OverlapDialect/InitAll.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

#include <string>

using namespace mlir;
using namespace mlir::ovl;

namespace {

class MachineModelCacheTest : public ::testing::Test {
protected:
  MachineModelCacheTest() {
    DialectRegistry registry;
    overlap::registerAllDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
    // Two grids of one shape, one of another; the permutes reach one and
    // three positions along a line of 8.
    module = parseSourceString<ModuleOp>(R"mlir(
      shard.grid @a(shape = 8)
      shard.grid @b(shape = 8)
      shard.grid @c(shape = 2x4)
      func.func @f(%x: tensor<256x256xf32>, %buf: tensor<256x256xf32>) {
        %0 = ovl.collective_permute %x on @a axes [0]
            pairs [0 -> 1, 1 -> 2, 2 -> 3, 3 -> 4, 4 -> 5, 5 -> 6, 6 -> 7,
                   7 -> 0] : tensor<256x256xf32>
        %1 = ovl.collective_permute %x on @b axes [0]
            pairs [0 -> 1, 1 -> 2, 2 -> 3, 3 -> 4, 4 -> 5, 5 -> 6, 6 -> 7,
                   7 -> 0] : tensor<256x256xf32>
        %2 = ovl.collective_permute %x on @c axes [1]
            pairs [0 -> 1, 1 -> 2, 2 -> 3, 3 -> 0] : tensor<256x256xf32>
        %p, %t = ovl.collective_permute_start %x into %buf on @a axes [0]
            pairs [0 -> 3, 1 -> 4, 2 -> 5, 3 -> 6, 4 -> 7, 5 -> 0, 6 -> 1,
                   7 -> 2] : tensor<256x256xf32>
        %3 = ovl.collective_permute_done %t keep(%x) into %p
            : tensor<256x256xf32>
        return
      }
    )mlir",
                                         &context);
    EXPECT_TRUE(module);
    module->walk([&](CollectiveOpInterface op) { collectives.push_back(op); });
    EXPECT_EQ(collectives.size(), 4u);
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  SmallVector<Operation *> collectives;
  SymbolTableCollection symbols;
};

/// Grids of one shape share a machine; another shape gets its own.
TEST_F(MachineModelCacheTest, BuildsOneMachinePerGridShape) {
  MachineModelCache machines("tpu-v4", "", {});
  FailureOr<const MachineModel *> a =
      machines.getOrEmitError(collectives[0], symbols);
  FailureOr<const MachineModel *> b =
      machines.getOrEmitError(collectives[1], symbols);
  FailureOr<const MachineModel *> c =
      machines.getOrEmitError(collectives[2], symbols);
  ASSERT_TRUE(succeeded(a) && succeeded(b) && succeeded(c));
  ASSERT_NE(*a, nullptr);
  EXPECT_EQ(*a, *b);
  EXPECT_NE(*a, *c);
  EXPECT_EQ((*c)->assignment.getNumLogicalDevices(), 8);
  llvm::Expected<const AnalyticalCostModel *> model = machines.getCostModel();
  ASSERT_TRUE(bool(model));
  EXPECT_EQ((*model)->getHardware().dmaSlots, 8u);
}

/// A machine that cannot be built is an error on the collective that
/// needed it, saying why.
TEST_F(MachineModelCacheTest, ReportsWhyAMachineCannotBeBuilt) {
  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    message = diag.str();
    return success();
  });
  MachineModelCache machines("tpu-v4", "1x1x2", {});
  EXPECT_TRUE(failed(machines.getOrEmitError(collectives[0], symbols)));
  EXPECT_EQ(message, "cannot map grid @a onto the machine: grid [8] has 8 "
                     "devices but topology 1x1x2 torus without wrap-around "
                     "has only 2");
  MachineModelCache unknown("tpu-v9", "", {});
  llvm::Expected<const AnalyticalCostModel *> model = unknown.getCostModel();
  ASSERT_FALSE(bool(model));
  EXPECT_NE(llvm::toString(model.takeError()).find("unknown hardware 'tpu-v9'"),
            std::string::npos);
}

/// A permute's transfer is priced with every group's transfers routed
/// together: the longest route's latency and the busiest link's bytes; a
/// start's transfer is priced like the blocking permute with its pairs.
TEST_F(MachineModelCacheTest, PricesPermuteTransfersOverTheirRoutes) {
  // A line of 8 chips without wrap-around: the shift by one closes the ring
  // over 7 hops, the shift by three over 5.
  MachineModelCache machines("tpu-v4", "8x1x1", {});
  const MachineModel *machine =
      *machines.getOrEmitError(collectives[0], symbols);
  double bytes = 256.0 * 256 * 4;
  int64_t oneStep = 0, threeSteps = 0;
  const DeviceAssignment &placed = machine->assignment;
  for (int64_t i = 0; i < 8; ++i) {
    oneStep =
        std::max(oneStep, machine->topology.hops(placed.physical(i),
                                                 placed.physical((i + 1) % 8)));
    threeSteps = std::max(threeSteps,
                          machine->topology.hops(placed.physical(i),
                                                 placed.physical((i + 3) % 8)));
  }
  EXPECT_EQ(oneStep, 7);
  EXPECT_EQ(threeSteps, 5);
  std::optional<double> blocking =
      estimatePermuteTransfer(collectives[0], *machine);
  ASSERT_TRUE(blocking.has_value());
  EXPECT_DOUBLE_EQ(*blocking, machine->costModel.permuteTime(bytes, oneStep));
  EXPECT_EQ(blocking, estimateCollective(collectives[0], *machine,
                                         RingDirection::Bidirectional));
  std::optional<double> started =
      estimatePermuteTransfer(collectives[3], *machine);
  ASSERT_TRUE(started.has_value());
  // Three transfers cross the links in the middle of the line each way
  // (1->4, 2->5 and 3->6 forward; 5->0, 6->1 and 7->2 back over 4->3), the
  // backward ones after 5 hops: launch + 5 alpha + 3 bytes / B.
  const HardwareDescription &hw = machine->hardware;
  EXPECT_DOUBLE_EQ(*started, hw.collectiveLaunchOverhead +
                                 threeSteps * hw.hopLatency +
                                 3 * bytes / hw.linkBandwidth);
  // Only permutes have a transfer of their own.
  EXPECT_FALSE(estimatePermuteTransfer(module->getOperation(), *machine));
}

} // namespace
