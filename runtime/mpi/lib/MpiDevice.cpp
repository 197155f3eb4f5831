//===- MpiDevice.cpp - One device as one MPI rank -------------------------===//
//
// How the ovl collectives map onto MPI:
//
// - The first call a device makes on a group sends its descriptor to every
//   member as a control message and waits for theirs, then creates the
//   group's communicator with MPI_Comm_create_group (collective over the
//   members only). Creating it only once every member is known to be at
//   the same call keeps the blocking creation from ever waiting for a
//   member that does not come, and keeps calls of other groups (or of no
//   group, on ranks that skip one) from mismatching it, which MPI_Comm_split
//   over the world could not; a member lost during the creation is found
//   by a thread that watches the heartbeat meanwhile. The price: a group's
//   first call, even a permute start, waits for all of its members.
// - A collective sends its descriptor to every member (tag 2 * step + 1)
//   and checks theirs, then all-gathers the members' packed contributions
//   (MPI_Iallgather of bytes) and combines them in group-index order with
//   combineContributions: results are bit-identical to the threads
//   transport's. An asynchronous collective's start does all of this up to
//   posting the MPI_Iallgather, into buffers its pending entry owns; its
//   done waits for it and combines. MPI_Ireduce_scatter_block and
//   MPI_Iallreduce would move less data, but they combine in an order of
//   MPI's choosing, so their floating-point results could differ from the
//   blocking form's and the threads transport's.
// - A permute start posts MPI_Irecv of the source's data (tag 2 * step)
//   directly into `out` when it is dense, otherwise into a staging buffer
//   copied out at the done, and MPI_Isend of `in` (packed when strided)
//   with its descriptor to the target. The done waits for the three
//   requests and compares the source's descriptor with its own; a
//   descriptor of this step from any other member means the members
//   disagree (different pairs or a different collective) and is reported.
//
// MPI has no timed wait: every wait polls (MPI_Test*, MPI_Iprobe) until a
// deadline, draining control messages meanwhile, so that a peer that ended
// its program without reaching the call is reported at once and any other
// missing peer after the timeout, naming the device, op and location.
//
//===----------------------------------------------------------------------===//

#include "MpiDevice.h"

#include <algorithm>
#include <climits>

using namespace ovlrt;
using namespace ovlrt::mpi;

/// The tag of MPI_Comm_create_group, which tells apart concurrent creations
/// by overlapping groups. There are none: a member enters a creation only
/// once every member has announced the same call, so all of them create
/// that communicator before any of them can start another.
static constexpr int kCreateTag = 0;

static std::string describePeer(int64_t device, int64_t index) {
  return "device " + std::to_string(device) + " (group index " +
         std::to_string(index) + ")";
}

static std::string describeStep(const CallDescriptor &desc, int64_t step) {
  return "call #" + std::to_string(step) + " on the group of " +
         formatGroup({desc.gridShape, desc.axes});
}

/// `bytes` as an MPI count of MPI_BYTE.
static int byteCount(const Device &device, const OpInfo &op, int64_t bytes) {
  if (bytes > INT_MAX)
    fatal(device.id(), op,
          "the MPI transport moves at most " + std::to_string(INT_MAX) +
              " bytes per device and call, not " + std::to_string(bytes));
  return static_cast<int>(bytes);
}

MpiDevice::MpiDevice(World &world, double timeoutSeconds, int64_t launch)
    : Device(world.rank(), world.size()), world(world),
      timeoutSeconds(timeoutSeconds), launch(launch) {}

MpiDevice::~MpiDevice() {
  // Every rank frees its communicators after the same final barrier (the
  // end of the last program run), so nothing is in flight on them.
  for (auto &[members, group] : groups)
    if (group.comm != MPI_COMM_NULL)
      world.check(MPI_Comm_free(&group.comm), id(), {},
                  "freeing a group's communicator");
}

int MpiDevice::commRank(const GroupState &group, int64_t device) const {
  auto it =
      std::lower_bound(group.members.begin(), group.members.end(), device);
  return static_cast<int>(it - group.members.begin());
}

int MpiDevice::descriptorTag(int64_t step) const {
  return static_cast<int>(2 * (step % world.tagPeriod()) + 1);
}

