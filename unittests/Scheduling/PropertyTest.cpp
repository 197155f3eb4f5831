//===- PropertyTest.cpp - Every scheduler on random graphs ----------------===//
//
// 200 random blocks (seed fixed): compute with random costs and
// dependencies, transfers of random times alone or over one of two shared
// link classes, each done needing only its start, as ovl-async-collectives
// leaves them. Whatever the budget, every order is a topological order of
// the graph and within the budget (such graphs always allow one), and the
// full scheduler (list order, improvement, guard) is never priced slower
// than the input order.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/Scheduling/BlockScheduler.h"
#include "OverlapDialect/Scheduling/ListSchedulers.h"
#include "OverlapDialect/Scheduling/Replay.h"

#include "TestGraph.h"

#include "gtest/gtest.h"

#include <numeric>
#include <random>

using namespace mlir::ovl::sched;
using namespace mlir::ovl::sched::test;

namespace {

/// A block of 4 to 24 ops with at most 4 transfers open at once in the
/// input order.
ScheduleGraph randomGraph(std::mt19937 &rng) {
  auto uniform = [&](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng);
  };
  auto chance = [&](double p) { return std::bernoulli_distribution(p)(rng); };
  TestGraph t;
  int n = uniform(4, 24);
  llvm::SmallVector<unsigned> open, data;
  // Predecessors among the values computed so far, recent ones more often.
  auto somePreds = [&] {
    llvm::SmallVector<unsigned> preds;
    for (unsigned i = data.size(); i-- > 0 && data.size() - i <= 6;)
      if (chance(0.3))
        preds.push_back(data[i]);
    return preds;
  };
  while (static_cast<int>(t.graph.nodes.size()) < n) {
    int what = uniform(0, 9);
    if (what < 2 && open.size() < 4) {
      std::optional<unsigned> link;
      if (int l = uniform(0, 2))
        link = l - 1;
      open.push_back(t.start(uniform(1, 10), link, somePreds()));
    } else if (what < 4 && !open.empty()) {
      unsigned k = uniform(0, open.size() - 1);
      data.push_back(t.done(open[k]));
      open.erase(open.begin() + k);
    } else {
      data.push_back(t.compute(uniform(0, 8), somePreds()));
    }
  }
  for (unsigned s : open)
    t.done(s);
  t.finish();
  return std::move(t.graph);
}

TEST(PropertyTest, RandomGraphs) {
  std::mt19937 rng(2026);
  // Graphs some scheduler reorders, and whose schedule is faster than the
  // input order: the property is not checked on orders left alone only.
  int reordered = 0, faster = 0;
  for (int g = 0; g < 200; ++g) {
    ScheduleGraph graph = randomGraph(rng);
    llvm::SmallVector<unsigned> input(graph.nodes.size());
    std::iota(input.begin(), input.end(), 0);
    for (int budget : {1, 2, 4}) {
      SCOPED_TRACE("graph " + std::to_string(g) + ", budget " +
                   std::to_string(budget));
      llvm::SmallVector<unsigned> orders[] = {
          scheduleBottomUp(graph, budget, /*tradeCover=*/true),
          scheduleBottomUp(graph, budget, /*tradeCover=*/false),
          scheduleTopDown(graph, budget)};
      for (const llvm::SmallVector<unsigned> &order : orders) {
        EXPECT_EQ(whyNotTopological(graph, order), "");
        EXPECT_LE(peakInFlight(graph, order), budget);
      }
      reordered += llvm::any_of(
          orders, [&](const auto &order) { return order != input; });
      BlockOutcome inputOutcome = replay(graph, input, budget);
      // No order is priced below its compute (improve stops there).
      double compute = 0;
      for (const Node &node : graph.nodes)
        if (node.kind == NodeKind::Compute)
          compute += node.cost;
      for (const llvm::SmallVector<unsigned> &order : orders)
        EXPECT_GE(replay(graph, order, budget).makespan, compute * (1 - 1e-9));
      for (Algorithm algorithm : {Algorithm::BottomUp, Algorithm::TopDown}) {
        BlockSchedule schedule = scheduleBlock(graph, {algorithm, budget});
        faster += schedule.outcome.makespan < inputOutcome.makespan;
        EXPECT_EQ(whyNotTopological(graph, schedule.order), "");
        EXPECT_LE(peakInFlight(graph, schedule.order), budget);
        EXPECT_FALSE(schedule.outcome.overBudgetAt);
        EXPECT_FALSE(schedule.simulated);
        if (!inputOutcome.overBudgetAt)
          EXPECT_LE(schedule.outcome.makespan,
                    inputOutcome.makespan * (1 + 1e-9));
      }
    }
  }
  // Of 600 list orders and 1200 schedules (552 and 747 when written).
  EXPECT_GE(reordered, 300);
  EXPECT_GE(faster, 600);
}

/// The replay's bound (replayBound) has the replay's marks and is never
/// above its makespan, on the schedulers' orders and on random ones of
/// the same random graphs; it is below it where transfers share links.
TEST(PropertyTest, ReplayBoundIsBelowEveryReplay) {
  std::mt19937 rng(2027);
  int shared = 0;
  for (int g = 0; g < 200; ++g) {
    ScheduleGraph graph = randomGraph(rng);
    SCOPED_TRACE("graph " + std::to_string(g));
    llvm::SmallVector<llvm::SmallVector<unsigned>> orders = {
        scheduleBottomUp(graph, 2, /*tradeCover=*/true),
        scheduleTopDown(graph, 2)};
    // Random topological orders: a random ready node at each step.
    for (int k = 0; k < 10; ++k) {
      llvm::SmallVector<unsigned> order, ready, waiting(graph.nodes.size());
      for (auto [i, node] : llvm::enumerate(graph.nodes))
        if (!(waiting[i] = node.preds.size()))
          ready.push_back(i);
      while (!ready.empty()) {
        size_t pick =
            std::uniform_int_distribution<size_t>(0, ready.size() - 1)(rng);
        unsigned next = ready[pick];
        ready.erase(ready.begin() + pick);
        order.push_back(next);
        for (unsigned succ : graph.nodes[next].succs)
          if (--waiting[succ] == 0)
            ready.push_back(succ);
      }
      orders.push_back(order);
    }
    for (const llvm::SmallVector<unsigned> &order : orders) {
      ASSERT_EQ(whyNotTopological(graph, order), "");
      BlockOutcome played = replay(graph, order, 2);
      BlockOutcome bound = replayBound(graph, order, 2);
      EXPECT_LE(bound.makespan, played.makespan * (1 + 1e-12));
      EXPECT_EQ(bound.peak, played.peak);
      EXPECT_EQ(bound.overBudgetAt, played.overBudgetAt);
      EXPECT_EQ(bound.peakBytes, played.peakBytes);
      EXPECT_EQ(bound.overMemoryAt, played.overMemoryAt);
      shared += bound.makespan < played.makespan * (1 - 1e-9);
    }
  }
  // Where links are shared the bound is below the replay (194 of the 2400
  // orders when written).
  EXPECT_GE(shared, 100);
}

} // namespace
