//===- RingLoop.cpp - Building ring loops over a device group -------------===//

#include "RingLoop.h"

#include "OverlapDialect/Dialect/Ovl/IR/OvlOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;
using namespace mlir::ovl;

int64_t mlir::ovl::positiveMod(int64_t value, int64_t n) {
  return ((value % n) + n) % n;
}

Value mlir::ovl::ringPermute(OpBuilder &builder, Location loc, Value value,
                             FlatSymbolRefAttr grid, DenseI16ArrayAttr axes,
                             int64_t groupSize, int64_t shift) {
  SmallVector<int64_t> pairs;
  for (int64_t device = 0; device < groupSize; ++device) {
    pairs.push_back(device);
    pairs.push_back(positiveMod(device - shift, groupSize));
  }
  return CollectivePermuteOp::create(builder, loc, value.getType(), value, grid,
                                     axes, builder.getDenseI64ArrayAttr(pairs));
}

Value mlir::ovl::addTensors(OpBuilder &builder, Location loc, Value a,
                            Value b) {
  if (isa<FloatType>(cast<RankedTensorType>(a.getType()).getElementType()))
    return arith::AddFOp::create(builder, loc, a, b);
  return arith::AddIOp::create(builder, loc, a, b);
}

RingBuilder::RingBuilder(OpBuilder &builder, Location loc,
                         FlatSymbolRefAttr grid, DenseI16ArrayAttr axes,
                         int64_t groupSize)
    : loc(loc), grid(grid), axes(axes), groupSize(groupSize) {
  id = PartitionIdOp::create(builder, loc, builder.getIndexType(), grid, axes);
}

Value RingBuilder::shardIndex(OpBuilder &builder, int64_t base,
                              int64_t perRound, Value round) const {
  // Both coefficients are made non-negative so that the unsigned remainder
  // of a non-negative sum is the ring position; constant rounds fold.
  int64_t step = positiveMod(perRound, groupSize);
  int64_t offset = positiveMod(base, groupSize);
  Value sum = id;
  if (std::optional<int64_t> constant = getConstantIntValue(round)) {
    offset = positiveMod(offset + step * *constant, groupSize);
  } else if (step != 0) {
    Value term = step == 1
                     ? round
                     : arith::MulIOp::create(
                           builder, loc, round,
                           arith::ConstantIndexOp::create(builder, loc, step));
    sum = arith::AddIOp::create(builder, loc, sum, term);
  }
  if (offset != 0)
    sum = arith::AddIOp::create(
        builder, loc, sum,
        arith::ConstantIndexOp::create(builder, loc, offset));
  return arith::RemUIOp::create(
      builder, loc, sum,
      arith::ConstantIndexOp::create(builder, loc, groupSize));
}

Value RingBuilder::shardOffset(OpBuilder &builder, int64_t base,
                               int64_t perRound, Value round,
                               int64_t size) const {
  return arith::MulIOp::create(
      builder, loc, shardIndex(builder, base, perRound, round),
      arith::ConstantIndexOp::create(builder, loc, size));
}

Value RingBuilder::permute(OpBuilder &builder, Value value,
                           int64_t shift) const {
  return ringPermute(builder, loc, value, grid, axes, groupSize, shift);
}

/// What a round does, for finding rounds of the same structure: per chain,
/// whether it computes and how far it moves (computing ahead: how far it
/// moves, whether it computes in the next round and whether it starts
/// there); with fresh starts, whether a result starts in it.
static SmallVector<int64_t> roundSignature(const RingPlan &plan,
                                           int64_t round) {
  SmallVector<int64_t> signature;
  for (const RingChain &chain : plan.chains) {
    if (plan.computeAhead) {
      signature.push_back(chain.computesIn(round + 1));
      signature.push_back(chain.firstRound == round + 1);
    } else {
      signature.push_back(chain.computesIn(round));
      if (plan.freshStart)
        signature.push_back(chain.firstRound == round);
    }
    signature.push_back(chain.moveAfter(round));
  }
  if (plan.freshStart)
    signature.push_back(round == 0);
  return signature;
}

