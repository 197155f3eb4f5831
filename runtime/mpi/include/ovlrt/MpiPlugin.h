//===- MpiPlugin.h - The ABI of the MPI transport plugin --------*- C++ -*-===//
//
// The MPI transport lives in a shared library, libovlrt_mpi.so, so that a
// host (overlap-run) needs no MPI to build or to run with threads, and
// loads MPI only when asked to. The library exports one C function,
// `ovlrt_mpi_plugin`, returning a table of function pointers; this header,
// which does not include mpi.h, is all a host needs.
//
// The plugin carries its own copy of ovlrt, but compiled programs reach the
// device through the host's `ovlrt::currentDevice()`. So the plugin never
// installs a device: `createDevice` returns one and the host passes it to
// its own `ovlrt::setCurrentDevice`. The host's Device member functions then
// run on an object built by the plugin, so both must be compiled from the
// same headers by the same compiler: build the plugin in the same build as
// its host. `deviceSize` and `version` catch the grossest mismatches.
//
// One process is one device: device id = rank in MPI_COMM_WORLD. Every call
// either succeeds or ends the whole job (MPI_Abort, exit code 70) after
// printing one line; every wait has a timeout.
//
//===----------------------------------------------------------------------===//

#ifndef OVLRT_MPIPLUGIN_H
#define OVLRT_MPIPLUGIN_H

#include "ovlrt/Runtime.h"

#include <cstddef>
#include <cstdint>

/// Bumped whenever the table below or ovlrt::Device's virtual functions
/// change (the host's Device member functions call the plugin's overrides
/// through their vtable slots). 3: asynchronous collectives; 4:
/// awaitHeartbeats.
#define OVLRT_MPI_PLUGIN_VERSION 4

extern "C" {

struct OvlrtMpiPlugin {
  /// OVLRT_MPI_PLUGIN_VERSION of the plugin.
  int32_t version;
  /// sizeof(ovlrt::Device) in the plugin's build.
  size_t deviceSize;

  /// Initializes MPI, installs an abort-the-job fatal handler in the
  /// plugin's copy of ovlrt and starts the heartbeat: a peer silent for
  /// `lostAfterSeconds` is reported lost (0: lost peers are left to the
  /// timeouts). Collective over the world; a rank that does not join
  /// within `timeoutSeconds` ends the others. Call once, before anything
  /// else.
  void (*initialize)(double lostAfterSeconds, double timeoutSeconds);
  /// This process's rank in MPI_COMM_WORLD and the world's size.
  int64_t (*rank)(void);
  int64_t (*size)(void);
  /// Prints `message` and aborts every rank with exit code 70. The host
  /// installs it with its own `ovlrt::setFatalHandler`, so that misuse
  /// detected by the host's copy of ovlrt ends the whole job too.
  ovlrt::FatalHandler fatalHandler;

  /// This rank's device for one launch of a program on `numDevices`
  /// devices (which must be the world size). Collectives of one device do
  /// not match those of another, so each launch starts afresh. All ranks
  /// create (and destroy) their devices in the same order.
  ovlrt::Device *(*createDevice)(int64_t numDevices, double timeoutSeconds);
  /// Called when one run of the program on `device` has returned: reports
  /// asynchronous calls still in flight, then waits until every rank's run has
  /// returned (a barrier that names the ranks it waits for on timeout).
  /// A device stuck in a collective learns here that its peers ended.
  void (*endProgram)(ovlrt::Device *device);
  /// Destroys a device created by createDevice (a collective call).
  void (*destroyDevice)(ovlrt::Device *device);

  /// Waits until every rank has called it.
  void (*barrier)(double timeoutSeconds);
  /// out[i] = the largest in[i] over all ranks, on every rank.
  void (*allReduceMax)(const int64_t *in, int64_t *out, int32_t count,
                       double timeoutSeconds);
  /// Rank 0 receives every rank's `bytes` bytes at `data` into `out`, by
  /// rank (size() * bytes bytes); `out` is ignored elsewhere. `bytes` must
  /// be the same on every rank.
  void (*gather)(const void *data, int64_t bytes, void *out,
                 double timeoutSeconds);
  /// Waits until this rank's heartbeat has heard every other rank that
  /// beats (returns at once with the heartbeat off), so that a rank lost
  /// from then on is reported within `lostAfterSeconds`; a rank not heard
  /// from within `timeoutSeconds` ends the job.
  void (*awaitHeartbeats)(double timeoutSeconds);
  /// Finalizes MPI. Call once, after every device has been destroyed.
  void (*finalize)(void);
};

/// The plugin's table; the plugin's one exported symbol.
const OvlrtMpiPlugin *ovlrt_mpi_plugin(void);

} // extern "C"

#endif // OVLRT_MPIPLUGIN_H
