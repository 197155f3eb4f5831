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

#include "OverlapDialect/Dialect/Ovl/Transforms/Transforms.h"

#include "mlir/Pass/PassOptions.h"

#include <memory>

namespace mlir {
class OpPassManager;
class Pass;
} // namespace mlir

namespace overlap {

/// Options of `ovl-overlap-pipeline`: the machine the gate and the
/// scheduler price on, and the decomposition and scheduling choices.
struct OverlapPipelineOptions
    : public mlir::PassPipelineOptions<OverlapPipelineOptions> {
  Option<std::string> hardware{
      *this, "hardware",
      llvm::cl::desc("Built-in hardware name or path of a JSON description"),
      llvm::cl::init("tpu-v4")};
  Option<std::string> topology{
      *this, "topology",
      llvm::cl::desc("Physical extents such as 4x4x8 (default: near-cubic "
                     "for the grid's device count)"),
      llvm::cl::init("")};
  ListOption<int64_t> deviceAssignment{
      *this, "device-assignment",
      llvm::cl::desc("Physical device of each logical device (default: "
                     "row-major)")};
  Option<mlir::ovl::DecomposeGate> gate{
      *this, "gate",
      llvm::cl::desc("Which pairs to decompose: cost (the default: those "
                     "whose loop the cost model prices faster), always, "
                     "never"),
      llvm::cl::init(mlir::ovl::DecomposeGate::Cost),
      llvm::cl::values(
          clEnumValN(mlir::ovl::DecomposeGate::Cost, "cost", "by estimate"),
          clEnumValN(mlir::ovl::DecomposeGate::Always, "always", "all"),
          clEnumValN(mlir::ovl::DecomposeGate::Never, "never", "none"))};
  Option<unsigned> unroll{
      *this, "unroll", llvm::cl::desc("Ring steps per loop iteration (1, 2)"),
      llvm::cl::init(1)};
  Option<bool> bidirectional{
      *this, "bidirectional",
      llvm::cl::desc("Send half of every shard each way round the ring"),
      llvm::cl::init(false)};
  Option<mlir::ovl::ScheduleAlgorithm> algorithm{
      *this, "algorithm", llvm::cl::desc("Scheduler: bottom-up or top-down"),
      llvm::cl::init(mlir::ovl::ScheduleAlgorithm::BottomUp),
      llvm::cl::values(clEnumValN(mlir::ovl::ScheduleAlgorithm::BottomUp,
                                  "bottom-up", "list scheduling upwards"),
                       clEnumValN(mlir::ovl::ScheduleAlgorithm::TopDown,
                                  "top-down", "starts early, dones late"))};
  Option<unsigned> maxInFlight{
      *this, "max-in-flight",
      llvm::cl::desc("Asynchronous transfers in flight (0: the hardware's "
                     "DMA slots)"),
      llvm::cl::init(0)};
  Option<bool> remarks{*this, "remarks",
                       llvm::cl::desc("Remark on every decomposition decision"),
                       llvm::cl::init(false)};
};

/// Adds to `pm` (anchored on builtin.module) the whole overlap pipeline:
/// the cost-model gate and decomposition (ovl-decompose-collective-einsum),
/// asynchronous permutes (ovl-async-collectives), canonicalize and CSE, and
/// the latency-hiding scheduler (ovl-schedule) last, so that its order is
/// the one the simulator and the runtime follow.
void buildOverlapPipeline(mlir::OpPassManager &pm,
                          const OverlapPipelineOptions &options);

/// Registers `ovl-overlap-pipeline`.
void registerOverlapPipeline();

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
