//===- MpiDevice.h - One device as one MPI rank -----------------*- C++ -*-===//
//
// The MPI transport's Device. Each group (set of devices) gets a
// communicator whose ranks are the members in ascending device order, and
// every call a device makes on a group takes its next step number there, as
// in the threads transport; tags derive from the step, so that permutes in
// flight match in issue order whatever the timing.
//
//===----------------------------------------------------------------------===//

#ifndef OVLRT_MPI_MPIDEVICE_H
#define OVLRT_MPI_MPIDEVICE_H

#include "MpiWorld.h"

namespace ovlrt {
namespace mpi {

class MpiDevice final : public Device {
public:
  /// `launch` numbers the devices this process has created, which every
  /// rank creates in the same order.
  MpiDevice(World &world, double timeoutSeconds, int64_t launch);
  ~MpiDevice() override;

  /// See OvlrtMpiPlugin::endProgram.
  void endProgram();

private:
  /// A group this device has called.
  struct GroupState {
    MemberSet members;
    /// Null until the group's first call has met every member (and for
    /// groups of one device, which need no communication).
    MPI_Comm comm = MPI_COMM_NULL;
    int64_t nextStep = 0;
  };

  /// A permute between its start and its done.
  struct Pending {
    GroupState *group = nullptr;
    int64_t step = 0;
    GroupLayout layout;
    PermuteRoute route;
    CallDescriptor desc;
    /// Copies of the caller's views (their shape arrays need not outlive
    /// the start).
    OwnedView in, out;
    /// True once the source's descriptor has been compared with ours.
    bool checked = false;
    /// Dense copies of a strided `in` and `out`.
    std::vector<char> sendStaging, receiveStaging;
    std::vector<char> descMessage;
    /// The data receive, the data send and the descriptor send.
    MPI_Request requests[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL,
                               MPI_REQUEST_NULL};
  };

  /// A collective from the post of its all-gather to the combination: the
  /// two halves of a blocking collective, or an asynchronous one between
  /// its start and its done. MPI reads and writes the buffers until the
  /// all-gather completes, so they live here.
  struct Gather {
    GroupState *group = nullptr;
    int64_t step = 0;
    /// This device's packed contribution, and every member's by rank.
    std::vector<char> mine, all;
    MPI_Request request = MPI_REQUEST_NULL;
  };

  /// An asynchronous collective between its start and its done.
  struct PendingCollective {
    explicit PendingCollective(const Call &call) : call(call) {}
    OwnedCall call;
    Gather gather;
  };

  void runCollective(const Call &call) override;
  void startPermute(const Call &call, Request request) override;
  void finishPermute(Request request, const OpInfo &op) override;
  void startCollective(const Call &call, Request request) override;
  void finishCollective(Request request, const OpInfo &op) override;

  /// Takes the call's step on its group, meets the group or exchanges
  /// descriptors with its members (every member is then at this call and
  /// agrees on it), packs this device's contribution and posts the
  /// all-gather of the contributions.
  void postGather(const Call &call, Gather &gather);
  /// Waits for the all-gather and computes `call.out` from the members'
  /// contributions; `op` is the call that waits.
  void combineGather(const Call &call, Gather &gather, const OpInfo &op);

  GroupState &groupFor(const GroupLayout &layout);
  /// The first call on a group: exchanges descriptors with every member
  /// through the control mailbox, then creates the group's communicator.
  void meetGroup(GroupState &group, const Call &call, int64_t step);
  /// A collective's later calls: sends this device's descriptor to every
  /// member and checks theirs.
  void exchangeDescriptors(GroupState &group, const Call &call, int64_t step);
  /// Receives a descriptor sent on `group` with `tag` by `sourceRank` (a
  /// rank of the group's communicator, or MPI_ANY_SOURCE), if one has
  /// arrived; sets `sender` to the sender's device id.
  std::optional<CallDescriptor> receiveDescriptor(const GroupState &group,
                                                  int sourceRank, int tag,
                                                  int64_t &sender,
                                                  const OpInfo &op);
  /// Ends the process unless `theirs`, the call of the member with group
  /// index `index`, matches `mine`.
  void checkMatch(const CallDescriptor &mine, const CallDescriptor &theirs,
                  const GroupLayout &layout, int64_t index, int64_t step,
                  const OpInfo &op) const;
  /// Ends the process if the member with group index `index` has ended the
  /// current program run without making call `step` on `group`.
  void checkNotEnded(const GroupState &group, const GroupLayout &layout,
                     int64_t index, int64_t step, const CallDescriptor &mine,
                     const OpInfo &op) const;
  [[noreturn]] void failTimedOut(const std::string &waitingFor,
                                 const OpInfo &op) const;

  int commRank(const GroupState &group, int64_t device) const;
  int descriptorTag(int64_t step) const;
  int dataTag(int64_t step) const;
  Clock::time_point deadline() const { return deadlineAfter(timeoutSeconds); }

  World &world;
  double timeoutSeconds;
  int64_t launch;
  std::map<MemberSet, GroupState> groups;
  std::map<int64_t, Pending> pending;
  std::map<int64_t, PendingCollective> collectives;
};

} // namespace mpi
} // namespace ovlrt

#endif // OVLRT_MPI_MPIDEVICE_H
