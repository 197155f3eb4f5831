//===- DecompositionEstimateTest.cpp - Tests of the gate's estimates ------===//
//
// The cost-model gate of ovl-decompose-collective-einsum: the blocking side
// against the collective's plan and the einsum's roofline, the decomposed
// side against the simulator playing the very loop the rewrite builds, for
// every variant on rings that wrap, that do not, and behind a switch; the
// IR is left as it was; unpriceable pairs say why.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/Analysis/CostEstimates.h"
#include "OverlapDialect/Analysis/MachineModel.h"
#include "OverlapDialect/Analysis/SimProgramBuilder.h"
#include "OverlapDialect/Dialect/Ovl/IR/OvlOps.h"
#include "OverlapDialect/Dialect/Ovl/Transforms/Transforms.h"
#include "OverlapDialect/InitAll.h"
#include "OverlapDialect/Simulator/Simulator.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::ovl;

namespace {

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

  /// The machine of the ring of 4 on `hardware` and `topology`, and the
  /// cache the pass would build from the same options.
  struct Machine {
    Machine(llvm::StringRef hardware, llvm::StringRef topology)
        : cache(hardware, topology, {}) {
      llvm::Expected<const MachineModel *> built = cache.get({4});
      EXPECT_TRUE(static_cast<bool>(built));
      model = built ? *built : nullptr;
    }
    MachineModelCache cache;
    const MachineModel *model;
  };

  CollectiveEstimate estimate(Operation *op, Machine &machine, unsigned unroll,
                              RingLoopDirection direction,
                              bool asynchronous = false) {
    DecomposeOptions options;
    options.unroll = unroll;
    options.direction = direction;
    std::string why;
    FailureOr<CollectiveEstimate> result = estimateCollectiveForms(
        op, *machine.model, machine.cache, options,
        FormContext{asynchronous, {}, true}, nullptr, why);
    EXPECT_TRUE(succeeded(result)) << why;
    return succeeded(result) ? *result : CollectiveEstimate{};
  }

  /// The function of `op` rewritten as the pass would (a copy; the test's
  /// module stays as parsed), its permutes asynchronous and scheduled, as
  /// ovl-overlap-pipeline leaves it.
  OwningOpRef<ModuleOp> decomposed(Operation *op, Machine &machine,
                                   unsigned unroll,
                                   RingLoopDirection direction) {
    OwningOpRef<ModuleOp> copy = cast<ModuleOp>((*module)->clone());
    DecomposeOptions options;
    options.unroll = unroll;
    options.direction = direction;
    IRRewriter rewriter(&context);
    SmallVector<Operation *> candidates;
    copy->walk([&](Operation *candidate) {
      if (candidate->getName() == op->getName())
        candidates.push_back(candidate);
    });
    for (Operation *candidate : candidates)
      EXPECT_TRUE(succeeded(
          isa<AllGatherOp>(candidate)
              ? decomposeAllGatherEinsum(rewriter, cast<AllGatherOp>(candidate),
                                         options)
              : decomposeEinsumReduceScatter(
                    rewriter, cast<ReduceScatterOp>(candidate), options)));
    makePermutesAsynchronous(*copy);
    copy->walk([&](func::FuncOp func) {
      EXPECT_TRUE(
          succeeded(scheduleRegions(func, machine.cache, ScheduleOptions())));
    });
    return copy;
  }

