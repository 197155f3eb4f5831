//===- Passes.td - Passes of the lowering pipelines --------*- tablegen -*-===//

#ifndef OVERLAP_PIPELINES_PASSES_TD
#define OVERLAP_PIPELINES_PASSES_TD

include "OverlapDialect/Analysis/MachineOptions.td"
include "OverlapDialect/Dialect/Ovl/Transforms/PassOptions.td"
include "mlir/Pass/PassBase.td"

def OvlOverlapPipelinePass : Pass<"ovl-overlap-pipeline", "::mlir::ModuleOp"> {
  let summary = "Decompose collective einsums where the cost model says it "
                "pays, make their permutes asynchronous and schedule them "
                "behind the compute";
  let description = [{
    The whole pipeline, on every function of the module:
    `ovl-verify-collectives` (a program whose devices would not
    communicate alike is refused), `ovl-decompose-collective-einsum` (the
    cost-model gate and the ring loops; by default it also makes
    asynchronous the collectives it keeps where that is not slower,
    `async-collectives=false` keeps them blocking), `ovl-async-collectives`
    (the permutes),
    `canonicalize`, `cse`, `ovl-schedule`, whose order is the one the
    simulator and the runtime follow, and `ovl-verify-collectives` again on
    the result. Its options are those of the decomposition and of the
    scheduler, with one machine (`hardware`, `topology`,
    `device-assignment`) for both, which it records on the module as the
    discardable attribute `ovl.machine` (a dictionary of `hardware` and,
    when given, `topology` and `device_assignment`): `overlap-sim`
    simulates on that machine unless told otherwise.
    C++: `overlap::buildOverlapPipeline` adds the same passes to a pass
    manager.
  }];
  let options = !listconcat(Overlap_MachineOptions, Overlap_DecomposeOptions,
                            Overlap_ScheduleOptions);
}

def OvlToLLVMPass : Pass<"ovl-to-llvm", "::mlir::ModuleOp"> {
  let summary = "Lower an ovl program on tensors to the LLVM dialect, with "
                "collectives as calls of the ovlrt runtime";
  let description = [{
    Einsums and elementwise ops to linalg, with `vectorize` the contraction
    schedule (`ovl-apply-contraction-schedule`), empty tensor elimination,
    One-Shot Bufferize at function boundaries with identity layouts,
    `ovl-lower-to-runtime`, buffer hoisting and deallocation, linalg and
    vector ops to loops, and the conversions to LLVM, as explicit passes
    rather than `convert-to-llvm`, so that it works in any context.
    `overlap-run` compiles with it. C++: `overlap::buildOvlToLLVMPipeline`
    adds the same passes to a pass manager.
  }];
  let options = [
    Option<"vectorize", "vectorize", "bool", /*default=*/"true",
           "Tile, pack and vectorize static f32 matmul-like contractions "
           "(ovl-apply-contraction-schedule) before bufferization; the "
           "others become plain loops">,
    Option<"targetCpu", "target-cpu", "std::string", /*default=*/"\"native\"",
           "With `vectorize`, the CPU whose vector registers the contraction "
           "schedule's register tiles fit: native or an LLVM x86-64 CPU "
           "name">,
  ];
}

def OvlApplyContractionSchedulePass
    : Pass<"ovl-apply-contraction-schedule", "::mlir::ModuleOp"> {
  let summary = "Tile, pack and vectorize static f32 matmul-like linalg "
                "contractions on tensors with the embedded transform script";
  let description = [{
    Applies the transform script `lib/Pipelines/ContractionSchedule.mlir`,
    compiled into the library, to the module: static f32 contractions whose
    loops are (m, n, k) or (b, m, n, k), with any operand layout, are
    cache-blocked, packed and register-blocked into outer products
    (within 1.0-1.1x of OpenBLAS sgemm with AVX-512, `bench/einsum`). Other
    ops are left for the loop lowering. `ovl-to-llvm{vectorize=true}` runs
    it before bufferization.

    The register tile fits the vector registers of `target-cpu` (8 x 32 f32
    with AVX-512, 6 x 16 with AVX2 or AVX, 6 x 8 with SSE), the cache blocks
    the host's L1d and L2 (overlap::contractionTilesFor): the script's
    @tile_sizes constants are replaced by these before it runs.

    A contraction of bf16 or f16 inputs into f32 (`ovl.einsum` of bf16
    operands with an f32 result) is first rewritten as an f32 contraction of
    its inputs widened to f32 by elementwise `arith.extf` (exact), which is
    then scheduled as any f32 one; afterwards the widening moves into the
    vector reads of the packing copies, which read bf16 and store f32 into
    the packed buffers, so no widened copy of an input is written. A
    widening the script did not pack for stays an elementwise op.

    It does what `transform-preload-library` + `transform-interpreter` do,
    without a file and without the context-wide transform library module,
    which would define the script's symbols twice when one context lowers
    two programs (as `overlap-run --reference` does). Afterwards each use of
    a `tensor.empty` gets its own op again: the script's CSE merges them, and
    distinct destinations keep One-Shot Bufferize from sharing buffers.
  }];
  let dependentDialects = ["::mlir::transform::TransformDialect"];
  let options = [
    Option<"targetCpu", "target-cpu", "std::string", /*default=*/"\"native\"",
           "The CPU whose vector registers the register tiles fit: native "
           "(the host) or an LLVM x86-64 CPU name (haswell, skylake-avx512, "
           "...)">,
  ];
}

#endif // OVERLAP_PIPELINES_PASSES_TD
