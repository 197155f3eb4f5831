//===- VerifyInput.cpp - ovl-verify-input ---------------------------------===//
//
// The pass form of verifyInput (Analysis): what overlap-opt runs first on
// the program it parsed unverified.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/Dialect/Ovl/Transforms/Passes.h"

#include "OverlapDialect/Analysis/VerifyInput.h"

namespace mlir::ovl {
#define GEN_PASS_DEF_OVLVERIFYINPUTPASS
#include "OverlapDialect/Dialect/Ovl/Transforms/Passes.h.inc"
} // namespace mlir::ovl

using namespace mlir;

namespace {
struct OvlVerifyInputPass
    : public ovl::impl::OvlVerifyInputPassBase<OvlVerifyInputPass> {
  void runOnOperation() override {
    if (failed(ovl::verifyInput(getOperation())))
      signalPassFailure();
    // Nothing changed: the pass manager need not verify again.
    markAllAnalysesPreserved();
  }
};
} // namespace
