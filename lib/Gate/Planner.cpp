//===- Planner.cpp - The gate's choice of forms, without IR ---------------===//
//
// In order: every candidate priced alone and the decompositions chosen by
// gain (selectDecompositions); rounds that price the kept candidates
// beside the loops chosen and decompose the best (selectBesideLoops), with
// each loop's variant chosen again beside the others (chooseLoopsAgain);
// the asynchronous choice of what is kept; then, with a choice of loops,
// each block's loops priced together against every variant forced and
// against the whole plan made with one variant only (chooseLoopsTogether).
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/Gate/Planner.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <tuple>

#define DEBUG_TYPE "ovl-decompose-collective-einsum"

using namespace mlir::ovl;
using namespace mlir::ovl::gate;
using llvm::ArrayRef;
using llvm::failed;
using llvm::failure;
using llvm::FailureOr;
using llvm::LogicalResult;
using llvm::MutableArrayRef;
using llvm::SmallVector;
using llvm::SmallVectorImpl;
using llvm::success;

gate::Pricing::~Pricing() = default;

namespace {

/// How much faster than the loops chosen one by one a forced variant must
/// price to be built instead: less is noise of the schedule.
constexpr double kTogetherGain = 1e-3;

class Planner {
public:
  Planner(ArrayRef<Candidate> candidates, const PlanOptions &options,
          Pricing &pricing)
      : candidates(candidates), options(options), pricing(pricing) {}

  LogicalResult run(Plan &plan) {
    if (failed(decide(std::nullopt, plan.decisions)) ||
        failed(chooseLoopsTogether(plan.decisions, plan.together)))
      return failure();
    plan.takenAlong = getTakenAlong(plan.decisions);
    return success();
  }

private:
  /// The gate's decisions with the loops the candidates allow, or `only`
  /// that one: every candidate priced where the gate has a choice to make,
  /// its form and loop chosen.
  LogicalResult decide(std::optional<DecomposeOptions> only,
                       std::vector<Decision> &decisions) {
    decisions.assign(candidates.size(), Decision());
    for (auto [index, candidate] : llvm::enumerate(candidates)) {
      Decision &decision = decisions[index];
      decision.variants = candidate.variants;
      if (only)
        decision.variants = {pricing.resolve(index, *only)};
      // Priced when the gate has a choice to make from the prices: for
      // ordering decompositions, or between blocking and asynchronous.
      bool priced = options.gate == DecomposeGate::Cost
                        ? candidate.decomposable() || options.asyncCollectives
                        : options.gate == DecomposeGate::Always &&
                              candidate.decomposable();
      if (priced &&
          failed(price(index, decision,
                       PriceContext{options.asyncCollectives, {}, true},
                       decision.estimate)))
        return failure();
    }
    selectDecompositions(decisions);
    return selectBesideLoops(decisions);
  }

  LogicalResult price(size_t index, Decision &decision,
                      const PriceContext &context,
                      std::optional<CollectiveEstimate> &result) {
    return pricing.price(index, decision.variants, context, result,
                         decision.unpriced);
  }

  /// The all_gathers the decompositions chosen in gather-scatter form take
  /// along.
  llvm::DenseSet<size_t> getTakenAlong(ArrayRef<Decision> decisions) const {
    llvm::DenseSet<size_t> taken;
    for (auto [index, decision] : llvm::enumerate(decisions))
      if (decision.form == CollectiveForm::Decomposed &&
          decision.loop.withGather && candidates[index].gatherAlong)
        taken.insert(*candidates[index].gatherAlong);
    return taken;
  }

  /// Chooses the candidates to decompose: by decreasing gain (those
  /// without an estimate last, in program order), each decomposable
  /// candidate whose einsums no earlier one took, if the gate lets it
  /// through.
  void selectDecompositions(MutableArrayRef<Decision> decisions) const {
    if (options.gate == DecomposeGate::Never)
      return;
    SmallVector<size_t> order;
    for (auto [index, candidate] : llvm::enumerate(candidates))
      if (candidate.decomposable())
        order.push_back(index);
    llvm::sort(order, [&](size_t a, size_t b) {
      const Decision &x = decisions[a], &y = decisions[b];
      if (x.estimate && y.estimate && x.gain() != y.gain())
        return x.gain() > y.gain();
      if (bool(x.estimate) != bool(y.estimate))
        return bool(x.estimate);
      return a < b;
    });
    llvm::DenseMap<unsigned, size_t> takenBy;
    for (size_t index : order) {
      Decision &decision = decisions[index];
      for (unsigned einsum : candidates[index].einsums)
        if (auto taker = takenBy.find(einsum); taker != takenBy.end()) {
          decision.outvotedBy = taker->second;
          break;
        }
      if (decision.outvotedBy)
        continue;
      // A tie keeps the collective: the loop costs buffers and code.
      if (options.gate == DecomposeGate::Cost &&
          (!decision.estimate || !decision.estimate->decompositionPays()))
        continue;
      decision.form = CollectiveForm::Decomposed;
      decision.loop = decision.estimate && decision.estimate->decomposed
                          ? decision.estimate->loop
                          : decision.variants.front();
      for (unsigned einsum : candidates[index].einsums)
        takenBy[einsum] = index;
    }
  }

