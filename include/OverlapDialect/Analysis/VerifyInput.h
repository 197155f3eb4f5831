//===- VerifyInput.h - A program read by the tools, verified ----*- C++ -*-===//
//
// MLIR 22's verifiers of the shard ops divide by the sizes of their grid's
// axes: `shard.all_slice` on a `shard.grid` with an axis of size 0 dies of
// SIGFPE in its verifySymbolUses, while the parser verifies what it read.
// overlap's tools read programs unverified and verify them here, after
// refusing such grids themselves (overlap-opt through the ovl-verify-input
// pass it runs first).
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAPDIALECT_ANALYSIS_VERIFYINPUT_H
#define OVERLAPDIALECT_ANALYSIS_VERIFYINPUT_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace llvm {
class SourceMgr;
} // namespace llvm

namespace mlir {
namespace ovl {

/// Refuses each `shard.grid` with an axis of size 0 (a located error on
/// it), then verifies `root` and everything in it.
LogicalResult verifyInput(Operation *root);

/// The module in `sourceMgr`'s main buffer, parsed and checked by
/// verifyInput; null after the errors.
OwningOpRef<ModuleOp> parseInput(llvm::SourceMgr &sourceMgr,
                                 MLIRContext *context);

} // namespace ovl
} // namespace mlir

#endif // OVERLAPDIALECT_ANALYSIS_VERIFYINPUT_H
