//===- overlap-sim.cpp - Simulate ovl programs on an accelerator pod ------===//
//
// Plays an SPMD ovl program on a model of a pod: the hardware's compute
// rates, its interconnect's links and latencies, the grid placed on a
// topology. Prints how long one step takes and where the time goes, as text
// or JSON, and can write a Chrome/Perfetto trace of chosen devices and
// their links (by default devices 0-7 and at most 200000 spans, with a
// note on what was left out).
//
// With --all-functions it plays every function of the module in turn, one
// report each, so that a script comparing many variants of a program (say
// every order of a block) pays for one process and one parse.
//
// Devices that play alike are played once (Simulator.h); --brute-force
// plays every device. --mlir-timing prints where the tool's time went:
// parsing, building the step list, simulating, estimating peak memory.
//
// Exit status: 0 on success, 1 when the program cannot be simulated (a
// located error says why), 2 on a usage error.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/Analysis/CollectiveConsistency.h"
#include "OverlapDialect/Analysis/MachineModel.h"
#include "OverlapDialect/Analysis/PeakMemory.h"
#include "OverlapDialect/Analysis/SimProgramBuilder.h"
#include "OverlapDialect/InitAll.h"
#include "OverlapDialect/Simulator/Simulator.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
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

/// The trace's defaults keep it small: Perfetto loads a trace of 8 devices
/// and at most 200000 spans (some 35 MB) at once, where one of every device
/// of a large pod runs to hundreds of MB (docs/Simulator.md, "The trace").
static constexpr int64_t kDefaultTraceDevices = 8;
static constexpr int64_t kDefaultTraceMaxEvents = 200000;

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
             "the path of a JSON description"),
    cl::value_desc("name|file.json"), cl::cat(category));
static cl::opt<std::string> topology(
    "topology",
    cl::desc("Physical extents, e.g. 4x4x8 (default: near-cubic for the "
             "grid's device count)"),
    cl::value_desc("AxBxC"), cl::cat(category));
static cl::list<int64_t> deviceAssignment(
    "device-assignment", cl::CommaSeparated,
    cl::desc("Physical device of each logical device, in logical order "
             "(default: row-major)"),
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
    "trace-max-events", cl::init(kDefaultTraceMaxEvents),
    cl::desc("Spans the trace holds at most, the earliest (0: no bound; "
             "the trace's otherData says what was left out)"),
    cl::cat(category));

static mlir::FunctionOpInterface findEntry(mlir::ModuleOp module) {
  if (!entryName.empty()) {
    auto func = module.lookupSymbol<mlir::FunctionOpInterface>(entryName);
    if (!func)
      module.emitError("no function named '") << entryName << "'";
    return func;
  }
  mlir::FunctionOpInterface found;
  for (auto func : module.getOps<mlir::FunctionOpInterface>()) {
    if (func.isExternal() || !func.isPublic())
      continue;
    if (found) {
      module.emitError("several public functions; choose one with --entry");
      return {};
    }
    found = func;
  }
  if (!found)
    module.emitError("no public function with a body to simulate");
  return found;
}

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
    if (hi - lo >= int64_t(1) << 20)
      return createStringError("--trace-devices: the range '" + item +
                               "' has more devices than a machine");
    for (int64_t d = lo; d <= hi; ++d)
      devices.push_back(d);
  }
  llvm::sort(devices);
  devices.erase(std::unique(devices.begin(), devices.end()), devices.end());
  return devices;
}

/// --trace-devices as parsed by main (empty: every device), before the
/// program is read so that a bad list fails at once.
static std::vector<int64_t> parsedTraceDevices;