  /// The decompositions chosen in the block of `index`, other than itself,
  /// with their loops.
  SmallVector<Loop> getLoopsBeside(ArrayRef<Decision> decisions,
                                   size_t index) const {
    SmallVector<Loop> loops;
    for (auto [other, decision] : llvm::enumerate(decisions))
      if (other != index && decision.form == CollectiveForm::Decomposed &&
          candidates[other].block == candidates[index].block)
        loops.push_back({other, decision.loop});
    return loops;
  }

  /// With several loop variants, prices each decomposition's variants again
  /// beside the other decompositions of its block (the fastest beside a
  /// kept collective may not be beside a loop) and takes the fastest;
  /// whether a loop changed.
  FailureOr<bool> chooseLoopsAgain(MutableArrayRef<Decision> decisions) {
    bool changed = false;
    for (auto [index, decision] : llvm::enumerate(decisions)) {
      if (decision.form != CollectiveForm::Decomposed || !decision.estimate ||
          decision.variants.size() < 2)
        continue;
      SmallVector<Loop> others = getLoopsBeside(decisions, index);
      if (others.empty())
        continue;
      if (failed(price(index, decision,
                       PriceContext{options.asyncCollectives, others, true},
                       decision.amongLoops)))
        return failure();
      if (decision.amongLoops && decision.amongLoops->decomposed &&
          !(decision.amongLoops->loop == decision.loop)) {
        LLVM_DEBUG(llvm::dbgs()
                   << "[" DEBUG_TYPE "] " << pricing.describe(index) << " loop "
                   << describeLoop(decision.loop) << " -> "
                   << describeLoop(decision.amongLoops->loop) << "\n");
        decision.loop = decision.amongLoops->loop;
        changed = true;
      }
    }
    return changed;
  }

  /// With gate=cost, prices again each candidate kept in a block where
  /// decompositions were chosen, beside them: the other candidate of its
  /// einsum may have become a loop, which a blocking collective can no
  /// longer hide under, and a pair whose loop gained nothing beside another
  /// collective may gain beside that one's loop. Decomposes the candidate
  /// that gains most there (its einsums still free) and prices again,
  /// until none gains. Then chooses the form of each candidate kept:
  /// asynchronous when allowed and, with gate=cost, priced no slower than
  /// blocking where it was last priced.
  LogicalResult selectBesideLoops(MutableArrayRef<Decision> decisions) {
    llvm::DenseMap<unsigned, size_t> takenBy;
    for (auto [index, decision] : llvm::enumerate(decisions))
      if (decision.form == CollectiveForm::Decomposed)
        for (unsigned einsum : candidates[index].einsums)
          takenBy[einsum] = index;
    // A candidate that cannot be decomposed any more is priced only for the
    // form it is kept in, which the loops beside it in the last round that
    // saw it decide: priced once, after the rounds, beside those (its
    // estimates in the rounds before would be thrown away).
    llvm::MapVector<size_t, SmallVector<Loop>> keptBeside;
    // Each round adds a decomposition or changes a loop; the bound stops
    // loops that would trade variants back and forth.
    for (size_t round = 0;
         options.gate == DecomposeGate::Cost && round < 4 * candidates.size();
         ++round) {
      std::optional<size_t> best;
      llvm::DenseSet<size_t> taken = getTakenAlong(decisions);
      for (auto [index, decision] : llvm::enumerate(decisions)) {
        if (decision.form == CollectiveForm::Decomposed || !decision.estimate ||
            taken.contains(index))
          continue;
        SmallVector<Loop> decomposed = getLoopsBeside(decisions, index);
        if (decomposed.empty())
          continue;
        bool free =
            candidates[index].decomposable() &&
            llvm::none_of(candidates[index].einsums, [&](unsigned einsum) {
              return takenBy.contains(einsum);
            });
        if (!free) {
          keptBeside[index] = std::move(decomposed);
          continue;
        }
        keptBeside.erase(index);
        if (failed(
                price(index, decision,
                      PriceContext{options.asyncCollectives, decomposed, free},
                      decision.besideLoops)))
          return failure();
        if (free && decision.besideLoops &&
            decision.besideLoops->decompositionPays() &&
            (!best || decision.besideLoops->gain() >
                          decisions[*best].besideLoops->gain()))
          best = index;
      }
      if (best) {
        Decision &chosen = decisions[*best];
        LLVM_DEBUG(llvm::dbgs()
                   << "[" DEBUG_TYPE "] " << pricing.describe(*best)
                   << " decomposed beside the loops, gain "
                   << chosen.besideLoops->gain() << " s\n");
        chosen.form = CollectiveForm::Decomposed;
        chosen.decomposedBeside = true;
        chosen.loop = chosen.besideLoops->loop;
        for (unsigned einsum : candidates[*best].einsums)
          takenBy[einsum] = *best;
        for (auto [index, decision] : llvm::enumerate(decisions))
          if (index != *best && !decision.outvotedBy &&
              llvm::any_of(candidates[index].einsums, [&](unsigned einsum) {
                auto taker = takenBy.find(einsum);
                return taker != takenBy.end() && taker->second == *best;
              }))
            decision.outvotedBy = *best;
        continue;
      }
      FailureOr<bool> changed = chooseLoopsAgain(decisions);
      if (failed(changed))
        return failure();
      if (!*changed)
        break;
    }
    // Only the asynchronous choice and its remark read those estimates.
    if (!options.asyncCollectives)
      return success();
    for (auto &[index, decomposed] : keptBeside)
      if (failed(
              price(index, decisions[index],
                    PriceContext{options.asyncCollectives, decomposed, false},
                    decisions[index].besideLoops)))
        return failure();
    chooseKeptForms(decisions);
    return success();
  }