int MpiDevice::dataTag(int64_t step) const {
  return static_cast<int>(2 * (step % world.tagPeriod()));
}

MpiDevice::GroupState &MpiDevice::groupFor(const GroupLayout &layout) {
  MemberSet members = layout.members;
  std::sort(members.begin(), members.end());
  auto it = groups.find(members);
  if (it == groups.end()) {
    it = groups.emplace(members, GroupState()).first;
    it->second.members = std::move(members);
  }
  return it->second;
}

void MpiDevice::checkMatch(const CallDescriptor &mine,
                           const CallDescriptor &theirs,
                           const GroupLayout &layout, int64_t index,
                           int64_t step, const OpInfo &op) const {
  std::string difference = compareCalls(mine, theirs);
  if (difference.empty())
    return;
  fail(op, "does not match " + describePeer(layout.members[index], index) +
               ", which called " +
               formatOp({theirs.opName.c_str(), theirs.location.c_str()}) +
               " as " + describeStep(mine, step) + ": " + difference);
}

void MpiDevice::checkNotEnded(const GroupState &group,
                              const GroupLayout &layout, int64_t index,
                              int64_t step, const CallDescriptor &mine,
                              const OpInfo &op) const {
  int64_t device = layout.members[index];
  const World::Ended *ended = world.endedRun(device, world.currentRun());
  if (!ended)
    return;
  // The peer's count of calls on the group tells whether it made this one
  // (its messages may still be on their way) or never will.
  auto it = ended->calls.find(group.members);
  int64_t calls = it == ended->calls.end() ? 0 : it->second;
  if (calls <= step)
    fail(op, describePeer(device, index) +
                 " ended its program without reaching " +
                 describeStep(mine, step));
}

void MpiDevice::failTimedOut(const std::string &waitingFor,
                             const OpInfo &op) const {
  fail(op, "timed out after " + formatSeconds(timeoutSeconds) +
               " s waiting for " + waitingFor);
}

void MpiDevice::meetGroup(GroupState &group, const Call &call, int64_t step) {
  const GroupLayout &layout = call.layout;
  CallDescriptor mine = describeCall(call);
  MessageWriter writer;
  writer.integer(launch);
  writer.integers(group.members);
  writer.descriptor(mine);
  std::vector<char> body = writer.take();
  for (int64_t device : layout.members)
    if (device != id())
      world.sendControl(device, World::kArrivalTag, body);

  std::vector<bool> met(layout.size(), false);
  met[layout.index] = true;
  bool everyone = world.waitUntil(deadline(), id(), call.op, [&] {
    bool all = true;
    for (int64_t i = 0; i < layout.size(); ++i) {
      if (met[i])
        continue;
      if (std::optional<CallDescriptor> theirs =
              world.takeArrival(layout.members[i], launch, group.members)) {
        checkMatch(mine, *theirs, layout, i, step, call.op);
        met[i] = true;
        continue;
      }
      checkNotEnded(group, layout, i, step, mine, call.op);
      all = false;
    }
    return all;
  });
  if (!everyone) {
    std::string missing;
    for (int64_t i = 0; i < layout.size(); ++i)
      if (!met[i])
        missing +=
            (missing.empty() ? "" : ", ") + describePeer(layout.members[i], i);
    failTimedOut(missing + " to reach " + describeStep(mine, step), call.op);
  }

  MPI_Group worldGroup, subgroup;
  world.check(MPI_Comm_group(MPI_COMM_WORLD, &worldGroup), id(), call.op,
              "getting the world's group");
  std::vector<int> ranks(group.members.begin(), group.members.end());
  world.check(MPI_Group_incl(worldGroup, static_cast<int>(ranks.size()),
                             ranks.data(), &subgroup),
              id(), call.op, "making a group");
  // Every member has arrived, but one may still be lost (or the network to
  // it fail) before the blocking creation completes.
  int code = world.callWatched(
      timeoutSeconds, id(), call.op, "creating the group's communicator", [&] {
        return MPI_Comm_create_group(MPI_COMM_WORLD, subgroup, kCreateTag,
                                     &group.comm);
      });
  world.check(code, id(), call.op, "creating a group's communicator");
  MPI_Group_free(&subgroup);
  MPI_Group_free(&worldGroup);
  world.check(MPI_Comm_set_errhandler(group.comm, MPI_ERRORS_RETURN), id(),
              call.op, "setting a communicator's error handler");
}

