//===- OvlDialect.cpp - The ovl dialect -----------------------------------===//
//
// Registers the ovl operations, types and attributes.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/Dialect/Ovl/IR/OvlDialect.h"
#include "OverlapDialect/Dialect/Ovl/IR/OvlOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::ovl;

#include "OverlapDialect/Dialect/Ovl/IR/OvlDialect.cpp.inc"
#include "OverlapDialect/Dialect/Ovl/IR/OvlEnums.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "OverlapDialect/Dialect/Ovl/IR/OvlTypes.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "OverlapDialect/Dialect/Ovl/IR/OvlAttrs.cpp.inc"

void OvlDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "OverlapDialect/Dialect/Ovl/IR/OvlOps.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "OverlapDialect/Dialect/Ovl/IR/OvlTypes.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "OverlapDialect/Dialect/Ovl/IR/OvlAttrs.cpp.inc"
      >();
}
