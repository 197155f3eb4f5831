//===- Launch.h - Running a program on every device -------------*- C++ -*-===//
//
// Runs a compiled program on all devices of its grid with the threads
// transport, timing each step.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAPDIALECT_RUNNER_LAUNCH_H
#define OVERLAPDIALECT_RUNNER_LAUNCH_H

#include "OverlapDialect/Runner/Program.h"

#include "ovlrt/Runtime.h"

namespace overlap {

struct LaunchOptions {
  /// Timeout and link emulation; numDevices comes from the program.
  ovlrt::WorldOptions world;
  /// Steps to run; each starts from a fresh copy of the inputs.
  int64_t repeat = 1;
};

struct LaunchResult {
  /// The outputs of the last step.
  DeviceTensors outputs;
  /// Wall time of each step: from the moment all devices start it until
  /// the last one finishes.
  std::vector<double> stepSeconds;
};

/// Runs `program` once per step on one thread per device. `inputs` holds
/// one set per device and is not modified.
LaunchResult launchOnThreads(const Program &program,
                             const DeviceTensors &inputs,
                             const LaunchOptions &options);

} // namespace overlap

#endif // OVERLAPDIALECT_RUNNER_LAUNCH_H
