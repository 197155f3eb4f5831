//===- overlap-sim.cpp - Simulate ovl programs on an accelerator pod ------===//
//
// Plays an SPMD ovl program on a model of a pod: the hardware's compute
// rates, its interconnect's links and latencies, the grid placed on a
// topology. Prints how long one step takes and where the time goes, as text
// or JSON, and can write a Chrome/Perfetto trace of every device and link.
//
// With --all-functions it plays every function of the module in turn, one
// report each, so that a script comparing many variants of a program (say
// every order of a block) pays for one process and one parse.
//
// Devices that play alike are played once (Simulator.h); --brute-force
// plays every device. --mlir-timing prints where the tool's time went:
// parsing, building the step list, simulating, estimating peak memory.
//
// The machine is the one ovl-overlap-pipeline recorded on the module
// (`ovl.machine`), unless --hardware, --topology or --device-assignment
// name another (a warning says when it differs), else TPU v4.
//
// Exit status: 0 on success, 1 when the program cannot be simulated (a
// located error says why), 2 on a usage or input error (a bad flag or
// value, a missing file, no such entry function, a machine that does not
// fit the program's grid).
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/Analysis/CollectiveConsistency.h"
#include "OverlapDialect/Analysis/EntryFunction.h"
#include "OverlapDialect/Analysis/MachineModel.h"
#include "OverlapDialect/Analysis/Simulate.h"
#include "OverlapDialect/Analysis/VerifyInput.h"
#include "OverlapDialect/InitAll.h"
#include "OverlapDialect/Simulator/Simulator.h"
#include "OverlapDialect/Support/BoundedFile.h"
#include "OverlapDialect/Support/CommandLine.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

static cl::OptionCategory category("overlap-sim options");

static cl::opt<std::string> inputFile(cl::Positional, cl::Required,
                                      cl::desc("<program.mlir>"),
                                      cl::cat(category));
static cl::opt<std::string>
    entryName("entry",
              cl::desc("Function to simulate (default: the only public one)"),
              cl::cat(category));
static cl::opt<bool> allFunctions(
    "all-functions",
    cl::desc("Simulate every function with a body, in module order; --json "
             "prints a list of {\"function\", \"report\"} objects"),
    cl::cat(category));
static cl::opt<std::string> hardware(
    "hardware", cl::init("tpu-v4"),
    cl::desc("Built-in hardware (tpu-v4, tpu-v5e, tpu-v5p, h100-nvlink) or "
             "the path of a JSON description (default: the one "
             "ovl-overlap-pipeline recorded on the module, else tpu-v4)"),
    cl::value_desc("name|file.json"), cl::cat(category));
static cl::opt<std::string> topology(
    "topology",
    cl::desc("Physical extents, e.g. 4x4x8 (default: the recorded one, "
             "else near-cubic for the grid's device count)"),
    cl::value_desc("AxBxC"), cl::cat(category));
static cl::list<int64_t> deviceAssignment(
    "device-assignment", cl::CommaSeparated,
    cl::desc("Physical device of each logical device, in logical order "
             "(default: the recorded one, else row-major)"),
    cl::value_desc("p0,p1,..."), cl::cat(category));
static cl::opt<unsigned> maxInFlight(
    "max-in-flight", cl::init(0),
    cl::desc("Asynchronous transfers in flight per device (default: the "
             "hardware's DMA slots)"),
    cl::cat(category));
static cl::opt<bool> unidirectional(
    "unidirectional-collectives",
    cl::desc("Run blocking collectives as one-way rings (default: both ways)"),
    cl::cat(category));
static cl::opt<bool> bruteForce(
    "brute-force",
    cl::desc("Play every device, also when devices play alike (by default "
             "one device per orbit of the torus translations that map the "
             "program onto itself stands for the others, with the same "
             "report; the report's symmetry line says which was played)"),
    cl::cat(category));
static cl::opt<bool> jsonOutput("json", cl::desc("Print the report as JSON"),
                                cl::cat(category));
static cl::opt<std::string>
    traceFile("trace",
              cl::desc("Write a Chrome/Perfetto trace (chrome://tracing, "
                       "ui.perfetto.dev)"),
              cl::value_desc("file.json"), cl::cat(category));

