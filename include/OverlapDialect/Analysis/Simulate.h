//===- Simulate.h - Simulate a function of a module -------------*- C++ -*-===//
//
// What overlap-sim and the C API share: the machine a module is simulated
// on (the one ovl-overlap-pipeline recorded on it, unless the caller names
// another) and the simulation of one function on it, with its peak memory.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAPDIALECT_ANALYSIS_SIMULATE_H
#define OVERLAPDIALECT_ANALYSIS_SIMULATE_H

#include "OverlapDialect/CostModel/Machine.h"
#include "OverlapDialect/Simulator/Simulator.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir {
class TimingScope;

namespace ovl {
class MachineModelCache;

/// The discardable module attribute under which ovl-overlap-pipeline
/// records the machine it tuned the module for: a dictionary with
/// `hardware` (a string) and, when the pipeline was given them, `topology`
/// (a string) and `device_assignment` (array<i64>).
inline constexpr llvm::StringLiteral kMachineAttrName = "ovl.machine";

/// A machine as the passes' and the tools' options name it; an empty
/// topology or assignment is the default one.
struct MachineChoice {
  std::string hardware = "tpu-v4";
  std::string topology;
  SmallVector<int64_t> deviceAssignment;
};

/// Records `machine` on `module` under kMachineAttrName.
void recordMachine(ModuleOp module, const MachineChoice &machine);

/// The machine to simulate `module` on: each of hardware, topology and
/// device assignment as `requested` gives it, else as recorded on the
/// module, else the default. Warns at the module for each one given that
/// differs from the recorded one; fails after an error at the module when
/// the recorded attribute is malformed.
struct RequestedMachine {
  std::optional<std::string> hardware, topology;
  std::optional<SmallVector<int64_t>> deviceAssignment;
};
FailureOr<MachineChoice> resolveMachine(ModuleOp module,
                                        const RequestedMachine &requested);

/// The trace's defaults keep it small: Perfetto loads a trace of 8 devices
/// and at most 200000 spans (some 35 MB) at once, where one of every device
/// of a large pod runs to hundreds of MB (docs/Simulator.md, "The trace").
constexpr int64_t kDefaultTraceDevices = 8;
constexpr int64_t kDefaultTraceMaxSpans = 200000;

namespace ranges {
/// overlap-sim --trace-max-events, where 0 means no bound.
inline constexpr overlap::NumericRange kTraceSpans{true, 1, 1e12, true};
} // namespace ranges

struct SimulateOptions {
  /// The ring algorithm of blocking collectives.
  RingDirection collectiveDirection = RingDirection::Bidirectional;
  /// As SimOptions.
  unsigned maxInFlight = 0;
  bool bruteForce = false;
  /// When set, a Chrome/Perfetto trace is written to it: of `traceDevices`
  /// and the links that leave or enter them, at most `traceMaxSpans` spans
  /// (see SimOptions).
  llvm::raw_ostream *trace = nullptr;
  /// The traced devices, ascending, each once; empty: every device; unset:
  /// the first kDefaultTraceDevices of a larger program, else every one.
  std::optional<std::vector<int64_t>> traceDevices;
  int64_t traceMaxSpans = kDefaultTraceMaxSpans;
  /// When set, the phases (build step list, simulate, peak memory) are
  /// timed under it.
  TimingScope *timing = nullptr;
};

/// Why simulateFunction failed.
enum class SimulateFailure {
  /// The program cannot be simulated (a located error says why).
  Program,
  /// The machine cannot be built for the function's grid (an error at the
  /// function says why): the hardware, topology or assignment is wrong.
  Machine,
  /// The options do not fit the program (an error at the function says
  /// why): a traced device it does not have.
  Options,
};

/// Simulates `func` on the machine of its grid (`machines` builds one per
/// grid shape) and estimates its peak memory per device (for func.func).
/// On failure, sets `why` when given.
FailureOr<SimReport> simulateFunction(FunctionOpInterface func,
                                      MachineModelCache &machines,
                                      const SimulateOptions &options,
                                      SimulateFailure *why = nullptr);

} // namespace ovl
} // namespace mlir

#endif // OVERLAPDIALECT_ANALYSIS_SIMULATE_H
