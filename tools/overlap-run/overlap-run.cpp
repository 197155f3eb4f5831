//===- overlap-run.cpp - Run ovl programs on the CPU runtime --------------===//
//
// JIT-compiles an ovl program and runs its entry function on every device of
// its grid, as threads of this process or, with --transport mpi under
// mpirun, as one MPI rank per device (the rank is the device). With
// --reference it runs a second program on the same inputs and compares
// every output on every device: the equivalence oracle for transformations.
// Under MPI, rank 0 gathers the outputs, compares, saves and prints.
//
// A program compiled before comes from the compile cache
// (Runner/CompileCache.h): nothing is lowered or compiled again. Before it
// makes the inputs it checks that the host has the memory the run needs
// (Runner/Report.h), and it reports the compile and run times.
//
// Exit status (of every rank): 0 when the run succeeded (and the outputs
// match the reference), 1 when they do not match or a program does not
// parse or compile (a located error says why), 2 on a usage or input error
// (a bad flag or value, a missing file, no such entry function, too little
// memory); the runtime's fatal errors end the run with 70.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/Analysis/EntryFunction.h"
#include "OverlapDialect/Analysis/VerifyInput.h"
#include "OverlapDialect/InitAll.h"
#include "OverlapDialect/Runner/Compare.h"
#include "OverlapDialect/Runner/Inputs.h"
#include "OverlapDialect/Runner/Launch.h"
#include "OverlapDialect/Runner/LaunchMpi.h"
#include "OverlapDialect/Runner/Program.h"
#include "OverlapDialect/Runner/Report.h"
#include "OverlapDialect/Support/BoundedFile.h"
#include "OverlapDialect/Support/CommandLine.h"
#include "OverlapDialect/Support/TargetCpu.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

using namespace llvm;
using namespace overlap;

static cl::OptionCategory category("overlap-run options");

static cl::opt<std::string> inputFile(cl::Positional, cl::Required,
                                      cl::desc("<program.mlir>"),
                                      cl::cat(category));
static cl::opt<std::string>
    entryName("entry",
              cl::desc("Function to run (default: the only public one)"),
              cl::cat(category));
static cl::opt<std::string>
    referenceFile("reference",
                  cl::desc("Run this program on the same inputs and compare "
                           "every output on every device"),
                  cl::value_desc("other.mlir"), cl::cat(category));
static cl::opt<std::string> referenceEntry(
    "reference-entry",
    cl::desc("Function of the reference to run (default: as --entry)"),
    cl::cat(category));
static cl::opt<uint64_t> seed("seed", cl::init(0),
                              cl::desc("Seed of the random inputs"),
                              cl::cat(category));
static cl::opt<std::string> inputDir(
    "inputs",
    cl::desc("Read inputs from DIR/device<d>_input<i>.npy instead of --seed "
             "(with mpi, each rank reads its own)"),
    cl::value_desc("DIR"), cl::cat(category));
static cl::opt<std::string> saveOutputs(
    "save-outputs",
    cl::desc("Write DIR/device<d>_output<i>.npy, creating DIR (with mpi, "
             "rank 0 writes)"),
    cl::value_desc("DIR"), cl::cat(category));
static cl::opt<std::string>
    transport("transport", cl::init("threads"),
              cl::desc("How devices communicate: threads (one process) "
                       "or mpi (one rank per device, under mpirun)"),
              cl::cat(category));
static cl::opt<double> linkBandwidth(
    "link-bandwidth", cl::init(0),
    cl::desc("Emulated link bandwidth in GB/s per transfer (0: off; "
             "threads only)"),
    cl::cat(category));
static cl::opt<double>
    linkLatency("link-latency", cl::init(0),
                cl::desc("Emulated latency in microseconds per transfer"),
                cl::cat(category));
static cl::opt<double>
    timeout("timeout", cl::init(30),
            cl::desc("Seconds any device waits for a peer before failing"),
            cl::cat(category));
static cl::opt<double>
    lostAfter("lost-after", cl::init(10),
              cl::desc("MPI: seconds without a heartbeat after which a rank is "
                       "reported lost (0: only the timeout finds lost ranks)"),
              cl::cat(category));
