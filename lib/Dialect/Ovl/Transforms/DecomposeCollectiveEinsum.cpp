//===- DecomposeCollectiveEinsum.cpp - The decomposition pass -------------===//
//
// Picks the AllGather-Einsum and Einsum-ReduceScatter pairs of a function
// and rewrites each with LoopedAllGatherEinsum / LoopedEinsumReduceScatter
// when the cost model prices the loop faster than the pair (section 5.5;
// DecompositionCost.cpp builds every form and prices it). An einsum with
// two candidates (figure 3: two gathered inputs, or a gathered input and a
// scattered result) is decomposed for the one with the larger gain only,
// unless the reduce_scatter's gather-scatter form (LoopedGatherEinsumScatter)
// takes both.
// With async-collectives, every collective kept (the other candidate, an
// all_reduce, a pair the loop would not speed up) becomes a start and a done
// unless blocking prices faster.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/Dialect/Ovl/Transforms/Passes.h"

#include "OverlapDialect/Analysis/MachineModel.h"
#include "OverlapDialect/Dialect/Ovl/IR/OvlOps.h"
#include "OverlapDialect/Dialect/Ovl/Transforms/Transforms.h"
#include "OverlapDialect/Support/Progress.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <list>
#include <map>
#include <optional>
#include <utility>

#define DEBUG_TYPE "ovl-decompose-collective-einsum"

namespace mlir::ovl {
#define GEN_PASS_DEF_OVLDECOMPOSECOLLECTIVEEINSUMPASS
#include "OverlapDialect/Dialect/Ovl/Transforms/Passes.h.inc"
} // namespace mlir::ovl

using namespace mlir;
using namespace mlir::ovl;

