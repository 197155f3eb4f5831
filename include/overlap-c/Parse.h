/*===-- overlap-c/Parse.h - Read a module as overlap's tools do ---*- C -*-===*\
|*                                                                            *|
|* Parses and verifies a module as overlap-sim and overlap-run read their    *|
|* input: grids with an axis of size 0 are refused before MLIR 22's shard    *|
|* verifiers divide by them (mlirModuleCreateParse dies of SIGFPE there).    *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef OVERLAP_C_PARSE_H
#define OVERLAP_C_PARSE_H

#include "mlir-c/IR.h"
#include "mlir-c/Support.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Parses `text` (from a NUL-terminated copy) into a module of `context`
/// and verifies it; a null module after the errors, which go to the
/// context's diagnostic handlers.
MLIR_CAPI_EXPORTED MlirModule overlapModuleCreateParse(MlirContext context,
                                                       MlirStringRef text);

#ifdef __cplusplus
}
#endif

#endif // OVERLAP_C_PARSE_H
