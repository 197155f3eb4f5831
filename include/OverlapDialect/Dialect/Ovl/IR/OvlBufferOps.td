//===- OvlBufferOps.td - Buffer forms of the ovl collectives -*- tablegen -*-===//
//
// What the tensor collectives become after bufferization: the same
// communication on memrefs, in destination-passing style, with exact memory
// effects so buffer deallocation and later passes understand them. They map
// one to one onto the runtime's `ovlrt_*` entry points.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAP_DIALECT_OVL_IR_OVLBUFFEROPS_TD
#define OVERLAP_DIALECT_OVL_IR_OVLBUFFEROPS_TD

class Ovl_BufferCollectiveOp<string mnemonic, list<Trait> traits = []>
    : Ovl_Op<"buffer." # mnemonic, !listconcat(traits, [
        Ovl_Communicates, DeclareOpInterfaceMethods<SymbolUserOpInterface>])> {
  dag gridArgs = (ins FlatSymbolRefAttr:$grid, Ovl_GridAxesAttr:$grid_axes);
}

def Ovl_BufferAllGatherOp : Ovl_BufferCollectiveOp<"all_gather"> {
  let summary = "`ovl.all_gather` on buffers";
  let description = [{
    Writes into `out` the concatenation along `dim` of the group's `in`
    buffers. Produced by bufferizing `ovl.all_gather`.

    ```mlir
    ovl.buffer.all_gather %in into %out on @grid axes [0] dim 1
        : memref<8x4xf32>, memref<8x16xf32>
    ```

    **Constraints:** those of `ovl.all_gather`, on the buffer shapes.
  }];
  let arguments = !con(
      (ins Arg<AnyStridedMemRef, "", [MemRead]>:$input,
           Arg<AnyStridedMemRef, "", [MemWrite]>:$output),
      gridArgs, (ins Ovl_TensorDimAttr:$gather_dim));
  let assemblyFormat = [{
    $input `into` $output `on` $grid `axes` $grid_axes `dim` $gather_dim
    attr-dict `:` type($input) `,` type($output)
  }];
  let hasVerifier = 1;
}

def Ovl_BufferReduceScatterOp : Ovl_BufferCollectiveOp<"reduce_scatter"> {
  let summary = "`ovl.reduce_scatter` on buffers";
  let description = [{
    Writes into `out` this device's part of the group's reduced `in`
    buffers. Produced by bufferizing `ovl.reduce_scatter`.

    ```mlir
    ovl.buffer.reduce_scatter %in into %out on @grid axes [0] dim 0
        : memref<8x16xf32>, memref<2x16xf32>
    ```

    **Constraints:** those of `ovl.reduce_scatter`, on the buffer shapes.
  }];
  let arguments = !con(
      (ins Arg<AnyStridedMemRef, "", [MemRead]>:$input,
           Arg<AnyStridedMemRef, "", [MemWrite]>:$output),
      gridArgs,
      (ins Ovl_TensorDimAttr:$scatter_dim,
           DefaultValuedAttr<Ovl_ReductionKindAttr,
                             "ReductionKind::Sum">:$reduction));
  let assemblyFormat = [{
    $input `into` $output `on` $grid `axes` $grid_axes `dim` $scatter_dim
    (`reduce` custom<ReductionKind>($reduction)^)? attr-dict `:`
    type($input) `,` type($output)
  }];
  let hasVerifier = 1;
}

def Ovl_BufferAllReduceOp : Ovl_BufferCollectiveOp<"all_reduce"> {
  let summary = "`ovl.all_reduce` on buffers";
  let description = [{
    Writes into `out` the group's `in` buffers reduced elementwise.
    Produced by bufferizing `ovl.all_reduce`.

    ```mlir
    ovl.buffer.all_reduce %in into %out on @grid axes [0, 1]
        : memref<8x16xf32>, memref<8x16xf32>
    ```

    **Constraints:** those of `ovl.all_reduce`; `in` and `out` have the same
    shape and element type.
  }];
  let arguments = !con(
      (ins Arg<AnyStridedMemRef, "", [MemRead]>:$input,
           Arg<AnyStridedMemRef, "", [MemWrite]>:$output),
      gridArgs,
      (ins DefaultValuedAttr<Ovl_ReductionKindAttr,
                             "ReductionKind::Sum">:$reduction));
  let assemblyFormat = [{
    $input `into` $output `on` $grid `axes` $grid_axes
    (`reduce` custom<ReductionKind>($reduction)^)? attr-dict `:`
    type($input) `,` type($output)
  }];
  let hasVerifier = 1;
}

