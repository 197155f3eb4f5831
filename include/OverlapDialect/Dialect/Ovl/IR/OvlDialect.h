//===- OvlDialect.h - The ovl dialect ---------------------------*- C++ -*-===//
//
// The dialect class, its token type and its reduction-kind attribute.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAPDIALECT_DIALECT_OVL_IR_OVLDIALECT_H
#define OVERLAPDIALECT_DIALECT_OVL_IR_OVLDIALECT_H

#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/IR/Dialect.h"

#include "OverlapDialect/Dialect/Ovl/IR/OvlDialect.h.inc"

#include "mlir/IR/Types.h"

#define GET_TYPEDEF_CLASSES
#include "OverlapDialect/Dialect/Ovl/IR/OvlTypes.h.inc"

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"

#include "OverlapDialect/Dialect/Ovl/IR/OvlEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "OverlapDialect/Dialect/Ovl/IR/OvlAttrs.h.inc"

#endif // OVERLAPDIALECT_DIALECT_OVL_IR_OVLDIALECT_H
