//===- jit_main.cpp - Driver for the JIT-compiled kernels ------*- C++ -*-===//
//
// Runs the recipe the way an embedding C++ tool would: parses matmul.mlir,
// loads the schedule (lib/Pipelines/ContractionSchedule.mlir) into the
// transform dialect's library module (so that the `transform-interpreter`
// pass of the pipeline finds `@__transform_main` without a file path, as if
// the script were embedded as a string), runs the pass pipeline of
// pipeline.txt, JIT-compiles the result with
// mlir::ExecutionEngine for the host CPU at -O3, and hands the
// `_mlir_ciface_*` entry points to the same harness as the AOT driver.
//
//   bench_jit matmul.mlir ContractionSchedule.mlir pipeline.txt
//             [--reps N] [--only NAME] [--max-ratio R] [--engine-defaults]
//
// --engine-defaults calls ExecutionEngine::create(module) with default
// options instead (no LLVM IR optimization, default TargetMachine), to show
// what the explicit -O3 setup buys.
//
//===----------------------------------------------------------------------===//

#include "harness.h"

#include "mlir/Dialect/Transform/IR/TransformDialect.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"

#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace mlir;

/// Reads pipeline.txt: drops '#' comment lines, strips leading blanks and
/// joins the rest, then removes the outer `builtin.module(...)`: parsing that
/// wrapper into a module-anchored PassManager nests a second manager that
/// would only run on nested modules.
static std::string readPipeline(const char *path) {
  auto buf = llvm::MemoryBuffer::getFile(path);
  if (!buf) {
    fprintf(stderr, "cannot read %s\n", path);
    exit(2);
  }
  std::string joined;
  llvm::StringRef rest = (*buf)->getBuffer();
  while (!rest.empty()) {
    auto [line, tail] = rest.split('\n');
    rest = tail;
    line = line.ltrim();
    if (line.empty() || line.starts_with("#"))
      continue;
    joined += line.str();
  }
  llvm::StringRef p(joined);
  if (p.consume_front("builtin.module(") && p.consume_back(")"))
    return p.str();
  return joined;
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr,
            "usage: %s matmul.mlir ContractionSchedule.mlir pipeline.txt "
            "[--reps N] [--only NAME] [--max-ratio R] [--engine-defaults]\n",
            argv[0]);
    return 2;
  }
  int reps = 11;
  const char *only = nullptr;
  double maxRatio = 0.0;
  bool engineDefaults = false;
  for (int i = 4; i < argc; ++i) {
    if (!strcmp(argv[i], "--reps") && i + 1 < argc)
      reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--only") && i + 1 < argc)
      only = argv[++i];
    else if (!strcmp(argv[i], "--max-ratio") && i + 1 < argc)
      maxRatio = atof(argv[++i]);
    else if (!strcmp(argv[i], "--engine-defaults"))
      engineDefaults = true;
    else {
      fprintf(stderr, "unknown argument %s\n", argv[i]);
      return 2;
    }
  }

  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();

  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry); // else convert-to-llvm silently does little
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerAllPasses();
  MLIRContext context(registry);
  context.loadAllAvailableDialects();

  auto t0 = std::chrono::steady_clock::now();
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(argv[1], &context);
  if (!module)
    return 1;

  // The schedule goes into the transform dialect's library, where the
  // `transform-interpreter` pass looks for `@__transform_main`. An embedding
  // tool would parse it from a string with parseSourceString<ModuleOp>.
  OwningOpRef<ModuleOp> schedule = parseSourceFile<ModuleOp>(argv[2], &context);
  if (!schedule)
    return 1;
  auto *transformDialect =
      context.getOrLoadDialect<transform::TransformDialect>();
  if (failed(transformDialect->loadIntoLibraryModule(std::move(schedule)))) {
    fprintf(stderr, "cannot load the schedule into the transform library\n");
    return 1;
  }

  PassManager pm(&context);
  std::string pipeline = readPipeline(argv[3]);
  if (failed(parsePassPipeline(pipeline, pm, llvm::errs())))
    return 1;
  if (failed(pm.run(*module))) {
    fprintf(stderr, "the pass pipeline failed\n");
    return 1;
  }
  auto t1 = std::chrono::steady_clock::now();

  // Host CPU and features (AVX-512 here), -O3 for both the LLVM IR optimizer
  // and the code generator. ExecutionEngine::create ignores
  // ExecutionEngineOptions::jitCodeGenOptLevel when it is handed a
  // TargetMachine, so the level is set on the TargetMachine itself.
  auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!jtmb) {
    llvm::errs() << jtmb.takeError() << "\n";
    return 1;
  }
  jtmb->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  auto tm = jtmb->createTargetMachine();
  if (!tm) {
    llvm::errs() << tm.takeError() << "\n";
    return 1;
  }
  std::string cpu = (*tm)->getTargetCPU().str();
  bool avx512 = (*tm)->getTargetFeatureString().contains("+avx512f");
  std::function<llvm::Error(llvm::Module *)> optimize =
      makeOptimizingTransformer(/*optLevel=*/3, /*sizeLevel=*/0, tm->get());
  ExecutionEngineOptions options;
  options.transformer = optimize;
  options.jitCodeGenOptLevel = llvm::CodeGenOptLevel::Aggressive;
  auto engine = engineDefaults
                    ? ExecutionEngine::create(*module)
                    : ExecutionEngine::create(*module, options, std::move(*tm));
  if (!engine) {
    llvm::errs() << engine.takeError() << "\n";
    return 1;
  }
  (*engine)->initialize();

  std::vector<kernel_case> cases;
#define ENTRY(name, kind, b, m, n, k, gate)                                    \
  cases.push_back({#name, kind, b, m, n, k, nullptr, gate});
  HARNESS_CASES(ENTRY)
#undef ENTRY
  std::vector<kernel_case> selected;
  for (kernel_case &c : cases) {
    if (only && !strstr(c.name, only))
      continue;
    auto fn = (*engine)->lookup(std::string("_mlir_ciface_") + c.name);
    if (!fn) {
      llvm::errs() << fn.takeError() << "\n";
      return 1;
    }
    c.fn = *fn;
    selected.push_back(c);
  }
  auto t2 = std::chrono::steady_clock::now();
  printf("driver: JIT (mlir::ExecutionEngine, %s), target cpu %s, avx512f %s, "
         "passes %.2f s, LLVM opt + codegen %.2f s, %d repetitions per case\n",
         engineDefaults ? "default options: no IR optimization, its own "
                          "detectHost() TargetMachine at codegen -O2"
                        : "IR -O3, codegen -O3",
         cpu.c_str(), avx512 ? "yes" : "no",
         std::chrono::duration<double>(t1 - t0).count(),
         std::chrono::duration<double>(t2 - t1).count(), reps);
  int failures =
      harness_run(selected.data(), (int)selected.size(), reps, maxRatio);
  return failures ? 1 : 0;
}
