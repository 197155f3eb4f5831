//===- overlap-opt.cpp - The overlap optimizer driver ---------------------===//
//
// mlir-opt with the ovl dialect and the overlap passes on top of every
// upstream dialect, extension (overlap::registerAllDialects, as every
// overlap tool) and pass.
//
// Exit status: 0 on success, 1 when the program is rejected (it does not
// parse or verify, a pass fails, --verify-diagnostics finds a mismatch), 2
// on a usage or input error (an unknown flag, a pass pipeline or pass
// option that does not parse, a missing input file).
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/Dialect/Ovl/Transforms/Passes.h"
#include "OverlapDialect/InitAll.h"
#include "OverlapDialect/Support/BoundedFile.h"
#include "OverlapDialect/Support/CommandLine.h"
#include "OverlapDialect/Support/PassOptionCheck.h"
#include "OverlapDialect/Support/Progress.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

// MLIR's parseCLIOptions declares these and parses (exiting with 1 on a bad
// flag); overlap-opt parses itself, as the other tools do.
static llvm::cl::opt<std::string> inputFile(llvm::cl::Positional,
                                            llvm::cl::desc("<input file>"),
                                            llvm::cl::init("-"));
static llvm::cl::opt<std::string> outputFile("o",
                                             llvm::cl::desc("Output filename"),
                                             llvm::cl::value_desc("filename"),
                                             llvm::cl::init("-"));
static llvm::cl::opt<bool>
    quiet("quiet", llvm::cl::desc("Print no progress of long passes"));
static llvm::cl::opt<bool> progress(
    "progress",
    llvm::cl::desc("Print the progress of long passes on stderr, a line a "
                   "second at most, also when stderr is not a terminal (by "
                   "default only when it is)"));
static llvm::cl::opt<double> progressEvery(
    "progress-every", llvm::cl::init(1),
    llvm::cl::desc("Least seconds between two progress lines (default 1)"),
    llvm::cl::value_desc("seconds"));

/// MLIR's driver verifies what it parses, and MLIR 22's shard verifiers
/// divide by the sizes of a grid's axes: the program is read unverified and
/// ovl-verify-input (which refuses an axis of size 0, then verifies) runs
/// ahead of the user's pipeline.
static int runVerifyingInputFirst(mlir::MlirOptMainConfig config,
                                  mlir::DialectRegistry &registry) {
  mlir::MlirOptMainConfig user = config;
  config.verifyOnParsing(false).setPassPipelineSetupFn(
      [user](mlir::PassManager &pm) {
        pm.addPass(mlir::ovl::createOvlVerifyInputPass());
        return user.setupPassPipeline(pm);
      });
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> input =
      overlap::readProgramFile(inputFile);
  if (!input) {
    llvm::errs() << "overlap-opt: cannot read input file '" << inputFile
                 << "': " << llvm::toString(input.takeError()) << "\n";
    return overlap::ExitUsage;
  }
  std::string error;
  std::unique_ptr<llvm::ToolOutputFile> output =
      mlir::openOutputFile(outputFile, &error);
  if (!output) {
    llvm::errs() << "overlap-opt: " << error << "\n";
    return overlap::ExitUsage;
  }
  if (mlir::failed(
          mlir::MlirOptMain(output->os(), std::move(*input), registry, config)))
    return overlap::ExitNegative;
  output->keep();
  return overlap::ExitSuccess;
}

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  overlap::registerAllDialects(registry);
  mlir::registerAllPasses();
  overlap::registerAllPasses();
  std::string overview =
      std::string("overlap optimizer driver\n\n") + overlap::kExitStatusHelp;
  std::string helpHeader = mlir::registerCLIOptions(overview, registry);
  overlap::parseToolCommandLine(argc, argv, helpHeader);
  // MLIR would say a bad option of a pass with LLVM's flag message or none.
  std::string optionError = overlap::checkPassOptionArguments(
      overlap::getPassOptionTable(), argc, argv);
  if (!optionError.empty()) {
    llvm::errs() << "overlap-opt: error: " << optionError << "\n";
    return overlap::ExitUsage;
  }
  if (quiet && progress) {
    llvm::errs() << "overlap-opt: error: --quiet and --progress contradict "
                    "each other\n";
    return overlap::ExitUsage;
  }
  overlap::checkFlagValue("--progress-every",
                          overlap::ranges::kProgressInterval, progressEvery);
  overlap::setProgressMode(quiet      ? overlap::ProgressMode::Never
                           : progress ? overlap::ProgressMode::Always
                                      : overlap::ProgressMode::Auto,
                           progressEvery);

  // Only whether it is there: reading it would consume a pipe.
  if (inputFile != "-" && !llvm::sys::fs::exists(inputFile)) {
    llvm::errs() << "overlap-opt: cannot open input file '" << inputFile
                 << "': No such file or directory\n";
    return overlap::ExitUsage;
  }
  // The pipeline is built before any input is read, so that a misspelt
  // pass or option is a usage error (said once, without the program).
  {
    mlir::MLIRContext context(registry);
    mlir::PassManager pm(&context);
    mlir::MlirOptMainConfig config =
        mlir::MlirOptMainConfig::createFromCLOptions();
    if (failed(config.dumpPassPipeline(false).setupPassPipeline(pm)))
      return overlap::ExitUsage;
  }
  mlir::MlirOptMainConfig config =
      mlir::MlirOptMainConfig::createFromCLOptions();
  // What only prints, or replays a reproducer's own pipeline, and what the
  // user asked to read unverified is left to MLIR's driver as it is.
  if (config.shouldShowDialects() || config.shouldListPasses() ||
      config.shouldRunReproducer() || !config.shouldVerifyOnParsing())
    return mlir::asMainReturnCode(
        mlir::MlirOptMain(argc, argv, inputFile, outputFile, registry));
  return runVerifyingInputFirst(config, registry);
}
