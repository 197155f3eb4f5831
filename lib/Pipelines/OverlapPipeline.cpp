//===- OverlapPipeline.cpp - The whole overlap pipeline -------------------===//
//
// Check, gate and decompose (the gate also makes asynchronous the
// collectives it keeps, when asked), make the permutes asynchronous, clean
// up, schedule, check again; the pass then records its machine on the
// module (`ovl.machine`).
// The scheduler runs last: canonicalization and CSE may move constants and
// merge duplicates, and the order the scheduler leaves is the schedule.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/Pipelines/Pipelines.h"

#include "OverlapDialect/Analysis/Simulate.h"
#include "OverlapDialect/Dialect/Ovl/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

namespace overlap {
#define GEN_PASS_DEF_OVLOVERLAPPIPELINEPASS
#include "OverlapDialect/Pipelines/Passes.h.inc"
} // namespace overlap

using namespace mlir;
using namespace overlap;

void overlap::buildOverlapPipeline(OpPassManager &pm,
                                   const OverlapPipelineOptions &options) {
  // The input first: a program whose devices disagree is refused before
  // any rewrite; the output last, which the rewrites must keep consistent.
  pm.addPass(ovl::createOvlVerifyCollectivesPass());
  OpPassManager &funcPm = pm.nest<func::FuncOp>();
  ovl::OvlDecomposeCollectiveEinsumPassOptions decompose;
  decompose.unroll = options.unroll;
  decompose.bidirectional = options.bidirectional;
  decompose.gatherScatter = options.gatherScatter;
  decompose.gate = options.gate;
  decompose.hardware = options.hardware;
  decompose.topology = options.topology;
  decompose.deviceAssignment.assign(options.deviceAssignment.begin(),
                                    options.deviceAssignment.end());
  decompose.remarks = options.remarks;
  decompose.asyncCollectives = options.asyncCollectives;
  funcPm.addPass(ovl::createOvlDecomposeCollectiveEinsumPass(decompose));
  ovl::addAsyncCleanupPasses(funcPm);
  ovl::OvlSchedulePassOptions schedule;
  schedule.algorithm = options.algorithm;
  schedule.maxInFlight = options.maxInFlight;
  schedule.memoryBudget = options.memoryBudget;
  schedule.hardware = options.hardware;
  schedule.topology = options.topology;
  schedule.deviceAssignment.assign(options.deviceAssignment.begin(),
                                   options.deviceAssignment.end());
  funcPm.addPass(ovl::createOvlSchedulePass(schedule));
  pm.addPass(ovl::createOvlVerifyCollectivesPass());
}

namespace {
struct OvlOverlapPipelinePass
    : public overlap::impl::OvlOverlapPipelinePassBase<OvlOverlapPipelinePass> {
  using Base::Base;

  /// The pass's options as the struct buildOverlapPipeline takes.
  OverlapPipelineOptions getPipelineOptions() const {
    OverlapPipelineOptions options;
    options.hardware = hardware;
    options.topology = topology;
    options.deviceAssignment.assign(deviceAssignment.begin(),
                                    deviceAssignment.end());
    options.unroll = unroll;
    options.bidirectional = bidirectional;
    options.gatherScatter = gatherScatter;
    options.gate = gate;
    options.remarks = remarks;
    options.algorithm = algorithm;
    options.maxInFlight = maxInFlight;
    options.memoryBudget = memoryBudget;
    options.asyncCollectives = asyncCollectives;
    return options;
  }

  void getDependentDialects(DialectRegistry &registry) const override {
    OpPassManager pm(ModuleOp::getOperationName());
    buildOverlapPipeline(pm, getPipelineOptions());
    pm.getDependentDialects(registry);
  }

  void runOnOperation() override {
    OpPassManager pm(ModuleOp::getOperationName());
    buildOverlapPipeline(pm, getPipelineOptions());
    if (failed(runPipeline(pm, getOperation())))
      return signalPassFailure();
    // The gate's and the scheduler's choices hold on this machine only:
    // overlap-sim simulates on it unless told otherwise.
    ovl::MachineChoice machine;
    machine.hardware = hardware;
    machine.topology = topology;
    machine.deviceAssignment.assign(deviceAssignment.begin(),
                                    deviceAssignment.end());
    ovl::recordMachine(getOperation(), machine);
  }
};
} // namespace
