//===- PlannerTest.cpp - The gate's choice of forms, on made-up prices ----===//
//
// The planner decides from prices alone, so each rule of the gate is shown
// on prices chosen to trigger it: the larger gain takes a shared einsum, a
// tie keeps the collective, a loop priced beside another may pay where it
// did not alone, a variant is chosen again among the loops, a block's
// loops are forced to the variant that prices fastest together, and a
// failure to price ends the plan.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/Gate/Planner.h"

#include "gtest/gtest.h"

#include <functional>

using namespace mlir::ovl;
using namespace mlir::ovl::gate;

namespace {

const DecomposeOptions kOneWay{1, RingLoopDirection::Unidirectional, false};
const DecomposeOptions kBothWays{1, RingLoopDirection::Bidirectional, false};
const DecomposeOptions kWithGather{1, RingLoopDirection::Unidirectional, true};

/// The estimate of a collective taking `blocking` blocking and `async`
/// asynchronous (if priced), each of `loops` taking `loopStep(loop)`: the
/// first fastest is the decomposition, as the pass's pricing orders them.
CollectiveEstimate
makeEstimate(double blocking, std::optional<double> async,
             llvm::ArrayRef<DecomposeOptions> loops,
             const std::function<double(const DecomposeOptions &)> &loopStep) {
  CollectiveEstimate estimate;
  estimate.blocking = {blocking, 1};
  if (async)
    estimate.asynchronous = FormEstimate{*async, 1};
  for (const DecomposeOptions &loop : loops) {
    FormEstimate form{loopStep(loop), 1};
    estimate.loops.push_back({loop, form});
    if (!estimate.decomposed || form.step < estimate.decomposed->step) {
      estimate.decomposed = form;
      estimate.loop = loop;
    }
  }
  return estimate;
}

/// Prices made up by the test: `forms` answers every candidate's pricing
/// (nullopt: it cannot be priced), `block` every block's.
struct FakePricing : Pricing {
  using Forms = std::function<std::optional<CollectiveEstimate>(
      size_t, llvm::ArrayRef<DecomposeOptions>, const PriceContext &)>;
  Forms forms;
  std::function<std::optional<double>(unsigned, llvm::ArrayRef<Loop>)> block;
  /// Pricing this candidate fails, which ends the plan.
  std::optional<size_t> failOn;
  unsigned priced = 0;
  unsigned blocksPriced = 0;

