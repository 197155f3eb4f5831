/*===- capi_test.c - overlap's C API from C -------------------------------===*\
|*                                                                            *|
|* Registers overlap through its C API, parses the 1-D MLP of the paper,      *|
|* runs ovl-overlap-pipeline (gate=always) and a textual pipeline, checks     *|
|* that asynchronous permutes appear, and simulates the result. Exits 0 on    *|
|* success; each failed check prints what it expected.                        *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "overlap-c/Dialect.h"
#include "overlap-c/Parse.h"
#include "overlap-c/Pipeline.h"
#include "overlap-c/Registration.h"
#include "overlap-c/Simulator.h"

#include "mlir-c/Diagnostics.h"
#include "mlir-c/IR.h"
#include "mlir-c/Support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

/* A growing string that MlirStringCallback appends to. */
typedef struct {
  char *data;
  size_t size;
} Buffer;

static void appendToBuffer(MlirStringRef piece, void *userData) {
  Buffer *buffer = (Buffer *)userData;
  char *grown = (char *)realloc(buffer->data, buffer->size + piece.length + 1);
  if (!grown)
    abort();
  memcpy(grown + buffer->size, piece.data, piece.length);
  buffer->size += piece.length;
  grown[buffer->size] = '\0';
  buffer->data = grown;
}

static char *printModule(MlirModule module) {
  Buffer buffer = {NULL, 0};
  mlirOperationPrint(mlirModuleGetOperation(module), appendToBuffer, &buffer);
  return buffer.data;
}

static void appendToStderr(MlirStringRef piece, void *userData) {
  (void)userData;
  fwrite(piece.data, 1, piece.length, stderr);
}

/* Counts diagnostics and prints them, so that an unexpected error says why. */
static int numDiagnostics = 0;
static MlirLogicalResult onDiagnostic(MlirDiagnostic diagnostic,
                                      void *userData) {
  (void)userData;
  ++numDiagnostics;
  fprintf(stderr, "diagnostic: ");
  mlirDiagnosticPrint(diagnostic, appendToStderr, NULL);
  fprintf(stderr, "\n");
  return mlirLogicalResultSuccess();
}

/* A grid with an axis of size 0, which MLIR 22's verifier of all_slice
   divides by. */
static const char *kEmptyAxis =
    "shard.grid @grid(shape = 0x4)\n"
    "func.func @f(%x: tensor<8x16xf32>) -> tensor<1x16xf32> {\n"
    "  %s = shard.all_slice %x on @grid grid_axes = [0, 1] slice_axis = 0 "
    ": tensor<8x16xf32> -> tensor<1x16xf32>\n"
    "  return %s : tensor<1x16xf32>\n"
    "}\n";

static const char *kProgram =
    "shard.grid @ring(shape = 4)\n"
    "func.func @mlp(%x: tensor<4x32xf32>, %w1: tensor<32x16xf32>,\n"
    "               %w2: tensor<16x32xf32>) -> tensor<4x32xf32> {\n"
    "  %w1_full = ovl.all_gather %w1 on @ring axes [0] dim 1\n"
    "      : tensor<32x16xf32> -> tensor<32x64xf32>\n"
    "  %h = ovl.einsum \"bf,fh->bh\" %x, %w1_full\n"
    "      : tensor<4x32xf32>, tensor<32x64xf32> -> tensor<4x64xf32>\n"
    "  %zero = arith.constant dense<0.0> : tensor<4x64xf32>\n"
    "  %relu = arith.maximumf %h, %zero : tensor<4x64xf32>\n"
    "  %w2_full = ovl.all_gather %w2 on @ring axes [0] dim 0\n"
    "      : tensor<16x32xf32> -> tensor<64x32xf32>\n"
    "  %y = ovl.einsum \"bh,hf->bf\" %relu, %w2_full\n"
    "      : tensor<4x64xf32>, tensor<64x32xf32> -> tensor<4x32xf32>\n"
    "  return %y : tensor<4x32xf32>\n"
    "}\n";

