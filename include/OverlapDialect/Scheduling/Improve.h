//===- Improve.h - Moving starts and dones where the block gains -*- C++ -*-=//
//
// The list schedulers decide by local rules; some trade-offs only a replay
// of the whole block settles: whether two transfers that share links should
// overlap one einsum (together they take as long as one after the other, so
// the einsum hides part of both) or follow each other (so that the einsum
// their data feeds can hide the second). `improve` settles them by single
// moves, each judged on the whole block.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAPDIALECT_SCHEDULING_IMPROVE_H
#define OVERLAPDIALECT_SCHEDULING_IMPROVE_H

#include "llvm/ADT/SmallVector.h"

namespace mlir {
namespace ovl {
namespace sched {
class BlockSimulation;
struct BlockOutcome;
struct ScheduleGraph;

/// Moves the starts and dones of `order`, one at a time, to where the
/// judge (the simulation when given, else the replay) finds the block
/// faster: each in turn to the best position within `budget`, in passes
/// until no move gains kImproveGain of the block's time. A start moved up
/// takes along the ops it needs that it passes (they go right before it,
/// in their order), a done moved down the ops that need it; so a start can
/// go above the einsum that computes what it sends. Spends at most
/// `replays` judgements on the block; a trial order that repeats the order
/// or another trial of the same op's sweep counts as one without being
/// judged again (it cannot win); none is judged once the block's time is
/// within kImproveGain of its compute alone, a bound no order beats.
/// `outcome` is the judgement of `order`, updated.
void improve(const ScheduleGraph &graph, llvm::SmallVectorImpl<unsigned> &order,
             BlockOutcome &outcome, int budget,
             const BlockSimulation *simulation, unsigned replays);

/// The judgements improve spends on one block by default (each replays the
/// whole block): a few passes over the blocks `ovl-schedule` usually sees
/// (loop bodies of a few transfers), part of one on the largest.
constexpr unsigned kImproveReplays = 4096;
/// The judgements the gate's pricing spends on a block the event simulator
/// judges move by move (small blocks: every judgement plays every device):
/// the gate schedules every window of every form it prices, where the
/// final schedule is made once. 4096 there made a tiny GPT training step's
/// pricing take 108 s of compile time instead of 17 s; large windows,
/// judged by the replay, keep kImproveReplays (512 there made the gate
/// choose a GPT-512B training step 9% slower).
constexpr unsigned kPricingSimulatedImproveReplays = 512;
/// The least gain, relative to the block's time, for which improve moves an
/// op: smaller gains are within the cost model's error and not worth a
/// change of order (buffers' lifetimes, the order a reader expects).
constexpr double kImproveGain = 1e-2;

} // namespace sched
} // namespace ovl
} // namespace mlir

#endif // OVERLAPDIALECT_SCHEDULING_IMPROVE_H
