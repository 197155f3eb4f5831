//===- BlockScheduleCacheTest.cpp - Blocks scheduled once -----------------===//
//
// The cache answers a graph it has seen with the schedule scheduleBlock
// makes for it, and a key changes with every field of the graph and the
// options that scheduleBlock reads.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/Scheduling/BlockScheduleCache.h"

#include "TestGraph.h"

#include "gtest/gtest.h"

#include <functional>
#include <set>

using namespace mlir::ovl::sched;
using namespace mlir::ovl::sched::test;

namespace {

/// Two transfers over one link class and compute to hide them behind.
ScheduleGraph makeGraph() {
  TestGraph t;
  unsigned a = t.compute(2);
  unsigned s1 = t.start(3, 0u, {a});
  unsigned b = t.compute(4);
  unsigned s2 = t.start(2, 0u);
  unsigned d1 = t.done(s1);
  t.compute(1, {d1, b});
  t.done(s2);
  return t.finish();
}

BlockScheduleOptions makeOptions() {
  BlockScheduleOptions options;
  options.budget = 2;
  return options;
}

TEST(BlockScheduleCacheTest, AnswersAGraphSeenWithItsSchedule) {
  ScheduleGraph graph = makeGraph();
  BlockScheduleOptions options = makeOptions();
  BlockSchedule direct = scheduleBlock(graph, options);
  BlockScheduleCache cache;
  const BlockSchedule first = cache.schedule(graph, options);
  ScheduleGraph copy = makeGraph();
  const BlockSchedule &second = cache.schedule(copy, options);
  EXPECT_EQ(cache.getMisses(), 1u);
  EXPECT_EQ(cache.getHits(), 1u);
  for (const BlockSchedule *schedule : {&first, &second}) {
    EXPECT_EQ(schedule->order, direct.order);
    EXPECT_EQ(schedule->outcome.makespan, direct.outcome.makespan);
    EXPECT_EQ(schedule->outcome.peak, direct.outcome.peak);
    EXPECT_EQ(schedule->keptInput, direct.keptInput);
    EXPECT_EQ(schedule->simulated, direct.simulated);
  }
  options.algorithm = Algorithm::TopDown;
  cache.schedule(graph, options);
  EXPECT_EQ(cache.getMisses(), 2u);
}

TEST(BlockScheduleCacheTest, KeysTellEveryFieldApart) {
  using Change = std::function<void(ScheduleGraph &, BlockScheduleOptions &)>;
  int machine = 0;
  std::vector<Change> changes = {
      [](ScheduleGraph &, BlockScheduleOptions &) {},
      [](auto &, auto &o) { o.algorithm = Algorithm::TopDown; },
      [](auto &, auto &o) { o.budget = 3; },
      [](auto &, auto &o) { o.simulatedImproveReplays = 7; },
      [](auto &g, auto &) { g.entryInFlight = 1; },
      [](auto &g, auto &) { g.exitInFlight = 1; },
      [](auto &g, auto &) { g.numLinkClasses = 5; },
      [](auto &g, auto &) { g.memoryBudget = 1e6; },
      [](auto &g, auto &) { g.nodes.emplace_back(); },
      [](auto &g, auto &) { g.nodes[0].kind = NodeKind::Done; },
      [](auto &g, auto &) { g.nodes[0].cost = 2.5; },
      [](auto &g, auto &) {
        g.nodes[1].transfer.kind = Transfer::Kind::Collective;
      },
      [&](auto &g, auto &) {
        g.nodes[1].transfer.machine =
            reinterpret_cast<const mlir::ovl::MachineModel *>(&machine);
      },
      [](auto &g, auto &) { g.nodes[1].transfer.axes.push_back(0); },
      [](auto &g, auto &) { g.nodes[1].transfer.bytes = 0.0; },
      [](auto &g, auto &) { g.nodes[1].transfer.bytes = 8.0; },
      [](auto &g, auto &) { g.nodes[1].transfer.pairs.push_back({0, 1}); },
      [](auto &g, auto &) {
        g.nodes[1].transfer.collective =
            mlir::ovl::CollectiveKind::ReduceScatter;
      },
      [](auto &g, auto &) { g.nodes[1].bytes = 64; },
      [](auto &g, auto &) { g.nodes[1].stream = 1; },
      [](auto &g, auto &) { g.nodes[1].groups.emplace_back(); },
      [](auto &g, auto &) { g.nodes[1].groups[0].setup = 1; },
      [](auto &g, auto &) { g.nodes[1].groups[0].share = 0.5; },
      [](auto &g, auto &) { g.nodes[1].groups[0].linkLoads[0].second = 2; },
      [](auto &g, auto &) { g.nodes[1].groups[0].linkLoads[0].first = 1; },
      [](auto &g, auto &) { g.nodes[1].latency = 9; },
      [](auto &g, auto &) { g.nodes[1].consumes = 1; },
      [](auto &g, auto &) { g.nodes[1].produces = 2; },
      [](auto &g, auto &) { g.nodes[1].slots = 2; },
      [](auto &g, auto &) { g.nodes[0].usesDone = true; },
      [](auto &g, auto &) { g.nodes[2].feedsStart = true; },
      [](auto &g, auto &) { g.nodes[1].waitsOnEntry = true; },
      [](auto &g, auto &) { g.nodes[1].leavesBlock = true; },
      [](auto &g, auto &) { g.nodes[5].preds.push_back(0); },
      [](auto &g, auto &) { g.nodes[0].succs.push_back(2); },
      [](auto &g, auto &) { g.nodes[6].asyncPreds.push_back(1); },
      // The same elements split differently between two sequences.
      [](auto &g, auto &) {
        g.nodes[5].preds.insert(g.nodes[5].preds.begin(), 0);
        g.nodes[5].succs.push_back(0);
      },
  };
  std::set<BlockKey> keys;
  for (const Change &change : changes) {
    ScheduleGraph graph = makeGraph();
    BlockScheduleOptions options = makeOptions();
    change(graph, options);
    keys.insert(getBlockKey(graph, options));
  }
  EXPECT_EQ(keys.size(), changes.size());
  EXPECT_EQ(getBlockKey(makeGraph(), makeOptions()),
            getBlockKey(makeGraph(), makeOptions()));
}

} // namespace
