/*===-- overlap-c/Dialect.h - C API of the ovl dialect ------------*- C -*-===*\
|*                                                                            *|
|* The dialect handle of `ovl`, as MLIR's own dialects expose theirs          *|
|* (mlir-c/Dialect/Func.h): register it into an MlirDialectRegistry or load   *|
|* it into an MlirContext with mlirDialectHandleInsertDialect /               *|
|* mlirDialectHandleLoadDialect.                                              *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef OVERLAP_C_DIALECT_H
#define OVERLAP_C_DIALECT_H

#include "mlir-c/IR.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Declares `MlirDialectHandle mlirGetDialectHandle__ovl__(void)`.
MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(Ovl, ovl);

#ifdef __cplusplus
}
#endif

#endif // OVERLAP_C_DIALECT_H
