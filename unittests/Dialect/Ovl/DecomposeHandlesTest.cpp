//===- DecomposeHandlesTest.cpp - What the rewrites return ----------------===//
//
// Each decomposition returns the loop it built, so that an embedder can go
// on transforming it: the scf.for now in the function, or null when the
// ring is too short for a loop.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/Dialect/Ovl/IR/OvlOps.h"
#include "OverlapDialect/Dialect/Ovl/Transforms/Transforms.h"
#include "OverlapDialect/InitAll.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::ovl;

namespace {

/// A gather feeding an einsum and an einsum feeding a scatter, whose
/// einsum also reads a gathered operand (the gather-scatter form), on a
/// ring of `devices`.
std::string makeProgram(int devices) {
  std::string n = std::to_string(devices);
  std::string wide = std::to_string(8 * devices);
  return R"mlir(
    shard.grid @ring(shape = )mlir" +
         n + R"mlir()
    func.func @gather(%x: tensor<16x32xf32>, %w: tensor<32x8xf32>)
        -> tensor<16x)mlir" +
         wide + R"mlir(xf32> {
      %g = ovl.all_gather %w on @ring axes [0] dim 1
          : tensor<32x8xf32> -> tensor<32x)mlir" +
         wide + R"mlir(xf32>
      %y = ovl.einsum "bf,fh->bh" %x, %g
          : tensor<16x32xf32>, tensor<32x)mlir" +
         wide + R"mlir(xf32> -> tensor<16x)mlir" + wide + R"mlir(xf32>
      return %y : tensor<16x)mlir" +
         wide + R"mlir(xf32>
    }
    func.func @scatter(%x: tensor<16x32xf32>, %w: tensor<32x)mlir" +
         wide + R"mlir(xf32>)
        -> tensor<16x8xf32> {
      %y = ovl.einsum "bf,fh->bh" %x, %w
          : tensor<16x32xf32>, tensor<32x)mlir" +
         wide + R"mlir(xf32> -> tensor<16x)mlir" + wide + R"mlir(xf32>
      %r = ovl.reduce_scatter %y on @ring axes [0] dim 1
          : tensor<16x)mlir" +
         wide + R"mlir(xf32> -> tensor<16x8xf32>
      return %r : tensor<16x8xf32>
    }
  )mlir";
}

/// The figure 3 einsum: a gather over axis 1 of a `scatter`x`gather` grid
/// feeding it, a scatter over axis 0 reading it.
std::string makeGatherScatterProgram(int scatter, int gather) {
  std::string grid = std::to_string(scatter) + "x" + std::to_string(gather);
  std::string full = std::to_string(8 * gather);
  std::string owned = std::to_string(8 * gather / scatter);
  return "shard.grid @grid(shape = " + grid + ")\n" +
         "func.func @fig3(%x: tensor<4x32xf32>, %w: tensor<32x8xf32>) -> "
         "tensor<4x" +
         owned + "xf32> {\n" +
         "  %wf = ovl.all_gather %w on @grid axes [1] dim 1 : "
         "tensor<32x8xf32> -> tensor<32x" +
         full + "xf32>\n" +
         "  %p = ovl.einsum \"bh,hf->bf\" %x, %wf : tensor<4x32xf32>, "
         "tensor<32x" +
         full + "xf32> -> tensor<4x" + full + "xf32>\n" +
         "  %y = ovl.reduce_scatter %p on @grid axes [0] dim 1 : tensor<4x" +
         full + "xf32> -> tensor<4x" + owned + "xf32>\n" +
         "  return %y : tensor<4x" + owned + "xf32>\n}\n";
}

class DecomposeHandles : public ::testing::Test {
protected:
  DecomposeHandles() {
    DialectRegistry registry;
    overlap::registerAllDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  /// Decomposes the last collective of function `name` of `program` with
  /// `loop`; the handle must name the scf.for of that function, or be null.
  Operation *decompose(const std::string &program, StringRef name,
                       DecomposeOptions loop) {
    module = parseSourceString<ModuleOp>(program, &context);
    EXPECT_TRUE(module);
    if (!module)
      return nullptr;
    auto func = module->lookupSymbol<func::FuncOp>(name);
    Operation *collective = nullptr;
    func.walk([&](Operation *op) {
      if (isa<AllGatherOp, ReduceScatterOp>(op))
        collective = op;
    });
    IRRewriter rewriter(&context);
    rewriter.setInsertionPoint(collective);
    FailureOr<DecomposedCollective> built =
        decomposeCollective(rewriter, collective, loop);
    EXPECT_TRUE(succeeded(built));
    if (failed(built))
      return nullptr;
    SmallVector<Operation *> loops;
    func.walk([&](scf::ForOp forOp) { loops.push_back(forOp); });
    EXPECT_LE(loops.size(), 1u);
    EXPECT_EQ(built->loop, loops.empty() ? nullptr : loops.front());
    return built->loop;
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

class DecomposeHandlesTest : public DecomposeHandles,
                             public ::testing::WithParamInterface<int> {};

TEST_P(DecomposeHandlesTest, TheHandleIsTheLoopBuilt) {
  bool longRing = GetParam() >= 4;
  for (StringRef name : {"gather", "scatter"})
    for (unsigned unroll : {1u, 2u}) {
      DecomposeOptions loop;
      loop.unroll = unroll;
      Operation *built = decompose(makeProgram(GetParam()), name, loop);
      // Four devices make rounds alike enough for a loop; two do not.
      EXPECT_EQ(built != nullptr, longRing)
          << name.str() << " unroll " << unroll;
      if (built)
        EXPECT_TRUE(isa<scf::ForOp>(built));
    }
}

INSTANTIATE_TEST_SUITE_P(Rings, DecomposeHandlesTest, ::testing::Values(2, 8));

TEST_F(DecomposeHandles, TheGatherScatterFormReturnsItsLoop) {
  DecomposeOptions withGather;
  withGather.withGather = true;
  // Gathering over 8 devices and scattering over 4, rounds 2 to 6 are
  // alike: a loop. Over 4 and 2, only round 2 is.
  Operation *built =
      decompose(makeGatherScatterProgram(4, 8), "fig3", withGather);
  EXPECT_TRUE(built && isa<scf::ForOp>(built));
  EXPECT_EQ(decompose(makeGatherScatterProgram(2, 4), "fig3", withGather),
            nullptr);
}

} // namespace
