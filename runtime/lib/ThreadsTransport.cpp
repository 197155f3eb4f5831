//===- ThreadsTransport.cpp - Devices as threads of one process -----------===//
//
// The threads transport. A blocking collective posts the device's packed
// contribution on the group's channel, waits until every member has posted
// the same step, checks that they all called the same collective, and
// computes its own output from the contributions. An asynchronous
// collective does the same in two halves: its start packs and posts, its
// done waits, checks and computes. A permute start posts the
// device's buffers and returns; the copy from the sender's `in` into the
// receiver's `out` is made by whichever of the two calls its done first,
// once both have started (and, with link emulation, not before the link
// would have delivered the data). A done therefore waits only for its two
// peers' starts and for copies in progress, never for a peer's done.
//
//===----------------------------------------------------------------------===//

#include "ThreadsChannel.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <pthread.h>
#include <sys/resource.h>
#include <thread>

using namespace ovlrt;
using namespace ovlrt::threads;

namespace {

class ThreadsDevice final : public Device {
public:
  ThreadsDevice(int64_t id, ThreadsRun &run)
      : Device(id, run.options.numDevices), run(run) {}

private:
  /// A channel and this device's next step on it.
  struct ChannelState {
    Channel *channel;
    int64_t nextStep = 0;
  };

  /// A permute between its start and its done.
  struct Pending {
    Channel *channel;
    int64_t step;
    GroupLayout layout;
    PermuteRoute route;
  };

  /// A collective between its start and its done.
  struct PendingCollective {
    explicit PendingCollective(const Call &call) : call(call) {}
    OwnedCall call;
    Channel *channel = nullptr;
    int64_t step = 0;
  };

  void runCollective(const Call &call) override;
  void startPermute(const Call &call, Request request) override;
  void finishPermute(Request request, const OpInfo &op) override;
  void startCollective(const Call &call, Request request) override;
  void finishCollective(Request request, const OpInfo &op) override;

  /// Where a device posted its part of a call.
  struct Posted {
    Channel *channel;
    int64_t step;
  };
  /// Packs and posts this device's contribution to `call` on the next step
  /// of its group's channel.
  Posted postContribution(const Call &call);
  /// Waits for every member's contribution to `step`, checks that they
  /// called what this device did, computes `call.out` and, with link
  /// emulation, waits out the collective's time from the last member's
  /// post; then finishes the step. `op` is the call that waits.
  void combineStep(const Call &call, Channel &channel, int64_t step,
                   const OpInfo &op);

  ChannelState &channelFor(const GroupLayout &layout);
  /// Posts this device's entry of `step` (the caller holds the channel's
  /// lock); `fill` adds the call's data to the entry.
  template <typename Fill>
  void post(const Call &call, Channel &channel, int64_t step, Fill fill);
  /// Waits (with `lock` held) until the members with group indices `peers`
  /// have posted `step`, and checks that they called what this device did.
  void awaitPeers(std::unique_lock<std::mutex> &lock, Channel &channel,
                  int64_t step, const GroupLayout &layout,
                  const std::vector<int64_t> &peers, const OpInfo &op);
  /// Makes or waits for the copy from `sender`'s `in` into `receiver`'s
  /// `out`. Both have posted; `lock` is held.
  void completeTransfer(std::unique_lock<std::mutex> &lock, Channel &channel,
                        Entry &receiver, const Entry &sender, const OpInfo &op);
  /// Sleeps until `until`, the end of an emulated transfer; fails at once
  /// if that is further away than the timeout (an absurdly slow emulated
  /// link would otherwise hold the program for ever).
  void waitForEmulated(Clock::time_point until, const OpInfo &op);
  /// Sets the arrival time of the transfer from `sender` into `receiver`,
  /// now that both have posted.
  void book(Entry &receiver, int64_t receiverId, const Entry &sender,
            int64_t senderId);

  std::string describeStep(const Entry &mine, int64_t step) const;

  ThreadsRun &run;
  std::map<std::vector<int64_t>, ChannelState> channels;
  std::map<int64_t, Pending> pending;
  std::map<int64_t, PendingCollective> collectives;
};

} // namespace

static std::string describePeer(int64_t device, int64_t index) {
  return "device " + std::to_string(device) + " (group index " +
         std::to_string(index) + ")";
}

std::string ThreadsDevice::describeStep(const Entry &mine, int64_t step) const {
  return "call #" + std::to_string(step) + " on the group of " +
         formatGroup({mine.desc.gridShape, mine.desc.axes});
}

