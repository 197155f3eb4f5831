/*===-- overlap-c/Registration.h - Register everything overlap has -*- C
-*-===*\
|*                                                                            *|
|* The C form of OverlapDialect/InitAll.h, in the style of                    *|
|* mlir-c/RegisterEverything.h: the dialects overlap programs are written in  *|
|* and lowered through (with their interface models), and every overlap pass  *|
|* and pipeline.                                                              *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef OVERLAP_C_REGISTRATION_H
#define OVERLAP_C_REGISTRATION_H

#include "mlir-c/IR.h"
#include "mlir-c/Support.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Appends ovl and the upstream dialects and interface models overlap uses
/// (func, arith, tensor, scf, cf, linalg, shard, bufferization, memref, llvm,
/// ...) to `registry`. Follow with mlirContextAppendDialectRegistry.
MLIR_CAPI_EXPORTED void
overlapRegisterAllDialects(MlirDialectRegistry registry);

/// Registers every overlap pass and pipeline (`ovl-overlap-pipeline`,
/// `ovl-to-llvm`, ...) and MLIR's general transforms (`canonicalize`, `cse`,
/// `inline`, `symbol-dce`, `loop-invariant-code-motion`, ...) with the
/// global registry, so that textual pipelines (mlirParsePassPipeline,
/// overlapRunPassPipeline) find them. Idempotent.
MLIR_CAPI_EXPORTED void overlapRegisterAllPasses(void);

#ifdef __cplusplus
}
#endif

#endif // OVERLAP_C_REGISTRATION_H
