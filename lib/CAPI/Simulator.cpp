//===- Simulator.cpp - C API: simulate an ovl program ---------------------===//

#include "overlap-c/Simulator.h"

#include "OverlapDialect/Analysis/CollectiveConsistency.h"
#include "OverlapDialect/Analysis/EntryFunction.h"
#include "OverlapDialect/Analysis/MachineModel.h"
#include "OverlapDialect/Analysis/Simulate.h"
#include "OverlapDialect/Simulator/Simulator.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Support.h"
#include "mlir/CAPI/Utils.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <cstring>

using namespace mlir;

/// The JSON report, or failure after a diagnostic on the module. Empty
/// machine choices are the one recorded on the module, else the default.
static FailureOr<std::string>
simulateToString(ModuleOp module, StringRef entryName, StringRef hardware,
                 StringRef topology, ArrayRef<int64_t> assignment,
                 unsigned maxInFlight) {
  // One step list for all devices: they must communicate alike.
  if (failed(ovl::verifyCollectiveConsistency(module)))
    return failure();
  FailureOr<FunctionOpInterface> entry =
      ovl::findEntryFunction(module, entryName);
  if (failed(entry))
    return failure();
  ovl::RequestedMachine requested;
  if (!hardware.empty())
    requested.hardware = hardware.str();
  if (!topology.empty())
    requested.topology = topology.str();
  if (!assignment.empty())
    requested.deviceAssignment.emplace(assignment.begin(), assignment.end());
  FailureOr<ovl::MachineChoice> machine =
      ovl::resolveMachine(module, requested);
  if (failed(machine))
    return failure();
  ovl::MachineModelCache machines(machine->hardware, machine->topology,
                                  machine->deviceAssignment);
  ovl::SimulateOptions options;
  options.maxInFlight = maxInFlight;
  FailureOr<ovl::SimReport> report =
      ovl::simulateFunction(*entry, machines, options);
  if (failed(report))
    return failure();
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
