//===- OverlapPipeline.cpp - The whole overlap pipeline -------------------===//
//
// Gate and decompose, make the permutes asynchronous, clean up, schedule.
// The scheduler runs last: canonicalization and CSE may move constants and
// merge duplicates, and the order the scheduler leaves is the schedule.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/Dialect/Ovl/Transforms/Passes.h"
#include "OverlapDialect/Pipelines/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace overlap;

void overlap::buildOverlapPipeline(OpPassManager &pm,
                                   const OverlapPipelineOptions &options) {
  OpPassManager &funcPm = pm.nest<func::FuncOp>();
  ovl::OvlDecomposeCollectiveEinsumPassOptions decompose;
  decompose.unroll = options.unroll;
  decompose.bidirectional = options.bidirectional;
  decompose.gate = options.gate;
  decompose.hardware = options.hardware;
  decompose.topology = options.topology;
  decompose.deviceAssignment.assign(options.deviceAssignment.begin(),
                                    options.deviceAssignment.end());
  decompose.remarks = options.remarks;
  funcPm.addPass(ovl::createOvlDecomposeCollectiveEinsumPass(decompose));
  ovl::addAsyncCleanupPasses(funcPm);
  ovl::OvlSchedulePassOptions schedule;
  schedule.algorithm = options.algorithm;
  schedule.maxInFlight = options.maxInFlight;
  schedule.hardware = options.hardware;
  schedule.topology = options.topology;
  schedule.deviceAssignment.assign(options.deviceAssignment.begin(),
                                   options.deviceAssignment.end());
  funcPm.addPass(ovl::createOvlSchedulePass(schedule));
}

void overlap::registerOverlapPipeline() {
  PassPipelineRegistration<OverlapPipelineOptions>(
      "ovl-overlap-pipeline",
      "Decompose collective einsums where the cost model says it pays, make "
      "their permutes asynchronous and schedule them behind the compute",
      buildOverlapPipeline);
}
