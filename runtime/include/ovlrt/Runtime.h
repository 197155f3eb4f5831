//===- Runtime.h - The ovl device runtime -----------------------*- C++ -*-===//
//
// The runtime that compiled SPMD programs call for their collectives. Each
// device runs the same program on its own thread (or process) and calls its
// Device for the ovl dialect's collectives; a transport moves the data. The
// threads transport (ThreadsWorld) runs all devices as threads of this
// process. Every call either completes or ends the process with a message
// (see Errors.h): peers that disagree, a peer that never arrives (every wait
// has a timeout) and misuse of asynchronous calls are all reported.
//
//===----------------------------------------------------------------------===//

#ifndef OVLRT_RUNTIME_H
#define OVLRT_RUNTIME_H

#include "ovlrt/DType.h"
#include "ovlrt/Errors.h"
#include "ovlrt/Group.h"
#include "ovlrt/Tensor.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>

namespace ovlrt {

struct Call;
enum class CallKind;

/// An asynchronous call in flight: a permute, returned by permuteStart and
/// consumed by permuteDone, or a collective, returned by allGatherStart,
/// reduceScatterStart or allReduceStart and consumed by collectiveDone. A
/// plain id, so compiled code can keep it in a register.
struct Request {
  int64_t id = 0;
};

/// One device of a world. All calls are made from the device's own thread
/// and follow the ovl dialect's semantics (see README.md). The calls of one
/// group (collectives and permute starts alike) are matched between its
/// members by their order of issue, like MPI's non-overtaking messages on a
/// communicator. The collectives allow `out` to alias `in`. The public
/// functions check their arguments and report misuse; the transport
/// implements the protected hooks.
class Device {
public:
  virtual ~Device();
  Device(const Device &) = delete;
  Device &operator=(const Device &) = delete;

  int64_t id() const { return deviceId; }
  int64_t numDevices() const { return worldSize; }

  /// This device's index in its group.
  int64_t partitionId(const Group &group, OpInfo op = {});

  /// `out` is every member's `in` concatenated along `dim` in group-index
  /// order: out.sizes[dim] == groupSize * in.sizes[dim].
  void allGather(const TensorView &in, const TensorView &out,
                 const Group &group, int64_t dim, OpInfo op = {});
  /// The members' `in` combined elementwise, split into groupSize parts
  /// along `dim`; `out` is the part at this device's group index.
  void reduceScatter(const TensorView &in, const TensorView &out,
                     const Group &group, int64_t dim, Reduction reduction,
                     OpInfo op = {});
  /// `out` is the members' `in` combined elementwise.
  void allReduce(const TensorView &in, const TensorView &out,
                 const Group &group, Reduction reduction, OpInfo op = {});
  /// `out` receives the `in` of the member whose group index is paired with
  /// this device's as (source, target). `pairs` must be a permutation of
  /// the group; `in` and `out` must not overlap.
  void permute(const TensorView &in, const TensorView &out, const Group &group,
               PermutePairs pairs, OpInfo op = {});
  /// Starts `permute` and returns at once. Until permuteDone, this device
  /// must not modify `in` nor read `out`; the views' data (not their shape
  /// arrays) must stay valid. Any number may be in flight.
  Request permuteStart(const TensorView &in, const TensorView &out,
                       const Group &group, PermutePairs pairs, OpInfo op = {});
  /// Waits until this device's data of `request` has been delivered and its
  /// own `out` has been filled. `request` must come from permuteStart.
  void permuteDone(Request request, OpInfo op = {});

  /// Start `allGather`, `reduceScatter` and `allReduce` and return at once,
  /// with the same checks and the same result (bit for bit). The start
  /// takes its step on the group, so it matches the call the other members
  /// issue at that point, blocking or not. Until collectiveDone, this device
  /// must not modify `in` nor read `out`; the views' data (not their shape
  /// arrays) must stay valid. `out` may alias `in`. Any number may be in
  /// flight, with permutes, and their dones may come in any order.
  Request allGatherStart(const TensorView &in, const TensorView &out,
                         const Group &group, int64_t dim, OpInfo op = {});
  Request reduceScatterStart(const TensorView &in, const TensorView &out,
                             const Group &group, int64_t dim,
                             Reduction reduction, OpInfo op = {});
  Request allReduceStart(const TensorView &in, const TensorView &out,
                         const Group &group, Reduction reduction,
                         OpInfo op = {});
  /// Waits until every member's contribution to `request` has arrived and
  /// this device's `out` holds the result. Also completes a permute start,
  /// like permuteDone. Without an op name, the done is named as in the
  /// dialect: ovl.collective_done (ovl.collective_permute_done for a
  /// permute).
  void collectiveDone(Request request, OpInfo op = {});