  /// The simulated step time of function `name` of `m` on `model`.
  static double simulated(ModuleOp m, StringRef name,
                          const MachineModel &model) {
    auto func = m.lookupSymbol<func::FuncOp>(name);
    FailureOr<SimProgram> program = buildSimProgram(func, model);
    EXPECT_TRUE(succeeded(program));
    if (failed(program))
      return 0;
    llvm::Expected<SimReport> report = simulate(*program, model);
    EXPECT_TRUE(static_cast<bool>(report));
    return report ? report->stepTime : 0;
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  AllGatherOp gather;
  ReduceScatterOp scatter;
};

/// The pair as written: the blocking collective's plan, then the einsum's
/// roofline (or the einsum, then the collective).
TEST_F(DecompositionEstimateTest, BlockingIsTheCollectivePlusTheEinsum) {
  Machine machine("tpu-v4", "4x4x4");
  const MachineModel &model = *machine.model;
  for (Operation *op : {gather.getOperation(), scatter.getOperation()}) {
    CollectiveEstimate e =
        estimate(op, machine, 1, RingLoopDirection::Unidirectional);
    Operation *einsum = isa<AllGatherOp>(op)
                            ? *op->getResult(0).getUsers().begin()
                            : op->getOperand(0).getDefiningOp();
    double comp = estimateCompute(einsum, model.costModel)->seconds;
    EXPECT_EQ(e.groupSize, 4);
    EXPECT_DOUBLE_EQ(e.blocking.compute, comp);
    EXPECT_DOUBLE_EQ(
        e.blocking.step,
        comp + *estimateCollective(op, model, RingDirection::Bidirectional));
    ASSERT_TRUE(e.decomposed);
    EXPECT_FALSE(e.asynchronous);
    EXPECT_DOUBLE_EQ(e.gain(), e.blocking.step - e.decomposed->step);
  }
}

/// Estimating leaves the program as it was.
TEST_F(DecompositionEstimateTest, LeavesTheIRUnchanged) {
  std::string before;
  llvm::raw_string_ostream(before) << *module;
  Machine machine("tpu-v4", "4x4x4");
  estimate(gather, machine, 2, RingLoopDirection::Bidirectional);
  estimate(scatter, machine, 2, RingLoopDirection::Split);
  std::string after;
  llvm::raw_string_ostream(after) << *module;
  EXPECT_EQ(before, after);
}

/// What the gate predicts is what the simulator plays of the loop the
/// rewrite builds, on every variant, on a ring that wraps, a line that does
/// not (the closing edge walks back over three links) and behind a switch.
/// The simulator plays each device on its own; the estimate assumes they
/// keep in step, which holds within 1% here.
TEST_F(DecompositionEstimateTest, PredictsTheSimulatedLoop) {
  for (auto [hardware, topology] :
       {std::pair<StringRef, StringRef>{"tpu-v4", "4x4x4"},
        {"tpu-v4", "1x1x4"},
        {"h100-nvlink", ""}}) {
    Machine machine(hardware, topology);
    const MachineModel &model = *machine.model;
    for (Operation *op : {gather.getOperation(), scatter.getOperation()}) {
      StringRef name = isa<AllGatherOp>(op) ? "gather" : "scatter";
      EXPECT_NEAR(estimate(op, machine, 1, RingLoopDirection::Unidirectional)
                      .blocking.step,
                  simulated(*module, name, model), 1e-12);
      for (unsigned unroll : {1u, 2u})
        for (RingLoopDirection direction :
             {RingLoopDirection::Unidirectional,
              RingLoopDirection::Bidirectional, RingLoopDirection::Split}) {
          SCOPED_TRACE((hardware + " " + topology + " " + name + " " +
                        describeLoop({unroll, direction}))
                           .str());
          double predicted =
              estimate(op, machine, unroll, direction).decomposed->step;
          double played = simulated(*decomposed(op, machine, unroll, direction),
                                    name, model);
          EXPECT_NEAR(predicted, played, 0.01 * played);
        }
    }
  }
}

/// A window priced once is not priced again: two functions of the same
/// body (as the layers of a model are) share an estimate, one whose einsum
/// differs does not.
TEST(DecompositionEstimateCacheTest, RepeatedWindowsArePricedOnce) {
  DialectRegistry registry;
  overlap::registerAllDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  std::string layer = R"mlir(
    func.func @NAME(%x: tensor<2048x4096xbf16>, %w: tensor<4096x1024xbf16>)
        -> tensor<2048x4096xf32> {
      %g = ovl.all_gather %w on @ring axes [0] dim 1
          : tensor<4096x1024xbf16> -> tensor<4096x4096xbf16>
      %y = ovl.einsum "EQUATION" %x, %g
          : tensor<2048x4096xbf16>, tensor<4096x4096xbf16>
          -> tensor<2048x4096xf32>
      return %y : tensor<2048x4096xf32>
    }
  )mlir";
  auto instance = [&](llvm::StringRef name, llvm::StringRef equation) {
    std::string text = layer;
    text.replace(text.find("NAME"), 4, name.str());
    text.replace(text.find("EQUATION"), 8, equation.str());
    return text;
  };
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(
      "shard.grid @ring(shape = 4)\n" + instance("first", "bf,fh->bh") +
          instance("second", "bf,fh->bh") + instance("other", "bh,fh->bf"),
      &context);
  ASSERT_TRUE(module);
  SmallVector<AllGatherOp> gathers;
  module->walk([&](AllGatherOp op) { gathers.push_back(op); });
  ASSERT_EQ(gathers.size(), 3u);
  MachineModelCache machines("tpu-v4", "4x4x4", {});
  llvm::Expected<const MachineModel *> model = machines.get({4});
  ASSERT_TRUE(static_cast<bool>(model));
  FormContext async{true, {}, true};
  auto price = [&](AllGatherOp gather, PricingCache *cache) {
    std::string why;
    FailureOr<CollectiveEstimate> estimate = estimateCollectiveForms(
        gather, **model, machines, {DecomposeOptions()}, async, cache, why);
    EXPECT_TRUE(succeeded(estimate)) << why;
    return succeeded(estimate) ? *estimate : CollectiveEstimate{};
  };
  PricingCache cache;
  CollectiveEstimate first = price(gathers[0], &cache);
  EXPECT_EQ(cache.hits, 0u);
  CollectiveEstimate second = price(gathers[1], &cache);
  EXPECT_EQ(cache.hits, 1u);
  CollectiveEstimate fresh = price(gathers[1], nullptr);
  EXPECT_EQ(second.blocking.step, fresh.blocking.step);
  EXPECT_EQ(second.asynchronous->step, fresh.asynchronous->step);
  EXPECT_EQ(second.decomposed->step, fresh.decomposed->step);
  EXPECT_EQ(first.decomposed->step, second.decomposed->step);
  price(gathers[2], &cache);
  EXPECT_EQ(cache.hits, 1u);
  // The same window with other forms priced is another entry.
  std::string why;
  EXPECT_TRUE(succeeded(estimateCollectiveForms(
      gathers[0], **model, machines, {DecomposeOptions()},
      FormContext{true, {}, false}, &cache, why)));
  EXPECT_EQ(cache.hits, 1u);
}

