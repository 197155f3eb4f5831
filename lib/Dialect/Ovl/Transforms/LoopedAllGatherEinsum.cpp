//===- LoopedAllGatherEinsum.cpp - AllGather-Einsum as a ring loop --------===//
//
// Rewrites an ovl.all_gather and the einsums it feeds into a loop that
// computes each einsum one gathered shard at a time while permutes bring the
// next shard (the paper's section 5.1, figures 4 and 6; bidirectional:
// figure 9). Device `id` starts with its own shard, so in round r of the
// unidirectional ring it holds shard (id + r) mod N. Split, the shard is
// halved along a free dim: one half goes round one way, the other the other
// way, and each half computes its own half of every result.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/Dialect/Ovl/Transforms/Transforms.h"

#include "RingLoop.h"

#include "OverlapDialect/Dialect/Ovl/IR/OvlOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::ovl;

namespace {

/// How a gathered shard enters one einsum, by the role of the gathered
/// dim's letter (the paper's cases).
enum class GatherCase {
  Free,        ///< Case 1: the letter is free in the gathered operand.
  Contracting, ///< Case 2: contracted with the other operand.
  Batch,       ///< Case 3: a batch letter.
  Reduced,     ///< Summed inside the gathered operand alone.
};

/// An einsum fed by the gather.
struct GatherUser {
  EinsumOp op;
  unsigned gatheredInput;
  GatherCase kind;
  /// Position of the letter in the result (Free, Batch) and in the other
  /// operand (Contracting, Batch).
  unsigned resultDim = 0, otherDim = 0;
};

StringRef describeCase(GatherCase kind) {
  switch (kind) {
  case GatherCase::Free:
    return "case 1, gathered dim free";
  case GatherCase::Contracting:
    return "case 2, gathered dim contracting";
  case GatherCase::Batch:
    return "case 3, gathered dim batch";
  case GatherCase::Reduced:
    return "gathered dim summed in the gathered operand";
  }
  llvm_unreachable("unknown case");
}

/// Classifies the gather's users; an error message when one is not an
/// einsum the rewrite handles.
FailureOr<SmallVector<GatherUser>> analyzeUsers(AllGatherOp gather,
                                                std::string &why) {
  SmallVector<GatherUser> users;
  Value gathered = gather.getResult();
  if (gathered.use_empty()) {
    why = "the gathered tensor has no users";
    return failure();
  }
  for (Operation *user : gathered.getUsers()) {
    auto einsum = dyn_cast<EinsumOp>(user);
    if (!einsum) {
      why = ("it also feeds '" + user->getName().getStringRef() +
             "', not only einsums")
                .str();
      return failure();
    }
    if (llvm::any_of(users,
                     [&](const GatherUser &u) { return u.op == einsum; }) ||
        einsum.getInputs().size() != 2 || einsum.getAcc() == gathered ||
        einsum.getInputs()[0] == einsum.getInputs()[1]) {
      why = "an einsum uses the gathered tensor other than as one of two "
            "inputs";
      return failure();
    }
    if (einsum->getBlock() != gather->getBlock()) {
      why = "an einsum user is in another block";
      return failure();
    }
    auto resultType = cast<RankedTensorType>(einsum.getResult().getType());
    if (!resultType.hasStaticShape() ||
        llvm::any_of(einsum.getOperandTypes(), [](Type type) {
          return !cast<RankedTensorType>(type).hasStaticShape();
        })) {
      why = "an einsum user has dynamic shapes";
      return failure();
    }
    GatherUser info;
    info.op = einsum;
    info.gatheredInput = einsum.getInputs()[0] == gathered ? 0 : 1;
    EinsumEquation equation = einsum.getParsedEquation();
    char letter = equation.getInput(info.gatheredInput)[gather.getGatherDim()];
    std::optional<unsigned> inOther =
        equation.findInInput(1 - info.gatheredInput, letter);
    std::optional<unsigned> inResult = equation.findInOutput(letter);
    if (inOther && inResult)
      info.kind = GatherCase::Batch;
    else if (inOther)
      info.kind = GatherCase::Contracting;
    else if (inResult)
      info.kind = GatherCase::Free;
    else
      info.kind = GatherCase::Reduced;
    info.resultDim = inResult.value_or(0);
    info.otherDim = inOther.value_or(0);
    users.push_back(info);
  }
  // Program order, so the rewritten einsums keep their relative order.
  llvm::sort(users, [](const GatherUser &a, const GatherUser &b) {
    return a.op->isBeforeInBlock(b.op);
  });
  return users;
}

/// The last einsum user: the loop goes right before it.
Operation *getInsertionPoint(ArrayRef<GatherUser> users) {
  Operation *last = users.front().op;
  for (const GatherUser &user : users)
    if (last->isBeforeInBlock(user.op))
      last = user.op;
  return last;
}

/// The shards one einsum computation takes: the chain's data and where its
/// shard starts along the gathered dim.
struct HeldShard {
  Value data;
  Value offset;
};

/// Computes the user's einsum on `gathered`, the `shards` concatenated
/// along the gathered dim, and folds the partial result into `result` (for
/// an accumulated result, null when this is its first partial result) of
/// type `resultType` (the user's, or its half in a split loop).
Value computePartial(OpBuilder &builder, Location loc, const GatherUser &user,
                     int64_t shardSize, ArrayRef<HeldShard> shards,
                     Value gathered, Value result,
                     RankedTensorType resultType) {
  EinsumOp op = user.op;
  Value other = op.getInputs()[1 - user.gatheredInput];
  if (user.kind == GatherCase::Contracting || user.kind == GatherCase::Batch) {
    SmallVector<Value> slices;
    for (const HeldShard &shard : shards)
      slices.push_back(extractAlong(builder, loc, other, user.otherDim,
                                    shard.offset, shardSize));
    other = concatAlong(builder, loc, slices, user.otherDim);
  }
  SmallVector<Value> inputs(2);
  inputs[user.gatheredInput] = gathered;
  inputs[1 - user.gatheredInput] = other;

  if (user.kind == GatherCase::Contracting || user.kind == GatherCase::Reduced)
    return EinsumOp::create(builder, loc, op.getEquation(), inputs, resultType,
                            result);

  // Free and batch letters: the partial result covers the shards' rows of
  // the result; with an accumulator those rows start from its values.
  SmallVector<int64_t> shape(resultType.getShape());
  shape[user.resultDim] = shardSize * shards.size();
  auto partialType = RankedTensorType::get(shape, resultType.getElementType());
  Value acc;
  if (op.getAcc()) {
    SmallVector<Value> slices;
    for (const HeldShard &shard : shards)
      slices.push_back(extractAlong(builder, loc, result, user.resultDim,
                                    shard.offset, shardSize));
    acc = concatAlong(builder, loc, slices, user.resultDim);
  }
  Value partial = EinsumOp::create(builder, loc, op.getEquation(), inputs,
                                   partialType, acc);
  for (auto [i, shard] : llvm::enumerate(shards)) {
    Value piece =
        shards.size() == 1
            ? partial
            : extractAlong(builder, loc, partial, user.resultDim,
                           builder.getIndexAttr(i * shardSize), shardSize);
    result =
        insertAlong(builder, loc, piece, result, user.resultDim, shard.offset);
  }
  return result;
}

/// The result a user's loop starts from: its accumulator (`accPart`, the
/// half of it in a split loop), the empty tensor of `type` the shards' rows
/// are inserted into, or null for a sum that round 0's partial result
/// starts (rather than a zero fill added into).
Value getInitialResult(OpBuilder &builder, Location loc, const GatherUser &user,
                       RankedTensorType type, Value accPart) {
  if (accPart)
    return accPart;
  if (user.kind == GatherCase::Contracting || user.kind == GatherCase::Reduced)
    return Value();
  return tensor::EmptyOp::create(builder, loc, type.getShape(),
                                 type.getElementType());
}

/// The dim of the gathered operand a split loop halves (see getSplitDim)
/// and where its letter sits in each user's result.
struct SplitLayout {
  unsigned inputDim;
  SmallVector<unsigned> resultDims;
};

std::optional<SplitLayout> findSplit(AllGatherOp gather,
                                     ArrayRef<GatherUser> users) {
  ArrayRef<int64_t> shape = gather.getInput().getType().getShape();
  for (unsigned dim = 0; dim < shape.size(); ++dim) {
    if (dim == gather.getGatherDim() || shape[dim] % 2 != 0)
      continue;
    SplitLayout layout{dim, {}};
    for (const GatherUser &user : users) {
      EinsumEquation equation = EinsumOp(user.op).getParsedEquation();
      char letter = equation.getInput(user.gatheredInput)[dim];
      std::optional<unsigned> inResult = equation.findInOutput(letter);
      if (!inResult || equation.findInInput(1 - user.gatheredInput, letter) ||
          equation.getInput(user.gatheredInput).count(letter) != 1)
        break;
      layout.resultDims.push_back(*inResult);
    }
    if (layout.resultDims.size() == users.size())
      return layout;
  }
  return std::nullopt;
}

/// Device `id` starts with its own shard; the unidirectional chain moves
/// left, so round r holds shard id + r. Bidirectionally a second chain moves
/// right and holds id - r; the left one takes the extra shard of an even
/// group. Split, two chains each carry one half of every shard, one left
/// and one right, for all N rounds.
RingPlan buildPlan(int64_t groupSize, RingLoopDirection direction) {
  RingPlan plan;
  RingChain left;
  left.perRound = 1;
  left.shift = 1;
  if (direction == RingLoopDirection::Split) {
    left.lastRound = groupSize - 1;
    RingChain right = left;
    right.perRound = -1;
    right.shift = -1;
    right.part = 1;
    plan.chains = {left, right};
    plan.groups = {{0}, {1}};
    plan.numRounds = groupSize;
    return plan;
  }
  if (direction == RingLoopDirection::Unidirectional || groupSize == 2) {
    left.lastRound = groupSize - 1;
    plan.chains.push_back(left);
    plan.groups.push_back({0});
    plan.numRounds = groupSize;
    return plan;
  }
  int64_t rightShards = (groupSize - 1) / 2;
  left.lastRound = groupSize - 1 - rightShards;
  RingChain right;
  right.perRound = -1;
  right.shift = -1;
  right.firstRound = 1;
  right.lastRound = rightShards;
  plan.chains = {left, right};
  plan.groups.push_back({0, 1});
  plan.numRounds = left.lastRound + 1;
  return plan;
}

} // namespace

