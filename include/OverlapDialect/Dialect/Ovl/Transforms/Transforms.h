//===- Transforms.h - Rewrites of ovl programs for embedders ----*- C++ -*-===//
//
// The decompositions as functions on single ops, so that pipelines, tests
// and embedders can apply them without the pass's candidate selection, and
// the latency-hiding scheduler on any op's regions.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAPDIALECT_DIALECT_OVL_TRANSFORMS_TRANSFORMS_H
#define OVERLAPDIALECT_DIALECT_OVL_TRANSFORMS_TRANSFORMS_H

#include "OverlapDialect/Gate/Forms.h"
#include "OverlapDialect/Scheduling/BlockScheduleCache.h"

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mlir {
class Block;
class MLIRContext;
class OpPassManager;
class Operation;
class PassManager;
class RewriterBase;

namespace ovl {
class AllGatherOp;
class ReduceScatterOp;
struct MachineModel;
class MachineModelCache;

/// The most rounds (devices in the gather's group) for which the gate
/// prices the gather-scatter form by default: pricing plays every round.
/// With 64, GPT-512B's training step took 46 s to compile instead of 11,
/// and the form was chosen nowhere.
constexpr int64_t kMaxGatherScatterRounds = 16;

/// The loops the options allow for `collective` (an all_gather or
/// reduce_scatter), in the order a tie is broken in: fewer steps per
/// iteration first, then one way round, then whole shards (the simpler
/// loop), then the gather-scatter form. A split loop needs a dim to split
/// (getSplitDim); where the pair has none, it is the bidirectional loop
/// instead.
SmallVector<DecomposeOptions, 6>
getLoopVariants(Operation *collective, UnrollChoice unroll,
                DirectionChoice direction,
                GatherScatterChoice gatherScatter = GatherScatterChoice::Auto);

/// The loop `options` ask for, as `collective` can be built: a split loop
/// without a dim to split is the bidirectional one, the gather-scatter form
/// of a collective that does not qualify its unidirectional loop.
DecomposeOptions resolveLoop(Operation *collective, DecomposeOptions options);

/// The dim a split loop halves: of the gathered operand (all_gather) or of
/// the scattered result (reduce_scatter), the outermost of even size other
/// than the collective's own dim whose letter is free in each einsum (in its
/// result and in one input only). None when the pair has no such dim or is
/// not decomposable.
std::optional<unsigned> getSplitDim(Operation *collective);

/// What the window of a collective holds besides it, and what to price.
struct FormContext {
  /// The gate may make collectives asynchronous (`async-collectives`): the
  /// collective's asynchronous form is priced, and the window's other
  /// collectives are asynchronous as the gate leaves them by default (else
  /// all forms are priced beside blocking ones).
  bool asyncCollectives = false;
  /// Collectives decomposed wherever they are in the window (those chosen
  /// already), each with its loop.
  ArrayRef<std::pair<Operation *, DecomposeOptions>> decomposed;
  /// Price the collective's own decomposition, when it has one.
  bool priceDecomposition = true;
};

/// What the gate's pricing made, for what comes back. Valid for one
/// MachineModelCache.
struct PricingCache {
  /// Estimates by the window they priced (its copy printed, with the
  /// collective and the context's decompositions marked, and what was
  /// priced): the layers of a model repeat the same windows, each priced
  /// once.
  std::map<std::string, CollectiveEstimate> estimates;
  /// Lookups answered from `estimates`.
  unsigned hits = 0;
  /// The blocks the forms' scheduling ordered: a ring loop's body comes
  /// back in every form and round that builds it.
  sched::BlockScheduleCache schedules;
  /// A collective's window in the IR as it is, and the digest of its copy
  /// printed (empty until a key needs it), or why it has none.
  struct Window {
    SmallVector<Operation *> ops;
    std::string printed;
    std::string why;
  };
  /// By collective: they hold the IR's ops, clear them when it changes.
  llvm::DenseMap<Operation *, Window> windows;
  /// The forms' clean-up pipeline (addAsyncCleanupPasses), built once: a
  /// pass manager gathers its passes' patterns the first time it runs. A
  /// copy (a pass's clone, which may run on another thread) builds its own.
  class Cleanup {
  public:
    Cleanup();
    Cleanup(const Cleanup &);
    Cleanup &operator=(const Cleanup &);
    ~Cleanup();
    /// The pipeline on `func.func`, for `context`.
    PassManager &get(MLIRContext *context);

  private:
    std::unique_ptr<PassManager> passes;
  } cleanup;
};

/// Builds and prices the forms of `collective` (an `ovl.all_gather`,
/// `ovl.reduce_scatter` or `ovl.all_reduce`) on `machine` (built for its
/// grid, one of `machines`, which also prices the scheduler's order), the
/// decomposition as each of `loops` (at least one), leaving the IR
/// unchanged; a window priced before is taken from `cache` when given.
/// Fails, with the reason in `why`, when a form cannot be built or priced.
FailureOr<CollectiveEstimate> estimateCollectiveForms(
    Operation *collective, const MachineModel &machine,
    MachineModelCache &machines, ArrayRef<DecomposeOptions> loops,
    const FormContext &context, PricingCache *cache, std::string &why);

/// The simulated step time of `block` (its ops but the terminator) on
/// `machine`, built as the pipeline would: the collectives of
/// `context.decomposed` decomposed as each one's loop says, the others
/// asynchronous if `context.asyncCollectives`, then cleaned up and
/// scheduled (taking the schedules of `cache` when given); the IR is left
/// unchanged. Fails, with the reason in `why`, when the block cannot be
/// built or priced.
FailureOr<double> estimateBlock(Block *block, const MachineModel &machine,
                                MachineModelCache &machines,
                                const FormContext &context, PricingCache *cache,
                                std::string &why);

/// Why a pair cannot be decomposed, for remarks; empty when it can.
std::string whyNotDecomposable(AllGatherOp gather);
std::string whyNotDecomposable(ReduceScatterOp scatter);

/// Why `collective` cannot be decomposed (an all_reduce never can); empty
/// when it is a decomposable all_gather or reduce_scatter.
std::string whyNotDecomposable(Operation *collective);

/// The einsums a decomposition of `collective` rewrites with it (the
/// gather's first users that its loop computes, see getLoopEinsums; the
/// einsums whose sum a scatter reads, see getScatteredEinsums); empty when
/// it cannot be decomposed.
SmallVector<Operation *, 2> getDecomposedEinsums(Operation *collective);

/// What a decomposition built, for a caller that goes on transforming it
/// (as Linalg's transforms return the ops they make).
struct DecomposedCollective {
  /// The `scf.for` over the ring's rounds of the same structure; null when
  /// the ring has too few rounds for a loop and every round is
  /// straight-line code.
  Operation *loop = nullptr;
};

/// Rewrites a decomposable `ovl.all_gather` or `ovl.reduce_scatter` into its
/// ring loop with decomposeAllGatherEinsum or decomposeEinsumReduceScatter.
/// Fails, changing nothing, when whyNotDecomposable(collective) is not
/// empty.
FailureOr<DecomposedCollective>
decomposeCollective(RewriterBase &rewriter, Operation *collective,
                    const DecomposeOptions &options);

/// getSplitDim for each kind.
std::optional<unsigned> getSplitDim(AllGatherOp gather);
std::optional<unsigned> getSplitDim(ReduceScatterOp scatter);

/// The einsums the loop of `gather` computes: its users from the first in
/// program order, as long as none reads another's result before the last
/// of them; its other users read the gathered tensor the loop assembles.
/// Empty when it cannot be decomposed.
SmallVector<Operation *, 2> getLoopEinsums(AllGatherOp gather);

/// The einsums whose sum `scatter` reads: the producer of its input, or the
/// einsums an addition tree (arith.addf, arith.addi) of single-use values
/// sums up. Empty when it cannot be decomposed.
SmallVector<Operation *, 2> getScatteredEinsums(ReduceScatterOp scatter);

/// For remarks: which of the paper's cases each einsum of `gather` is.
std::string describeAllGatherCases(AllGatherOp gather);

/// Rewrites `gather` and the einsums it feeds into a ring loop. Fails,
/// changing nothing, when whyNotDecomposable(gather) is not empty.
FailureOr<DecomposedCollective>
decomposeAllGatherEinsum(RewriterBase &rewriter, AllGatherOp gather,
                         const DecomposeOptions &options);

/// Rewrites `scatter` and the einsum that produces its input into a ring
/// loop. Fails, changing nothing, when whyNotDecomposable(scatter) is not
/// empty.
FailureOr<DecomposedCollective>
decomposeEinsumReduceScatter(RewriterBase &rewriter, ReduceScatterOp scatter,
                             const DecomposeOptions &options);

/// Why `scatter`, its einsum and the all_gather of the einsum's operand
/// cannot be decomposed together (the gathered letter free and scattered,
/// on disjoint axes, the gather's group a multiple of the scatter's);
/// empty when they can.
std::string whyNotDecomposableTogether(ReduceScatterOp scatter);

/// The all_gather decomposeGatherEinsumScatter would rewrite with
/// `scatter`; null when the pair does not qualify.
AllGatherOp getGatherDecomposedWith(ReduceScatterOp scatter);

/// Whether the gather-scatter form of `scatter` can be split: it
/// qualifies and the gathered shards have an even size to halve.
bool canSplitGatherScatter(ReduceScatterOp scatter);

/// Rewrites `scatter`, its einsum and the all_gather feeding the einsum
/// into rounds in which the gathered shards go round the gather's axes and
/// the partial sums round the scatter's, both at once (the gather-scatter
/// form); `split`, each half of every shard goes its own way round the
/// gather's ring. Fails, changing nothing, when
/// whyNotDecomposableTogether(scatter) is not empty or a split is asked of
/// a pair that cannot be split.
FailureOr<DecomposedCollective>
decomposeGatherEinsumScatter(RewriterBase &rewriter, ReduceScatterOp scatter,
                             bool split = false);

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
/// of its result (one whose result has a dynamic shape stays blocking);
/// returns the number converted.
unsigned makeCollectivesAsynchronous(Operation *root,
                                     ArrayRef<AsyncKind> kinds);

/// Splits one `ovl.all_gather`, `ovl.reduce_scatter` or `ovl.all_reduce`
/// as makeCollectivesAsynchronous does; fails, changing nothing, on other
/// ops and on a result of dynamic shape.
LogicalResult makeCollectiveAsynchronous(RewriterBase &rewriter,
                                         Operation *collective);

/// Adds what `ovl-overlap-pipeline` runs on a function between decomposing
/// and scheduling: `ovl-async-collectives`, canonicalize (which inlines
/// ring loops of one iteration, so the scheduler sees their steps beside
/// the prologue's) and CSE. The gate prices its forms after the same passes.
void addAsyncCleanupPasses(OpPassManager &funcPm);

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
  /// The judgements the scheduler may spend improving the order of a block
  /// the event simulator judges move by move (see sched::improve; the gate
  /// lowers it for the windows it prices).
  unsigned simulatedImproveReplays = sched::kImproveReplays;
  /// Blocks scheduled before, whose schedules a block with the same graph
  /// takes (the gate's pricing builds the same blocks again); none when
  /// null. Valid for the MachineModelCache the scheduler is given.
  sched::BlockScheduleCache *schedules = nullptr;
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
