//===- Dialect.cpp - C API of the ovl dialect -----------------------------===//

#include "overlap-c/Dialect.h"

#include "OverlapDialect/Dialect/Ovl/IR/OvlDialect.h"

#include "mlir/CAPI/Registration.h"

MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(Ovl, ovl, mlir::ovl::OvlDialect)
