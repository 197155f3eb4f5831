//===- overlap-run.cpp - Run ovl programs on the CPU runtime --------------===//
//
// JIT-compiles an ovl program and runs its entry function on every device of
// its grid, as threads of this process. With --reference it runs a second
// program on the same inputs and compares every output on every device:
// the equivalence oracle for transformations.
//
// Exit status: 0 when the run succeeded (and the outputs match the
// reference), 1 when they do not match, 2 on any other error.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/InitAll.h"
#include "OverlapDialect/Runner/Compare.h"
#include "OverlapDialect/Runner/Inputs.h"
#include "OverlapDialect/Runner/Launch.h"
#include "OverlapDialect/Runner/Program.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace llvm;
using namespace overlap;

static cl::OptionCategory category("overlap-run options");

static cl::opt<std::string> inputFile(cl::Positional, cl::Required,
                                      cl::desc("<program.mlir>"),
                                      cl::cat(category));
static cl::opt<std::string>
    entryName("entry", cl::desc("Function to run (default: the only public one)"),
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
    cl::desc("Read inputs from DIR/device<d>_input<i>.npy instead of --seed"),
    cl::value_desc("DIR"), cl::cat(category));
static cl::opt<std::string> saveOutputs(
    "save-outputs", cl::desc("Write DIR/device<d>_output<i>.npy"),
    cl::value_desc("DIR"), cl::cat(category));
static cl::opt<std::string>
    transport("transport", cl::init("threads"),
              cl::desc("How devices communicate: threads (one process)"),
              cl::cat(category));
static cl::opt<double> linkBandwidth(
    "link-bandwidth", cl::init(0),
    cl::desc("Emulated link bandwidth in GB/s per transfer (0: off)"),
    cl::cat(category));
static cl::opt<double>
    linkLatency("link-latency", cl::init(0),
                cl::desc("Emulated latency in microseconds per transfer"),
                cl::cat(category));
static cl::opt<double>
    timeout("timeout", cl::init(30),
            cl::desc("Seconds any device waits for a peer before failing"),
            cl::cat(category));
static cl::opt<int64_t> repeat("repeat", cl::init(1),
                               cl::desc("Steps to run and time"),
                               cl::cat(category));
static cl::opt<double> relTolerance("rtol", cl::init(-1),
                            cl::desc("Relative tolerance (default: by type)"),
                            cl::cat(category));
static cl::opt<double> absTolerance("atol", cl::init(-1),
                            cl::desc("Absolute tolerance (default: 0)"),
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

/// Ends the tool with status 2 and a message.
[[noreturn]] static void fatal(const Twine &message) {
  errs() << "overlap-run: error: " << message << "\n";
  std::exit(2);
}

static std::unique_ptr<Program> compileFile(mlir::MLIRContext &context,
                                            StringRef path, StringRef entry) {
  SourceMgr sourceMgr;
  mlir::SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  auto file = MemoryBuffer::getFileOrSTDIN(path);
  if (!file)
    fatal("cannot read " + path + ": " + file.getError().message());
  sourceMgr.AddNewSourceBuffer(std::move(*file), SMLoc());
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, &context);
  if (!module)
    fatal("cannot parse " + path);
  CompileOptions options;
  options.entry = entry.str();
  options.optLevel = optLevel;
  auto program = Program::compile(*module, options);
  if (!program)
    fatal(path + ": " + toString(program.takeError()));
  return std::move(*program);
}

static DeviceTensors loadInputs(const Program &program) {
  if (inputDir.empty())
    return makeRandomInputs(program.getInputTypes(), program.getNumDevices(),
                            seed);
  DeviceTensors inputs(program.getNumDevices());
  for (int64_t device = 0; device < program.getNumDevices(); ++device) {
    for (auto [i, type] : llvm::enumerate(program.getInputTypes())) {
      SmallString<128> path(inputDir);
      sys::path::append(path, formatv("device{0}_input{1}.npy", device, i));
      auto tensor = readNpy(path, type);
      if (!tensor)
        fatal(toString(tensor.takeError()));
      inputs[device].push_back(std::move(*tensor));
    }
  }
  return inputs;
}

static void printTensor(raw_ostream &os, const HostTensor &tensor) {
  int64_t count = tensor.type().numElements();
  os << "[";
  for (int64_t i = 0; i < count; ++i)
    os << (i ? ", " : "") << format("%g", tensor.getAsDouble(i));
  os << "]";
}

