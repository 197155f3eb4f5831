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
  /// The half of the data a split loop's chain carries (0 or 1; 0 in the
  /// other loops).
  unsigned part = 0;

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
  /// The first computation of a result starts it (no zero fill to add
  /// into): round 0 for AllGather results, a chain's first round for
  /// ReduceScatter sums. Such a round differs from the rest and is emitted
  /// outside the loop.
  bool freshStart = false;
};

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
/// straight-line code.
struct RingRounds {
  /// The state after the last round.
  SmallVector<Value> state;
  /// The scf.for, or null when no run was long enough for one.
  Operation *loop = nullptr;
};
RingRounds emitRingRounds(OpBuilder &builder, Location loc,
                          const RingPlan &plan, unsigned unroll,
                          SmallVector<Value> state, RoundEmitter emitRound);

/// Non-negative representative of `value` mod `n`.
int64_t positiveMod(int64_t value, int64_t n);

/// The blocking ring step over `axes` of `grid` (`groupSize` devices)
/// moving `value` `shift` positions: device i sends to i - shift.
Value ringPermute(OpBuilder &builder, Location loc, Value value,
                  FlatSymbolRefAttr grid, DenseI16ArrayAttr axes,
                  int64_t groupSize, int64_t shift);

/// `a + b`, float or integer.
Value addTensors(OpBuilder &builder, Location loc, Value a, Value b);

/// Whether `op` reads or makes a statically empty tensor (a dimension of
/// size 0): no ring loop is built around one, there is nothing to overlap.
bool hasEmptyTensor(Operation *op);

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
