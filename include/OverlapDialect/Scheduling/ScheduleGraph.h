//===- ScheduleGraph.h - The dependency graph of one block ------*- C++ -*-===//
//
// What the latency-hiding scheduler orders: the ops of one block as nodes
// (compute, the start of an asynchronous transfer, its done) with their
// costs, the transfer slots they hold, their dependencies and, for each
// start, what it sends and how its transfers share links. Built from IR by
// `ovl-schedule`'s adapter (lib/Dialect/Ovl/Transforms/ScheduleGraphBuilder)
// or by hand in tests. No MLIR IR here: a node is known by its index, the
// position of its op in the block.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAPDIALECT_SCHEDULING_SCHEDULEGRAPH_H
#define OVERLAPDIALECT_SCHEDULING_SCHEDULEGRAPH_H

#include "OverlapDialect/CostModel/CollectiveKind.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

namespace mlir {
namespace ovl {
struct MachineModel;

namespace sched {

/// The time, in seconds, of an op the cost model cannot price (an unknown
/// op, dynamic shapes), and of a transfer it cannot price: about a
/// collective's launch overhead, small next to the einsums a schedule is
/// about.
constexpr double kDefaultCost = 1e-6;

enum class NodeKind : uint8_t { Compute, Start, Done };

/// "compute", "start", "done", for traces.
const char *stringifyNodeKind(NodeKind kind);

/// What a start sends, every group along `axes` of the grid placed on
/// `machine` at once, `bytes` from each device: a permute's pairs of group
/// indices, or a collective of kind `collective`. `machine` is null and
/// `bytes` empty when the cost model cannot price it.
struct Transfer {
  enum class Kind : uint8_t { Permute, Collective };
  Kind kind = Kind::Permute;
  const MachineModel *machine = nullptr;
  llvm::SmallVector<int16_t, 2> axes;
  std::optional<double> bytes;
  std::vector<std::pair<int64_t, int64_t>> pairs;
  CollectiveKind collective = CollectiveKind::AllGather;
};

/// Transfers of one start whose routes have as many hops and that split
/// over as many ports: LinkFlows plays them as one flow.
struct TransferGroup {
  /// The launch and the hops' latency, before the data moves.
  double setup = 0;
  /// The share of the start's bytes each of them streams: 1 / ports.
  double share = 1;
  /// The link classes (see ScheduleGraph) these transfers cross, with how
  /// many of them cross each link of the class.
  llvm::SmallVector<std::pair<unsigned, int>, 2> linkLoads;
};

/// The share of a block's memory budget its transfers may hold counted from
/// their inputs (ScheduleGraph::heldBytesPeak) before the schedule keeps
/// their inputs short: the rest is for what the graph does not see (the
/// weights, the activations).
constexpr double kHeldMemoryShare = 0.25;

/// One op of the block.
struct Node {
  NodeKind kind = NodeKind::Compute;
  /// Time on the device's stream: the op's compute, a blocking collective's
  /// transfer, a loop's scheduled body times its trip count; 0 for starts
  /// and dones.
  double cost = 0;
  /// A start's transfer. `stream` is the time of its bytes at a link's
  /// bandwidth; its transfers (one per pair, in every group of the grid)
  /// go as `groups`: each waits out its setup, then streams, sharing each
  /// link with the other transfers streaming over it. `latency` is the time
  /// the slowest takes alone: its done completes no earlier. planTransfers
  /// derives the last three from `transfer`; tests may set them by hand.
  Transfer transfer;
  /// A start: the bytes of the buffers its transfer holds until its done
  /// (the destination, and the input kept for the send).
  double bytes = 0;
  double stream = 0;
  llvm::SmallVector<TransferGroup, 1> groups;
  double latency = 0;
  /// Tokens the op completes or passes on (its token operands and the ones
  /// its regions use from outside), and token results.
  int consumes = 0;
  int produces = 0;
  /// Transfer slots the op holds at its peak: max(consumes, produces, the
  /// peak of its scheduled regions).
  int slots = 0;
  /// Must follow a done of the block: uses the data it delivers, directly
  /// or through other ops (set by finalize).
  bool usesDone = false;
  /// A transitive predecessor of a start of the block (set by finalize).
  bool feedsStart = false;
  /// Consumes a token from outside the block (a loop's carried transfer).
  bool waitsOnEntry = false;
  /// A start whose token the terminator passes on (to the next iteration).
  bool leavesBlock = false;
  /// Sorted, without duplicates once finalized; edges go forwards in the
  /// block.
  llvm::SmallVector<unsigned, 4> preds, succs;
  /// The starts whose token the op consumes: the edge carries the transfer.
  llvm::SmallVector<unsigned, 1> asyncPreds;
};

/// The dependency graph of one block, without its terminator.
struct ScheduleGraph {
  llvm::SmallVector<Node, 0> nodes;
  /// Transfers in flight when the block begins (token arguments, tokens its
  /// ops use from outside) and when it ends (tokens the terminator passes
  /// on).
  int entryInFlight = 0;
  int exitInFlight = 0;
  /// Links crossed by as many transfers of each group of the block's
  /// starts form one class: they are loaded alike whatever is in flight
  /// (numbered by planTransfers).
  unsigned numLinkClasses = 0;
  /// The most bytes the block's own transfers may hold in flight at once
  /// (their nodes' `bytes`): a prefetch must not exceed memory. Transfers
  /// that cross the block's boundary are not counted.
  double memoryBudget = std::numeric_limits<double>::infinity();

  /// Node `to` depends on node `from`, earlier in the block.
  void addEdge(unsigned from, unsigned to);
  /// Node `to` consumes the token of start `from`.
  void addAsyncEdge(unsigned from, unsigned to);
  /// Once every edge is in: sorts and dedups the edges, fills `succs` and
  /// the nodes' usesDone and feedsStart.
  void finalize();

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
  /// The bytes in flight after node `i`, when `bytes` are before it (in
  /// program order): a start adds its buffers, a done frees those of the
  /// starts whose tokens it consumes.
  double bytesAfter(unsigned i, double bytes) const {
    const Node &node = nodes[i];
    if (node.kind == NodeKind::Start)
      bytes += node.bytes;
    for (unsigned start : node.asyncPreds)
      bytes -= nodes[start].bytes;
    return bytes;
  }
  /// The most bytes the block's transfers hold at once in `order`, each
  /// start's buffers counted from its latest predecessor, the op computing
  /// what it sends (from the start itself without one: an input from
  /// outside the block is live anyway), to its done, which keeps that input
  /// for the send. bytesAfter counts them from the start only: where a
  /// start goes does not end its input's life before the done. With
  /// `toLastUser`, to the last of the done's users instead (what it
  /// received stays live until then; a done without users in the block is
  /// still counted to the done).
  double heldBytesPeak(llvm::ArrayRef<unsigned> order,
                       bool toLastUser = false) const;
  /// `seeds` and every node they depend on (`up`) or that depends on them.
  llvm::BitVector closure(llvm::ArrayRef<unsigned> seeds, bool up) const;
};

} // namespace sched
} // namespace ovl
} // namespace mlir

#endif // OVERLAPDIALECT_SCHEDULING_SCHEDULEGRAPH_H
