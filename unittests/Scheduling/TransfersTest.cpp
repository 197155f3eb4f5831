//===- TransfersTest.cpp - Transfers routed, shared and simulated ---------===//
//
// On the made-up wrapped line of unittests/CostModel (hop latency 2 s,
// links of 8 B/s, launch 0.5 s): a permute's transfer as planTransfers
// prices it, two permutes the same way round sharing links and opposite
// ones not, LinkFlows playing shared transfers as the simulator does, a
// collective priced by its plan, and a block played by the simulator.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/Scheduling/Transfers.h"
#include "OverlapDialect/CostModel/Machine.h"
#include "OverlapDialect/Scheduling/BlockSimulation.h"
#include "OverlapDialect/Scheduling/LinkFlows.h"

#include "../CostModel/TestHardware.h"
#include "TestGraph.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <random>

using namespace mlir::ovl;
using namespace mlir::ovl::sched;
using namespace mlir::ovl::sched::test;
using namespace mlir::ovl::test;

namespace {

MachineModel line(int64_t n) {
  llvm::Expected<MachineModel> machine =
      buildMachineModel(testTorus(1, 0), std::to_string(n), {}, {n});
  EXPECT_TRUE(static_cast<bool>(machine));
  return std::move(*machine);
}

/// A permute start on `machine` where every group index i sends `bytes`
/// to i + shift.
unsigned permute(TestGraph &t, const MachineModel &machine, double bytes,
                 int64_t shift, llvm::ArrayRef<unsigned> preds = {}) {
  unsigned s = t.add(NodeKind::Start, preds);
  Node &node = t.graph.nodes[s];
  node.produces = node.slots = 1;
  Transfer &transfer = node.transfer;
  transfer.machine = &machine;
  transfer.axes = {0};
  transfer.bytes = bytes;
  int64_t n = machine.assignment.getGridShape()[0];
  for (int64_t i = 0; i < n; ++i)
    transfer.pairs.push_back({i, ((i + shift) % n + n) % n});
  return s;
}

TEST(TransfersTest, PermuteAloneAndShared) {
  MachineModel machine = line(4);
  TestGraph t;
  unsigned a = permute(t, machine, 64, 1);
  unsigned b = permute(t, machine, 64, 1);
  unsigned c = permute(t, machine, 64, -1);
  t.finish();
  planTransfers(t.graph);
  const ScheduleGraph &graph = t.graph;
  // One hop: launch + alpha, then 64 B at B.
  for (unsigned s : {a, b, c}) {
    EXPECT_DOUBLE_EQ(graph.nodes[s].latency, kLaunch + kAlpha + 64 / kB);
    EXPECT_DOUBLE_EQ(graph.nodes[s].stream, 64 / kB);
    ASSERT_EQ(graph.nodes[s].groups.size(), 1u);
  }
  // The same way round: the same links; the other way: other links.
  EXPECT_EQ(graph.nodes[a].groups[0].linkLoads,
            graph.nodes[b].groups[0].linkLoads);
  for (auto [linkClass, load] : graph.nodes[c].groups[0].linkLoads)
    for (auto [other, otherLoad] : graph.nodes[a].groups[0].linkLoads)
      EXPECT_NE(linkClass, other);

  // Played together, a and b take as long as one after the other; c, on
  // its own links, as long as alone.
  LinkFlows flows(graph, /*backwards=*/false);
  flows.open(a, 0);
  flows.open(b, 0);
  flows.open(c, 0);
  EXPECT_DOUBLE_EQ(flows.predictEnd(a), kLaunch + kAlpha + 2 * 64 / kB);
  EXPECT_DOUBLE_EQ(flows.end(b), kLaunch + kAlpha + 2 * 64 / kB);
  EXPECT_DOUBLE_EQ(flows.end(c), kLaunch + kAlpha + 64 / kB);
  EXPECT_TRUE(flows.hasEnded(a));
}

TEST(TransfersTest, BackwardsStreamsFirst) {
  MachineModel machine = line(4);
  TestGraph t;
  unsigned a = permute(t, machine, 64, 1);
  unsigned b = permute(t, machine, 64, 1);
  t.finish();
  planTransfers(t.graph);
  // Opened 4 s apart from the end of the block, sharing the link for the
  // 4 s of a's stream left: b's stream ends 4 s later than alone.
  LinkFlows flows(t.graph, /*backwards=*/true);
  flows.open(a, 0);
  flows.open(b, 4);
  EXPECT_DOUBLE_EQ(flows.end(a), 64 / kB + 4 + kLaunch + kAlpha);
  EXPECT_DOUBLE_EQ(flows.end(b), 4 + 64 / kB + 4 + kLaunch + kAlpha);
}

TEST(TransfersTest, UnpricedAndEmptyTransfers) {
  MachineModel machine = line(4);
  TestGraph t;
  unsigned unknown = t.add(NodeKind::Start, {});
  unsigned empty = permute(t, machine, 0, 1);
  t.finish();
  planTransfers(t.graph);
  EXPECT_DOUBLE_EQ(t.graph.nodes[unknown].latency, kDefaultCost);
  EXPECT_DOUBLE_EQ(t.graph.nodes[empty].latency, kLaunch);
  EXPECT_EQ(t.graph.numLinkClasses, 0u);
}

/// A collective start on `machine`: every device gathers `bytes`.
unsigned gather(TestGraph &t, const MachineModel &machine, double bytes) {
  unsigned s = t.add(NodeKind::Start, {});
  Node &node = t.graph.nodes[s];
  node.produces = node.slots = 1;
  Transfer &transfer = node.transfer;
  transfer.kind = Transfer::Kind::Collective;
  transfer.collective = CollectiveKind::AllGather;
  transfer.machine = &machine;
  transfer.axes = {0};
  transfer.bytes = bytes;
  return s;
}

TEST(TransfersTest, CollectiveTakesItsPlan) {
  MachineModel machine = line(8);
  TestGraph t;
  unsigned s = gather(t, machine, 64);
  t.finish();
  planTransfers(t.graph);
  EXPECT_DOUBLE_EQ(t.graph.nodes[s].latency,
                   machine.collectiveTime(CollectiveKind::AllGather, 64, {0},
                                          RingDirection::Bidirectional));
  // It crosses the ring's links, both ways round.
  EXPECT_FALSE(t.graph.nodes[s].groups[0].linkLoads.empty());
}

/// A collective in flight shares its links with a permute: each takes
/// longer than alone; a permute elsewhere does not slow it.
TEST(TransfersTest, CollectiveSharesLinks) {
  MachineModel machine = line(8);
  TestGraph t;
  unsigned g = gather(t, machine, 1024);
  unsigned p = permute(t, machine, 1024, 1);
  t.finish();
  planTransfers(t.graph);
  const ScheduleGraph &graph = t.graph;
  double gatherAlone = graph.nodes[g].latency;
  double permuteAlone = graph.nodes[p].latency;
  LinkFlows alone(graph, /*backwards=*/false);
  alone.open(g, 0);
  EXPECT_DOUBLE_EQ(alone.end(g), gatherAlone);
  LinkFlows together(graph, /*backwards=*/false);
  together.open(g, 0);
  together.open(p, 0);
  EXPECT_GT(together.predictEnd(g), gatherAlone * (1 + 1e-9));
  EXPECT_GT(together.end(p), permuteAlone * (1 + 1e-9));
}

TEST(BlockSimulationTest, PlaysTheBlockInAnyOrder) {
  MachineModel machine = line(4);
  TestGraph t;
  unsigned s = permute(t, machine, 64, 1);
  unsigned d = t.done(s);
  unsigned use = t.compute(1, {d});
  unsigned free = t.compute(20);
  t.finish();
  planTransfers(t.graph);
  std::optional<BlockSimulation> simulation =
      BlockSimulation::build(t.graph, 4);
  ASSERT_TRUE(simulation);
  EXPECT_EQ(simulation->size(), 4 * 4);
  // Hidden behind the 20 s einsum, or exposed before it.
  EXPECT_DOUBLE_EQ(simulation->stepTime({s, free, d, use}).value_or(-1), 21);
  EXPECT_DOUBLE_EQ(simulation->stepTime({s, d, use, free}).value_or(-1),
                   kLaunch + kAlpha + 64 / kB + 21);
  // improve does not play a trial whose lower bound shows it cannot gain:
  // the bound is each transfer's time alone after the compute before its
  // start, so it is exact where nothing contends.
  for (llvm::SmallVector<unsigned> order :
       {llvm::SmallVector<unsigned>{s, free, d, use},
        {s, d, use, free},
        {free, s, d, use}})
    EXPECT_DOUBLE_EQ(simulation->lowerBound(order),
                     simulation->stepTime(order).value_or(-1));
}

/// improve stops judging moves once a block is within its gain of its
/// compute: no order may simulate faster than that.
TEST(BlockSimulationTest, NoOrderBeatsItsCompute) {
  MachineModel machine = line(4);
  TestGraph t;
  unsigned s = permute(t, machine, 64, 1);
  unsigned d = t.done(s);
  t.compute(3, {d});
  t.compute(20);
  t.compute(0.5);
  t.finish();
  planTransfers(t.graph);
  std::optional<BlockSimulation> simulation =
      BlockSimulation::build(t.graph, 4);
  ASSERT_TRUE(simulation);
  llvm::SmallVector<unsigned> order = {0, 1, 2, 3, 4};
  int topological = 0;
  do {
    if (!whyNotTopological(t.graph, order).empty())
      continue;
    ++topological;
    std::optional<double> step = simulation->stepTime(order);
    ASSERT_TRUE(step);
    EXPECT_GE(*step, 23.5);
  } while (std::next_permutation(order.begin(), order.end()));
  EXPECT_EQ(topological, 20);
}

/// On random blocks of permutes both ways round and all_gathers sharing
/// the line's links, in random orders and with few DMA slots, the bound
/// is never above what the simulator plays.
TEST(BlockSimulationTest, LowerBoundIsBelowEveryPlay) {
  MachineModel machine = line(8);
  std::mt19937 rng(2026);
  auto uniform = [&](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng);
  };
  int played = 0, contended = 0;
  for (int block = 0; block < 60; ++block) {
    TestGraph t;
    llvm::SmallVector<unsigned> open, values;
    while (t.graph.nodes.size() < 12) {
      int what = uniform(0, 5);
      llvm::SmallVector<unsigned> preds;
      if (!values.empty() && uniform(0, 1))
        preds.push_back(values[uniform(0, values.size() - 1)]);
      if (what == 0 && open.size() < 3) {
        open.push_back(permute(t, machine, 8 * uniform(1, 64),
                               uniform(0, 1) ? 1 : -1, preds));
      } else if (what == 1 && open.size() < 3) {
        open.push_back(gather(t, machine, 8 * uniform(1, 64)));
      } else if (what == 2 && !open.empty()) {
        unsigned k = uniform(0, open.size() - 1);
        values.push_back(t.done(open[k]));
        open.erase(open.begin() + k);
      } else {
        values.push_back(t.compute(uniform(0, 30), preds));
      }
    }
    for (unsigned start : open)
      t.done(start);
    t.finish();
    planTransfers(t.graph);
    std::optional<BlockSimulation> simulation =
        BlockSimulation::build(t.graph, uniform(1, 3));
    if (!simulation)
      continue;
    // Random topological orders: a random ready op at each step.
    for (int trial = 0; trial < 20; ++trial) {
      llvm::SmallVector<unsigned> order, waiting(t.graph.nodes.size());
      llvm::SmallVector<unsigned> ready;
      for (auto [i, node] : llvm::enumerate(t.graph.nodes)) {
        waiting[i] = node.preds.size();
        if (!waiting[i])
          ready.push_back(i);
      }
      while (!ready.empty()) {
        unsigned k = uniform(0, ready.size() - 1);
        unsigned next = ready[k];
        ready.erase(ready.begin() + k);
        order.push_back(next);
        for (unsigned succ : t.graph.nodes[next].succs)
          if (--waiting[succ] == 0)
            ready.push_back(succ);
      }
      ASSERT_EQ(whyNotTopological(t.graph, order), "");
      std::optional<double> step = simulation->stepTime(order);
      if (!step)
        continue;
      ++played;
      double bound = simulation->lowerBound(order);
      EXPECT_LE(bound, *step * (1 + 1e-12)) << "block " << block;
      contended += bound < *step * (1 - 1e-9);
    }
  }
  // The property was tried, and on plays where sharing costs time.
  EXPECT_GT(played, 500);
  EXPECT_GT(contended, 50);
}

TEST(BlockSimulationTest, OnlyBlocksThatPlayOnTheirOwn) {
  MachineModel machine = line(4);
  // A transfer carried in from outside the block.
  TestGraph carried;
  carried.compute(1);
  carried.graph.entryInFlight = 1;
  carried.finish();
  EXPECT_FALSE(BlockSimulation::build(carried.graph, 4));
  // A transfer the cost model cannot price.
  TestGraph unpriced;
  unpriced.done(unpriced.add(NodeKind::Start, {}));
  unpriced.finish();
  EXPECT_FALSE(BlockSimulation::build(unpriced.graph, 4));
  // No transfer: nothing the simulator would add to the replay.
  TestGraph compute;
  compute.compute(1);
  compute.finish();
  EXPECT_FALSE(BlockSimulation::build(compute.graph, 4));
}

} // namespace