static cl::opt<std::string> readyFile(
    "ready-file",
    cl::desc("Write this empty file once every device is about to run its "
             "first step (with mpi: rank 0 writes it once every rank's "
             "heartbeat hears all the others), for scripts that act on a "
             "running job"),
    cl::value_desc("PATH"), cl::cat(category));
static cl::opt<int64_t> repeat("repeat", cl::init(1),
                               cl::desc("Steps to run and time"),
                               cl::cat(category));
static cl::opt<double>
    relTolerance("rtol", cl::init(0),
                 cl::desc("Relative tolerance (default: by type)"),
                 cl::cat(category));
static cl::opt<double> absTolerance("atol", cl::init(0),
                                    cl::desc("Absolute tolerance (default: 0)"),
                                    cl::cat(category));
static cl::opt<RelativeTo> relativeTo(
    "rtol-relative-to", cl::init(RelativeTo::TensorScale),
    cl::desc("What rtol scales"),
    cl::values(clEnumValN(RelativeTo::TensorScale, "tensor-scale",
                          "|expected| plus the largest finite |expected| of "
                          "the tensor (the default)"),
               clEnumValN(RelativeTo::Element, "element",
                          "each element's |expected| alone")),
    cl::cat(category));
static cl::opt<bool> emitJson("json",
                              cl::desc("Print a machine-readable result"),
                              cl::cat(category));
static cl::opt<bool> printOutputs("print-outputs",
                                  cl::desc("Print every output tensor"),
                                  cl::cat(category));
static cl::opt<unsigned> optLevel("O", cl::init(3), cl::Prefix,
                                  cl::desc("JIT optimization level (0-3)"),
                                  cl::cat(category));
static cl::opt<std::string> targetCpu(
    "target-cpu", cl::init("native"),
    cl::desc("The CPU to compile for: native (the host, the default) or an "
             "LLVM x86-64 CPU name, e.g. haswell, skylake-avx512, x86-64-v3; "
             "one whose features this host lacks is refused"),
    cl::cat(category));

static cl::opt<bool>
    noCache("no-cache",
            cl::desc("Compile without the compile cache: neither read nor "
                     "write it"),
            cl::cat(category));
static cl::opt<std::string> cacheDir(
    "cache-dir",
    cl::desc("The compile cache's folder (default: $OVERLAP_CACHE_DIR, else "
             "$XDG_CACHE_HOME/overlap, else ~/.cache/overlap)"),
    cl::value_desc("DIR"), cl::cat(category));

static cl::opt<bool> verifyCollectives(
    "verify-collectives", cl::init(true),
    cl::desc("Refuse a program whose devices would not communicate alike "
             "(ovl-verify-collectives) before it runs; =false lets the "
             "runtime meet the mismatch"),
    cl::cat(category));

/// Ends the tool with a usage error and a message.
[[noreturn]] static void fatal(const Twine &message) {
  errs() << "overlap-run: error: " << message << "\n";
  std::exit(ExitUsage);
}

/// A usage or input error (status 2), or a program rejected (status 1):
/// the error code tells them apart.
static Error makeUsageError(const Twine &message) {
  return createStringError(std::make_error_code(std::errc::invalid_argument),
                           message);
}
static Error makeProgramError(const Twine &message) {
  return createStringError(inconvertibleErrorCode(), message);
}

/// Prints `error` and returns its exit status.
static int reportError(Error error) {
  int status = ExitNegative;
  handleAllErrors(std::move(error), [&](const ErrorInfoBase &info) {
    if (info.convertToErrorCode() == std::errc::invalid_argument)
      status = ExitUsage;
    errs() << "overlap-run: error: " << info.message() << "\n";
  });
  return status;
}

static double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

