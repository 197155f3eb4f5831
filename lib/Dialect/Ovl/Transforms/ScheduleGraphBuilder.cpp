//===- ScheduleGraphBuilder.cpp - Blocks as scheduling graphs -------------===//
//
// Expects a verified program on tensors or buffers, of any dialects: an op
// the cost model does not know is opaque compute with a default cost, an op
// with unknown memory effects is a barrier nothing moves across. The
// asynchronous collectives other than permutes (all_gather_start, ...,
// collective_done) are such opaque ops here, their tokens counted as
// transfer slots.
//
//===----------------------------------------------------------------------===//

#include "ScheduleGraphBuilder.h"

#include "OverlapDialect/Analysis/CostEstimates.h"
#include "OverlapDialect/Analysis/MachineModel.h"
#include "OverlapDialect/Dialect/Ovl/IR/OvlOps.h"
#include "OverlapDialect/Scheduling/Transfers.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Debug.h"

#include <algorithm>
#include <optional>

#define DEBUG_TYPE "ovl-schedule"

using namespace mlir;
using namespace mlir::ovl;

namespace {

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
/// the communication resource (see build) and on values local to `op`.
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

} // namespace

FailureOr<double> ScheduleGraphBuilder::costOf(Operation *op,
                                               bool touchesMemory) {
  // Starts and dones take no time on the stream: their transfers are
  // priced as transfers.
  if (isa<AsyncStartOpInterface, CollectivePermuteDoneOp, CollectiveDoneOp>(op))
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
    return sched::kDefaultCost;
  }
  std::optional<ComputeEstimate> estimate = estimateCompute(op, compute);
  if (!estimate)
    return sched::kDefaultCost;
  // estimateCompute prices what it knows; an op that touches memory and
  // that it prices at nothing (a call, an op of an unknown dialect, a
  // buffer copy) is opaque work.
  if (estimate->seconds == 0 && touchesMemory &&
      !isa_and_nonnull<OvlDialect>(op->getDialect()))
    return sched::kDefaultCost;
  return estimate->seconds;
}

