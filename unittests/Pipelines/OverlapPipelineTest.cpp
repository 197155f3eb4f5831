//===- OverlapPipelineTest.cpp - The pipeline from C++ --------------------===//
//
// An embedder builds ovl-overlap-pipeline with one call and runs it on a
// module of its own; the options reach the passes.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/InitAll.h"
#include "OverlapDialect/Pipelines/Pipelines.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

using namespace mlir;

namespace {

constexpr const char *kProgram = R"mlir(
shard.grid @ring(shape = 4)
func.func @f(%x: tensor<8192x4096xbf16>, %w: tensor<4096x4096xbf16>)
    -> tensor<8192x16384xf32> {
  %g = ovl.all_gather %w on @ring axes [0] dim 1
      : tensor<4096x4096xbf16> -> tensor<4096x16384xbf16>
  %y = ovl.einsum "bf,fh->bh" %x, %g
      : tensor<8192x4096xbf16>, tensor<4096x16384xbf16> -> tensor<8192x16384xf32>
  return %y : tensor<8192x16384xf32>
}
)mlir";

/// Runs the pipeline with `options` and returns the printed module.
std::string runPipeline(const overlap::OverlapPipelineOptions &options) {
  DialectRegistry registry;
  overlap::registerAllDialects(registry);
  MLIRContext context(registry);
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(kProgram, &context);
  EXPECT_TRUE(module);
  PassManager pm(&context);
  overlap::buildOverlapPipeline(pm, options);
  EXPECT_TRUE(succeeded(pm.run(*module)));
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os);
  return text;
}

TEST(OverlapPipelineTest, DecomposesWhereTheGatePays) {
  overlap::OverlapPipelineOptions options;
  options.topology = "4x4x4";
  std::string text = runPipeline(options);
  EXPECT_EQ(text.find("ovl.all_gather"), std::string::npos) << text;
  EXPECT_NE(text.find("ovl.collective_permute_start"), std::string::npos);
  EXPECT_NE(text.find("ovl.collective_permute_done"), std::string::npos);
}

TEST(OverlapPipelineTest, GateNeverKeepsTheCollective) {
  overlap::OverlapPipelineOptions options;
  options.gate = mlir::ovl::DecomposeGate::Never;
  std::string text = runPipeline(options);
  EXPECT_NE(text.find("ovl.all_gather"), std::string::npos) << text;
  EXPECT_EQ(text.find("collective_permute"), std::string::npos);
}

} // namespace