/// Compiles the program at `path` with `cache`, printing the cache's
/// warnings when `warn`.
static Expected<std::unique_ptr<Program>>
compileFile(mlir::MLIRContext &context, StringRef path, StringRef entry,
            const CompileCacheOptions &cache, bool warn) {
  SourceMgr sourceMgr;
  mlir::SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  Expected<std::unique_ptr<MemoryBuffer>> file = overlap::readProgramFile(path);
  if (!file)
    return makeUsageError("cannot read " + path + ": " +
                          toString(file.takeError()));
  sourceMgr.AddNewSourceBuffer(std::move(*file), SMLoc());
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::ovl::parseInput(sourceMgr, &context);
  if (!module)
    return makeProgramError("cannot parse " + path);
  FailureOr<mlir::FunctionOpInterface> found =
      mlir::ovl::findEntryFunction(*module, entry, "--entry");
  if (failed(found))
    return makeUsageError(path + ": no entry function to run");
  CompileOptions options;
  options.entry = found->getName().str();
  options.optLevel = optLevel;
  options.verifyCollectives = verifyCollectives;
  options.targetCpu = targetCpu;
  options.cache = cache;
  auto program = Program::compile(*module, options);
  if (!program)
    return makeProgramError(path + ": " + toString(program.takeError()));
  for (const std::string &warning : (*program)->getCacheWarnings())
    if (warn)
      errs() << "overlap-run: warning: " << warning << "\n";
  return std::move(*program);
}

/// The inputs of devices [first, first + count).
static Expected<DeviceTensors> loadInputs(const Program &program, int64_t first,
                                          int64_t count) {
  DeviceTensors inputs;
  if (inputDir.empty()) {
    DeviceTensors all = makeRandomInputs(program.getInputTypes(),
                                         program.getNumDevices(), seed);
    std::move(all.begin() + first, all.begin() + first + count,
              std::back_inserter(inputs));
    return inputs;
  }
  for (int64_t device = first; device < first + count; ++device) {
    std::vector<HostTensor> &tensors = inputs.emplace_back();
    for (auto [i, type] : llvm::enumerate(program.getInputTypes())) {
      SmallString<128> path(inputDir);
      sys::path::append(path, formatv("device{0}_input{1}.npy", device, i));
      auto tensor = readNpy(path, type);
      if (!tensor)
        return makeUsageError(toString(tensor.takeError()));
      tensors.push_back(std::move(*tensor));
    }
  }
  return inputs;
}

/// What a run needs: the programs and the inputs of the devices this
/// process runs (all of them with threads, its rank's with MPI).
struct Setup {
  std::unique_ptr<Program> program, reference;
  DeviceTensors inputs;
  double compileSeconds = 0;
};

static Expected<Setup> prepare(mlir::MLIRContext &context,
                               const CompileCacheOptions &cache,
                               const MpiSession *mpi) {
  Setup setup;
  // The ranks meet the same cache: one says what went wrong.
  bool warn = !mpi || mpi->isRoot();
  auto compileStart = std::chrono::steady_clock::now();
  auto program = compileFile(context, inputFile, entryName, cache, warn);
  if (!program)
    return program.takeError();
  setup.program = std::move(*program);
  int64_t numDevices = setup.program->getNumDevices();
  if (!referenceFile.empty()) {
    auto reference = compileFile(
        context, referenceFile,
        referenceEntry.empty() ? entryName : referenceEntry, cache, warn);
    if (!reference)
      return reference.takeError();
    setup.reference = std::move(*reference);
    if (setup.reference->getNumDevices() != numDevices)
      return makeProgramError(
          formatv("the program runs on {0} devices but the reference on {1}",
                  numDevices, setup.reference->getNumDevices()));
    if (setup.reference->getInputTypes() != setup.program->getInputTypes())
      return makeProgramError(
          "the program and the reference take different inputs");
  }
  setup.compileSeconds = secondsSince(compileStart);
  // The device threads of one process would share the global, where MPI's
  // ranks (and devices) each have their own: the program would compute
  // another thing on each transport.
  for (const Program *compiled : {setup.program.get(), setup.reference.get()})
    if (!mpi && numDevices > 1 && compiled &&
        !compiled->getMutableGlobal().empty())
      return makeProgramError(formatv(
          "memref.global @{0} is not constant: the {1} device "
          "threads of --transport threads would share one copy of it; run "
          "the devices as MPI ranks (--transport mpi), or carry the state "
          "in the function's arguments and results",
          compiled->getMutableGlobal(), numDevices));
  if (mpi && mpi->size() != numDevices)
    return makeUsageError(
        formatv("the program runs on {0} devices but the MPI "
                "world has {1} ranks: start one rank per device "
                "(mpirun -np {0})",
                numDevices, mpi->size()));
  // Refused before any input is made: a program sized for a pod would
  // otherwise exhaust the host's memory part way.
  int64_t devicesHere = mpi ? 1 : numDevices;
  if (Error error = checkRunMemory(
          estimateRunBytes(*setup.program, setup.reference.get(), devicesHere),
          devicesHere))
    return makeUsageError(toString(std::move(error)));
  auto inputs = mpi ? loadInputs(*setup.program, mpi->rank(), 1)
                    : loadInputs(*setup.program, 0, numDevices);
  if (!inputs)
    return inputs.takeError();
  setup.inputs = std::move(*inputs);
  return setup;
}

