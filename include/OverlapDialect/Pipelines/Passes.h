//===- Passes.h - Passes of the lowering pipelines --------------*- C++ -*-===//

#ifndef OVERLAPDIALECT_PIPELINES_PASSES_H
#define OVERLAPDIALECT_PIPELINES_PASSES_H

#include "OverlapDialect/Dialect/Ovl/Transforms/Transforms.h"

#include "mlir/Pass/Pass.h"

namespace overlap {

#define GEN_PASS_DECL
#include "OverlapDialect/Pipelines/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "OverlapDialect/Pipelines/Passes.h.inc"

} // namespace overlap

#endif // OVERLAPDIALECT_PIPELINES_PASSES_H
