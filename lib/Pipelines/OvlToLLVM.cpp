//===- OvlToLLVM.cpp - From ovl on tensors to the LLVM dialect ------------===//
//
// Builds the lowering pipeline with explicit conversion passes rather than
// convert-to-llvm, so that it works in any context without the dialects'
// ConvertToLLVM extensions registered.
//
// With `vectorize`, the passes around the contraction schedule follow the
// measured recipe of bench/matmul (README.md there says why each matters).
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/Pipelines/Pipelines.h"

#include "OverlapDialect/Pipelines/Passes.h"

#include "OverlapDialect/Conversion/Passes.h"
#include "OverlapDialect/Dialect/Ovl/Transforms/BufferizableOpInterfaceImpl.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void overlap::buildOvlToLLVMPipeline(OpPassManager &pm,
                                     const OvlToLLVMPipelineOptions &options) {
  OpPassManager &funcs = pm.nest<func::FuncOp>();
  funcs.addPass(ovl::createOvlEinsumToLinalgPass());
  funcs.addPass(createConvertElementwiseToLinalgPass());
  funcs.addPass(createCanonicalizerPass());
  if (options.vectorize) {
    // On tensors: the schedule's packing buffers are tensor.pad results that
    // One-Shot Bufferize turns into allocations. No CSE after it: it would
    // merge the tensor.empty ops that the pass has just split again (see
    // ContractionSchedule.cpp).
    OvlApplyContractionSchedulePassOptions schedule;
    schedule.targetCpu = options.targetCpu;
    pm.addPass(createOvlApplyContractionSchedulePass(schedule));
    pm.addPass(createCanonicalizerPass());
  }

  // Lets an op that fills a `tensor.empty` write straight into the buffer its
  // result is materialized in (e.g. an einsum into an output of the caller)
  // instead of a new allocation and a copy.
  pm.addPass(bufferization::createEmptyTensorEliminationPass());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  // Identity layouts also keep the vector loads and stores of the packed
  // contractions contiguous.
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  // Loops that rotate buffers without unrolling need a copy per step; the
  // ovl-decompose unroll option avoids it where it matters.
  bufferize.allowReturnAllocsFromLoops = true;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  pm.addPass(ovl::createOvlLowerToRuntimePass());
  // The second canonicalization removes what CSE exposes, e.g. copies of a
  // buffer onto itself.
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createCanonicalizerPass());
  // Allocates the packing buffers once per call, not once per block.
  pm.nest<func::FuncOp>().addPass(
      bufferization::createBufferLoopHoistingPass());
  bufferization::buildBufferDeallocationPipeline(pm);
  pm.addPass(createConvertBufferizationToMemRefPass());

  OpPassManager &loops = pm.nest<func::FuncOp>();
  loops.addPass(createConvertLinalgToLoopsPass());
  // Unrolled, the transfers of the micro-kernels become plain vector loads
  // and stores rather than loops over vector<...> elements.
  loops.addPass(createConvertVectorToSCFPass(
      VectorTransferToSCFOptions().enableFullUnroll()));
  loops.addPass(createLowerAffinePass());
  loops.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createConvertVectorToLLVMPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createUBToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

namespace overlap {
#define GEN_PASS_DEF_OVLTOLLVMPASS
#include "OverlapDialect/Pipelines/Passes.h.inc"
} // namespace overlap

namespace {
struct OvlToLLVMPass : public overlap::impl::OvlToLLVMPassBase<OvlToLLVMPass> {
  using Base::Base;

  /// The pass's options as the struct buildOvlToLLVMPipeline takes.
  overlap::OvlToLLVMPipelineOptions getPipelineOptions() const {
    overlap::OvlToLLVMPipelineOptions options;
    options.vectorize = vectorize;
    options.targetCpu = targetCpu;
    return options;
  }

  void getDependentDialects(DialectRegistry &registry) const override {
    OpPassManager pm(ModuleOp::getOperationName());
    overlap::buildOvlToLLVMPipeline(pm, getPipelineOptions());
    pm.getDependentDialects(registry);
  }

  void runOnOperation() override {
    if (failed(ovl::checkBufferizable(getOperation())))
      return signalPassFailure();
    OpPassManager pm(ModuleOp::getOperationName());
    overlap::buildOvlToLLVMPipeline(pm, getPipelineOptions());
    if (failed(runPipeline(pm, getOperation())))
      signalPassFailure();
  }
};
} // namespace

void overlap::registerPipelines() { registerOverlapPipelinesPasses(); }
