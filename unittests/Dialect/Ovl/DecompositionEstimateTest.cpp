//===- DecompositionEstimateTest.cpp - Tests of the gate's estimates ------===//
//
// The terms of the cost-model gate of ovl-decompose-collective-einsum for
// each loop variant, against closed forms written with the cost model's own
// primitives, on rings that wrap, that do not, and behind a switch.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/Analysis/CostEstimates.h"
#include "OverlapDialect/Analysis/MachineModel.h"
#include "OverlapDialect/Dialect/Ovl/IR/OvlOps.h"
#include "OverlapDialect/Dialect/Ovl/Transforms/Transforms.h"
#include "OverlapDialect/InitAll.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::ovl;

namespace {

/// A shard of 4096 x 1024 bf16 (8 MiB) on a ring of 4 devices.
constexpr double kShardBytes = 4096.0 * 1024 * 2;

class DecompositionEstimateTest : public ::testing::Test {
protected:
  DecompositionEstimateTest() {
    DialectRegistry registry;
    overlap::registerAllDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
    module = parseSourceString<ModuleOp>(R"mlir(
      shard.grid @ring(shape = 4)
      func.func @gather(%x: tensor<2048x4096xbf16>, %w: tensor<4096x1024xbf16>)
          -> tensor<2048x4096xf32> {
        %g = ovl.all_gather %w on @ring axes [0] dim 1
            : tensor<4096x1024xbf16> -> tensor<4096x4096xbf16>
        %y = ovl.einsum "bf,fh->bh" %x, %g
            : tensor<2048x4096xbf16>, tensor<4096x4096xbf16>
            -> tensor<2048x4096xf32>
        return %y : tensor<2048x4096xf32>
      }
      func.func @scatter(%x: tensor<4096x2048xbf16>, %w: tensor<2048x4096xbf16>)
          -> tensor<4096x1024xbf16> {
        %y = ovl.einsum "bf,fh->bh" %x, %w
            : tensor<4096x2048xbf16>, tensor<2048x4096xbf16>
            -> tensor<4096x4096xbf16>
        %r = ovl.reduce_scatter %y on @ring axes [0] dim 1
            : tensor<4096x4096xbf16> -> tensor<4096x1024xbf16>
        return %r : tensor<4096x1024xbf16>
      }
    )mlir",
                                     &context);
    EXPECT_TRUE(module);
    module->walk([&](AllGatherOp op) { gather = op; });
    module->walk([&](ReduceScatterOp op) { scatter = op; });
  }

  static MachineModel machine(llvm::StringRef hardware,
                              llvm::StringRef topology) {
    llvm::Expected<MachineModel> model =
        buildMachineModel(hardware, topology, {}, {4});
    if (!model) {
      ADD_FAILURE() << llvm::toString(model.takeError());
      return *buildMachineModel("tpu-v4", "", {}, {4});
    }
    return std::move(*model);
  }

  DecompositionEstimate estimate(Operation *op, const MachineModel &model,
                                 unsigned unroll, bool bidirectional) {
    DecomposeOptions options;
    options.unroll = unroll;
    options.bidirectional = bidirectional;
    FailureOr<DecompositionEstimate> result =
        isa<AllGatherOp>(op)
            ? estimateDecomposition(cast<AllGatherOp>(op), model, options)
            : estimateDecomposition(cast<ReduceScatterOp>(op), model,
                                    options);
    EXPECT_TRUE(succeeded(result));
    return succeeded(result) ? *result : DecompositionEstimate{};
  }