std::optional<CallDescriptor>
MpiDevice::receiveDescriptor(const GroupState &group, int sourceRank, int tag,
                             int64_t &sender, const OpInfo &op) {
  int found = 0;
  MPI_Status status;
  world.check(MPI_Iprobe(sourceRank, tag, group.comm, &found, &status), id(),
              op, "polling for a peer's descriptor");
  if (!found)
    return std::nullopt;
  int count = 0;
  world.check(MPI_Get_count(&status, MPI_BYTE, &count), id(), op,
              "sizing a peer's descriptor");
  std::vector<char> body(count);
  world.check(MPI_Recv(body.data(), count, MPI_BYTE, status.MPI_SOURCE, tag,
                       group.comm, MPI_STATUS_IGNORE),
              id(), op, "receiving a peer's descriptor");
  sender = group.members[status.MPI_SOURCE];
  MessageReader reader(body);
  CallDescriptor desc = reader.descriptor();
  if (reader.failed())
    fail(op, "internal error: malformed descriptor from device " +
                 std::to_string(sender));
  return desc;
}

void MpiDevice::exchangeDescriptors(GroupState &group, const Call &call,
                                    int64_t step) {
  const GroupLayout &layout = call.layout;
  CallDescriptor mine = describeCall(call);
  MessageWriter writer;
  writer.descriptor(mine);
  std::vector<char> body = writer.take();
  int tag = descriptorTag(step);
  std::vector<MPI_Request> sends;
  for (int64_t device : layout.members) {
    if (device == id())
      continue;
    MPI_Request &send = sends.emplace_back(MPI_REQUEST_NULL);
    world.check(MPI_Isend(body.data(), static_cast<int>(body.size()), MPI_BYTE,
                          commRank(group, device), tag, group.comm, &send),
                id(), call.op, "sending this device's descriptor");
  }

  std::vector<bool> received(layout.size(), false);
  received[layout.index] = true;
  bool complete = world.waitUntil(deadline(), id(), call.op, [&] {
    bool all = true;
    for (int64_t i = 0; i < layout.size(); ++i) {
      if (received[i])
        continue;
      int64_t sender = -1;
      if (std::optional<CallDescriptor> theirs =
              receiveDescriptor(group, commRank(group, layout.members[i]), tag,
                                sender, call.op)) {
        checkMatch(mine, *theirs, layout, i, step, call.op);
        received[i] = true;
        continue;
      }
      checkNotEnded(group, layout, i, step, mine, call.op);
      all = false;
    }
    int sent = 0;
    world.check(MPI_Testall(static_cast<int>(sends.size()), sends.data(), &sent,
                            MPI_STATUSES_IGNORE),
                id(), call.op, "sending this device's descriptor");
    return all && sent;
  });
  if (complete)
    return;
  std::string missing;
  for (int64_t i = 0; i < layout.size(); ++i)
    if (!received[i])
      missing +=
          (missing.empty() ? "" : ", ") + describePeer(layout.members[i], i);
  failTimedOut(missing.empty()
                   ? "the members to receive this device's descriptor of " +
                         describeStep(mine, step)
                   : missing + " to reach " + describeStep(mine, step),
               call.op);
}

void MpiDevice::postGather(const Call &call, Gather &gather) {
  GroupState &group = groupFor(call.layout);
  gather.group = &group;
  gather.step = group.nextStep++;
  int64_t bytes = contributionBytes(call);
  gather.mine.resize(bytes);
  packContribution(call, gather.mine.data());
  // A group of one combines its own contribution at the end.
  if (call.layout.size() == 1)
    return;
  if (group.comm == MPI_COMM_NULL)
    meetGroup(group, call, gather.step);
  else
    exchangeDescriptors(group, call, gather.step);

  // Every member is at this call and agrees on it: the all-gather matches.
  int count = byteCount(*this, call.op, bytes);
  gather.all.resize(bytes * call.layout.size());
  world.check(MPI_Iallgather(gather.mine.data(), count, MPI_BYTE,
                             gather.all.data(), count, MPI_BYTE, group.comm,
                             &gather.request),
              id(), call.op, "all-gathering the contributions");
}

