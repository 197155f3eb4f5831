//===- DecompositionCost.cpp - The cost-model gate's estimates ------------===//
//
// The terms of section 5.5's inequality for one collective+einsum pair,
//
//   comp + comm >= max(loop comp, ring) + epilogue,
//
// read off the loop the rewrite would build (RingLoopShape, from the same
// ring plan and in the same order as the emitters), with s the bytes of one
// shard (the gathered input; the scattered result), c the einsum of one
// shard as the loop runs it:
//
// - comp: estimateCompute of the original einsum(s);
// - c: the roofline of one step's partial einsum: 1/N of the FLOPs, every
//   tensor holding the split letter (gathered or scattered) at 1/N of its
//   bytes, and an output without it read and written in full each step
//   (the einsum accumulates into it). A partial einsum can be memory-bound
//   where the whole one is not (a short contracting shard against a large
//   accumulator), so c can exceed comp / N; loop comp = N c;
// - comm: estimateCollective of the original all_gather / reduce_scatter on
//   bidirectional rings, the algorithm a blocking collective runs;
// - a permute step (the permutes issued together, one per moving chain)
//   takes MachineModel::ringStepTime(axes, shifts, s): permuteTime(load *
//   s, hops) with hops the longest route and load the most transfers any
//   link carries (two for a shift of two positions or for both directions
//   of a line without wrap-around; behind a switch, the transfers a device
//   starts at once share its egress), routed on the actual topology and
//   placement. For a group laid along one torus dimension that is one hop
//   when the ring wraps (MachineModel::getRingDims) and N - 1, the closing
//   edge, when it does not;
// - ring: the steps that overlap an einsum (one is emitted between the
//   step and the first use of what it delivers);
// - epilogue: the steps whose consumer waits for them right away, the
//   einsums no overlapped step runs along with (c each shard; 0 when no
//   step overlaps, the einsums are then all in comp), and after the loop
//   the additions of the ReduceScatter chains (a pass over three shards at
//   HBM bandwidth each) and the owner's own shard (c).
//
// For the variants this gives (R = floor((N-1)/2); P(k) one step of shift
// k, P(+-k) one step of both directions; add one post-loop addition):
//
// - AllGather, unroll 1 or 2 (unrolling changes the loop, not its rounds):
//   ring = (N-1) P(1), epilogue = c, the last round. Bidirectional, N > 2:
//   ring = R P(+-1) + [N even] P(1); epilogue = 2c for odd N (the last
//   round computes a shard from each side), c for even N.
// - ReduceScatter, unroll 1: each round's einsum is computed ahead, while
//   the previous round's sum travels, and added to it on arrival (figure
//   7 with the accumulation unfused, so that section 5.4.1's dependence
//   does not serialise the loop): ring = (N-1) (P(1) + add), as each
//   addition sits between two transfers of the chain, epilogue = c (the
//   first einsum), loop comp += (N-1) add. Bidirectional, N > 2: every
//   step but the last overlaps the next round's einsum; the last (the
//   final hop of both directions) is epilogue, with the first einsum, the
//   chains' addition and the owner's own shard (c + add + c).
// - ReduceScatter, unroll 2, N >= 4: one chain's permute overlaps the
//   other chain's einsum (figure 8); even N: ring = (N-2) P(2), epilogue =
//   P(1) + 2c + add (the first einsum, before any sum travels, and the
//   last); odd N: the first chain's first permute has nothing to overlap,
//   ring = (N-3) P(2), epilogue = P(2) + P(1) + 3c + add. N = 2 and 3
//   overlap nothing: ring = 0, epilogue = P(1) [+ P(2)] + add.
//   Bidirectional: as the plan says (e.g. N = 4: ring = P(+-1), epilogue =
//   P(2) + 2c + 2 add + c).
//
// The decision is the paper's inequality with the loop's own compute on
// the right: comp + comm >= max(loop comp, ring) + epilogue, where loop
// comp is the compute that runs beside the overlapped steps: the loop's
// einsums (N c) less those the epilogue counts, plus the in-loop
// additions. (The paper's form keeps the epilogue's einsums in loop comp
// too, which overestimates a compute-bound loop by them; on the GPT ladder
// that kept 128B's and 32B's profitable loops blocking.)
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/Dialect/Ovl/Transforms/Transforms.h"

#include "RingLoop.h"

#include "OverlapDialect/Analysis/CostEstimates.h"
#include "OverlapDialect/Analysis/MachineModel.h"
#include "OverlapDialect/Dialect/Ovl/IR/OvlOps.h"

#include <map>

using namespace mlir;
using namespace mlir::ovl;

