//===- Launch.h - Running a program on every device -------------*- C++ -*-===//
//
// Runs a compiled program on all devices of its grid with the threads
// transport, timing each step.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAPDIALECT_RUNNER_LAUNCH_H
#define OVERLAPDIALECT_RUNNER_LAUNCH_H

#include "OverlapDialect/Runner/Program.h"
#include "OverlapDialect/Support/NumericRange.h"

#include "ovlrt/Runtime.h"

#include <optional>

namespace overlap {

struct LaunchOptions {
  /// Timeout and link emulation; numDevices comes from the program.
  ovlrt::WorldOptions world;
  /// Steps to run; each starts from a fresh copy of the same inputs.
  int64_t repeat = 1;
};

/// The most steps a run takes (overlap-run --repeat): a million steps keep
/// 8 MB of step times per device.
constexpr int64_t kMaxSteps = 1000000;

/// The ranges of overlap-run's numeric flags (NumericRange.h).
namespace ranges {
inline constexpr NumericRange kSteps{true, 1, kMaxSteps};
/// Deadlines are clock ticks: a longer timeout would overflow them.
inline constexpr NumericRange kTimeoutSeconds{false, 1e-3, 1e6};
/// --lost-after, where 0 leaves lost ranks to the timeout.
inline constexpr NumericRange kLostAfterSeconds{false, 1e-3, 1e6, true};
/// --rtol and --atol.
inline constexpr NumericRange kTolerance{false, 0, 1e30};
/// --link-bandwidth in GB/s, where 0 emulates no link.
inline constexpr NumericRange kLinkBandwidthGBps{false, 1e-30, 1e30, true};
/// --link-latency in microseconds.
inline constexpr NumericRange kLinkLatencyUs{false, 0, 1e9};
} // namespace ranges

/// A step whose outputs differ from the first step's on a device.
struct ChangedStep {
  int64_t device = 0;
  int64_t step = 0;
};

struct LaunchResult {
  /// The outputs of the last step.
  DeviceTensors outputs;
  /// Wall time of each step: from the moment all devices start it until
  /// the last one finishes.
  std::vector<double> stepSeconds;
  /// Every step runs the same inputs, so its outputs must be the first
  /// step's, bit for bit: the earliest step (0-based) that differs, on the
  /// lowest-numbered device where it does, if any.
  std::optional<ChangedStep> changedStep;
};

/// Keeps a device's first outputs and finds the first later step whose
/// outputs differ from them.
class StepOutputsCheck {
public:
  /// After step `step` (0-based) of `steps`, which made `outputs`.
  void check(int64_t step, int64_t steps,
             const std::vector<HostTensor> &outputs);
  /// The first step that differed, or -1.
  int64_t getChangedStep() const { return changed; }

private:
  std::vector<HostTensor> first;
  int64_t changed = -1;
};

/// From each device's StepOutputsCheck::getChangedStep, by device: the
/// earliest step that changed, on the lowest-numbered device where it did.
std::optional<ChangedStep> findChangedStep(const std::vector<int64_t> &changed);

/// Runs `program` once per step on one thread per device. `inputs` holds
/// one set per device and is not modified.
LaunchResult launchOnThreads(const Program &program,
                             const DeviceTensors &inputs,
                             const LaunchOptions &options);

} // namespace overlap

#endif // OVERLAPDIALECT_RUNNER_LAUNCH_H
