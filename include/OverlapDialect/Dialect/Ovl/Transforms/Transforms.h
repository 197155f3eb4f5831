//===- Transforms.h - Rewrites of ovl programs for embedders ----*- C++ -*-===//
//
// The decompositions as functions on single ops, so that pipelines, tests
// and embedders can apply them without the pass's candidate selection, and
// the latency-hiding scheduler on any op's regions.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAPDIALECT_DIALECT_OVL_TRANSFORMS_TRANSFORMS_H
#define OVERLAPDIALECT_DIALECT_OVL_TRANSFORMS_TRANSFORMS_H

#include "mlir/Support/LLVM.h"

#include <algorithm>
#include <cstdint>
#include <string>

namespace mlir {
class OpPassManager;
class Operation;
class RewriterBase;

namespace ovl {
class AllGatherOp;
class ReduceScatterOp;
struct MachineModel;
class MachineModelCache;

/// How a collective+einsum pair is decomposed.
struct DecomposeOptions {
  /// Ring steps per loop iteration: 1 or 2.
  unsigned unroll = 1;
  /// Half of the shards go each way round the ring.
  bool bidirectional = false;
};

/// How `ovl-decompose-collective-einsum` decides which decomposable pairs
/// to rewrite (the paper's section 5.5).
enum class DecomposeGate {
  /// Those whose decomposition the cost model prices faster.
  Cost,
  /// All of them, whatever the estimates say.
  Always,
  /// None.
  Never,
};

/// What the cost-model gate finds for one pair, in seconds on one device:
/// the pair as written and the loop the rewrite builds for it (its permutes
/// made asynchronous and cleaned up by addAsyncCleanupPasses, then ordered
/// by `ovl-schedule`'s default scheduler, as `ovl-overlap-pipeline` does),
/// each built on its own with the collectives the pair's einsums also read
/// or feed (the other candidate of a figure 3 einsum, left blocking) and
/// played by the event simulator on every device of the machine. The pair
/// is worth decomposing when the loop is faster.
struct DecompositionEstimate {
  /// The blocking collective and its einsums.
  double blocking = 0;
  double blockingCompute = 0;
  /// The loop and what the rewrite adds around it.
  double decomposed = 0;
  double decomposedCompute = 0;
  /// Devices in the collective's group.
  int64_t groupSize = 0;

  double gain() const { return blocking - decomposed; }
};

/// Builds and prices the pair and its decomposition with `options` on
/// `machine` (built for the collective's grid, one of `machines`, which
/// also prices the scheduler's order), leaving the IR unchanged. Fails,
/// with the reason in `why`, when the pair is not decomposable or cannot be
/// priced.
FailureOr<DecompositionEstimate>
estimateDecomposition(AllGatherOp gather, const MachineModel &machine,
                      MachineModelCache &machines,
                      const DecomposeOptions &options, std::string &why);
FailureOr<DecompositionEstimate>
estimateDecomposition(ReduceScatterOp scatter, const MachineModel &machine,
                      MachineModelCache &machines,
                      const DecomposeOptions &options, std::string &why);

/// Why a pair cannot be decomposed, for remarks; empty when it can.
std::string whyNotDecomposable(AllGatherOp gather);
std::string whyNotDecomposable(ReduceScatterOp scatter);

/// For remarks: which of the paper's cases each einsum of `gather` is.
std::string describeAllGatherCases(AllGatherOp gather);

/// Rewrites `gather` and the einsums it feeds into a ring loop. Fails,
/// changing nothing, when whyNotDecomposable(gather) is not empty.
LogicalResult decomposeAllGatherEinsum(RewriterBase &rewriter,
                                       AllGatherOp gather,
                                       const DecomposeOptions &options);

/// Rewrites `scatter` and the einsum that produces its input into a ring
/// loop. Fails, changing nothing, when whyNotDecomposable(scatter) is not
/// empty.
LogicalResult decomposeEinsumReduceScatter(RewriterBase &rewriter,
                                           ReduceScatterOp scatter,
                                           const DecomposeOptions &options);

/// Splits every `ovl.collective_permute` under `root` into a start at its
/// place and a done before the first use of its result, double-buffering
/// the chains of ring loops (what `ovl-async-collectives` does); returns the
/// number of permutes converted.
unsigned makePermutesAsynchronous(Operation *root);

/// The collectives `ovl-async-collectives` splits into start/done pairs.
enum class AsyncKind { Permute, AllGather, ReduceScatter, AllReduce };

/// Splits every `ovl.all_gather`, `ovl.reduce_scatter` or `ovl.all_reduce`
/// under `root` whose kind is in `kinds` (Permute is ignored) into a start
/// at its place, into a fresh destination, and a done before the first use
/// of its result; returns the number converted.
unsigned makeCollectivesAsynchronous(Operation *root,
                                     ArrayRef<AsyncKind> kinds);

/// Adds what `ovl-overlap-pipeline` runs on a function between decomposing
/// and scheduling: `ovl-async-collectives`, canonicalize (which inlines
/// ring loops of one iteration, so the scheduler sees their steps beside
/// the prologue's) and CSE. The gate prices its loops after the same passes.
/// With `allCollectives`, every collective becomes asynchronous, not only
/// the permutes.
void addAsyncCleanupPasses(OpPassManager &funcPm, bool allCollectives = false);

/// Which list scheduler `ovl-schedule` runs.
enum class ScheduleAlgorithm {
  /// From the terminator upwards with ready and pending queues (the paper's
  /// algorithm 2).
  BottomUp,
  /// Forwards: starts as early, dones as late as allowed, after rebalancing
  /// the work between transfers by cost.
  TopDown,
};

/// How `ovl-schedule` orders blocks.
struct ScheduleOptions {
  ScheduleAlgorithm algorithm = ScheduleAlgorithm::BottomUp;
  /// Asynchronous transfers in flight at once; 0 takes the hardware's
  /// `dmaSlots`.
  unsigned maxInFlight = 0;
  /// Bytes a block's transfers in flight may hold (0: the hardware's HBM).
  double memoryBudget = 0;
};

/// What scheduling did.
struct ScheduleResult {
  /// Blocks ordered.
  unsigned blocks = 0;
  /// Operations whose position in their block changed.
  unsigned movedOps = 0;
  /// Blocks whose dependencies force more transfers in flight than the
  /// budget (each gets a warning where it happens).
  unsigned overBudgetBlocks = 0;
  /// The most transfers in flight at any point of any block scheduled.
  unsigned peakInFlight = 0;
};

/// Reorders the operations of every block in the regions of `root` (and of
/// the control flow and loops nested in them, innermost first) so that
/// asynchronous permutes overlap computation, with at most the budget of
/// transfers in flight; never moves an op across blocks or a terminator.
/// Costs come from `machines`: its hardware prices compute and its machine
/// for each collective's grid prices the transfer. Fails, with an error at
/// the op concerned, when the hardware or a grid's machine cannot be built.
FailureOr<ScheduleResult> scheduleRegions(Operation *root,
                                          MachineModelCache &machines,
                                          const ScheduleOptions &options);

} // namespace ovl
} // namespace mlir

#endif // OVERLAPDIALECT_DIALECT_OVL_TRANSFORMS_TRANSFORMS_H