def Ovl_BufferPermuteOp : Ovl_BufferCollectiveOp<"permute"> {
  let summary = "`ovl.collective_permute` on buffers";
  let description = [{
    Sends `in` along the pairs and writes what arrives into `out`.
    Produced by bufferizing `ovl.collective_permute`.

    ```mlir
    ovl.buffer.permute %in into %out on @ring axes [0]
        pairs [0 -> 1, 1 -> 0] : memref<4xf32>, memref<4xf32>
    ```

    **Constraints:** those of `ovl.collective_permute`; `in` and `out` have
    the same shape and element type.
  }];
  let arguments = !con(
      (ins Arg<AnyStridedMemRef, "", [MemRead]>:$input,
           Arg<AnyStridedMemRef, "", [MemWrite]>:$output),
      gridArgs, (ins DenseI64ArrayAttr:$pairs));
  let assemblyFormat = [{
    $input `into` $output `on` $grid `axes` $grid_axes `pairs`
    custom<PermutePairs>($pairs) attr-dict `:` type($input) `,` type($output)
  }];
  let hasVerifier = 1;
}

def Ovl_BufferPermuteStartOp : Ovl_BufferCollectiveOp<"permute_start"> {
  let summary = "`ovl.collective_permute_start` on buffers";
  let description = [{
    Starts sending `in` along the pairs into the peers' `out` buffers and
    returns the transfer's token at once. Until the matching
    `ovl.buffer.permute_done`, `in` must not be written and `out` must not
    be read.

    ```mlir
    %token = ovl.buffer.permute_start %in into %out on @ring axes [0]
        pairs [0 -> 1, 1 -> 0] : memref<4xf32>, memref<4xf32>
    ```

    **Constraints:** those of `ovl.collective_permute_start`, except that the
    token may have any number of uses once bufferized.
  }];
  let arguments = !con(
      (ins Arg<AnyStridedMemRef, "", [MemRead]>:$input,
           Arg<AnyStridedMemRef, "", [MemWrite]>:$output),
      gridArgs, (ins DenseI64ArrayAttr:$pairs));
  let results = (outs Ovl_TokenType:$token);
  let assemblyFormat = [{
    $input `into` $output `on` $grid `axes` $grid_axes `pairs`
    custom<PermutePairs>($pairs) attr-dict `:` type($input) `,` type($output)
  }];
  let hasVerifier = 1;
}

def Ovl_BufferPermuteDoneOp
    : Ovl_Op<"buffer.permute_done", [Ovl_Communicates]> {
  let summary = "`ovl.collective_permute_done` on buffers";
  let description = [{
    Waits for the transfer `token` names. Reads and writes `out` (the data
    lands there) and reads `in` (the send is complete only now), so that no
    pass moves an access to either across the wait.

    ```mlir
    ovl.buffer.permute_done %token keep(%in) into %out
        : memref<4xf32>, memref<4xf32>
    ```
  }];
  let arguments = (ins Ovl_TokenType:$token,
                       Arg<AnyStridedMemRef, "", [MemRead]>:$input,
                       Arg<AnyStridedMemRef, "", [MemRead, MemWrite]>:$output);
  let assemblyFormat = [{
    $token `keep` `(` $input `)` `into` $output attr-dict `:` type($input) `,`
    type($output)
  }];
}

def Ovl_BufferAllGatherStartOp : Ovl_BufferCollectiveOp<"all_gather_start"> {
  let summary = "`ovl.all_gather_start` on buffers";
  let description = [{
    Starts `ovl.buffer.all_gather` and returns its token at once. Until the
    matching `ovl.buffer.collective_done`, `in` must not be written and
    `out` must not be read.

    ```mlir
    %token = ovl.buffer.all_gather_start %in into %out on @grid axes [0]
        dim 1 : memref<8x4xf32>, memref<8x16xf32>
    ```

    **Constraints:** those of `ovl.buffer.all_gather`.
  }];
  let arguments = !con(
      (ins Arg<AnyStridedMemRef, "", [MemRead]>:$input,
           Arg<AnyStridedMemRef, "", [MemWrite]>:$output),
      gridArgs, (ins Ovl_TensorDimAttr:$gather_dim));
  let results = (outs Ovl_TokenType:$token);
  let assemblyFormat = [{
    $input `into` $output `on` $grid `axes` $grid_axes `dim` $gather_dim
    attr-dict `:` type($input) `,` type($output)
  }];
  let hasVerifier = 1;
}

