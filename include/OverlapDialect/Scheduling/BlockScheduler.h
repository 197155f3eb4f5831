//===- BlockScheduler.h - The order of one block, end to end ----*- C++ -*-===//
//
// What `ovl-schedule` does to each block once it has its graph: a list
// order (ListSchedulers.h), improved by single moves (Improve.h), judged
// by the event simulator where the block can be played on its own
// (BlockSimulation.h) and by the replay elsewhere (Replay.h), and guarded:
// an order priced slower than the input order is not kept.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAPDIALECT_SCHEDULING_BLOCKSCHEDULER_H
#define OVERLAPDIALECT_SCHEDULING_BLOCKSCHEDULER_H

#include "OverlapDialect/Scheduling/Improve.h"
#include "OverlapDialect/Scheduling/Replay.h"

#include "llvm/ADT/SmallVector.h"

#include <cstdint>

namespace mlir {
namespace ovl {
namespace sched {
struct ScheduleGraph;

enum class Algorithm { BottomUp, TopDown };

struct BlockScheduleOptions {
  Algorithm algorithm = Algorithm::BottomUp;
  /// Transfers in flight at once, at least 1.
  int budget = 1;
  /// The judgements `improve` may spend on a block the event simulator
  /// judges move by move (others get kImproveReplays).
  unsigned simulatedImproveReplays = kImproveReplays;
};

struct BlockSchedule {
  /// The nodes in their new order.
  llvm::SmallVector<unsigned> order;
  BlockOutcome outcome;
  /// Whether the event simulator judged the order kept.
  bool simulated = false;
  /// Whether the guard kept the input order, the schedule being slower.
  bool keptInput = false;
};

/// The most device-steps (devices x ops) of a block for which improve's
/// moves are judged by the event simulator rather than by the replay: a
/// few thousand plays of a small block take milliseconds.
constexpr int64_t kSimulatedImproveSize = 4096;

/// Orders `graph` (finalized, its transfers planned).
BlockSchedule scheduleBlock(const ScheduleGraph &graph,
                            const BlockScheduleOptions &options);

} // namespace sched
} // namespace ovl
} // namespace mlir

#endif // OVERLAPDIALECT_SCHEDULING_BLOCKSCHEDULER_H
