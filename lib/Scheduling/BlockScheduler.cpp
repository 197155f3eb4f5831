//===- BlockScheduler.cpp - The order of one block, end to end ------------===//

#include "OverlapDialect/Scheduling/BlockScheduler.h"

#include "OverlapDialect/Scheduling/BlockSimulation.h"
#include "OverlapDialect/Scheduling/Improve.h"
#include "OverlapDialect/Scheduling/ListSchedulers.h"
#include "OverlapDialect/Scheduling/ScheduleGraph.h"

#include "llvm/ADT/Sequence.h"
#include "llvm/Support/Debug.h"

#include <optional>

#define DEBUG_TYPE "ovl-schedule"

using namespace mlir::ovl::sched;

BlockSchedule
mlir::ovl::sched::scheduleBlock(const ScheduleGraph &graph,
                                const BlockScheduleOptions &options) {
  int budget = options.budget;
  // The event simulator judges where the block can be played on its own:
  // every move of improve when that is cheap, else the final choice.
  std::optional<BlockSimulation> simulation =
      BlockSimulation::build(graph, budget);
  const BlockSimulation *moves =
      simulation && simulation->size() <= kSimulatedImproveSize ? &*simulation
                                                                : nullptr;
  BlockSchedule result;
  llvm::SmallVector<unsigned> &order = result.order;
  BlockOutcome &outcome = result.outcome;
  double limit = graph.memoryBudget * kHeldMemoryShare;
  if (options.algorithm == Algorithm::TopDown) {
    // Starts go early and dones late, but a done that lets a start go goes
    // once its transfer arrived: what it received waits for its users.
    order = scheduleTopDown(graph, budget);
    if (graph.heldBytesPeak(order, /*toLastUser=*/true) > limit) {
      LLVM_DEBUG(llvm::dbgs()
                 << "[ovl-schedule] top-down: the transfers would hold more "
                    "than "
                 << limit
                 << " bytes from their inputs to their users; keeping them "
                    "short\n");
      order = scheduleTopDown(graph, budget, /*keepInputsShort=*/true);
    }
    outcome = judge(graph, order, budget, moves);
  } else {
    // Bottom-up's rules that trade cover between transfers judge from what
    // may hide each transfer, not from where it goes, and can misjudge: the
    // order without them is judged too and the faster one kept.
    auto bottomUp = [&](bool keepInputsShort) {
      order =
          scheduleBottomUp(graph, budget, /*tradeCover=*/true, keepInputsShort);
      outcome = judge(graph, order, budget, moves);
      llvm::SmallVector<unsigned> plain = scheduleBottomUp(
          graph, budget, /*tradeCover=*/false, keepInputsShort);
      BlockOutcome plainOutcome = judge(graph, plain, budget, moves);
      LLVM_DEBUG(llvm::dbgs() << "[ovl-schedule] bottom-up: "
                              << outcome.makespan << " s trading cover, "
                              << plainOutcome.makespan << " s without\n");
      if (isFaster(plainOutcome, outcome)) {
        order = std::move(plain);
        outcome = plainOutcome;
      }
    };
    // Dones nothing waits for, at the end of the block, keep their starts'
    // inputs live to the end (a training step's weight gradients): past
    // the share of the memory they may hold, the order that keeps them
    // short.
    // When those transfers' own bytes are past it, the order that takes
    // their dones first, which piles them up at the end, is not tried: two
    // bottom-up runs fewer.
    double late = 0;
    for (const Node &node : graph.nodes)
      if (node.kind == NodeKind::Done && node.succs.empty())
        for (unsigned start : node.asyncPreds)
          if (!graph.nodes[start].preds.empty())
            late += graph.nodes[start].bytes;
    bool keepInputsShort = late > limit;
    if (!keepInputsShort) {
      bottomUp(/*keepInputsShort=*/false);
      keepInputsShort = graph.heldBytesPeak(order) > limit;
    }
    if (keepInputsShort) {
      LLVM_DEBUG(llvm::dbgs()
                 << "[ovl-schedule] bottom-up: the transfers would hold more "
                    "than "
                 << limit << " bytes from their inputs (" << late
                 << " those nothing waits for); keeping their inputs "
                    "short\n");
      bottomUp(/*keepInputsShort=*/true);
    }
  }
  improve(graph, order, outcome, budget, moves,
          moves ? options.simulatedImproveReplays : kImproveReplays);
  if (simulation && !moves)
    outcome = judge(graph, order, budget, &*simulation);
  result.simulated = simulation.has_value();
  LLVM_DEBUG(llvm::dbgs() << "[ovl-schedule] makespan " << outcome.makespan
                          << " s (" << (simulation ? "simulated" : "replayed")
                          << "), peak in flight " << outcome.peak << "\n");
  // The guard: an order priced slower than the input order is not kept.
  auto input = llvm::to_vector(llvm::seq<unsigned>(0, graph.nodes.size()));
  if (order != input) {
    BlockOutcome kept =
        judge(graph, input, budget, simulation ? &*simulation : nullptr);
    if (isFaster(kept, outcome)) {
      LLVM_DEBUG(llvm::dbgs()
                 << "[ovl-schedule] the input order takes " << kept.makespan
                 << " s, less than the schedule; keeping the input order\n");
      result.keptInput = true;
      order = std::move(input);
      outcome = kept;
    }
  }
  return result;
}