ThreadsDevice::ChannelState &
ThreadsDevice::channelFor(const GroupLayout &layout) {
  std::vector<int64_t> sorted = layout.members;
  std::sort(sorted.begin(), sorted.end());
  auto it = channels.find(sorted);
  if (it == channels.end())
    it = channels.emplace(sorted, ChannelState{&run.channel(sorted), 0}).first;
  return it->second;
}

void ThreadsDevice::awaitPeers(std::unique_lock<std::mutex> &lock,
                               Channel &channel, int64_t step,
                               const GroupLayout &layout,
                               const std::vector<int64_t> &peers,
                               const OpInfo &op) {
  Step &state = channel.step(step);
  const Entry &mine = state.entries[channel.position(id())];
  Clock::time_point deadline = Clock::now() + run.timeout;
  std::vector<bool> checked(peers.size(), false);
  while (true) {
    std::string missing;
    for (size_t i = 0; i < peers.size(); ++i) {
      int64_t device = layout.members[peers[i]];
      const Entry &entry = state.entries[channel.position(device)];
      if (!entry.posted) {
        if (run.hasEnded(device))
          fail(op, describePeer(device, peers[i]) +
                       " ended its program without reaching " +
                       describeStep(mine, step));
        missing +=
            (missing.empty() ? "" : ", ") + describePeer(device, peers[i]);
        continue;
      }
      if (checked[i])
        continue;
      std::string difference = compareCalls(mine.desc, entry.desc);
      if (!difference.empty())
        fail(op, "does not match " + describePeer(device, peers[i]) +
                     ", which called " +
                     formatOp({entry.desc.opName.c_str(),
                               entry.desc.location.c_str()}) +
                     " as " + describeStep(mine, step) + ": " + difference);
      checked[i] = true;
    }
    if (missing.empty())
      return;
    if (Clock::now() >= deadline) {
      char seconds[32];
      std::snprintf(seconds, sizeof(seconds), "%g", run.options.timeoutSeconds);
      fail(op, std::string("timed out after ") + seconds + " s waiting for " +
                   missing + " to reach " + describeStep(mine, step));
    }
    channel.changed.wait_until(lock, deadline);
  }
}

template <typename Fill>
void ThreadsDevice::post(const Call &call, Channel &channel, int64_t step,
                         Fill fill) {
  Entry &mine = channel.step(step).entries[channel.position(id())];
  mine.desc = describeCall(call);
  mine.postedAt = Clock::now();
  fill(mine);
  mine.posted = true;
  channel.changed.notify_all();
}

ThreadsDevice::Posted ThreadsDevice::postContribution(const Call &call) {
  ChannelState &state = channelFor(call.layout);
  Channel &channel = *state.channel;
  int64_t step = state.nextStep++;
  // Pack before taking the lock: the contribution is private until posted.
  std::vector<char> contribution(contributionBytes(call));
  packContribution(call, contribution.data());
  std::lock_guard<std::mutex> lock(channel.mutex);
  post(call, channel, step,
       [&](Entry &mine) { mine.contribution = std::move(contribution); });
  return {&channel, step};
}

void ThreadsDevice::combineStep(const Call &call, Channel &channel,
                                int64_t step, const OpInfo &op) {
  std::unique_lock<std::mutex> lock(channel.mutex);
  int64_t size = call.layout.size();
  std::vector<int64_t> everyone(size);
  for (int64_t i = 0; i < size; ++i)
    everyone[i] = i;
  awaitPeers(lock, channel, step, call.layout, everyone, op);

  // The step (and with it every contribution) lives until all members have
  // finished it, and nobody writes a posted contribution: read it unlocked.
  Step &shared = channel.step(step);
  std::vector<const void *> contributions(size);
  Clock::time_point lastArrival;
  for (int64_t i = 0; i < size; ++i) {
    const Entry &entry =
        shared.entries[channel.position(call.layout.members[i])];
    contributions[i] = entry.contribution.data();
    lastArrival = std::max(lastArrival, entry.postedAt);
  }
  lock.unlock();
  combineContributions(call, contributions.data());
  // The emulated ring runs from the last member's post, the start of an
  // asynchronous collective: the computation before its done hides it.
  int64_t bytes = call.kind == CallKind::ReduceScatter ? numBytes(call.out)
                                                       : numBytes(call.in);
  waitForEmulated(
      lastArrival + run.model.collectiveTime(call.kind, size, bytes), op);
  lock.lock();
  channel.finish(step);
}

void ThreadsDevice::runCollective(const Call &call) {
  Posted posted = postContribution(call);
  combineStep(call, *posted.channel, posted.step, call.op);
}