std::string mlir::ovl::whyNotDecomposable(AllGatherOp gather) {
  if (gather->hasAttr("ovl.no_decompose"))
    return "the collective has the ovl.no_decompose attribute";
  SymbolTableCollection symbols;
  std::optional<int64_t> groupSize =
      cast<CollectiveOpInterface>(gather.getOperation()).getGroupSize(symbols);
  if (!groupSize || ShapedType::isDynamic(*groupSize))
    return "the group size is not static";
  if (*groupSize < 2)
    return "the group has a single device";
  if (!gather.getInput().getType().hasStaticShape())
    return "the gathered shard has a dynamic shape";
  std::string why;
  FailureOr<SmallVector<GatherUser>> users = analyzeUsers(gather, why);
  if (failed(users))
    return why;
  if (hasEmptyTensor(gather) ||
      llvm::any_of(*users, [](const GatherUser &user) {
        return hasEmptyTensor(user.op);
      }))
    return "a tensor of the pair is empty";
  Operation *insertionPoint = getInsertionPoint(*users);
  for (const GatherUser &user : *users)
    for (Operation *use : EinsumOp(user.op).getResult().getUsers())
      if (use->getBlock() == insertionPoint->getBlock() &&
          !insertionPoint->isBeforeInBlock(use) && use != insertionPoint)
        return "an einsum's result is used before the last einsum of the "
               "gathered tensor";
  return "";
}