  llvm::LogicalResult price(size_t candidate,
                            llvm::ArrayRef<DecomposeOptions> loops,
                            const PriceContext &context,
                            std::optional<CollectiveEstimate> &result,
                            std::string &unpriced) override {
    ++priced;
    if (failOn == candidate)
      return llvm::failure();
    if (std::optional<CollectiveEstimate> estimate =
            forms(candidate, loops, context))
      result = estimate;
    else
      unpriced = "made up without a price";
    return llvm::success();
  }
  llvm::LogicalResult priceBlock(unsigned b, bool, llvm::ArrayRef<Loop> loops,
                                 std::optional<double> &step,
                                 std::string &why) override {
    ++blocksPriced;
    step = block ? block(b, loops) : std::nullopt;
    if (!step)
      why = "no block price made up";
    return llvm::success();
  }
  DecomposeOptions resolve(size_t, const DecomposeOptions &loop) override {
    return loop;
  }
  std::string describe(size_t candidate) override {
    return "#" + std::to_string(candidate);
  }
};

Candidate makeCandidate(unsigned block, llvm::SmallVector<unsigned, 2> einsums,
                        llvm::SmallVector<DecomposeOptions, 6> variants = {
                            kOneWay}) {
  Candidate candidate;
  candidate.block = block;
  candidate.einsums = std::move(einsums);
  candidate.variants = std::move(variants);
  return candidate;
}

PlanOptions paperGate() {
  return PlanOptions{DecomposeGate::Cost, /*asyncCollectives=*/false,
                     /*loopsTogether=*/false};
}

Plan planOrDie(llvm::ArrayRef<Candidate> candidates, const PlanOptions &options,
               Pricing &pricing) {
  llvm::FailureOr<Plan> plan = gate::plan(candidates, options, pricing);
  EXPECT_TRUE(llvm::succeeded(plan));
  return llvm::succeeded(plan) ? *plan : Plan();
}

TEST(PlannerTest, TheLargerGainTakesASharedEinsum) {
  // An all_gather and a reduce_scatter of one einsum: 10 -> 8 and 10 -> 5.
  std::vector<Candidate> candidates = {makeCandidate(0, {0}),
                                       makeCandidate(0, {0})};
  FakePricing pricing;
  pricing.forms = [](size_t candidate, auto loops, const PriceContext &) {
    return makeEstimate(10, std::nullopt, loops,
                        [&](auto &) { return candidate == 0 ? 8 : 5; });
  };
  Plan plan = planOrDie(candidates, paperGate(), pricing);
  EXPECT_EQ(plan.decisions[1].form, CollectiveForm::Decomposed);
  EXPECT_EQ(plan.decisions[0].form, CollectiveForm::Blocking);
  EXPECT_EQ(plan.decisions[0].outvotedBy, std::optional<size_t>(1));
  EXPECT_DOUBLE_EQ(plan.decisions[1].chosenGain(), 5);
}

TEST(PlannerTest, ATieKeepsTheCollectiveAsTheFasterKeptForm) {
  std::vector<Candidate> candidates = {makeCandidate(0, {0})};
  FakePricing pricing;
  pricing.forms = [](size_t, auto loops, const PriceContext &context) {
    return makeEstimate(
        10, context.asyncCollectives ? std::optional<double>(7) : std::nullopt,
        loops, [&](auto &) { return context.asyncCollectives ? 7.0 : 10.0; });
  };
  Plan paper = planOrDie(candidates, paperGate(), pricing);
  EXPECT_EQ(paper.decisions[0].form, CollectiveForm::Blocking);
  PlanOptions async = paperGate();
  async.asyncCollectives = true;
  Plan plan = planOrDie(candidates, async, pricing);
  EXPECT_EQ(plan.decisions[0].form, CollectiveForm::Asynchronous);
}

TEST(PlannerTest, GateAlwaysDecomposesWhatPricesDoNotFavour) {
  std::vector<Candidate> candidates = {makeCandidate(0, {0}, {kBothWays}),
                                       makeCandidate(0, {1}, {kBothWays})};
  FakePricing pricing;
  pricing.forms =
      [](size_t candidate, auto loops,
         const PriceContext &) -> std::optional<CollectiveEstimate> {
    if (candidate == 1)
      return std::nullopt;
    return makeEstimate(5, std::nullopt, loops, [](auto &) { return 9; });
  };
  PlanOptions always{DecomposeGate::Always, false, false};
  Plan plan = planOrDie(candidates, always, pricing);
  for (const Decision &decision : plan.decisions) {
    EXPECT_EQ(decision.form, CollectiveForm::Decomposed);
    EXPECT_EQ(decision.loop, kBothWays);
  }
  EXPECT_EQ(plan.decisions[1].unpriced, "made up without a price");
}

TEST(PlannerTest, GateNeverPricesNothingAndKeepsWhatCanBeReceivedAsync) {
  std::vector<Candidate> candidates = {makeCandidate(0, {0}),
                                       makeCandidate(0, {1})};
  candidates[1].staticResult = false;
  FakePricing pricing;
  pricing.forms = [](size_t, auto, const PriceContext &) {
    ADD_FAILURE() << "gate=never priced a form";
    return std::optional<CollectiveEstimate>();
  };
  PlanOptions never{DecomposeGate::Never, true, false};
  Plan plan = planOrDie(candidates, never, pricing);
  EXPECT_EQ(pricing.priced, 0u);
  EXPECT_EQ(plan.decisions[0].form, CollectiveForm::Asynchronous);
  EXPECT_EQ(plan.decisions[1].form, CollectiveForm::Blocking);
}

TEST(PlannerTest, ALoopThatGainsOnlyBesideAnotherIsChosenThere) {
  // Candidate 1's loop gains nothing alone, 2 beside candidate 0's loop.
  std::vector<Candidate> candidates = {makeCandidate(0, {0}),
                                       makeCandidate(0, {1})};
  FakePricing pricing;
  pricing.forms = [](size_t candidate, auto loops,
                     const PriceContext &context) {
    bool beside = !context.decomposed.empty();
    double loop = candidate == 0 ? 6 : beside ? 8 : 10;
    return makeEstimate(10, std::nullopt, loops, [&](auto &) { return loop; });
  };
  Plan plan = planOrDie(candidates, paperGate(), pricing);
  EXPECT_EQ(plan.decisions[0].form, CollectiveForm::Decomposed);
  EXPECT_FALSE(plan.decisions[0].decomposedBeside);
  EXPECT_EQ(plan.decisions[1].form, CollectiveForm::Decomposed);
  EXPECT_TRUE(plan.decisions[1].decomposedBeside);
  EXPECT_DOUBLE_EQ(plan.decisions[1].chosenGain(), 2);
}

TEST(PlannerTest, ALoopIsChosenAgainAmongTheOthers) {
  // Alone, one way round is faster; beside the other loop, both ways.
  std::vector<Candidate> candidates = {
      makeCandidate(0, {0}, {kOneWay, kBothWays}),
      makeCandidate(0, {1}, {kOneWay, kBothWays})};
  FakePricing pricing;
  pricing.forms = [](size_t, auto loops, const PriceContext &context) {
    bool among = !context.decomposed.empty();
    return makeEstimate(10, std::nullopt, loops, [&](auto &loop) {
      return (loop == kBothWays) == among ? 5.0 : 6.0;
    });
  };
  Plan plan = planOrDie(candidates, paperGate(), pricing);
  for (const Decision &decision : plan.decisions) {
    EXPECT_EQ(decision.form, CollectiveForm::Decomposed);
    EXPECT_EQ(decision.loop, kBothWays);
    ASSERT_TRUE(decision.amongLoops);
    EXPECT_EQ(decision.estimate->loop, kOneWay);
  }
}

/// Two candidates of block 0 whose loops alone favour one way round;
/// priced together, both ways takes `bothWays` where the loops as chosen
/// take 10.
Plan planTogether(double bothWays, FakePricing &pricing) {
  std::vector<Candidate> candidates = {
      makeCandidate(0, {0}, {kOneWay, kBothWays}),
      makeCandidate(0, {1}, {kOneWay, kBothWays})};
  pricing.forms = [](size_t, auto loops, const PriceContext &) {
    return makeEstimate(10, std::nullopt, loops,
                        [](auto &loop) { return loop == kOneWay ? 5.0 : 6.0; });
  };
  pricing.block = [bothWays](unsigned, llvm::ArrayRef<Loop> loops) {
    return loops.size() == 2 && loops[0].second == kBothWays &&
                   loops[1].second == kBothWays
               ? bothWays
               : 10.0;
  };
  PlanOptions options = paperGate();
  options.loopsTogether = true;
  return planOrDie(candidates, options, pricing);
}

TEST(PlannerTest, ABlockTakesTheVariantItsLoopsPriceFastestWithTogether) {
  FakePricing pricing;
  Plan plan = planTogether(9, pricing);
  ASSERT_EQ(plan.together.size(), 1u);
  EXPECT_EQ(plan.together[0].chosen, std::optional<double>(10));
  EXPECT_EQ(plan.together[0].built,
            "the loops chosen, all unroll 1, bidirectional");
  for (const Decision &decision : plan.decisions)
    EXPECT_EQ(decision.loop, kBothWays);
  // Five alternatives (as chosen; each variant forced; the gate's choice
  // with each variant only) build two sets of loops, each priced once.
  EXPECT_EQ(pricing.blocksPriced, 2u);
}

TEST(PlannerTest, ABlockKeepsItsLoopsForLessThanATenthOfAPercent) {
  FakePricing pricing;
  Plan plan = planTogether(9.995, pricing);
  ASSERT_EQ(plan.together.size(), 1u);
  EXPECT_EQ(plan.together[0].built, "");
  // Every alternative was priced: each variant forced, and the gate's
  // choice with each variant only.
  EXPECT_EQ(plan.together[0].tried.size(), 4u);
  for (const Decision &decision : plan.decisions)
    EXPECT_EQ(decision.loop, kOneWay);
}

TEST(PlannerTest, ABlockThatCannotBePricedKeepsItsLoopsAndSaysWhy) {
  FakePricing pricing;
  std::vector<Candidate> candidates = {
      makeCandidate(0, {0}, {kOneWay, kBothWays})};
  pricing.forms = [](size_t, auto loops, const PriceContext &) {
    return makeEstimate(10, std::nullopt, loops, [](auto &) { return 5; });
  };
  PlanOptions options = paperGate();
  options.loopsTogether = true;
  Plan plan = planOrDie(candidates, options, pricing);
  ASSERT_EQ(plan.together.size(), 1u);
  EXPECT_FALSE(plan.together[0].chosen);
  EXPECT_EQ(plan.together[0].why, "no block price made up");
  EXPECT_EQ(plan.decisions[0].loop, kOneWay);
}

TEST(PlannerTest, APricingFailureEndsThePlan) {
  std::vector<Candidate> candidates = {makeCandidate(0, {0}),
                                       makeCandidate(0, {1})};
  FakePricing pricing;
  pricing.forms = [](size_t, auto loops, const PriceContext &) {
    return makeEstimate(10, std::nullopt, loops, [](auto &) { return 5; });
  };
  pricing.failOn = 1;
  EXPECT_TRUE(llvm::failed(gate::plan(candidates, paperGate(), pricing)));
}

TEST(PlannerTest, TheGatherScatterFormTakesItsGatherAlong) {
  // A gather (candidate 0) and the scatter of its einsum (candidate 1),
  // whose gather-scatter form gains more than the gather's loop.
  std::vector<Candidate> candidates = {makeCandidate(0, {0}),
                                       makeCandidate(0, {0}, {kWithGather})};
  candidates[1].gatherAlong = 0;
  FakePricing pricing;
  pricing.forms = [](size_t candidate, auto loops, const PriceContext &) {
    return makeEstimate(10, 9, loops,
                        [&](auto &) { return candidate == 0 ? 8 : 4; });
  };
  PlanOptions options = paperGate();
  options.asyncCollectives = true;
  Plan plan = planOrDie(candidates, options, pricing);
  EXPECT_EQ(plan.decisions[1].form, CollectiveForm::Decomposed);
  EXPECT_EQ(plan.decisions[1].loop, kWithGather);
  EXPECT_TRUE(plan.takenAlong.contains(0));
  // Taken along, the gather is neither decomposed nor made asynchronous.
  EXPECT_EQ(plan.decisions[0].form, CollectiveForm::Blocking);
}

} // namespace
