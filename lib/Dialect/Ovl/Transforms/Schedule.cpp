//===- Schedule.cpp - Latency-hiding scheduling of async permutes ---------===//
//
// ovl-schedule reorders the operations of each block so that the transfers
// between ovl.collective_permute_start and ovl.collective_permute_done
// overlap computation (section 5.2 of the paper). Every block becomes a
// dependency graph (SSA uses, in-place writes, memory effects) whose nodes
// carry the cost model's times and the transfer slots they hold, and a list
// scheduler orders it under the in-flight budget: bottom-up (algorithm 2)
// or top-down. Blocks are scheduled innermost first, so that a loop around
// permutes is priced by, and holds the slots of, its scheduled body.
//
// Expects a verified program on tensors or buffers, of any dialects: an op
// the cost model does not know is opaque compute with a default cost, an op
// with unknown memory effects is a barrier nothing moves across.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/Dialect/Ovl/Transforms/Passes.h"

#include "OverlapDialect/Analysis/CostEstimates.h"
#include "OverlapDialect/Analysis/MachineModel.h"
#include "OverlapDialect/Dialect/Ovl/IR/OvlOps.h"
#include "OverlapDialect/Dialect/Ovl/Transforms/Transforms.h"

#include "mlir/Analysis/AliasAnalysis/LocalAliasAnalysis.h"
#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/RegionKindInterface.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Debug.h"

#include <algorithm>

#define DEBUG_TYPE "ovl-schedule"

namespace mlir::ovl {
#define GEN_PASS_DEF_OVLSCHEDULEPASS
#include "OverlapDialect/Dialect/Ovl/Transforms/Passes.h.inc"
} // namespace mlir::ovl

using namespace mlir;
using namespace mlir::ovl;

namespace {

/// The time, in seconds, of an op the cost model cannot price (an unknown
/// op, dynamic shapes), and of a transfer it cannot price: about a
/// collective's launch overhead, small next to the einsums a schedule is
/// about.
constexpr double kDefaultCost = 1e-6;

enum class NodeKind { Compute, Start, Done };

/// One op of the block being scheduled.
struct Node {
  Operation *op = nullptr;
  NodeKind kind = NodeKind::Compute;
  /// Time on the device's stream: the op's compute, a blocking collective's
  /// transfer, a loop's scheduled body times its trip count; 0 for starts
  /// and dones.
  double cost = 0;
  /// A start's transfer time: its done completes no earlier than this
  /// after it.
  double latency = 0;
  /// Tokens the op completes or passes on (its token operands and the ones
  /// its regions use from outside), and token results.
  int consumes = 0;
  int produces = 0;
  /// Transfer slots the op holds at its peak: max(consumes, produces, the
  /// peak of its scheduled regions).
  int slots = 0;
  /// Must follow a done of the block: uses the data it delivers, directly
  /// or through other ops.
  bool usesDone = false;
  /// A transitive predecessor of a start of the block.
  bool feedsStart = false;
  /// Reads or writes memory, or has unknown effects.
  bool touchesMemory = false;
  SmallVector<unsigned, 4> preds, succs;
  /// The starts whose token the op consumes: the edge carries the transfer.
  SmallVector<unsigned, 1> asyncPreds;
};

/// The dependency graph of one block, without its terminator.
struct BlockGraph {
  SmallVector<Node> nodes;
  /// Transfers in flight when the block begins (token arguments, tokens its
  /// ops use from outside) and when it ends (tokens the terminator passes
  /// on).
  int entryInFlight = 0;
  int exitInFlight = 0;

