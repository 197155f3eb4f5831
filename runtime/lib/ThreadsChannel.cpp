//===- ThreadsChannel.cpp - Shared state of the threads transport ---------===//
//
// Channels are created on first use and live until the end of the run;
// steps are created by their first member and freed by their last, so a
// long-running program keeps only the steps in progress.
//
//===----------------------------------------------------------------------===//

#include "ThreadsChannel.h"

#include <algorithm>

using namespace ovlrt;
using namespace ovlrt::threads;

int64_t Channel::position(int64_t device) const {
  return std::lower_bound(members.begin(), members.end(), device) -
         members.begin();
}

Step &Channel::step(int64_t index) {
  auto it = steps.find(index);
  if (it == steps.end())
    it = steps.emplace(index, Step(static_cast<int64_t>(members.size()))).first;
  return it->second;
}

void Channel::finish(int64_t index) {
  auto it = steps.find(index);
  if (--it->second.unfinished == 0)
    steps.erase(it);
}

ThreadsRun::ThreadsRun(const WorldOptions &options)
    : options(options),
      timeout(std::chrono::duration_cast<Clock::duration>(
          std::chrono::duration<double>(options.timeoutSeconds))),
      model(options.linkBandwidthGBps, options.linkLatencyUs), links(model),
      ended(new std::atomic<bool>[options.numDevices]) {
  for (int64_t d = 0; d < options.numDevices; ++d)
    ended[d] = false;
}

Channel &ThreadsRun::channel(const std::vector<int64_t> &sortedMembers) {
  std::lock_guard<std::mutex> lock(channelsMutex);
  std::unique_ptr<Channel> &channel = channels[sortedMembers];
  if (!channel)
    channel = std::make_unique<Channel>(sortedMembers);
  return *channel;
}

void ThreadsRun::programEnded(int64_t device) {
  ended[device] = true;
  std::lock_guard<std::mutex> lock(channelsMutex);
  for (auto &entry : channels) {
    // Taking the channel's mutex orders the flag before any waiter's next
    // check, so no waiter misses the notification.
    std::lock_guard<std::mutex> channelLock(entry.second->mutex);
    entry.second->changed.notify_all();
  }
}
