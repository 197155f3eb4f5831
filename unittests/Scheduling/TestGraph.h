//===- TestGraph.h - Scheduling graphs written by hand ----------*- C++ -*-===//
//
// Graphs as the pass's adapter would build them, without IR: compute nodes
// with a cost, starts whose transfer takes a given time (alone, or
// streaming over one link class that other starts may share) and their
// dones, and the checks every order must pass.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAP_UNITTESTS_SCHEDULING_TESTGRAPH_H
#define OVERLAP_UNITTESTS_SCHEDULING_TESTGRAPH_H

#include "OverlapDialect/Scheduling/ScheduleGraph.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <optional>
#include <string>

namespace mlir {
namespace ovl {
namespace sched {
namespace test {

struct TestGraph {
  ScheduleGraph graph;

  unsigned add(NodeKind kind, llvm::ArrayRef<unsigned> preds) {
    unsigned i = graph.nodes.size();
    graph.nodes.emplace_back();
    graph.nodes[i].kind = kind;
    for (unsigned p : preds)
      graph.addEdge(p, i);
    return i;
  }
  unsigned compute(double cost, llvm::ArrayRef<unsigned> preds = {}) {
    unsigned i = add(NodeKind::Compute, preds);
    graph.nodes[i].cost = cost;
    return i;
  }
  /// A start whose transfer takes `seconds` alone: all setup, or, with
  /// `link`, all streaming over that link class (shared with the other
  /// starts on it).
  unsigned start(double seconds, std::optional<unsigned> link = std::nullopt,
                 llvm::ArrayRef<unsigned> preds = {}) {
    unsigned i = add(NodeKind::Start, preds);
    Node &node = graph.nodes[i];
    node.produces = node.slots = 1;
    node.latency = seconds;
    if (link) {
      node.stream = seconds;
      node.groups.push_back({0, 1, {{*link, 1}}});
      graph.numLinkClasses = std::max(graph.numLinkClasses, *link + 1);
    } else {
      node.groups.push_back({seconds, 1, {}});
    }
    return i;
  }
  unsigned done(unsigned start, llvm::ArrayRef<unsigned> preds = {}) {
    unsigned i = add(NodeKind::Done, preds);
    graph.nodes[i].consumes = graph.nodes[i].slots = 1;
    graph.addAsyncEdge(start, i);
    return i;
  }
  const ScheduleGraph &finish() {
    graph.finalize();
    return graph;
  }
};

/// Why `order` is not a topological order of `graph` (every node once, each
/// after its predecessors); empty when it is.
inline std::string whyNotTopological(const ScheduleGraph &graph,
                                     llvm::ArrayRef<unsigned> order) {
  if (order.size() != graph.nodes.size())
    return "not every node once";
  llvm::SmallVector<int> position(order.size(), -1);
  for (auto [at, node] : llvm::enumerate(order)) {
    if (node >= order.size() || position[node] >= 0)
      return "not every node once";
    position[node] = at;
  }
  for (auto [i, node] : llvm::enumerate(graph.nodes))
    for (unsigned p : node.preds)
      if (position[p] > position[i])
        return "node " + std::to_string(i) + " before its predecessor " +
               std::to_string(p);
  return "";
}

/// The most transfers in flight while any node of `order` runs.
inline int peakInFlight(const ScheduleGraph &graph,
                        llvm::ArrayRef<unsigned> order) {
  int inFlight = graph.entryInFlight, peak = inFlight;
  for (unsigned i : order) {
    peak = std::max(peak, graph.during(i, inFlight));
    inFlight = graph.after(i, inFlight);
  }
  return std::max(peak, inFlight);
}

/// Where each node is in `order`.
inline llvm::SmallVector<unsigned> positions(llvm::ArrayRef<unsigned> order) {
  llvm::SmallVector<unsigned> position(order.size());
  for (auto [at, node] : llvm::enumerate(order))
    position[node] = at;
  return position;
}

} // namespace test
} // namespace sched
} // namespace ovl
} // namespace mlir

#endif // OVERLAP_UNITTESTS_SCHEDULING_TESTGRAPH_H
