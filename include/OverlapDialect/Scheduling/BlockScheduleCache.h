//===- BlockScheduleCache.h - Blocks scheduled once -------------*- C++ -*-===//
//
// The gate schedules every form of every window it prices, and the same
// blocks come back: a ring loop's body in each form and round that builds
// it, a window priced beside loops that changed nothing it depends on, the
// layers of a model. scheduleBlock is a function of its graph and options
// alone, so a block whose graph and options are those of one scheduled
// before gets that schedule back, exactly.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAPDIALECT_SCHEDULING_BLOCKSCHEDULECACHE_H
#define OVERLAPDIALECT_SCHEDULING_BLOCKSCHEDULECACHE_H

#include "OverlapDialect/Scheduling/BlockScheduler.h"

#include <array>
#include <cstdint>
#include <map>

namespace mlir {
namespace ovl {
namespace sched {

/// What scheduleBlock's answer depends on: every field of the graph and
/// of the options, as a 256-bit BLAKE3 digest. A transfer's machine counts
/// by its address.
using BlockKey = std::array<uint8_t, 32>;
BlockKey getBlockKey(const ScheduleGraph &graph,
                     const BlockScheduleOptions &options);

/// Schedules made, by their BlockKey. Valid while the machines its graphs'
/// transfers point to live (a MachineModelCache's).
class BlockScheduleCache {
public:
  /// scheduleBlock(graph, options), made the first time a key is seen.
  const BlockSchedule &schedule(const ScheduleGraph &graph,
                                const BlockScheduleOptions &options);
  /// Schedules answered from the cache, and made.
  unsigned getHits() const { return hits; }
  unsigned getMisses() const { return static_cast<unsigned>(made.size()); }

private:
  std::map<BlockKey, BlockSchedule> made;
  unsigned hits = 0;
};

} // namespace sched
} // namespace ovl
} // namespace mlir

#endif // OVERLAPDIALECT_SCHEDULING_BLOCKSCHEDULECACHE_H