  /// The original einsum of `op`'s pair.
  double comp(Operation *op, const MachineModel &model) {
    Operation *einsum = isa<AllGatherOp>(op)
                            ? *op->getResult(0).getUsers().begin()
                            : op->getOperand(0).getDefiningOp();
    return estimateCompute(einsum, model.costModel)->seconds;
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  AllGatherOp gather;
  ReduceScatterOp scatter;
};

/// The original side: the einsum's roofline and the blocking collective on
/// bidirectional rings.
TEST_F(DecompositionEstimateTest, OriginalTerms) {
  MachineModel model = machine("tpu-v4", "4x4x4");
  for (Operation *op : {gather.getOperation(), scatter.getOperation()}) {
    DecompositionEstimate e = estimate(op, model, 1, false);
    EXPECT_EQ(e.groupSize, 4);
    EXPECT_DOUBLE_EQ(e.comp, comp(op, model));
    EXPECT_DOUBLE_EQ(e.comm, *estimateCollective(op, model,
                                                 RingDirection::Bidirectional));
    EXPECT_DOUBLE_EQ(e.gain(),
                     e.comp + e.comm - (std::max(e.comp, e.ring) + e.epilogue));
  }
}

/// On a wrapping ring every shift-1 permute is one hop on its own link.
TEST_F(DecompositionEstimateTest, AllGatherOnWrappingRing) {
  MachineModel model = machine("tpu-v4", "4x4x4");
  double p1 = model.costModel.permuteTime(kShardBytes, 1);
  double c = comp(gather, model) / 4;
  for (unsigned unroll : {1u, 2u}) {
    SCOPED_TRACE(unroll);
    // Three permutes, each overlapping the einsum of its round; the last
    // round computes alone.
    DecompositionEstimate uni = estimate(gather, model, unroll, false);
    EXPECT_DOUBLE_EQ(uni.ring, 3 * p1);
    EXPECT_DOUBLE_EQ(uni.epilogue, c);
    // Both directions at once use opposite links: a step of both costs one
    // permute; the even group's last shard comes from the left alone.
    DecompositionEstimate bidi = estimate(gather, model, unroll, true);
    EXPECT_DOUBLE_EQ(bidi.ring, 2 * p1);
    EXPECT_DOUBLE_EQ(bidi.epilogue, c);
  }
}

TEST_F(DecompositionEstimateTest, ReduceScatterOnWrappingRing) {
  MachineModel model = machine("tpu-v4", "4x4x4");
  double p1 = model.costModel.permuteTime(kShardBytes, 1);
  double c = comp(scatter, model) / 4;
  double add = model.costModel.einsumTime(4096.0 * 1024, 3 * kShardBytes,
                                          ElementKind::BF16);
  // One chain, each round's einsum computed ahead and added to the sum the
  // previous permute brought: three permutes overlap the next rounds'
  // einsums (the first computes alone, in the epilogue); three additions
  // join the loop's computation and sit between the chain's transfers.
  DecompositionEstimate chain = estimate(scatter, model, 1, false);
  EXPECT_DOUBLE_EQ(chain.ring, 3 * p1 + 3 * add);
  EXPECT_DOUBLE_EQ(chain.epilogue, c);
  EXPECT_DOUBLE_EQ(chain.loopComp, 3 * c + 3 * add);
  // Two chains hopping two devices: two overlapped permutes whose two
  // transfers share every link they cross, the one-hop epilogue, the first
  // and the last einsum, the addition of the chains.
  DecompositionEstimate unrolled = estimate(scatter, model, 2, false);
  EXPECT_DOUBLE_EQ(unrolled.ring,
                   2 * model.costModel.permuteTime(2 * kShardBytes, 2));
  EXPECT_DOUBLE_EQ(unrolled.epilogue, p1 + 2 * c + add);
  // Both ways on 4 devices: the upward chain's first hop overlaps the
  // einsum of both chains' next shards; the last hop of both (opposite
  // links, one permute's time), the first einsum, the chains' addition and
  // the owner's own shard do not overlap.
  DecompositionEstimate bidi = estimate(scatter, model, 1, true);
  EXPECT_DOUBLE_EQ(bidi.ring, p1 + add);
  EXPECT_DOUBLE_EQ(bidi.epilogue, c + p1 + add + c);
  EXPECT_DOUBLE_EQ(bidi.loopComp, 2 * c + add);
}

/// Ring permutes of one shard along `axes`, one per shift, issued together.
TransferLoad ringLoad(const MachineModel &model, ArrayRef<int16_t> axes,
                      ArrayRef<int64_t> shifts) {
  SmallVector<GroupTransfers> transfers;
  int64_t n = model.assignment.groupSize(axes);
  for (int64_t shift : shifts) {
    GroupTransfers &group = transfers.emplace_back();
    group.axes.assign(axes.begin(), axes.end());
    group.bytes = 1;
    for (int64_t i = 0; i < n; ++i)
      group.pairs.emplace_back(i, ((i - shift) % n + n) % n);
  }
  return model.getLoad(transfers);
}

/// Without wrap-around the ring's closing edge walks back over the line,
/// three hops, and both directions at once share every link.
TEST_F(DecompositionEstimateTest, LineWithoutWrapAround) {
  MachineModel model = machine("tpu-v4", "1x1x4");
  ASSERT_FALSE(model.topology.hasWrapAround());
  TransferLoad left = ringLoad(model, {0}, {1});
  EXPECT_EQ(left.maxHops, 3);
  EXPECT_EQ(left.maxLinkBytes, 1);
  TransferLoad both = ringLoad(model, {0}, {1, -1});
  EXPECT_EQ(both.maxHops, 3);
  EXPECT_EQ(both.maxLinkBytes, 2);
  double c = comp(gather, model) / 4;
  DecompositionEstimate uni = estimate(gather, model, 1, false);
  EXPECT_DOUBLE_EQ(uni.ring, 3 * model.costModel.permuteTime(kShardBytes, 3));
  EXPECT_DOUBLE_EQ(uni.epilogue, c);
  DecompositionEstimate bidi = estimate(gather, model, 1, true);
  EXPECT_DOUBLE_EQ(bidi.ring,
                   model.costModel.permuteTime(2 * kShardBytes, 3) +
                       model.costModel.permuteTime(kShardBytes, 3));
}

/// Behind a switch every destination is one hop away, and the transfers a
/// device starts at once share its egress.
TEST_F(DecompositionEstimateTest, Switch) {
  MachineModel model = machine("h100-nvlink", "");
  TransferLoad two = ringLoad(model, {0}, {2});
  EXPECT_EQ(two.maxHops, 1);
  EXPECT_EQ(two.maxLinkBytes, 1);
  EXPECT_EQ(ringLoad(model, {0}, {1, -1}).maxLinkBytes, 2);
  DecompositionEstimate unrolled = estimate(scatter, model, 2, false);
  EXPECT_DOUBLE_EQ(unrolled.ring,
                   2 * model.costModel.permuteTime(kShardBytes, 1));
}

} // namespace
