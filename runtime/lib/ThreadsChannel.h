//===- ThreadsChannel.h - Shared state of the threads transport -*- C++ -*-===//
//
// The threads transport matches calls through shared memory. Each group (a
// set of devices) has a channel; every call a device makes on the group
// (collective or permute start) takes the device's next step number on that
// channel, so the n-th call of one member meets the n-th call of the others
// whatever the timing. A step holds one entry per member: what the member
// called (its descriptor) and the data the others need to complete it.
//
//===----------------------------------------------------------------------===//

#ifndef OVLRT_LIB_THREADSCHANNEL_H
#define OVLRT_LIB_THREADSCHANNEL_H

#include "ovlrt/LinkEmulation.h"
#include "ovlrt/Runtime.h"
#include "ovlrt/Transport.h"

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

namespace ovlrt {
namespace threads {

/// Progress of the transfer into one member's `out` during a permute step.
enum class TransferState { Waiting, Copying, Done };

/// One member's part of one step. Written by its owner when it posts, read
/// by the others afterwards; the transfer fields are guarded by the
/// channel's mutex.
struct Entry {
  bool posted = false;
  CallDescriptor desc;
  Clock::time_point postedAt;

  /// A collective: the member's packed contribution.
  std::vector<char> contribution;

  /// A permute: the member's buffers (shapes copied, as the caller's shape
  /// arrays need not outlive the start) and its peers' device ids.
  OwnedView in, out;
  int64_t sendTo = -1, receiveFrom = -1;
  /// The transfer that fills this member's `out`. Booked (its arrival time
  /// set) as soon as both this member and its source have posted, then
  /// copied by whichever of the two reaches its done first.
  bool booked = false;
  Clock::time_point arrival;
  TransferState receive = TransferState::Waiting;
};

struct Step {
  explicit Step(int64_t size) : entries(size), unfinished(size) {}
  /// By position in the channel (see Channel::position).
  std::vector<Entry> entries;
  /// Members that have not finished the step; the last one frees it.
  int64_t unfinished;
};

/// The steps of one group, in progress.
class Channel {
public:
  explicit Channel(std::vector<int64_t> sortedMembers)
      : members(std::move(sortedMembers)) {}

  std::mutex mutex;
  /// Notified whenever an entry is posted or a transfer completes, and when
  /// a device's program ends.
  std::condition_variable changed;

  /// A device's position among the members (ascending device ids: one order
  /// for all ways of naming the group's axes).
  int64_t position(int64_t device) const;
  /// The step, created on first use. Needs the mutex.
  Step &step(int64_t index);
  /// One member has finished step `index`. Needs the mutex.
  void finish(int64_t index);

private:
  std::vector<int64_t> members;
  std::map<int64_t, Step> steps;
};

/// The state shared by the devices of one ThreadsWorld::run.
class ThreadsRun {
public:
  explicit ThreadsRun(const WorldOptions &options);

  const WorldOptions options;
  const Clock::duration timeout;
  const LinkModel model;
  LinkSchedule links;

  /// The channel of the group with these members, sorted ascending.
  Channel &channel(const std::vector<int64_t> &sortedMembers);

  bool hasEnded(int64_t device) const { return ended[device].load(); }
  /// Marks the end of `device`'s program and wakes every waiter, so that
  /// those waiting for it report it at once instead of timing out.
  void programEnded(int64_t device);

private:
  std::unique_ptr<std::atomic<bool>[]> ended;
  std::mutex channelsMutex;
  std::map<std::vector<int64_t>, std::unique_ptr<Channel>> channels;
};

} // namespace threads
} // namespace ovlrt

#endif // OVLRT_LIB_THREADSCHANNEL_H
