//===- LoopedEinsumReduceScatter.cpp - Einsum-ReduceScatter as a ring loop ===//
//
// Rewrites an ovl.einsum feeding an ovl.reduce_scatter into a loop in which
// partial sums travel round the ring: each round a device adds, with the
// einsum's accumulator operand, the partial einsum of the shard a partial
// sum is destined for, then passes it on, so that device `id` ends holding
// shard `id` (the paper's figures 5 and 7). With unroll=2 two interleaved
// chains hop two devices at a time, so one chain's transfer overlaps the
// other chain's einsum, and a one-hop epilogue brings the second chain home
// (figure 8). Bidirectionally chains travel both ways and the owner adds its
// own contribution last (figure 10). Split, the result is halved along a
// free dim and each half's partial sums travel their own way round the
// ring, so each link direction carries half of every shard.
//
// The scattered tensor may be a sum of einsums (the gradient of an input
// that several einsums read, as Q, K and V read one activation): each round
// computes every einsum's partial result for the shard, each accumulating
// into the last, so one loop carries the whole sum.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/Dialect/Ovl/Transforms/Transforms.h"

#include "RingLoop.h"

#include "OverlapDialect/Dialect/Ovl/IR/OvlOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::ovl;

namespace {

/// One einsum of the scattered sum and where the scattered letter sits in
/// it.
struct ScatterTerm {
  EinsumOp einsum;
  /// Position of the letter in each input; at least one has it.
  std::optional<unsigned> inputDims[2];
  /// The input holding the split letter and its position there (see
  /// ScatterLayout::splitDim).
  unsigned splitInput = 0, splitInputDim = 0;
};

/// The einsums whose sum is scattered, and the additions that sum them.
struct ScatterLayout {
  SmallVector<ScatterTerm> terms;
  /// The additions, the one the scatter reads first.
  SmallVector<Operation *> adds;
  /// The result dim a split loop halves (see getSplitDim); none when no dim
  /// qualifies in every term.
  std::optional<unsigned> splitDim;
};

/// Collects the einsums that `value`, the scattered tensor or a part of its
/// sum, adds up; fails with `why` on anything else.
LogicalResult collectTerms(Value value, Block *block, ScatterLayout &layout,
                           std::string &why) {
  Operation *producer = value.getDefiningOp();
  if (!producer || !isa<EinsumOp, arith::AddFOp, arith::AddIOp>(producer)) {
    why = "its input does not come from an einsum or a sum of einsums";
    return failure();
  }
  if (producer->getBlock() != block) {
    why = "the einsum is in another block";
    return failure();
  }
  if (!value.hasOneUse()) {
    why = isa<EinsumOp>(producer) ? "the einsum's result has other users"
                                  : "a sum of the einsums has other users";
    return failure();
  }
  if (!isa<EinsumOp>(producer)) {
    layout.adds.push_back(producer);
    for (Value operand : producer->getOperands())
      if (failed(collectTerms(operand, block, layout, why)))
        return failure();
    return success();
  }
  auto einsum = cast<EinsumOp>(producer);
  if (einsum.getInputs().size() != 2) {
    why = "the einsum does not have two inputs";
    return failure();
  }
  if (einsum.getAcc()) {
    why = "the einsum has an accumulator operand";
    return failure();
  }
  if (llvm::any_of(einsum->getOperandTypes(), [](Type type) {
        return !cast<RankedTensorType>(type).hasStaticShape();
      })) {
    why = "the einsum has dynamic shapes";
    return failure();
  }
  layout.terms.push_back({einsum, {}});
  return success();
}

/// Whether the result dim `dim` can be split in `term` (its letter occurs
/// once in the result and once in one input); records where.
bool findSplitInput(ScatterTerm &term, unsigned dim) {
  EinsumEquation equation = term.einsum.getParsedEquation();
  char split = equation.getOutput()[dim];
  if (equation.getOutput().count(split) != 1)
    return false;
  unsigned counts[2] = {
      static_cast<unsigned>(equation.getInput(0).count(split)),
      static_cast<unsigned>(equation.getInput(1).count(split))};
  if (counts[0] + counts[1] != 1)
    return false;
  term.splitInput = counts[0] ? 0 : 1;
  term.splitInputDim = *equation.findInInput(term.splitInput, split);
  return true;
}

FailureOr<ScatterLayout> analyze(ReduceScatterOp scatter, std::string &why) {
  ScatterLayout layout;
  if (failed(
          collectTerms(scatter.getInput(), scatter->getBlock(), layout, why)))
    return failure();
  for (ScatterTerm &term : layout.terms) {
    EinsumEquation equation = term.einsum.getParsedEquation();
    char letter = equation.getOutput()[scatter.getScatterDim()];
    for (unsigned i = 0; i < 2; ++i)
      term.inputDims[i] = equation.findInInput(i, letter);
  }
  ArrayRef<int64_t> shape = scatter.getInput().getType().getShape();
  for (unsigned dim = 0; dim < shape.size() && !layout.splitDim; ++dim) {
    if (dim == scatter.getScatterDim() || shape[dim] % 2 != 0)
      continue;
    if (llvm::all_of(layout.terms, [&](ScatterTerm &term) {
          return findSplitInput(term, dim);
        }))
      layout.splitDim = dim;
  }
  return layout;
}

/// Which half of the result a split loop's chain computes.
struct Part {
  unsigned index = 0;
  unsigned count = 1;
};

/// The half `part` of `value` along `dim` (the value itself unsplit).
Value takePart(OpBuilder &builder, Location loc, Value value, unsigned dim,
               Part part) {
  if (part.count == 1)
    return value;
  int64_t size = cast<RankedTensorType>(value.getType()).getDimSize(dim) / 2;
  return extractAlong(builder, loc, value, dim,
                      builder.getIndexAttr(part.index * size), size);
}

/// Partial sums for the shards of `targets` computed together: each
/// einsum of the sum on its operands' slices of those shards (concatenated),
/// the first accumulated into the chains' partial sums (concatenated) and
/// each next one into the last, then split back. With no `sums` the first
/// einsum starts from zero (a fresh partial result per target). In a split
/// loop, the einsums compute `part` of the result.
SmallVector<Value> accumulate(OpBuilder &builder, Location loc,
                              const ScatterLayout &layout, unsigned scatterDim,
                              int64_t shardSize, ArrayRef<Value> targets,
                              ArrayRef<Value> sums, Part part) {
  Value acc;
  if (!sums.empty())
    acc = concatAlong(builder, loc, sums, scatterDim);
  for (const ScatterTerm &term : layout.terms) {
    EinsumOp einsum = term.einsum;
    SmallVector<Value> inputs;
    for (unsigned i = 0; i < 2; ++i) {
      Value input = einsum.getInputs()[i];
      if (part.count > 1 && i == term.splitInput)
        input = takePart(builder, loc, input, term.splitInputDim, part);
      if (!term.inputDims[i]) {
        inputs.push_back(input);
        continue;
      }
      SmallVector<Value> slices;
      for (Value offset : targets)
        slices.push_back(extractAlong(builder, loc, input, *term.inputDims[i],
                                      offset, shardSize));
      inputs.push_back(concatAlong(builder, loc, slices, *term.inputDims[i]));
    }
    Type type;
    if (acc) {
      type = acc.getType();
    } else {
      auto full = cast<RankedTensorType>(einsum.getResult().getType());
      SmallVector<int64_t> shape(full.getShape());
      shape[scatterDim] = shardSize * static_cast<int64_t>(targets.size());
      if (part.count > 1)
        shape[*layout.splitDim] /= 2;
      type = full.clone(shape);
    }
    acc =
        EinsumOp::create(builder, loc, einsum.getEquation(), inputs, type, acc);
  }
  if (targets.size() == 1)
    return {acc};
  SmallVector<Value> split;
  for (unsigned i = 0; i < targets.size(); ++i)
    split.push_back(extractAlong(builder, loc, acc, scatterDim,
                                 builder.getIndexAttr(i * shardSize),
                                 shardSize));
  return split;
}

/// A chain that adds contributions from devices at distances from the
/// owner given by `first`, `first - step`, ..., down to `last` (all on the
/// side `direction` points to: +1 the devices above the owner, whose sums
/// move to lower indices), and then hops `last` further to the owner.
RingChain makeChain(int64_t first, int64_t last, int64_t step,
                    int64_t direction, int64_t numRounds) {
  // In round r the chain is `distance(r) = last + step * (numRounds-1-r)`
  // from its owner: device i holds the sum for shard i - direction *
  // distance(r).
  RingChain chain;
  int64_t rounds = (first - last) / step + 1;
  chain.firstRound = numRounds - rounds;
  chain.lastRound = numRounds - 1;
  chain.firstMove = chain.firstRound;
  chain.perRound = direction * step;
  chain.base = -direction * (last + step * (numRounds - 1));
  chain.shift = direction * step;
  chain.finalShift = direction * last;
  return chain;
}

/// The plan: chains covering every distance 1..N-1 (and 0 unless the owner
/// adds its own contribution in the epilogue).
struct ScatterPlan {
  RingPlan ring;
  /// The owner computes its own shard's contribution after the loop.
  bool ownShardLast = false;
};

ScatterPlan buildPlan(int64_t groupSize, unsigned step,
                      RingLoopDirection direction) {
  ScatterPlan plan;
  RingPlan &ring = plan.ring;
  bool split = direction == RingLoopDirection::Split;
  bool both = direction == RingLoopDirection::Bidirectional && groupSize > 2;
  // Distances each direction covers, excluding 0 unless it ends there. Split,
  // each half covers all of them, the second half the other way round.
  int64_t up = groupSize - 1, down = split ? groupSize - 1 : 0;
  if (both) {
    down = (groupSize - 1) / 2;
    up = groupSize - 1 - down;
  }
  plan.ownShardLast = both;
  // A unidirectional chain with step 1 ends on its owner (distance 0).
  int64_t lowest = plan.ownShardLast ? 1 : 0;
  int64_t maxRounds = 0;
  struct Range {
    int64_t first, last, direction;
    unsigned part;
  };
  SmallVector<Range> ranges;
  for (auto [extent, direction] :
       {std::pair{up, int64_t(1)}, std::pair{down, int64_t(-1)}}) {
    for (int64_t phase = 0; phase < step; ++phase) {
      int64_t last = lowest + phase;
      if (last > extent || (last == 0 && direction < 0 && !split))
        continue;
      int64_t first = last + (extent - last) / step * step;
      ranges.push_back({first, last, direction, split && direction < 0});
      maxRounds = std::max(maxRounds, (first - last) / step + 1);
    }
  }
  for (const Range &range : ranges) {
    ring.chains.push_back(
        makeChain(range.first, range.last, step, range.direction, maxRounds));
    ring.chains.back().part = range.part;
  }
  ring.numRounds = maxRounds;
  // One chain per direction: a round's einsum must not wait for the sum
  // the previous transfer brings, or nothing overlaps (the paper's section
  // 5.4.1). Computed ahead, it starts from zero and is added to the sum
  // once that arrives. Unrolled, the interleaved chains hide each other's
  // transfers and accumulate in place.
  ring.computeAhead = step == 1;
  // Chains of the same phase travel both ways and are computed together;
  // chains of different phases are the interleaved ones, and the halves of
  // a split loop compute apart.
  for (int64_t phase = 0; phase < step; ++phase)
    for (unsigned part = 0; part < (split ? 2u : 1u); ++part) {
      SmallVector<unsigned> group;
      for (auto [c, range] : llvm::enumerate(ranges))
        if ((range.last - lowest) == phase && range.part == part)
          group.push_back(c);
      if (!group.empty())
        ring.groups.push_back(group);
    }
  return plan;
}

} // namespace

