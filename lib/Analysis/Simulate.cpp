//===- Simulate.cpp - Simulate a function of a module ---------------------===//

#include "OverlapDialect/Analysis/Simulate.h"

#include "OverlapDialect/Analysis/MachineModel.h"
#include "OverlapDialect/Analysis/PeakMemory.h"
#include "OverlapDialect/Analysis/SimProgramBuilder.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Support/Timing.h"

using namespace mlir;
using namespace mlir::ovl;

void ovl::recordMachine(ModuleOp module, const MachineChoice &machine) {
  Builder builder(module.getContext());
  SmallVector<NamedAttribute> fields;
  fields.push_back(builder.getNamedAttr(
      "hardware", builder.getStringAttr(machine.hardware)));
  if (!machine.topology.empty())
    fields.push_back(builder.getNamedAttr(
        "topology", builder.getStringAttr(machine.topology)));
  if (!machine.deviceAssignment.empty())
    fields.push_back(builder.getNamedAttr(
        "device_assignment",
        builder.getDenseI64ArrayAttr(machine.deviceAssignment)));
  module->setAttr(kMachineAttrName, builder.getDictionaryAttr(fields));
}

/// The machine recorded on `module`, if any; fails after an error at the
/// module when the attribute is not what recordMachine writes.
static FailureOr<std::optional<MachineChoice>>
getRecordedMachine(ModuleOp module) {
  Attribute attr = module->getAttr(kMachineAttrName);
  if (!attr)
    return std::optional<MachineChoice>();
  auto malformed = [&] {
    return module.emitError()
           << "'" << kMachineAttrName
           << "' must be a dictionary of hardware (a string), topology (a "
              "string) and device_assignment (array<i64>), not "
           << attr;
  };
  auto dict = dyn_cast<DictionaryAttr>(attr);
  if (!dict)
    return malformed();
  MachineChoice machine;
  for (NamedAttribute field : dict) {
    StringRef name = field.getName().getValue();
    auto text = dyn_cast<StringAttr>(field.getValue());
    auto array = dyn_cast<DenseI64ArrayAttr>(field.getValue());
    if (name == "hardware" && text)
      machine.hardware = text.str();
    else if (name == "topology" && text)
      machine.topology = text.str();
    else if (name == "device_assignment" && array)
      machine.deviceAssignment.assign(array.asArrayRef().begin(),
                                      array.asArrayRef().end());
    else
      return malformed();
  }
  if (!dict.get("hardware"))
    return malformed();
  return std::optional<MachineChoice>(std::move(machine));
}

/// "'x'", or "the default" for an empty choice.
static std::string describe(StringRef choice) {
  return choice.empty() ? "the default" : ("'" + choice + "'").str();
}

static std::string describe(ArrayRef<int64_t> assignment) {
  if (assignment.empty())
    return "the default";
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "'";
  llvm::interleave(assignment, os, ",");
  os << "'";
  return text;
}

FailureOr<MachineChoice>
ovl::resolveMachine(ModuleOp module, const RequestedMachine &requested) {
  FailureOr<std::optional<MachineChoice>> recorded = getRecordedMachine(module);
  if (failed(recorded))
    return failure();
  MachineChoice machine = recorded->value_or(MachineChoice());
  // A choice given explicitly wins; when it differs from the machine the
  // pipeline tuned for, the figures are not those the gate and the
  // scheduler expected, which the caller may not have meant.
  auto warnIfDifferent = [&](StringRef what, const std::string &given,
                             const std::string &tuned) {
    if (*recorded && given != tuned)
      module.emitWarning("simulating with ")
          << what << " " << given << ", not " << tuned
          << " that the module was tuned for ('" << kMachineAttrName << "')";
  };
  if (requested.hardware) {
    warnIfDifferent("hardware", describe(*requested.hardware),
                    describe(machine.hardware));
    machine.hardware = *requested.hardware;
  }
  if (requested.topology) {
    warnIfDifferent("topology", describe(*requested.topology),
                    describe(machine.topology));
    machine.topology = *requested.topology;
  }
  if (requested.deviceAssignment) {
    warnIfDifferent("device assignment", describe(*requested.deviceAssignment),
                    describe(machine.deviceAssignment));
    machine.deviceAssignment = *requested.deviceAssignment;
  }
  return machine;
}

FailureOr<SimReport> ovl::simulateFunction(FunctionOpInterface func,
                                           MachineModelCache &machines,
                                           const SimulateOptions &options,
                                           SimulateFailure *why) {
  auto fail = [&](SimulateFailure kind) {
    if (why)
      *why = kind;
    return FailureOr<SimReport>(failure());
  };
  TimingScope untimed;
  TimingScope &timing = options.timing ? *options.timing : untimed;
  FailureOr<SmallVector<int64_t, 4>> gridShape = getProgramGridShape(func);
  if (failed(gridShape))
    return fail(SimulateFailure::Program);
  llvm::Expected<const MachineModel *> machine = machines.get(*gridShape);
  if (!machine) {
    func.emitError("cannot build the machine model: ")
        << llvm::toString(machine.takeError());
    return fail(SimulateFailure::Machine);
  }
  SimProgramOptions programOptions;
  programOptions.collectiveDirection = options.collectiveDirection;
  TimingScope buildTiming = timing.nest("build step list");
  FailureOr<SimProgram> program =
      buildSimProgram(func, **machine, programOptions);
  buildTiming.stop();
  if (failed(program))
    return fail(SimulateFailure::Program);
  std::string maxInFlightError = overlap::checkNumber(
      "max-in-flight", ranges::kMaxInFlight, options.maxInFlight);
  if (!maxInFlightError.empty()) {
    func.emitError(maxInFlightError);
    return fail(SimulateFailure::Options);
  }
  SimOptions simOptions;
  simOptions.maxInFlight = options.maxInFlight;
  simOptions.trace = options.trace;
  simOptions.bruteForce = options.bruteForce;
  if (options.trace) {
    int64_t numDevices = (*machine)->assignment.getNumLogicalDevices();
    if (options.traceDevices) {
      if (!options.traceDevices->empty() &&
          options.traceDevices->back() >= numDevices) {
        func.emitError("cannot trace device ")
            << options.traceDevices->back() << ": the program has "
            << numDevices << " devices (0-" << numDevices - 1 << ")";
        return fail(SimulateFailure::Options);
      }
      simOptions.traceDevices = *options.traceDevices;
    } else if (numDevices > kDefaultTraceDevices) {
      for (int64_t d = 0; d < kDefaultTraceDevices; ++d)
        simOptions.traceDevices.push_back(d);
    }
    simOptions.traceMaxSpans = options.traceMaxSpans;
  }
  TimingScope simulateTiming = timing.nest("simulate");
  llvm::Expected<SimReport> report = simulate(*program, **machine, simOptions);
  simulateTiming.stop();
  if (!report) {
    func.emitError("cannot simulate: ") << llvm::toString(report.takeError());
    return fail(SimulateFailure::Program);
  }
  if (auto funcOp = dyn_cast<func::FuncOp>(func.getOperation())) {
    TimingScope peakTiming = timing.nest("peak memory");
    FailureOr<PeakMemory> peak = estimatePeakMemory(funcOp);
    if (failed(peak))
      return fail(SimulateFailure::Program);
    report->peakMemoryBytes = static_cast<double>(peak->peakBytes);
  }
  return std::move(*report);
}
