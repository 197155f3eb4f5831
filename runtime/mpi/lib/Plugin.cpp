//===- Plugin.cpp - The exported table of the MPI transport plugin --------===//
//
// Implements the C plugin ABI of MpiPlugin.h on top of World and MpiDevice.
// The table's accessor is the library's one exported symbol (exports.map):
// the plugin's copy of ovlrt is never bound to the host's, nor the other way
// round.
//
//===----------------------------------------------------------------------===//

#include "ovlrt/MpiPlugin.h"

#include "MpiDevice.h"

#include <climits>

using namespace ovlrt;
using namespace ovlrt::mpi;

static void initialize(double lostAfterSeconds, double timeoutSeconds) {
  World::get().initialize(lostAfterSeconds, timeoutSeconds);
}

static int64_t rank() { return World::get().rank(); }

static int64_t size() { return World::get().size(); }

static Device *createDevice(int64_t numDevices, double timeoutSeconds) {
  static int64_t launches = 0;
  World &world = World::get();
  if (numDevices != world.size())
    fatal(world.rank(), {},
          "the program runs on " + std::to_string(numDevices) +
              " devices but the MPI world has " + std::to_string(world.size()) +
              " ranks");
  if (!(timeoutSeconds > 0 && timeoutSeconds <= 1e6))
    fatal("the timeout must be more than 0 and at most 1e6 seconds");
  return new MpiDevice(world, timeoutSeconds, launches++);
}

static void endProgram(Device *device) {
  static_cast<MpiDevice *>(device)->endProgram();
}

static void destroyDevice(Device *device) { delete device; }

static void barrier(double timeoutSeconds) {
  World &world = World::get();
  MPI_Request request = MPI_REQUEST_NULL;
  world.check(MPI_Ibarrier(MPI_COMM_WORLD, &request), world.rank(), {},
              "starting a barrier");
  world.waitHost(request, timeoutSeconds, "barrier");
}

static void allReduceMax(const int64_t *in, int64_t *out, int32_t count,
                         double timeoutSeconds) {
  World &world = World::get();
  MPI_Request request = MPI_REQUEST_NULL;
  world.check(MPI_Iallreduce(in, out, count, MPI_INT64_T, MPI_MAX,
                             MPI_COMM_WORLD, &request),
              world.rank(), {}, "starting a reduction");
  world.waitHost(request, timeoutSeconds, "reduction of the ranks' results");
}

static void gather(const void *data, int64_t bytes, void *out,
                   double timeoutSeconds) {
  World &world = World::get();
  if (bytes > INT_MAX)
    fatal(world.rank(), {},
          "cannot gather more than " + std::to_string(INT_MAX) +
              " bytes per rank, not " + std::to_string(bytes));
  int count = static_cast<int>(bytes);
  MPI_Request request = MPI_REQUEST_NULL;
  world.check(MPI_Igather(data, count, MPI_BYTE, out, count, MPI_BYTE, 0,
                          MPI_COMM_WORLD, &request),
              world.rank(), {}, "starting a gather");
  world.waitHost(request, timeoutSeconds, "gathering of the outputs");
}

static void awaitHeartbeats(double timeoutSeconds) {
  World::get().awaitHeartbeats(timeoutSeconds);
}

static void finalize() { World::get().finalize(); }

extern "C" __attribute__((visibility("default"))) const OvlrtMpiPlugin *
ovlrt_mpi_plugin(void) {
  static const OvlrtMpiPlugin plugin = {
      OVLRT_MPI_PLUGIN_VERSION,
      sizeof(Device),
      initialize,
      rank,
      size,
      getAbortHandler(),
      createDevice,
      endProgram,
      destroyDevice,
      barrier,
      allReduceMax,
      gather,
      awaitHeartbeats,
      finalize,
  };
  return &plugin;
}
