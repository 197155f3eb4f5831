//===- Heartbeat.h - Lost-rank detection of the MPI transport ---*- C++ -*-===//
//
// MPI offers no portable way to learn that a rank died or became
// unreachable: a wait for it polls until the timeout, which must be long
// enough for the slowest legitimate collective. So every rank runs a small
// thread that beats (a UDP datagram) to every peer a few times a second and
// feeds the beats it receives to a PeerWatch; waits ask it, so a rank that
// dies, or whose network goes, is named within `lostAfter` seconds, however
// long the timeout. The beats go outside MPI on purpose: they must keep
// flowing while the main thread computes or sits in MPI, and MPI is
// initialized for one calling thread only.
//
// A rank that reports a loss says so in its beats before it aborts the job,
// and waits (at most a second) until every peer that can still hear it has
// reported too, so that every rank ends with the loss named, not killed
// without a word by the abort.
//
//===----------------------------------------------------------------------===//

#ifndef OVLRT_MPI_HEARTBEAT_H
#define OVLRT_MPI_HEARTBEAT_H

#include "ovlrt/PeerWatch.h"

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <netinet/in.h>

namespace ovlrt {
namespace mpi {

/// Where a rank receives beats, as the ranks exchange it (plain bytes).
struct Endpoint {
  static constexpr int kMaxAddresses = 8;
  /// 0: the rank does not beat.
  uint32_t port = 0;
  uint32_t count = 0;
  /// IPv4 addresses in network byte order.
  uint32_t addresses[kMaxAddresses] = {};
};

class Heartbeat {
public:
  ~Heartbeat() { stop(); }

  /// Opens this rank's socket; `lostAfterSeconds` <= 0 opens nothing
  /// (losses are then left to the timeouts). Returns an error message,
  /// empty if none; a rank that cannot beat still takes part in the
  /// exchange, with an endpoint of port 0.
  std::string open(double lostAfterSeconds);
  /// What the ranks exchange.
  Endpoint endpoint() const { return mine; }
  /// Starts beating to the peers of `endpoints` (one per rank) once the
  /// ranks have exchanged them, with `job` (the same on every rank) in
  /// every beat.
  void begin(int64_t rank, uint64_t job,
             const std::vector<Endpoint> &endpoints);
  /// Says this rank leaves (so that no peer takes its silence for a loss)
  /// and stops the thread.
  void stop();

  /// A lost peer, if any (PeerWatch::check at the current time).
  std::optional<PeerWatch::Loss> check();
  /// A peer that beats (it published a port) but has not been heard from
  /// yet, if any; none while the heartbeat is off.
  std::optional<int64_t> unheardPeer();
  /// Remembers that this rank reports `device` lost; the beats say so from
  /// the next announce() on.
  void noteLost(int64_t device) { reportedLost = device; }
  /// Before the job is aborted: beats at once with the reported loss (or
  /// as leaving if there is none), then, if a loss was reported, waits at
  /// most a second until every peer still heard has reported one too.
  void announceAbort();

private:
  void run();
  void beat(bool leaving);
  void receive();

  int64_t rank = 0;
  double lostAfterSeconds = 0;
  Endpoint mine;
  int socket = -1;
  /// A pipe whose write end stop() closes, to wake the thread at once.
  int wake[2] = {-1, -1};
  uint64_t job = 0;
  std::chrono::steady_clock::duration period{};
  std::vector<std::vector<sockaddr_in>> peerAddresses;
  std::mutex mutex;
  std::optional<PeerWatch> watch;
  std::atomic<int64_t> reportedLost{-1};
  std::thread thread;
};

} // namespace mpi
} // namespace ovlrt

#endif // OVLRT_MPI_HEARTBEAT_H
