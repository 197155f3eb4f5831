/*===- main.c - A C-only embedder of overlap
-------------------------------===*\
|*                                                                            *|
|* Parses the 1-D MLP, runs ovl-overlap-pipeline and a textual pipeline with  *|
|* MLIR's canonicalize and cse through the C API, simulates the result and    *|
|* prints the program and the report. Exit status 0 on success.               *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "overlap-c/Dialect.h"
#include "overlap-c/Pipeline.h"
#include "overlap-c/Registration.h"
#include "overlap-c/Simulator.h"

#include "mlir-c/IR.h"

#include <stdio.h>

static const char *kProgram =
    "shard.grid @ring(shape = 4)\n"
    "func.func @mlp(%x: tensor<4x32xf32>, %w1: tensor<32x16xf32>) "
    "-> tensor<4x64xf32> {\n"
    "  %g = ovl.all_gather %w1 on @ring axes [0] dim 1\n"
    "      : tensor<32x16xf32> -> tensor<32x64xf32>\n"
    "  %h = ovl.einsum \"bf,fh->bh\" %x, %g\n"
    "      : tensor<4x32xf32>, tensor<32x64xf32> -> tensor<4x64xf32>\n"
    "  return %h : tensor<4x64xf32>\n"
    "}\n";

static void print(MlirStringRef text, void *userData) {
  fwrite(text.data, 1, text.length, (FILE *)userData);
}

int main(void) {
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  overlapRegisterAllDialects(registry);
  overlapRegisterAllPasses();
  MlirContext ctx = mlirContextCreateWithRegistry(registry, false);
  mlirDialectRegistryDestroy(registry);

  MlirModule module =
      mlirModuleCreateParse(ctx, mlirStringRefCreateFromCString(kProgram));
  if (mlirModuleIsNull(module))
    return 1;
  if (mlirLogicalResultIsFailure(overlapRunOverlapPipeline(
          module, mlirStringRefCreateFromCString("gate=always"))))
    return 2;
  if (mlirLogicalResultIsFailure(overlapRunPassPipeline(
          module,
          mlirStringRefCreateFromCString("builtin.module(canonicalize,cse)"))))
    return 3;
  mlirOperationPrint(mlirModuleGetOperation(module), print, stdout);
  if (mlirLogicalResultIsFailure(overlapSimulate(
          module, mlirStringRefCreateFromCString(""),
          mlirStringRefCreateFromCString("tpu-v4"),
          mlirStringRefCreateFromCString(""), 0, NULL, 0, print, stdout)))
    return 4;
  printf("\n");
  mlirModuleDestroy(module);
  mlirContextDestroy(ctx);
  return 0;
}
