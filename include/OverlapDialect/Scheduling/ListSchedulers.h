//===- ListSchedulers.h - The two list orders of a block --------*- C++ -*-===//
//
// The list schedulers of section 5.2 of the paper: each orders a graph's
// nodes (an order of node indices, consistent with the dependencies) so
// that transfers overlap compute, with at most `budget` transfers in flight
// wherever the dependencies allow. Their rules, and why, are in
// docs/Scheduling.md; traced under -debug-only=ovl-schedule.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAPDIALECT_SCHEDULING_LISTSCHEDULERS_H
#define OVERLAPDIALECT_SCHEDULING_LISTSCHEDULERS_H

#include "llvm/ADT/SmallVector.h"

namespace mlir {
namespace ovl {
namespace sched {
struct ScheduleGraph;

/// The bottom-up list scheduler of the paper's algorithm 2. Runs from the
/// terminator upwards on a clock of estimated time since the block's end.
/// An op becomes a candidate when all its successors are placed. A done
/// opens its transfer (LinkFlows, played backwards: transfers over shared
/// links slow each other down); its start is pending until enough has been
/// placed below it to cover the transfer, then ready. Among the ready
/// candidates that keep the in-flight count within the budget it takes, in
/// order: a done (which places it right before its first user), a start
/// whose transfer is covered (so a start goes no earlier than its transfer
/// needs: buffers live no longer than necessary), then compute; ties go to
/// the op that came last in the input, which keeps the input order where
/// nothing else decides. With no ready candidate it takes the pending one
/// ready first and lets the clock jump there (a stall).
///
/// With `tradeCover`, two rules keep the cover where it is worth most
/// (CoverAccount):
/// - each transfer keeps compute between its start and its done when some
///   is available: once a pending start's transfer hides some compute, the
///   start goes (stalling on what is left of it) rather than take an op
///   that would cut more from the exposed time of a transfer above than
///   from its own (worthElsewhere). Without it the transfer placed first
///   (the last of the block) takes all the compute that could hide it, and
///   the one before it, whose only cover that was, runs exposed: in an
///   unrolled collective matmul, the second permute's done right after its
///   start;
/// - compute goes by what the transfers above would lose without it, the
///   least first (what follows their dones, then what they could do
///   without), so that what may hide them stays for them; it generalizes
///   the users of a done going first, so that the done can go as late as
///   possible.
/// A done that would exceed the budget waits; the next candidate goes
/// instead.
///
/// With `keepInputsShort`, a done nothing in the block waits for does not go
/// first, at the end of the block, where its start and the op computing the
/// start's input would follow it, keeping that input and its operands live
/// to the end (the done keeps its start's input): it waits until the
/// compute left after that input in the input order would no longer hide
/// its transfer, or until the op computing the input would be taken now
/// were the start placed (one such op at a time), so the start goes right
/// after its input.
llvm::SmallVector<unsigned> scheduleBottomUp(const ScheduleGraph &graph,
                                             int budget, bool tradeCover,
                                             bool keepInputsShort = false);

/// The top-down list scheduler. Runs forwards on a clock of estimated time
/// since the block's start, over the candidates whose predecessors are
/// placed, the transfers played by LinkFlows. It takes, in order:
/// 1. a start that fits the budget (as early as its operands allow, bounded
///    by the budget), the one with the longest chain of compute and
///    transfers after it first, unless it would stream over links a
///    transfer in flight streams over (then step 5);
/// 2. a done whose transfer has arrived when that lets a start go (its data
///    is what the start sends, or its slot is what the start waits for):
///    this rebalances the work between the transfers by cost, the work up
///    to the arrival covering the first and the rest the next, rather than
///    all of it piling up behind the first;
/// 3. an op that is neither, those feeding a start first, then in input
///    order; but if the transfer that would let a start go arrives while
///    that op would run, and the wait is shorter than what the op would
///    then hide of the start's transfer beyond the rest of the compute
///    that may hide it, that done instead: the op hides the next transfer;
/// 4. only when nothing else can go, the done whose transfer arrives first
///    (a done goes as late as its users allow);
/// 5. a start left for its links: the transfer in flight arrives sooner
///    alone, and the two take as long together as one after the other.
/// An op that needs nothing and costs nothing (a destination's allocation)
/// is no candidate: it goes right before the first of its users chosen.
///
/// With `keepInputsShort`, before all of these, a done whose transfer has
/// arrived and whose start sends a value computed in the block goes at
/// once (it costs no wait): by rule 4 alone a done nothing waits for (a
/// training step's weight gradient) would go at the end of the block,
/// keeping its start's input live to the end. And a start that sends
/// nothing the block computes (a weight's gather, a prefetch) waits while
/// the transfers in flight and those landed but not yet used by all their
/// users hold kHeldMemoryShare of the memory budget, unless it would be
/// the only one.
llvm::SmallVector<unsigned> scheduleTopDown(const ScheduleGraph &graph,
                                            int budget,
                                            bool keepInputsShort = false);

} // namespace sched
} // namespace ovl
} // namespace mlir

#endif // OVERLAPDIALECT_SCHEDULING_LISTSCHEDULERS_H