  /// The form of each candidate neither decomposed nor taken along:
  /// asynchronous where the gate does not price (if its result can be
  /// received into), else the faster kept form where it was last priced.
  void chooseKeptForms(MutableArrayRef<Decision> decisions) const {
    llvm::DenseSet<size_t> taken = getTakenAlong(decisions);
    for (auto [index, decision] : llvm::enumerate(decisions)) {
      if (decision.form == CollectiveForm::Decomposed || taken.contains(index))
        continue;
      if (options.gate != DecomposeGate::Cost) {
        if (candidates[index].staticResult)
          decision.form = CollectiveForm::Asynchronous;
        continue;
      }
      if (!decision.estimate)
        continue;
      decision.form =
          (decision.besideLoops ? *decision.besideLoops : *decision.estimate)
              .bestKept();
      LLVM_DEBUG(llvm::dbgs()
                 << "[" DEBUG_TYPE "] " << pricing.describe(index) << " kept "
                 << stringifyCollectiveForm(decision.form) << "\n");
    }
  }

  /// The decompositions of `block` with their loops, each forced to
  /// `forced` where its variants allow it.
  SmallVector<Loop> getBlockLoops(ArrayRef<Decision> decisions, unsigned block,
                                  std::optional<DecomposeOptions> forced) {
    SmallVector<Loop> loops;
    for (auto [index, decision] : llvm::enumerate(decisions)) {
      if (decision.form != CollectiveForm::Decomposed ||
          candidates[index].block != block)
        continue;
      DecomposeOptions loop = decision.loop;
      if (forced) {
        DecomposeOptions resolved = pricing.resolve(index, *forced);
        if (llvm::is_contained(decision.variants, resolved))
          loop = resolved;
      }
      loops.push_back({index, loop});
    }
    return loops;
  }

  /// A loop decided, as a key: the candidate and its variant's fields.
  using LoopKey = std::tuple<size_t, unsigned, RingLoopDirection, bool>;
  static std::vector<LoopKey> getKey(ArrayRef<Loop> loops) {
    std::vector<LoopKey> key;
    for (const auto &[candidate, loop] : loops)
      key.emplace_back(candidate, loop.unroll, loop.direction, loop.withGather);
    return key;
  }
  /// A block's price with one set of loops, or why there is none.
  struct BlockPrice {
    std::optional<double> step;
    std::string why;
  };

