//===- BufferizableOpInterfaceImpl.h - Bufferizing ovl ops ------*- C++ -*-===//
//
// One-Shot Bufferize support for the ovl collectives: each tensor collective
// becomes its `ovl.buffer.*` form on memrefs.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAPDIALECT_DIALECT_OVL_TRANSFORMS_BUFFERIZABLEOPINTERFACEIMPL_H
#define OVERLAPDIALECT_DIALECT_OVL_TRANSFORMS_BUFFERIZABLEOPINTERFACEIMPL_H

#include "mlir/Support/LLVM.h"

namespace mlir {
class DialectRegistry;
class Operation;

namespace ovl {
/// Attaches the BufferizableOpInterface models to the ovl ops.
void registerBufferizableOpInterfaceExternalModels(DialectRegistry &registry);

/// Fails, with the error bufferizing would give, on the first collective
/// under `root` that the models cannot bufferize (a blocking collective
/// whose result has a dynamic shape). One-Shot Bufferize stops at that op
/// after the passes before it rewrote the module; a pipeline checks first
/// to fail with the IR as it was.
LogicalResult checkBufferizable(Operation *root);
} // namespace ovl
} // namespace mlir

#endif // OVERLAPDIALECT_DIALECT_OVL_TRANSFORMS_BUFFERIZABLEOPINTERFACEIMPL_H
