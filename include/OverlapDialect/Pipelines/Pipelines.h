//===- Pipelines.h - Registered pass pipelines of overlap -------*- C++ -*-===//
//
// The registered pipelines: `ovl-overlap-pipeline`, which turns blocking
// collectives around einsums into scheduled, overlapped loops, and
// `ovl-to-llvm`, from ovl programs on tensors to the LLVM dialect that
// `overlap-run` JIT-compiles for the CPU runtime.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAPDIALECT_PIPELINES_PIPELINES_H
#define OVERLAPDIALECT_PIPELINES_PIPELINES_H

#include "OverlapDialect/Pipelines/Passes.h"

#include "mlir/Pass/PassOptions.h"

#include <memory>

namespace mlir {
class OpPassManager;
class Pass;
} // namespace mlir

namespace overlap {

/// Options of `ovl-overlap-pipeline` (declared with the pass in
/// Passes.td): the machine the gate and the scheduler price on, and the
/// decomposition and scheduling choices.
using OverlapPipelineOptions = OvlOverlapPipelinePassOptions;

/// Adds to `pm` (anchored on builtin.module) the whole overlap pipeline:
/// ovl-verify-collectives on the input, the cost-model gate and
/// decomposition (ovl-decompose-collective-einsum), asynchronous permutes
/// (ovl-async-collectives), canonicalize and CSE, the latency-hiding
/// scheduler (ovl-schedule), whose order is the one the simulator and the
/// runtime follow, and ovl-verify-collectives on the output.
void buildOverlapPipeline(mlir::OpPassManager &pm,
                          const OverlapPipelineOptions &options);

/// Options of `ovl-to-llvm` (declared with the pass in Passes.td).
using OvlToLLVMPipelineOptions = OvlToLLVMPassOptions;

/// Adds to `pm` (anchored on builtin.module) the passes that take an ovl
/// program on tensors to the LLVM dialect: einsums to linalg, elementwise
/// ops to linalg, with `vectorize` the contraction schedule, empty tensor
/// elimination, One-Shot Bufferize at function boundaries with identity
/// layouts, ovl-lower-to-runtime, buffer hoisting and deallocation, linalg
/// and vector ops to loops, and the conversions to LLVM.
void buildOvlToLLVMPipeline(mlir::OpPassManager &pm,
                            const OvlToLLVMPipelineOptions &options);

/// Registers the passes of Passes.h (`ovl-overlap-pipeline`, `ovl-to-llvm`,
/// `ovl-apply-contraction-schedule`) for textual pipelines and
/// `overlap-opt`.
void registerPipelines();

} // namespace overlap

#endif // OVERLAPDIALECT_PIPELINES_PIPELINES_H