int main(void) {
  /* Registration: the dialect handle alone, then everything. */
  MlirDialectHandle ovl = mlirGetDialectHandle__ovl__();
  MlirStringRef ns = mlirDialectHandleGetNamespace(ovl);
  CHECK(mlirStringRefEqual(ns, mlirStringRefCreateFromCString("ovl")));

  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  overlapRegisterAllDialects(registry);
  mlirDialectHandleInsertDialect(ovl, registry); /* harmless twice */
  overlapRegisterAllPasses();
  overlapRegisterAllPasses(); /* idempotent */

  MlirContext ctx = mlirContextCreateWithRegistry(registry,
                                                  /*threadingEnabled=*/false);
  mlirDialectRegistryDestroy(registry);
  MlirDiagnosticHandlerID handler =
      mlirContextAttachDiagnosticHandler(ctx, onDiagnostic, NULL, NULL);
  CHECK(!mlirDialectIsNull(mlirDialectHandleLoadDialect(ovl, ctx)));

  /* overlapModuleCreateParse reads as the tools do: the grid is refused
     with an error, where mlirModuleCreateParse dies of SIGFPE. */
  CHECK(mlirModuleIsNull(overlapModuleCreateParse(
      ctx, mlirStringRefCreateFromCString(kEmptyAxis))));
  CHECK(numDiagnostics > 0);
  MlirModule parsed =
      overlapModuleCreateParse(ctx, mlirStringRefCreateFromCString(kProgram));
  CHECK(!mlirModuleIsNull(parsed));
  if (!mlirModuleIsNull(parsed))
    mlirModuleDestroy(parsed);
  numDiagnostics = 0; /* the checks below count from here */

  /* ovl-overlap-pipeline with one call. */
  MlirModule module =
      mlirModuleCreateParse(ctx, mlirStringRefCreateFromCString(kProgram));
  CHECK(!mlirModuleIsNull(module));
  if (mlirModuleIsNull(module))
    return 1;
  CHECK(mlirLogicalResultIsSuccess(overlapRunOverlapPipeline(
      module, mlirStringRefCreateFromCString("gate=always unroll=2"))));
  char *text = printModule(module);
  CHECK(text && strstr(text, "ovl.collective_permute_start"));
  CHECK(text && strstr(text, "ovl.collective_permute_done"));
  CHECK(text && !strstr(text, "ovl.all_gather"));
  free(text);

  /* Its report as JSON, through the callback and as an owned string. */
  Buffer json = {NULL, 0};
  CHECK(mlirLogicalResultIsSuccess(overlapSimulate(
      module, mlirStringRefCreateFromCString(""),
      mlirStringRefCreateFromCString("tpu-v4"),
      mlirStringRefCreateFromCString(""), 0, NULL, 0, appendToBuffer, &json)));
  CHECK(json.data && strstr(json.data, "\"step_time_s\""));
  CHECK(json.data && strstr(json.data, "\"num_devices\": 4"));
  free(json.data);
  CHECK(numDiagnostics == 0);
  /* The pipeline recorded its machine (the default topology): another one
     given explicitly is simulated, with a warning. */
  char *owned =
      overlapSimulateToJSON(module, mlirStringRefCreateFromCString("mlp"),
                            mlirStringRefCreateFromCString(""),
                            mlirStringRefCreateFromCString("4x1x1"));
  CHECK(owned && strstr(owned, "\"overlap_fraction\""));
  CHECK(owned && strstr(owned, "4x1x1"));
  overlapStringFree(owned);
  CHECK(numDiagnostics == 1);
  mlirModuleDestroy(module);

  /* A textual pipeline, with and without the builtin.module wrapper. */
  MlirModule again =
      mlirModuleCreateParse(ctx, mlirStringRefCreateFromCString(kProgram));
  CHECK(mlirLogicalResultIsSuccess(overlapRunPassPipeline(
      again, mlirStringRefCreateFromCString(
                 "builtin.module(ovl-overlap-pipeline{gate=always})"))));
  text = printModule(again);
  CHECK(text && strstr(text, "ovl.collective_permute_start"));
  free(text);
  /* MLIR's general transforms are registered too. */
  CHECK(mlirLogicalResultIsSuccess(overlapRunPassPipeline(
      again, mlirStringRefCreateFromCString(
                 "builtin.module(canonicalize,cse,symbol-dce)"))));
  mlirModuleDestroy(again);

  /* Failures are diagnostics on the context, not crashes. */
  MlirModule third =
      mlirModuleCreateParse(ctx, mlirStringRefCreateFromCString(kProgram));
  numDiagnostics = 0;
  CHECK(mlirLogicalResultIsFailure(overlapRunOverlapPipeline(
      third, mlirStringRefCreateFromCString("algorithm=sideways"))));
  CHECK(numDiagnostics == 1);
  CHECK(mlirLogicalResultIsFailure(overlapRunPassPipeline(
      third, mlirStringRefCreateFromCString("no-such-pass"))));
  CHECK(numDiagnostics == 2);
  CHECK(overlapSimulateToJSON(third, mlirStringRefCreateFromCString("nope"),
                              mlirStringRefCreateFromCString(""),
                              mlirStringRefCreateFromCString("")) == NULL);
  CHECK(numDiagnostics == 3);
  CHECK(mlirLogicalResultIsFailure(overlapSimulate(
      third, mlirStringRefCreateFromCString(""),
      mlirStringRefCreateFromCString("no-such-chip"),
      mlirStringRefCreateFromCString(""), 0, NULL, 0, appendToBuffer, &json)));
  CHECK(numDiagnostics == 4);
  mlirModuleDestroy(third);

  mlirContextDetachDiagnosticHandler(ctx, handler);
  mlirContextDestroy(ctx);
  if (failures)
    fprintf(stderr, "%d check(s) failed\n", failures);
  else
    printf("capi_test: all checks passed\n");
  return failures ? 1 : 0;
}
