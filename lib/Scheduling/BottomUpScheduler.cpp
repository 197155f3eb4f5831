//===- BottomUpScheduler.cpp - The paper's algorithm 2 --------------------===//
//
// See scheduleBottomUp in ListSchedulers.h and docs/Scheduling.md.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/Scheduling/CoverAccount.h"
#include "OverlapDialect/Scheduling/LinkFlows.h"
#include "OverlapDialect/Scheduling/ListSchedulers.h"

#include "Trace.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Debug.h"

#include <algorithm>
#include <cassert>
#include <optional>
#include <tuple>
#include <utility>

#define DEBUG_TYPE "ovl-schedule"

using namespace mlir::ovl::sched;

namespace {

/// The cost of the compute not placed yet after each position of the
/// input (a Fenwick tree over the input positions).
class UnplacedCost {
public:
  explicit UnplacedCost(const ScheduleGraph &graph)
      : tree(graph.nodes.size() + 1, 0) {
    for (auto [i, node] : llvm::enumerate(graph.nodes))
      add(i, node.cost);
  }
  void place(unsigned i, double cost) { add(i, -cost); }
  /// The unplaced cost of the nodes after input position `i` (all of them
  /// when `i` is -1).
  double after(int i) const { return total - prefix(i + 1); }

private:
  llvm::SmallVector<double> tree;
  double total = 0;
  void add(unsigned i, double cost) {
    total += cost;
    for (unsigned k = i + 1; k < tree.size(); k += k & -k)
      tree[k] += cost;
  }
  /// The cost of input positions [0, n).
  double prefix(unsigned n) const {
    double sum = 0;
    for (unsigned k = n; k > 0; k -= k & -k)
      sum += tree[k];
    return sum;
  }
};

} // namespace

llvm::SmallVector<unsigned>
mlir::ovl::sched::scheduleBottomUp(const ScheduleGraph &graph, int budget,
                                   bool tradeCover, bool keepInputsShort) {
  unsigned n = graph.nodes.size();
  // With keepInputsShort, a done that nothing in the block waits for (what
  // it delivers goes to the terminator, or nowhere) is held. Taken first,
  // it would go at the end of the block, its start right above it and the
  // op computing the start's input above that (nothing else needs it); the
  // done keeps that input for the send, so the input, and that op's
  // operands, would stay live to the end of the block: on a training step,
  // every layer's weight-gradient partial sums (5.2 GiB a layer on 1024B)
  // and the activations they are computed from. Held, the done goes once
  // the op chosen next would leave less unplaced compute after its starts'
  // latest operand in the input order (which this order keeps where nothing
  // else decides) than its transfer takes alone, or when the op computing
  // that input would be taken now (see below): the start then goes right
  // after its input, hidden by the compute that follows it there. The held
  // dones, with that operand's input position (`heldAfter`, -1 for none in
  // the block) and their longest transfer (`heldCover`), sorted by that
  // position, the latest last.
  llvm::SmallVector<unsigned> held;
  llvm::BitVector isHeld(n);
  llvm::SmallVector<int> heldAfter(n, -1);
  llvm::SmallVector<double> heldCover(n, 0);
  llvm::SmallVector<unsigned> remaining(n);
  llvm::SmallVector<unsigned> candidates;
  for (unsigned i = 0; i < n; ++i) {
    const Node &node = graph.nodes[i];
    remaining[i] = node.succs.size();
    if (remaining[i] != 0)
      continue;
    bool holds = keepInputsShort && node.kind == NodeKind::Done &&
                 !node.asyncPreds.empty() &&
                 llvm::any_of(node.asyncPreds, [&](unsigned start) {
                   return graph.nodes[start].bytes > 0;
                 });
    if (!holds) {
      candidates.push_back(i);
      continue;
    }
    for (unsigned start : node.asyncPreds) {
      const Node &s = graph.nodes[start];
      if (!s.preds.empty())
        heldAfter[i] = std::max(heldAfter[i], static_cast<int>(s.preds.back()));
      heldCover[i] = std::max(heldCover[i], s.latency);
    }
    held.push_back(i);
    isHeld.set(i);
  }
  llvm::sort(held, [&](unsigned a, unsigned b) {
    return std::make_pair(heldAfter[a], a) < std::make_pair(heldAfter[b], b);
  });
  double longestCover = 0;
  for (unsigned i : held)
    longestCover = std::max(longestCover, heldCover[i]);
  UnplacedCost unplaced(graph);
  // The op computing the input of a done released because that op would go,
  // until it is placed.
  std::optional<unsigned> openInput;
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
  while (!candidates.empty() || !held.empty()) {
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
    // A held done goes, below the op chosen, once that op would leave less
    // compute after its starts' inputs than its transfer needs. The latest
    // inputs have the least compute after them: the search stops where
    // even the longest transfer would have enough left.
    // A held done also goes when the op computing its start's input (the
    // latest of the held) would be taken now were the start placed: the
    // best compute, or nothing else is ready. The order without holding
    // would place that op here, hiding a transfer above (on a training
    // step, the weight-gradient einsums hide the activation gradients'
    // reduce-scatters); the done goes right below it instead, its start
    // between them. One at a time, so that one such input at most is kept
    // past where the input order has it.
    if ((!best || graph.nodes[*best].kind == NodeKind::Compute) && !openInput)
      for (unsigned i : llvm::reverse(held)) {
        if (heldAfter[i] < 0 || overBudget(i) > 0)
          continue;
        unsigned input = heldAfter[i];
        // Its start is the input's only user left.
        if (remaining[input] != 1)
          continue;
        double worth = tradeCover ? cover.worthElsewhere(input) : 0;
        if (!best || std::make_tuple(0, -worth, graph.nodes[input].usesDone,
                                     input) > key(*best)) {
          LLVM_DEBUG(llvm::dbgs()
                     << "[ovl-schedule]   " << NodeName{graph, i}
                     << " released: its input's op, " << NodeName{graph, input}
                     << ", would go now\n");
          best = i;
          why = "held done: its input's op would go now";
          openInput = input;
        }
        break;
      }
    if (!best || graph.nodes[*best].kind == NodeKind::Compute) {
      double next = best ? graph.nodes[*best].cost : 0;
      for (unsigned i : llvm::reverse(held)) {
        double after = unplaced.after(heldAfter[i]);
        if (after - next >= longestCover)
          break;
        if (best && static_cast<int>(*best) > heldAfter[i])
          after -= next;
        if (after < heldCover[i] && overBudget(i) <= 0) {
          LLVM_DEBUG(llvm::dbgs()
                     << "[ovl-schedule]   " << NodeName{graph, i}
                     << " released: " << after
                     << " s of compute left after its input, less than its "
                        "transfer\n");
          best = i;
          why = "held done: its transfer needs the compute left after its "
                "input";
          break;
        }
      }
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
    // Nothing else within the budget: the held done with the least compute
    // left after its input.
    if (!best)
      for (unsigned i : llvm::reverse(held))
        if (overBudget(i) <= 0) {
          best = i;
          why = "held done: nothing else fits";
          break;
        }
    // Nothing fits: the least excess, then ready first.
    if (!best) {
      for (unsigned i : llvm::concat<unsigned>(candidates, held)) {
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
    if (isHeld.test(chosen))
      llvm::erase(held, chosen);
    else
      llvm::erase(candidates, chosen);
    reversed.push_back(chosen);
    unplaced.place(chosen, node.cost);
    if (openInput == chosen)
      openInput.reset();
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