void ThreadsDevice::startCollective(const Call &call, Request request) {
  Posted posted = postContribution(call);
  PendingCollective &collective =
      collectives.try_emplace(request.id, call).first->second;
  collective.channel = posted.channel;
  collective.step = posted.step;
}

void ThreadsDevice::finishCollective(Request request, const OpInfo &op) {
  auto it = collectives.find(request.id);
  PendingCollective &collective = it->second;
  combineStep(collective.call.get(), *collective.channel, collective.step, op);
  collectives.erase(it);
}

void ThreadsDevice::waitForEmulated(Clock::time_point until, const OpInfo &op) {
  Clock::duration left = until - Clock::now();
  if (left > run.timeout) {
    char text[96];
    std::snprintf(text, sizeof(text),
                  "the emulated link takes %g s for this transfer, more than "
                  "the timeout of %g s",
                  std::chrono::duration<double>(left).count(),
                  run.options.timeoutSeconds);
    fail(op, text);
  }
  std::this_thread::sleep_until(until);
}

void ThreadsDevice::book(Entry &receiver, int64_t receiverId,
                         const Entry &sender, int64_t senderId) {
  receiver.arrival =
      run.links.book(senderId, receiverId, numBytes(sender.in.view()),
                     std::max(receiver.postedAt, sender.postedAt));
  receiver.booked = true;
}

void ThreadsDevice::startPermute(const Call &call, Request request) {
  ChannelState &state = channelFor(call.layout);
  Channel &channel = *state.channel;
  int64_t step = state.nextStep++;
  PermuteRoute route = routeOf(call.pairs, call.layout.index);
  int64_t target = call.layout.members[route.sendTo];
  int64_t source = call.layout.members[route.receiveFrom];

  std::lock_guard<std::mutex> lock(channel.mutex);
  post(call, channel, step, [&](Entry &mine) {
    mine.in = OwnedView(call.in);
    mine.out = OwnedView(call.out);
    mine.sendTo = target;
    mine.receiveFrom = source;
  });
  // Book the transfers whose other side has already started.
  Step &shared = channel.step(step);
  Entry &mine = shared.entries[channel.position(id())];
  Entry &from = shared.entries[channel.position(source)];
  Entry &to = shared.entries[channel.position(target)];
  if (from.posted)
    book(mine, id(), from, source);
  if (to.posted && target != id())
    book(to, target, mine, id());
  pending[request.id] = {&channel, step, call.layout, route};
}

void ThreadsDevice::completeTransfer(std::unique_lock<std::mutex> &lock,
                                     Channel &channel, Entry &receiver,
                                     const Entry &sender, const OpInfo &op) {
  if (!receiver.booked)
    fail(op, "internal error: a transfer between started permutes was not "
             "scheduled");
  if (receiver.receive == TransferState::Waiting) {
    receiver.receive = TransferState::Copying;
    TensorView dst = receiver.out.view(), src = sender.in.view();
    Clock::time_point arrival = receiver.arrival;
    lock.unlock();
    waitForEmulated(arrival, op);
    copyView(dst, src);
    lock.lock();
    receiver.receive = TransferState::Done;
    channel.changed.notify_all();
    return;
  }
  Clock::time_point deadline =
      std::max(Clock::now(), receiver.arrival) + run.timeout;
  while (receiver.receive != TransferState::Done) {
    if (Clock::now() >= deadline)
      fail(op, "timed out waiting for a copy in progress to finish");
    channel.changed.wait_until(lock, deadline);
  }
}

void ThreadsDevice::finishPermute(Request request, const OpInfo &op) {
  auto it = pending.find(request.id);
  Pending &permute = it->second;
  Channel &channel = *permute.channel;
  std::unique_lock<std::mutex> lock(channel.mutex);
  awaitPeers(lock, channel, permute.step, permute.layout,
             {permute.route.receiveFrom, permute.route.sendTo}, op);
  Step &shared = channel.step(permute.step);
  Entry &mine = shared.entries[channel.position(id())];
  Entry &from = shared.entries[channel.position(mine.receiveFrom)];
  Entry &to = shared.entries[channel.position(mine.sendTo)];
  completeTransfer(lock, channel, mine, from, op);
  if (mine.sendTo != id())
    completeTransfer(lock, channel, to, mine, op);
  channel.finish(permute.step);
  pending.erase(it);
}

