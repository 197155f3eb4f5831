//===- VerifyCollectives.cpp - ovl-verify-collectives ---------------------===//
//
// The pass form of verifyCollectiveConsistency (Analysis), for pipelines.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/Dialect/Ovl/Transforms/Passes.h"

#include "OverlapDialect/Analysis/CollectiveConsistency.h"

#include "mlir/IR/BuiltinOps.h"

namespace mlir::ovl {
#define GEN_PASS_DEF_OVLVERIFYCOLLECTIVESPASS
#include "OverlapDialect/Dialect/Ovl/Transforms/Passes.h.inc"
} // namespace mlir::ovl

using namespace mlir;

namespace {
struct OvlVerifyCollectivesPass
    : public ovl::impl::OvlVerifyCollectivesPassBase<OvlVerifyCollectivesPass> {
  void runOnOperation() override {
    if (failed(ovl::verifyCollectiveConsistency(getOperation())))
      signalPassFailure();
    markAllAnalysesPreserved();
  }
};
} // namespace