static std::string formatPosition(ArrayRef<int64_t> position) {
  std::string text;
  for (int64_t index : position)
    text += (text.empty() ? "" : ", ") + std::to_string(index);
  return "[" + text + "]";
}

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "overlap-run: run an ovl program on the CPU runtime, one thread per "
      "device\n");
  if (transport != "threads")
    fatal("unknown transport '" + transport + "'; expected threads");

  mlir::DialectRegistry registry;
  overlap::registerAllDialects(registry);
  mlir::registerBuiltinDialectTranslation(registry);
  mlir::registerLLVMDialectTranslation(registry);
  mlir::MLIRContext context(registry);

  std::unique_ptr<Program> program = compileFile(context, inputFile, entryName);
  std::unique_ptr<Program> reference;
  if (!referenceFile.empty()) {
    reference = compileFile(context, referenceFile,
                            referenceEntry.empty() ? entryName : referenceEntry);
    if (reference->getNumDevices() != program->getNumDevices())
      fatal(formatv("the program runs on {0} devices but the reference on {1}",
                    program->getNumDevices(), reference->getNumDevices()));
    if (reference->getInputTypes() != program->getInputTypes())
      fatal("the program and the reference take different inputs");
  }

  DeviceTensors inputs = loadInputs(*program);
  LaunchOptions launch;
  launch.world.timeoutSeconds = timeout;
  launch.world.linkBandwidthGBps = linkBandwidth;
  launch.world.linkLatencyUs = linkLatency;
  launch.repeat = repeat;
  LaunchResult run = launchOnThreads(*program, inputs, launch);

  std::optional<Comparison> comparison;
  if (reference) {
    LaunchOptions once = launch;
    once.repeat = 1;
    LaunchResult expected = launchOnThreads(*reference, inputs, once);
    std::optional<Tolerance> tolerance;
    if (relTolerance >= 0 || absTolerance >= 0)
      tolerance = Tolerance{std::max(0.0, double(relTolerance)),
                            std::max(0.0, double(absTolerance))};
    comparison = compareOutputs(run.outputs, expected.outputs, tolerance);
  }

  if (!saveOutputs.empty()) {
    for (auto [device, outputs] : llvm::enumerate(run.outputs)) {
      for (auto [i, tensor] : llvm::enumerate(outputs)) {
        SmallString<128> path(saveOutputs);
        sys::path::append(path, formatv("device{0}_output{1}.npy", device, i));
        if (Error error = writeNpy(path, tensor))
          fatal(toString(std::move(error)));
      }
    }
  }

  std::vector<double> sorted = run.stepSeconds;
  std::sort(sorted.begin(), sorted.end());
  double median = sorted[sorted.size() / 2], fastest = sorted.front();

  if (emitJson) {
    json::Object result{
        {"program", inputFile},
        {"entry", program->getEntryName()},
        {"devices", program->getNumDevices()},
        {"transport", transport},
        {"steps", static_cast<int64_t>(run.stepSeconds.size())},
        {"step_seconds_median", median},
        {"step_seconds_min", fastest},
    };
    if (comparison) {
      json::Object compared{{"reference", referenceFile},
                            {"equal", comparison->equal},
                            {"max_abs_error", comparison->maxAbsError},
                            {"max_rel_error", comparison->maxRelError}};
      if (!comparison->structuralError.empty())
        compared["error"] = comparison->structuralError;
      if (comparison->firstMismatch) {
        const Mismatch &m = *comparison->firstMismatch;
        compared["first_mismatch"] = json::Object{
            {"device", m.device},
            {"output", m.output},
            {"position", json::Array(m.position)},
            {"actual", m.actual},
            {"expected", m.expected}};
      }
      result["comparison"] = std::move(compared);
    }
    if (printOutputs) {
      json::Array devices;
      for (const auto &outputs : run.outputs) {
        json::Array tensors;
        for (const HostTensor &tensor : outputs) {
          json::Array values;
          for (int64_t i = 0; i < tensor.type().numElements(); ++i)
            values.push_back(tensor.getAsDouble(i));
          tensors.push_back(json::Object{{"type", tensor.type().str()},
                                         {"values", std::move(values)}});
        }
        devices.push_back(std::move(tensors));
      }
      result["outputs"] = std::move(devices);
    }
    outs() << formatv("{0:2}", json::Value(std::move(result))) << "\n";
  } else {
    outs() << formatv("{0}: @{1} on {2} devices ({3})\n", inputFile,
                      program->getEntryName(), program->getNumDevices(),
                      transport);
    outs() << formatv("  step time: median {0:f3} ms, min {1:f3} ms over {2} "
                      "step(s)\n",
                      median * 1e3, fastest * 1e3, run.stepSeconds.size());
    if (printOutputs) {
      for (auto [device, outputs] : llvm::enumerate(run.outputs)) {
        for (auto [i, tensor] : llvm::enumerate(outputs)) {
          outs() << formatv("  device {0} output {1} ({2}): ", device, i,
                            tensor.type().str());
          printTensor(outs(), tensor);
          outs() << "\n";
        }
      }
    }
    if (comparison) {
      outs() << formatv("  reference {0}: {1} (max abs error {2:e}, max rel "
                        "error {3:e})\n",
                        referenceFile,
                        comparison->equal ? "equal" : "NOT EQUAL",
                        comparison->maxAbsError, comparison->maxRelError);
      if (!comparison->structuralError.empty())
        outs() << "  " << comparison->structuralError << "\n";
      if (comparison->firstMismatch) {
        const Mismatch &m = *comparison->firstMismatch;
        outs() << formatv("  first difference: device {0} output {1} at {2}: ",
                          m.device, m.output, formatPosition(m.position))
               << format("%g vs reference %g\n", m.actual, m.expected);
      }
    }
  }
  return comparison && !comparison->equal ? 1 : 0;
}
