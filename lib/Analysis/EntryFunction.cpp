//===- EntryFunction.cpp - The function a tool runs or simulates ----------===//

#include "OverlapDialect/Analysis/EntryFunction.h"

using namespace mlir;

FailureOr<FunctionOpInterface>
ovl::findEntryFunction(ModuleOp module, StringRef name, StringRef flag) {
  std::string naming = flag.empty() ? "" : (" with " + flag).str();
  if (!name.empty()) {
    auto func = module.lookupSymbol<FunctionOpInterface>(name);
    if (!func || func.isExternal())
      return module.emitError("no function @") << name << " with a body";
    return func;
  }
  SmallVector<FunctionOpInterface> candidates;
  for (auto func : module.getOps<FunctionOpInterface>())
    if (func.isPublic() && !func.isExternal())
      candidates.push_back(func);
  if (candidates.empty())
    return module.emitError("no public function with a body");
  if (candidates.size() > 1) {
    InFlightDiagnostic diag =
        module.emitError("several public functions with a body (");
    llvm::interleaveComma(candidates, diag, [&](FunctionOpInterface func) {
      diag << "@" << func.getName();
    });
    return diag << "); name the entry function" << naming;
  }
  return candidates.front();
}