LogicalResult
mlir::ovl::decomposeAllGatherEinsum(RewriterBase &rewriter, AllGatherOp gather,
                                    const DecomposeOptions &options) {
  if (!whyNotDecomposable(gather).empty())
    return failure();
  std::string why;
  SmallVector<GatherUser> users = *analyzeUsers(gather, why);
  SymbolTableCollection symbols;
  int64_t groupSize =
      *cast<CollectiveOpInterface>(gather.getOperation()).getGroupSize(symbols);
  unsigned gatherDim = gather.getGatherDim();
  int64_t shardSize = gather.getInput().getType().getDimSize(gatherDim);
  Location loc = gather.getLoc();

  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(getInsertionPoint(users));
  RingBuilder ring(rewriter, loc, gather.getGridAttr(),
                   gather.getGridAxesAttr(), groupSize);
  std::optional<SplitLayout> split = findSplit(gather, users);
  RingLoopDirection direction = options.direction;
  if (direction == RingLoopDirection::Split && !split)
    direction = RingLoopDirection::Bidirectional;
  RingPlan plan = buildPlan(groupSize, direction);
  unsigned numParts = direction == RingLoopDirection::Split ? 2 : 1;

  // The half `part` of `value` along `dim` (the value itself unsplit).
  auto half = [&](Value value, unsigned dim, unsigned part) {
    if (numParts == 1)
      return value;
    int64_t size = cast<RankedTensorType>(value.getType()).getDimSize(dim) / 2;
    return extractAlong(rewriter, loc, value, dim,
                        rewriter.getIndexAttr(part * size), size);
  };
  SmallVector<Value> state;
  for (const RingChain &chain : plan.chains)
    state.push_back(numParts == 1
                        ? gather.getInput()
                        : half(gather.getInput(), split->inputDim, chain.part));
  // Each user's result, per part: its type and where its state is.
  SmallVector<SmallVector<RankedTensorType, 2>> partTypes;
  for (auto [u, user] : llvm::enumerate(users)) {
    auto type = cast<RankedTensorType>(user.op.getResult().getType());
    partTypes.emplace_back();
    for (unsigned part = 0; part < numParts; ++part) {
      SmallVector<int64_t> shape(type.getShape());
      Value acc = user.op.getAcc();
      if (numParts > 1) {
        shape[split->resultDims[u]] /= 2;
        if (acc)
          acc = half(acc, split->resultDims[u], part);
      }
      partTypes.back().push_back(type.clone(shape));
      state.push_back(
          getInitialResult(rewriter, loc, user, partTypes.back().back(), acc));
      plan.freshStart |= !state.back();
    }
  }
  unsigned numChains = plan.chains.size();
  auto resultIndex = [&](unsigned user, unsigned part) {
    return numChains + user * numParts + part;
  };

  auto emitRound = [&](OpBuilder &builder, Value round, int64_t rep,
                       ValueRange current) {
    SmallVector<Value> next(current.begin(), current.end());
    // Moves first, so that each permute precedes the computation it can
    // overlap with.
    for (auto [c, chain] : llvm::enumerate(plan.chains))
      if (int64_t shift = chain.moveAfter(rep))
        next[c] = ring.permute(builder, current[c], shift);
    for (ArrayRef<unsigned> group : plan.groups) {
      SmallVector<HeldShard> shards;
      for (unsigned c : group)
        if (plan.chains[c].computesIn(rep))
          shards.push_back(
              {current[c],
               ring.shardOffset(builder, plan.chains[c].base,
                                plan.chains[c].perRound, round, shardSize)});
      if (shards.empty())
        continue;
      SmallVector<Value> data;
      for (const HeldShard &shard : shards)
        data.push_back(shard.data);
      Value gathered = concatAlong(builder, loc, data, gatherDim);
      // A group's chains carry the same part.
      unsigned part = plan.chains[group.front()].part;
      for (auto [u, user] : llvm::enumerate(users))
        next[resultIndex(u, part)] =
            computePartial(builder, loc, user, shardSize, shards, gathered,
                           next[resultIndex(u, part)], partTypes[u][part]);
    }
    return next;
  };
  SmallVector<Value> final =
      emitRingRounds(rewriter, loc, plan, options.unroll, state, emitRound);
  for (auto [u, user] : llvm::enumerate(users)) {
    SmallVector<Value> parts;
    for (unsigned part = 0; part < numParts; ++part)
      parts.push_back(final[resultIndex(u, part)]);
    rewriter.replaceOp(
        user.op, numParts == 1
                     ? parts.front()
                     : concatAlong(rewriter, loc, parts, split->resultDims[u]));
  }
  rewriter.eraseOp(gather);
  return success();
}

std::optional<unsigned> mlir::ovl::getSplitDim(AllGatherOp gather) {
  if (!whyNotDecomposable(gather).empty())
    return std::nullopt;
  std::string why;
  std::optional<SplitLayout> split =
      findSplit(gather, *analyzeUsers(gather, why));
  if (!split)
    return std::nullopt;
  return split->inputDim;
}

/// For remarks: the case each einsum of `gather` falls in.
std::string mlir::ovl::describeAllGatherCases(AllGatherOp gather) {
  std::string why;
  FailureOr<SmallVector<GatherUser>> users = analyzeUsers(gather, why);
  if (failed(users))
    return why;
  std::string text;
  for (const GatherUser &user : *users) {
    if (!text.empty())
      text += "; ";
    text += describeCase(user.kind).str() +
            (user.gatheredInput ? " (rhs)" : " (lhs)");
  }
  return text;
}
