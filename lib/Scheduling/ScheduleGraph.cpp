//===- ScheduleGraph.cpp - The dependency graph of one block --------------===//

#include "OverlapDialect/Scheduling/ScheduleGraph.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/ErrorHandling.h"

#include <algorithm>
#include <cassert>

using namespace mlir::ovl::sched;

const char *mlir::ovl::sched::stringifyNodeKind(NodeKind kind) {
  switch (kind) {
  case NodeKind::Compute:
    return "compute";
  case NodeKind::Start:
    return "start";
  case NodeKind::Done:
    return "done";
  }
  llvm_unreachable("unknown node kind");
}

void ScheduleGraph::addEdge(unsigned from, unsigned to) {
  assert(from < to && to < nodes.size() && "edges follow the input order");
  nodes[to].preds.push_back(from);
}

void ScheduleGraph::addAsyncEdge(unsigned from, unsigned to) {
  assert(nodes[from].kind == NodeKind::Start && "a token comes from a start");
  addEdge(from, to);
  nodes[to].asyncPreds.push_back(from);
}

void ScheduleGraph::finalize() {
  auto sortUnique = [](auto &list) {
    llvm::sort(list);
    list.erase(llvm::unique(list), list.end());
  };
  for (auto [i, node] : llvm::enumerate(nodes)) {
    sortUnique(node.preds);
    sortUnique(node.asyncPreds);
    for (unsigned j : node.preds)
      nodes[j].succs.push_back(i);
  }
  // What must follow a done, transitively (edges go forwards).
  for (Node &node : nodes)
    if (node.kind == NodeKind::Done || node.usesDone)
      for (unsigned j : node.succs)
        if (nodes[j].kind != NodeKind::Done)
          nodes[j].usesDone = true;
  // Predecessors of starts, transitively.
  for (Node &node : llvm::reverse(nodes))
    if (node.kind == NodeKind::Start || node.feedsStart)
      for (unsigned j : node.preds)
        nodes[j].feedsStart = true;
}

double ScheduleGraph::heldBytesPeak(llvm::ArrayRef<unsigned> order,
                                    bool toLastUser) const {
  llvm::SmallVector<unsigned> position(nodes.size());
  for (auto [at, node] : llvm::enumerate(order))
    position[node] = at;
  // Bytes taken at each position and given back after it.
  llvm::SmallVector<double> change(order.size() + 1, 0);
  for (auto [i, node] : llvm::enumerate(nodes))
    for (unsigned s : node.asyncPreds) {
      const Node &start = nodes[s];
      unsigned from = position[s];
      if (!start.preds.empty()) {
        from = 0;
        for (unsigned p : start.preds)
          from = std::max(from, position[p]);
      }
      unsigned to = position[i];
      if (toLastUser)
        for (unsigned user : node.succs)
          to = std::max(to, position[user]);
      change[from] += start.bytes;
      change[to + 1] -= start.bytes;
    }
  double held = 0, peak = 0;
  for (double bytes : change)
    peak = std::max(peak, held += bytes);
  return peak;
}

llvm::BitVector ScheduleGraph::closure(llvm::ArrayRef<unsigned> seeds,
                                       bool up) const {
  llvm::BitVector seen(nodes.size());
  llvm::SmallVector<unsigned> work(seeds.begin(), seeds.end());
  while (!work.empty()) {
    unsigned i = work.pop_back_val();
    if (seen.test(i))
      continue;
    seen.set(i);
    llvm::append_range(work, up ? nodes[i].preds : nodes[i].succs);
  }
  return seen;
}