/// Simulates `func` on the machine of its grid (`machines` builds one per
/// grid shape) into `report`. Returns the exit status: 0, or 1 or 2 after
/// saying why.
static int simulateFunction(mlir::FunctionOpInterface func,
                            mlir::ovl::MachineModelCache &machines,
                            raw_ostream *trace, mlir::TimingScope &timing,
                            mlir::ovl::SimReport &report) {
  FailureOr<SmallVector<int64_t, 4>> gridShape =
      mlir::ovl::getProgramGridShape(func);
  if (failed(gridShape))
    return 1;
  Expected<const mlir::ovl::MachineModel *> machine = machines.get(*gridShape);
  if (!machine) {
    errs() << "overlap-sim: " << toString(machine.takeError()) << "\n";
    return 2;
  }
  mlir::ovl::SimProgramOptions programOptions;
  if (unidirectional)
    programOptions.collectiveDirection =
        mlir::ovl::RingDirection::Unidirectional;
  mlir::TimingScope buildTiming = timing.nest("build step list");
  FailureOr<mlir::ovl::SimProgram> program =
      mlir::ovl::buildSimProgram(func, **machine, programOptions);
  buildTiming.stop();
  if (failed(program))
    return 1;
  mlir::ovl::SimOptions simOptions;
  simOptions.maxInFlight = maxInFlight;
  simOptions.trace = trace;
  if (trace) {
    int64_t numDevices = (*machine)->assignment.getNumLogicalDevices();
    std::vector<int64_t> devices = parsedTraceDevices;
    if (!devices.empty() && devices.back() >= numDevices) {
      errs() << formatv("overlap-sim: --trace-devices: device {0} is not one "
                        "of the program's {1} devices (0-{2})\n",
                        devices.back(), numDevices, numDevices - 1);
      return 2;
    }
    if (!traceDevices.getNumOccurrences() && numDevices > kDefaultTraceDevices)
      for (int64_t d = 0; d < kDefaultTraceDevices; ++d)
        devices.push_back(d);
    simOptions.traceDevices = std::move(devices);
    simOptions.traceMaxSpans = traceMaxEvents;
  }
  simOptions.bruteForce = bruteForce;
  mlir::TimingScope simulateTiming = timing.nest("simulate");
  Expected<mlir::ovl::SimReport> simulated =
      mlir::ovl::simulate(*program, **machine, simOptions);
  simulateTiming.stop();
  if (!simulated) {
    errs() << "overlap-sim: " << toString(simulated.takeError()) << "\n";
    return 1;
  }
  report = std::move(*simulated);
  if (!report.traceNote.empty())
    errs() << "overlap-sim: note: " << report.traceNote
           << " (--trace-devices, --trace-max-events)\n";
  if (auto funcOp = dyn_cast<mlir::func::FuncOp>(func.getOperation())) {
    mlir::TimingScope peakTiming = timing.nest("peak memory");
    FailureOr<mlir::ovl::PeakMemory> peak =
        mlir::ovl::estimatePeakMemory(funcOp);
    if (failed(peak))
      return 1;
    report.peakMemoryBytes = static_cast<double>(peak->peakBytes);
    if (report.fitsInMemory() == false)
      errs() << formatv("overlap-sim: warning: @{0} needs {1} bytes per "
                        "device at its peak, more than the {2} bytes of "
                        "HBM of {3}\n",
                        func.getName(), peak->peakBytes,
                        int64_t(report.hbmCapacityBytes), report.hardware);
  }
  return 0;
}

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  mlir::registerDefaultTimingManagerCLOptions();
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "overlap-sim: simulate an ovl program on a model of an accelerator "
      "pod\n\n(--mlir-timing prints the time of each phase: parse, verify "
      "collectives, build step list, simulate, peak memory)\n");
  if (traceFile.empty() && (traceDevices.getNumOccurrences() ||
                            traceMaxEvents.getNumOccurrences())) {
    errs() << "overlap-sim: --trace-devices and --trace-max-events need "
              "--trace\n";
    return 2;
  }
  if (traceMaxEvents < 0) {
    errs() << "overlap-sim: --trace-max-events: " << traceMaxEvents
           << " is negative (0: no bound)\n";
    return 2;
  }
  if (traceDevices.getNumOccurrences()) {
    Expected<std::vector<int64_t>> devices = parseTraceDevices(traceDevices);
    if (!devices) {
      errs() << "overlap-sim: " << toString(devices.takeError()) << "\n";
      return 2;
    }
    parsedTraceDevices = std::move(*devices);
  }
  if (allFunctions && (!entryName.empty() || !traceFile.empty())) {
    errs() << "overlap-sim: --all-functions takes neither --entry nor "
              "--trace\n";
    return 2;
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
  std::string error;
  std::unique_ptr<MemoryBuffer> buffer = mlir::openInputFile(inputFile, &error);
  if (!buffer) {
    errs() << "overlap-sim: " << error << "\n";
    return 2;
  }
  sourceMgr.AddNewSourceBuffer(std::move(buffer), SMLoc());
  mlir::TimingScope parseTiming = timing.nest("parse");
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, &context);
  parseTiming.stop();
  if (!module)
    return 1;
  // The simulator plays one step list for all devices: they must agree.
  mlir::TimingScope verifyTiming = timing.nest("verify collectives");
  if (failed(mlir::ovl::verifyCollectiveConsistency(*module)))
    return 1;
  verifyTiming.stop();

  SmallVector<mlir::FunctionOpInterface> entries;
  if (allFunctions) {
    for (auto func : module->getOps<mlir::FunctionOpInterface>())
      if (!func.isExternal())
        entries.push_back(func);
    if (entries.empty()) {
      module->emitError("no function with a body to simulate");
      return 1;
    }
  } else {
    mlir::FunctionOpInterface entry = findEntry(*module);
    if (!entry)
      return 1;
    entries.push_back(entry);
  }

  std::unique_ptr<ToolOutputFile> trace;
  if (!traceFile.empty()) {
    std::error_code ec;
    trace = std::make_unique<ToolOutputFile>(traceFile, ec, sys::fs::OF_Text);
    if (ec) {
      errs() << "overlap-sim: cannot write '" << traceFile
             << "': " << ec.message() << "\n";
      return 2;
    }
  }
  mlir::ovl::MachineModelCache machines(hardware, topology, deviceAssignment);
  if (allFunctions && jsonOutput)
    outs() << "[\n";
  for (auto [i, func] : llvm::enumerate(entries)) {
    mlir::ovl::SimReport report;
    if (int status = simulateFunction(
            func, machines, trace ? &trace->os() : nullptr, timing, report))
      return status;
    if (!allFunctions) {
      if (jsonOutput) {
        mlir::ovl::writeReportJSON(report, outs());
        outs() << "\n";
      } else {
        mlir::ovl::printReport(report, outs());
      }
      continue;
    }
    if (jsonOutput) {
      outs() << (i ? ",\n" : "")
             << "{\"function\": " << llvm::json::Value(func.getName().str())
             << ", \"report\": ";
      mlir::ovl::writeReportJSON(report, outs());
      outs() << "}";
    } else {
      outs() << (i ? "\n" : "") << "@" << func.getName() << "\n";
      mlir::ovl::printReport(report, outs());
    }
  }
  if (allFunctions && jsonOutput)
    outs() << "\n]\n";
  if (trace)
    trace->keep();
  return 0;
}
