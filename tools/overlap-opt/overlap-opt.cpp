//===- overlap-opt.cpp - The overlap optimizer driver ---------------------===//
//
// mlir-opt with the ovl dialect and the overlap passes on top of every
// upstream dialect, extension and pass.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  overlap::registerAllDialects(registry);
  mlir::registerAllPasses();
  overlap::registerAllPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "overlap optimizer driver\n", registry));
}
