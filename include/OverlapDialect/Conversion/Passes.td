//===- Passes.td - Lowering passes of overlap --------------*- tablegen -*-===//
//
// The passes that take ovl programs towards execution on the CPU runtime.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAP_CONVERSION_PASSES_TD
#define OVERLAP_CONVERSION_PASSES_TD

include "OverlapDialect/Analysis/MachineOptions.td"
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

def OvlLowerToICIPass : Pass<"ovl-lower-to-ici", "::mlir::ModuleOp"> {
  let summary = "Annotate every collective with its link-level transfers on a pod";
  let description = [{
    Maps the grid of each collective onto a physical topology (the
    `topology` extents, or the default near-cubic one for the grid's device
    count, with the grid's devices placed row-major or as
    `device-assignment` says) and records, for the logical device `device`,
    the transfers the op makes on the interconnect as an `ovl.ici`
    dictionary attribute:

    - `algorithm`, `rounds`, `estimate_s` (blocking collectives): the plan
      the cost model and the simulator share for the op: per ring of the
      collective the algorithm picked for its size and placement
      (`unidirectional`, `bidirectional-halves`, `bidirectional-whole`,
      `line`), how many rounds of transfers it takes, and its time; a
      multi-axis collective may be split in parts that use every axis'
      links at once (`N parts: ...`);
    - `estimate_s` (blocking permutes): the transfer's time, routed with
      every group's transfers;
    - `transfers`: per ring of the plan, the sends of this device (`forward`
      to its successor, `backward` to its predecessor when the ring runs
      both ways; a line's ends send one way), with the grid `axes`, the
      `phase` (`all_gather` or `reduce_scatter`), the `part`, the peer
      (`to`, physical coordinates), `hops`, the `bytes` of its first round
      and the `rounds` it repeats for; or per permute target one entry. A
      transfer between devices that differ in several torus dimensions is
      split over its ports: `routes` lists one route per port, otherwise
      `route` the one (link names such as `(0,0,0) z+`).

    The simulator (`overlap-sim`) plays the same plans; this pass makes them
    visible and testable.

    ```mlir
    %g = ovl.all_gather %x on @ring axes [0] dim 0
        {ovl.ici = {algorithm = "bidirectional-whole on axis 0 (N=4)",
         estimate_s = 3.0e-06 : f64, rounds = 2 : i64, transfers = [
           {axes = array<i16: 0>, bytes = 512 : i64, direction = "forward",
            hops = 1 : i64, phase = "all_gather", rounds = 2 : i64,
            route = ["(0,0,0) z+"], to = "(0,0,1)"}, ...]}} : ...
    ```
  }];
  let options = !listconcat(Overlap_MachineOptions, [
    Option<"device", "device", "int64_t", /*default=*/"0",
           "The logical device whose transfers are recorded">,
    Option<"unidirectional", "unidirectional", "bool", /*default=*/"false",
           "Lower blocking collectives to one-way rings">,
  ]);
}

def OvlImportShardPass : Pass<"ovl-import-shard"> {
  let summary = "Import the per-device output of upstream shard-partition into ovl";
  let description = [{
    Rewrites what upstream `shard-partition` leaves for one device into ovl,
    so that the decomposition passes see its collectives and contractions.
    Only exact equivalences are rewritten; everything else stays as it is
    (see `docs/ImportShard.md`).

    - `shard.all_gather` becomes `ovl.all_gather` (same grid, axes and
      gather dim: both dialects order a group row-major over the listed
      axes);
    - `shard.reduce_scatter` becomes `ovl.reduce_scatter`, and a
      `shard.all_reduce` whose only user is a `shard.all_slice` of the same
      group (what upstream emits for a partial sum resharded to a split)
      becomes one `ovl.reduce_scatter`; any other `shard.all_reduce` with
      the same input and result type becomes `ovl.all_reduce`. Reductions
      `sum`, `max`, `min` and `product` map to `sum`, `max`, `min`, `prod`;
      `average`, the bitwise ones and `generic` have no ovl equivalent and
      stay shard ops;
    - `linalg.matmul`, `linalg.batch_matmul` and `linalg.generic` on static
      tensors whose maps are projected permutations (output: exactly the
      parallel loops; every loop in an input) and whose body is
      `out + a * b`, with `a` and `b` extended by `arith.extf` / `arith.extsi`
      to the result type when they are narrower, become `ovl.einsum` with the
      equation read off the maps (loop `d0` is letter `a`, `d1` `b`, ...).
      An init that is zero (a `linalg.fill` of +0, a zero splat, or an
      `scf.if` both of whose branches are zero, as upstream builds for
      partial sums) is dropped; any other init becomes the einsum's `acc`.
    - `tensor.cast`s to the same type, which upstream leaves after every
      collective, are folded away, and the zero inits the einsums no longer
      use are erased.

    ```mlir
    %g = shard.all_gather %w on @ring grid_axes = [0] gather_axis = 1
        : tensor<32x16xf32> -> tensor<32x64xf32>
    %y = linalg.matmul ins(%x, %g : tensor<4x32xf32>, tensor<32x64xf32>)
        outs(%zero : tensor<4x64xf32>) -> tensor<4x64xf32>
    // becomes
    %g = ovl.all_gather %w on @ring axes [0] dim 1
        : tensor<32x16xf32> -> tensor<32x64xf32>
    %y = ovl.einsum "ac,cb->ab" %x, %g
        : tensor<4x32xf32>, tensor<32x64xf32> -> tensor<4x64xf32>
    ```
  }];
  let dependentDialects = ["::mlir::ovl::OvlDialect"];
  let options = [
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Emit a remark for every shard collective or named contraction "
           "left as is, with the reason">,
  ];
  let statistics = [
    Statistic<"numCollectives", "collectives", "Number of collectives imported">,
    Statistic<"numEinsums", "einsums", "Number of contractions imported">,
  ];
}

#endif // OVERLAP_CONVERSION_PASSES_TD
