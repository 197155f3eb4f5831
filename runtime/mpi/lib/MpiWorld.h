//===- MpiWorld.h - Process-wide state of the MPI transport -----*- C++ -*-===//
//
// What the MPI transport keeps per process rather than per device: MPI
// itself, a control communicator (a duplicate of MPI_COMM_WORLD) with a
// mailbox of the control messages received on it, and the timed wait every
// blocking operation goes through.
//
// Control messages are matched by their contents, not by MPI's order: a
// device announces its first call on a group (an "arrival", which carries
// the call's descriptor) and the end of each program run ("ended", which
// carries how many calls it made on each group). While waiting for
// anything, a device drains the control communicator into the mailbox, so
// that it learns at once when a peer it waits for has ended its program
// without reaching the call, and asks the heartbeat whether a peer is lost.
//
//===----------------------------------------------------------------------===//

#ifndef OVLRT_MPI_MPIWORLD_H
#define OVLRT_MPI_MPIWORLD_H

#include "Heartbeat.h"

#include "ovlrt/Runtime.h"
#include "ovlrt/Transport.h"

#include <mpi.h>

#include <chrono>
#include <functional>
#include <list>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace ovlrt {
namespace mpi {

using Clock = std::chrono::steady_clock;
/// A group of devices as a communicator knows it: its members' ids,
/// ascending (naming the same axes in another order is the same group).
using MemberSet = std::vector<int64_t>;

/// A flat byte message of 64-bit integers, integer lists and strings.
class MessageWriter {
public:
  void integer(int64_t value);
  void integers(const std::vector<int64_t> &values);
  void text(const std::string &value);
  void descriptor(const CallDescriptor &desc);
  std::vector<char> take() { return std::move(bytes); }

private:
  std::vector<char> bytes;
};

/// Reads what MessageWriter wrote. A short or malformed message sets
/// failed() and yields zeros and empty values from then on.
class MessageReader {
public:
  explicit MessageReader(const std::vector<char> &bytes) : bytes(bytes) {}
  int64_t integer();
  std::vector<int64_t> integers();
  std::string text();
  CallDescriptor descriptor();
  /// Nothing was missing so far.
  bool good() const { return !bad; }
  /// Something was missing, or bytes are left over.
  bool failed() const { return bad || at != bytes.size(); }

private:
  bool take(void *dst, size_t size);

  const std::vector<char> &bytes;
  size_t at = 0;
  bool bad = false;
};

class World {
public:
  /// The one world of this process.
  static World &get();

  /// MPI_Init, the control communicator, error handlers, the heartbeat
  /// (a peer silent for `lostAfterSeconds` is lost; 0: left to the
  /// timeouts). Every step that waits for the other ranks gives up after
  /// `timeoutSeconds`. Once.
  void initialize(double lostAfterSeconds, double timeoutSeconds);
  void finalize();

  int64_t rank() const { return worldRank; }
  int64_t size() const { return worldSize; }
  /// How many consecutive steps of one group tags tell apart (MPI_TAG_UB
  /// allows at least 16383). Far more calls than this are never in flight
  /// between two devices, so tags may wrap around.
  int64_t tagPeriod() const { return period; }

  /// Ends the process if `code` is an MPI error, naming what failed.
  void check(int code, int64_t device, const OpInfo &op,
             const char *what) const;

  /// Sends a control message; the world keeps the buffer until MPI is done
  /// with it.
  void sendControl(int64_t destination, int tag, std::vector<char> body);
  /// Receives every control message that has arrived into the mailbox.
  void drainControl();
  /// True once every control message this process sent has left.
  bool controlSendsDone();

  /// Takes the descriptor `source` sent when it arrived at its first call
  /// on the group `members` during launch `launch`, if it is in the mailbox.
  std::optional<CallDescriptor> takeArrival(int64_t source, int64_t launch,
                                            const MemberSet &members);
  /// How a device ended a program run: the number of calls it had made on
  /// each group it used.
  struct Ended {
    std::map<MemberSet, int64_t> calls;
  };
  /// `source`'s end of program run `programRun`, if it has ended it.
  const Ended *endedRun(int64_t source, int64_t programRun) const;
  /// Program runs are numbered across launches, so that an end is never
  /// taken for one of a later run. The current run ends with endRun, which
  /// also forgets the ends of the run.
  int64_t currentRun() const { return run; }
  void endRun();

