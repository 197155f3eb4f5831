//===- OvlInterfaces.td - Interfaces of the ovl dialect ----*- tablegen -*-===//
//
// What the cost model asks of operations: the work an op does on one device
// and the bytes a collective sends from one device.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAP_DIALECT_OVL_IR_OVLINTERFACES_TD
#define OVERLAP_DIALECT_OVL_IR_OVLINTERFACES_TD

include "mlir/IR/OpBase.td"

def Ovl_CollectiveOpInterface : OpInterface<"CollectiveOpInterface"> {
  let cppNamespace = "::mlir::ovl";
  let description = [{
    An operation that communicates among the devices of groups spanned by
    some axes of a `shard.grid`. Gives the grid, the axes, what kind of
    communication it is and its payload, so that cost models, the simulator
    and the link-level lowering need not know the individual ops.
  }];
  let methods = [
    InterfaceMethod<"The `shard.grid` symbol the collective runs on.",
      "::mlir::FlatSymbolRefAttr", "getGridAttr", (ins), [{}],
      [{ return $_op.getGridAttr(); }]>,
    InterfaceMethod<"The grid axes that span each group.",
      "::llvm::ArrayRef<int16_t>", "getGridAxes", (ins), [{}],
      [{ return $_op.getGridAxes(); }]>,
    InterfaceMethod<[{
        Bytes one device sends when the collective runs with the
        bandwidth-optimal ring algorithm in a group of `groupSize` devices;
        `std::nullopt` when a shape is dynamic.
      }],
      "std::optional<int64_t>", "getBytesSentPerDevice",
      (ins "int64_t":$groupSize)>,
    InterfaceMethod<[{
        The blocking collective this is (all-gather, reduce-scatter,
        all-reduce), or `std::nullopt` for a point-to-point permute.
      }],
      "std::optional<::mlir::ovl::CollectiveKind>", "getCollectiveKind">,
    InterfaceMethod<[{
        The tensor whose bytes the cost model prices: the shard each device
        contributes (all-gather), the shard each device ends with
        (reduce-scatter), the buffer each device holds (all-reduce), the data
        each device sends (permutes).
      }],
      "::mlir::Type", "getPayloadType">,
    InterfaceMethod<[{
        The (source, target) group indices of a permute; empty for the
        other collectives.
      }],
      "::llvm::SmallVector<std::pair<int64_t, int64_t>>",
      "getSourceTargetPairs", (ins), [{}], [{ return {}; }]>,
  ];
  let extraClassDeclaration = [{
    /// The grid this collective names, or null when the symbol does not
    /// resolve to a `shard.grid`.
    ::mlir::shard::GridOp getGridOp(::mlir::SymbolTableCollection &symbols);
    /// Devices per group: the product of the grid's sizes along the axes,
    /// `ShapedType::kDynamic` when one of them is dynamic, and `std::nullopt`
    /// when the grid does not resolve.
    std::optional<int64_t> getGroupSize(::mlir::SymbolTableCollection &symbols);
  }];
}

def Ovl_ComputeCostOpInterface : OpInterface<"ComputeCostOpInterface"> {
  let cppNamespace = "::mlir::ovl";
  let description = [{
    An operation whose work a roofline cost model can price: arithmetic
    operations and bytes read plus written on one device.
  }];
  let methods = [
    InterfaceMethod<[{
        Floating-point (or integer) operations one device performs, counting
        a multiply-add as two; `std::nullopt` when a shape is dynamic.
      }],
      "std::optional<int64_t>", "getFlops">,
    InterfaceMethod<[{
        Bytes of operands read and results written, each once;
        `std::nullopt` when a shape is dynamic.
      }],
      "std::optional<int64_t>", "getBytesAccessed">,
  ];
}

def Ovl_AsyncStartOpInterface : OpInterface<"AsyncStartOpInterface"> {
  let cppNamespace = "::mlir::ovl";
  let description = [{
    The start of an asynchronous collective (`collective_permute_start`,
    `all_gather_start`, `reduce_scatter_start`, `all_reduce_start`): it
    reads `input`, returns at once with `pending` (the destination's
    storage, not yet readable) and a token, and its done makes `pending`
    readable. Passes that move, check or price start/done pairs (the
    scheduler, ovl-verify-collectives, the simulator's builder) see every
    kind through this interface.
  }];
  let methods = [
    InterfaceMethod<"The tensor sent (kept intact until the done).",
      "::mlir::TypedValue<::mlir::RankedTensorType>", "getInput", (ins), [{}],
      [{ return $_op.getInput(); }]>,
    InterfaceMethod<"The destination the result lands in.",
      "::mlir::TypedValue<::mlir::RankedTensorType>", "getDest", (ins), [{}],
      [{ return $_op.getDest(); }]>,
    InterfaceMethod<"The destination's storage, readable after the done.",
      "::mlir::TypedValue<::mlir::RankedTensorType>", "getPending", (ins),
      [{}], [{ return $_op.getPending(); }]>,
    InterfaceMethod<"The token the done waits on.",
      "::mlir::TypedValue<::mlir::ovl::TokenType>", "getToken", (ins), [{}],
      [{ return $_op.getToken(); }]>,
  ];
}

#endif // OVERLAP_DIALECT_OVL_IR_OVLINTERFACES_TD
