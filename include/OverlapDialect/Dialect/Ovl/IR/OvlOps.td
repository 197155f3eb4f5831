//===- OvlOps.td - Operations of the ovl dialect -----------*- tablegen -*-===//
//
// The einsum, the collectives, the asynchronous permute pair and the
// partition id. Each description ends with the **Constraints** that its
// verifier checks, so the generated docs explain every diagnostic.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAP_DIALECT_OVL_IR_OVLOPS_TD
#define OVERLAP_DIALECT_OVL_IR_OVLOPS_TD

include "mlir/IR/BuiltinTypes.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/IR/CommonTypeConstraints.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/DestinationStyleOpInterface.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "OverlapDialect/Dialect/Ovl/IR/OvlDialect.td"
include "OverlapDialect/Dialect/Ovl/IR/OvlTypes.td"
include "OverlapDialect/Dialect/Ovl/IR/OvlAttrs.td"
include "OverlapDialect/Dialect/Ovl/IR/OvlInterfaces.td"

//===----------------------------------------------------------------------===//
// Common pieces
//===----------------------------------------------------------------------===//

// Communication is ordered: devices must issue their collectives in the same
// order, so no pass may reorder, merge or drop them as if they were pure.
def Ovl_CommunicationResource
    : Resource<"::mlir::ovl::CommunicationResource">;
def Ovl_Communicates : MemoryEffects<[MemRead<Ovl_CommunicationResource>,
                                      MemWrite<Ovl_CommunicationResource>]>;

def Ovl_GridAxesAttr : DenseArrayAttrBase<"DenseI16ArrayAttr", "int16_t", "i16">;
def Ovl_TensorDimAttr : ConfinedAttr<I64Attr, [IntNonNegative]>;

class Ovl_CollectiveOp<string mnemonic, list<Trait> traits = []>
    : Ovl_Op<mnemonic, !listconcat(traits, [
        Ovl_Communicates,
        DeclareOpInterfaceMethods<SymbolUserOpInterface>,
        DeclareOpInterfaceMethods<Ovl_CollectiveOpInterface>])> {
  dag gridArgs = (ins FlatSymbolRefAttr:$grid, Ovl_GridAxesAttr:$grid_axes);
}

//===----------------------------------------------------------------------===//
// EinsumOp
//===----------------------------------------------------------------------===//

def Ovl_EinsumOp : Ovl_Op<"einsum", [
    Pure, AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<Ovl_ComputeCostOpInterface>,
    OptionalTypesMatchWith<"the accumulator has the result type",
                   "result", "acc", "$_self">]> {
  let summary = "Einstein summation on local tensors, optionally accumulated";
  let description = [{
    Computes the einsum given by `equation` on the device's local tensors.
    Every index letter names one dimension; letters in the output are kept,
    letters missing from the output are summed over. With two inputs each
    letter is one of:

    - *batch*: in both inputs and the output (`b` in `"bsf,bfh->bsh"`);
    - *contracting*: in both inputs, not in the output (`f`);
    - *free* of one input: in that input and the output (`s`, `h`);
    - *reduced* in one input: in that input only, summed before the product.

    The C++ class `ovl::EinsumEquation` parses the equation and classifies
    each dimension; the decomposition passes use it to tell the paper's
    AllGather cases 1 (free), 2 (contracting) and 3 (batch) apart.

    With `acc %c` the result is `%c + einsum(...)`: the decomposed loops
    accumulate partial results in the einsum itself rather than in a separate
    add that a pending transfer would have to wait for (section 5.4.3).

    Inputs share one element type. The result element type is the same, or a
    wider type of the same kind, so that bf16 products may accumulate in f32
    and i8 products in i32.

    ```mlir
    %y = ovl.einsum "bf,fh->bh" %x, %w
        : tensor<2x8xf32>, tensor<8x16xf32> -> tensor<2x16xf32>
    %z = ovl.einsum "bsf,bfh->bsh" %a, %b acc %z0
        : tensor<2x4x8xbf16>, tensor<2x8x16xbf16> -> tensor<2x4x16xf32>
    ```

    **Constraints:**
    - `equation` is `term,term,...->term`: each term a string of distinct
      letters `a-z`/`A-Z`; no ellipsis; every output letter occurs in an input.
    - one input per term, each input's rank equals its term's length;
    - a letter has the same size wherever it occurs, and the result's shape
      is the output term's sizes;
    - all inputs have the same element type; the result element type equals
      it or is a wider type of the same kind (float, integer).
  }];
  let arguments = (ins StrAttr:$equation,
                       Variadic<AnyRankedTensor>:$inputs,
                       Optional<AnyRankedTensor>:$acc);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $equation $inputs (`acc` $acc^)? attr-dict `:` type($inputs) `->`
    type($result)
  }];
  let hasVerifier = 1;
  let builders = [
    OpBuilder<(ins "::llvm::StringRef":$equation, "::mlir::ValueRange":$inputs,
                   "::mlir::Type":$resultType,
                   CArg<"::mlir::Value", "{}">:$acc)>
  ];
  let extraClassDeclaration = [{
    /// The parsed equation. The verifier guarantees it parses.
    EinsumEquation getParsedEquation();
    /// The size of every index letter, from the input shapes.
    ::llvm::DenseMap<char, int64_t> getIndexSizes();
  }];
}

