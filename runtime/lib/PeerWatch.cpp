//===- PeerWatch.cpp - Which peers are alive, from their heartbeats -------===//

#include "ovlrt/PeerWatch.h"

using namespace ovlrt;

PeerWatch::PeerWatch(int64_t self, int64_t size, Clock::duration lostAfter)
    : self(self), lostAfter(lostAfter), peers(size > 0 ? size : 0) {}

void PeerWatch::heard(int64_t peer, Clock::time_point when, int64_t reportsLost,
                      bool leaving) {
  int64_t size = static_cast<int64_t>(peers.size());
  if (peer < 0 || peer >= size || peer == self)
    return;
  Peer &state = peers[peer];
  if (!state.last || *state.last < when)
    state.last = when;
  state.leaving |= leaving;
  if (reportsLost < 0 || reportsLost >= size || reportsLost == self)
    return;
  state.reported = true;
  if (!report)
    report = Loss{reportsLost, peer, 0};
}

bool PeerWatch::isSilent(const Peer &peer, Clock::time_point now) const {
  return peer.last && !peer.leaving && now - *peer.last > lostAfter;
}

std::optional<PeerWatch::Loss> PeerWatch::check(Clock::time_point now) const {
  std::optional<Loss> longest;
  for (int64_t i = 0, e = static_cast<int64_t>(peers.size()); i < e; ++i) {
    if (i == self || !isSilent(peers[i], now))
      continue;
    double silent = std::chrono::duration<double>(now - *peers[i].last).count();
    if (!longest || silent > longest->silentSeconds)
      longest = Loss{i, self, silent};
  }
  return longest ? longest : report;
}

bool PeerWatch::everyLivePeerReported(Clock::time_point now) const {
  for (int64_t i = 0, e = static_cast<int64_t>(peers.size()); i < e; ++i) {
    const Peer &peer = peers[i];
    // A peer never heard from cannot be expected to hear this rank.
    if (i == self || !peer.last || peer.leaving || peer.reported ||
        isSilent(peer, now))
      continue;
    return false;
  }
  return true;
}

bool PeerWatch::hasHeard(int64_t peer) const {
  return peer >= 0 && peer < static_cast<int64_t>(peers.size()) &&
         peer != self && peers[peer].last.has_value();
}
