//===- LinkFlows.cpp - A block's transfers in flight, sharing links -------===//

#include "OverlapDialect/Scheduling/LinkFlows.h"

#include <algorithm>
#include <cassert>
#include <limits>
#include <optional>

using namespace mlir::ovl::sched;

/// Work below this (a femtosecond) is done: absorbs rounding.
static constexpr double kEpsilon = 1e-15;

void LinkFlows::open(unsigned s, double at) {
  advanceTo(at);
  const Node &node = graph.nodes[s];
  if (firstFlow[s] < 0) {
    firstFlow[s] = flows.size();
    flows.resize(flows.size() + node.groups.size());
  }
  for (auto [k, group] : llvm::enumerate(node.groups)) {
    unsigned i = firstFlow[s] + k;
    Flow &flow = flows[i];
    if (flow.phase == 1)
      load(flow, -1);
    if (!flow.group || flow.phase == 3)
      active.push_back(i);
    flow = Flow();
    flow.group = &group;
    flow.work[0] = backwards ? 0 : group.setup;
    flow.work[1] = node.stream * group.share;
    flow.work[2] = backwards ? group.setup : 0;
    enterPhase(flow);
  }
  retire();
}

double LinkFlows::end(unsigned s) {
  assert(isOpen(s) && "the transfer was not opened");
  while (!hasEnded(s))
    step(std::numeric_limits<double>::infinity());
  double last = 0;
  for (const Flow &flow : groupFlows(s))
    last = std::max(last, flow.end);
  return last;
}

void LinkFlows::load(const Flow &flow, int delta) {
  for (auto [linkClass, count] : flow.group->linkLoads)
    loads[linkClass] += delta * count;
}

/// Enters the first phase of `flow` with work left from its current one.
void LinkFlows::enterPhase(Flow &flow) {
  while (flow.phase < 3 && flow.work[flow.phase] <= kEpsilon)
    ++flow.phase;
  if (flow.phase == 1)
    load(flow, +1);
  if (flow.phase == 3)
    flow.end = time;
}

/// How much slower than alone `flow` goes in its current phase.
double LinkFlows::slowdown(const Flow &flow) const {
  if (flow.phase != 1)
    return 1;
  int most = 1;
  for (auto [linkClass, count] : flow.group->linkLoads)
    most = std::max(most, loads[linkClass]);
  return most;
}

/// Plays up to the next phase change, or to `until` if that comes first;
/// returns whether a phase changed.
bool LinkFlows::step(double until) {
  double next = std::numeric_limits<double>::infinity();
  std::optional<unsigned> first;
  for (unsigned i : active) {
    const Flow &flow = flows[i];
    double at = time + flow.work[flow.phase] * slowdown(flow);
    if (at < next) {
      next = at;
      first = i;
    }
  }
  if (!first || next > until) {
    if (until != std::numeric_limits<double>::infinity())
      progress(until);
    return false;
  }
  progress(next);
  // The first to finish finishes whatever the rounding left.
  flows[*first].work[flows[*first].phase] = 0;
  llvm::SmallVector<unsigned, 4> changed;
  for (unsigned i : active)
    if (flows[i].work[flows[i].phase] <= kEpsilon)
      changed.push_back(i);
  for (unsigned i : changed) {
    Flow &flow = flows[i];
    if (flow.phase == 1)
      load(flow, -1);
    ++flow.phase;
    enterPhase(flow);
  }
  retire();
  return true;
}

void LinkFlows::progress(double until) {
  double elapsed = until - time;
  if (elapsed > 0)
    for (unsigned i : active) {
      Flow &flow = flows[i];
      flow.work[flow.phase] -= elapsed / slowdown(flow);
    }
  time = std::max(time, until);
}

/// Drops the flows that ended from `active`, keeping its order.
void LinkFlows::retire() {
  llvm::erase_if(active, [&](unsigned i) { return flows[i].phase == 3; });
}
