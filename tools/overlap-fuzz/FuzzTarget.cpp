//===- FuzzTarget.cpp - libFuzzer target: overlap's compiler on any text --===//
//
// Each input is the text of an MLIR module. It goes where a user's module
// goes: parsed and verified, printed and parsed again, through the
// decomposition on its own and `ovl-overlap-pipeline`, then
// `ovl-lower-to-ici`, `ovl-to-llvm` and the translation to LLVM IR (never
// executed), and the simulator's program builder and a bounded simulation.
// Errors are the expected answer to most inputs and are swallowed; what the
// fuzzer finds is what the tools must never do: crash, trip a sanitizer,
// hang, let one of overlap's passes (or canonicalize) leave invalid IR, let
// a pass fail without saying why, or print IR that does not parse back.
//
// Which options a pass runs with is a function of the input's hash, so an
// input replays the same way and the corpus covers every option.
//
//===----------------------------------------------------------------------===//

#include "UpstreamCrashes.h"

#include "OverlapDialect/Analysis/MachineModel.h"
#include "OverlapDialect/Analysis/SimProgramBuilder.h"
#include "OverlapDialect/Analysis/VerifyInput.h"
#include "OverlapDialect/InitAll.h"
#include "OverlapDialect/Simulator/Simulator.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/Hashing.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstdlib>

using namespace mlir;

namespace {

/// Inputs longer than this are not programs anyone writes by hand; their
/// cost is the parser's, which the fuzzer would then mostly measure.
constexpr size_t kMaxInputBytes = 1 << 16;

/// Larger grids are skipped: the gate, the scheduler and the simulator
/// work per device, a 2^18-device grid takes seconds (minutes under the
/// sanitizers) and would be reported as a hang. The limits themselves
/// (2^20 devices) have their tests.
constexpr int64_t kMaxGridDevices = 4096;

bool hasLargeGrid(ModuleOp module) {
  return module
      ->walk([](shard::GridOp grid) {
        int64_t devices = 1;
        for (int64_t extent : grid.getShape())
          if (extent > 0 && (llvm::MulOverflow(devices, extent, devices) ||
                             devices > kMaxGridDevices))
            return WalkResult::interrupt();
        return WalkResult::advance();
      })
      .wasInterrupted();
}

/// The simulator plays at most this many steps of one function: enough for
/// every test program, small enough that no input takes seconds.
constexpr uint64_t kMaxSimulatedSteps = 1 << 12;

[[noreturn]] void finding(llvm::StringRef what, llvm::StringRef detail) {
  llvm::errs() << "overlap-fuzz: " << what << ": " << detail << "\n";
  llvm::errs().flush();
  std::abort();
}

/// How far the inputs got, printed at exit: a mutator that stops reaching
/// the passes shows here first.
struct StageCounts {
  uint64_t inputs = 0, parsed = 0, pipelined = 0, lowered = 0, simulated = 0;
  ~StageCounts() {
    if (inputs)
      std::fprintf(stderr,
                   "overlap-fuzz: %llu inputs: %llu parsed, %llu through "
                   "ovl-overlap-pipeline, %llu to LLVM IR, %llu simulated\n",
                   (unsigned long long)inputs, (unsigned long long)parsed,
                   (unsigned long long)pipelined, (unsigned long long)lowered,
                   (unsigned long long)simulated);
  }
} stages;

/// OVERLAP_FUZZ_DIAGNOSTICS=1 prints the diagnostics the harness swallows,
/// to see why an input stops where it does.
bool printDiagnostics() {
  static bool enabled = std::getenv("OVERLAP_FUZZ_DIAGNOSTICS");
  return enabled;
}

/// Counts the errors emitted while it lives, and swallows every diagnostic.
struct ErrorCounter {
  explicit ErrorCounter(MLIRContext &context)
      : handler(&context, [this](Diagnostic &diag) {
          if (diag.getSeverity() == DiagnosticSeverity::Error)
            ++errors;
          if (printDiagnostics())
            llvm::errs() << diag.getLocation() << ": " << diag << "\n";
          return success();
        }) {}
  unsigned errors = 0;
  ScopedDiagnosticHandler handler;
};

/// The pass manager verifies after every pass, as in the tools, which then
/// report a located error. When the IR is invalid after overlap's own pass,
/// or after canonicalize or CSE (which run overlap's folds and patterns),
/// that is a finding: the pass made it, or an input overlap's verifiers
/// accept let an upstream rewrite make it. Upstream lowerings that break on
/// a program with undefined behaviour (a slice at a negative offset) stop
/// with the verifier's error, like any failed pass.
struct CheckInvalidIRAfterPass : public PassInstrumentation {
  void runAfterPassFailed(Pass *pass, Operation *op) override {
    llvm::StringRef name = pass->getArgument();
    bool ours =
        name.starts_with("ovl-") || name == "canonicalize" || name == "cse";
    if (ours && failed(verify(op)))
      finding("pass left invalid IR", name);
  }
};

/// Runs `pipeline` (textual, on builtin.module) on `module`.
/// Returns whether it succeeded; a failure with no error emitted is a
/// finding (the brief's "never a silent no-op").
bool runPipeline(ModuleOp module, llvm::StringRef pipeline) {
  MLIRContext *context = module.getContext();
  PassManager pm(context, ModuleOp::getOperationName());
  pm.addInstrumentation(std::make_unique<CheckInvalidIRAfterPass>());
  std::string parseErrors;
  llvm::raw_string_ostream parseErrorStream(parseErrors);
  if (failed(parsePassPipeline(pipeline, pm, parseErrorStream)))
    finding("the harness's pipeline does not parse", parseErrors);
  ErrorCounter counter(*context);
  if (succeeded(pm.run(module)))
    return true;
  if (counter.errors == 0)
    finding("pipeline failed without an error", pipeline);
  return false;
}

/// The module printed and parsed back: a printer that writes what the
/// parser refuses is a finding.
void checkRoundTrip(ModuleOp module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os);
  ErrorCounter counter(*module.getContext());
  OwningOpRef<ModuleOp> reparsed =
      parseSourceString<ModuleOp>(text, module.getContext());
  if (!reparsed)
    finding("printed IR does not parse back", text);
}

