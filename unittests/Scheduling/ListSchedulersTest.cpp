//===- ListSchedulersTest.cpp - The list schedulers on small graphs -------===//
//
// Hand-built graphs with round costs: top-down starts a transfer as early
// as its operands allow and waits for it as late as its users allow;
// bottom-up hides a transfer behind independent compute, and one that only
// the terminator waits for right after its input; neither exceeds
// the in-flight budget; two transfers over one link are not both laid
// over the compute that can hide only one; ties keep the input order.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/Scheduling/ListSchedulers.h"
#include "OverlapDialect/Scheduling/BlockScheduler.h"
#include "OverlapDialect/Scheduling/Replay.h"

#include "TestGraph.h"

#include "gtest/gtest.h"

#include <numeric>

using namespace mlir::ovl::sched;
using namespace mlir::ovl::sched::test;

namespace {

using Order = llvm::SmallVector<unsigned>;

Order identity(unsigned n) {
  Order order(n);
  std::iota(order.begin(), order.end(), 0);
  return order;
}

TEST(TopDownTest, StartEarlyDoneLate) {
  TestGraph t;
  unsigned before = t.compute(2);
  unsigned send = t.compute(1);
  unsigned other = t.compute(2);
  unsigned s = t.start(4, std::nullopt, {send});
  unsigned d = t.done(s);
  unsigned use = t.compute(1, {d});
  unsigned after = t.compute(2);
  const ScheduleGraph &graph = t.finish();
  // The start right after what it sends (the op feeding a start first),
  // the done after all the compute that does not need it, before its user.
  EXPECT_EQ(scheduleTopDown(graph, 4),
            Order({send, s, before, other, after, d, use}));
}

TEST(TopDownTest, AllocationWaitsForWhatItsStartSends) {
  // A transfer's destination (`alloc`: no cost, no operands) feeds its
  // start like what the start sends (`send`); placed first, as rule 3 would
  // (what feeds a start first, in input order), every destination would be
  // allocated at the top of the block. It goes right before its start.
  TestGraph t;
  unsigned before = t.compute(2);
  unsigned alloc = t.compute(0);
  unsigned send = t.compute(1, {before});
  unsigned s = t.start(1, std::nullopt, {alloc, send});
  unsigned d = t.done(s);
  unsigned use = t.compute(1, {d});
  const ScheduleGraph &graph = t.finish();
  EXPECT_EQ(scheduleTopDown(graph, 4), Order({before, send, alloc, s, d, use}));
}

TEST(TopDownTest, PrefetchesWaitForLandedWeightsUsers) {
  // Three layers, each using a weight gathered (10 bytes, 1 s) from outside
  // the block. Top-down gathers all three at the top: their buffers are
  // held from there to their layers (30 bytes). Keeping inputs short, a
  // gather waits while another one's buffers are held, in flight or landed
  // and not yet used, past the transfers' share of the memory budget (a
  // quarter of 40): each gather goes once the layer before it has used
  // its weight, hidden by that layer's second op.
  TestGraph t;
  Order layers;
  std::optional<unsigned> previous;
  for (int layer = 0; layer < 3; ++layer) {
    unsigned s = t.start(1);
    unsigned d = t.done(s);
    llvm::SmallVector<unsigned, 2> preds = {d};
    if (previous)
      preds.push_back(*previous);
    unsigned use = t.compute(1, preds);
    previous = t.compute(1, {use});
    t.graph.nodes[s].bytes = 10;
    layers.append({s, d, use, *previous});
  }
  t.graph.memoryBudget = 40;
  const ScheduleGraph &graph = t.finish();
  Order eager = scheduleTopDown(graph, 4);
  EXPECT_EQ(graph.heldBytesPeak(eager, /*toLastUser=*/true), 30);
  Order order = scheduleTopDown(graph, 4, /*keepInputsShort=*/true);
  EXPECT_EQ(graph.heldBytesPeak(order, /*toLastUser=*/true), 10);
  EXPECT_EQ(order, Order({layers[0], layers[1], layers[2], layers[4], layers[3],
                          layers[5], layers[6], layers[8], layers[7], layers[9],
                          layers[10], layers[11]}));
  EXPECT_DOUBLE_EQ(replay(graph, order, 4).makespan, 7);
  // The block's scheduler keeps them short past the share.
  BlockSchedule block = scheduleBlock(graph, {Algorithm::TopDown, 4});
  EXPECT_EQ(graph.heldBytesPeak(block.order, /*toLastUser=*/true), 10);
}

TEST(BottomUpTest, CoversTransferWithIndependentCompute) {
  TestGraph t;
  unsigned s = t.start(4);
  unsigned d = t.done(s);
  unsigned use = t.compute(1, {d});
  unsigned free = t.compute(5);
  const ScheduleGraph &graph = t.finish();
  for (bool tradeCover : {true, false})
    EXPECT_EQ(scheduleBottomUp(graph, 4, tradeCover), Order({s, free, d, use}));
  // Hidden: the compute alone.
  EXPECT_DOUBLE_EQ(replay(graph, Order({s, free, d, use}), 4).makespan, 6);
  EXPECT_DOUBLE_EQ(replay(graph, identity(4), 4).makespan, 10);
}

TEST(BottomUpTest, StartNoEarlierThanItsCoverNeeds) {
  // Two einsums could hide the transfer; one suffices, so the start goes
  // between them, not above both.
  TestGraph t;
  unsigned c0 = t.compute(5);
  unsigned c1 = t.compute(5);
  unsigned s = t.start(4);
  unsigned d = t.done(s);
  unsigned use = t.compute(1, {d});
  const ScheduleGraph &graph = t.finish();
  EXPECT_EQ(scheduleBottomUp(graph, 4, /*tradeCover=*/true),
            Order({c0, s, c1, d, use}));
}

TEST(BottomUpTest, LateNeededDoneKeepsItsInputNoLonger) {
  // Two layers' backward: each computes a weight gradient's partial sums
  // (`p1`, `p0`: 10 bytes, reduce-scattered in 0.5 s) that only the
  // terminator needs, and the gradient of the layer below (`x1`, `x0`, the
  // last 3 s). With both dones at the end of the block, their starts and
  // partials following them down, both partials are live there (the done
  // keeps its start's input): 20 bytes. Keeping inputs short, each
  // reduce-scatter goes right after its partials, hidden by the layer's
  // next op: 10 bytes, no stall.
  TestGraph t;
  unsigned g = t.compute(1);
  unsigned p1 = t.compute(1, {g});
  unsigned s1 = t.start(0.5, std::nullopt, {p1});
  unsigned d1 = t.done(s1);
  unsigned x1 = t.compute(1, {g});
  unsigned p0 = t.compute(1, {x1});
  unsigned s0 = t.start(0.5, std::nullopt, {p0});
  unsigned d0 = t.done(s0);
  unsigned x0 = t.compute(3, {x1});
  t.graph.nodes[s1].bytes = t.graph.nodes[s0].bytes = 10;
  const ScheduleGraph &graph = t.finish();
  EXPECT_EQ(graph.heldBytesPeak(Order({g, p1, x1, p0, x0, s1, s0, d1, d0})),
            20);
  for (bool tradeCover : {true, false}) {
    SCOPED_TRACE(tradeCover ? "trading cover" : "plain");
    EXPECT_EQ(graph.heldBytesPeak(scheduleBottomUp(graph, 4, tradeCover)), 20);
    Order order = scheduleBottomUp(graph, 4, tradeCover,
                                   /*keepInputsShort=*/true);
    EXPECT_EQ(order, Order({g, p1, s1, x1, d1, p0, s0, x0, d0}));
    EXPECT_EQ(graph.heldBytesPeak(order), 10);
    EXPECT_DOUBLE_EQ(replay(graph, order, 4).makespan, 7);
  }
  // The block's scheduler keeps them short once they would hold more than
  // their share of the memory budget.
  t.graph.memoryBudget = 30;
  BlockSchedule block = scheduleBlock(graph, {Algorithm::BottomUp, 4});
  EXPECT_EQ(graph.heldBytesPeak(block.order), 10);
  EXPECT_DOUBLE_EQ(block.outcome.makespan, 7);
}

TEST(BottomUpTest, HeldDoneGoesWhenItsInputsOpWouldHideATransfer) {
  // The weight gradient's partial sums `p` come first in the input, then
  // the activation gradient `x`, reduce-scattered (`r`, 2 s) for `y`. Only
  // `p` can hide `r`: its done is released when `p` would be taken, were
  // its start placed, rather than once the compute after `p` in the input
  // order runs short (which leaves `r` exposed: 7 s).
  TestGraph t;
  unsigned g = t.compute(1);
  unsigned p = t.compute(2, {g});
  unsigned s = t.start(0.5, std::nullopt, {p});
  unsigned d = t.done(s);
  unsigned x = t.compute(1, {g});
  unsigned r = t.start(2, std::nullopt, {x});
  unsigned e = t.done(r);
  unsigned y = t.compute(1, {e});
  t.graph.nodes[s].bytes = 10;
  const ScheduleGraph &graph = t.finish();
  EXPECT_DOUBLE_EQ(replay(graph, Order({g, p, s, x, d, r, e, y}), 4).makespan,
                   7);
  for (bool tradeCover : {true, false}) {
    SCOPED_TRACE(tradeCover ? "trading cover" : "plain");
    Order order = scheduleBottomUp(graph, 4, tradeCover,
                                   /*keepInputsShort=*/true);
    EXPECT_EQ(order, Order({g, x, r, p, s, d, e, y}));
    EXPECT_EQ(graph.heldBytesPeak(order), 10);
    EXPECT_DOUBLE_EQ(replay(graph, order, 4).makespan, 5.5);
  }
}

/// Six independent transfers, each with its user, in the worst input order
/// for a small budget: every start first.
TestGraph sixTransfers() {
  TestGraph t;
  llvm::SmallVector<unsigned> starts;
  for (int i = 0; i < 6; ++i)
    starts.push_back(t.start(3));
  for (unsigned s : starts)
    t.compute(1, {t.done(s)});
  return t;
}

TEST(ListSchedulersTest, BudgetNeverExceeded) {
  TestGraph t = sixTransfers();
  const ScheduleGraph &graph = t.finish();
  ASSERT_EQ(peakInFlight(graph, identity(graph.nodes.size())), 6);
  for (int budget : {1, 2, 5}) {
    SCOPED_TRACE("budget " + std::to_string(budget));
    for (const Order &order :
         {scheduleBottomUp(graph, budget, true),
          scheduleBottomUp(graph, budget, false),
          scheduleTopDown(graph, budget),
          scheduleBlock(graph, {Algorithm::BottomUp, budget}).order,
          scheduleBlock(graph, {Algorithm::TopDown, budget}).order}) {
      EXPECT_EQ(whyNotTopological(graph, order), "");
      EXPECT_LE(peakInFlight(graph, order), budget);
      EXPECT_FALSE(replay(graph, order, budget).overBudgetAt);
    }
  }
}

TEST(ListSchedulersTest, MemoryBudgetNeverExceeded) {
  // Six transfers of 100 bytes each: a budget of k * 100 bytes allows k in
  // flight, whatever the in-flight count allows.
  TestGraph t = sixTransfers();
  for (Node &node : t.graph.nodes)
    if (node.kind == NodeKind::Start)
      node.bytes = 100;
  const ScheduleGraph &graph = t.finish();
  EXPECT_EQ(replay(graph, identity(graph.nodes.size()), 6).peakBytes, 600);
  for (int allowed : {1, 2, 5}) {
    SCOPED_TRACE("memory for " + std::to_string(allowed));
    t.graph.memoryBudget = 100.0 * allowed;
    for (const Order &order :
         {scheduleBottomUp(graph, 6, true), scheduleBottomUp(graph, 6, false),
          scheduleTopDown(graph, 6),
          scheduleBlock(graph, {Algorithm::BottomUp, 6}).order,
          scheduleBlock(graph, {Algorithm::TopDown, 6}).order}) {
      EXPECT_EQ(whyNotTopological(graph, order), "");
      BlockOutcome outcome = replay(graph, order, 6);
      EXPECT_LE(outcome.peakBytes, graph.memoryBudget);
      EXPECT_FALSE(outcome.overMemoryAt);
    }
  }
}

TEST(ListSchedulersTest, OverBudgetReportedWhereDependenciesForceIt) {
  // Both dones need a barrier that needs both starts: two in flight.
  TestGraph t;
  unsigned a = t.start(1);
  unsigned b = t.start(1);
  unsigned barrier = t.compute(1, {a, b});
  t.done(a, {barrier});
  t.done(b, {barrier});
  const ScheduleGraph &graph = t.finish();
  BlockSchedule schedule = scheduleBlock(graph, {Algorithm::BottomUp, 1});
  ASSERT_TRUE(schedule.outcome.overBudgetAt);
  EXPECT_EQ(schedule.outcome.overBudgetCount, 2);
}

/// Two transfers of 4 s over one link class (4 s alone, 8 s together), an
/// einsum `free` of 4 s that needs neither and one `use` of 4 s that needs
/// the first's data: `free` can hide one transfer, not both. Given in the
/// order that lays both over `free`, which exposes 4 s of the first.
struct SharedLinks {
  TestGraph t;
  unsigned s1, s2, free, d1, use, d2, sink;
  explicit SharedLinks(bool share) {
    s1 = t.start(4, 0u);
    s2 = t.start(4, share ? 0u : 1u);
    free = t.compute(4);
    d1 = t.done(s1);
    use = t.compute(4, {d1});
    d2 = t.done(s2);
    sink = t.compute(1, {use, d2});
  }
};

TEST(ListSchedulersTest, SharedLinksNotBothHiddenByOneCompute) {
  SharedLinks shared(/*share=*/true);
  const ScheduleGraph &graph = shared.t.finish();
  Order input = identity(graph.nodes.size());
  EXPECT_DOUBLE_EQ(replay(graph, input, 4).makespan, 13);
  for (const Order &order :
       {scheduleBottomUp(graph, 4, true), scheduleBottomUp(graph, 4, false),
        scheduleTopDown(graph, 4),
        scheduleBlock(graph, {Algorithm::BottomUp, 4}).order,
        scheduleBlock(graph, {Algorithm::TopDown, 4}).order}) {
    EXPECT_EQ(whyNotTopological(graph, order), "");
    // The second transfer starts after `free`: `free` hides the first,
    // `use` the second, nothing exposed.
    llvm::SmallVector<unsigned> at = positions(order);
    EXPECT_GT(at[shared.s2], at[shared.free]);
    EXPECT_DOUBLE_EQ(replay(graph, order, 4).makespan, 9);
  }
}

TEST(ListSchedulersTest, SeparateLinksBothHiddenByOneCompute) {
  // Over separate links the same two transfers take 4 s together: `free`
  // hides both at once, as well as one after the other.
  SharedLinks separate(/*share=*/false);
  const ScheduleGraph &graph = separate.t.finish();
  EXPECT_DOUBLE_EQ(replay(graph, identity(graph.nodes.size()), 4).makespan, 9);
  for (Algorithm algorithm : {Algorithm::BottomUp, Algorithm::TopDown})
    EXPECT_DOUBLE_EQ(scheduleBlock(graph, {algorithm, 4}).outcome.makespan, 9);
}

TEST(ListSchedulersTest, TiesKeepInputOrder) {
  // Nothing to hide: independent compute, and chains of it.
  TestGraph t;
  for (int i = 0; i < 5; ++i)
    t.compute(2);
  unsigned a = t.compute(1);
  unsigned b = t.compute(1, {a});
  t.compute(0, {b});
  t.compute(3);
  const ScheduleGraph &graph = t.finish();
  Order input = identity(graph.nodes.size());
  EXPECT_EQ(scheduleBottomUp(graph, 4, true), input);
  EXPECT_EQ(scheduleBottomUp(graph, 4, false), input);
  EXPECT_EQ(scheduleTopDown(graph, 4), input);
  for (Algorithm algorithm : {Algorithm::BottomUp, Algorithm::TopDown})
    EXPECT_EQ(scheduleBlock(graph, {algorithm, 4}).order, input);
}

TEST(ListSchedulersTest, ScheduledOrderIsAFixedPoint) {
  // Scheduling the order a scheduler returned returns it unchanged, as
  // ovl-schedule-idempotent.mlir checks on IR.
  SharedLinks shared(/*share=*/true);
  const ScheduleGraph &graph = shared.t.finish();
  for (Algorithm algorithm : {Algorithm::BottomUp, Algorithm::TopDown}) {
    Order first = scheduleBlock(graph, {algorithm, 4}).order;
    llvm::SmallVector<unsigned> at = positions(first);
    TestGraph again;
    for (unsigned i : first) {
      const Node &node = graph.nodes[i];
      again.graph.nodes.push_back(node);
      Node &copy = again.graph.nodes.back();
      copy.preds.clear();
      copy.succs.clear();
      copy.asyncPreds.clear();
      copy.usesDone = copy.feedsStart = false;
      unsigned self = again.graph.nodes.size() - 1;
      for (unsigned p : node.preds)
        if (llvm::is_contained(node.asyncPreds, p))
          again.graph.addAsyncEdge(at[p], self);
        else
          again.graph.addEdge(at[p], self);
    }
    again.graph.numLinkClasses = graph.numLinkClasses;
    const ScheduleGraph &reordered = again.finish();
    EXPECT_EQ(scheduleBlock(reordered, {algorithm, 4}).order,
              identity(graph.nodes.size()));
  }
}

} // namespace
