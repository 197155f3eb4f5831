//===- OvlTypes.td - Types of the ovl dialect --------------*- tablegen -*-===//
//
// The token that ties an asynchronous permute's start to its done.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAP_DIALECT_OVL_IR_OVLTYPES_TD
#define OVERLAP_DIALECT_OVL_IR_OVLTYPES_TD

include "mlir/IR/AttrTypeBase.td"
include "OverlapDialect/Dialect/Ovl/IR/OvlDialect.td"

class Ovl_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<Ovl_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

def Ovl_TokenType : Ovl_Type<"Token", "token"> {
  let summary = "Handle of an asynchronous transfer in flight";
  let description = [{
    The future-like value that `ovl.collective_permute_start` returns and
    `ovl.collective_permute_done` consumes. It carries no data: the data
    arrives in the start's pending tensor, which only the done makes
    readable. A token can travel through `scf.for` iteration arguments so a
    transfer stays in flight across a loop's back edge.

    ```mlir
    %pending, %token = ovl.collective_permute_start %x into %buf on @grid
        axes [0] pairs [0 -> 1, 1 -> 0] : tensor<4x8xf32>
    // %token : !ovl.token
    ```
  }];
}

#endif // OVERLAP_DIALECT_OVL_IR_OVLTYPES_TD