namespace {

/// How much faster than the loops chosen one by one a forced variant must
/// price to be built instead: less is noise of the schedule.
constexpr double kTogetherGain = 1e-3;

/// `seconds` with three significant digits in s, ms, us or ns:
/// "1.20 ms", "450 us", "-3.07 us".
std::string formatTime(double seconds) {
  if (seconds == 0 || !std::isfinite(seconds))
    return seconds == 0 ? "0 s" : llvm::formatv("{0} s", seconds).str();
  static const std::pair<double, const char *> units[] = {
      {1, "s"}, {1e-3, "ms"}, {1e-6, "us"}, {1e-9, "ns"}};
  double magnitude = std::fabs(seconds);
  size_t unit = 0;
  while (unit + 1 < std::size(units) && magnitude < units[unit].first)
    ++unit;
  double value = seconds / units[unit].first;
  // Two decimals below 10, one below 100, none above; a value that rounds
  // up to 1000 moves to the larger unit.
  auto decimals = [](double v) {
    v = std::fabs(v);
    return v < 9.995 ? 2 : v < 99.95 ? 1 : 0;
  };
  if (std::fabs(value) >= 999.5 && unit > 0) {
    --unit;
    value = seconds / units[unit].first;
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::format("%.*f", decimals(value), value) << " "
     << units[unit].second;
  return text;
}

/// "all_gather along axis 1 (N=4)".
std::string describeCollective(Operation *op, int64_t groupSize) {
  ArrayRef<int16_t> axes = cast<CollectiveOpInterface>(op).getGridAxes();
  std::string text = op->getName().stripDialect().str();
  if (axes.size() == 1)
    text += " along axis " + std::to_string(axes.front());
  else
    text += " along axes [" +
            llvm::join(llvm::map_range(
                           axes, [](int16_t a) { return std::to_string(a); }),
                       ", ") +
            "]";
  return text + " (N=" +
         (groupSize > 0 ? std::to_string(groupSize) : std::string("?")) + ")";
}

/// "predicted 1.20 ms blocking (compute 800 us), 1.10 ms asynchronous
/// (compute 800 us), 1.05 ms decomposed (compute 810 us), gain 50 us": the
/// forms priced, and what decomposing saves over the best of the others.
std::string describeEstimate(const CollectiveEstimate &estimate) {
  std::string text;
  llvm::raw_string_ostream os(text);
  auto form = [&](const FormEstimate &e, StringRef name) {
    os << formatTime(e.step) << " " << name << " (compute "
       << formatTime(e.compute) << ")";
  };
  os << "predicted ";
  form(estimate.blocking, "blocking");
  if (estimate.asynchronous) {
    os << ", ";
    form(*estimate.asynchronous, "asynchronous");
  }
  if (estimate.loops.size() == 1) {
    os << ", ";
    form(*estimate.decomposed, "decomposed");
  } else if (!estimate.loops.empty()) {
    os << ", decomposed ";
    llvm::interleaveComma(estimate.loops, os, [&](const LoopEstimate &loop) {
      os << formatTime(loop.estimate.step) << " (" << describeLoop(loop.loop)
         << "; compute " << formatTime(loop.estimate.compute) << ")";
    });
  }
  if (estimate.decomposed)
    os << ", gain " << formatTime(estimate.gain());
  return text;
}

/// One collective the pass decides the form of.
struct Candidate {
  Operation *op;
  /// Why it cannot be decomposed; empty when it can.
  std::string why;
  int64_t groupSize = 0;
  /// The einsums its rewrite consumes.
  SmallVector<Operation *, 2> einsums;
  std::optional<CollectiveEstimate> estimate;
  /// Its forms priced again beside the decompositions chosen, for a
  /// candidate kept in a block where some were.
  std::optional<CollectiveEstimate> besideLoops;
  /// Why there is no estimate, when there is none.
  std::string unpriced;
  /// The candidate that took one of its einsums with a larger gain.
  const Candidate *outvotedBy = nullptr;
  CollectiveForm form = CollectiveForm::Blocking;
  /// Decomposed for its gain beside the loops chosen before it.
  bool decomposedBeside = false;

  bool decomposable() const { return why.empty(); }
  double gain() const { return estimate ? estimate->gain() : 0; }
  /// The gain it was (or would have been) decomposed for.
  double chosenGain() const {
    return decomposedBeside ? besideLoops->gain() : gain();
  }
  /// The loop it is decomposed as: the fastest priced where it was
  /// chosen (or last priced beside the other loops), else the first the
  /// options allow.
  DecomposeOptions loop;
  /// The loops the options allow for it.
  SmallVector<DecomposeOptions, 6> variants;
  /// Its loops priced again beside the other decompositions, when there
  /// are several variants and it was.
  std::optional<CollectiveEstimate> amongLoops;
};

/// A block's loops priced together (chooseLoopsTogether).
struct BlockLoops {
  Block *block;
  /// The step as the loops were chosen one by one; empty when it could not
  /// be priced, `why` says why.
  std::optional<double> chosen;
  std::string why;
  /// The alternatives priced: what they build, and their step.
  SmallVector<std::pair<std::string, double>> tried;
  /// The alternative built, empty when the loops stay as chosen.
  std::string built;
};

struct OvlDecomposeCollectiveEinsumPass
    : public ovl::impl::OvlDecomposeCollectiveEinsumPassBase<
          OvlDecomposeCollectiveEinsumPass> {
  using Base::Base;

  void runOnOperation() override {
    overlap::Progress reporter(getArgument(), 0, "windows priced");
    progress = &reporter;
    priced = 0;
    alternatives.clear();
    // The windows of the function run before are gone with its IR.
    estimates.windows.clear();
    SymbolTableCollection symbols;
    std::vector<Candidate> candidates;
    if (failed(decide(std::nullopt, symbols, candidates)))
      return signalPassFailure();
    SmallVector<BlockLoops> together;
    if (failed(chooseLoopsTogether(candidates, symbols, together)))
      return signalPassFailure();
    numWindowsReused += std::exchange(estimates.hits, 0);

    // Every remark before any rewrite: a remark may name another candidate's
    // collective, which its rewrite erases.
    // Gathers a gather-scatter rewrite takes with its reduce_scatter.
    takenAlong = getConsumedGathers(candidates);
    if (remarks) {
      for (const Candidate &candidate : candidates)
        remark(candidate);
      for (const BlockLoops &block : together)
        remark(block);
    }
    IRRewriter rewriter(&getContext());
    for (Candidate &candidate : candidates) {
      if (candidate.form != CollectiveForm::Decomposed)
        continue;
      // The rewrite erases the collective.
      bool gather = isa<AllGatherOp>(candidate.op);
      if (failed(decomposeCollective(rewriter, candidate.op, candidate.loop)))
        continue;
      ++(gather ? numAllGathers : numReduceScatters);
    }
    // After the decompositions, which do not erase collectives they keep.
    for (Candidate &candidate : candidates)
      if (candidate.form == CollectiveForm::Asynchronous &&
          !takenAlong.contains(candidate.op) &&
          succeeded(makeCollectiveAsynchronous(rewriter, candidate.op)))
        ++numAsynchronous;
  }

private:
  /// The all_gathers the decompositions chosen in gather-scatter form take
  /// along.
  static llvm::DenseSet<Operation *>
  getConsumedGathers(ArrayRef<Candidate> candidates) {
    llvm::DenseSet<Operation *> consumed;
    for (const Candidate &candidate : candidates)
      if (candidate.form == CollectiveForm::Decomposed &&
          candidate.loop.withGather)
        if (AllGatherOp gather =
                getGatherDecomposedWith(cast<ReduceScatterOp>(candidate.op)))
          consumed.insert(gather);
    return consumed;
  }

  /// The gate's decisions with the loops the options allow, or `only` that
  /// one: every candidate of the function, priced where the gate has a
  /// choice to make, its form and loop chosen. Fails when a machine cannot
  /// be built (an error is emitted).
  LogicalResult decide(std::optional<DecomposeOptions> only,
                       SymbolTableCollection &symbols,
                       std::vector<Candidate> &candidates) {
    // all_reduce has no decomposition: it is a candidate only for its
    // asynchronous form.
    getOperation().walk([&](Operation *op) {
      if (isa<AllGatherOp, ReduceScatterOp>(op) ||
          (asyncCollectives && isa<AllReduceOp>(op))) {
        candidates.emplace_back();
        candidates.back().op = op;
      }
    });
    // gather-scatter=true: the reduce_scatters take these along.
    llvm::DenseSet<Operation *> withScatter;
    if (gatherScatter == GatherScatterChoice::Always)
      for (const Candidate &candidate : candidates)
        if (auto scatter = dyn_cast<ReduceScatterOp>(candidate.op))
          if (AllGatherOp gather = getGatherDecomposedWith(scatter))
            withScatter.insert(gather);
    for (Candidate &candidate : candidates) {
      Operation *op = candidate.op;
      candidate.why = withScatter.contains(op)
                          ? "gather-scatter=true decomposes it with the "
                            "reduce_scatter of its einsum"
                          : whyNotDecomposable(op);
      candidate.einsums = getDecomposedEinsums(op);
      candidate.variants =
          only ? SmallVector<DecomposeOptions, 6>{resolveLoop(op, *only)}
               : getLoopVariants(op, unroll, bidirectional, gatherScatter);
      candidate.groupSize =
          cast<CollectiveOpInterface>(op).getGroupSize(symbols).value_or(0);
      // Priced when the gate has a choice to make from the prices: for
      // ordering decompositions, or between blocking and asynchronous.
      bool priced =
          gate == DecomposeGate::Cost
              ? candidate.decomposable() || asyncCollectives
              : gate == DecomposeGate::Always && candidate.decomposable();
      if (priced && failed(estimate(candidate, symbols,
                                    FormContext{asyncCollectives, {}, true},
                                    candidate.estimate)))
        return failure();
    }
    selectDecompositions(candidates);
    return selectBesideLoops(candidates, symbols);
  }

  /// The machine of the candidate's grid (built once per grid shape) and
  /// the candidate's estimate on it. Fails, with an error on the
  /// collective, when the machine cannot be built.
  LogicalResult estimate(Candidate &candidate, SymbolTableCollection &symbols,
                         const FormContext &context,
                         std::optional<CollectiveEstimate> &result) {
    auto collective = cast<CollectiveOpInterface>(candidate.op);
    shard::GridOp grid = collective.getGridOp(symbols);
    if (!grid) {
      candidate.unpriced = "its grid is unresolved";
      return success();
    }
    if (llvm::any_of(grid.getShape(), ShapedType::isDynamic)) {
      candidate.unpriced = "grid @" + grid.getSymName().str() +
                           " has a dynamic shape, which the cost model "
                           "cannot place on a machine";
      return success();
    }
    if (!machines)
      machines.emplace(hardware, topology, deviceAssignment);
    FailureOr<const MachineModel *> machine =
        machines->getOrEmitError(candidate.op, symbols);
    if (failed(machine))
      return failure();
    assert(*machine && "a static grid has a machine or an error");
    std::string why;
    FailureOr<CollectiveEstimate> estimate =
        estimateCollectiveForms(candidate.op, **machine, *machines,
                                candidate.variants, context, &estimates, why);
    ++priced;
    progress->update(priced, llvm::formatv("{0} reused", estimates.hits).str());
    if (failed(estimate))
      candidate.unpriced = "the cost model cannot price it: " + why;
    else
      result = *estimate;
    return success();
  }

  /// Chooses the candidates to decompose: by decreasing gain (those
  /// without an estimate last, in program order), each decomposable
  /// candidate whose einsums no earlier one took, if the gate lets it
  /// through.
  void selectDecompositions(MutableArrayRef<Candidate> candidates) {
    if (gate != DecomposeGate::Never) {
      // Candidates are in program order in `candidates`; ties keep it.
      SmallVector<Candidate *> order;
      for (Candidate &candidate : candidates)
        if (candidate.decomposable())
          order.push_back(&candidate);
      llvm::sort(order, [](const Candidate *a, const Candidate *b) {
        if (a->estimate && b->estimate && a->gain() != b->gain())
          return a->gain() > b->gain();
        if (bool(a->estimate) != bool(b->estimate))
          return bool(a->estimate);
        return a < b;
      });
      llvm::DenseMap<Operation *, const Candidate *> takenBy;
      for (Candidate *candidate : order) {
        for (Operation *einsum : candidate->einsums)
          if (const Candidate *taker = takenBy.lookup(einsum)) {
            candidate->outvotedBy = taker;
            break;
          }
        if (candidate->outvotedBy)
          continue;
        // A tie keeps the collective: the loop costs buffers and code.
        if (gate == DecomposeGate::Cost &&
            (!candidate->estimate || !candidate->estimate->decompositionPays()))
          continue;
        candidate->form = CollectiveForm::Decomposed;
        candidate->loop = candidate->estimate && candidate->estimate->decomposed
                              ? candidate->estimate->loop
                              : candidate->variants.front();
        for (Operation *einsum : candidate->einsums)
          takenBy[einsum] = candidate;
      }
    }
  }

  /// The decompositions chosen in the block of `candidate`, other than
  /// itself, with their loops.
  static SmallVector<std::pair<Operation *, DecomposeOptions>>
  getLoopsBeside(ArrayRef<Candidate> candidates, const Candidate &candidate) {
    SmallVector<std::pair<Operation *, DecomposeOptions>> loops;
    for (const Candidate &other : candidates)
      if (&other != &candidate && other.form == CollectiveForm::Decomposed &&
          other.op->getBlock() == candidate.op->getBlock())
        loops.push_back({other.op, other.loop});
    return loops;
  }

  /// With several loop variants, prices each decomposition's variants again
  /// beside the other decompositions of its block (the fastest beside a
  /// kept collective may not be beside a loop) and takes the fastest;
  /// whether a loop changed.
  FailureOr<bool> chooseLoopsAgain(MutableArrayRef<Candidate> candidates,
                                   SymbolTableCollection &symbols) {
    bool changed = false;
    for (Candidate &candidate : candidates) {
      if (candidate.form != CollectiveForm::Decomposed || !candidate.estimate ||
          candidate.variants.size() < 2)
        continue;
      SmallVector<std::pair<Operation *, DecomposeOptions>> others =
          getLoopsBeside(candidates, candidate);
      if (others.empty())
        continue;
      if (failed(estimate(candidate, symbols,
                          FormContext{asyncCollectives, others, true},
                          candidate.amongLoops)))
        return failure();
      if (candidate.amongLoops && candidate.amongLoops->decomposed &&
          !(candidate.amongLoops->loop == candidate.loop)) {
        LLVM_DEBUG(llvm::dbgs()
                   << "[" DEBUG_TYPE "] " << candidate.op->getName() << " @ "
                   << candidate.op->getLoc() << " loop "
                   << describeLoop(candidate.loop) << " -> "
                   << describeLoop(candidate.amongLoops->loop) << "\n");
        candidate.loop = candidate.amongLoops->loop;
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
  LogicalResult selectBesideLoops(MutableArrayRef<Candidate> candidates,
                                  SymbolTableCollection &symbols) {
    llvm::DenseMap<Operation *, const Candidate *> takenBy;
    for (Candidate &candidate : candidates)
      if (candidate.form == CollectiveForm::Decomposed)
        for (Operation *einsum : candidate.einsums)
          takenBy[einsum] = &candidate;
    // A candidate that cannot be decomposed any more is priced only for the
    // form it is kept in, which the loops beside it in the last round that
    // saw it decide: priced once, after the rounds, beside those (its
    // estimates in the rounds before would be thrown away).
    llvm::MapVector<Candidate *,
                    SmallVector<std::pair<Operation *, DecomposeOptions>>>
        keptBeside;
    // Each round adds a decomposition or changes a loop; the bound stops
    // loops that would trade variants back and forth.
    for (size_t round = 0;
         gate == DecomposeGate::Cost && round < 4 * candidates.size();
         ++round) {
      Candidate *best = nullptr;
      llvm::DenseSet<Operation *> consumed = getConsumedGathers(candidates);
      for (Candidate &candidate : candidates) {
        if (candidate.form == CollectiveForm::Decomposed ||
            !candidate.estimate || consumed.contains(candidate.op))
          continue;
        SmallVector<std::pair<Operation *, DecomposeOptions>> decomposed =
            getLoopsBeside(candidates, candidate);
        if (decomposed.empty())
          continue;
        bool free = candidate.decomposable() &&
                    llvm::none_of(candidate.einsums, [&](Operation *einsum) {
                      return takenBy.contains(einsum);
                    });
        if (!free) {
          keptBeside[&candidate] = std::move(decomposed);
          continue;
        }
        keptBeside.erase(&candidate);
        if (failed(estimate(candidate, symbols,
                            FormContext{asyncCollectives, decomposed, free},
                            candidate.besideLoops)))
          return failure();
        if (free && candidate.besideLoops &&
            candidate.besideLoops->decompositionPays() &&
            (!best ||
             candidate.besideLoops->gain() > best->besideLoops->gain()))
          best = &candidate;
      }
      if (best) {
        LLVM_DEBUG(llvm::dbgs() << "[" DEBUG_TYPE "] " << best->op->getName()
                                << " @ " << best->op->getLoc()
                                << " decomposed beside the loops, gain "
                                << best->besideLoops->gain() << " s\n");
        best->form = CollectiveForm::Decomposed;
        best->decomposedBeside = true;
        best->loop = best->besideLoops->loop;
        for (Operation *einsum : best->einsums)
          takenBy[einsum] = best;
        for (Candidate &candidate : candidates)
          if (&candidate != best && !candidate.outvotedBy &&
              llvm::any_of(candidate.einsums, [&](Operation *einsum) {
                return takenBy.lookup(einsum) == best;
              }))
            candidate.outvotedBy = best;
        continue;
      }
      FailureOr<bool> changed = chooseLoopsAgain(candidates, symbols);
      if (failed(changed))
        return failure();
      if (!*changed)
        break;
    }
    // Only the asynchronous choice and its remark read those estimates.
    if (!asyncCollectives)
      return success();
    for (auto &[candidate, decomposed] : keptBeside)
      if (failed(estimate(*candidate, symbols,
                          FormContext{asyncCollectives, decomposed, false},
                          candidate->besideLoops)))
        return failure();
    llvm::DenseSet<Operation *> consumed = getConsumedGathers(candidates);
    for (Candidate &candidate : candidates) {
      if (candidate.form == CollectiveForm::Decomposed ||
          consumed.contains(candidate.op))
        continue;
      if (gate != DecomposeGate::Cost) {
        // A result of dynamic shape has no receive buffer to start into.
        if (cast<ShapedType>(candidate.op->getResult(0).getType())
                .hasStaticShape())
          candidate.form = CollectiveForm::Asynchronous;
        continue;
      }
      if (!candidate.estimate)
        continue;
      candidate.form =
          (candidate.besideLoops ? *candidate.besideLoops : *candidate.estimate)
              .bestKept();
      LLVM_DEBUG(llvm::dbgs()
                 << "[" DEBUG_TYPE "] " << candidate.op->getName() << " @ "
                 << candidate.op->getLoc() << " kept "
                 << stringifyCollectiveForm(candidate.form) << "\n");
    }
    return success();
  }

  /// The decompositions of `block` with their loops, each forced to
  /// `forced` where its variants allow it.
  static SmallVector<std::pair<Operation *, DecomposeOptions>>
  getBlockLoops(ArrayRef<Candidate> candidates, Block *block,
                std::optional<DecomposeOptions> forced) {
    SmallVector<std::pair<Operation *, DecomposeOptions>> loops;
    for (const Candidate &candidate : candidates) {
      if (candidate.form != CollectiveForm::Decomposed ||
          candidate.op->getBlock() != block)
        continue;
      DecomposeOptions loop = candidate.loop;
      if (forced) {
        DecomposeOptions resolved = resolveLoop(candidate.op, *forced);
        if (llvm::is_contained(candidate.variants, resolved))
          loop = resolved;
      }
      loops.push_back({candidate.op, loop});
    }
    return loops;
  }

  /// With gate=cost and a choice of loops (unroll or bidirectional auto),
  /// prices each block together, built as the pipeline would: its loops as
  /// chosen one by one (each the fastest in its window, beside the others'
  /// windows), the same loops all forced to each variant, and the gate's
  /// whole decision made again with only that variant; builds the fastest.
  /// Windows see a loop's neighbours, not the whole step: the GPT-64B
  /// training step's loops, chosen one by one, made a step 10% slower than
  /// the gate's with bidirectional loops only. A tie keeps the loops as
  /// chosen.
  LogicalResult chooseLoopsTogether(MutableArrayRef<Candidate> candidates,
                                    SymbolTableCollection &symbols,
                                    SmallVectorImpl<BlockLoops> &together) {
    if (gate != DecomposeGate::Cost || (unroll != UnrollChoice::Auto &&
                                        bidirectional != DirectionChoice::Auto))
      return success();
    // The blocks with a decomposable candidate, with the variants the
    // options allow there, in the order they list them.
    llvm::MapVector<Block *, SmallVector<DecomposeOptions>> blocks;
    for (const Candidate &candidate : candidates) {
      if (!candidate.decomposable() || candidate.variants.size() < 2)
        continue;
      SmallVector<DecomposeOptions> &variants =
          blocks[candidate.op->getBlock()];
      for (const DecomposeOptions &loop : candidate.variants)
        if (!llvm::is_contained(variants, loop))
          variants.push_back(loop);
    }
    // The gate's decisions with each variant alone, for the whole function.
    std::map<std::pair<unsigned, RingLoopDirection>, std::vector<Candidate> *>
        runs;
    auto decideOnly = [&](const DecomposeOptions &loop)
        -> FailureOr<std::vector<Candidate> *> {
      auto key = std::make_pair(loop.unroll, loop.direction);
      if (std::vector<Candidate> *known = runs[key])
        return known;
      std::vector<Candidate> &run = alternatives.emplace_back();
      if (failed(decide(loop, symbols, run)))
        return failure();
      runs[key] = &run;
      return &run;
    };
    for (auto &entry : blocks) {
      Block *block = entry.first;
      ArrayRef<DecomposeOptions> variants = entry.second;
      BlockLoops result{block, std::nullopt, "", {}, ""};
      const Candidate *first = llvm::find_if(
          candidates, [&](auto &c) { return c.op->getBlock() == block; });
      FailureOr<const MachineModel *> machine =
          machines->getOrEmitError(first->op, symbols);
      if (failed(machine))
        return failure();
      auto price = [&](ArrayRef<Candidate> decided,
                       std::optional<DecomposeOptions> forced) {
        return estimateBlock(block, **machine, *machines,
                             FormContext{asyncCollectives,
                                         getBlockLoops(decided, block, forced),
                                         true},
                             &estimates, result.why);
      };
      FailureOr<double> chosen = price(candidates, std::nullopt);
      if (failed(chosen)) {
        together.push_back(std::move(result));
        continue;
      }
      result.chosen = *chosen;
      double best = *chosen;
      std::optional<DecomposeOptions> bestForced;
      const std::vector<Candidate> *bestRun = nullptr;
      auto consider = [&](std::string what, double step,
                          std::optional<DecomposeOptions> forced,
                          const std::vector<Candidate> *run) {
        result.tried.push_back({what, step});
        if (step < best * (1 - kTogetherGain)) {
          best = step;
          result.built = what;
          bestForced = forced;
          bestRun = run;
        }
      };
      for (const DecomposeOptions &loop : variants) {
        if (FailureOr<double> step = price(candidates, loop); succeeded(step))
          consider("the loops chosen, all " + describeLoop(loop), *step, loop,
                   nullptr);
        FailureOr<std::vector<Candidate> *> run = decideOnly(loop);
        if (failed(run))
          return failure();
        if (FailureOr<double> step = price(**run, std::nullopt);
            succeeded(step))
          consider("the gate's choice with " + describeLoop(loop) +
                       " loops only",
                   *step, std::nullopt, *run);
      }
      LLVM_DEBUG(llvm::dbgs()
                 << "[" DEBUG_TYPE "] loops together: as chosen " << *chosen
                 << " s, built "
                 << (result.built.empty() ? "as chosen" : result.built) << " "
                 << best << " s\n");
      for (auto [i, candidate] : llvm::enumerate(candidates)) {
        if (candidate.op->getBlock() != block)
          continue;
        if (bestRun) {
          candidate = (*bestRun)[i];
        } else if (bestForced && candidate.form == CollectiveForm::Decomposed) {
          DecomposeOptions resolved = resolveLoop(candidate.op, *bestForced);
          if (llvm::is_contained(candidate.variants, resolved))
            candidate.loop = resolved;
        }
      }
      together.push_back(std::move(result));
    }
    return success();
  }

  /// What pricing a block's loops together found.
  void remark(const BlockLoops &loops) {
    Operation *parent = loops.block->getParentOp();
    if (!loops.chosen) {
      parent->emitRemark("the loops were not priced together: ") << loops.why;
      return;
    }
    InFlightDiagnostic diag = parent->emitRemark("loops priced together: ");
    diag << formatTime(*loops.chosen) << " as chosen one by one";
    for (const auto &[what, step] : loops.tried)
      diag << ", " << formatTime(step) << " (" << what << ")";
    diag << "; built "
         << (loops.built.empty() ? std::string("as chosen") : loops.built);
  }

  /// Why a kept form was not priced: " as gate=never with
  /// async-collectives says", or why it stays blocking.
  std::string describeUnpricedGate(const Candidate &candidate) const {
    if (candidate.form == CollectiveForm::Blocking)
      return ": its result has a dynamic shape";
    return std::string(" as gate=") +
           (gate == DecomposeGate::Never ? "never" : "always") +
           " with async-collectives says";
  }

  /// What was decided for `candidate` and why, with the estimates.
  void remark(const Candidate &candidate) {
    Operation *op = candidate.op;
    std::string what = describeCollective(op, candidate.groupSize);
    if (auto scatter = dyn_cast<ReduceScatterOp>(op);
        scatter && gatherScatter == GatherScatterChoice::Always)
      if (std::string why = whyNotDecomposableTogether(scatter); !why.empty())
        op->emitRemark("not in gather-scatter form: ") << why;
    if (takenAlong.contains(op)) {
      op->emitRemark("decomposing ")
          << what << " with the reduce_scatter of its einsum (gather-scatter "
          << "form)";
      return;
    }
    // The asynchronous choice, for a candidate not decomposed.
    auto keptClause = [&](InFlightDiagnostic &diag) {
      if (!asyncCollectives)
        return;
      diag << "; kept " << stringifyCollectiveForm(candidate.form);
      if (gate != DecomposeGate::Cost)
        diag << describeUnpricedGate(candidate);
      else if (candidate.besideLoops)
        diag << " beside the loops chosen: "
             << describeEstimate(*candidate.besideLoops);
    };
    if (!candidate.decomposable()) {
      if (!asyncCollectives) {
        op->emitRemark("not decomposed: ") << candidate.why;
        return;
      }
      InFlightDiagnostic diag = op->emitRemark("keeping ");
      diag << what << " " << stringifyCollectiveForm(candidate.form)
           << " (not decomposable: " << candidate.why << ")";
      if (gate != DecomposeGate::Cost)
        diag << describeUnpricedGate(candidate);
      else if (candidate.estimate)
        diag << ": " << describeEstimate(*candidate.estimate);
      else
        diag << ": " << candidate.unpriced;
      return;
    }
    if (gate == DecomposeGate::Never) {
      InFlightDiagnostic diag = op->emitRemark("not decomposing ");
      diag << what << ": gate=never";
      keptClause(diag);
      return;
    }
    if (candidate.outvotedBy) {
      const Candidate &winner = *candidate.outvotedBy;
      InFlightDiagnostic diag = op->emitRemark("not decomposing ");
      diag << what << ": the " << winner.op->getName().stripDialect()
           << " of the same einsum has the larger gain";
      if (winner.estimate && candidate.estimate)
        diag << " (" << formatTime(winner.chosenGain()) << " vs "
             << formatTime(candidate.gain()) << ")";
      keptClause(diag);
      return;
    }
    if (candidate.form != CollectiveForm::Decomposed) {
      InFlightDiagnostic diag = op->emitRemark("not decomposing ");
      diag << what << ": ";
      if (candidate.estimate)
        diag << describeEstimate(*candidate.estimate);
      else
        diag << candidate.unpriced;
      keptClause(diag);
      return;
    }
    std::string loop = "into a ring loop (";
    if (auto gather = dyn_cast<AllGatherOp>(op))
      loop += describeAllGatherCases(gather);
    else if (size_t terms = candidate.einsums.size(); terms > 1)
      loop += "einsum-reduce_scatter of a sum of " + std::to_string(terms) +
              " einsums";
    else
      loop += "einsum-reduce_scatter";
    loop += ", " + describeLoop(candidate.loop) + ")";
    InFlightDiagnostic diag = op->emitRemark("decomposing ");
    diag << what << " " << loop;
    if (gate == DecomposeGate::Always)
      diag << " as gate=always says";
    diag << ": ";
    if (candidate.estimate)
      diag << describeEstimate(*candidate.estimate);
    else
      diag << "no estimate, " << candidate.unpriced;
    if (candidate.decomposedBeside)
      diag << "; beside the loops chosen: "
           << describeEstimate(*candidate.besideLoops);
    if (candidate.amongLoops)
      diag << "; its loops beside the others: "
           << describeEstimate(*candidate.amongLoops);
  }

  /// The gate's decisions with one loop variant only, which the
  /// candidates of a block may be replaced with (chooseLoopsTogether);
  /// a list, so that the candidates they outvote by keep their address.
  std::list<std::vector<Candidate>> alternatives;
  /// One machine per grid shape, from the pass options.
  std::optional<MachineModelCache> machines;
  /// The windows priced and the blocks scheduled, for the layers that
  /// repeat them.
  PricingCache estimates;
  /// The all_gathers decomposed with their reduce_scatter, for the remarks
  /// and the rewrites.
  llvm::DenseSet<Operation *> takenAlong;
  /// The run's progress on stderr, and the windows it priced so far.
  overlap::Progress *progress = nullptr;
  uint64_t priced = 0;
};
} // namespace