void MpiDevice::combineGather(const Call &call, Gather &gather,
                              const OpInfo &op) {
  int64_t size = call.layout.size();
  if (size == 1) {
    const void *contribution = gather.mine.data();
    combineContributions(call, &contribution);
    return;
  }
  bool done = world.waitUntil(deadline(), id(), op, [&] {
    int complete = 0;
    world.check(MPI_Test(&gather.request, &complete, MPI_STATUS_IGNORE), id(),
                op, "all-gathering the contributions");
    return complete != 0;
  });
  if (!done)
    failTimedOut("the members' contributions to " +
                     describeStep(describeCall(call), gather.step) +
                     " (every member had reached it)",
                 op);
  int64_t bytes = static_cast<int64_t>(gather.mine.size());
  std::vector<const void *> contributions(size);
  for (int64_t i = 0; i < size; ++i)
    contributions[i] = gather.all.data() +
                       commRank(*gather.group, call.layout.members[i]) * bytes;
  combineContributions(call, contributions.data());
}

void MpiDevice::runCollective(const Call &call) {
  Gather gather;
  postGather(call, gather);
  combineGather(call, gather, call.op);
}

void MpiDevice::startCollective(const Call &call, Request request) {
  PendingCollective &collective =
      collectives.try_emplace(request.id, call).first->second;
  postGather(call, collective.gather);
}

void MpiDevice::finishCollective(Request request, const OpInfo &op) {
  auto it = collectives.find(request.id);
  PendingCollective &collective = it->second;
  combineGather(collective.call.get(), collective.gather, op);
  collectives.erase(it);
}

void MpiDevice::startPermute(const Call &call, Request request) {
  GroupState &group = groupFor(call.layout);
  Pending &permute = pending[request.id];
  permute.group = &group;
  permute.step = group.nextStep++;
  permute.layout = call.layout;
  permute.route = routeOf(call.pairs, call.layout.index);
  permute.desc = describeCall(call);
  permute.in = OwnedView(call.in);
  permute.out = OwnedView(call.out);
  // A group of one permutes onto itself: the done copies.
  if (call.layout.size() == 1)
    return;
  if (group.comm == MPI_COMM_NULL) {
    meetGroup(group, call, permute.step);
    permute.checked = true;
  }

  int count = byteCount(*this, call.op, numBytes(call.in));
  int source = commRank(group, call.layout.members[permute.route.receiveFrom]);
  int target = commRank(group, call.layout.members[permute.route.sendTo]);
  int tag = dataTag(permute.step);
  void *receiveInto = call.out.data;
  if (!isContiguous(call.out)) {
    permute.receiveStaging.resize(count);
    receiveInto = permute.receiveStaging.data();
  }
  world.check(MPI_Irecv(receiveInto, count, MPI_BYTE, source, tag, group.comm,
                        &permute.requests[0]),
              id(), call.op, "receiving a permute's data");
  if (!permute.checked) {
    MessageWriter writer;
    writer.descriptor(permute.desc);
    permute.descMessage = writer.take();
    world.check(MPI_Isend(permute.descMessage.data(),
                          static_cast<int>(permute.descMessage.size()),
                          MPI_BYTE, target, descriptorTag(permute.step),
                          group.comm, &permute.requests[2]),
                id(), call.op, "sending this device's descriptor");
  }
  const void *sendFrom = call.in.data;
  if (!isContiguous(call.in)) {
    permute.sendStaging.resize(count);
    copyView(OwnedView::contiguous(permute.sendStaging.data(), call.in.dtype,
                                   permute.desc.inSizes)
                 .view(),
             call.in);
    sendFrom = permute.sendStaging.data();
  }
  world.check(MPI_Isend(sendFrom, count, MPI_BYTE, target, tag, group.comm,
                        &permute.requests[1]),
              id(), call.op, "sending a permute's data");
}