ThreadsWorld::ThreadsWorld(WorldOptions options) : options(options) {
  if (options.numDevices < 1)
    fatal("a world needs at least one device, not " +
          std::to_string(options.numDevices));
  // Deadlines are clock ticks; an absurd timeout would overflow them.
  if (!(options.timeoutSeconds > 0 && options.timeoutSeconds <= 1e6))
    fatal("the timeout must be more than 0 and at most 1e6 seconds");
  if (!(options.linkBandwidthGBps >= 0 &&
        std::isfinite(options.linkBandwidthGBps) &&
        options.linkLatencyUs >= 0 && options.linkLatencyUs <= 1e9))
    fatal("link bandwidth and latency must be finite and not negative");
}

/// How many memory mappings the kernel lets this process hold
/// (vm.max_map_count) and how many it holds now; {0, 0} when unknown.
static std::pair<uint64_t, uint64_t> getMappingBudget() {
  std::ifstream maxFile("/proc/sys/vm/max_map_count");
  uint64_t most = 0;
  if (!(maxFile >> most))
    return {0, 0};
  std::ifstream maps("/proc/self/maps");
  uint64_t held = 0;
  for (std::string line; std::getline(maps, line);)
    ++held;
  return {most, held};
}

/// Why this process cannot hold `count` threads of `stackBytes` of stack
/// each, from its limits (address space, processes, memory mappings), or
/// empty.
static std::string checkThreadLimits(int64_t count, size_t stackBytes) {
  // A thread's stack and its guard page are two mappings: past the
  // kernel's count, thread creation (or a sanitizer's own allocation for
  // the thread) fails midway through starting the devices.
  auto [mostMappings, heldMappings] = getMappingBudget();
  if (mostMappings > 0 &&
      heldMappings + 2 * static_cast<uint64_t>(count) > mostMappings)
    return std::to_string(count) + " device threads need " +
           std::to_string(2 * count) +
           " memory mappings (a stack and its guard page each) beside the " +
           std::to_string(heldMappings) +
           " the process holds, more than the kernel's vm.max_map_count of " +
           std::to_string(mostMappings);
  rlimit limit;
  if (getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY &&
      static_cast<double>(count) * static_cast<double>(stackBytes) >
          static_cast<double>(limit.rlim_cur))
    return std::to_string(count) + " device threads of " +
           std::to_string(stackBytes >> 20) + " MiB of stack each need " +
           std::to_string(static_cast<uint64_t>(static_cast<double>(count) *
                                                stackBytes / (1 << 20))) +
           " MiB of address space, more than the process's limit of " +
           std::to_string(limit.rlim_cur >> 20) + " MiB (ulimit -v)";
  if (getrlimit(RLIMIT_NPROC, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY &&
      static_cast<uint64_t>(count) > limit.rlim_cur)
    return std::to_string(count) + " device threads are more than the " +
           std::to_string(limit.rlim_cur) +
           " processes and threads the user may run (ulimit -u)";
  return "";
}

/// What to do instead when the devices cannot all be threads.
static constexpr const char *kRunAsRanks =
    "; run them as MPI ranks (--transport mpi under mpirun)";

/// A device thread's start: the body it is given.
static void *runThread(void *fn) {
  (*static_cast<std::function<void()> *>(fn))();
  return nullptr;
}

void ThreadsWorld::run(const std::function<void(Device &)> &body) {
  ThreadsRun state(options);
  std::vector<std::unique_ptr<ThreadsDevice>> devices;
  for (int64_t d = 0; d < options.numDevices; ++d)
    devices.push_back(std::make_unique<ThreadsDevice>(d, state));
  // Every device's thread must start, or those that did wait for it at
  // their first collective: what the limits cannot hold is refused before
  // the first starts, and a thread that still fails to start ends the run.
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  size_t stackBytes = 0;
  pthread_attr_getstacksize(&attr, &stackBytes);
  if (std::string why = checkThreadLimits(options.numDevices, stackBytes);
      !why.empty())
    fatal("cannot run the devices as threads: " + why + kRunAsRanks);
  std::vector<std::function<void()>> bodies;
  for (int64_t d = 0; d < options.numDevices; ++d)
    bodies.push_back([&, d] {
      Device &device = *devices[d];
      setCurrentDevice(&device);
      body(device);
      setCurrentDevice(nullptr);
      device.checkProgramEnd();
      state.programEnded(d);
    });
  std::vector<pthread_t> threads(options.numDevices);
  for (int64_t d = 0; d < options.numDevices; ++d)
    if (int error = pthread_create(&threads[d], &attr, runThread, &bodies[d]))
      fatal("cannot start the thread of device " + std::to_string(d) + " of " +
            std::to_string(options.numDevices) + ": " + std::strerror(error) +
            kRunAsRanks);
  pthread_attr_destroy(&attr);
  for (pthread_t thread : threads)
    pthread_join(thread, nullptr);
}