RingRounds mlir::ovl::emitRingRounds(OpBuilder &builder, Location loc,
                                     const RingPlan &plan, unsigned unroll,
                                     SmallVector<Value> state,
                                     RoundEmitter emitRound) {
  // The longest run of rounds that all look alike.
  int64_t bestBegin = 0, bestLength = 0;
  for (int64_t begin = 0; begin < plan.numRounds;) {
    int64_t end = begin + 1;
    SmallVector<int64_t> signature = roundSignature(plan, begin);
    while (end < plan.numRounds && roundSignature(plan, end) == signature)
      ++end;
    if (end - begin > bestLength) {
      bestBegin = begin;
      bestLength = end - begin;
    }
    begin = end;
  }
  int64_t iterations = bestLength >= 2 ? bestLength / unroll : 0;
  int64_t loopEnd = bestBegin + iterations * unroll;

  auto straightLine = [&](int64_t from, int64_t to) {
    for (int64_t round = from; round < to; ++round) {
      auto index = arith::ConstantIndexOp::create(builder, loc, round);
      state = emitRound(builder, index, round, state);
      // Shard indices fold constant rounds; drop the constant if unused.
      if (index->use_empty())
        index->erase();
    }
  };
  if (iterations == 0) {
    straightLine(0, plan.numRounds);
    return {state, nullptr};
  }

  straightLine(0, bestBegin);
  Value lower = arith::ConstantIndexOp::create(builder, loc, 0);
  Value upper = arith::ConstantIndexOp::create(builder, loc, iterations);
  Value one = arith::ConstantIndexOp::create(builder, loc, 1);
  auto loop = scf::ForOp::create(
      builder, loc, lower, upper, one, state,
      [&](OpBuilder &body, Location bodyLoc, Value iteration,
          ValueRange carried) {
        SmallVector<Value> current(carried.begin(), carried.end());
        for (unsigned t = 0; t < unroll; ++t) {
          // round = begin + iteration * unroll + t
          Value round = iteration;
          if (unroll != 1)
            round = arith::MulIOp::create(
                body, bodyLoc, round,
                arith::ConstantIndexOp::create(body, bodyLoc, unroll));
          if (bestBegin + t != 0)
            round = arith::AddIOp::create(
                body, bodyLoc, round,
                arith::ConstantIndexOp::create(body, bodyLoc, bestBegin + t));
          current = emitRound(body, round, bestBegin, current);
        }
        scf::YieldOp::create(body, bodyLoc, current);
      });
  state.assign(loop.getResults().begin(), loop.getResults().end());
  straightLine(loopEnd, plan.numRounds);
  return {state, loop};
}

/// Offsets, sizes and strides of the slice of `type` that is whole except
/// along `dim`, where it starts at `offset` and has `size` elements.
static void sliceAlong(OpBuilder &builder, RankedTensorType type, unsigned dim,
                       OpFoldResult offset, int64_t size,
                       SmallVectorImpl<OpFoldResult> &offsets,
                       SmallVectorImpl<OpFoldResult> &sizes,
                       SmallVectorImpl<OpFoldResult> &strides) {
  for (int64_t d = 0; d < type.getRank(); ++d) {
    offsets.push_back(builder.getIndexAttr(0));
    sizes.push_back(builder.getIndexAttr(type.getDimSize(d)));
    strides.push_back(builder.getIndexAttr(1));
  }
  offsets[dim] = offset;
  sizes[dim] = builder.getIndexAttr(size);
}

Value mlir::ovl::extractAlong(OpBuilder &builder, Location loc, Value source,
                              unsigned dim, OpFoldResult offset, int64_t size) {
  auto type = cast<RankedTensorType>(source.getType());
  SmallVector<OpFoldResult> offsets, sizes, strides;
  sliceAlong(builder, type, dim, offset, size, offsets, sizes, strides);
  SmallVector<int64_t> shape(type.getShape());
  shape[dim] = size;
  auto sliceType = RankedTensorType::get(shape, type.getElementType());
  return tensor::ExtractSliceOp::create(builder, loc, sliceType, source,
                                        offsets, sizes, strides);
}

Value mlir::ovl::insertAlong(OpBuilder &builder, Location loc, Value slice,
                             Value dest, unsigned dim, OpFoldResult offset) {
  auto type = cast<RankedTensorType>(slice.getType());
  SmallVector<OpFoldResult> offsets, sizes, strides;
  sliceAlong(builder, type, dim, offset, type.getDimSize(dim), offsets, sizes,
             strides);
  return tensor::InsertSliceOp::create(builder, loc, slice, dest, offsets,
                                       sizes, strides);
}

Value mlir::ovl::concatAlong(OpBuilder &builder, Location loc, ValueRange parts,
                             unsigned dim) {
  if (parts.size() == 1)
    return parts.front();
  return tensor::ConcatOp::create(builder, loc, dim, parts);
}

bool mlir::ovl::hasEmptyTensor(Operation *op) {
  auto empty = [](Type type) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    return tensor && llvm::is_contained(tensor.getShape(), 0);
  };
  return llvm::any_of(op->getOperandTypes(), empty) ||
         llvm::any_of(op->getResultTypes(), empty);
}