void MpiDevice::finishPermute(Request request, const OpInfo &op) {
  auto it = pending.find(request.id);
  Pending &permute = it->second;
  const GroupLayout &layout = permute.layout;
  if (layout.size() == 1) {
    copyView(permute.out.view(), permute.in.view());
    pending.erase(it);
    return;
  }
  GroupState &group = *permute.group;
  int64_t step = permute.step;
  int64_t sourceIndex = permute.route.receiveFrom;
  int64_t targetIndex = permute.route.sendTo;
  bool received = false, sent = false;
  bool done = world.waitUntil(deadline(), id(), op, [&] {
    // Our source's descriptor, or that of a member that disagrees about
    // this step and sends to us: the first that differs is reported.
    int64_t sender = -1;
    while (!permute.checked) {
      std::optional<CallDescriptor> theirs = receiveDescriptor(
          group, MPI_ANY_SOURCE, descriptorTag(step), sender, op);
      if (!theirs)
        break;
      int64_t index =
          std::find(layout.members.begin(), layout.members.end(), sender) -
          layout.members.begin();
      checkMatch(permute.desc, *theirs, layout, index, step, op);
      // Members that agree on the pairs agree on who sends to us.
      permute.checked = true;
    }
    int flag = 0;
    world.check(MPI_Test(&permute.requests[0], &flag, MPI_STATUS_IGNORE), id(),
                op, "receiving a permute's data");
    received = flag != 0;
    int sends[2] = {0, 0};
    world.check(MPI_Test(&permute.requests[1], &sends[0], MPI_STATUS_IGNORE),
                id(), op, "sending a permute's data");
    world.check(MPI_Test(&permute.requests[2], &sends[1], MPI_STATUS_IGNORE),
                id(), op, "sending this device's descriptor");
    sent = sends[0] && sends[1];
    if (permute.checked && received && sent)
      return true;
    if (!permute.checked || !received)
      checkNotEnded(group, layout, sourceIndex, step, permute.desc, op);
    if (!sent)
      checkNotEnded(group, layout, targetIndex, step, permute.desc, op);
    return false;
  });
  if (!done) {
    std::string source = describePeer(layout.members[sourceIndex], sourceIndex);
    std::string what = describeStep(permute.desc, step);
    if (!permute.checked)
      failTimedOut(source + " to reach " + what, op);
    if (!received)
      failTimedOut("the data of " + source + " in " + what, op);
    failTimedOut(describePeer(layout.members[targetIndex], targetIndex) +
                     " to receive this device's data in " + what,
                 op);
  }
  if (!permute.receiveStaging.empty())
    copyView(permute.out.view(),
             OwnedView::contiguous(permute.receiveStaging.data(),
                                   permute.desc.dtype, permute.desc.outSizes)
                 .view());
  pending.erase(it);
}

void MpiDevice::endProgram() {
  checkProgramEnd();
  int64_t run = world.currentRun();
  MessageWriter writer;
  writer.integer(run);
  writer.integer(static_cast<int64_t>(groups.size()));
  for (const auto &[members, group] : groups) {
    writer.integers(members);
    writer.integer(group.nextStep);
  }
  std::vector<char> body = writer.take();
  for (int64_t rank = 0; rank < numDevices(); ++rank)
    if (rank != id())
      world.sendControl(rank, World::kEndedTag, body);

  // Twice the timeout: a device still in a collective then reports what it
  // waits for (within one timeout) before the devices that finished give up
  // on it with a vaguer message.
  double endTimeout = 2 * timeoutSeconds;
  OpInfo atEnd{"at the end of the program", nullptr};
  bool everyone = world.waitUntil(deadlineAfter(endTimeout), id(), atEnd, [&] {
    for (int64_t rank = 0; rank < numDevices(); ++rank)
      if (rank != id() && !world.endedRun(rank, run))
        return false;
    return world.controlSendsDone();
  });
  if (!everyone) {
    std::string missing;
    for (int64_t rank = 0; rank < numDevices(); ++rank)
      if (rank != id() && !world.endedRun(rank, run))
        missing += (missing.empty() ? "device " : ", ") + std::to_string(rank);
    fatal(id(), {},
          "timed out after " + formatSeconds(endTimeout) +
              " s at the end of the program waiting for " +
              (missing.empty() ? "the other devices to receive this one's end"
                               : missing + " to end theirs"));
  }
  world.endRun();
}
