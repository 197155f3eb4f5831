//===- CoverAccount.cpp - The compute that may hide each transfer ---------===//

#include "OverlapDialect/Scheduling/CoverAccount.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>

using namespace mlir::ovl::sched;

CoverAccount::CoverAccount(const ScheduleGraph &graph) : graph(graph) {
  unsigned n = graph.nodes.size();
  for (unsigned s = 0; s < n; ++s) {
    if (graph.nodes[s].kind != NodeKind::Start)
      continue;
    llvm::SmallVector<unsigned> consumers;
    for (unsigned c : graph.nodes[s].succs)
      if (llvm::is_contained(graph.nodes[c].asyncPreds, s))
        consumers.push_back(c);
    // Tokens that leave the block: the transfer has no window here.
    if (consumers.empty())
      continue;
    // The start and what precedes it, its consumers and what follows.
    llvm::BitVector excluded = graph.closure(s, /*up=*/true);
    excluded |= graph.closure(consumers, /*up=*/false);
    Window window;
    window.start = s;
    window.mayCover = excluded.flip();
    for (unsigned i : window.mayCover.set_bits())
      if (graph.nodes[i].kind == NodeKind::Compute)
        window.available += graph.nodes[i].cost;
    windows.push_back(std::move(window));
  }
}

double CoverAccount::worthElsewhere(unsigned c) const {
  double cost = graph.nodes[c].cost, worth = 0;
  for (const Window &window : windows) {
    if (window.opened || !window.mayCover.test(c))
      continue;
    double short_ =
        graph.nodes[window.start].latency - (window.available - cost);
    worth = std::max(worth, std::min(cost, short_));
  }
  return worth;
}

std::optional<double> CoverAccount::availableBesides(unsigned s,
                                                     unsigned c) const {
  for (const Window &window : windows)
    if (window.start == s && window.mayCover.test(c))
      return window.available - graph.nodes[c].cost;
  return std::nullopt;
}

void CoverAccount::place(unsigned i) {
  const Node &node = graph.nodes[i];
  for (Window &window : windows) {
    if (node.kind == NodeKind::Compute && window.mayCover.test(i))
      window.available -= node.cost;
    if (llvm::is_contained(node.asyncPreds, window.start))
      window.opened = true;
  }
}
