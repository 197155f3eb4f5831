//===- BufferizableOpInterfaceImpl.h - Bufferizing ovl ops ------*- C++ -*-===//
//
// One-Shot Bufferize support for the ovl collectives: each tensor collective
// becomes its `ovl.buffer.*` form on memrefs.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAPDIALECT_DIALECT_OVL_TRANSFORMS_BUFFERIZABLEOPINTERFACEIMPL_H
#define OVERLAPDIALECT_DIALECT_OVL_TRANSFORMS_BUFFERIZABLEOPINTERFACEIMPL_H

namespace mlir {
class DialectRegistry;

namespace ovl {
/// Attaches the BufferizableOpInterface models to the ovl ops.
void registerBufferizableOpInterfaceExternalModels(DialectRegistry &registry);
} // namespace ovl
} // namespace mlir

#endif // OVERLAPDIALECT_DIALECT_OVL_TRANSFORMS_BUFFERIZABLEOPINTERFACEIMPL_H