//===----------------------------------------------------------------------===//
// AllGatherOp
//===----------------------------------------------------------------------===//

def Ovl_AllGatherOp : Ovl_CollectiveOp<"all_gather"> {
  let summary = "Concatenate the group's shards along a tensor dimension";
  let description = [{
    Every device of a group contributes its `input`; every device receives
    the concatenation of all contributions along `dim`, ordered by the
    devices' index in the group (see the dialect's notes on groups).

    ```mlir
    shard.grid @grid(shape = 4)
    %w = ovl.all_gather %w_shard on @grid axes [0] dim 1
        : tensor<8x4xf32> -> tensor<8x16xf32>
    ```

    **Constraints:**
    - `grid` names a `shard.grid`; `axes` are distinct and within its rank;
    - `dim` is below the input's rank; input and result have the same rank
      and element type;
    - the result's `dim` is the input's times the group size, the other
      dimensions are equal.
  }];
  let arguments = !con((ins AnyRankedTensor:$input), gridArgs,
                       (ins Ovl_TensorDimAttr:$gather_dim));
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `on` $grid `axes` $grid_axes `dim` $gather_dim attr-dict `:`
    type($input) `->` type($result)
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// ReduceScatterOp
//===----------------------------------------------------------------------===//

def Ovl_ReduceScatterOp : Ovl_CollectiveOp<"reduce_scatter"> {
  let summary = "Reduce elementwise across the group, then scatter a dimension";
  let description = [{
    The group's inputs are combined elementwise with `reduce` (`sum` by
    default); the combined tensor is split into as many equal parts along
    `dim` as the group has devices, and the device with index `i` in the
    group receives part `i`.

    ```mlir
    shard.grid @grid(shape = 2x4)
    %y = ovl.reduce_scatter %partial on @grid axes [0] dim 0
        : tensor<8x16xf32> -> tensor<4x16xf32>
    %m = ovl.reduce_scatter %partial on @grid axes [1] dim 1 reduce max
        : tensor<8x16xf32> -> tensor<8x4xf32>
    ```

    **Constraints:**
    - `grid` names a `shard.grid`; `axes` are distinct and within its rank;
    - `dim` is below the input's rank; input and result have the same rank
      and element type;
    - the input's `dim` is divisible by the group size and the result's `dim`
      is the quotient, the other dimensions are equal.
  }];
  let arguments = !con((ins AnyRankedTensor:$input), gridArgs,
                       (ins Ovl_TensorDimAttr:$scatter_dim,
                        DefaultValuedAttr<Ovl_ReductionKindAttr,
                                          "ReductionKind::Sum">:$reduction));
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `on` $grid `axes` $grid_axes `dim` $scatter_dim
    (`reduce` custom<ReductionKind>($reduction)^)? attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// AllReduceOp
//===----------------------------------------------------------------------===//

