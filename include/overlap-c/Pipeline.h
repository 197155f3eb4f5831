/*===-- overlap-c/Pipeline.h - Run overlap's pipelines ------------*- C -*-===*\
|*                                                                            *|
|* Entry points that run a pass pipeline on a module in place. Failures      *|
|* (a bad option string, a pass that fails) are reported as diagnostics on   *|
|* the module's context: attach a handler with mlirContextAttachDiagnostic-  *|
|* Handler to see them.                                                       *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef OVERLAP_C_PIPELINE_H
#define OVERLAP_C_PIPELINE_H

#include "mlir-c/IR.h"
#include "mlir-c/Support.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Runs `ovl-overlap-pipeline` (gate, decompose, async permutes, cleanup,
/// schedule) on `module`. `options` is the pipeline's option string as on the
/// command line, e.g. "gate=always unroll=2 hardware=tpu-v5p"; an empty
/// string takes the defaults. The module's context must have the overlap
/// dialects (overlapRegisterAllDialects); the passes need not be registered.
MLIR_CAPI_EXPORTED MlirLogicalResult
overlapRunOverlapPipeline(MlirModule module, MlirStringRef options);

/// Runs a textual pass pipeline anchored on builtin.module, with or without
/// the `builtin.module(...)` wrapper, e.g.
/// "ovl-overlap-pipeline{gate=always},ovl-to-llvm". Pipelines and passes are
/// looked up in the global registry: call overlapRegisterAllPasses first.
MLIR_CAPI_EXPORTED MlirLogicalResult
overlapRunPassPipeline(MlirModule module, MlirStringRef pipeline);

#ifdef __cplusplus
}
#endif

#endif // OVERLAP_C_PIPELINE_H
