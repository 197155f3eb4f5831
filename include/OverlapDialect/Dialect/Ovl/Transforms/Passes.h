//===- Passes.h - Transformations of ovl programs ---------------*- C++ -*-===//

#ifndef OVERLAPDIALECT_DIALECT_OVL_TRANSFORMS_PASSES_H
#define OVERLAPDIALECT_DIALECT_OVL_TRANSFORMS_PASSES_H

#include "OverlapDialect/Dialect/Ovl/Transforms/Transforms.h"

#include "mlir/Pass/Pass.h"

namespace mlir::ovl {

#define GEN_PASS_DECL
#include "OverlapDialect/Dialect/Ovl/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "OverlapDialect/Dialect/Ovl/Transforms/Passes.h.inc"

} // namespace mlir::ovl

#endif // OVERLAPDIALECT_DIALECT_OVL_TRANSFORMS_PASSES_H
