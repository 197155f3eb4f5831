//===- EntryFunction.h - The function a tool runs or simulates --*- C++ -*-===//
//
// How overlap-run, overlap-sim and the C API choose the function of a module
// to run or simulate.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAPDIALECT_ANALYSIS_ENTRYFUNCTION_H
#define OVERLAPDIALECT_ANALYSIS_ENTRYFUNCTION_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir::ovl {

/// The function with a body named `name` or, when `name` is empty, the
/// module's only public function with a body. Fails after a located error
/// at the module; `flag`, when given, is how the caller names a function
/// (say "--entry"), for the error to say.
FailureOr<FunctionOpInterface>
findEntryFunction(ModuleOp module, StringRef name, StringRef flag = {});

} // namespace mlir::ovl

#endif // OVERLAPDIALECT_ANALYSIS_ENTRYFUNCTION_H
