//===- BottomUpScheduler.cpp - The paper's algorithm 2 --------------------===//
//
// See scheduleBottomUp in ListSchedulers.h and docs/Scheduling.md.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/Scheduling/CoverAccount.h"
#include "OverlapDialect/Scheduling/LinkFlows.h"
#include "OverlapDialect/Scheduling/ListSchedulers.h"

#include "Trace.h"

#include "llvm/Support/Debug.h"

#include <algorithm>
#include <cassert>
#include <optional>
#include <tuple>

#define DEBUG_TYPE "ovl-schedule"

using namespace mlir::ovl::sched;

llvm::SmallVector<unsigned>
mlir::ovl::sched::scheduleBottomUp(const ScheduleGraph &graph, int budget,
                                   bool tradeCover) {
  unsigned n = graph.nodes.size();
  llvm::SmallVector<unsigned> remaining(n);
  llvm::SmallVector<unsigned> candidates;
  for (unsigned i = 0; i < n; ++i) {
    remaining[i] = graph.nodes[i].succs.size();
    if (remaining[i] == 0)
      candidates.push_back(i);
  }
  LinkFlows flows(graph, /*backwards=*/true);
  CoverAccount cover(graph);
  // In flight below the point being filled: after it in program order.
  int inFlight = graph.exitInFlight;
  // Bytes the block's transfers open below that point hold.
  double bytes = 0;
  double clock = 0;
  // The compute placed so far, and how much of it was when each transfer
  // opened: what hides the transfer.
  double placedWork = 0;
  llvm::SmallVector<double> workAtOpen(n, 0);
  llvm::SmallVector<unsigned> reversed;
  // What each candidate's compute is worth to the transfers above (read for
  // the candidates only, so kept across steps).
  llvm::SmallVector<double> elsewhere(n, 0);
  auto isPending = [&](unsigned i) {
    return graph.nodes[i].kind == NodeKind::Start && flows.isOpen(i) &&
           !flows.hasEnded(i);
  };
  // Transfers in flight above op i (before it) and while it runs, the
  // larger of the two.
  auto overBudget = [&](unsigned i) {
    const Node &node = graph.nodes[i];
    int over = inFlight - node.produces + node.slots - budget;
    // A done opens (going up) the transfers it waits for: their buffers
    // must fit in the memory budget with those already open.
    double opened = bytes;
    for (unsigned start : node.asyncPreds)
      opened += graph.nodes[start].bytes;
    if (node.kind == NodeKind::Done && opened > graph.memoryBudget)
      over = std::max(over, 1);
    return over;
  };
  LLVM_DEBUG(llvm::dbgs() << "[ovl-schedule] bottom-up"
                          << (tradeCover ? "" : " without trading cover")
                          << ", budget " << budget << "\n");
  while (!candidates.empty()) {
    std::optional<unsigned> best;
    // Why `best` was taken, for the trace.
    const char *why = "ready";
    // Ready and within the budget: a done, a ready start, then compute by
    // what the transfers above would lose (the least first), then the users
    // of a done, then the later input op.
    for (unsigned i : candidates)
      elsewhere[i] = 0;
    auto key = [&](unsigned i) {
      const Node &node = graph.nodes[i];
      int tier = node.kind == NodeKind::Done    ? 2
                 : node.kind == NodeKind::Start ? 1
                                                : 0;
      return std::make_tuple(tier, -elsewhere[i],
                             node.kind == NodeKind::Compute && node.usesDone,
                             i);
    };
    for (unsigned i : candidates) {
      if (overBudget(i) > 0 || isPending(i))
        continue;
      if (tradeCover && graph.nodes[i].kind == NodeKind::Compute)
        elsewhere[i] = cover.worthElsewhere(i);
      if (!best || key(i) > key(*best))
        best = i;
    }
    // The pending starts within the budget, the one ready first first.
    llvm::SmallVector<std::pair<double, unsigned>> pending;
    for (unsigned i : candidates)
      if (isPending(i) && overBudget(i) <= 0)
        pending.push_back({flows.predictEnd(i), i});
    llvm::sort(pending, [](auto a, auto b) {
      return a.first < b.first || (a.first == b.first && a.second > b.second);
    });
    // The first rule above: a covered pending start yields the op.
    if (tradeCover && best && graph.nodes[*best].kind == NodeKind::Compute &&
        elsewhere[*best] > 0)
      for (auto [end, i] : pending)
        if (placedWork > workAtOpen[i]) {
          if (elsewhere[*best] >
              std::min(graph.nodes[*best].cost, end - clock)) {
            LLVM_DEBUG(llvm::dbgs()
                       << "[ovl-schedule]   " << NodeName{graph, *best}
                       << " would cut " << elsewhere[*best]
                       << " s from a transfer above, more than from the "
                          "covered pending "
                       << NodeName{graph, i} << "\n");
            best = i;
            why = "pending, covered: keeps the compute for the transfer above";
          }
          break;
        }
    if (!best && !pending.empty()) {
      best = pending.front().second;
      why = "pending, ready first: nothing ready";
    }
    // Nothing fits: the least excess, then ready first.
    if (!best) {
      for (unsigned i : candidates) {
        auto excess = [&](unsigned k) {
          const Node &node = graph.nodes[k];
          int kind = node.kind == NodeKind::Done    ? 3
                     : node.kind == NodeKind::Start ? 2
                                                    : node.usesDone;
          return std::make_tuple(-overBudget(k), !isPending(k), kind, k);
        };
        if (!best || excess(i) > excess(*best))
          best = i;
      }
      why = "over the budget, the least: nothing fits";
    }
    unsigned chosen = *best;
    const Node &node = graph.nodes[chosen];
    LLVM_DEBUG({
      llvm::dbgs() << "[ovl-schedule]   " << NodeName{graph, chosen} << ": "
                   << why;
      if (node.kind == NodeKind::Start && !isPending(chosen))
        llvm::dbgs() << (flows.isOpen(chosen) ? ", its transfer covered"
                                              : ", its done not in the block");
      if (node.kind == NodeKind::Compute && tradeCover)
        llvm::dbgs() << ", worth " << elsewhere[chosen]
                     << " s to the transfers above";
      for (unsigned i : candidates)
        if (i != chosen && overBudget(i) > 0)
          llvm::dbgs() << "; " << NodeName{graph, i} << " waits for the budget";
    });
    llvm::erase(candidates, chosen);
    reversed.push_back(chosen);
    double before = clock;
    if (isPending(chosen))
      clock = std::max(clock, flows.end(chosen));
    LLVM_DEBUG({
      if (clock > before)
        llvm::dbgs() << "; stalls " << clock - before << " s";
      llvm::dbgs() << "; ends " << clock << " s before the block ends\n";
    });
    clock += node.cost;
    flows.advanceTo(clock);
    if (node.kind == NodeKind::Compute)
      placedWork += node.cost;
    inFlight = inFlight - node.produces + node.consumes;
    for (unsigned start : node.asyncPreds)
      bytes += graph.nodes[start].bytes;
    if (node.kind == NodeKind::Start)
      bytes -= node.bytes;
    cover.place(chosen);
    for (unsigned j : node.asyncPreds) {
      flows.open(j, clock);
      workAtOpen[j] = placedWork;
    }
    for (unsigned j : node.preds)
      if (--remaining[j] == 0)
        candidates.push_back(j);
  }
  assert(reversed.size() == n && "the graph is acyclic");
  return llvm::SmallVector<unsigned>(llvm::reverse(reversed));
}
