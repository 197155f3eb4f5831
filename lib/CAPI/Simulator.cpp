//===- Simulator.cpp - C API: simulate an ovl program ---------------------===//

#include "overlap-c/Simulator.h"

#include "OverlapDialect/Analysis/CollectiveConsistency.h"
#include "OverlapDialect/Analysis/MachineModel.h"
#include "OverlapDialect/Analysis/PeakMemory.h"
#include "OverlapDialect/Analysis/SimProgramBuilder.h"
#include "OverlapDialect/Simulator/Simulator.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Support.h"
#include "mlir/CAPI/Utils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <cstring>

using namespace mlir;

/// The entry function: `name`, or the only public function with a body (as
/// overlap-sim chooses it).
static FunctionOpInterface findEntry(ModuleOp module, StringRef name) {
  if (!name.empty()) {
    auto func = module.lookupSymbol<FunctionOpInterface>(name);
    if (!func)
      module.emitError("no function named '") << name << "'";
    return func;
  }
  FunctionOpInterface found;
  for (auto func : module.getOps<FunctionOpInterface>()) {
    if (func.isExternal() || !func.isPublic())
      continue;
    if (found) {
      module.emitError("several public functions; choose one by name");
      return {};
    }
    found = func;
  }
  if (!found)
    module.emitError("no public function with a body to simulate");
  return found;
}

/// The JSON report, or failure after a diagnostic on the module.
static FailureOr<std::string>
simulateToString(ModuleOp module, StringRef entryName, StringRef hardware,
                 StringRef topology, ArrayRef<int64_t> assignment,
                 unsigned maxInFlight) {
  if (hardware.empty())
    hardware = "tpu-v4";
  // One step list for all devices: they must communicate alike.
  if (failed(ovl::verifyCollectiveConsistency(module)))
    return failure();
  FunctionOpInterface entry = findEntry(module, entryName);
  if (!entry)
    return failure();
  FailureOr<SmallVector<int64_t, 4>> gridShape =
      ovl::getProgramGridShape(entry);
  if (failed(gridShape))
    return failure();
  llvm::Expected<ovl::MachineModel> machine =
      ovl::buildMachineModel(hardware, topology, assignment, *gridShape);
  if (!machine) {
    module.emitError("cannot build the machine model: ")
        << llvm::toString(machine.takeError());
    return failure();
  }
  FailureOr<ovl::SimProgram> program = ovl::buildSimProgram(entry, *machine);
  if (failed(program))
    return failure();
  ovl::SimOptions options;
  options.maxInFlight = maxInFlight;
  llvm::Expected<ovl::SimReport> report =
      ovl::simulate(*program, *machine, options);
  if (!report) {
    module.emitError("simulation failed: ")
        << llvm::toString(report.takeError());
    return failure();
  }
  if (auto func = dyn_cast<func::FuncOp>(entry.getOperation())) {
    FailureOr<ovl::PeakMemory> peak = ovl::estimatePeakMemory(func);
    if (failed(peak))
      return failure();
    report->peakMemoryBytes = static_cast<double>(peak->peakBytes);
  }
  std::string json;
  llvm::raw_string_ostream os(json);
  ovl::writeReportJSON(*report, os);
  return json;
}

MlirLogicalResult overlapSimulate(MlirModule module, MlirStringRef entry,
                                  MlirStringRef hardware,
                                  MlirStringRef topology, intptr_t numAssigned,
                                  const int64_t *deviceAssignment,
                                  unsigned maxInFlight,
                                  MlirStringCallback callback, void *userData) {
  ArrayRef<int64_t> assignment;
  if (numAssigned > 0 && deviceAssignment)
    assignment = ArrayRef<int64_t>(deviceAssignment, numAssigned);
  FailureOr<std::string> json =
      simulateToString(unwrap(module), unwrap(entry), unwrap(hardware),
                       unwrap(topology), assignment, maxInFlight);
  if (failed(json))
    return mlirLogicalResultFailure();
  detail::CallbackOstream stream(callback, userData);
  stream << *json;
  stream.flush();
  return mlirLogicalResultSuccess();
}

char *overlapSimulateToJSON(MlirModule module, MlirStringRef entry,
                            MlirStringRef hardware, MlirStringRef topology) {
  FailureOr<std::string> json =
      simulateToString(unwrap(module), unwrap(entry), unwrap(hardware),
                       unwrap(topology), {}, /*maxInFlight=*/0);
  if (failed(json))
    return nullptr;
  char *result = static_cast<char *>(std::malloc(json->size() + 1));
  if (!result)
    return nullptr;
  std::memcpy(result, json->data(), json->size());
  result[json->size()] = '\0';
  return result;
}

void overlapStringFree(char *string) { std::free(string); }
