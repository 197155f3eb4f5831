//===- Improve.cpp - Moving starts and dones where the block gains --------===//

#include "OverlapDialect/Scheduling/Improve.h"

#include "OverlapDialect/Scheduling/BlockSimulation.h"
#include "OverlapDialect/Scheduling/Replay.h"
#include "OverlapDialect/Scheduling/ScheduleGraph.h"

#include "Trace.h"

#include "llvm/ADT/Hashing.h"
#include "llvm/Support/Debug.h"

#include <algorithm>
#include <optional>
#include <unordered_map>

#define DEBUG_TYPE "ovl-schedule"

using namespace mlir::ovl::sched;

void mlir::ovl::sched::improve(const ScheduleGraph &graph,
                               llvm::SmallVectorImpl<unsigned> &order,
                               BlockOutcome &outcome, int budget,
                               const BlockSimulation *simulation,
                               unsigned replays) {
  unsigned n = order.size();
  unsigned judged = 0;
  // Moves settled by their lower bound, replayed, and played by the
  // simulator.
  unsigned bounded = 0, replayed = 0, played = 0;
  llvm::SmallVector<unsigned> trial, earlier, moved, stayed;
  // Into `out`, `order` with the op at `from` moved to position `at`, what
  // it passes and depends on (or that depends on it), `along`, moved along.
  auto moveTo = [&](unsigned from, unsigned at, const llvm::BitVector &along,
                    llvm::SmallVectorImpl<unsigned> &out) {
    unsigned x = order[from];
    unsigned lo = std::min(from, at), hi = std::max(from, at);
    moved.clear();
    stayed.clear();
    for (unsigned i = lo; i <= hi; ++i)
      if (i != from)
        (along.test(order[i]) ? moved : stayed).push_back(order[i]);
    out.assign(order.begin(), order.begin() + lo);
    if (at < from) {
      llvm::append_range(out, moved);
      out.push_back(x);
      llvm::append_range(out, stayed);
    } else {
      llvm::append_range(out, stayed);
      out.push_back(x);
      llvm::append_range(out, moved);
    }
    out.append(order.begin() + hi + 1, order.end());
  };
  // A move may not make the transfers hold more from their inputs than
  // their share of the memory, or than they already do.
  double heldLimit = std::max(graph.memoryBudget * kHeldMemoryShare,
                              graph.heldBytesPeak(order));
  // No order runs faster than its compute end to end: the replay adds
  // every node's cost, the simulation runs each device's compute steps one
  // after the other. Once the block is within kImproveGain of that, no
  // move can gain it, and judging the moves would change nothing.
  double computeBound = 0;
  for (const Node &node : graph.nodes)
    if (node.kind == NodeKind::Compute)
      computeBound += node.cost;
  auto cannotGain = [&] {
    // The margin covers the rounding of the same sum in another order.
    return outcome.makespan * (1 - kImproveGain) <=
           computeBound * (1 - kSameTime);
  };
  for (bool changed = true; changed && judged < replays && !cannotGain();) {
    changed = false;
    for (unsigned x = 0; x < n && judged < replays && !cannotGain(); ++x) {
      if (graph.nodes[x].kind == NodeKind::Compute)
        continue;
      unsigned from = llvm::find(order, x) - order.begin();
      // The ops x depends on, or that depend on it, directly or not; x
      // itself is in both, and moveTo never moves it along.
      llvm::BitVector before = graph.closure(x, /*up=*/true);
      llvm::BitVector after = graph.closure(x, /*up=*/false);
      std::optional<unsigned> bestAt;
      BlockOutcome best = outcome;
      // Positions whose ops all move along give the same trial: judged
      // again, it could beat neither `best` nor `outcome` (for the order
      // itself) a second time. Such a trial still counts against the
      // replays, so that the moves made are those of judging every one.
      // The positions tried, by their trial's hash (rebuilt to compare,
      // rather than kept: a large block's trials would take n^2 words).
      std::unordered_multimap<size_t, unsigned> triedAt;
      auto isRepeat = [&](unsigned at) {
        if (llvm::equal(trial, order))
          return true;
        size_t hash = llvm::hash_combine_range(trial.begin(), trial.end());
        auto [first, last] = triedAt.equal_range(hash);
        for (auto it = first; it != last; ++it) {
          moveTo(from, it->second, it->second < from ? before : after, earlier);
          if (llvm::equal(earlier, trial))
            return true;
        }
        triedAt.emplace(hash, at);
        return false;
      };
      for (unsigned at = 0; at < n && judged < replays; ++at) {
        // Next to an op that takes no time is where the op beyond it is.
        const Node &passed = graph.nodes[order[at]];
        if (at == from ||
            (passed.kind == NodeKind::Compute && passed.cost == 0))
          continue;
        moveTo(from, at, at < from ? before : after, trial);
        ++judged;
        if (isRepeat(at))
          continue;
        // The replay's marks refuse a move however fast it plays.
        BlockOutcome judgement = replayBound(graph, trial, budget);
        if ((judgement.overBudgetAt && !outcome.overBudgetAt) ||
            (judgement.overMemoryAt && !outcome.overMemoryAt) ||
            graph.heldBytesPeak(trial) > heldLimit)
          continue;
        // A move is played only if it could be taken: its time (the
        // simulator's, or the replay's where there is no simulator or it
        // refuses the move) is at least its lower bound.
        double needed =
            std::min(best.makespan, outcome.makespan * (1 - kImproveGain));
        auto settles = [&](double bound) {
          return bound * (1 - kBoundMargin) >= needed;
        };
        bool simulatedCannot =
            simulation && settles(simulation->lowerBound(trial));
        if ((!simulation || simulatedCannot) && settles(judgement.makespan)) {
          ++bounded;
          continue;
        }
        ++replayed;
        judgement = replay(graph, trial, budget);
        if (simulation) {
          if (simulatedCannot && judgement.makespan >= needed) {
            ++bounded;
            continue;
          }
          ++played;
          if (std::optional<double> simulated = simulation->stepTime(trial))
            judgement.makespan = *simulated;
        }
        if (judgement.makespan < best.makespan &&
            judgement.makespan < outcome.makespan * (1 - kImproveGain)) {
          best = judgement;
          bestAt = at;
        }
      }
      if (!bestAt)
        continue;
      LLVM_DEBUG(llvm::dbgs()
                 << "[ovl-schedule] improve: " << NodeName{graph, x}
                 << " from position " << from << " to " << *bestAt << ", "
                 << outcome.makespan << " s -> " << best.makespan << " s\n");
      moveTo(from, *bestAt, *bestAt < from ? before : after, trial);
      order.assign(trial.begin(), trial.end());
      outcome = best;
      changed = true;
    }
  }
  LLVM_DEBUG(llvm::dbgs() << "[ovl-schedule] improve: " << bounded
                          << " moves settled by their lower bound, " << replayed
                          << " replayed, " << played
                          << " played by the simulator\n");
  LLVM_DEBUG(if (cannotGain()) llvm::dbgs()
             << "[ovl-schedule] improve: within the gain of the block's "
                "compute, "
             << outcome.makespan << " s\n");
  LLVM_DEBUG(if (judged >= replays) llvm::dbgs()
             << "[ovl-schedule] improve: stopped after " << judged
             << " judgements\n");
}
