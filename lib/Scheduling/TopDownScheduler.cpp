//===- TopDownScheduler.cpp - Starts early, dones late --------------------===//
//
// See scheduleTopDown in ListSchedulers.h and docs/Scheduling.md.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/Scheduling/CoverAccount.h"
#include "OverlapDialect/Scheduling/LinkFlows.h"
#include "OverlapDialect/Scheduling/ListSchedulers.h"

#include "Trace.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Debug.h"

#include <algorithm>
#include <cassert>
#include <optional>
#include <utility>

#define DEBUG_TYPE "ovl-schedule"

using namespace mlir::ovl::sched;

/// Whether the transfers of starts `a` and `b` cross a common link.
static bool shareLinks(const ScheduleGraph &graph, unsigned a, unsigned b) {
  for (const TransferGroup &groupA : graph.nodes[a].groups)
    for (const TransferGroup &groupB : graph.nodes[b].groups)
      for (auto [linkClass, count] : groupA.linkLoads)
        for (auto [other, otherCount] : groupB.linkLoads)
          if (linkClass == other)
            return true;
  return false;
}

llvm::SmallVector<unsigned>
mlir::ovl::sched::scheduleTopDown(const ScheduleGraph &graph, int budget,
                                  bool keepInputsShort) {
  unsigned n = graph.nodes.size();
  llvm::SmallVector<unsigned> remaining(n);
  llvm::SmallVector<bool> placed(n, false);
  LinkFlows flows(graph, /*backwards=*/false);
  // Whether the transfers op i waits for have arrived by the clock, and
  // when they will.
  auto arrived = [&](unsigned i) {
    return llvm::all_of(graph.nodes[i].asyncPreds,
                        [&](unsigned j) { return flows.hasEnded(j); });
  };
  auto arrival = [&](unsigned i) {
    double at = 0;
    for (unsigned j : graph.nodes[i].asyncPreds)
      at = std::max(at, flows.predictEnd(j));
    return at;
  };
  int inFlight = graph.entryInFlight;
  double bytes = 0;
  // With keepInputsShort, the buffers of the transfers whose done is placed
  // but not all of its users (a weight gathered ahead of its layer).
  double landed = 0;
  llvm::SmallVector<unsigned> usersLeft(n, 0);
  double clock = 0;
  llvm::SmallVector<unsigned> order;
  // An op that needs nothing and costs nothing: a transfer's destination
  // allocation, an empty tensor, a constant.
  auto isFreeSource = [&](unsigned i) {
    const Node &node = graph.nodes[i];
    return node.kind == NodeKind::Compute && node.preds.empty() &&
           !node.succs.empty() && node.cost == 0 && node.slots == 0;
  };
  // Free sources are no candidates: each goes right before the first of
  // its users chosen. As candidates, rule 3 (what feeds a start first)
  // would allocate every destination of the block at its top, each held
  // until its transfer's done.
  llvm::SmallVector<unsigned> candidates;
  for (unsigned i = 0; i < n; ++i) {
    remaining[i] = llvm::count_if(graph.nodes[i].preds,
                                  [&](unsigned p) { return !isFreeSource(p); });
    if (remaining[i] == 0 && !isFreeSource(i))
      candidates.push_back(i);
  }
  // A start that sends what the block did not compute (a weight): its
  // transfer can go long before its users need it.
  auto prefetches = [&](unsigned i) {
    return llvm::all_of(graph.nodes[i].preds, isFreeSource);
  };
  // Within the in-flight budget and, for a start, the memory budget. With
  // keepInputsShort, a prefetch also waits while the transfers in flight
  // and what landed hold the transfers' share of the budget (unless it
  // would be the only one).
  auto fits = [&](unsigned i) {
    if (graph.during(i, inFlight) > budget)
      return false;
    if (graph.nodes[i].kind != NodeKind::Start)
      return true;
    double after = graph.bytesAfter(i, bytes);
    return after <= graph.memoryBudget &&
           (!keepInputsShort || !prefetches(i) || bytes + landed == 0 ||
            after + landed <= graph.memoryBudget * kHeldMemoryShare);
  };
  auto landedBytes = [&](unsigned d) {
    double total = 0;
    for (unsigned s : graph.nodes[d].asyncPreds)
      total += graph.nodes[s].bytes;
    return total;
  };
  auto isStart = [&](unsigned i) {
    return graph.nodes[i].kind == NodeKind::Start;
  };
  auto isDone = [&](unsigned i) {
    return graph.nodes[i].kind == NodeKind::Done;
  };
  // A done whose start sends a value computed in the block: until the done,
  // that value stays live (the done keeps its start's input).
  auto holdsInput = [&](unsigned i) {
    return !llvm::all_of(graph.nodes[i].asyncPreds, prefetches);
  };
  // A start whose done is not in the block (its token leaves through the
  // terminator: the next iteration's transfer) holds its slot to the end of
  // the block; it goes only when the slots that the ops still to place
  // need remain free besides it, or it would force them over the budget.
  llvm::SmallVector<bool> escapes(n, false);
  for (unsigned i = 0; i < n; ++i)
    escapes[i] =
        isStart(i) && llvm::none_of(graph.nodes[i].succs, [&](unsigned s) {
          return llvm::is_contained(graph.nodes[s].asyncPreds, i);
        });
  auto startFits = [&](unsigned i) {
    if (!fits(i))
      return false;
    if (!escapes[i])
      return true;
    int needed = 0;
    for (unsigned k = 0; k < n; ++k) {
      const Node &other = graph.nodes[k];
      if (placed[k] || k == i || other.kind == NodeKind::Done)
        continue;
      needed = std::max(needed, other.kind == NodeKind::Start
                                    ? 1
                                    : other.slots - other.consumes);
    }
    return graph.during(i, inFlight) + needed <= budget;
  };
  // The starts that placing done `d` lets go: all that each still waits for
  // is `d` and ops that wait only for `d`.
  auto unblockedStarts = [&](unsigned d) {
    auto waitsOnlyFor = [&](unsigned s, unsigned depth, auto &self) -> bool {
      for (unsigned p : graph.nodes[s].preds) {
        if (placed[p] || p == d || isFreeSource(p))
          continue;
        if (depth == 0 || isStart(p) || isDone(p) || !self(p, depth - 1, self))
          return false;
      }
      return true;
    };
    llvm::SmallSetVector<unsigned, 2> starts;
    for (unsigned s : graph.nodes[d].succs)
      if (isStart(s) && waitsOnlyFor(s, 2, waitsOnlyFor))
        starts.insert(s);
    for (unsigned s : graph.nodes[d].succs)
      for (unsigned t : graph.nodes[s].succs)
        if (isStart(t) && !placed[s] && waitsOnlyFor(t, 2, waitsOnlyFor))
          starts.insert(t);
    return starts.takeVector();
  };
  // Whether placing done `d` lets a start go: a start (or a loop of
  // transfers) waits for a slot, or for `d`.
  bool slotWaiting = false;
  auto unblocksStart = [&](unsigned d) {
    return slotWaiting || !unblockedStarts(d).empty();
  };
  CoverAccount cover(graph);

  // The longest chain of compute and transfers from each op to the block's
  // end: of two starts, the one more waits for goes first.
  llvm::SmallVector<double> unblocks(n, 0);
  for (unsigned i = n; i-- > 0;) {
    double tail = 0;
    for (unsigned s : graph.nodes[i].succs)
      tail = std::max(
          tail, unblocks[s] + (llvm::is_contained(graph.nodes[s].asyncPreds, i)
                                   ? graph.nodes[i].latency
                                   : 0.0));
    unblocks[i] = graph.nodes[i].cost + tail;
  }
  // Whether start i would slow down a transfer in flight: it shares links
  // with it and streams longer than its setup, the most overlapping the two
  // would gain.
  llvm::SmallVector<unsigned> started;
  auto sharesLinks = [&](unsigned i) {
    const Node &node = graph.nodes[i];
    if (llvm::all_of(node.groups, [&](const TransferGroup &group) {
          return node.stream * group.share <= group.setup;
        }))
      return false;
    return llvm::any_of(started, [&](unsigned j) {
      return !flows.hasEnded(j) && shareLinks(graph, i, j);
    });
  };
  auto takeStart = [&](std::optional<unsigned> &best, bool sharing) {
    for (unsigned i : candidates)
      if (isStart(i) && startFits(i) && sharesLinks(i) == sharing &&
          (!best || std::make_pair(-unblocks[i], i) <
                        std::make_pair(-unblocks[*best], *best)))
        best = i;
  };

  // Places op i: the clock, the transfers, the budgets, its successors.
  auto place = [&](unsigned chosen) {
    const Node &node = graph.nodes[chosen];
    placed[chosen] = true;
    order.push_back(chosen);
    double before = clock;
    for (unsigned j : node.asyncPreds)
      clock = std::max(clock, flows.end(j));
    LLVM_DEBUG({
      if (clock > before)
        llvm::dbgs() << "; stalls " << clock - before << " s";
      llvm::dbgs() << "; at " << clock << " s\n";
    });
    if (node.kind == NodeKind::Start) {
      flows.open(chosen, clock);
      started.push_back(chosen);
    }
    cover.place(chosen);
    clock += node.cost;
    flows.advanceTo(clock);
    inFlight = graph.after(chosen, inFlight);
    bytes = graph.bytesAfter(chosen, bytes);
    if (keepInputsShort) {
      for (unsigned p : node.preds)
        if (usersLeft[p] > 0 && --usersLeft[p] == 0)
          landed -= landedBytes(p);
      if (node.kind == NodeKind::Done && !node.succs.empty()) {
        usersLeft[chosen] = node.succs.size();
        landed += landedBytes(chosen);
      }
    }
    if (!isFreeSource(chosen))
      for (unsigned s : node.succs)
        if (--remaining[s] == 0)
          candidates.push_back(s);
  };

  LLVM_DEBUG(llvm::dbgs() << "[ovl-schedule] top-down, budget " << budget
                          << "\n");
  while (!candidates.empty()) {
    std::optional<unsigned> best;
    // Why `best` was taken, for the trace.
    const char *why = "a start within the budget, the longest chain first";
    auto takeFirst = [&](auto &&accept) {
      for (unsigned i : candidates)
        if (accept(i) && (!best || i < *best))
          best = i;
    };
    if (keepInputsShort) {
      takeFirst(
          [&](unsigned i) { return isDone(i) && arrived(i) && holdsInput(i); });
      why = "a done whose transfer arrived, which frees its start's input";
    }
    if (!best)
      takeStart(best, /*sharing=*/false);
    slotWaiting = llvm::any_of(candidates, [&](unsigned i) {
      return (isStart(i) || (graph.nodes[i].kind == NodeKind::Compute &&
                             graph.nodes[i].slots > 0)) &&
             !fits(i);
    });
    if (!best) {
      takeFirst([&](unsigned i) {
        return isDone(i) && arrived(i) && unblocksStart(i);
      });
      why = "a done whose transfer arrived, which lets a start go";
    }
    if (!best) {
      for (unsigned i : candidates) {
        if (isStart(i) || isDone(i) || !fits(i))
          continue;
        auto key = [&](unsigned k) {
          return std::make_pair(!graph.nodes[k].feedsStart, k);
        };
        if (!best || key(i) < key(*best))
          best = i;
      }
      why = best && graph.nodes[*best].feedsStart
                ? "neither start nor done, feeds a start"
                : "neither start nor done, in input order";
      // Rather than run op c while the transfer that would let starts go
      // arrives, wait for it when the wait is shorter than what c would
      // then hide of their transfers (as long as they take together)
      // beyond the rest of the compute that may hide them: c then hides
      // the next transfers.
      auto worthWaiting = [&](unsigned d, unsigned c) {
        llvm::SmallVector<unsigned> starts = unblockedStarts(d);
        LinkFlows together(graph, /*backwards=*/false);
        double needs = 0;
        std::optional<double> rest;
        for (unsigned s : starts) {
          together.open(s, 0);
          if (std::optional<double> besides = cover.availableBesides(s, c))
            rest = std::min(rest.value_or(*besides), *besides);
        }
        for (unsigned s : starts)
          needs = std::max(needs, together.end(s));
        return rest &&
               arrival(d) - clock < std::min(graph.nodes[c].cost, needs) -
                                        std::min(*rest, needs);
      };
      std::optional<unsigned> wait;
      if (best)
        for (unsigned d : candidates)
          if (isDone(d) && (!wait || d < *wait) && worthWaiting(d, *best))
            wait = d;
      if (wait) {
        LLVM_DEBUG(llvm::dbgs()
                   << "[ovl-schedule]   waits " << arrival(*wait) - clock
                   << " s for " << NodeName{graph, *wait} << " rather than run "
                   << NodeName{graph, *best}
                   << ", which then hides the next transfers\n");
        best = wait;
        why = "a done worth waiting for: lets a start go";
      }
    }
    if (!best) {
      double first = 0;
      for (unsigned i : candidates) {
        if (!isDone(i))
          continue;
        double at = arrival(i);
        if (!best || at < first || (at == first && i < *best)) {
          best = i;
          first = at;
        }
      }
      why = "the done arriving first: nothing else can go";
    }
    if (!best) {
      takeStart(best, /*sharing=*/true);
      why = "a start left for the links of a transfer in flight";
    }
    if (!best) {
      for (unsigned i : candidates) {
        auto key = [&](unsigned k) {
          return std::make_pair(graph.during(k, inFlight), k);
        };
        if (!best || key(i) < key(*best))
          best = i;
      }
      why = "over the budget, the least: nothing fits";
    }
    unsigned chosen = *best;
    llvm::erase(candidates, chosen);
    for (unsigned p : graph.nodes[chosen].preds)
      if (!placed[p]) {
        LLVM_DEBUG(llvm::dbgs() << "[ovl-schedule]   " << NodeName{graph, p}
                                << ": needs nothing, before its first user");
        place(p);
      }
    LLVM_DEBUG({
      llvm::dbgs() << "[ovl-schedule]   " << NodeName{graph, chosen} << ": "
                   << why;
      if (isStart(chosen))
        llvm::dbgs() << ", chain " << unblocks[chosen] << " s";
      for (unsigned i : candidates)
        if (i != chosen && isStart(i) && !startFits(i))
          llvm::dbgs() << "; " << NodeName{graph, i} << " waits for the budget";
    });
    place(chosen);
  }
  assert(order.size() == n && "the graph is acyclic");
  return order;
}
