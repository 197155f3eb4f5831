//===- RingLoop.h - Building ring loops over a device group -----*- C++ -*-===//
//
// The machinery the Looped CollectiveEinsum rewrites share. A ring plan
// describes chains of data moving round a group of N devices: shards being
// gathered (AllGather) or partial sums travelling to their owner
// (ReduceScatter). Each round a chain holds one shard, named by an affine
// function of the round: (id + base + perRound * round) mod N. The plan's
// rounds are emitted as straight-line code around one scf.for over the
// longest run of rounds with the same structure, unrolled as asked.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAP_LIB_DIALECT_OVL_TRANSFORMS_RINGLOOP_H
#define OVERLAP_LIB_DIALECT_OVL_TRANSFORMS_RINGLOOP_H

#include "OverlapDialect/Dialect/Ovl/Transforms/Transforms.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir::ovl {

/// One chain of a ring plan.
struct RingChain {
  /// In round r the chain holds shard (id + base + perRound * r) mod N.
  int64_t base = 0;
  int64_t perRound = 0;
  /// Ring positions its data moves per permute; positive is towards lower
  /// device indices (device i sends to i - shift).
  int64_t shift = 0;
  /// The rounds, inclusive, in which its shard takes part in a computation.
  int64_t firstRound = 0;
  int64_t lastRound = 0;
  /// The first round after which the chain moves: gathered shards move
  /// from round 0 on, partial sums once they hold something.
  int64_t firstMove = 0;
  /// A hop after the last round (ReduceScatter chains that end next to
  /// their owner); 0 for none.
  int64_t finalShift = 0;

  bool computesIn(int64_t round) const {
    return round >= firstRound && round <= lastRound;
  }
  /// How far the chain moves at the end of `round` (0: it does not).
  int64_t moveAfter(int64_t round) const {
    if (round < firstMove || round > lastRound)
      return 0;
    return round < lastRound ? shift : finalShift;
  }
};

/// Chains and the rounds they run for.
struct RingPlan {
  SmallVector<RingChain> chains;
  /// Chains whose partial einsums are computed together, as one einsum on
  /// concatenated operands (the bidirectional directions).
  SmallVector<SmallVector<unsigned>> groups;
  int64_t numRounds = 0;
  /// The emitter of round r moves the chains after round r and then
  /// computes round r + 1 (round 0 is computed before the rounds), so that
  /// a round's einsum runs while the previous round's transfer is in
  /// flight even when it adds into what that transfer brings. Rounds are
  /// alike when they move alike and the next rounds compute alike.
  bool computeAhead = false;
};

/// What a decomposed loop does, reduced to what the cost-model gate prices
/// (section 5.5): its permute steps, which of them can overlap an einsum,
/// and the work that cannot. Built by RingShapeBuilder from the same plan,
/// in the same order, as the rewrite emits the loop.
struct RingLoopShape {
  /// Permutes issued together (no einsum between them): one per entry of
  /// `shifts`, each moving one shard `shift` ring positions (device i sends
  /// to i - shift).
  struct Step {
    SmallVector<int64_t, 2> shifts;
    /// An einsum is emitted between the step's permutes and the first use
    /// of what they deliver, so the transfer can run while it computes.
    /// Otherwise the consumer waits for the transfer: it is exposed.
    bool overlapped = false;
  };
  SmallVector<Step> steps;
  /// Shards computed by einsums while no overlapped step is in flight:
  /// before the first overlapped step is issued and from the first use of
  /// the last one's data on (0 when no step overlaps: then nothing does).
  int64_t exposedShards = 0;
  /// Additions of two shards inside the loop (a ReduceScatter's partial
  /// einsum added to the sum a transfer brought), on the compute stream.
  int64_t loopAdds = 0;
  /// After the loop: additions of two result shards (the ReduceScatter
  /// chains' sums), and shards of the einsum computed alone (the owner's
  /// own contribution of a bidirectional ReduceScatter).
  int64_t finalAdds = 0;
  int64_t finalShards = 0;
};

