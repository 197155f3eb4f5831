//===- OvlCostInterfaceTest.cpp - Tests of the ops' cost interfaces -------===//
//
// The FLOPs and bytes that ovl ops report to cost models, against counts
// worked out by hand.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/Dialect/Ovl/IR/OvlOps.h"
#include "OverlapDialect/InitAll.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::ovl;

namespace {

class OvlCostInterfaceTest : public ::testing::Test {
protected:
  OvlCostInterfaceTest() {
    DialectRegistry registry;
    overlap::registerAllDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  /// Parses `body` inside a module with a 4x2 grid and returns the first op
  /// of type OpTy in it.
  template <typename OpTy> OpTy parseFirst(llvm::StringRef body) {
    std::string text = "shard.grid @grid(shape = 4x2)\n"
                       "func.func @f(%a: tensor<8x16xbf16>, "
                       "%b: tensor<16x32xbf16>, %c: tensor<8x32xf32>) {\n" +
                       body.str() + "\n  return\n}\n";
    module = parseSourceString<ModuleOp>(text, &context);
    if (!module) {
      ADD_FAILURE() << "failed to parse:\n" << text;
      return nullptr;
    }
    OpTy found;
    module->walk([&](OpTy op) {
      if (!found)
        found = op;
    });
    return found;
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

TEST_F(OvlCostInterfaceTest, EinsumCountsMultiplyAddAsTwo) {
  auto op = parseFirst<EinsumOp>(
      "%r = ovl.einsum \"bf,fh->bh\" %a, %b : tensor<8x16xbf16>, "
      "tensor<16x32xbf16> -> tensor<8x32xf32>");
  ASSERT_TRUE(op);
  auto cost = cast<ComputeCostOpInterface>(op.getOperation());
  EXPECT_EQ(cost.getFlops(), 2 * 8 * 16 * 32);
  // bf16 inputs (2 bytes) and an f32 result (4 bytes).
  EXPECT_EQ(cost.getBytesAccessed(), 8 * 16 * 2 + 16 * 32 * 2 + 8 * 32 * 4);
}

TEST_F(OvlCostInterfaceTest, EinsumAccumulatorAddsOneAddPerResult) {
  auto op = parseFirst<EinsumOp>(
      "%r = ovl.einsum \"bf,fh->bh\" %a, %b acc %c : tensor<8x16xbf16>, "
      "tensor<16x32xbf16> -> tensor<8x32xf32>");
  ASSERT_TRUE(op);
  EXPECT_EQ(op.getFlops(), 2 * 8 * 16 * 32 + 8 * 32);
  EXPECT_EQ(op.getBytesAccessed(), 8 * 16 * 2 + 16 * 32 * 2 + 2 * 8 * 32 * 4);
}

TEST_F(OvlCostInterfaceTest, OuterProductHasNoAdds) {
  auto op = parseFirst<EinsumOp>(
      "%r = ovl.einsum \"bf,fh->bfh\" %a, %b : tensor<8x16xbf16>, "
      "tensor<16x32xbf16> -> tensor<8x16x32xbf16>");
  ASSERT_TRUE(op);
  EXPECT_EQ(op.getFlops(), 8 * 16 * 32);
}

TEST_F(OvlCostInterfaceTest, RingCollectivesReportBytesPerDevice) {
  auto gather = parseFirst<AllGatherOp>(
      "%r = ovl.all_gather %a on @grid axes [0] dim 0 : tensor<8x16xbf16> "
      "-> tensor<32x16xbf16>");
  ASSERT_TRUE(gather);
  auto collective = cast<CollectiveOpInterface>(gather.getOperation());
  SymbolTableCollection symbols;
  EXPECT_EQ(collective.getGroupSize(symbols), 4);
  EXPECT_EQ(collective.getBytesSentPerDevice(4), 3 * 8 * 16 * 2);

  auto scatter = parseFirst<ReduceScatterOp>(
      "%r = ovl.reduce_scatter %c on @grid axes [0, 1] dim 1 : "
      "tensor<8x32xf32> -> tensor<8x4xf32>");
  ASSERT_TRUE(scatter);
  EXPECT_EQ(
      cast<CollectiveOpInterface>(scatter.getOperation()).getGroupSize(symbols),
      8);
  EXPECT_EQ(scatter.getBytesSentPerDevice(8), 7 * 8 * 4 * 4);

  auto reduce = parseFirst<AllReduceOp>(
      "%r = ovl.all_reduce %c on @grid axes [1] : tensor<8x32xf32>");
  ASSERT_TRUE(reduce);
  EXPECT_EQ(reduce.getBytesSentPerDevice(2), 2 * 1 * 8 * 32 * 4 / 2);
}

TEST_F(OvlCostInterfaceTest, PermuteSendsItsInputUnlessIdentity) {
  auto moving = parseFirst<CollectivePermuteOp>(
      "%r = ovl.collective_permute %a on @grid axes [1] pairs [0 -> 1, 1 -> "
      "0] : tensor<8x16xbf16>");
  ASSERT_TRUE(moving);
  EXPECT_EQ(moving.getBytesSentPerDevice(2), 8 * 16 * 2);
  auto staying = parseFirst<CollectivePermuteOp>(
      "%r = ovl.collective_permute %a on @grid axes [1] pairs [0 -> 0, 1 -> "
      "1] : tensor<8x16xbf16>");
  ASSERT_TRUE(staying);
  EXPECT_EQ(staying.getBytesSentPerDevice(2), 0);
}

} // namespace