std::string mlir::ovl::whyNotDecomposable(ReduceScatterOp scatter) {
  if (scatter->hasAttr("ovl.no_decompose"))
    return "the collective has the ovl.no_decompose attribute";
  SymbolTableCollection symbols;
  std::optional<int64_t> groupSize =
      cast<CollectiveOpInterface>(scatter.getOperation()).getGroupSize(symbols);
  if (!groupSize || ShapedType::isDynamic(*groupSize))
    return "the group size is not static";
  if (*groupSize < 2)
    return "the group has a single device";
  if (scatter.getReduction() != ReductionKind::Sum)
    return "it reduces with " +
           stringifyReductionKind(scatter.getReduction()).str() + ", not sum";
  std::string why;
  if (failed(analyze(scatter, why)))
    return why;
  FailureOr<ScatterLayout> layout = analyze(scatter, why);
  if (hasEmptyTensor(scatter) ||
      llvm::any_of(layout->terms, [](const ScatterTerm &term) {
        return hasEmptyTensor(term.einsum);
      }))
    return "a tensor of the pair is empty";
  return "";
}

SmallVector<Operation *, 2>
mlir::ovl::getScatteredEinsums(ReduceScatterOp scatter) {
  SmallVector<Operation *, 2> einsums;
  if (!whyNotDecomposable(scatter).empty())
    return einsums;
  std::string why;
  ScatterLayout layout = *analyze(scatter, why);
  for (const ScatterTerm &term : layout.terms)
    einsums.push_back(term.einsum);
  return einsums;
}