  /// Asynchronous calls (permutes and collectives) started and not yet done.
  int64_t numInFlight() const { return static_cast<int64_t>(inFlight.size()); }
  /// Reports the end of this device's program as an error if asynchronous
  /// calls are still in flight. Worlds call it when a device's program
  /// returns.
  void checkProgramEnd() const;

protected:
  Device(int64_t id, int64_t numDevices);

  /// A blocking all-gather, reduce-scatter or all-reduce.
  virtual void runCollective(const Call &call) = 0;
  /// Starts a permute; `request` is fresh and names it in finishPermute.
  virtual void startPermute(const Call &call, Request request) = 0;
  /// Completes a started permute.
  virtual void finishPermute(Request request, const OpInfo &op) = 0;
  /// Starts an all-gather, reduce-scatter or all-reduce: takes its step on
  /// the group and sends (or posts) this device's contribution, which it
  /// copies, as the device may go on computing. `call`'s shape arrays,
  /// group and op strings are valid only during the start (the views' data
  /// until the done); `request` is fresh and names it in finishCollective.
  virtual void startCollective(const Call &call, Request request) = 0;
  /// Completes a started collective: waits for the members' contributions
  /// and writes this device's `out`.
  virtual void finishCollective(Request request, const OpInfo &op) = 0;

  [[noreturn]] void fail(const OpInfo &op, const std::string &message) const;

private:
  Call prepare(CallKind kind, const TensorView &in, const TensorView &out,
               const Group &group, const OpInfo &op) const;
  /// The checked calls of the collectives, blocking or not.
  Call prepareAllGather(const TensorView &in, const TensorView &out,
                        const Group &group, int64_t dim,
                        const OpInfo &op) const;
  Call prepareReduceScatter(const TensorView &in, const TensorView &out,
                            const Group &group, int64_t dim,
                            Reduction reduction, const OpInfo &op) const;
  Call prepareAllReduce(const TensorView &in, const TensorView &out,
                        const Group &group, Reduction reduction,
                        const OpInfo &op) const;

  /// What an in-flight call is, and where it was started, for error
  /// messages.
  struct InFlight {
    CallKind kind;
    std::string opName, location;
  };
  using InFlightTable = std::map<int64_t, InFlight>;

  /// Enters a fresh request for `call` in the table of calls in flight.
  Request track(const Call &call);
  /// The entry of `request`, which `op` is to complete; reports a request
  /// that is not in flight (`starts` names the calls that return the
  /// requests `op` accepts, e.g. "permute start").
  InFlightTable::iterator findInFlight(Request request, const OpInfo &op,
                                       const char *starts);

  int64_t deviceId, worldSize;
  int64_t nextRequest = 1;
  InFlightTable inFlight;
};

/// The device of the calling thread, so that entry points called from
/// compiled code find it. Ends the process if there is none.
Device &currentDevice();
/// Sets the calling thread's device (null to clear). Worlds call it.
void setCurrentDevice(Device *device);

struct WorldOptions {
  /// The product of the grid shape.
  int64_t numDevices = 1;
  /// The longest any call waits for a peer before reporting it missing.
  double timeoutSeconds = 30;
  /// Link emulation (see LinkEmulation.h): 0 bandwidth disables it;
  /// otherwise every transfer takes at least bytes / bandwidth + latency.
  double linkBandwidthGBps = 0;
  double linkLatencyUs = 0;
};

/// A world whose devices are threads of this process. Devices pass data by
/// reading each other's memory directly.
class ThreadsWorld {
public:
  explicit ThreadsWorld(WorldOptions options);

  /// Runs body(device) on one new thread per device and returns when all
  /// have finished. Each run starts afresh: no collective matches across
  /// runs.
  void run(const std::function<void(Device &)> &body);

private:
  WorldOptions options;
};

} // namespace ovlrt

#endif // OVLRT_RUNTIME_H