def Ovl_AllReduceOp : Ovl_CollectiveOp<"all_reduce", [SameOperandsAndResultType]> {
  let summary = "Reduce elementwise across the group; every device gets the result";
  let description = [{
    Combines the group's inputs elementwise with `reduce` (`sum` by default);
    every device of the group receives the combined tensor.

    ```mlir
    shard.grid @grid(shape = 2x4)
    %s = ovl.all_reduce %x on @grid axes [0, 1] : tensor<8x16xf32>
    ```

    **Constraints:**
    - `grid` names a `shard.grid`; `axes` are distinct and within its rank;
    - input and result have the same type.
  }];
  let arguments = !con((ins AnyRankedTensor:$input), gridArgs,
                       (ins DefaultValuedAttr<Ovl_ReductionKindAttr,
                                              "ReductionKind::Sum">:$reduction));
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `on` $grid `axes` $grid_axes (`reduce` custom<ReductionKind>($reduction)^)? attr-dict `:`
    type($result)
  }];
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// CollectivePermuteOp
//===----------------------------------------------------------------------===//

def Ovl_CollectivePermuteOp
    : Ovl_CollectiveOp<"collective_permute", [SameOperandsAndResultType]> {
  let summary = "Send the tensor to another device of the group, blocking";
  let description = [{
    Each pair `s -> t` sends the input of the device with group index `s` to
    the device with group index `t`; each device's result is what it
    received. The pairs form a permutation of the whole group, so every
    device sends once and receives once. The ring step of the decomposed
    loops, `{0 -> N-1, 1 -> 0, ..., N-1 -> N-2}`, passes every shard to the
    left neighbour.

    ```mlir
    shard.grid @grid(shape = 4)
    %next = ovl.collective_permute %shard on @grid axes [0]
        pairs [0 -> 3, 1 -> 0, 2 -> 1, 3 -> 2] : tensor<2x8xf32>
    ```

    **Constraints:**
    - `grid` names a `shard.grid`; `axes` are distinct and within its rank;
    - input and result have the same type;
    - every index in `pairs` is within the group; no device is the source of
      two pairs or the target of two pairs; the pairs cover the whole group.
  }];
  let arguments = !con((ins AnyRankedTensor:$input), gridArgs,
                       (ins DenseI64ArrayAttr:$pairs));
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `on` $grid `axes` $grid_axes `pairs` custom<PermutePairs>($pairs)
    attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
  let extraClassDeclaration = [{
    /// The (source, target) pairs.
    ::llvm::SmallVector<std::pair<int64_t, int64_t>> getSourceTargetPairs();
  }];
}

//===----------------------------------------------------------------------===//
// CollectivePermuteStartOp / CollectivePermuteDoneOp
//===----------------------------------------------------------------------===//

