//===- OvlOps.h - Operations of the ovl dialect -----------------*- C++ -*-===//
//
// The ovl operations and the interfaces the cost model uses.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAPDIALECT_DIALECT_OVL_IR_OVLOPS_H
#define OVERLAPDIALECT_DIALECT_OVL_IR_OVLOPS_H

#include "OverlapDialect/CostModel/CollectiveKind.h"
#include "OverlapDialect/Dialect/Ovl/IR/EinsumEquation.h"
#include "OverlapDialect/Dialect/Ovl/IR/OvlDialect.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::ovl {

/// The side-effect resource of communication: every collective reads and
/// writes it, which keeps collectives in program order on every device.
struct CommunicationResource
    : public SideEffects::Resource::Base<CommunicationResource> {
  llvm::StringRef getName() final { return "ovl::Communication"; }
};

/// Bytes one element of `type` takes in memory and on the wire: integers
/// and floats rounded up to whole bytes, index as 64 bits, complex numbers
/// as two of their parts; nullopt for any other type, which no cost can be
/// given for. The one measure of element sizes of the cost model, the
/// simulator and the memory analysis.
std::optional<int64_t> getElementBytes(Type type);

} // namespace mlir::ovl

#include "OverlapDialect/Dialect/Ovl/IR/OvlInterfaces.h.inc"

#define GET_OP_CLASSES
#include "OverlapDialect/Dialect/Ovl/IR/OvlOps.h.inc"

#endif // OVERLAPDIALECT_DIALECT_OVL_IR_OVLOPS_H
