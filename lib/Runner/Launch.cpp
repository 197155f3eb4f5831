//===- Launch.cpp - Running a program on every device ---------------------===//

#include "OverlapDialect/Runner/Launch.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>

using namespace overlap;
using Clock = std::chrono::steady_clock;

namespace {
/// Lines the device threads up before each step so that a step's time is
/// the program's, not the threads' start-up skew.
class StepBarrier {
public:
  explicit StepBarrier(int64_t count) : count(count) {}

  void arriveAndWait() {
    std::unique_lock<std::mutex> lock(mutex);
    int64_t generation = currentGeneration;
    if (++arrived == count) {
      arrived = 0;
      ++currentGeneration;
      released.notify_all();
      return;
    }
    released.wait(lock, [&] { return generation != currentGeneration; });
  }

private:
  std::mutex mutex;
  std::condition_variable released;
  int64_t count, arrived = 0, currentGeneration = 0;
};
} // namespace

void StepOutputsCheck::check(int64_t step, int64_t steps,
                             const std::vector<HostTensor> &outputs) {
  if (step == 0 && steps > 1)
    first = outputs;
  else if (step > 0 && changed < 0 && !sameBits(outputs, first))
    changed = step;
}

std::optional<ChangedStep>
overlap::findChangedStep(const std::vector<int64_t> &changed) {
  std::optional<ChangedStep> earliest;
  for (auto [device, step] : llvm::enumerate(changed))
    if (step >= 0 && (!earliest || step < earliest->step))
      earliest = ChangedStep{static_cast<int64_t>(device), step};
  return earliest;
}

LaunchResult overlap::launchOnThreads(const Program &program,
                                      const DeviceTensors &inputs,
                                      const LaunchOptions &options) {
  int64_t devices = program.getNumDevices();
  int64_t steps = std::max<int64_t>(options.repeat, 1);
  LaunchResult result;
  result.outputs.resize(devices);
  // Grow step by step, so that memory follows the steps run.
  std::vector<std::vector<Clock::time_point>> starts(devices), ends(devices);
  std::vector<int64_t> changedAt(devices, -1);

  ovlrt::WorldOptions world = options.world;
  world.numDevices = devices;
  StepBarrier barrier(devices);
  ovlrt::ThreadsWorld(world).run([&](ovlrt::Device &device) {
    int64_t id = device.id();
    std::vector<HostTensor> outputs;
    for (const TensorType &type : program.getOutputTypes())
      outputs.emplace_back(type);
    StepOutputsCheck outputsCheck;
    for (int64_t step = 0; step < steps; ++step) {
      std::vector<HostTensor> stepInputs = inputs[id];
      barrier.arriveAndWait();
      starts[id].push_back(Clock::now());
      program.invoke(stepInputs, outputs);
      ends[id].push_back(Clock::now());
      outputsCheck.check(step, steps, outputs);
    }
    changedAt[id] = outputsCheck.getChangedStep();
    result.outputs[id] = std::move(outputs);
  });

  result.changedStep = findChangedStep(changedAt);
  for (int64_t step = 0; step < steps; ++step) {
    Clock::time_point first = starts[0][step], last = ends[0][step];
    for (int64_t id = 1; id < devices; ++id) {
      first = std::min(first, starts[id][step]);
      last = std::max(last, ends[id][step]);
    }
    result.stepSeconds.push_back(
        std::chrono::duration<double>(last - first).count());
  }
  return result;
}