  /// Calls `poll` until it returns true (draining the control communicator
  /// before each call) or `deadline` passes; returns false then. Backs off
  /// from yielding to short sleeps, as ranks may share cores. Ends the job
  /// if a peer is lost, naming it and `op`, which `device` waits in.
  template <typename Poll>
  bool waitUntil(Clock::time_point deadline, int64_t device, const OpInfo &op,
                 Poll poll) {
    Clock::time_point start = Clock::now();
    Clock::time_point spinUntil = start + std::chrono::milliseconds(1);
    Clock::time_point nextCheck = start;
    while (true) {
      drainControl();
      if (poll())
        return true;
      Clock::time_point now = Clock::now();
      if (now >= nextCheck) {
        checkPeers(device, op);
        nextCheck = now + std::chrono::milliseconds(10);
      }
      if (now >= deadline)
        return false;
      pause(now < spinUntil);
    }
  }

  /// Ends the job if the heartbeat knows of a lost peer.
  void checkPeers(int64_t device, const OpInfo &op);
  /// Returns `call()`, a blocking MPI call that waits for other ranks and
  /// has no timed form (creating a group's communicator), while another
  /// thread asks the heartbeat for lost peers every 10 ms: one lost, or the
  /// call still running after `timeoutSeconds` (`what` says what it was
  /// doing), ends the process with the same report a wait would make.
  int callWatched(double timeoutSeconds, int64_t device, const OpInfo &op,
                  const char *what, const std::function<int()> &call);
  /// Whether the calling thread is the one that initialized MPI, the only
  /// one that may call it (MPI_THREAD_FUNNELED).
  bool isMpiThread() const { return std::this_thread::get_id() == mpiThread; }
  /// Called by the fatal handler before it aborts the job.
  void announceAbort() { heartbeat.announceAbort(); }

  /// Waits until the heartbeat has heard every peer that beats (at once if
  /// it is off), so that any of them lost from then on is noticed; ends the
  /// job naming one that stays unheard for `timeoutSeconds`.
  void awaitHeartbeats(double timeoutSeconds);

  /// Waits for a non-blocking operation on behalf of the host (barrier,
  /// reduction, gather); ends the job naming `what` if it does not complete
  /// in time.
  void waitHost(MPI_Request &request, double timeoutSeconds, const char *what);

  /// Control-message tags.
  static constexpr int kArrivalTag = 1;
  static constexpr int kEndedTag = 2;

private:
  World() = default;
  static void pause(bool spinning);

  void startHeartbeat(double lostAfterSeconds);

  int64_t worldRank = 0, worldSize = 1, period = 16383, run = 0;
  std::thread::id mpiThread;
  double timeoutSeconds = 30;
  bool initialized = false;
  MPI_Comm control = MPI_COMM_NULL;
  Heartbeat heartbeat;

  struct OutgoingSend {
    std::vector<char> body;
    MPI_Request request = MPI_REQUEST_NULL;
  };
  std::list<OutgoingSend> outgoing;
  /// (source, launch, members) -> the arrival's descriptor.
  std::map<std::tuple<int64_t, int64_t, MemberSet>, CallDescriptor> arrivals;
  /// (source, run) -> its end.
  std::map<std::pair<int64_t, int64_t>, Ended> ends;
};

/// "12.5" for 12.5 seconds.
std::string formatSeconds(double seconds);
/// Now plus `seconds`.
Clock::time_point deadlineAfter(double seconds);
/// The fatal handler of the MPI transport: prints the message, then aborts
/// every rank (MPI_Abort) with exit code 70.
FatalHandler getAbortHandler();

} // namespace mpi
} // namespace ovlrt

#endif // OVLRT_MPI_MPIWORLD_H
