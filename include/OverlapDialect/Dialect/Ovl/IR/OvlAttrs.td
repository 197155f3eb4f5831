//===- OvlAttrs.td - Attributes of the ovl dialect ---------*- tablegen -*-===//
//
// The reduction kinds that reduce_scatter and all_reduce combine with.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAP_DIALECT_OVL_IR_OVLATTRS_TD
#define OVERLAP_DIALECT_OVL_IR_OVLATTRS_TD

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "OverlapDialect/Dialect/Ovl/IR/OvlDialect.td"

def Ovl_ReductionKind : I32EnumAttr<"ReductionKind",
    "elementwise reduction of a collective", [
      I32EnumAttrCase<"Sum", 0, "sum">,
      I32EnumAttrCase<"Prod", 1, "prod">,
      I32EnumAttrCase<"Max", 2, "max">,
      I32EnumAttrCase<"Min", 3, "min">
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::ovl";
}

def Ovl_ReductionKindAttr
    : EnumAttr<Ovl_Dialect, Ovl_ReductionKind, "reduction"> {
  let summary = "How a reducing collective combines the devices' elements";
  let description = [{
    One of `sum` (the default), `prod`, `max`, `min`. In the generic form it
    reads `#ovl<reduction max>`; the ops print only the keyword.
  }];
}

#endif // OVERLAP_DIALECT_OVL_IR_OVLATTRS_TD