def Ovl_CollectivePermuteStartOp : Ovl_CollectiveOp<"collective_permute_start", [
    DestinationStyleOpInterface, DeclareOpInterfaceMethods<Ovl_AsyncStartOpInterface>,
    AllTypesMatch<["input", "dest", "pending"]>]> {
  let summary = "Begin an asynchronous permute into a destination buffer";
  let description = [{
    Starts the transfer of `collective_permute` with the same pairs and
    returns at once. The received data will land in `dest` (destination
    passing style: `pending` is `dest`'s storage, not yet readable) and
    `token` identifies the transfer. Only `ovl.collective_permute_done`
    turns `pending` into a readable tensor; between the two, the device
    computes while the data moves.

    Destination passing lets bufferization reuse the same two buffers on
    every iteration of a double-buffered loop: no allocation or copy per
    step. The start does not read `dest`.

    ```mlir
    %pending, %token = ovl.collective_permute_start %shard into %buf
        on @grid axes [0] pairs [0 -> 3, 1 -> 0, 2 -> 1, 3 -> 2]
        : tensor<2x8xf32>
    %partial = ovl.einsum "bf,fh->bh" %shard, %w
        : tensor<2x8xf32>, tensor<8x16xf32> -> tensor<2x16xf32>
    %next = ovl.collective_permute_done %token keep(%shard) into %pending
        : tensor<2x8xf32>
    ```

    **Constraints:**
    - `grid` names a `shard.grid`; `axes` are distinct and within its rank;
    - `input`, `dest` and `pending` have the same type;
    - `pairs` form a permutation of the group, as for `collective_permute`;
    - the token has exactly one use: the matching done, or a region
      terminator that carries it on (e.g. across a loop's back edge).
  }];
  let arguments = !con((ins AnyRankedTensor:$input, AnyRankedTensor:$dest),
                       gridArgs, (ins DenseI64ArrayAttr:$pairs));
  let results = (outs AnyRankedTensor:$pending, Ovl_TokenType:$token);
  let assemblyFormat = [{
    $input `into` $dest `on` $grid `axes` $grid_axes `pairs`
    custom<PermutePairs>($pairs) attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::MutableOperandRange getDpsInitsMutable() {
      return getDestMutable();
    }
    /// The (source, target) pairs.
    ::llvm::SmallVector<std::pair<int64_t, int64_t>> getSourceTargetPairs();
  }];
}

def Ovl_CollectivePermuteDoneOp : Ovl_Op<"collective_permute_done", [
    Ovl_Communicates, DestinationStyleOpInterface,
    AllTypesMatch<["keep", "pending", "result"]>]> {
  let summary = "Wait for an asynchronous permute and read what arrived";
  let description = [{
    Blocks until the transfer `token` names has both sent this device's
    data and received the peer's, then returns the received tensor, which
    lives in `pending`'s storage. `keep` is the start's input: naming it
    here keeps that buffer alive and unmodified until the send is complete.

    ```mlir
    %next = ovl.collective_permute_done %token keep(%shard) into %pending
        : tensor<2x8xf32>
    ```

    **Constraints:**
    - `keep`, `pending` and the result have the same type;
    - `token` comes from an `ovl.collective_permute_start`, directly or
      through a region's block arguments and results (a loop carrying it);
    - when the start is visible, `pending` is that start's pending result
      and `keep` is its input.
  }];
  let arguments = (ins Ovl_TokenType:$token, AnyRankedTensor:$keep,
                       AnyRankedTensor:$pending);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $token `keep` `(` $keep `)` `into` $pending attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
  let extraClassDeclaration = [{
    ::mlir::MutableOperandRange getDpsInitsMutable() {
      return getPendingMutable();
    }
    /// The start that produced the token, when it is visible in the IR
    /// (null when the token came through a block argument or region result).
    CollectivePermuteStartOp getStartOp();
  }];
}

//===----------------------------------------------------------------------===//
// Asynchronous all_gather / reduce_scatter / all_reduce and their done
//===----------------------------------------------------------------------===//

// The starts share the permute start's contract: destination passing, a
// pending value that only the done makes readable, a token with one use.
class Ovl_CollectiveStartOp<string mnemonic, list<Trait> traits = []>
    : Ovl_CollectiveOp<mnemonic, !listconcat(traits, [
        DestinationStyleOpInterface,
        DeclareOpInterfaceMethods<Ovl_AsyncStartOpInterface>,
        AllTypesMatch<["dest", "pending"]>])> {
  let results = (outs AnyRankedTensor:$pending, Ovl_TokenType:$token);
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::MutableOperandRange getDpsInitsMutable() {
      return getDestMutable();
    }
  }];
}