FailureOr<sched::ScheduleGraph>
ScheduleGraphBuilder::build(Block &block, Operation *terminator,
                            SmallVectorImpl<Operation *> &ops) {
  using sched::Node;
  using sched::NodeKind;
  DenseMap<Operation *, unsigned> indexOf;
  for (Operation &op : block) {
    if (&op == terminator)
      break;
    indexOf[&op] = ops.size();
    ops.push_back(&op);
  }
  unsigned n = ops.size();
  sched::ScheduleGraph graph;
  graph.nodes.resize(n);
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
    Operation *op = ops[i];
    node.kind = isa<AsyncStartOpInterface>(op) ? NodeKind::Start
                : isa<CollectivePermuteDoneOp, CollectiveDoneOp>(op)
                    ? NodeKind::Done
                    : NodeKind::Compute;
    llvm::SmallSetVector<Value, 2> tokens;
    op->walk([&](Operation *inner) {
      for (Value operand : inner->getOperands()) {
        if (isDefinedInside(operand, op))
          continue;
        bool isToken = isa<TokenType>(operand.getType());
        if (isToken)
          tokens.insert(operand);
        std::optional<unsigned> def = nodeOf(operand.getDefiningOp());
        if (!def)
          continue;
        if (isToken && graph.nodes[*def].kind == NodeKind::Start)
          graph.addAsyncEdge(*def, i);
        else
          graph.addEdge(*def, i);
      }
    });
    for (Value token : tokens) {
      if (nodeOf(token.getDefiningOp()))
        continue;
      node.waitsOnEntry = true;
      if (!isa<BlockArgument>(token) || token.getParentBlock() != &block)
        capturedTokens.insert(token);
    }
    node.consumes = tokens.size();
    node.produces =
        llvm::count_if(op->getResultTypes(), llvm::IsaPred<TokenType>);
  }
  graph.entryInFlight += capturedTokens.size();
  if (terminator)
    for (Value operand : terminator->getOperands()) {
      if (!isa<TokenType>(operand.getType()))
        continue;
      ++graph.exitInFlight;
      // Only a start's transfer is played; a token from any other op (a
      // buffer permute, an scf.if) is opaque work done by then.
      std::optional<unsigned> def = nodeOf(operand.getDefiningOp());
      if (def && graph.nodes[*def].kind == NodeKind::Start)
        graph.nodes[*def].leavesBlock = true;
    }

  // In-place writes: an op that overwrites a tensor it takes as destination
  // (a start's receive buffer, an insert_slice's, an einsum's accumulator)
  // stays after the earlier readers of that tensor and its views, so that
  // bufferization writes in place as it did before (no copy, no extra
  // buffer) and a start's send buffer is not reused before its done.
  for (unsigned i = 0; i < n; ++i) {
    for (OpOperand &operand : ops[i]->getOpOperands()) {
      if (!writesInPlace(operand, bufferizationState))
        continue;
      SmallVector<Operation *> readers;
      collectReaders(operand.get(), readers);
      for (Operation *reader : readers)
        if (std::optional<unsigned> j = nodeOf(reader))
          if (*j < i)
            graph.addEdge(*j, i);
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
  SmallVector<bool> touchesMemory(n);
  for (unsigned i = 0; i < n; ++i) {
    effects.push_back(getOrderingEffects(ops[i]));
    touchesMemory[i] = !effects.back() || !effects.back()->empty();
  }
  std::optional<unsigned> lastBarrier;
  for (unsigned i = 0; i < n; ++i) {
    if (lastBarrier)
      graph.addEdge(*lastBarrier, i);
    if (!effects[i]) {
      for (unsigned j = lastBarrier ? *lastBarrier + 1 : 0; j < i; ++j)
        graph.addEdge(j, i);
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
        graph.addEdge(j, i);
    }
  }
  graph.finalize();

  // Costs and slots.
  for (unsigned i = 0; i < n; ++i) {
    Node &node = graph.nodes[i];
    FailureOr<double> cost = costOf(ops[i], touchesMemory[i]);
    if (failed(cost))
      return failure();
    node.cost = *cost;
    int regionPeak = 0;
    if (auto summary = summaries.find(ops[i]); summary != summaries.end())
      regionPeak = summary->second.peak;
    else if (ops[i]->getNumRegions() > 0)
      // Regions this scheduler does not order: each start in them may be in
      // flight at once.
      ops[i]->walk([&](AsyncStartOpInterface) { ++regionPeak; });
    node.slots = std::max({node.consumes, node.produces, regionPeak});
  }

  // What each start sends; planTransfers routes it.
  for (unsigned i = 0; i < n; ++i) {
    if (graph.nodes[i].kind != NodeKind::Start)
      continue;
    auto collective = cast<CollectiveOpInterface>(ops[i]);
    FailureOr<const MachineModel *> machine =
        machines.getOrEmitError(ops[i], symbols);
    if (failed(machine))
      return failure();
    sched::Transfer &transfer = graph.nodes[i].transfer;
    transfer.machine = *machine;
    // The buffers held until the done: the destination and the input.
    auto start = cast<AsyncStartOpInterface>(ops[i]);
    graph.nodes[i].bytes =
        getStaticBytes(start.getDest().getType()).value_or(0) +
        getStaticBytes(start.getInput().getType()).value_or(0);
    // The memory the transfers may hold: the chip's HBM, unless the pass
    // says otherwise.
    if (*machine && (*machine)->hardware.hbmCapacity > 0)
      graph.memoryBudget =
          std::min(graph.memoryBudget, (*machine)->hardware.hbmCapacity);
    ArrayRef<int16_t> axes = collective.getGridAxes();
    transfer.axes.assign(axes.begin(), axes.end());
    // The bytes the cost model prices the transfer by (the payload).
    transfer.bytes = getStaticBytes(collective.getPayloadType());
    if (std::optional<CollectiveKind> kind = collective.getCollectiveKind()) {
      transfer.kind = sched::Transfer::Kind::Collective;
      transfer.collective = *kind;
      continue;
    }
    transfer.kind = sched::Transfer::Kind::Permute;
    for (auto [source, target] : collective.getSourceTargetPairs())
      transfer.pairs.emplace_back(source, target);
  }
  sched::planTransfers(graph);

  LLVM_DEBUG({
    llvm::dbgs() << "[ovl-schedule] block of "
                 << (block.getParentOp()
                         ? block.getParentOp()->getName().getStringRef()
                         : "?")
                 << ": " << n << " ops, " << graph.entryInFlight
                 << " transfers in flight at entry, " << graph.exitInFlight
                 << " at exit\n";
    for (auto [i, node] : llvm::enumerate(graph.nodes)) {
      llvm::dbgs() << "[ovl-schedule]   node " << i << " ("
                   << sched::stringifyNodeKind(node.kind)
                   << "): " << ops[i]->getName() << " at " << ops[i]->getLoc()
                   << ", cost " << node.cost << " s";
      if (node.kind == NodeKind::Start)
        llvm::dbgs() << ", transfer " << node.latency << " s alone";
      if (node.slots)
        llvm::dbgs() << ", " << node.slots << " slots";
      llvm::dbgs() << "\n";
    }
  });
  return graph;
}

unsigned mlir::ovl::applyOrder(Block &block, Operation *terminator,
                               ArrayRef<Operation *> ops,
                               ArrayRef<unsigned> order) {
  unsigned moved = 0;
  for (auto [position, index] : llvm::enumerate(order)) {
    if (position != index)
      ++moved;
    if (terminator)
      ops[index]->moveBefore(terminator);
    else
      ops[index]->moveBefore(&block, block.end());
  }
  return moved;
}
