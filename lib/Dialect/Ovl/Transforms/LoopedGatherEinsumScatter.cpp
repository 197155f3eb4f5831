//===- LoopedGatherEinsumScatter.cpp - Both collectives of one einsum -----===//
//
// Rewrites an ovl.all_gather along one set of grid axes (A, N devices), the
// einsum it feeds and the ovl.reduce_scatter of that einsum along another
// (B, M devices) into rounds in which both move at once, when the gathered
// letter is free and is the one scattered (the 2-D strategy's einsums: the
// figure 3 MLP's second one, GPT's output projections) and M divides N.
//
// Device (x, y), x its index in B and y in A, first receives the shard of
// (x, y - x·G) (G = N / M): the rows of A are rotated by G per row of B.
// In round k it holds shard (y - x·G + k) mod N, passed round A's ring as
// an all_gather loop passes it, and computes that shard's columns of its
// partial result. Device x + 1 holds the same shard G rounds later, so the
// column sum travels B's ring one hop per G rounds, each device adding its
// part: rounds 0..G-1 start sums, rounds N-G..N-1 complete them, and a
// completed sum goes to its owner, the device of B whose result holds it
// (owner ((y + k') div G - x - 1) mod M in round N-G+k'), into slot
// (y + k') mod G of that result. Every round computes one shard, every
// transfer but the last is hidden behind a later round, and the gathered
// tensor is never whole on any device.
//
// The rounds are straight-line code: the last G rounds each send to a
// different set of owners, and the first G start sums.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/Dialect/Ovl/Transforms/Transforms.h"

#include "RingLoop.h"

#include "OverlapDialect/Dialect/Ovl/IR/OvlOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

#include <algorithm>
#include <deque>

using namespace mlir;
using namespace mlir::ovl;

namespace {

/// The pair and its shape, once it is known to qualify.
struct GatherScatterLayout {
  AllGatherOp gather;
  EinsumOp einsum;
  unsigned gatheredInput = 0;
  /// Where the gathered and scattered letter is in the einsum's result.
  unsigned resultDim = 0;
  /// Devices along the gather's axes (N) and the scatter's (M).
  int64_t gatherGroup = 0, scatterGroup = 0;
};

std::optional<int64_t> staticGroupSize(Operation *op,
                                       SymbolTableCollection &symbols) {
  std::optional<int64_t> size =
      cast<CollectiveOpInterface>(op).getGroupSize(symbols);
  if (!size || ShapedType::isDynamic(*size))
    return std::nullopt;
  return size;
}

FailureOr<GatherScatterLayout> analyze(ReduceScatterOp scatter,
                                       std::string &why) {
  auto fail = [&](StringRef reason) {
    why = reason.str();
    return failure();
  };
  if (scatter->hasAttr("ovl.no_decompose"))
    return fail("the reduce_scatter has the ovl.no_decompose attribute");
  if (scatter.getReduction() != ReductionKind::Sum)
    return fail("the reduce_scatter does not sum");
  auto einsum = scatter.getInput().getDefiningOp<EinsumOp>();
  if (!einsum || einsum->getBlock() != scatter->getBlock())
    return fail("its input is not an einsum of its block");
  if (!einsum.getResult().hasOneUse())
    return fail("the einsum's result has other users");
  if (einsum.getInputs().size() != 2 || einsum.getAcc())
    return fail("the einsum does not have two inputs and no accumulator");
  if (llvm::any_of(einsum->getOperandTypes(), [](Type type) {
        return !cast<RankedTensorType>(type).hasStaticShape();
      }))
    return fail("the einsum has dynamic shapes");
  GatherScatterLayout layout;
  layout.einsum = einsum;
  // The rounds replace the scatter, and assemble the gathered tensor for
  // its other users: those must come after it.
  Block *block = scatter->getBlock();
  auto usedAfterOnly = [&](AllGatherOp gather) {
    return llvm::all_of(gather.getResult().getUses(), [&](OpOperand &use) {
      if (use.getOwner() == einsum)
        return true;
      Operation *at = block->findAncestorOpInBlock(*use.getOwner());
      return at && scatter->isBeforeInBlock(at);
    });
  };
  if (einsum.getInputs()[0] == einsum.getInputs()[1])
    return fail("the einsum reads one tensor twice");
  for (unsigned input = 0; input < 2 && !layout.gather; ++input) {
    auto gather = einsum.getInputs()[input].getDefiningOp<AllGatherOp>();
    if (gather && gather->getBlock() == block &&
        gather.getGrid() == scatter.getGrid() &&
        !gather->hasAttr("ovl.no_decompose") && usedAfterOnly(gather)) {
      layout.gather = gather;
      layout.gatheredInput = input;
    }
  }
  if (!layout.gather)
    return fail("no operand of the einsum is an all_gather used by it and "
                "after the reduce_scatter only");
  EinsumEquation equation = einsum.getParsedEquation();
  char letter =
      equation.getInput(layout.gatheredInput)[layout.gather.getGatherDim()];
  std::optional<unsigned> inResult = equation.findInOutput(letter);
  if (!inResult || equation.findInInput(1 - layout.gatheredInput, letter) ||
      equation.getInput(layout.gatheredInput).count(letter) != 1 ||
      equation.getOutput().count(letter) != 1)
    return fail("the gathered letter is not free in the einsum");
  if (*inResult != scatter.getScatterDim())
    return fail("the scattered letter is not the gathered one");
  layout.resultDim = *inResult;
  ArrayRef<int16_t> gatherAxes = layout.gather.getGridAxes();
  if (llvm::any_of(scatter.getGridAxes(), [&](int16_t axis) {
        return llvm::is_contained(gatherAxes, axis);
      }))
    return fail("the two collectives share a grid axis");
  SymbolTableCollection symbols;
  std::optional<int64_t> n = staticGroupSize(layout.gather, symbols);
  std::optional<int64_t> m = staticGroupSize(scatter, symbols);
  if (!n || !m)
    return fail("a group size is not static");
  if (*n < 2 || *m < 2)
    return fail("a group has a single device");
  if (*n % *m != 0)
    return fail("the gather's group is not a multiple of the scatter's");
  layout.gatherGroup = *n;
  layout.scatterGroup = *m;
  if (hasEmptyTensor(scatter) || hasEmptyTensor(einsum))
    return fail("a tensor of the pair is empty");
  return layout;
}

/// A permute over the group of both collectives' axes, the scatter's first
/// so that device (x, y) has group index x·N + y: (x, y) sends to
/// target(x, y).
Value permute2d(
    OpBuilder &builder, Location loc, Value value, FlatSymbolRefAttr grid,
    DenseI16ArrayAttr axes, int64_t m, int64_t n,
    function_ref<std::pair<int64_t, int64_t>(int64_t, int64_t)> target) {
  SmallVector<int64_t> pairs;
  for (int64_t x = 0; x < m; ++x)
    for (int64_t y = 0; y < n; ++y) {
      auto [tx, ty] = target(x, y);
      pairs.push_back(x * n + y);
      pairs.push_back(tx * n + ty);
    }
  return CollectivePermuteOp::create(builder, loc, value.getType(), value, grid,
                                     axes, builder.getDenseI64ArrayAttr(pairs));
}

} // namespace

