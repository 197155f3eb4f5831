//===- CoverAccount.cpp - The compute that may hide each transfer ---------===//

#include "OverlapDialect/Scheduling/CoverAccount.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>

using namespace mlir::ovl::sched;

CoverAccount::CoverAccount(const ScheduleGraph &graph) : graph(graph) {
  unsigned n = graph.nodes.size();
  for (const Node &node : graph.nodes)
    if (node.kind == NodeKind::Compute)
      dearest = std::max(dearest, node.cost);
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
    windowByStart[s] = windows.size();
    windows.push_back(std::move(window));
  }
  isShort.resize(windows.size());
  for (unsigned index = 0; index < windows.size(); ++index)
    noteShort(index);
}

void CoverAccount::noteShort(unsigned index) {
  const Window &window = windows[index];
  // Below this an op costing `dearest` or less cuts nothing from the
  // transfer's exposed time (worthElsewhere's `short_` is not positive).
  if (isShort.test(index) ||
      window.available - dearest >= graph.nodes[window.start].latency)
    return;
  isShort.set(index);
  shortWindows.push_back(index);
}

double CoverAccount::worthElsewhere(unsigned c) const {
  double cost = graph.nodes[c].cost, worth = 0;
  for (unsigned index : shortWindows) {
    const Window &window = windows[index];
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
  auto it = windowByStart.find(s);
  if (it == windowByStart.end() || !windows[it->second].mayCover.test(c))
    return std::nullopt;
  return windows[it->second].available - graph.nodes[c].cost;
}

void CoverAccount::place(unsigned i) {
  const Node &node = graph.nodes[i];
  if (node.kind == NodeKind::Compute)
    for (unsigned index = 0; index < windows.size(); ++index) {
      Window &window = windows[index];
      if (!window.mayCover.test(i))
        continue;
      window.available -= node.cost;
      noteShort(index);
    }
  for (unsigned start : node.asyncPreds)
    if (auto it = windowByStart.find(start); it != windowByStart.end())
      windows[it->second].opened = true;
}