/// Records the events of a ring loop in emission order and classifies its
/// permute steps. Values are opaque ids: the data chains start with, what
/// steps deliver and what einsums accumulate.
class RingShapeBuilder {
public:
  /// A value available before the loop.
  unsigned input();
  /// Permutes issued together, each moving `moves[i].first` by
  /// `moves[i].second` positions; returns the delivered values.
  SmallVector<unsigned> step(ArrayRef<std::pair<unsigned, int64_t>> moves);
  /// An einsum on `shards` shards that reads `values`; returns one new value
  /// per read value (the updated accumulators), or with no `values` one new
  /// value per shard (fresh partial einsums).
  SmallVector<unsigned> compute(ArrayRef<unsigned> values, int64_t shards);
  /// Element-wise additions `lhs[i] + rhs[i]`; returns the sums. Counted in
  /// `loopAdds`; they do not hide transfers.
  SmallVector<unsigned> add(ArrayRef<unsigned> lhs, ArrayRef<unsigned> rhs);
  /// Work after the loop that reads `values` (the chains' additions).
  void use(ArrayRef<unsigned> values);

  /// The shape, with `finalAdds` and `finalShards` left to the caller.
  RingLoopShape finish() const;

private:
  struct Event {
    enum Kind { Step, Compute, Add, Use } kind;
    SmallVector<unsigned, 2> reads;
    SmallVector<unsigned, 2> writes;
    SmallVector<int64_t, 2> shifts;
    int64_t shards = 0;
  };
  SmallVector<Event> events;
  unsigned numValues = 0;
};

/// The shapes of the loops decomposeAllGatherEinsum and
/// decomposeEinsumReduceScatter build for a group of `groupSize` devices.
RingLoopShape getAllGatherLoopShape(int64_t groupSize,
                                    const DecomposeOptions &options);
RingLoopShape getReduceScatterLoopShape(int64_t groupSize,
                                        const DecomposeOptions &options);

/// Emits ring-related IR for one group of a grid.
class RingBuilder {
public:
  /// Creates the partition id at the builder's insertion point.
  RingBuilder(OpBuilder &builder, Location loc, FlatSymbolRefAttr grid,
              DenseI16ArrayAttr axes, int64_t groupSize);

  Location getLoc() const { return loc; }
  int64_t getGroupSize() const { return groupSize; }

  /// (id + base + perRound * round) mod N as an index; `round` is an index
  /// value.
  Value shardIndex(OpBuilder &builder, int64_t base, int64_t perRound,
                   Value round) const;
  /// `shardIndex(...) * size`: where the shard starts along its dim.
  Value shardOffset(OpBuilder &builder, int64_t base, int64_t perRound,
                    Value round, int64_t size) const;
  /// The blocking permute moving `value` `shift` positions round the ring.
  Value permute(OpBuilder &builder, Value value, int64_t shift) const;

private:
  Location loc;
  FlatSymbolRefAttr grid;
  DenseI16ArrayAttr axes;
  int64_t groupSize;
  Value id;
};

/// Emits one round: `round` is the round's index value, `representative`
/// a round with the same structure (the plan's chains compute and move in
/// it exactly as in `round`), `state` the values the rounds thread through.
/// Returns the new state.
using RoundEmitter = function_ref<SmallVector<Value>(
    OpBuilder &builder, Value round, int64_t representative, ValueRange state)>;

/// Emits every round of `plan`: the longest run of at least two rounds of
/// the same structure becomes an scf.for with `unroll` rounds per
/// iteration; the rounds before and after it, and the run's remainder, are
/// straight-line code. Returns the final state.
SmallVector<Value> emitRingRounds(OpBuilder &builder, Location loc,
                                  const RingPlan &plan, unsigned unroll,
                                  SmallVector<Value> state,
                                  RoundEmitter emitRound);

/// The slice [offset, offset + size) of `source` along `dim`.
Value extractAlong(OpBuilder &builder, Location loc, Value source, unsigned dim,
                   OpFoldResult offset, int64_t size);
/// Inserts `slice` into `dest` at `offset` along `dim`.
Value insertAlong(OpBuilder &builder, Location loc, Value slice, Value dest,
                  unsigned dim, OpFoldResult offset);
/// `parts` concatenated along `dim` (the value itself for one part).
Value concatAlong(OpBuilder &builder, Location loc, ValueRange parts,
                  unsigned dim);

} // namespace mlir::ovl

#endif // OVERLAP_LIB_DIALECT_OVL_TRANSFORMS_RINGLOOP_H
