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
// tensor is never whole on any device (unless users after the scatter read
// it: the rounds then assemble it from the shards that pass through).
//
// Rounds G to N-G are alike and become a loop; the first G rounds start
// sums and the last G each send to a different set of owners, so they are
// straight-line code. Split, each half of every shard (along the gathered
// dim) runs the rounds its own way round A's ring: the second half's rows
// are rotated the other way, it holds shard (y + x·G - k) mod N in round k,
// and its owners and slots mirror the first's; both directions of A's links
// carry data, as in a split all_gather loop.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/Dialect/Ovl/Transforms/Transforms.h"

#include "RingLoop.h"

#include "OverlapDialect/Dialect/Ovl/IR/OvlOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/MathExtras.h"

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

bool mlir::ovl::canSplitGatherScatter(ReduceScatterOp scatter) {
  std::string why;
  FailureOr<GatherScatterLayout> layout = analyze(scatter, why);
  return succeeded(layout) &&
         cast<RankedTensorType>(layout->gather.getInput().getType())
                     .getDimSize(layout->gather.getGatherDim()) %
                 2 ==
             0;
}

FailureOr<DecomposedCollective>
mlir::ovl::decomposeGatherEinsumScatter(RewriterBase &rewriter,
                                        ReduceScatterOp scatter, bool split) {
  std::string why;
  FailureOr<GatherScatterLayout> analyzed = analyze(scatter, why);
  if (failed(analyzed) || (split && !canSplitGatherScatter(scatter)))
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
  // Split, each half of every shard (along the gathered dim) goes its own
  // way round the gather's ring: part 0 towards higher shard indices, part
  // 1 towards lower, so that both directions of its links carry data.
  int64_t numParts = split ? 2 : 1, partWidth = width / numParts;
  SmallVector<int64_t> partialShape(
      cast<RankedTensorType>(einsum.getResult().getType()).getShape());
  partialShape[layout.resultDim] = partWidth;
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
  auto direction = [](int64_t part) -> int64_t { return part == 0 ? 1 : -1; };
  Value y = PartitionIdOp::create(rewriter, loc, rewriter.getIndexType(), grid,
                                  gather.getGridAxesAttr());
  // Where a part's round-0 shard sits in the gathered tensor, y - d·x·G mod
  // N for direction d, as a non-negative sum for the unsigned remainder.
  SmallVector<Value> firstShard(numParts);
  if (assemble) {
    Value x = PartitionIdOp::create(rewriter, loc, rewriter.getIndexType(),
                                    grid, scatter.getGridAxesAttr());
    Value xg = arith::MulIOp::create(rewriter, loc, x, constant(rewriter, g));
    for (int64_t part = 0; part < numParts; ++part)
      firstShard[part] = arith::AddIOp::create(
          rewriter, loc, y,
          direction(part) > 0
              ? arith::SubIOp::create(rewriter, loc, constant(rewriter, n), xg)
                    .getResult()
              : xg);
  }

  // What the rounds thread through, per part.
  struct Chains {
    Value shard, previous;
    std::deque<Value> arriving;
  };
  SmallVector<Chains> state(numParts);
  Value assembled;
  for (int64_t part = 0; part < numParts; ++part) {
    Value half = gather.getInput();
    if (split)
      half = extractAlong(rewriter, loc, half, gatherDim,
                          rewriter.getIndexAttr(part * partWidth), partWidth);
    // (x, y) sends to (x, y + d·x·G): it starts with shard y - d·x·G.
    state[part].shard = permute2d(
        rewriter, loc, half, grid, bothAxes, m, n, [&](int64_t x, int64_t yy) {
          return std::pair{x, positiveMod(yy + direction(part) * x * g, n)};
        });
  }
  if (assemble)
    assembled = tensor::EmptyOp::create(
        rewriter, loc, cast<RankedTensorType>(gather.getType()).getShape(),
        shardType.getElementType());
  Value result = tensor::EmptyOp::create(rewriter, loc, resultType.getShape(),
                                         resultType.getElementType());
  // Round N-G+k completes a part's sum: to its owner, into its slot (see
  // the file comment; direction -1 mirrors it).
  auto complete = [&](int64_t part, Value sum, int64_t k) {
    int64_t d = direction(part);
    Value sent = permute2d(
        rewriter, loc, sum, grid, bothAxes, m, n, [&](int64_t x, int64_t yy) {
          int64_t block = llvm::divideFloorSigned(yy + d * k, g);
          return std::pair{positiveMod(block - d * (x + 1), m), yy};
        });
    // Slot (y + d·k) mod G, with y + G·N + d·k non-negative.
    Value slot = arith::RemUIOp::create(
        rewriter, loc,
        arith::AddIOp::create(rewriter, loc, y,
                              constant(rewriter, g * n + d * k)),
        constant(rewriter, g));
    Value offset = arith::AddIOp::create(
        rewriter, loc,
        arith::MulIOp::create(rewriter, loc, slot, constant(rewriter, width)),
        constant(rewriter, part * partWidth));
    result = insertAlong(rewriter, loc, sent, result, layout.resultDim, offset);
  };
  // Round `k`, or with `round` set a round of the loop (G <= k <= N-G),
  // whose index that is.
  auto emitRound = [&](OpBuilder &builder, int64_t k, Value round,
                       MutableArrayRef<Chains> current, Value &gathered) {
    // Transfers before the round's einsums, so that they hide them.
    SmallVector<Value> next(numParts);
    for (int64_t part = 0; part < numParts; ++part) {
      Chains &chains = current[part];
      if (k + 1 < n)
        next[part] = ringPermute(builder, loc, chains.shard, grid,
                                 gather.getGridAxesAttr(), n, direction(part));
      if (k == 0)
        continue;
      if (k - 1 < n - g)
        chains.arriving.push_back(ringPermute(builder, loc, chains.previous,
                                              grid, scatter.getGridAxesAttr(),
                                              m, -1));
      else
        complete(part, chains.previous, k - 1 - (n - g));
    }
    for (int64_t part = 0; part < numParts; ++part) {
      Chains &chains = current[part];
      if (assemble) {
        // Shard (first + d·k) mod N, as first + N - k for d = -1.
        Value index = round ? round : constant(builder, k);
        if (direction(part) < 0)
          index =
              arith::SubIOp::create(builder, loc, constant(builder, n), index);
        index = arith::RemUIOp::create(
            builder, loc,
            arith::AddIOp::create(builder, loc, firstShard[part], index),
            constant(builder, n));
        Value offset = arith::AddIOp::create(
            builder, loc,
            arith::MulIOp::create(builder, loc, index,
                                  constant(builder, width)),
            constant(builder, part * partWidth));
        gathered = insertAlong(builder, loc, chains.shard, gathered, gatherDim,
                               offset);
      }
      SmallVector<Value> inputs(einsum.getInputs());
      inputs[layout.gatheredInput] = chains.shard;
      Value partial = EinsumOp::create(builder, loc, einsum.getEquation(),
                                       inputs, partialType, Value());
      if (k >= g) {
        partial = addTensors(builder, loc, chains.arriving.front(), partial);
        chains.arriving.pop_front();
      }
      chains.previous = partial;
      chains.shard = next[part];
    }
  };
  // Rounds G..N-G each send one sum on and add one (and but the last round
  // pass the shard on): alike, a loop when there are two or more. The
  // first rounds start sums, the last complete them, each to its own
  // owners.
  int64_t loopBegin = g, loopEnd = std::min(n - g + 1, n - 1);
  DecomposedCollective built;
  bool loop = loopEnd - loopBegin >= 2;
  for (int64_t k = 0; k < (loop ? loopBegin : n); ++k)
    emitRound(rewriter, k, Value(), state, assembled);
  if (loop) {
    // Per part: the shard, the last sum, the G - 1 sums on their way.
    int64_t perPart = 2 + (g - 1);
    auto pack = [&](ArrayRef<Chains> chains, Value gathered) {
      SmallVector<Value> values;
      for (const Chains &own : chains) {
        values.push_back(own.shard);
        values.push_back(own.previous);
        llvm::append_range(values, own.arriving);
      }
      if (assemble)
        values.push_back(gathered);
      return values;
    };
    auto unpack = [&](ValueRange values, MutableArrayRef<Chains> chains,
                      Value &gathered) {
      for (int64_t part = 0; part < numParts; ++part) {
        ValueRange own = values.slice(part * perPart, perPart);
        chains[part].shard = own[0];
        chains[part].previous = own[1];
        chains[part].arriving.assign(own.begin() + 2, own.end());
      }
      if (assemble)
        gathered = values.back();
    };
    auto forOp = scf::ForOp::create(
        rewriter, loc, constant(rewriter, loopBegin),
        constant(rewriter, loopEnd), constant(rewriter, 1),
        pack(state, assembled),
        [&](OpBuilder &body, Location, Value round, ValueRange values) {
          SmallVector<Chains> current(numParts);
          Value gathered;
          unpack(values, current, gathered);
          emitRound(body, loopBegin, round, current, gathered);
          scf::YieldOp::create(body, loc, pack(current, gathered));
        });
    unpack(forOp.getResults(), state, assembled);
    built.loop = forOp;
    for (int64_t k = loopEnd; k < n; ++k)
      emitRound(rewriter, k, Value(), state, assembled);
  }
  for (int64_t part = 0; part < numParts; ++part)
    complete(part, state[part].previous, g - 1);
  rewriter.replaceOp(scatter, result);
  rewriter.eraseOp(einsum);
  if (assemble)
    rewriter.replaceOp(gather, assembled);
  else
    rewriter.eraseOp(gather);
  return built;
}
