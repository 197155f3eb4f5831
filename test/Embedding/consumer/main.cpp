//===- main.cpp - An out-of-tree embedder of overlap ----------------------===//
//
// Registers everything overlap provides with one call each, parses the 1-D
// MLP, builds ovl-overlap-pipeline with one call, runs it and prints the
// result. Exit status 0 on success.
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

static const char *kProgram = R"mlir(
shard.grid @ring(shape = 4)
func.func @mlp(%x: tensor<4x32xf32>, %w1: tensor<32x16xf32>,
               %w2: tensor<16x32xf32>) -> tensor<4x32xf32> {
  %w1_full = ovl.all_gather %w1 on @ring axes [0] dim 1
      : tensor<32x16xf32> -> tensor<32x64xf32>
  %h = ovl.einsum "bf,fh->bh" %x, %w1_full
      : tensor<4x32xf32>, tensor<32x64xf32> -> tensor<4x64xf32>
  %zero = arith.constant dense<0.0> : tensor<4x64xf32>
  %relu = arith.maximumf %h, %zero : tensor<4x64xf32>
  %w2_full = ovl.all_gather %w2 on @ring axes [0] dim 0
      : tensor<16x32xf32> -> tensor<64x32xf32>
  %y = ovl.einsum "bh,hf->bf" %relu, %w2_full
      : tensor<4x64xf32>, tensor<64x32xf32> -> tensor<4x32xf32>
  return %y : tensor<4x32xf32>
}
)mlir";

int main() {
  mlir::DialectRegistry registry;
  overlap::registerAllDialects(registry);
  overlap::registerAllPasses();
  mlir::MLIRContext context(registry);

  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(kProgram, &context);
  if (!module)
    return 1;

  overlap::OverlapPipelineOptions options;
  options.gate = mlir::ovl::DecomposeGate::Always;
  mlir::PassManager pm(&context);
  overlap::buildOverlapPipeline(pm, options);
  if (mlir::failed(pm.run(*module)))
    return 1;
  module->print(llvm::outs());
  llvm::outs() << "\n";
  return 0;
}
