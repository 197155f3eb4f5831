//===- Parse.cpp - C API: read a module as overlap's tools do -------------===//

#include "overlap-c/Parse.h"

#include "OverlapDialect/Analysis/VerifyInput.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Support.h"
#include "mlir/Parser/Parser.h"

#include <string>

using namespace mlir;

MlirModule overlapModuleCreateParse(MlirContext context, MlirStringRef text) {
  // MLIR's lexer reads one past a string literal that ends the buffer.
  std::string copy(text.data, text.length);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(
      copy, ParserConfig(unwrap(context), /*verifyAfterParse=*/false));
  if (!module || failed(ovl::verifyInput(*module)))
    return MlirModule{nullptr};
  return wrap(module.release());
}
