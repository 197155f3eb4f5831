//===- LinkEmulation.cpp - Emulated interconnect timing -------------------===//
//
// The closed-form times of the emulated interconnect and the booking of
// directed links for point-to-point transfers. A link carries one transfer
// at a time; the latency of a transfer overlaps the next one's wire time,
// as on a pipelined link.
//
//===----------------------------------------------------------------------===//

#include "ovlrt/LinkEmulation.h"

#include <algorithm>

using namespace ovlrt;

LinkModel::LinkModel(double bandwidthGBps, double latencyUs)
    : bandwidthGBps(bandwidthGBps), latencyUs(latencyUs) {}

/// Emulated times saturate here (about 32 years, far beyond any timeout,
/// which waitForEmulated compares them with): a slower link or a larger
/// transfer would overflow the clock's ticks.
static constexpr double kMaxEmulatedSeconds = 1e9;

/// Rounded to the nearest tick: truncating would turn the 1 ms that 2 MB
/// take at 2 GB/s into 999999 ns.
static Clock::duration fromSeconds(double seconds) {
  return std::chrono::round<Clock::duration>(
      std::chrono::duration<double>(std::min(seconds, kMaxEmulatedSeconds)));
}

double LinkModel::wireSeconds(int64_t bytes) const {
  return bandwidthGBps > 0 ? static_cast<double>(bytes) / (bandwidthGBps * 1e9)
                           : 0;
}

double LinkModel::transferSeconds(int64_t bytes) const {
  return latencyUs * 1e-6 + wireSeconds(bytes);
}

Clock::duration LinkModel::wireTime(int64_t bytes) const {
  if (!enabled())
    return Clock::duration::zero();
  return fromSeconds(wireSeconds(bytes));
}

Clock::duration LinkModel::transferTime(int64_t bytes) const {
  if (!enabled())
    return Clock::duration::zero();
  return fromSeconds(transferSeconds(bytes));
}

Clock::duration LinkModel::collectiveTime(CallKind kind, int64_t groupSize,
                                          int64_t bytes) const {
  if (!enabled() || groupSize <= 1)
    return Clock::duration::zero();
  double steps = static_cast<double>(groupSize - 1);
  switch (kind) {
  case CallKind::AllGather:
  case CallKind::ReduceScatter:
    return fromSeconds(steps * transferSeconds(bytes));
  case CallKind::AllReduce:
    return fromSeconds(2 * steps * transferSeconds(bytes / groupSize));
  case CallKind::Permute:
    break;
  }
  return transferTime(bytes);
}

Clock::time_point LinkSchedule::book(int64_t source, int64_t target,
                                     int64_t bytes, Clock::time_point ready) {
  if (source == target || !model.enabled())
    return ready;
  std::lock_guard<std::mutex> lock(mutex);
  Clock::time_point &free = freeAt[{source, target}];
  Clock::time_point begin = std::max(ready, free);
  free = begin + model.wireTime(bytes);
  return begin + model.transferTime(bytes);
}