/// Creates --ready-file, empty.
static Error writeReadyFile() {
  std::error_code ec;
  raw_fd_ostream file(readyFile, ec);
  if (ec)
    return makeUsageError("cannot write " + readyFile + ": " + ec.message());
  return Error::success();
}

/// Compares, saves and prints the results of a run; returns the exit
/// status.
static int report(const Setup &setup, const LaunchResult &run,
                  const LaunchResult *expected, double runSeconds) {
  RunReport summary;
  summary.programPath = inputFile;
  summary.entryName = setup.program->getEntryName();
  summary.devices = setup.program->getNumDevices();
  summary.transport = transport;
  summary.compileSeconds = setup.compileSeconds;
  summary.compileCache = setup.program->getCacheUse();
  if (setup.reference)
    summary.referenceCompileCache = setup.reference->getCacheUse();
  summary.runSeconds = runSeconds;
  // Checked runnable in main.
  TargetCpu cpu = cantFail(lookupTargetCpu(targetCpu));
  ContractionTiles tiles = contractionTilesFor(cpu, hostCacheSizes());
  summary.targetCpu = cpu.name;
  summary.tileRows = tiles.mr;
  summary.tileColumns = tiles.nr;
  summary.run = &run;
  summary.printOutputs = printOutputs;
  if (expected) {
    std::optional<Tolerance> tolerance;
    if (relTolerance.getNumOccurrences() || absTolerance.getNumOccurrences())
      tolerance = Tolerance{relTolerance, absTolerance};
    summary.referencePath = referenceFile;
    summary.comparison =
        compareOutputs(run.outputs, expected->outputs, tolerance, relativeTo);
  }

  if (!saveOutputs.empty()) {
    if (std::error_code ec = sys::fs::create_directories(saveOutputs)) {
      errs() << "overlap-run: error: cannot create " << saveOutputs << ": "
             << ec.message() << "\n";
      return ExitUsage;
    }
    for (auto [device, outputs] : llvm::enumerate(run.outputs)) {
      for (auto [i, tensor] : llvm::enumerate(outputs)) {
        SmallString<128> path(saveOutputs);
        sys::path::append(path, formatv("device{0}_output{1}.npy", device, i));
        if (Error error = writeNpy(path, tensor)) {
          errs() << "overlap-run: error: " << toString(std::move(error))
                 << "\n";
          return ExitUsage;
        }
      }
    }
  }
  printRunReport(summary, emitJson, outs());
  return (summary.comparison && !summary.comparison->equal) || run.changedStep
             ? ExitNegative
             : ExitSuccess;
}

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  parseToolCommandLine(
      argc, argv,
      std::string("overlap-run: run an ovl program on the CPU runtime, one "
                  "thread per device or one MPI rank per device\n\n") +
          kExitStatusHelp);
  if (transport != "threads" && transport != "mpi")
    fatal("unknown transport '" + transport + "'; expected threads or mpi");
  checkFlagValue("--rtol", ranges::kTolerance, relTolerance);
  checkFlagValue("--atol", ranges::kTolerance, absTolerance);
  checkFlagValue("--repeat", ranges::kSteps, double(repeat));
  checkFlagValue("--timeout", ranges::kTimeoutSeconds, timeout);
  checkFlagValue("--lost-after", ranges::kLostAfterSeconds, lostAfter);
  checkFlagValue("--link-bandwidth", ranges::kLinkBandwidthGBps, linkBandwidth);
  checkFlagValue("--link-latency", ranges::kLinkLatencyUs, linkLatency);
  if (Expected<TargetCpu> cpu = lookupRunnableTargetCpu(targetCpu); !cpu)
    fatal("--target-cpu: " + toString(cpu.takeError()));
  Expected<CompileCacheOptions> cache = compileCacheOptionsFromEnvironment();
  if (!cache)
    fatal(toString(cache.takeError()));
  if (noCache && cacheDir.getNumOccurrences())
    fatal("--no-cache and --cache-dir exclude each other");
  if (cacheDir.getNumOccurrences() && cacheDir.empty())
    fatal("--cache-dir needs a folder");
  if (noCache)
    cache->dir.clear();
  else if (!cacheDir.empty())
    cache->dir = cacheDir;
  else if (cache->dir.empty())
    errs() << "overlap-run: warning: no folder for the compile cache (no "
              "home directory): set OVERLAP_CACHE_DIR; compiling without "
              "it\n";
  std::unique_ptr<MpiSession> mpi;
  if (transport == "mpi") {
    if (linkBandwidth > 0 || linkLatency > 0)
      fatal("link emulation (--link-bandwidth, --link-latency) needs "
            "--transport threads");
    auto session = MpiSession::open(argv[0], lostAfter, timeout);
    if (!session)
      fatal(toString(session.takeError()));
    mpi = std::move(*session);
  }

  mlir::DialectRegistry registry;
  overlap::registerAllDialects(registry);
  mlir::registerBuiltinDialectTranslation(registry);
  mlir::registerLLVMDialectTranslation(registry);
  mlir::MLIRContext context(registry);

  Expected<Setup> setup = prepare(context, *cache, mpi.get());
  if (mpi) {
    // Every rank must leave the same way, so they agree first. Ranks
    // usually fail alike (same files): then rank 0 alone reports.
    MpiSession::Agreement agreed = mpi->agree(bool(setup), timeout);
    if (!agreed.everyRank) {
      int status = ExitUsage;
      if (!setup && (mpi->isRoot() || agreed.rootRank))
        status = reportError(setup.takeError());
      else if (!setup)
        consumeError(setup.takeError());
      return mpi->finish(status, timeout);
    }
  } else if (!setup) {
    return reportError(setup.takeError());
  }

  if (!readyFile.empty()) {
    if (!mpi) {
      if (Error error = writeReadyFile())
        return reportError(std::move(error));
    } else {
      mpi->waitUntilWatched(timeout);
      Error error = mpi->isRoot() ? writeReadyFile() : Error::success();
      bool failed = bool(error);
      if (!mpi->agree(!failed, timeout).everyRank)
        return mpi->finish(failed ? reportError(std::move(error)) : ExitUsage,
                           timeout);
    }
  }

  LaunchOptions launch;
  launch.world.timeoutSeconds = timeout;
  launch.world.linkBandwidthGBps = linkBandwidth;
  launch.world.linkLatencyUs = linkLatency;
  launch.repeat = repeat;
  auto runProgram = [&](const Program &program, const LaunchOptions &options) {
    return mpi ? mpi->launch(program, setup->inputs.front(), options)
               : launchOnThreads(program, setup->inputs, options);
  };
  auto runStart = std::chrono::steady_clock::now();
  LaunchResult run = runProgram(*setup->program, launch);
  std::optional<LaunchResult> expected;
  if (setup->reference) {
    LaunchOptions once = launch;
    once.repeat = 1;
    expected = runProgram(*setup->reference, once);
  }
  double runSeconds = secondsSince(runStart);
  if (!mpi)
    return report(*setup, run, expected ? &*expected : nullptr, runSeconds);
  int status =
      mpi->isRoot()
          ? report(*setup, run, expected ? &*expected : nullptr, runSeconds)
          : 0;
  return mpi->finish(status, timeout);
}