/// The shared part: prices `shape` for a collective along `axes` moving
/// shards of `shardBytes`, with `addition` the time of one post-loop
/// addition.
static DecompositionEstimate price(const RingLoopShape &shape,
                                   const MachineModel &machine,
                                   ArrayRef<int16_t> axes, double shardBytes,
                                   int64_t groupSize, double comp, double shard,
                                   double comm, double addition) {
  DecompositionEstimate estimate;
  estimate.comp = comp;
  // An in-loop addition reads what a transfer delivered and its sum is the
  // next transfer's data: it takes compute time and sits between two
  // transfers of its chain.
  double loopAdds = static_cast<double>(shape.loopAdds) * addition;
  // The einsums the epilogue counts run alone; the rest run beside steps.
  double alone = static_cast<double>(shape.exposedShards + shape.finalShards);
  estimate.loopComp =
      shard * (static_cast<double>(groupSize) - alone) + loopAdds;
  estimate.ring = loopAdds;
  estimate.comm = comm;
  estimate.groupSize = groupSize;
  // Steps with the same shifts cost the same; route each kind once.
  std::map<SmallVector<int64_t, 2>, double> stepTimes;
  for (const RingLoopShape::Step &step : shape.steps) {
    auto it = stepTimes.find(step.shifts);
    if (it == stepTimes.end())
      it = stepTimes
               .emplace(step.shifts,
                        machine.ringStepTime(axes, step.shifts, shardBytes))
               .first;
    (step.overlapped ? estimate.ring : estimate.epilogue) += it->second;
  }
  estimate.epilogue += static_cast<double>(shape.exposedShards) * shard +
                       static_cast<double>(shape.finalAdds) * addition +
                       static_cast<double>(shape.finalShards) * shard;
  return estimate;
}

/// One step's partial einsum of `einsum` with letter `split` cut N-fold
/// (see c above).
static std::optional<double> stepEinsumTime(EinsumOp einsum, char split,
                                            int64_t groupSize,
                                            const CostModel &model) {
  std::optional<int64_t> flops = einsum.getFlops();
  if (!flops)
    return std::nullopt;
  EinsumEquation equation = einsum.getParsedEquation();
  double n = static_cast<double>(groupSize);
  double bytes = 0;
  for (unsigned i = 0; i < equation.getNumInputs(); ++i) {
    std::optional<double> input =
        getStaticBytes(einsum->getOperand(i).getType());
    if (!input)
      return std::nullopt;
    bytes += equation.getInput(i).contains(split) ? *input / n : *input;
  }
  std::optional<double> output = getStaticBytes(einsum.getResult().getType());
  if (!output)
    return std::nullopt;
  bytes += equation.getOutput().contains(split) ? *output / n : 2 * *output;
  ElementKind kind = getElementKind(
      cast<ShapedType>(einsum->getOperand(0).getType()).getElementType());
  return model.einsumTime(static_cast<double>(*flops) / n, bytes, kind);
}

static std::optional<int64_t> getStaticGroupSize(Operation *op) {
  SymbolTableCollection symbols;
  std::optional<int64_t> size =
      cast<CollectiveOpInterface>(op).getGroupSize(symbols);
  if (!size || ShapedType::isDynamic(*size))
    return std::nullopt;
  return size;
}

FailureOr<DecompositionEstimate>
mlir::ovl::estimateDecomposition(AllGatherOp gather,
                                 const MachineModel &machine,
                                 const DecomposeOptions &options) {
  if (!whyNotDecomposable(gather).empty())
    return failure();
  std::optional<int64_t> groupSize = getStaticGroupSize(gather);
  std::optional<double> shardBytes =
      getStaticBytes(gather.getInput().getType());
  std::optional<double> comm =
      estimateCollective(gather, machine, RingDirection::Bidirectional);
  if (!groupSize || !shardBytes || !comm)
    return failure();
  // Every user is an einsum (whyNotDecomposable says so); the loop
  // computes all of them each round.
  double comp = 0, shard = 0;
  for (OpOperand &use : gather.getResult().getUses()) {
    auto einsum = cast<EinsumOp>(use.getOwner());
    std::optional<ComputeEstimate> time =
        estimateCompute(einsum, machine.costModel);
    char split = einsum.getParsedEquation().getInput(
        use.getOperandNumber())[gather.getGatherDim()];
    std::optional<double> step =
        stepEinsumTime(einsum, split, *groupSize, machine.costModel);
    if (!time || !step)
      return failure();
    comp += time->seconds;
    shard += *step;
  }
  return price(getAllGatherLoopShape(*groupSize, options), machine,
               gather.getGridAxes(), *shardBytes, *groupSize, comp, shard,
               *comm, /*addition=*/0);
}

FailureOr<DecompositionEstimate>
mlir::ovl::estimateDecomposition(ReduceScatterOp scatter,
                                 const MachineModel &machine,
                                 const DecomposeOptions &options) {
  if (!whyNotDecomposable(scatter).empty())
    return failure();
  std::optional<int64_t> groupSize = getStaticGroupSize(scatter);
  auto shardType = cast<RankedTensorType>(scatter.getResult().getType());
  std::optional<double> shardBytes = getStaticBytes(shardType);
  std::optional<double> comm =
      estimateCollective(scatter, machine, RingDirection::Bidirectional);
  auto einsum = scatter.getInput().getDefiningOp<EinsumOp>();
  std::optional<ComputeEstimate> comp =
      estimateCompute(einsum, machine.costModel);
  if (!groupSize || !shardBytes || !comm || !comp)
    return failure();
  std::optional<double> shard = stepEinsumTime(
      einsum, einsum.getParsedEquation().getOutput()[scatter.getScatterDim()],
      *groupSize, machine.costModel);
  if (!shard)
    return failure();
  // Adding two chains' sums: one operation per element, two shards read
  // and one written.
  double addition = machine.costModel.einsumTime(
      static_cast<double>(shardType.getNumElements()), 3 * *shardBytes,
      getElementKind(shardType.getElementType()));
  return price(getReduceScatterLoopShape(*groupSize, options), machine,
               scatter.getGridAxes(), *shardBytes, *groupSize, comp->seconds,
               *shard, *comm, addition);
}