  /// Transfers in flight while node `i` runs when `inFlight` are before it.
  int during(unsigned i, int inFlight) const {
    const Node &node = nodes[i];
    return inFlight - node.consumes + node.slots;
  }
  /// Transfers in flight after node `i`.
  int after(unsigned i, int inFlight) const {
    const Node &node = nodes[i];
    return inFlight - node.consumes + node.produces;
  }
};

/// What a scheduled block amounts to, for the op around it.
struct BlockOutcome {
  /// The estimated time of one run of the block, stalls included.
  double makespan = 0;
  /// The most transfers in flight at any point.
  int peak = 0;
  /// The first op that runs with more transfers in flight than the budget
  /// beyond what it holds itself (a loop that alone needs more was reported
  /// inside), and that count.
  Operation *overBudgetAt = nullptr;
  int overBudgetCount = 0;
};

/// The cost and the peak in-flight count of an op whose regions were
/// scheduled.
struct RegionSummary {
  double cost = 0;
  int peak = 0;
};

/// Whether the blocks of `op`'s regions are scheduled: control flow and
/// loops (not payload regions such as linalg.generic's, which are priced as
/// a whole), in SSA-dominance regions, not isolated from above (a nested
/// function is scheduled by its own pass instance).
bool schedulesRegionsOf(Operation *op) {
  if (op->getNumRegions() == 0 ||
      op->hasTrait<OpTrait::IsIsolatedFromAbove>() ||
      !isa<RegionBranchOpInterface, LoopLikeOpInterface>(op))
    return false;
  if (auto kinds = dyn_cast<RegionKindInterface>(op))
    for (unsigned i = 0, e = op->getNumRegions(); i < e; ++i)
      if (!kinds.hasSSADominance(i))
        return false;
  return true;
}

/// Whether `value` is defined inside `op` (in one of its regions).
bool isDefinedInside(Value value, Operation *op) {
  Operation *parent = value.getParentRegion()->getParentOp();
  return parent && op->isAncestor(parent);
}

/// Whether `operand` is a tensor its op overwrites in place once bufferized:
/// the op's bufferization model says it writes it, or it is a destination
/// (DPS init), or an einsum's accumulator (which becomes linalg's output).
bool writesInPlace(OpOperand &operand,
                   const bufferization::AnalysisState &state) {
  Operation *op = operand.getOwner();
  // A call's model looks at its callee, another function; calls without
  // effects interfaces are barriers anyway.
  if (!isa<TensorType>(operand.get().getType()) || isa<CallOpInterface>(op))
    return false;
  if (auto bufferizable = dyn_cast<bufferization::BufferizableOpInterface>(op))
    return bufferizable.bufferizesToMemoryWrite(operand, state);
  if (auto dps = dyn_cast<DestinationStyleOpInterface>(op))
    return dps.isDpsInit(&operand);
  if (auto einsum = dyn_cast<EinsumOp>(op)) {
    MutableOperandRange acc = einsum.getAccMutable();
    return acc.size() == 1 && &acc[0] == &operand;
  }
  return false;
}

/// Ops whose tensor result is a view of their source once bufferized.
bool isTensorView(Operation *op) {
  return isa<ViewLikeOpInterface, tensor::ExtractSliceOp,
             tensor::CollapseShapeOp, tensor::ExpandShapeOp, tensor::CastOp,
             tensor::ReshapeOp>(op);
}

/// The users of `value` and of the views of it.
void collectReaders(Value value, SmallVectorImpl<Operation *> &readers,
                    unsigned depth = 0) {
  for (Operation *user : value.getUsers()) {
    readers.push_back(user);
    if (depth < 8 && isTensorView(user))
      for (Value result : user->getResults())
        collectReaders(result, readers, depth + 1);
  }
}

/// The memory effects that order ops: reads, writes and frees, except on
/// the communication resource (see buildGraph) and on values local to `op`.
/// std::nullopt when the effects are unknown.
std::optional<SmallVector<MemoryEffects::EffectInstance>>
getOrderingEffects(Operation *op) {
  // bufferization.alloc_tensor declares no effects but only makes a new
  // tensor (the receive buffers of ovl-async-collectives).
  if (isa<bufferization::AllocTensorOp>(op))
    return SmallVector<MemoryEffects::EffectInstance>();
  std::optional<SmallVector<MemoryEffects::EffectInstance>> all =
      getEffectsRecursively(op);
  if (!all)
    return std::nullopt;
  SmallVector<MemoryEffects::EffectInstance> kept;
  for (const MemoryEffects::EffectInstance &effect : *all) {
    if (isa<MemoryEffects::Allocate>(effect.getEffect()) ||
        effect.getResource() == CommunicationResource::get())
      continue;
    if (Value value = effect.getValue())
      if (isDefinedInside(value, op))
        continue;
    kept.push_back(effect);
  }
  return kept;
}

/// Whether two effects may touch the same memory with at least one write.
bool conflict(const MemoryEffects::EffectInstance &a,
              const MemoryEffects::EffectInstance &b,
              LocalAliasAnalysis &aliases) {
  if (a.getResource() != b.getResource())
    return false;
  if (isa<MemoryEffects::Read>(a.getEffect()) &&
      isa<MemoryEffects::Read>(b.getEffect()))
    return false;
  Value va = a.getValue(), vb = b.getValue();
  if (!va || !vb)
    return true;
  return !aliases.alias(va, vb).isNo();
}

/// The scheduler of one op's regions: builds each block's graph, orders it
/// and moves the ops.
class Scheduler {
public:
  Scheduler(MachineModelCache &machines, const AnalyticalCostModel &compute,
            const ScheduleOptions &options, unsigned budget)
      : machines(machines), compute(compute), options(options),
        budget(static_cast<int>(budget)),
        bufferizationState(bufferizationOptions) {}

