//===- LaunchMpi.cpp - Running a program as MPI ranks ---------------------===//
//
// Loads the MPI transport plugin with dlopen and drives it: one device per
// rank, installed as the current device of the calling thread with the
// host's ovlrt (the copy the JIT-compiled code calls), and outputs and step
// times gathered on rank 0.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/Runner/LaunchMpi.h"

#include "ovlrt/MpiPlugin.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>

using namespace overlap;
using Clock = std::chrono::steady_clock;

/// How long the ranks wait for each other outside the program: their
/// compile times differ (a lot on an oversubscribed machine), and rank 0
/// compares and writes files while the others wait for its verdict. The
/// program's own collectives wait `timeoutSeconds`.
static double getHostWaitSeconds(double timeoutSeconds) {
  return std::max(timeoutSeconds, 600.0);
}

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

static std::string getPluginPath(const char *argv0) {
  if (const char *path = std::getenv("OVERLAP_MPI_PLUGIN"); path && *path)
    return path;
  // Any object of this binary locates it when argv[0] does not.
  static int anchor;
  std::string executable = llvm::sys::fs::getMainExecutable(argv0, &anchor);
  // Empty when the binary was replaced while running (a rebuild).
  if (executable.empty())
    executable = argv0;
  llvm::SmallString<256> path(llvm::sys::path::parent_path(executable));
  llvm::sys::path::append(path, "..", "lib", "libovlrt_mpi.so");
  return std::string(path);
}

llvm::Expected<std::unique_ptr<MpiSession>>
MpiSession::open(const char *argv0, double lostAfterSeconds,
                 double timeoutSeconds) {
  static bool opened = false;
  if (opened)
    return makeError("MPI can be initialized only once per process");
  std::string path = getPluginPath(argv0);
  // RTLD_GLOBAL: MPI libraries load their own components with dlopen, and
  // these expect the MPI library's symbols to be global. The plugin stays
  // loaded until the process exits, as MPI cannot be unloaded.
  void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!handle)
    return makeError(
        "cannot load the MPI transport plugin: " + llvm::Twine(dlerror()) +
        " (it is built with overlap when an MPI implementation "
        "such as libopenmpi-dev is installed; the environment "
        "variable OVERLAP_MPI_PLUGIN names another file)");
  using Entry = const OvlrtMpiPlugin *(*)();
  auto entry = reinterpret_cast<Entry>(dlsym(handle, "ovlrt_mpi_plugin"));
  if (!entry)
    return makeError(path + " is not an MPI transport plugin: " + dlerror());
  const OvlrtMpiPlugin *plugin = entry();
  // The plugin builds the Device objects this host calls: a plugin of
  // another build could lay them out differently.
  if (plugin->version != OVLRT_MPI_PLUGIN_VERSION ||
      plugin->deviceSize != sizeof(ovlrt::Device))
    return makeError(path +
                     " was built for another version of overlap; use the "
                     "plugin built with this overlap-run");
  opened = true;
  // The ranks start, like they compile, at their own pace.
  plugin->initialize(lostAfterSeconds, getHostWaitSeconds(timeoutSeconds));
  // Misuse that the host's copy of ovlrt detects must end every rank too.
  ovlrt::setFatalHandler(plugin->fatalHandler);
  std::unique_ptr<MpiSession> session(new MpiSession(*plugin));
  session->worldRank = plugin->rank();
  session->worldSize = plugin->size();
  return session;
}

MpiSession::MpiSession(const OvlrtMpiPlugin &plugin) : plugin(plugin) {}

MpiSession::Agreement MpiSession::agree(bool succeeded, double timeoutSeconds) {
  int64_t failed[2] = {succeeded ? 0 : 1, isRoot() && !succeeded ? 1 : 0};
  int64_t anyFailed[2] = {0, 0};
  plugin.allReduceMax(failed, anyFailed, 2, getHostWaitSeconds(timeoutSeconds));
  return {anyFailed[0] == 0, anyFailed[1] == 0};
}

void MpiSession::waitUntilWatched(double timeoutSeconds) {
  double hostWait = getHostWaitSeconds(timeoutSeconds);
  plugin.awaitHeartbeats(hostWait);
  // Once every rank has heard all the others.
  plugin.barrier(hostWait);
}

LaunchResult MpiSession::launch(const Program &program,
                                const std::vector<HostTensor> &inputs,
                                const LaunchOptions &options) {
  double timeout = options.world.timeoutSeconds;
  double hostWait = getHostWaitSeconds(timeout);
  int64_t steps = std::max<int64_t>(options.repeat, 1);
  ovlrt::Device *device = plugin.createDevice(program.getNumDevices(), timeout);
  ovlrt::setCurrentDevice(device);
  std::vector<HostTensor> outputs;
  for (const TensorType &type : program.getOutputTypes())
    outputs.emplace_back(type);
  // Grows step by step: a run of many steps that is stopped early (a job
  // that loses a rank) does not first spend seconds zeroing the times of
  // steps it never runs, during which no rank would look at its peers.
  std::vector<double> seconds;
  StepOutputsCheck outputsCheck;
  plugin.barrier(hostWait);
  for (int64_t step = 0; step < steps; ++step) {
    std::vector<HostTensor> stepInputs = inputs;
    Clock::time_point start = Clock::now();
    program.invoke(stepInputs, outputs);
    seconds.push_back(
        std::chrono::duration<double>(Clock::now() - start).count());
    outputsCheck.check(step, steps, outputs);
    // Also lines the ranks up for the next step.
    plugin.endProgram(device);
  }
  ovlrt::setCurrentDevice(nullptr);
  plugin.destroyDevice(device);

  int64_t bytes = 0;
  for (const HostTensor &tensor : outputs)
    bytes += tensor.type().numBytes();
  std::vector<char> packed(bytes);
  int64_t offset = 0;
  for (const HostTensor &tensor : outputs) {
    std::memcpy(packed.data() + offset, tensor.data(),
                tensor.type().numBytes());
    offset += tensor.type().numBytes();
  }
  std::vector<char> allOutputs(isRoot() ? bytes * size() : 0);
  plugin.gather(packed.data(), bytes, allOutputs.data(), hostWait);
  std::vector<double> allSeconds(isRoot() ? steps * size() : 0);
  plugin.gather(seconds.data(), steps * sizeof(double), allSeconds.data(),
                hostWait);
  int64_t changed = outputsCheck.getChangedStep();
  std::vector<int64_t> allChanged(isRoot() ? size() : 0);
  plugin.gather(&changed, sizeof(changed), allChanged.data(), hostWait);

  LaunchResult result;
  if (!isRoot())
    return result;
  result.outputs.resize(size());
  for (int64_t rank = 0; rank < size(); ++rank) {
    const char *from = allOutputs.data() + rank * bytes;
    for (const TensorType &type : program.getOutputTypes()) {
      HostTensor &tensor = result.outputs[rank].emplace_back(type);
      std::memcpy(tensor.data(), from, type.numBytes());
      from += type.numBytes();
    }
  }
  result.changedStep = findChangedStep(allChanged);
  for (int64_t step = 0; step < steps; ++step) {
    double slowest = 0;
    for (int64_t rank = 0; rank < size(); ++rank)
      slowest = std::max(slowest, allSeconds[rank * steps + step]);
    result.stepSeconds.push_back(slowest);
  }
  return result;
}

int MpiSession::finish(int status, double timeoutSeconds) {
  int64_t mine = status, agreed = 0;
  plugin.allReduceMax(&mine, &agreed, 1, getHostWaitSeconds(timeoutSeconds));
  plugin.finalize();
  return static_cast<int>(agreed);
}