def Ovl_AllGatherStartOp : Ovl_CollectiveStartOp<"all_gather_start"> {
  let summary = "Begin an asynchronous all_gather into a destination";
  let description = [{
    Starts the `ovl.all_gather` of `input` along `dim` and returns at once:
    the gathered tensor will land in `dest` (`pending` is its storage, not
    yet readable) and `token` identifies the transfer. Only
    `ovl.collective_done` makes `pending` readable; between the two the
    device computes while the shards move, which hides a collective behind
    work that does not depend on it (a weight gathered during the layer
    norm before its einsum, or during the previous layer). The start does
    not read `dest`.

    ```mlir
    %pending, %token = ovl.all_gather_start %w_shard into %w_buf
        on @grid axes [0] dim 1 : tensor<8x4xf32> -> tensor<8x16xf32>
    %n = ovl.einsum "bf,f->bf" %x, %scale
        : tensor<2x8xf32>, tensor<8xf32> -> tensor<2x8xf32>
    %w = ovl.collective_done %token keep(%w_shard : tensor<8x4xf32>)
        into %pending : tensor<8x16xf32>
    ```

    **Constraints:** those of `ovl.all_gather` between `input` and `dest`;
    `dest` and `pending` have the same type; the token has exactly one use,
    in the start's block: the matching done, or a region terminator that
    carries it on.
  }];
  let arguments = !con((ins AnyRankedTensor:$input, AnyRankedTensor:$dest),
                       gridArgs, (ins Ovl_TensorDimAttr:$gather_dim));
  let assemblyFormat = [{
    $input `into` $dest `on` $grid `axes` $grid_axes `dim` $gather_dim
    attr-dict `:` type($input) `->` type($dest)
  }];
}

def Ovl_ReduceScatterStartOp : Ovl_CollectiveStartOp<"reduce_scatter_start"> {
  let summary = "Begin an asynchronous reduce_scatter into a destination";
  let description = [{
    Starts the `ovl.reduce_scatter` of `input` and returns at once; the part
    of the reduced tensor at this device's group index will land in `dest`
    (`pending`), readable after `ovl.collective_done`. A gradient scattered
    while the next block computes.

    ```mlir
    %pending, %token = ovl.reduce_scatter_start %partial into %buf
        on @grid axes [0] dim 0 : tensor<8x16xf32> -> tensor<2x16xf32>
    %y = ovl.collective_done %token keep(%partial : tensor<8x16xf32>)
        into %pending : tensor<2x16xf32>
    ```

    **Constraints:** those of `ovl.reduce_scatter` between `input` and
    `dest`; those of `ovl.all_gather_start` on `pending` and the token.
  }];
  let arguments = !con((ins AnyRankedTensor:$input, AnyRankedTensor:$dest),
                       gridArgs,
                       (ins Ovl_TensorDimAttr:$scatter_dim,
                        DefaultValuedAttr<Ovl_ReductionKindAttr,
                                          "ReductionKind::Sum">:$reduction));
  let assemblyFormat = [{
    $input `into` $dest `on` $grid `axes` $grid_axes `dim` $scatter_dim
    (`reduce` custom<ReductionKind>($reduction)^)? attr-dict `:` type($input)
    `->` type($dest)
  }];
}

def Ovl_AllReduceStartOp
    : Ovl_CollectiveStartOp<"all_reduce_start",
                            [AllTypesMatch<["input", "dest"]>]> {
  let summary = "Begin an asynchronous all_reduce into a destination";
  let description = [{
    Starts the `ovl.all_reduce` of `input` and returns at once; the combined
    tensor will land in `dest` (`pending`), readable after
    `ovl.collective_done`.

    ```mlir
    %pending, %token = ovl.all_reduce_start %g into %buf on @grid axes [0, 1]
        : tensor<8x16xf32> -> tensor<8x16xf32>
    %s = ovl.collective_done %token keep(%g : tensor<8x16xf32>)
        into %pending : tensor<8x16xf32>
    ```

    **Constraints:** `input`, `dest` and `pending` have the same type; those
    of `ovl.all_gather_start` on the token.
  }];
  let arguments = !con((ins AnyRankedTensor:$input, AnyRankedTensor:$dest),
                       gridArgs,
                       (ins DefaultValuedAttr<Ovl_ReductionKindAttr,
                                              "ReductionKind::Sum">:$reduction));
  let assemblyFormat = [{
    $input `into` $dest `on` $grid `axes` $grid_axes
    (`reduce` custom<ReductionKind>($reduction)^)? attr-dict `:` type($input)
    `->` type($dest)
  }];
}

