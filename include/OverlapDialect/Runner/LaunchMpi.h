//===- LaunchMpi.h - Running a program as MPI ranks -------------*- C++ -*-===//
//
// The MPI side of overlap-run: each process started by mpirun is one
// device (its rank). The MPI transport is a plugin, libovlrt_mpi.so, loaded
// at run time, so that nothing here needs MPI to build. A session loads it,
// initializes MPI, runs programs on this rank's device and gathers the
// results on rank 0, and lets every rank agree on how the run ended.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAPDIALECT_RUNNER_LAUNCHMPI_H
#define OVERLAPDIALECT_RUNNER_LAUNCHMPI_H

#include "OverlapDialect/Runner/Launch.h"

#include "llvm/Support/Error.h"

#include <memory>

struct OvlrtMpiPlugin;

namespace overlap {

/// This process's membership of an MPI world. At most one per process:
/// MPI is initialized once.
class MpiSession {
public:
  /// Loads the plugin and initializes MPI. The plugin is the file named by
  /// the environment variable OVERLAP_MPI_PLUGIN if set, otherwise
  /// `<directory of the executable>/../lib/libovlrt_mpi.so`; `argv0`
  /// helps to find the executable. A rank that stays silent (no heartbeat)
  /// for `lostAfterSeconds` is reported lost by every rank that waits (0:
  /// lost ranks are found by the timeouts only). Ranks that do not all
  /// start within the host's wait (as for compiling: at least ten minutes,
  /// or `timeoutSeconds`) end the others.
  /// The process must end with finish(): MPI needs every rank to
  /// finalize, and finalizing waits for the others.
  static llvm::Expected<std::unique_ptr<MpiSession>>
  open(const char *argv0, double lostAfterSeconds, double timeoutSeconds);

  int64_t rank() const { return worldRank; }
  int64_t size() const { return worldSize; }
  bool isRoot() const { return worldRank == 0; }

  /// Whether a step every rank took on its own (compiling, reading inputs)
  /// succeeded everywhere, and whether it did on rank 0.
  ///
  /// Outside the program, ranks wait for each other up to
  /// max(`timeoutSeconds`, 600) seconds: their compile times differ, and
  /// rank 0 compares and writes files while the others wait.
  struct Agreement {
    bool everyRank = true;
    bool rootRank = true;
  };
  Agreement agree(bool succeeded, double timeoutSeconds);

  /// Returns once every rank has called it and, with the heartbeat on,
  /// every rank's heartbeat has heard all the others: a rank lost from
  /// then on is named within the lost-after window. Waits up to the host's
  /// wait (see agree()).
  void waitUntilWatched(double timeoutSeconds);

  /// Runs `program` once per step on this rank's device; `inputs` are this
  /// rank's and are not modified. The program must run on size() devices.
  /// Rank 0 gets every device's outputs (by rank) and the step times, each
  /// the time of the slowest rank from a barrier to the end of its run;
  /// the other ranks get empty results. Runtime errors end the whole job.
  LaunchResult launch(const Program &program,
                      const std::vector<HostTensor> &inputs,
                      const LaunchOptions &options);

  /// Agrees on the exit status, the largest `status` of any rank, and
  /// finalizes MPI. Returns the status for every rank to exit with.
  int finish(int status, double timeoutSeconds);

private:
  explicit MpiSession(const OvlrtMpiPlugin &plugin);

  const OvlrtMpiPlugin &plugin;
  int64_t worldRank = 0, worldSize = 1;
};

} // namespace overlap

#endif // OVERLAPDIALECT_RUNNER_LAUNCHMPI_H
