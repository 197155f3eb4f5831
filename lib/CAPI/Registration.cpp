//===- Registration.cpp - C API: register everything overlap has ----------===//

#include "overlap-c/Registration.h"

#include "OverlapDialect/InitAll.h"

#include "mlir/CAPI/IR.h"
#include "mlir/Transforms/Passes.h"

#include <mutex>

void overlapRegisterAllDialects(MlirDialectRegistry registry) {
  overlap::registerAllDialects(*unwrap(registry));
}

void overlapRegisterAllPasses(void) {
  // Registering a pipeline name twice aborts; callers (and bindings that
  // import twice) need not keep track.
  static std::once_flag once;
  std::call_once(once, [] {
    overlap::registerAllPasses();
    mlir::registerTransformsPasses();
  });
}
