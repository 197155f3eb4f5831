//===- Pipeline.cpp - C API: run overlap's pipelines ----------------------===//

#include "overlap-c/Pipeline.h"

#include "OverlapDialect/Pipelines/Pipelines.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Support.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

#include "llvm/Support/raw_ostream.h"

using namespace mlir;

MlirLogicalResult overlapRunOverlapPipeline(MlirModule module,
                                            MlirStringRef options) {
  ModuleOp op = unwrap(module);
  // The pass parses its options as in a textual pipeline: one parser, one
  // declaration of the options (Passes.td).
  std::unique_ptr<Pass> pass = overlap::createOvlOverlapPipelinePass();
  std::string error;
  llvm::raw_string_ostream errorStream(error);
  if (failed(pass->initializeOptions(unwrap(options), [&](const Twine &msg) {
        errorStream << msg;
        return failure();
      }))) {
    // llvm::cl reports some errors (an unknown enum value) on stderr only.
    InFlightDiagnostic diag =
        op.emitError("invalid ovl-overlap-pipeline options '")
        << unwrap(options) << "'";
    if (!StringRef(error).trim().empty())
      diag << ": " << StringRef(error).trim();
    return mlirLogicalResultFailure();
  }
  PassManager pm(op.getContext());
  pm.addPass(std::move(pass));
  return wrap(pm.run(op));
}

MlirLogicalResult overlapRunPassPipeline(MlirModule module,
                                         MlirStringRef pipeline) {
  ModuleOp op = unwrap(module);
  // A module-anchored manager given "builtin.module(...)" would nest a
  // manager for nested modules and run nothing: strip the wrapper.
  StringRef text = unwrap(pipeline).trim();
  if (text.consume_front("builtin.module(")) {
    if (!text.consume_back(")")) {
      op.emitError("invalid pass pipeline '")
          << unwrap(pipeline) << "': unbalanced builtin.module(";
      return mlirLogicalResultFailure();
    }
  }
  PassManager pm(op.getContext());
  std::string error;
  llvm::raw_string_ostream errorStream(error);
  if (failed(parsePassPipeline(text, pm, errorStream))) {
    op.emitError("invalid pass pipeline '")
        << unwrap(pipeline) << "': " << StringRef(error).trim();
    return mlirLogicalResultFailure();
  }
  return wrap(pm.run(op));
}
