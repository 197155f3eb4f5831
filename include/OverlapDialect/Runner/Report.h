//===- Report.h - What overlap-run prints about a run -----------*- C++ -*-===//
//
// The result of running a program (and its reference): the memory it needs
// up front, and the text or JSON report printed afterwards.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAPDIALECT_RUNNER_REPORT_H
#define OVERLAPDIALECT_RUNNER_REPORT_H

#include "OverlapDialect/Runner/Compare.h"
#include "OverlapDialect/Runner/Launch.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace overlap {

/// The host memory a run of `program` (and of `reference`, when given) on
/// `devices` of its devices needs at once: per device the inputs it keeps,
/// the larger of the two programs' peaks in a step (the step's copy of the
/// inputs, intermediates and results; the inputs and outputs when the peak
/// is unknown) and the outputs collected from both.
uint64_t estimateRunBytes(const Program &program, const Program *reference,
                          int64_t devices);

/// The memory this process may still allocate: the kernel's MemAvailable,
/// within the limit of its cgroup; nullopt when neither can be read.
std::optional<uint64_t> availableMemoryBytes();

/// An error "needs N GiB for M devices, X GiB available" when `needed`
/// exceeds what is available.
llvm::Error checkRunMemory(uint64_t needed, int64_t devices);

/// A run as overlap-run reports it.
struct RunReport {
  std::string programPath;
  std::string entryName;
  int64_t devices = 1;
  std::string transport;
  /// Seconds spent compiling the program and the reference, and running
  /// every step of both.
  double compileSeconds = 0, runSeconds = 0;
  /// Whether the compile cache held the program (and the reference).
  CacheUse compileCache = CacheUse::Off;
  std::optional<CacheUse> referenceCompileCache;
  /// The CPU the code was compiled for (the host's with --target-cpu
  /// native) and the register tile of its contractions (rows x columns of
  /// f32 accumulators), which follow its vector registers.
  std::string targetCpu;
  int64_t tileRows = 0, tileColumns = 0;
  const LaunchResult *run = nullptr;
  /// With a reference.
  std::string referencePath;
  std::optional<Comparison> comparison;
  /// Print every output tensor too.
  bool printOutputs = false;
};

/// Prints `report` as text or, with `json`, as one JSON object.
void printRunReport(const RunReport &report, bool json, llvm::raw_ostream &os);

} // namespace overlap

#endif // OVERLAPDIALECT_RUNNER_REPORT_H
