//===- Passes.h - Lowering passes of overlap --------------------*- C++ -*-===//

#ifndef OVERLAPDIALECT_CONVERSION_PASSES_H
#define OVERLAPDIALECT_CONVERSION_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;

namespace ovl {

#define GEN_PASS_DECL
#include "OverlapDialect/Conversion/Passes.h.inc"

/// Patterns that rewrite ovl.einsum into linalg.generic.
void populateEinsumToLinalgPatterns(RewritePatternSet &patterns);

#define GEN_PASS_REGISTRATION
#include "OverlapDialect/Conversion/Passes.h.inc"

} // namespace ovl
} // namespace mlir

#endif // OVERLAPDIALECT_CONVERSION_PASSES_H
