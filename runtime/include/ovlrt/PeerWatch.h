//===- PeerWatch.h - Which peers are alive, from their heartbeats -*- C++
//-*-===//
//
// The MPI transport's own detection of lost ranks: every rank's heartbeat
// thread beats to every peer a few times a second, and a rank that waits for
// anything asks this watch whether a peer is lost. The rules, kept apart
// from sockets and MPI so that they have unit tests:
//
// - a peer is lost once it has beaten at least once and then stayed silent
//   for `lostAfter` (a peer never heard from is left to the timeouts: beats
//   may be blocked by a firewall, and that must not fail a healthy job);
// - a peer that says it leaves (a normal end, or an abort it reported) is
//   never lost;
// - a peer that reports another one lost is believed: the job cannot go on
//   without that rank, and the report ends every rank that hears it with
//   the same verdict.
//
// Not thread-safe: the transport guards it with a mutex.
//
//===----------------------------------------------------------------------===//

#ifndef OVLRT_PEERWATCH_H
#define OVLRT_PEERWATCH_H

#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

namespace ovlrt {

class PeerWatch {
public:
  using Clock = std::chrono::steady_clock;

  /// Watches the `size` - 1 peers of rank `self`.
  PeerWatch(int64_t self, int64_t size, Clock::duration lostAfter);

  /// What one heartbeat of `peer` said, received at `when`: the device it
  /// reports lost (-1: none) and whether it is leaving. Beats from `self`
  /// or from outside [0, size) are ignored, as are reports naming `self` or
  /// a device outside [0, size).
  void heard(int64_t peer, Clock::time_point when, int64_t reportsLost,
             bool leaving);

  struct Loss {
    /// The lost device.
    int64_t device;
    /// Who noticed: this rank, or the peer whose report was heard.
    int64_t noticedBy;
    /// How long the device had been silent when this rank noticed; 0 for a
    /// report heard from a peer.
    double silentSeconds;
  };
  /// The first lost peer at `now`: this rank's own verdict if one is silent
  /// past lostAfter (the longest silent one), else the first report heard.
  std::optional<Loss> check(Clock::time_point now) const;

  /// Whether every peer that is neither lost at `now` nor leaving has
  /// reported a loss: then every rank that can still hear has given its
  /// own verdict, and the job may end.
  bool everyLivePeerReported(Clock::time_point now) const;

  /// Whether `peer` has beaten at least once (false for `self` and for
  /// devices outside [0, size)): from then on its silence is noticed.
  bool hasHeard(int64_t peer) const;

private:
  struct Peer {
    std::optional<Clock::time_point> last;
    bool leaving = false;
    bool reported = false;
  };
  bool isSilent(const Peer &peer, Clock::time_point now) const;

  int64_t self;
  Clock::duration lostAfter;
  std::vector<Peer> peers;
  std::optional<Loss> report;
};

} // namespace ovlrt

#endif // OVLRT_PEERWATCH_H
