//===- Pipelines.h - Registered pass pipelines of overlap -------*- C++ -*-===//
//
// The pipeline from ovl programs on tensors to the LLVM dialect, which
// `overlap-run` JIT-compiles for the CPU runtime.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAPDIALECT_PIPELINES_PIPELINES_H
#define OVERLAPDIALECT_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassOptions.h"

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace overlap {

/// Options of `ovl-to-llvm`.
struct OvlToLLVMPipelineOptions
    : public mlir::PassPipelineOptions<OvlToLLVMPipelineOptions> {};

/// Adds to `pm` (anchored on builtin.module) the passes that take an ovl
/// program on tensors to the LLVM dialect: einsums to linalg, elementwise
/// ops to linalg, One-Shot Bufferize at function boundaries with identity
/// layouts, ovl-lower-to-runtime, buffer deallocation, linalg to loops, and
/// the conversions to LLVM.
void buildOvlToLLVMPipeline(mlir::OpPassManager &pm,
                            const OvlToLLVMPipelineOptions &options);

/// Registers `ovl-to-llvm` for textual pipelines and `overlap-opt`.
void registerOvlToLLVMPipeline();

} // namespace overlap

#endif // OVERLAPDIALECT_PIPELINES_PIPELINES_H
