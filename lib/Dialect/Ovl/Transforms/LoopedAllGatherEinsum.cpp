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
// The loop computes the gather's first einsums in program order, as many as
// can run together (none reads another's result before the last of them).
// Where the gathered tensor has other users (later einsums, such as a
// backward pass's, or other ops), the loop also assembles it from the
// shards that pass through, and they read that.
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

/// The gather's users: the einsums the loop computes, in program order, and
/// the other uses, which read the tensor the loop assembles.
struct GatherUsers {
  SmallVector<GatherUser> loop;
  SmallVector<OpOperand *> others;
};

/// Classifies `einsum` as a user the loop can compute; an error message
/// when it is not one.
FailureOr<GatherUser> classifyUser(AllGatherOp gather, Operation *user,
                                   std::string &why) {
  Value gathered = gather.getResult();
  auto einsum = dyn_cast<EinsumOp>(user);
  if (!einsum) {
    why = ("it also feeds '" + user->getName().getStringRef() +
           "' before any einsum")
              .str();
    return failure();
  }
  if (einsum.getInputs().size() != 2 || einsum.getAcc() == gathered ||
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
  return info;
}

/// Splits the gather's users into the loop's einsums (the longest run of
/// users, from the first in program order, that the loop can compute
/// together: each an einsum it handles, none of their results read before
/// the last of them) and the rest; fails, with the first user's reason,
/// when that run is empty.
FailureOr<GatherUsers> analyzeUsers(AllGatherOp gather, std::string &why) {
  Value gathered = gather.getResult();
  if (gathered.use_empty()) {
    why = "the gathered tensor has no users";
    return failure();
  }
  Block *block = gather->getBlock();
  // Users by where they are in the gather's block (a use nested in an op
  // counts as that op's).
  SmallVector<Operation *> ancestors;
  for (Operation *user : gathered.getUsers())
    if (!llvm::is_contained(ancestors, block->findAncestorOpInBlock(*user)))
      ancestors.push_back(block->findAncestorOpInBlock(*user));
  llvm::sort(ancestors,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  GatherUsers users;
  for (Operation *candidate : ancestors) {
    std::string reason;
    FailureOr<GatherUser> user = classifyUser(gather, candidate, reason);
    bool readEarly = llvm::any_of(users.loop, [&](const GatherUser &in) {
      return llvm::any_of(in.op->getUsers(), [&](Operation *use) {
        Operation *at = block->findAncestorOpInBlock(*use);
        return at == candidate || at->isBeforeInBlock(candidate);
      });
    });
    if (failed(user) || readEarly) {
      if (users.loop.empty()) {
        why = failed(user) ? reason
                           : "an einsum's result is used before the last "
                             "einsum of the gathered tensor";
        return failure();
      }
      break;
    }
    users.loop.push_back(*user);
  }
  for (OpOperand &use : gathered.getUses())
    if (!llvm::any_of(users.loop, [&](const GatherUser &in) {
          return in.op == use.getOwner();
        }))
      users.others.push_back(&use);
  return users;
}

/// The last einsum of the loop: the loop goes right before it.
Operation *getInsertionPoint(ArrayRef<GatherUser> users) {
  return users.back().op;
}

/// Inserts `shard`, held by a chain, into the gathered tensor the loop
/// assembles: at `offset` along the gathered dim, and in a split loop at
/// the chain's half of the split dim.
Value insertShard(OpBuilder &builder, Location loc, Value shard, Value gathered,
                  unsigned gatherDim, OpFoldResult offset,
                  std::optional<std::pair<unsigned, int64_t>> half) {
  auto type = cast<RankedTensorType>(shard.getType());
  SmallVector<OpFoldResult> offsets(type.getRank(), builder.getIndexAttr(0));
  SmallVector<OpFoldResult> strides(type.getRank(), builder.getIndexAttr(1));
  SmallVector<OpFoldResult> sizes;
  for (int64_t size : type.getShape())
    sizes.push_back(builder.getIndexAttr(size));
  offsets[gatherDim] = offset;
  if (half)
    offsets[half->first] = builder.getIndexAttr(half->second);
  return tensor::InsertSliceOp::create(builder, loc, shard, gathered, offsets,
                                       sizes, strides);
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
  FailureOr<GatherUsers> users = analyzeUsers(gather, why);
  if (failed(users))
    return why;
  if (hasEmptyTensor(gather) ||
      llvm::any_of(users->loop, [](const GatherUser &user) {
        return hasEmptyTensor(user.op);
      }))
    return "a tensor of the pair is empty";
  return "";
}

FailureOr<DecomposedCollective>
mlir::ovl::decomposeAllGatherEinsum(RewriterBase &rewriter, AllGatherOp gather,
                                    const DecomposeOptions &options) {
  if (!whyNotDecomposable(gather).empty())
    return failure();
  std::string why;
  GatherUsers allUsers = *analyzeUsers(gather, why);
  MutableArrayRef<GatherUser> users = allUsers.loop;
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
  // The gathered tensor, for the other users: its shards inserted as they
  // pass through.
  std::optional<unsigned> assembledIndex;
  if (!allUsers.others.empty()) {
    assembledIndex = state.size();
    RankedTensorType type = gather.getResult().getType();
    state.push_back(tensor::EmptyOp::create(rewriter, loc, type.getShape(),
                                            type.getElementType()));
  }

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
      if (assembledIndex) {
        std::optional<std::pair<unsigned, int64_t>> half;
        if (numParts > 1)
          half = {split->inputDim,
                  part * cast<RankedTensorType>(data.front().getType())
                             .getDimSize(split->inputDim)};
        for (const HeldShard &shard : shards)
          next[*assembledIndex] =
              insertShard(builder, loc, shard.data, next[*assembledIndex],
                          gatherDim, shard.offset, half);
      }
      for (auto [u, user] : llvm::enumerate(users))
        next[resultIndex(u, part)] =
            computePartial(builder, loc, user, shardSize, shards, gathered,
                           next[resultIndex(u, part)], partTypes[u][part]);
    }
    return next;
  };
  RingRounds rounds =
      emitRingRounds(rewriter, loc, plan, options.unroll, state, emitRound);
  ArrayRef<Value> final = rounds.state;
  for (auto [u, user] : llvm::enumerate(users)) {
    SmallVector<Value> parts;
    for (unsigned part = 0; part < numParts; ++part)
      parts.push_back(final[resultIndex(u, part)]);
    rewriter.replaceOp(
        user.op, numParts == 1
                     ? parts.front()
                     : concatAlong(rewriter, loc, parts, split->resultDims[u]));
  }
  if (assembledIndex)
    rewriter.replaceAllUsesWith(gather.getResult(), final[*assembledIndex]);
  rewriter.eraseOp(gather);
  return DecomposedCollective{rounds.loop};
}