std::optional<unsigned> mlir::ovl::getSplitDim(ReduceScatterOp scatter) {
  if (!whyNotDecomposable(scatter).empty())
    return std::nullopt;
  std::string why;
  return analyze(scatter, why)->splitDim;
}

FailureOr<DecomposedCollective>
mlir::ovl::decomposeEinsumReduceScatter(RewriterBase &rewriter,
                                        ReduceScatterOp scatter,
                                        const DecomposeOptions &options) {
  if (!whyNotDecomposable(scatter).empty())
    return failure();
  std::string why;
  ScatterLayout layout = *analyze(scatter, why);
  SymbolTableCollection symbols;
  int64_t groupSize = *cast<CollectiveOpInterface>(scatter.getOperation())
                           .getGroupSize(symbols);
  unsigned scatterDim = scatter.getScatterDim();
  auto resultType = cast<RankedTensorType>(scatter.getResult().getType());
  int64_t shardSize = resultType.getDimSize(scatterDim);
  Location loc = scatter.getLoc();

  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(scatter);
  RingBuilder ring(rewriter, loc, scatter.getGridAttr(),
                   scatter.getGridAxesAttr(), groupSize);
  RingLoopDirection direction = options.direction;
  if (direction == RingLoopDirection::Split && !layout.splitDim)
    direction = RingLoopDirection::Bidirectional;
  ScatterPlan plan = buildPlan(groupSize, options.unroll, direction);
  unsigned numParts = direction == RingLoopDirection::Split ? 2 : 1;

  // What a chain's partial sum is: the result, or its half split.
  SmallVector<int64_t> chainShape(resultType.getShape());
  if (numParts > 1)
    chainShape[*layout.splitDim] /= 2;
  Value empty = tensor::EmptyOp::create(rewriter, loc, chainShape,
                                        resultType.getElementType());
  // A chain's state is written by its first einsum before it is read
  // (which starts the sum, rather than adding into a zero fill): until then
  // it holds `empty`, and the round a chain starts in is emitted outside
  // the loop.
  plan.ring.freshStart = !plan.ring.computeAhead;
  SmallVector<Value> state(plan.ring.chains.size(), empty);
  auto zeros = [&](OpBuilder &builder) {
    Value zero = arith::ConstantOp::create(
        builder, loc, resultType.getElementType(),
        builder.getZeroAttr(resultType.getElementType()));
    return linalg::FillOp::create(builder, loc, zero, empty).getResult(0);
  };

  // The einsums of `group` in round `rep`, whose index value is `round` +
  // `ahead`: accumulated into the chains' sums or, computing ahead, fresh
  // and added to them. Returns the chains that computed.
  auto emitGroup = [&](OpBuilder &builder, ArrayRef<unsigned> group,
                       Value round, int64_t rep, int64_t ahead,
                       SmallVectorImpl<Value> &sums) {
    SmallVector<unsigned> active;
    SmallVector<Value> targets, current;
    for (unsigned c : group) {
      const RingChain &chain = plan.ring.chains[c];
      if (!chain.computesIn(rep))
        continue;
      active.push_back(c);
      targets.push_back(ring.shardOffset(builder,
                                         chain.base + chain.perRound * ahead,
                                         chain.perRound, round, shardSize));
      current.push_back(sums[c]);
    }
    if (active.empty())
      return active;
    Part part{plan.ring.chains[group.front()].part, numParts};
    auto starts = [&](unsigned c) {
      return plan.ring.chains[c].firstRound == rep;
    };
    if (!plan.ring.computeAhead) {
      // Chains that start together start fresh; a chain starting beside
      // one that carries a sum (both directions of a phase whose lengths
      // differ) joins the one einsum with a zero sum.
      bool fresh = llvm::all_of(active, starts);
      if (!fresh)
        for (size_t i = 0; i < active.size(); ++i)
          if (starts(active[i]))
            current[i] = zeros(builder);
      for (auto [c, sum] : llvm::zip(
               active,
               accumulate(builder, loc, layout, scatterDim, shardSize, targets,
                          fresh ? ArrayRef<Value>() : current, part)))
        sums[c] = sum;
      return active;
    }
    for (auto [c, partial] :
         llvm::zip(active, accumulate(builder, loc, layout, scatterDim,
                                      shardSize, targets, {}, part)))
      sums[c] = plan.ring.chains[c].firstRound == rep
                    ? partial
                    : addTensors(builder, loc, partial, sums[c]);
    return active;
  };
  auto emitRound = [&](OpBuilder &builder, Value round, int64_t rep,
                       ValueRange current) {
    SmallVector<Value> next(current.begin(), current.end());
    if (plan.ring.computeAhead) {
      for (auto [c, chain] : llvm::enumerate(plan.ring.chains))
        if (int64_t shift = chain.moveAfter(rep))
          next[c] = ring.permute(builder, next[c], shift);
      for (ArrayRef<unsigned> group : plan.ring.groups)
        emitGroup(builder, group, round, rep + 1, 1, next);
      return next;
    }
    // Each chain moves on right after its own computation.
    for (ArrayRef<unsigned> group : plan.ring.groups)
      for (unsigned c : emitGroup(builder, group, round, rep, 0, next))
        if (int64_t shift = plan.ring.chains[c].moveAfter(rep))
          next[c] = ring.permute(builder, next[c], shift);
    return next;
  };
  if (plan.ring.computeAhead) {
    Value first = arith::ConstantIndexOp::create(rewriter, loc, 0);
    for (ArrayRef<unsigned> group : plan.ring.groups)
      emitGroup(rewriter, group, first, 0, 0, state);
    if (first.use_empty())
      rewriter.eraseOp(first.getDefiningOp());
  }
  RingRounds rounds = emitRingRounds(rewriter, loc, plan.ring, options.unroll,
                                     state, emitRound);
  ArrayRef<Value> sums = rounds.state;
  if (empty.use_empty())
    rewriter.eraseOp(empty.getDefiningOp());

  // Each part's chains end on the owner: their sums add up to its half.
  SmallVector<Value> totals(numParts);
  for (auto [chain, sum] : llvm::zip(plan.ring.chains, sums))
    totals[chain.part] =
        totals[chain.part] ? addTensors(rewriter, loc, totals[chain.part], sum)
                           : sum;
  Value total = numParts == 1
                    ? totals.front()
                    : concatAlong(rewriter, loc, totals, *layout.splitDim);
  if (plan.ownShardLast) {
    Value own = ring.shardOffset(
        rewriter, 0, 0, arith::ConstantIndexOp::create(rewriter, loc, 0),
        shardSize);
    total = accumulate(rewriter, loc, layout, scatterDim, shardSize, {own},
                       {total}, Part{})
                .front();
  }
  rewriter.replaceOp(scatter, total);
  for (Operation *add : layout.adds)
    rewriter.eraseOp(add);
  for (const ScatterTerm &term : layout.terms)
    rewriter.eraseOp(term.einsum);
  return DecomposedCollective{rounds.loop};
}