def Ovl_CollectiveDoneOp : Ovl_Op<"collective_done", [
    Ovl_Communicates, DestinationStyleOpInterface,
    AllTypesMatch<["pending", "result"]>]> {
  let summary = "Wait for an asynchronous all_gather, reduce_scatter or all_reduce";
  let description = [{
    Blocks until the collective `token` names has completed on this device
    and returns its result, which lives in `pending`'s storage. `keep` is
    the start's input: naming it keeps that buffer alive and unmodified
    until the transfer no longer reads it. (Permutes have their own done,
    `ovl.collective_permute_done`.)

    ```mlir
    %w = ovl.collective_done %token keep(%w_shard : tensor<8x4xf32>)
        into %pending : tensor<8x16xf32>
    ```

    **Constraints:**
    - `pending` and the result have the same type;
    - `token` is defined in the done's block and comes from an
      `ovl.all_gather_start`, `ovl.reduce_scatter_start` or
      `ovl.all_reduce_start`, directly or through a region's block
      arguments and results (a loop carrying it);
    - when the start is visible, `pending` is that start's pending result
      and `keep` is its input.
  }];
  let arguments = (ins Ovl_TokenType:$token, AnyRankedTensor:$keep,
                       AnyRankedTensor:$pending);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $token `keep` `(` $keep `:` type($keep) `)` `into` $pending attr-dict `:`
    type($result)
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
  let extraClassDeclaration = [{
    ::mlir::MutableOperandRange getDpsInitsMutable() {
      return getPendingMutable();
    }
    /// The start that produced the token, when it is visible in the IR
    /// (null when the token came through a block argument or region result).
    AsyncStartOpInterface getStartOp();
  }];
}

//===----------------------------------------------------------------------===//
// OptimizationBarrierOp
//===----------------------------------------------------------------------===//

def Ovl_OptimizationBarrierOp : Ovl_Op<"optimization_barrier", [Pure]> {
  let summary = "Its operands, unchanged, as values no pass can see through";
  let description = [{
    Returns its operands unchanged. No pass looks through it: an op that
    reads a result is not an op that reads the operand, so CSE cannot merge
    it with the same op on the operand, and it cannot be computed before
    every operand exists. This is what rematerialization needs: a training
    step that recomputes a layer's forward in the backward pass (to hold
    fewer activations) passes the layer's input through a barrier together
    with the gradient arriving at the layer, so the recomputation is not
    merged back into the forward and runs when the backward reaches it.
    Like StableHLO's `optimization_barrier`; costs nothing (the simulator,
    the cost model and the peak-memory estimate see the results as the
    operands' buffers) and bufferizes to its operands' buffers.

    ```mlir
    %x_r, %g_r = ovl.optimization_barrier %x, %g
        : tensor<2x8xbf16>, tensor<2x8xf32>
    ```

    **Constraints:**
    - at least one operand; as many results as operands, each of its
      operand's type.
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$inputs);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  // The results' types are the operands': written once.
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// PartitionIdOp
//===----------------------------------------------------------------------===//

def Ovl_PartitionIdOp : Ovl_Op<"partition_id", [
    Pure, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "This device's index in its group";
  let description = [{
    Returns the index of the executing device in its group along `axes`:
    the row-major linearization of its grid coordinates along the listed
    axes, in the order listed (`0` for an empty list). The decomposed loops
    compute the shard a step works on from it. Upstream
    `shard.process_multi_index` gives the per-axis coordinates; this op gives
    the one index that the group order of every ovl collective uses.

    ```mlir
    shard.grid @grid(shape = 2x4)
    %id = ovl.partition_id on @grid axes [1] : index   // in [0, 4)
    ```

    **Constraints:**
    - `grid` names a `shard.grid`; `axes` are distinct and within its rank.
  }];
  let arguments = (ins FlatSymbolRefAttr:$grid, Ovl_GridAxesAttr:$grid_axes);
  let results = (outs Index:$result);
  let assemblyFormat = [{
    `on` $grid `axes` $grid_axes attr-dict `:` type($result)
  }];
  let hasCanonicalizer = 1;
}

include "OverlapDialect/Dialect/Ovl/IR/OvlBufferOps.td"

#endif // OVERLAP_DIALECT_OVL_IR_OVLOPS_TD