SmallVector<Operation *, 2> mlir::ovl::getLoopEinsums(AllGatherOp gather) {
  SmallVector<Operation *, 2> einsums;
  if (!whyNotDecomposable(gather).empty())
    return einsums;
  std::string why;
  GatherUsers users = *analyzeUsers(gather, why);
  for (const GatherUser &user : users.loop)
    einsums.push_back(user.op);
  return einsums;
}

std::optional<unsigned> mlir::ovl::getSplitDim(AllGatherOp gather) {
  if (!whyNotDecomposable(gather).empty())
    return std::nullopt;
  std::string why;
  std::optional<SplitLayout> split =
      findSplit(gather, analyzeUsers(gather, why)->loop);
  if (!split)
    return std::nullopt;
  return split->inputDim;
}

/// For remarks: the case each einsum of `gather` falls in.
std::string mlir::ovl::describeAllGatherCases(AllGatherOp gather) {
  std::string why;
  FailureOr<GatherUsers> users = analyzeUsers(gather, why);
  if (failed(users))
    return why;
  std::string text;
  for (const GatherUser &user : users->loop) {
    if (!text.empty())
      text += "; ";
    text += describeCase(user.kind).str() +
            (user.gatheredInput ? " (rhs)" : " (lhs)");
  }
  if (size_t others = users->others.size())
    text += "; the gathered tensor assembled for " + std::to_string(others) +
            (others == 1 ? " later use" : " later uses");
  return text;
}
