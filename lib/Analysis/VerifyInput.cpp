//===- VerifyInput.cpp - A program read by the tools, verified ------------===//

#include "OverlapDialect/Analysis/VerifyInput.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

using namespace mlir;

LogicalResult ovl::verifyInput(Operation *root) {
  bool ok = true;
  root->walk([&](shard::GridOp grid) {
    for (auto [axis, size] : llvm::enumerate(grid.getShape()))
      if (size == 0) {
        grid.emitError("grid axis ")
            << axis << " has size 0: every axis of a grid holds a device";
        ok = false;
      }
  });
  if (!ok)
    return failure();
  return verify(root);
}

OwningOpRef<ModuleOp> ovl::parseInput(llvm::SourceMgr &sourceMgr,
                                      MLIRContext *context) {
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(
      sourceMgr, ParserConfig(context, /*verifyAfterParse=*/false));
  if (module && failed(verifyInput(*module)))
    return nullptr;
  return module;
}