  /// Schedules the blocks of `op`'s regions, nested control flow first, and
  /// returns what they amount to.
  FailureOr<RegionSummary> scheduleRegionsOf(Operation *op);

  ScheduleResult result;

private:
  FailureOr<BlockOutcome> scheduleBlock(Block &block);
  LogicalResult buildGraph(Block &block, Operation *terminator,
                           BlockGraph &graph);
  FailureOr<double> costOf(Operation *op, bool touchesMemory);
  SmallVector<unsigned> bottomUp(const BlockGraph &graph) const;
  SmallVector<unsigned> topDown(const BlockGraph &graph) const;
  BlockOutcome replay(const BlockGraph &graph, ArrayRef<unsigned> order) const;

  MachineModelCache &machines;
  const AnalyticalCostModel &compute;
  const ScheduleOptions &options;
  int budget;
  SymbolTableCollection symbols;
  LocalAliasAnalysis aliases;
  bufferization::BufferizationOptions bufferizationOptions;
  bufferization::AnalysisState bufferizationState;
  /// Ops whose regions were scheduled.
  DenseMap<Operation *, RegionSummary> summaries;
};

FailureOr<RegionSummary> Scheduler::scheduleRegionsOf(Operation *op) {
  RegionSummary summary;
  // Region branch ops run one of their regions (scf.if), loops all of them
  // (scf.while's condition and body) once per iteration.
  bool sumRegions = isa<LoopLikeOpInterface>(op);
  for (Region &region : op->getRegions()) {
    double regionCost = 0;
    for (Block &block : region) {
      for (Operation &nested : block)
        if (schedulesRegionsOf(&nested)) {
          FailureOr<RegionSummary> inner = scheduleRegionsOf(&nested);
          if (failed(inner))
            return failure();
          summaries[&nested] = *inner;
        }
      FailureOr<BlockOutcome> outcome = scheduleBlock(block);
      if (failed(outcome))
        return failure();
      regionCost += outcome->makespan;
      summary.peak = std::max(summary.peak, outcome->peak);
    }
    summary.cost = sumRegions ? summary.cost + regionCost
                              : std::max(summary.cost, regionCost);
  }
  if (auto loop = dyn_cast<LoopLikeOpInterface>(op))
    if (std::optional<APInt> trips = loop.getStaticTripCount())
      summary.cost *= static_cast<double>(trips->getZExtValue());
  return summary;
}

FailureOr<double> Scheduler::costOf(Operation *op, bool touchesMemory) {
  if (isa<CollectivePermuteStartOp, CollectivePermuteDoneOp>(op))
    return 0.0;
  auto summary = summaries.find(op);
  if (summary != summaries.end())
    return summary->second.cost;
  if (isa<CollectiveOpInterface>(op)) {
    FailureOr<const MachineModel *> machine =
        machines.getOrEmitError(op, symbols);
    if (failed(machine))
      return failure();
    if (*machine)
      if (std::optional<double> time =
              estimateCollective(op, **machine, RingDirection::Bidirectional))
        return *time;
    return kDefaultCost;
  }
  std::optional<ComputeEstimate> estimate = estimateCompute(op, compute);
  if (!estimate)
    return kDefaultCost;
  // estimateCompute prices what it knows; an op that touches memory and
  // that it prices at nothing (a call, an op of an unknown dialect, a
  // buffer copy) is opaque work.
  if (estimate->seconds == 0 && touchesMemory &&
      !isa_and_nonnull<OvlDialect>(op->getDialect()))
    return kDefaultCost;
  return estimate->seconds;
}

LogicalResult Scheduler::buildGraph(Block &block, Operation *terminator,
                                    BlockGraph &graph) {
  DenseMap<Operation *, unsigned> indexOf;
  for (Operation &op : block) {
    if (&op == terminator)
      break;
    indexOf[&op] = graph.nodes.size();
    graph.nodes.emplace_back();
    graph.nodes.back().op = &op;
  }
  unsigned n = graph.nodes.size();
  SmallVector<llvm::SmallSetVector<unsigned, 4>> preds(n);
  auto addEdge = [&](unsigned from, unsigned to) {
    assert(from < to && "edges follow the input order");
    preds[to].insert(from);
  };
  // The node of the block an op belongs to; none for the terminator and
  // ops outside the block.
  auto nodeOf = [&](Operation *op) -> std::optional<unsigned> {
    Operation *ancestor = op ? block.findAncestorOpInBlock(*op) : nullptr;
    auto it = ancestor ? indexOf.find(ancestor) : indexOf.end();
    if (it == indexOf.end())
      return std::nullopt;
    return it->second;
  };

  for (BlockArgument arg : block.getArguments())
    graph.entryInFlight += isa<TokenType>(arg.getType());
  llvm::SmallSetVector<Value, 4> capturedTokens;

  // SSA uses, also from inside the node's regions, and the tokens it
  // consumes.
  for (unsigned i = 0; i < n; ++i) {
    Node &node = graph.nodes[i];
    Operation *op = node.op;
    node.kind = isa<CollectivePermuteStartOp>(op)  ? NodeKind::Start
                : isa<CollectivePermuteDoneOp>(op) ? NodeKind::Done
                                                   : NodeKind::Compute;
    llvm::SmallSetVector<Value, 2> tokens;
    op->walk([&](Operation *inner) {
      for (Value operand : inner->getOperands()) {
        if (isDefinedInside(operand, op))
          continue;
        if (isa<TokenType>(operand.getType()))
          tokens.insert(operand);
        std::optional<unsigned> def = nodeOf(operand.getDefiningOp());
        if (!def)
          continue;
        addEdge(*def, i);
        if (graph.nodes[*def].kind == NodeKind::Start &&
            isa<TokenType>(operand.getType()))
          node.asyncPreds.push_back(*def);
      }
    });
    for (Value token : tokens)
      if (!isa<BlockArgument>(token) || token.getParentBlock() != &block)
        if (!nodeOf(token.getDefiningOp()))
          capturedTokens.insert(token);
    node.consumes = tokens.size();
    node.produces =
        llvm::count_if(op->getResultTypes(), llvm::IsaPred<TokenType>);
    llvm::sort(node.asyncPreds);
    node.asyncPreds.erase(llvm::unique(node.asyncPreds), node.asyncPreds.end());
  }
  graph.entryInFlight += capturedTokens.size();
  if (terminator)
    graph.exitInFlight =
        llvm::count_if(terminator->getOperandTypes(), llvm::IsaPred<TokenType>);

  // In-place writes: an op that overwrites a tensor it takes as destination
  // (a start's receive buffer, an insert_slice's, an einsum's accumulator)
  // stays after the earlier readers of that tensor and its views, so that
  // bufferization writes in place as it did before (no copy, no extra
  // buffer) and a start's send buffer is not reused before its done.
  for (unsigned i = 0; i < n; ++i) {
    Operation *op = graph.nodes[i].op;
    for (OpOperand &operand : op->getOpOperands()) {
      if (!writesInPlace(operand, bufferizationState))
        continue;
      SmallVector<Operation *> readers;
      collectReaders(operand.get(), readers);
      for (Operation *reader : readers)
        if (std::optional<unsigned> j = nodeOf(reader))
          if (*j < i)
            addEdge(*j, i);
    }
  }

  // Memory effects. The communication resource of the ovl collectives is
  // dropped (getOrderingEffects): it keeps collectives in program order
  // against passes that do not know them, but all devices run this same
  // program and this scheduler is deterministic, so whatever order it gives
  // the collectives is the same on every device and the transfers still
  // pair up. Ops with unknown effects are barriers: each depends on
  // everything since the previous barrier, and everything after on it.
  SmallVector<std::optional<SmallVector<MemoryEffects::EffectInstance>>>
      effects;
  effects.reserve(n);
  for (unsigned i = 0; i < n; ++i) {
    effects.push_back(getOrderingEffects(graph.nodes[i].op));
    graph.nodes[i].touchesMemory = !effects.back() || !effects.back()->empty();
  }
  std::optional<unsigned> lastBarrier;
  for (unsigned i = 0; i < n; ++i) {
    if (lastBarrier)
      addEdge(*lastBarrier, i);
    if (!effects[i]) {
      for (unsigned j = lastBarrier ? *lastBarrier + 1 : 0; j < i; ++j)
        addEdge(j, i);
      lastBarrier = i;
      continue;
    }
    if (effects[i]->empty())
      continue;
    for (unsigned j = lastBarrier ? *lastBarrier + 1 : 0; j < i; ++j) {
      if (!effects[j] || effects[j]->empty())
        continue;
      bool conflicts = llvm::any_of(*effects[i], [&](const auto &a) {
        return llvm::any_of(*effects[j], [&](const auto &b) {
          return conflict(a, b, aliases);
        });
      });
      if (conflicts)
        addEdge(j, i);
    }
  }

  for (unsigned i = 0; i < n; ++i) {
    Node &node = graph.nodes[i];
    node.preds.assign(preds[i].begin(), preds[i].end());
    llvm::sort(node.preds);
    for (unsigned j : node.preds)
      graph.nodes[j].succs.push_back(i);
  }
  // What must follow a done, transitively (edges go forwards).
  for (unsigned i = 0; i < n; ++i) {
    Node &node = graph.nodes[i];
    if (node.kind == NodeKind::Done || node.usesDone)
      for (unsigned j : node.succs)
        if (graph.nodes[j].kind != NodeKind::Done)
          graph.nodes[j].usesDone = true;
  }
  // Predecessors of starts, transitively.
  for (unsigned i = n; i-- > 0;) {
    Node &node = graph.nodes[i];
    if (node.kind == NodeKind::Start || node.feedsStart)
      for (unsigned j : node.preds)
        graph.nodes[j].feedsStart = true;
  }

  // Costs, latencies and slots.
  for (Node &node : graph.nodes) {
    FailureOr<double> cost = costOf(node.op, node.touchesMemory);
    if (failed(cost))
      return failure();
    node.cost = *cost;
    int regionPeak = 0;
    if (auto summary = summaries.find(node.op); summary != summaries.end())
      regionPeak = summary->second.peak;
    else if (node.op->getNumRegions() > 0)
      // Regions this scheduler does not order: each start in them may be in
      // flight at once.
      node.op->walk([&](CollectivePermuteStartOp) { ++regionPeak; });
    node.slots = std::max({node.consumes, node.produces, regionPeak});
    if (node.kind != NodeKind::Start)
      continue;
    node.latency = kDefaultCost;
    FailureOr<const MachineModel *> machine =
        machines.getOrEmitError(node.op, symbols);
    if (failed(machine))
      return failure();
    if (*machine)
      if (std::optional<double> time =
              estimatePermuteTransfer(node.op, **machine))
        node.latency = *time;
  }
  return success();
}

/// The bottom-up list scheduler of the paper's algorithm 2. Runs from the
/// terminator upwards on a clock of estimated time since the block's end.
/// An op becomes a candidate when all its successors are placed; it is
/// ready once the clock has passed its ready time, which for a start is
/// its done's time plus the transfer (it then covers the transfer) and for
/// other ops the time their successors are done. Among the ready
/// candidates that keep the in-flight count within the budget it takes, in
/// order: a done (which places it right before its first user), a start
/// whose transfer is covered (so a start goes no earlier than its transfer
/// needs: buffers live no longer than necessary), a user of a done (so the
/// done can go as late as possible), any other op; ties go to the op that
/// came last in the input, which keeps the input order where nothing else
/// decides. With no ready candidate it takes the pending one ready first
/// and lets the clock jump there (a stall). A done that would exceed the
/// budget waits; the next candidate goes instead.
SmallVector<unsigned> Scheduler::bottomUp(const BlockGraph &graph) const {
  unsigned n = graph.nodes.size();
  SmallVector<unsigned> remaining(n);
  SmallVector<double> readyTime(n, 0.0);
  SmallVector<unsigned> candidates;
  for (unsigned i = 0; i < n; ++i) {
    remaining[i] = graph.nodes[i].succs.size();
    if (remaining[i] == 0)
      candidates.push_back(i);
  }
  // In flight below the point being filled: after it in program order.
  int inFlight = graph.exitInFlight;
  double clock = 0;
  SmallVector<unsigned> reversed;
  auto priority = [&](unsigned i) {
    const Node &node = graph.nodes[i];
    if (node.kind == NodeKind::Done)
      return 3;
    if (node.kind == NodeKind::Start)
      return 2;
    return node.usesDone ? 1 : 0;
  };
  // Transfers in flight above op i (before it) and while it runs, the
  // larger of the two.
  auto overBudget = [&](unsigned i) {
    const Node &node = graph.nodes[i];
    return inFlight - node.produces + node.slots - budget;
  };
  while (!candidates.empty()) {
    std::optional<unsigned> best;
    // Ready and within the budget: by priority, then the later input op.
    for (unsigned i : candidates) {
      if (overBudget(i) > 0 || readyTime[i] > clock)
        continue;
      if (!best || std::make_pair(priority(i), i) >
                       std::make_pair(priority(*best), *best))
        best = i;
    }
    // Pending within the budget: the one ready first.
    if (!best)
      for (unsigned i : candidates) {
        if (overBudget(i) > 0)
          continue;
        if (!best || readyTime[i] < readyTime[*best] ||
            (readyTime[i] == readyTime[*best] && i > *best))
          best = i;
      }
    // Nothing fits: the least excess, then ready first.
    if (!best)
      for (unsigned i : candidates) {
        auto key = [&](unsigned k) {
          return std::make_tuple(-overBudget(k), readyTime[k] <= clock,
                                 priority(k), k);
        };
        if (!best || key(i) > key(*best))
          best = i;
      }
    unsigned chosen = *best;
    const Node &node = graph.nodes[chosen];
    llvm::erase(candidates, chosen);
    reversed.push_back(chosen);
    clock = std::max(clock, readyTime[chosen]) + node.cost;
    inFlight = inFlight - node.produces + node.consumes;
    for (unsigned j : node.preds) {
      double latency =
          llvm::is_contained(node.asyncPreds, j) ? graph.nodes[j].latency : 0.0;
      readyTime[j] = std::max(readyTime[j], clock + latency);
      if (--remaining[j] == 0)
        candidates.push_back(j);
    }
  }
  assert(reversed.size() == n && "the graph is acyclic");
  return SmallVector<unsigned>(llvm::reverse(reversed));
}

/// The top-down list scheduler. Runs forwards on a clock of estimated time
/// since the block's start, over the candidates whose predecessors are
/// placed. It takes, in order: a start that fits the budget (as early as
/// its operands allow, bounded by the budget); a done whose transfer has
/// arrived when that lets a start go (its data is what the start sends, or
/// its slot is what the start waits for): this rebalances the work between
/// the transfers by cost, the work up to the arrival covering the first and
/// the rest the next, rather than all of it piling up behind the first; an
/// op that is neither, those feeding a start first, then in input order;
/// and only when nothing else can go, the done whose transfer arrives
/// first (a done goes as late as its users allow).
SmallVector<unsigned> Scheduler::topDown(const BlockGraph &graph) const {
  unsigned n = graph.nodes.size();
  SmallVector<unsigned> remaining(n);
  SmallVector<double> arrival(n, 0.0);
  SmallVector<bool> placed(n, false);
  SmallVector<unsigned> candidates;
  for (unsigned i = 0; i < n; ++i) {
    remaining[i] = graph.nodes[i].preds.size();
    if (remaining[i] == 0)
      candidates.push_back(i);
  }
  int inFlight = graph.entryInFlight;
  double clock = 0;
  SmallVector<unsigned> order;
  auto fits = [&](unsigned i) { return graph.during(i, inFlight) <= budget; };
  auto isStart = [&](unsigned i) {
    return graph.nodes[i].kind == NodeKind::Start;
  };
  auto isDone = [&](unsigned i) {
    return graph.nodes[i].kind == NodeKind::Done;
  };
  // A start whose done is not in the block (its token leaves through the
  // terminator: the next iteration's transfer) holds its slot to the end of
  // the block; it goes only when the slots that the ops still to place
  // need remain free besides it, or it would force them over the budget.
  SmallVector<bool> escapes(n, false);
  for (unsigned i = 0; i < n; ++i)
    escapes[i] =
        isStart(i) && llvm::none_of(graph.nodes[i].succs, [&](unsigned s) {
          return llvm::is_contained(graph.nodes[s].asyncPreds, i);
        });
  auto startFits = [&](unsigned i) {
    if (!fits(i))
      return false;
    if (!escapes[i])
      return true;
    int needed = 0;
    for (unsigned k = 0; k < n; ++k) {
      const Node &other = graph.nodes[k];
      if (placed[k] || k == i || other.kind == NodeKind::Done)
        continue;
      needed = std::max(needed, other.kind == NodeKind::Start
                                    ? 1
                                    : other.slots - other.consumes);
    }
    return graph.during(i, inFlight) + needed <= budget;
  };
  // Whether placing done `d` lets a start go: a start (or a loop of
  // transfers) waits for a slot, or all that a start still waits for is `d`
  // and ops that wait only for `d`.
  bool slotWaiting = false;
  auto unblocksStart = [&](unsigned d) {
    if (slotWaiting)
      return true;
    auto waitsOnlyFor = [&](unsigned s, unsigned depth, auto &self) -> bool {
      for (unsigned p : graph.nodes[s].preds) {
        if (placed[p] || p == d)
          continue;
        if (depth == 0 || isStart(p) || isDone(p) || !self(p, depth - 1, self))
          return false;
      }
      return true;
    };
    for (unsigned s : graph.nodes[d].succs)
      if (isStart(s) && waitsOnlyFor(s, 2, waitsOnlyFor))
        return true;
    for (unsigned s : graph.nodes[d].succs)
      for (unsigned t : graph.nodes[s].succs)
        if (isStart(t) && !placed[s] && waitsOnlyFor(t, 2, waitsOnlyFor))
          return true;
    return false;
  };

  while (!candidates.empty()) {
    std::optional<unsigned> best;
    auto takeFirst = [&](auto &&accept) {
      for (unsigned i : candidates)
        if (accept(i) && (!best || i < *best))
          best = i;
    };
    takeFirst([&](unsigned i) { return isStart(i) && startFits(i); });
    slotWaiting = llvm::any_of(candidates, [&](unsigned i) {
      return (isStart(i) || (graph.nodes[i].kind == NodeKind::Compute &&
                             graph.nodes[i].slots > 0)) &&
             !fits(i);
    });
    if (!best)
      takeFirst([&](unsigned i) {
        return isDone(i) && arrival[i] <= clock && unblocksStart(i);
      });
    if (!best)
      for (unsigned i : candidates) {
        if (isStart(i) || isDone(i) || !fits(i))
          continue;
        auto key = [&](unsigned k) {
          return std::make_pair(!graph.nodes[k].feedsStart, k);
        };
        if (!best || key(i) < key(*best))
          best = i;
      }
    if (!best)
      for (unsigned i : candidates)
        if (isDone(i) && (!best || arrival[i] < arrival[*best] ||
                          (arrival[i] == arrival[*best] && i < *best)))
          best = i;
    if (!best)
      for (unsigned i : candidates) {
        auto key = [&](unsigned k) {
          return std::make_pair(graph.during(k, inFlight), k);
        };
        if (!best || key(i) < key(*best))
          best = i;
      }
    unsigned chosen = *best;
    const Node &node = graph.nodes[chosen];
    llvm::erase(candidates, chosen);
    placed[chosen] = true;
    order.push_back(chosen);
    clock = std::max(clock, arrival[chosen]) + node.cost;
    inFlight = graph.after(chosen, inFlight);
    for (unsigned s : node.succs) {
      if (llvm::is_contained(graph.nodes[s].asyncPreds, chosen))
        arrival[s] = std::max(arrival[s], clock + node.latency);
      if (--remaining[s] == 0)
        candidates.push_back(s);
    }
  }
  assert(order.size() == n && "the graph is acyclic");
  return order;
}

/// Plays `order` on the cost model: its estimated time (each op after the
/// previous one, a done not before its transfer arrives), its peak
/// in-flight count and where it exceeds the budget.
BlockOutcome Scheduler::replay(const BlockGraph &graph,
                               ArrayRef<unsigned> order) const {
  SmallVector<double> finish(graph.nodes.size(), 0.0);
  BlockOutcome outcome;
  int inFlight = graph.entryInFlight;
  outcome.peak = inFlight;
  double clock = 0;
  for (unsigned i : order) {
    const Node &node = graph.nodes[i];
    double begin = clock;
    for (unsigned j : node.asyncPreds)
      begin = std::max(begin, finish[j] + graph.nodes[j].latency);
    clock = begin + node.cost;
    finish[i] = clock;
    int during = graph.during(i, inFlight);
    if (during > budget && during > node.slots && !outcome.overBudgetAt) {
      outcome.overBudgetAt = node.op;
      outcome.overBudgetCount = during;
    }
    outcome.peak = std::max(outcome.peak, during);
    inFlight = graph.after(i, inFlight);
  }
  outcome.peak = std::max(outcome.peak, inFlight);
  outcome.makespan = clock;
  return outcome;
}

FailureOr<BlockOutcome> Scheduler::scheduleBlock(Block &block) {
  Operation *terminator = nullptr;
  if (!block.empty() && block.back().mightHaveTrait<OpTrait::IsTerminator>())
    terminator = &block.back();
  BlockGraph graph;
  if (failed(buildGraph(block, terminator, graph)))
    return failure();
  SmallVector<unsigned> order = options.algorithm == ScheduleAlgorithm::TopDown
                                    ? topDown(graph)
                                    : bottomUp(graph);
  BlockOutcome outcome = replay(graph, order);
  LLVM_DEBUG({
    llvm::dbgs() << "[ovl-schedule] block of "
                 << (block.getParentOp()
                         ? block.getParentOp()->getName().getStringRef()
                         : "?")
                 << ": " << graph.nodes.size() << " ops, makespan "
                 << outcome.makespan << " s, peak in flight " << outcome.peak
                 << "\n";
  });
  if (outcome.overBudgetAt) {
    ++result.overBudgetBlocks;
    outcome.overBudgetAt->emitWarning("ovl-schedule: ")
        << outcome.overBudgetCount
        << " asynchronous transfers in flight here, more than max-in-flight = "
        << budget << ": the dependencies allow no order within the budget";
  }
  result.peakInFlight =
      std::max(result.peakInFlight, static_cast<unsigned>(outcome.peak));
  ++result.blocks;
  for (auto [position, index] : llvm::enumerate(order)) {
    if (position != index)
      ++result.movedOps;
    Operation *op = graph.nodes[index].op;
    if (terminator)
      op->moveBefore(terminator);
    else
      op->moveBefore(&block, block.end());
  }
  return outcome;
}

struct OvlSchedulePass
    : public ovl::impl::OvlSchedulePassBase<OvlSchedulePass> {
  using Base::Base;

  void runOnOperation() override {
    if (!machines)
      machines.emplace(hardware, topology, deviceAssignment);
    ScheduleOptions options;
    options.algorithm = algorithm;
    options.maxInFlight = maxInFlight;
    FailureOr<ScheduleResult> result =
        scheduleRegions(getOperation(), *machines, options);
    if (failed(result))
      return signalPassFailure();
    numBlocks += result->blocks;
    numMoved += result->movedOps;
    numOverBudget += result->overBudgetBlocks;
  }

  /// One machine per grid shape, from the pass options.
  std::optional<MachineModelCache> machines;
};
} // namespace

FailureOr<ScheduleResult>
mlir::ovl::scheduleRegions(Operation *root, MachineModelCache &machines,
                           const ScheduleOptions &options) {
  llvm::Expected<const AnalyticalCostModel *> compute = machines.getCostModel();
  if (!compute) {
    root->emitError("ovl-schedule: ") << llvm::toString(compute.takeError());
    return failure();
  }
  unsigned budget = options.maxInFlight ? options.maxInFlight
                                        : (*compute)->getHardware().dmaSlots;
  Scheduler scheduler(machines, **compute, options, std::max(budget, 1u));
  // The root's own regions, whatever kind of op it is (a function), unless
  // they are graph regions, whose order means nothing.
  if (auto kinds = dyn_cast<RegionKindInterface>(root))
    for (Region &region : root->getRegions())
      if (!kinds.hasSSADominance(region.getRegionNumber()))
        return scheduler.result;
  if (failed(scheduler.scheduleRegionsOf(root)))
    return failure();
  return scheduler.result;
}
