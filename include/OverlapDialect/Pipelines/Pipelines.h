//===- Pipelines.h - Registered pass pipelines of overlap -------*- C++ -*-===//
//
// The pipeline from ovl programs on tensors to the LLVM dialect, which
// `overlap-run` JIT-compiles for the CPU runtime.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAPDIALECT_PIPELINES_PIPELINES_H
#define OVERLAPDIALECT_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassOptions.h"

#include <memory>

namespace mlir {
class OpPassManager;
class Pass;
} // namespace mlir

namespace overlap {

/// Options of `ovl-to-llvm`.
struct OvlToLLVMPipelineOptions
    : public mlir::PassPipelineOptions<OvlToLLVMPipelineOptions> {
  Option<bool> vectorize{
      *this, "vectorize",
      llvm::cl::desc("Tile, pack and vectorize static f32 matmul-like "
                     "contractions (ovl-apply-contraction-schedule) before "
                     "bufferization; the others become plain loops"),
      llvm::cl::init(true)};
};

/// Adds to `pm` (anchored on builtin.module) the passes that take an ovl
/// program on tensors to the LLVM dialect: einsums to linalg, elementwise
/// ops to linalg, with `vectorize` the contraction schedule, empty tensor
/// elimination, One-Shot Bufferize at function boundaries with identity
/// layouts, ovl-lower-to-runtime, buffer hoisting and deallocation, linalg
/// and vector ops to loops, and the conversions to LLVM.
void buildOvlToLLVMPipeline(mlir::OpPassManager &pm,
                            const OvlToLLVMPipelineOptions &options);

/// Registers `ovl-to-llvm` and `ovl-apply-contraction-schedule` (see
/// Passes.h) for textual pipelines and `overlap-opt`.
void registerOvlToLLVMPipeline();

} // namespace overlap

#endif // OVERLAPDIALECT_PIPELINES_PIPELINES_H
