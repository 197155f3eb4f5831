//===- BlockSimulation.cpp - A block played by the event simulator --------===//

#include "OverlapDialect/Scheduling/BlockSimulation.h"

#include "OverlapDialect/Scheduling/ScheduleGraph.h"
#include "OverlapDialect/Simulator/Simulator.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir::ovl;
using namespace mlir::ovl::sched;

std::optional<BlockSimulation>
BlockSimulation::build(const ScheduleGraph &graph, unsigned maxInFlight) {
  if (graph.entryInFlight != 0 || graph.exitInFlight != 0)
    return std::nullopt;
  BlockSimulation sim;
  sim.maxInFlight = maxInFlight;
  sim.program.addLabel("block");
  for (const Node &node : graph.nodes) {
    if (node.waitsOnEntry || node.leavesBlock)
      return std::nullopt;
    SimStep step;
    switch (node.kind) {
    case NodeKind::Compute:
      if (!node.asyncPreds.empty())
        return std::nullopt;
      step.seconds = node.cost;
      break;
    case NodeKind::Start: {
      const Transfer &transfer = node.transfer;
      if (!transfer.machine || !transfer.bytes ||
          (sim.machine && sim.machine != transfer.machine))
        return std::nullopt;
      sim.machine = transfer.machine;
      step.axes = transfer.axes;
      step.bytes = *transfer.bytes;
      switch (transfer.kind) {
      case Transfer::Kind::Permute:
        step.kind = SimStep::Kind::PermuteStart;
        step.pairs = sim.program.addPairs(transfer.pairs);
        break;
      case Transfer::Kind::Collective:
        step.kind = SimStep::Kind::CollectiveStart;
        step.collective = transfer.collective;
        break;
      }
      break;
    }
    case NodeKind::Done: {
      if (node.asyncPreds.size() != 1 ||
          graph.nodes[node.asyncPreds[0]].kind != NodeKind::Start)
        return std::nullopt;
      const Transfer &transfer = graph.nodes[node.asyncPreds[0]].transfer;
      step.kind = transfer.kind == Transfer::Kind::Permute
                      ? SimStep::Kind::PermuteDone
                      : SimStep::Kind::CollectiveDone;
      step.start = node.asyncPreds[0];
      break;
    }
    }
    sim.program.steps.push_back(std::move(step));
  }
  if (!sim.machine)
    return std::nullopt;
  llvm::ArrayRef<int64_t> shape = sim.machine->assignment.getGridShape();
  sim.program.gridShape.assign(shape.begin(), shape.end());
  return sim;
}

void BlockSimulation::playAlone() const {
  alone.assign(program.steps.size(), 0);
  SimOptions options;
  options.maxInFlight = maxInFlight;
  for (auto [node, step] : llvm::enumerate(program.steps)) {
    if (step.kind != SimStep::Kind::PermuteDone &&
        step.kind != SimStep::Kind::CollectiveDone)
      continue;
    SimProgram pair;
    pair.gridShape = program.gridShape;
    pair.labels = program.labels;
    pair.pairLists = program.pairLists;
    pair.steps.push_back(program.steps[step.start]);
    pair.steps.push_back(step);
    pair.steps.back().start = 0;
    // Refused alone (it would be with the block too): 0 bounds it.
    llvm::Expected<SimReport> report = simulate(pair, *machine, options);
    if (!report) {
      llvm::consumeError(report.takeError());
      continue;
    }
    alone[node] = report->earliestFinish;
  }
}

double BlockSimulation::lowerBound(llvm::ArrayRef<unsigned> order) const {
  if (alone.empty())
    playAlone();
  // The earliest time any device can be at each op: as the simulator, the
  // same sums in the same order, so that rounding keeps it below.
  llvm::SmallVector<double> startedAt(program.steps.size(), 0);
  double clock = 0;
  for (unsigned node : order) {
    const SimStep &step = program.steps[node];
    switch (step.kind) {
    case SimStep::Kind::Compute:
      if (step.seconds > 0)
        clock = clock + step.seconds;
      break;
    case SimStep::Kind::PermuteStart:
    case SimStep::Kind::CollectiveStart:
      startedAt[node] = clock;
      break;
    case SimStep::Kind::PermuteDone:
    case SimStep::Kind::CollectiveDone:
      clock = std::max(clock, startedAt[step.start] + alone[node]);
      break;
    default:
      break;
    }
  }
  return clock;
}

int64_t BlockSimulation::size() const {
  llvm::ArrayRef<int64_t> shape = machine->assignment.getGridShape();
  int64_t steps = 0;
  for (const SimStep &step : program.steps) {
    int64_t group = 1;
    if (step.kind == SimStep::Kind::CollectiveStart)
      for (int16_t axis : step.axes)
        group *= shape[axis];
    steps += std::max<int64_t>(group - 1, 1);
  }
  return machine->assignment.getNumLogicalDevices() * steps;
}

std::optional<double>
BlockSimulation::stepTime(llvm::ArrayRef<unsigned> order) const {
  SimProgram played;
  played.gridShape = program.gridShape;
  played.labels = program.labels;
  played.pairLists = program.pairLists;
  llvm::SmallVector<uint32_t> position(order.size());
  for (auto [at, node] : llvm::enumerate(order))
    position[node] = at;
  for (unsigned node : order) {
    SimStep step = program.steps[node];
    if (step.kind == SimStep::Kind::PermuteDone ||
        step.kind == SimStep::Kind::CollectiveDone)
      step.start = position[step.start];
    played.steps.push_back(std::move(step));
  }
  SimOptions options;
  options.maxInFlight = maxInFlight;
  llvm::Expected<SimReport> report = simulate(played, *machine, options);
  if (!report) {
    llvm::consumeError(report.takeError());
    return std::nullopt;
  }
  return report->stepTime;
}