static cl::opt<std::string> traceDevices(
    "trace-devices",
    cl::desc("Devices the trace shows, with the links that leave or enter "
             "them: a list of devices and ranges such as 0,2,5-7, or 'all' "
             "(default: 0-7, every device of a program of at most 8)"),
    cl::value_desc("list|all"), cl::cat(category));
static cl::opt<int64_t> traceMaxEvents(
    "trace-max-events", cl::init(mlir::ovl::kDefaultTraceMaxSpans),
    cl::desc("Spans the trace holds at most, the earliest (0: no bound; "
             "the trace's otherData says what was left out)"),
    cl::cat(category));

/// The devices of --trace-devices, ascending, each once (empty for 'all'),
/// or a usage error.
static Expected<std::vector<int64_t>> parseTraceDevices(StringRef text) {
  std::vector<int64_t> devices;
  if (text == "all")
    return devices;
  SmallVector<StringRef> items;
  text.split(items, ',');
  for (StringRef item : items) {
    auto [first, last] = item.split('-');
    if (!item.contains('-'))
      last = first;
    // getAsInteger takes digits only here: a '-' went to split.
    int64_t lo, hi;
    if (first.getAsInteger(10, lo) || last.getAsInteger(10, hi))
      return createStringError("--trace-devices: '" + item +
                               "' is not a device or a range A-B of devices "
                               "(e.g. 0,2,5-7, or all)");
    if (hi < lo)
      return createStringError("--trace-devices: the range '" + item +
                               "' ends before it starts");
    // No machine has more devices: checked before the loop below counts
    // up to `hi` (INT64_MAX once overflowed it).
    if (hi >= int64_t(1) << 20)
      return createStringError("--trace-devices: '" + item +
                               "' names a device beyond the 2^20 of the "
                               "largest machine");
    for (int64_t d = lo; d <= hi; ++d)
      devices.push_back(d);
  }
  llvm::sort(devices);
  devices.erase(std::unique(devices.begin(), devices.end()), devices.end());
  return devices;
}

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  mlir::registerDefaultTimingManagerCLOptions();
  cl::HideUnrelatedOptions(category);
  overlap::parseToolCommandLine(
      argc, argv,
      std::string("overlap-sim: simulate an ovl program on a model of an "
                  "accelerator pod\n\n(--mlir-timing prints the time of each "
                  "phase: parse, verify collectives, build step list, "
                  "simulate, peak memory)\n\n") +
          overlap::kExitStatusHelp);
  if (traceFile.empty() && (traceDevices.getNumOccurrences() ||
                            traceMaxEvents.getNumOccurrences())) {
    errs() << "overlap-sim: --trace-devices and --trace-max-events need "
              "--trace\n";
    return overlap::ExitUsage;
  }
  overlap::checkFlagValue("--trace-max-events", mlir::ovl::ranges::kTraceSpans,
                          double(traceMaxEvents));
  std::optional<std::vector<int64_t>> tracedDevices;
  if (traceDevices.getNumOccurrences()) {
    Expected<std::vector<int64_t>> devices = parseTraceDevices(traceDevices);
    if (!devices) {
      errs() << "overlap-sim: " << toString(devices.takeError()) << "\n";
      return overlap::ExitUsage;
    }
    tracedDevices = std::move(*devices);
  }
  if (allFunctions && (!entryName.empty() || !traceFile.empty())) {
    errs() << "overlap-sim: --all-functions takes neither --entry nor "
              "--trace\n";
    return overlap::ExitUsage;
  }

  mlir::DefaultTimingManager timingManager;
  mlir::applyDefaultTimingManagerCLOptions(timingManager);
  mlir::TimingScope timing = timingManager.getRootScope();

  mlir::DialectRegistry registry;
  overlap::registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  // Located errors speak for themselves; the op's dump would bury them.
  context.printOpOnDiagnostic(false);
  SourceMgr sourceMgr;
  mlir::SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  Expected<std::unique_ptr<MemoryBuffer>> buffer =
      overlap::readProgramFile(inputFile);
  if (!buffer) {
    errs() << "overlap-sim: cannot read input file '" << inputFile
           << "': " << toString(buffer.takeError()) << "\n";
    return overlap::ExitUsage;
  }
  sourceMgr.AddNewSourceBuffer(std::move(*buffer), SMLoc());
  mlir::TimingScope parseTiming = timing.nest("parse");
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::ovl::parseInput(sourceMgr, &context);
  parseTiming.stop();
  if (!module)
    return overlap::ExitNegative;
  // The simulator plays one step list for all devices: they must agree.
  mlir::TimingScope verifyTiming = timing.nest("verify collectives");
  if (failed(mlir::ovl::verifyCollectiveConsistency(*module)))
    return overlap::ExitNegative;
  verifyTiming.stop();

  SmallVector<mlir::FunctionOpInterface> entries;
  if (allFunctions) {
    for (auto func : module->getOps<mlir::FunctionOpInterface>())
      if (!func.isExternal())
        entries.push_back(func);
    if (entries.empty()) {
      module->emitError("no function with a body to simulate");
      return overlap::ExitUsage;
    }
  } else {
    FailureOr<mlir::FunctionOpInterface> entry =
        mlir::ovl::findEntryFunction(*module, entryName, "--entry");
    if (failed(entry))
      return overlap::ExitUsage;
    entries.push_back(*entry);
  }

  mlir::ovl::RequestedMachine requested;
  if (hardware.getNumOccurrences())
    requested.hardware = hardware;
  if (topology.getNumOccurrences())
    requested.topology = topology;
  if (deviceAssignment.getNumOccurrences())
    requested.deviceAssignment.emplace(deviceAssignment.begin(),
                                       deviceAssignment.end());
  FailureOr<mlir::ovl::MachineChoice> machine =
      mlir::ovl::resolveMachine(*module, requested);
  if (failed(machine))
    return overlap::ExitNegative;

  std::unique_ptr<ToolOutputFile> trace;
  if (!traceFile.empty()) {
    std::error_code ec;
    trace = std::make_unique<ToolOutputFile>(traceFile, ec, sys::fs::OF_Text);
    if (ec) {
      errs() << "overlap-sim: cannot write '" << traceFile
             << "': " << ec.message() << "\n";
      return overlap::ExitUsage;
    }
  }
  mlir::ovl::MachineModelCache machines(machine->hardware, machine->topology,
                                        machine->deviceAssignment);
  mlir::ovl::SimulateOptions options;
  if (unidirectional)
    options.collectiveDirection = mlir::ovl::RingDirection::Unidirectional;
  options.maxInFlight = maxInFlight;
  options.bruteForce = bruteForce;
  options.trace = trace ? &trace->os() : nullptr;
  options.traceDevices = tracedDevices;
  options.traceMaxSpans = traceMaxEvents;
  options.timing = &timing;
  if (allFunctions && jsonOutput)
    outs() << "[\n";
  for (auto [i, func] : llvm::enumerate(entries)) {
    mlir::ovl::SimulateFailure why;
    FailureOr<mlir::ovl::SimReport> report =
        mlir::ovl::simulateFunction(func, machines, options, &why);
    if (failed(report))
      return why == mlir::ovl::SimulateFailure::Program ? overlap::ExitNegative
                                                        : overlap::ExitUsage;
    if (!report->traceNote.empty())
      errs() << "overlap-sim: note: " << report->traceNote
             << " (--trace-devices, --trace-max-events)\n";
    if (report->fitsInMemory() == false)
      errs() << formatv("overlap-sim: warning: @{0} needs {1} bytes per "
                        "device at its peak, more than the {2} bytes of "
                        "HBM of {3}\n",
                        func.getName(), int64_t(report->peakMemoryBytes),
                        int64_t(report->hbmCapacityBytes), report->hardware);
    if (!allFunctions) {
      if (jsonOutput) {
        mlir::ovl::writeReportJSON(*report, outs());
        outs() << "\n";
      } else {
        mlir::ovl::printReport(*report, outs());
      }
      continue;
    }
    if (jsonOutput) {
      outs() << (i ? ",\n" : "")
             << "{\"function\": " << llvm::json::Value(func.getName().str())
             << ", \"report\": ";
      mlir::ovl::writeReportJSON(*report, outs());
      outs() << "}";
    } else {
      outs() << (i ? "\n" : "") << "@" << func.getName() << "\n";
      mlir::ovl::printReport(*report, outs());
    }
  }
  if (allFunctions && jsonOutput)
    outs() << "\n]\n";
  if (trace)
    trace->keep();
  return overlap::ExitSuccess;
}
