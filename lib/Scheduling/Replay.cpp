//===- Replay.cpp - What an order of a block costs ------------------------===//

#include "OverlapDialect/Scheduling/Replay.h"

#include "OverlapDialect/Scheduling/BlockSimulation.h"
#include "OverlapDialect/Scheduling/LinkFlows.h"

#include "llvm/ADT/SmallVector.h"

#include <algorithm>

using namespace mlir::ovl::sched;

namespace {
/// The budget and memory marks of an order, node by node: what does not
/// depend on time.
class Marks {
public:
  Marks(const ScheduleGraph &graph, int budget, BlockOutcome &outcome)
      : graph(graph), budget(budget), outcome(outcome),
        inFlight(graph.entryInFlight) {
    outcome.peak = inFlight;
  }

  void visit(unsigned i) {
    const Node &node = graph.nodes[i];
    int during = graph.during(i, inFlight);
    if (during > budget && during > node.slots && !outcome.overBudgetAt) {
      outcome.overBudgetAt = i;
      outcome.overBudgetCount = during;
    }
    outcome.peak = std::max(outcome.peak, during);
    inFlight = graph.after(i, inFlight);
    bytes = graph.bytesAfter(i, bytes);
    outcome.peakBytes = std::max(outcome.peakBytes, bytes);
    if (bytes > graph.memoryBudget && !outcome.overMemoryAt) {
      outcome.overMemoryAt = i;
      outcome.overMemoryBytes = bytes;
    }
  }

  void finish() { outcome.peak = std::max(outcome.peak, inFlight); }

private:
  const ScheduleGraph &graph;
  int budget;
  BlockOutcome &outcome;
  int inFlight;
  double bytes = 0;
};
} // namespace

BlockOutcome mlir::ovl::sched::replay(const ScheduleGraph &graph,
                                      llvm::ArrayRef<unsigned> order,
                                      int budget) {
  LinkFlows flows(graph, /*backwards=*/false);
  BlockOutcome outcome;
  Marks marks(graph, budget, outcome);
  double clock = 0;
  // When the first op waiting for a transfer from outside the block begins.
  std::optional<double> firstWait;
  for (unsigned i : order) {
    const Node &node = graph.nodes[i];
    for (unsigned j : node.asyncPreds)
      clock = std::max(clock, flows.end(j));
    if (node.waitsOnEntry && !firstWait)
      firstWait = clock;
    if (node.kind == NodeKind::Start)
      flows.open(i, clock);
    clock += node.cost;
    marks.visit(i);
  }
  marks.finish();
  // A transfer passed on to the next run of the block (a loop's next
  // iteration), which waits for such transfers where this one did: what
  // is left of it then is exposed.
  double exposed = 0;
  if (firstWait)
    for (unsigned i : order)
      if (graph.nodes[i].leavesBlock)
        exposed = std::max(exposed, flows.end(i) - clock - *firstWait);
  outcome.makespan = clock + exposed;
  return outcome;
}

BlockOutcome mlir::ovl::sched::replayBound(const ScheduleGraph &graph,
                                           llvm::ArrayRef<unsigned> order,
                                           int budget) {
  BlockOutcome outcome;
  Marks marks(graph, budget, outcome);
  llvm::SmallVector<double> openedAt(graph.nodes.size(), 0);
  double clock = 0;
  for (unsigned i : order) {
    const Node &node = graph.nodes[i];
    // LinkFlows opens a transfer no earlier than the clock and ends it no
    // earlier than its time alone after that.
    for (unsigned j : node.asyncPreds)
      clock = std::max(clock, openedAt[j] + graph.nodes[j].latency);
    if (node.kind == NodeKind::Start)
      openedAt[i] = clock;
    clock += node.cost;
    marks.visit(i);
  }
  marks.finish();
  outcome.makespan = clock;
  return outcome;
}

BlockOutcome mlir::ovl::sched::judge(const ScheduleGraph &graph,
                                     llvm::ArrayRef<unsigned> order, int budget,
                                     const BlockSimulation *simulation) {
  BlockOutcome outcome = replay(graph, order, budget);
  if (simulation)
    if (std::optional<double> simulated = simulation->stepTime(order))
      outcome.makespan = *simulated;
  return outcome;
}

bool mlir::ovl::sched::isFaster(const BlockOutcome &candidate,
                                const BlockOutcome &current) {
  return candidate.makespan < current.makespan * (1 - kSameTime) &&
         (!candidate.overBudgetAt || current.overBudgetAt) &&
         (!candidate.overMemoryAt || current.overMemoryAt);
}