  /// With gate=cost and a choice of loops, prices each block together,
  /// built as the pipeline would: its loops as chosen one by one (each the
  /// fastest in its window, beside the others' windows), the same loops all
  /// forced to each variant, and the gate's whole decision made again with
  /// only that variant; builds the fastest. Windows see a loop's
  /// neighbours, not the whole step: the GPT-64B training step's loops,
  /// chosen one by one, made a step 10% slower than the gate's with
  /// bidirectional loops only. A tie keeps the loops as chosen.
  LogicalResult chooseLoopsTogether(MutableArrayRef<Decision> decisions,
                                    SmallVectorImpl<BlockLoops> &together) {
    if (options.gate != DecomposeGate::Cost || !options.loopsTogether)
      return success();
    // The blocks with a decomposable candidate, with the variants the
    // candidates allow there, in the order they list them.
    llvm::MapVector<unsigned, SmallVector<DecomposeOptions>> blocks;
    for (const Candidate &candidate : candidates) {
      if (!candidate.decomposable() || candidate.variants.size() < 2)
        continue;
      SmallVector<DecomposeOptions> &variants = blocks[candidate.block];
      for (const DecomposeOptions &loop : candidate.variants)
        if (!llvm::is_contained(variants, loop))
          variants.push_back(loop);
    }
    // The gate's decisions with each variant alone, for all candidates.
    std::map<std::pair<unsigned, RingLoopDirection>, std::vector<Decision>>
        runs;
    auto decideOnly = [&](const DecomposeOptions &loop)
        -> FailureOr<const std::vector<Decision> *> {
      auto key = std::make_pair(loop.unroll, loop.direction);
      if (auto known = runs.find(key); known != runs.end())
        return &known->second;
      std::vector<Decision> run;
      if (failed(decide(loop, run)))
        return failure();
      return &runs.emplace(key, std::move(run)).first->second;
    };
    for (auto &entry : blocks) {
      unsigned block = entry.first;
      ArrayRef<DecomposeOptions> variants = entry.second;
      BlockLoops result;
      result.block = block;
      // Alternatives often build the same loops (a variant forced on loops
      // that have it already, the gate's choice with one variant only where
      // that is what was chosen): each set of loops is priced once.
      std::map<std::vector<LoopKey>, BlockPrice> known;
      auto price = [&](ArrayRef<Decision> decided,
                       std::optional<DecomposeOptions> forced)
          -> FailureOr<std::optional<double>> {
        SmallVector<Loop> loops = getBlockLoops(decided, block, forced);
        auto [entry, added] = known.try_emplace(getKey(loops));
        BlockPrice &priced = entry->second;
        if (added && failed(pricing.priceBlock(block, options.asyncCollectives,
                                               loops, priced.step, priced.why)))
          return failure();
        if (!priced.step)
          result.why = priced.why;
        return priced.step;
      };
      FailureOr<std::optional<double>> chosen = price(decisions, std::nullopt);
      if (failed(chosen))
        return failure();
      if (!*chosen) {
        together.push_back(std::move(result));
        continue;
      }
      result.chosen = **chosen;
      double best = **chosen;
      std::optional<DecomposeOptions> bestForced;
      const std::vector<Decision> *bestRun = nullptr;
      auto consider = [&](std::string what, double step,
                          std::optional<DecomposeOptions> forced,
                          const std::vector<Decision> *run) {
        result.tried.push_back({what, step});
        if (step < best * (1 - kTogetherGain)) {
          best = step;
          result.built = what;
          bestForced = forced;
          bestRun = run;
        }
      };
      for (const DecomposeOptions &loop : variants) {
        FailureOr<std::optional<double>> step = price(decisions, loop);
        if (failed(step))
          return failure();
        if (*step)
          consider("the loops chosen, all " + describeLoop(loop), **step, loop,
                   nullptr);
        FailureOr<const std::vector<Decision> *> run = decideOnly(loop);
        if (failed(run))
          return failure();
        step = price(**run, std::nullopt);
        if (failed(step))
          return failure();
        if (*step)
          consider("the gate's choice with " + describeLoop(loop) +
                       " loops only",
                   **step, std::nullopt, *run);
      }
      LLVM_DEBUG(llvm::dbgs()
                 << "[" DEBUG_TYPE "] loops together: as chosen "
                 << *result.chosen << " s, built "
                 << (result.built.empty() ? "as chosen" : result.built) << " "
                 << best << " s\n");
      for (auto [index, decision] : llvm::enumerate(decisions)) {
        if (candidates[index].block != block)
          continue;
        if (bestRun) {
          decision = (*bestRun)[index];
        } else if (bestForced && decision.form == CollectiveForm::Decomposed) {
          DecomposeOptions resolved = pricing.resolve(index, *bestForced);
          if (llvm::is_contained(decision.variants, resolved))
            decision.loop = resolved;
        }
      }
      together.push_back(std::move(result));
    }
    return success();
  }

  ArrayRef<Candidate> candidates;
  const PlanOptions &options;
  Pricing &pricing;
};

} // namespace

FailureOr<Plan> gate::plan(ArrayRef<Candidate> candidates,
                           const PlanOptions &options, Pricing &pricing) {
  Plan result;
  if (failed(Planner(candidates, options, pricing).run(result)))
    return failure();
  return result;
}
