//===- Passes.td - Lowering passes of overlap --------------*- tablegen -*-===//
//
// The passes that take ovl programs towards execution on the CPU runtime.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAP_CONVERSION_PASSES_TD
#define OVERLAP_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def OvlEinsumToLinalgPass : Pass<"ovl-einsum-to-linalg"> {
  let summary = "Lower ovl.einsum to a linalg.generic contraction";
  let description = [{
    Rewrites every `ovl.einsum` into one `linalg.generic`: one loop per index
    letter (output letters parallel, the others reductions), an indexing map
    per operand, and a body that extends the inputs to the result element
    type, multiplies them and adds into the output. The output is the
    accumulator when the einsum has one, else a zero-filled `tensor.empty`.
    The result is an ordinary linalg contraction that the tiling,
    vectorization and bufferization passes handle. Runs on tensors, before
    bufferization.

    ```mlir
    %y = ovl.einsum "bf,fh->bh" %x, %w
        : tensor<2x8xf32>, tensor<8x16xf32> -> tensor<2x16xf32>
    // becomes
    %zero = arith.constant 0.0 : f32
    %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<2x16xf32>)
    %y = linalg.generic {indexing_maps = [(b,h,f) -> (b,f), (b,h,f) -> (f,h),
                                          (b,h,f) -> (b,h)],
                         iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%x, %w : ...) outs(%init : ...) { mulf; addf }
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
  let statistics = [
    Statistic<"numEinsums", "einsums", "Number of einsums lowered">,
  ];
}

def OvlLowerToRuntimePass : Pass<"ovl-lower-to-runtime", "::mlir::ModuleOp"> {
  let summary = "Lower bufferized ovl collectives to calls of the ovlrt runtime";
  let description = [{
    Runs after One-Shot Bufferize. Rewrites every `ovl.buffer.*` collective,
    `ovl.buffer.permute_start` / `_done` and `ovl.partition_id` into a call of
    the C runtime (`ovlrt_*`, see `runtime/README.md`), turns `!ovl.token`
    into the runtime's `i64` request handle (also through `scf` loops and
    branches), and removes the `shard.grid` symbols once nothing refers to
    them.

    Each call passes its buffers as unranked memrefs and two constant
    globals: the op's configuration (grid shape, axes, dim, reduction,
    pairs, as `i64`s) and its source location (a NUL-terminated string) for
    the runtime's error messages. Runtime functions are declared with
    `llvm.emit_c_interface`; their names carry the element type
    (`ovlrt_all_gather_f32`, `ovlrt_permute_start_bf16`, ...).

    Fails with an error on an `ovl` op that is still on tensors (bufferize
    first) and on element types the runtime lacks.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect"];
  let statistics = [
    Statistic<"numCalls", "runtime-calls", "Number of runtime calls created">,
  ];
}

#endif // OVERLAP_CONVERSION_PASSES_TD
