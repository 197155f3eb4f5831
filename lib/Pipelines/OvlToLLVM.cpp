//===- OvlToLLVM.cpp - From ovl on tensors to the LLVM dialect ------------===//
//
// Builds the lowering pipeline with explicit conversion passes rather than
// convert-to-llvm, so that it works in any context without the dialects'
// ConvertToLLVM extensions registered.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/Pipelines/Pipelines.h"

#include "OverlapDialect/Conversion/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void overlap::buildOvlToLLVMPipeline(OpPassManager &pm,
                                     const OvlToLLVMPipelineOptions &) {
  OpPassManager &funcs = pm.nest<func::FuncOp>();
  funcs.addPass(ovl::createOvlEinsumToLinalgPass());
  funcs.addPass(createConvertElementwiseToLinalgPass());
  funcs.addPass(createCanonicalizerPass());

  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  // Loops that rotate buffers without unrolling need a copy per step; the
  // ovl-decompose unroll option avoids it where it matters.
  bufferize.allowReturnAllocsFromLoops = true;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  pm.addPass(ovl::createOvlLowerToRuntimePass());
  bufferization::buildBufferDeallocationPipeline(pm);
  pm.addPass(createConvertBufferizationToMemRefPass());

  OpPassManager &loops = pm.nest<func::FuncOp>();
  loops.addPass(createConvertLinalgToLoopsPass());
  loops.addPass(createLowerAffinePass());
  loops.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createUBToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void overlap::registerOvlToLLVMPipeline() {
  PassPipelineRegistration<OvlToLLVMPipelineOptions>(
      "ovl-to-llvm",
      "Lower an ovl program on tensors to the LLVM dialect, with collectives "
      "as calls of the ovlrt runtime",
      buildOvlToLLVMPipeline);
}