std::string mlir::ovl::whyNotDecomposableTogether(ReduceScatterOp scatter) {
  std::string why;
  return succeeded(analyze(scatter, why)) ? "" : why;
}

AllGatherOp mlir::ovl::getGatherDecomposedWith(ReduceScatterOp scatter) {
  std::string why;
  FailureOr<GatherScatterLayout> layout = analyze(scatter, why);
  return succeeded(layout) ? layout->gather : AllGatherOp();
}

LogicalResult mlir::ovl::decomposeGatherEinsumScatter(RewriterBase &rewriter,
                                                      ReduceScatterOp scatter) {
  std::string why;
  FailureOr<GatherScatterLayout> analyzed = analyze(scatter, why);
  if (failed(analyzed))
    return failure();
  const GatherScatterLayout &layout = *analyzed;
  int64_t n = layout.gatherGroup, m = layout.scatterGroup, g = n / m;
  EinsumOp einsum = layout.einsum;
  AllGatherOp gather = layout.gather;
  Location loc = scatter.getLoc();
  auto resultType = cast<RankedTensorType>(scatter.getResult().getType());
  auto shardType = cast<RankedTensorType>(gather.getInput().getType());
  unsigned gatherDim = gather.getGatherDim();
  int64_t width = shardType.getDimSize(gatherDim);
  SmallVector<int64_t> partialShape(
      cast<RankedTensorType>(einsum.getResult().getType()).getShape());
  partialShape[layout.resultDim] = width;
  auto partialType =
      RankedTensorType::get(partialShape, resultType.getElementType());
  bool assemble = !gather.getResult().hasOneUse();

  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(scatter);
  FlatSymbolRefAttr grid = scatter.getGridAttr();
  SmallVector<int16_t> both(scatter.getGridAxes());
  llvm::append_range(both, gather.getGridAxes());
  DenseI16ArrayAttr bothAxes = rewriter.getDenseI16ArrayAttr(both);
  auto constant = [&](OpBuilder &builder, int64_t value) -> Value {
    return arith::ConstantIndexOp::create(builder, loc, value);
  };
  Value y = PartitionIdOp::create(rewriter, loc, rewriter.getIndexType(), grid,
                                  gather.getGridAxesAttr());
  // Where round 0's shard sits in the gathered tensor: y - x·G, as y + (N -
  // x·G mod N) so that the unsigned remainder sees no negative.
  Value firstShard;
  if (assemble) {
    Value x = PartitionIdOp::create(rewriter, loc, rewriter.getIndexType(),
                                    grid, scatter.getGridAxesAttr());
    Value back = arith::SubIOp::create(
        rewriter, loc, constant(rewriter, n),
        arith::MulIOp::create(rewriter, loc, x, constant(rewriter, g)));
    firstShard = arith::AddIOp::create(rewriter, loc, y, back);
  }

  // What the rounds thread through.
  struct State {
    Value shard, previous, assembled;
    std::deque<Value> arriving;
  };
  State state;
  // (x, y - x·G) sends to (x, y).
  state.shard = permute2d(rewriter, loc, gather.getInput(), grid, bothAxes, m,
                          n, [&](int64_t x, int64_t yy) {
                            return std::pair{x, positiveMod(yy + x * g, n)};
                          });
  if (assemble)
    state.assembled = tensor::EmptyOp::create(
        rewriter, loc, cast<RankedTensorType>(gather.getType()).getShape(),
        shardType.getElementType());
  Value result = tensor::EmptyOp::create(rewriter, loc, resultType.getShape(),
                                         resultType.getElementType());
  // Round N-G+k completes a sum: to its owner, into its slot.
  auto complete = [&](Value sum, int64_t k) {
    Value sent = permute2d(
        rewriter, loc, sum, grid, bothAxes, m, n, [&](int64_t x, int64_t yy) {
          return std::pair{positiveMod((yy + k) / g - x - 1, m), yy};
        });
    Value slot = arith::RemUIOp::create(
        rewriter, loc,
        arith::AddIOp::create(rewriter, loc, y, constant(rewriter, k)),
        constant(rewriter, g));
    Value offset =
        arith::MulIOp::create(rewriter, loc, slot, constant(rewriter, width));
    result = insertAlong(rewriter, loc, sent, result, layout.resultDim, offset);
  };
  // Round `k`, or with `round` set a round of the loop (G <= k <= N-G),
  // whose index that is.
  auto emitRound = [&](OpBuilder &builder, int64_t k, Value round,
                       State &current) {
    // Transfers before the round's einsum, so that it hides them.
    Value next = k + 1 < n ? ringPermute(builder, loc, current.shard, grid,
                                         gather.getGridAxesAttr(), n, 1)
                           : Value();
    if (k > 0) {
      if (k - 1 < n - g)
        current.arriving.push_back(ringPermute(builder, loc, current.previous,
                                               grid, scatter.getGridAxesAttr(),
                                               m, -1));
      else
        complete(current.previous, k - 1 - (n - g));
    }
    if (assemble) {
      Value index = arith::RemUIOp::create(
          builder, loc,
          arith::AddIOp::create(builder, loc, firstShard,
                                round ? round : constant(builder, k)),
          constant(builder, n));
      current.assembled = insertAlong(
          builder, loc, current.shard, current.assembled, gatherDim,
          arith::MulIOp::create(builder, loc, index, constant(builder, width))
              .getResult());
    }
    SmallVector<Value> inputs(einsum.getInputs());
    inputs[layout.gatheredInput] = current.shard;
    Value partial = EinsumOp::create(builder, loc, einsum.getEquation(), inputs,
                                     partialType, Value());
    if (k >= g) {
      partial = addTensors(builder, loc, current.arriving.front(), partial);
      current.arriving.pop_front();
    }
    current.previous = partial;
    current.shard = next;
  };
  // Rounds G..N-G each send one sum on and add one (and but the last round
  // pass the shard on): alike, a loop when there are two or more. The
  // first rounds start sums, the last complete them, each to its own
  // owners.
  int64_t loopBegin = g, loopEnd = std::min(n - g + 1, n - 1);
  bool loop = loopEnd - loopBegin >= 2;
  for (int64_t k = 0; k < (loop ? loopBegin : n); ++k)
    emitRound(rewriter, k, Value(), state);
  if (loop) {
    SmallVector<Value> carried{state.shard, state.previous};
    llvm::append_range(carried, state.arriving);
    if (assemble)
      carried.push_back(state.assembled);
    auto forOp = scf::ForOp::create(
        rewriter, loc, constant(rewriter, loopBegin),
        constant(rewriter, loopEnd), constant(rewriter, 1), carried,
        [&](OpBuilder &body, Location, Value round, ValueRange values) {
          State current;
          current.shard = values[0];
          current.previous = values[1];
          current.arriving.assign(values.begin() + 2,
                                  values.begin() + 2 + (g - 1));
          if (assemble)
            current.assembled = values.back();
          emitRound(body, loopBegin, round, current);
          SmallVector<Value> yielded{current.shard, current.previous};
          llvm::append_range(yielded, current.arriving);
          if (assemble)
            yielded.push_back(current.assembled);
          scf::YieldOp::create(body, loc, yielded);
        });
    ValueRange values = forOp.getResults();
    state.shard = values[0];
    state.previous = values[1];
    state.arriving.assign(values.begin() + 2, values.begin() + 2 + (g - 1));
    if (assemble)
      state.assembled = values.back();
    for (int64_t k = loopEnd; k < n; ++k)
      emitRound(rewriter, k, Value(), state);
  }
  complete(state.previous, g - 1);
  rewriter.replaceOp(scatter, result);
  rewriter.eraseOp(einsum);
  if (assemble)
    rewriter.replaceOp(gather, state.assembled);
  else
    rewriter.eraseOp(gather);
  return success();
}