/// A pair with a dynamic shape has no estimate, and says why.
TEST(DecompositionEstimateErrorTest, DynamicShapesAreNotPriced) {
  DialectRegistry registry;
  overlap::registerAllDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(R"mlir(
    shard.grid @ring(shape = 4)
    func.func @gather(%x: tensor<?x64xbf16>, %w: tensor<64x16xbf16>)
        -> tensor<?x64xf32> {
      %g = ovl.all_gather %w on @ring axes [0] dim 1
          : tensor<64x16xbf16> -> tensor<64x64xbf16>
      %y = ovl.einsum "bf,fh->bh" %x, %g
          : tensor<?x64xbf16>, tensor<64x64xbf16> -> tensor<?x64xf32>
      return %y : tensor<?x64xf32>
    }
  )mlir",
                                                             &context);
  ASSERT_TRUE(module);
  AllGatherOp gather;
  module->walk([&](AllGatherOp op) { gather = op; });
  MachineModelCache machines("tpu-v4", "4x4x4", {});
  llvm::Expected<const MachineModel *> model = machines.get({4});
  ASSERT_TRUE(static_cast<bool>(model));
  std::string why;
  EXPECT_TRUE(failed(estimateCollectiveForms(gather, **model, machines,
                                             {DecomposeOptions()},
                                             FormContext(), nullptr, why)));
  EXPECT_NE(why.find("static shapes"), std::string::npos) << why;
}

} // namespace