def Ovl_BufferReduceScatterStartOp
    : Ovl_BufferCollectiveOp<"reduce_scatter_start"> {
  let summary = "`ovl.reduce_scatter_start` on buffers";
  let description = [{
    Starts `ovl.buffer.reduce_scatter` and returns its token at once, with
    the contract of `ovl.buffer.all_gather_start`.

    ```mlir
    %token = ovl.buffer.reduce_scatter_start %in into %out on @grid axes [0]
        dim 0 : memref<8x16xf32>, memref<2x16xf32>
    ```

    **Constraints:** those of `ovl.buffer.reduce_scatter`.
  }];
  let arguments = !con(
      (ins Arg<AnyStridedMemRef, "", [MemRead]>:$input,
           Arg<AnyStridedMemRef, "", [MemWrite]>:$output),
      gridArgs,
      (ins Ovl_TensorDimAttr:$scatter_dim,
           DefaultValuedAttr<Ovl_ReductionKindAttr,
                             "ReductionKind::Sum">:$reduction));
  let results = (outs Ovl_TokenType:$token);
  let assemblyFormat = [{
    $input `into` $output `on` $grid `axes` $grid_axes `dim` $scatter_dim
    (`reduce` custom<ReductionKind>($reduction)^)? attr-dict `:`
    type($input) `,` type($output)
  }];
  let hasVerifier = 1;
}

def Ovl_BufferAllReduceStartOp : Ovl_BufferCollectiveOp<"all_reduce_start"> {
  let summary = "`ovl.all_reduce_start` on buffers";
  let description = [{
    Starts `ovl.buffer.all_reduce` and returns its token at once, with the
    contract of `ovl.buffer.all_gather_start`.

    ```mlir
    %token = ovl.buffer.all_reduce_start %in into %out on @grid axes [0, 1]
        : memref<8x16xf32>, memref<8x16xf32>
    ```

    **Constraints:** those of `ovl.buffer.all_reduce`.
  }];
  let arguments = !con(
      (ins Arg<AnyStridedMemRef, "", [MemRead]>:$input,
           Arg<AnyStridedMemRef, "", [MemWrite]>:$output),
      gridArgs,
      (ins DefaultValuedAttr<Ovl_ReductionKindAttr,
                             "ReductionKind::Sum">:$reduction));
  let results = (outs Ovl_TokenType:$token);
  let assemblyFormat = [{
    $input `into` $output `on` $grid `axes` $grid_axes
    (`reduce` custom<ReductionKind>($reduction)^)? attr-dict `:`
    type($input) `,` type($output)
  }];
  let hasVerifier = 1;
}

def Ovl_BufferCollectiveDoneOp
    : Ovl_Op<"buffer.collective_done", [Ovl_Communicates]> {
  let summary = "`ovl.collective_done` on buffers";
  let description = [{
    Waits for the asynchronous all_gather, reduce_scatter or all_reduce
    `token` names. Reads and writes `out` (the result lands there) and reads
    `in` (the transfer reads it until now), so that no pass moves an access
    to either across the wait.

    ```mlir
    ovl.buffer.collective_done %token keep(%in) into %out
        : memref<8x4xf32>, memref<8x16xf32>
    ```
  }];
  let arguments = (ins Ovl_TokenType:$token,
                       Arg<AnyStridedMemRef, "", [MemRead]>:$input,
                       Arg<AnyStridedMemRef, "", [MemRead, MemWrite]>:$output);
  let assemblyFormat = [{
    $token `keep` `(` $input `)` `into` $output attr-dict `:` type($input) `,`
    type($output)
  }];
}

#endif // OVERLAP_DIALECT_OVL_IR_OVLBUFFEROPS_TD
