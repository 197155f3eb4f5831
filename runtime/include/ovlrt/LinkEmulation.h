//===- LinkEmulation.h - Emulated interconnect timing -----------*- C++ -*-===//
//
// On one machine, data moves between devices at memory speed, so overlapping
// communication with computation would save nothing measurable. With link
// emulation a transfer is not complete before the time an interconnect of
// the given bandwidth and latency would need, which makes the overlap visible
// in wall-clock time. Only lower bounds are imposed: a transfer never
// finishes early, but may finish late when the machine is busy.
//
//===----------------------------------------------------------------------===//

#ifndef OVLRT_LINKEMULATION_H
#define OVLRT_LINKEMULATION_H

#include "ovlrt/Transport.h"

#include <chrono>
#include <map>
#include <mutex>
#include <utility>

namespace ovlrt {

using Clock = std::chrono::steady_clock;

/// Times of an interconnect with one latency and one bandwidth per link.
class LinkModel {
public:
  /// Zero bandwidth disables emulation (every time is zero).
  LinkModel(double bandwidthGBps, double latencyUs);

  bool enabled() const { return bandwidthGBps > 0; }
  /// bytes / bandwidth: how long a transfer occupies its link.
  Clock::duration wireTime(int64_t bytes) const;
  /// latency + bytes / bandwidth: one point-to-point transfer.
  Clock::duration transferTime(int64_t bytes) const;
  /// A blocking collective over a unidirectional ring of `groupSize`
  /// devices: (N-1) transfer times of the shard for an all-gather (`bytes`
  /// = its input) and a reduce-scatter (`bytes` = its output); a
  /// reduce-scatter then an all-gather of bytes/N shards for an all-reduce.
  Clock::duration collectiveTime(CallKind kind, int64_t groupSize,
                                 int64_t bytes) const;

private:
  /// The same in seconds, unsaturated.
  double wireSeconds(int64_t bytes) const;
  double transferSeconds(int64_t bytes) const;

  double bandwidthGBps, latencyUs;
};

/// The directed links between devices: transfers that share a link take
/// turns, so several permutes in flight between the same two devices take
/// as long as their total size requires.
class LinkSchedule {
public:
  explicit LinkSchedule(LinkModel model) : model(model) {}

  /// Books a transfer of `bytes` from `source` to `target` that can begin at
  /// `ready` and returns when it arrives. A device sending to itself uses no
  /// link: its data arrives at `ready`.
  Clock::time_point book(int64_t source, int64_t target, int64_t bytes,
                         Clock::time_point ready);

private:
  LinkModel model;
  std::mutex mutex;
  /// When each directed link is free again.
  std::map<std::pair<int64_t, int64_t>, Clock::time_point> freeAt;
};

} // namespace ovlrt

#endif // OVLRT_LINKEMULATION_H
