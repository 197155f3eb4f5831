//===- Replay.h - What an order of a block costs ----------------*- C++ -*-===//
//
// Plays an order of a graph's nodes on the cost model, as overlap-sim would
// with every device in step: each op after the previous one, a done not
// before its transfers arrive, transfers sharing links as LinkFlows plays
// them. The schedulers' orders are compared, improved and guarded by it.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAPDIALECT_SCHEDULING_REPLAY_H
#define OVERLAPDIALECT_SCHEDULING_REPLAY_H

#include "llvm/ADT/ArrayRef.h"

#include <optional>

namespace mlir {
namespace ovl {
namespace sched {
class BlockSimulation;
struct ScheduleGraph;

/// What an order of a block amounts to, for the op around it.
struct BlockOutcome {
  /// The estimated time of one run of the block, stalls included.
  double makespan = 0;
  /// The most transfers in flight at any point.
  int peak = 0;
  /// The first node that runs with more transfers in flight than the
  /// budget beyond what it holds itself (a loop that alone needs more was
  /// reported inside), and that count.
  std::optional<unsigned> overBudgetAt;
  int overBudgetCount = 0;
  /// The most bytes the block's transfers hold in flight, and the first
  /// node after which they exceed the graph's memory budget, and how many.
  double peakBytes = 0;
  std::optional<unsigned> overMemoryAt;
  double overMemoryBytes = 0;
};

/// Plays `order` on the cost model: its estimated time (a transfer passed
/// on to the next iteration exposed by what is left of it when that
/// iteration waits for it), its peak in-flight count and where it exceeds
/// `budget`.
BlockOutcome replay(const ScheduleGraph &graph, llvm::ArrayRef<unsigned> order,
                    int budget);

/// The replay's marks of `order` (peak, budget, memory: the same), and a
/// lower bound of its makespan, without playing the transfers: each done
/// waits at least for its transfer's time alone after its start.
BlockOutcome replayBound(const ScheduleGraph &graph,
                         llvm::ArrayRef<unsigned> order, int budget);

/// The replay of `order`, its makespan the simulated step time when
/// `simulation` is given (the budget and the peak still the replay's).
BlockOutcome judge(const ScheduleGraph &graph, llvm::ArrayRef<unsigned> order,
                   int budget, const BlockSimulation *simulation);

/// Estimates closer than this, relatively, are the same time: the
/// schedulers' and the replay's sums of the same costs in other orders
/// differ by rounding.
constexpr double kSameTime = 1e-9;

/// How far below a time its lower bound must be to settle a comparison
/// unplayed: the bound and the play round differently, and LinkFlows ends a
/// phase within 1e-15 s of its end.
constexpr double kBoundMargin = 1e-6;

/// Whether `candidate` is faster than `current`, which it then replaces: it
/// must not exceed the in-flight or the memory budget where `current` does
/// not (the replay does not price the wait for a slot or for memory).
bool isFaster(const BlockOutcome &candidate, const BlockOutcome &current);

} // namespace sched
} // namespace ovl
} // namespace mlir

#endif // OVERLAPDIALECT_SCHEDULING_REPLAY_H