/// Plays every function with a body on the machine of its grid, with the
/// step bound of the fuzzer.
void simulate(ModuleOp module) {
  ErrorCounter counter(*module.getContext());
  bool played = false;
  ovl::MachineModelCache machines("tpu-v4", "", {});
  for (auto func : module.getOps<FunctionOpInterface>()) {
    if (func.isExternal())
      continue;
    FailureOr<SmallVector<int64_t, 4>> gridShape =
        ovl::getProgramGridShape(func);
    if (failed(gridShape))
      continue;
    llvm::Expected<const ovl::MachineModel *> machine =
        machines.get(*gridShape);
    if (!machine) {
      llvm::consumeError(machine.takeError());
      continue;
    }
    ovl::SimProgramOptions programOptions;
    programOptions.maxSteps = kMaxSimulatedSteps;
    FailureOr<ovl::SimProgram> program =
        ovl::buildSimProgram(func, **machine, programOptions);
    if (failed(program))
      continue;
    llvm::Expected<ovl::SimReport> report = ovl::simulate(*program, **machine);
    if (!report)
      llvm::consumeError(report.takeError());
    else
      played = true;
  }
  stages.simulated += played;
}

/// Lowers a copy of `module` to the LLVM dialect and translates it to LLVM
/// IR, as `overlap-run` does before it JIT-compiles.
void lowerToLLVMIR(ModuleOp module) {
  OwningOpRef<ModuleOp> copy = module.clone();
  if (!runPipeline(*copy, "ovl-to-llvm"))
    return;
  llvm::LLVMContext llvmContext;
  ErrorCounter counter(*module.getContext());
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(*copy, llvmContext);
  if (!llvmModule && counter.errors == 0)
    finding("translation to LLVM IR failed without an error", "");
  if (llvmModule)
    ++stages.lowered;
}

MLIRContext &getContext() {
  static DialectRegistry registry = [] {
    DialectRegistry r;
    overlap::registerAllDialects(r);
    registerBuiltinDialectTranslation(r);
    registerLLVMDialectTranslation(r);
    return r;
  }();
  static MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  return context;
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  overlap::registerAllPasses();
  getContext().loadAllAvailableDialects();
  getContext().printOpOnDiagnostic(false);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > kMaxInputBytes)
    return -1;
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  if (overlap::fuzz::hitsUpstreamCrash(text))
    return -1;
  ++stages.inputs;
  MLIRContext &context = getContext();
  OwningOpRef<ModuleOp> module;
  {
    ErrorCounter counter(context);
    // The lexer relies on the NUL that ends every buffer the tools read
    // (llvm::MemoryBuffer); libFuzzer's bytes have none.
    llvm::SourceMgr sourceMgr;
    sourceMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text),
                                 llvm::SMLoc());
    // As the tools read a program: unverified, a grid axis of size 0
    // refused, then verified.
    module = ovl::parseInput(sourceMgr, &context);
  }
  if (!module)
    return 0;
  if (hasLargeGrid(*module))
    return -1;
  ++stages.parsed;
  checkRoundTrip(*module);

  // The options each pass runs with, from the input's bits.
  uint64_t bits = llvm::hash_value(text);
  auto pick = [&](unsigned choices) {
    unsigned choice = bits % choices;
    bits /= choices;
    return choice;
  };
  const char *gate = pick(2) ? "always" : "cost";
  static const char *const unrolls[] = {"1", "2", "auto"};
  static const char *const directions[] = {"false", "true", "split", "auto"};
  const char *unroll = unrolls[pick(3)];
  const char *bidirectional = directions[pick(4)];
  const char *algorithm = pick(2) ? "bottom-up" : "top-down";
  const char *remarks = pick(2) ? "true" : "false";
  static const char *const gatherScatters[] = {"false", "true", "auto"};
  const char *gatherScatter = gatherScatters[pick(3)];

  {
    OwningOpRef<ModuleOp> copy = module->clone();
    runPipeline(*copy, "ovl-import-shard");
  }
  {
    OwningOpRef<ModuleOp> copy = module->clone();
    std::string decompose =
        (llvm::Twine("func.func(ovl-decompose-collective-einsum{gate=always "
                     "unroll=") +
         unroll + " bidirectional=" + bidirectional + " gather-scatter=" +
         gatherScatter + " remarks=" + remarks + "},ovl-async-collectives)")
            .str();
    runPipeline(*copy, decompose);
  }
  std::string overlapPipeline =
      (llvm::Twine("ovl-overlap-pipeline{gate=") + gate + " unroll=" + unroll +
       " bidirectional=" + bidirectional + " gather-scatter=" + gatherScatter +
       " algorithm=" + algorithm + " remarks=" + remarks + "}")
          .str();
  if (!runPipeline(*module, overlapPipeline))
    return 0;
  ++stages.pipelined;
  {
    OwningOpRef<ModuleOp> copy = module->clone();
    runPipeline(*copy, "ovl-lower-to-ici");
  }
  lowerToLLVMIR(*module);
  simulate(*module);
  return 0;
}
