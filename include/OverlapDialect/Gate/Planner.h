//===- Planner.h - The gate's choice of forms, without IR -------*- C++ -*-===//
//
// The policy of `ovl-decompose-collective-einsum` (the paper's section 5.5
// and what the gate added since): which collectives to decompose, with
// which loop, and which of the others to make asynchronous, from the prices
// of their forms. The planner knows the candidates by index and asks a
// Pricing for every price; the pass matches the candidates in the IR,
// prices them by building and simulating their forms, and rewrites what
// the plan says. Unit tests plan with prices made up.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAPDIALECT_GATE_PLANNER_H
#define OVERLAPDIALECT_GATE_PLANNER_H

#include "OverlapDialect/Gate/Forms.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/LogicalResult.h"

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mlir {
namespace ovl {
namespace gate {

/// A collective the gate decides the form of, as the caller matched it.
/// Candidates are numbered in program order: ties between equal gains keep
/// it.
struct Candidate {
  /// Why it cannot be decomposed; empty when it can.
  std::string why;
  /// Its block: a decomposition is priced beside the others of its block.
  unsigned block = 0;
  /// The einsums its decomposition rewrites with it: of two candidates on
  /// one einsum, only one is decomposed.
  llvm::SmallVector<unsigned, 2> einsums;
  /// The loops the options allow for it, in the order a tie is broken in.
  llvm::SmallVector<DecomposeOptions, 6> variants;
  /// A reduce_scatter's: the candidate of the all_gather its gather-scatter
  /// form takes along.
  std::optional<size_t> gatherAlong;
  /// Its result has a static shape, which an asynchronous form needs (a
  /// receive buffer).
  bool staticResult = true;

  bool decomposable() const { return why.empty(); }
};

/// A loop decided: the candidate decomposed, and its variant.
using Loop = std::pair<size_t, DecomposeOptions>;

/// What the gate decided for one candidate, and the prices it read.
struct Decision {
  CollectiveForm form = CollectiveForm::Blocking;
  /// The loop it is decomposed as: the fastest priced where it was chosen
  /// (or last priced beside the other loops), else the first its variants
  /// list.
  DecomposeOptions loop;
  /// The loops it was priced with: the candidate's variants, or the one
  /// loop of a plan made with one variant only.
  llvm::SmallVector<DecomposeOptions, 6> variants;
  /// Its forms priced alone in its window.
  std::optional<CollectiveEstimate> estimate;
  /// Its forms priced again beside the decompositions chosen, for a
  /// candidate kept in a block where some were.
  std::optional<CollectiveEstimate> besideLoops;
  /// Its loops priced again beside the other decompositions, when there
  /// are several variants and it was.
  std::optional<CollectiveEstimate> amongLoops;
  /// Why there is no estimate, when there is none.
  std::string unpriced;
  /// The candidate that took one of its einsums with a larger gain.
  std::optional<size_t> outvotedBy;
  /// Decomposed for its gain beside the loops chosen before it.
  bool decomposedBeside = false;

  double gain() const { return estimate ? estimate->gain() : 0; }
  /// The gain it was (or would have been) decomposed for.
  double chosenGain() const {
    return decomposedBeside ? besideLoops->gain() : gain();
  }
};

/// A block's loops priced together (see PlanOptions::loopsTogether).
struct BlockLoops {
  unsigned block = 0;
  /// The step as the loops were chosen one by one; empty when it could not
  /// be priced, `why` says why.
  std::optional<double> chosen;
  std::string why;
  /// The alternatives priced: what they build, and their step.
  llvm::SmallVector<std::pair<std::string, double>> tried;
  /// The alternative built, empty when the loops stay as chosen.
  std::string built;
};

/// The gate's options.
struct PlanOptions {
  DecomposeGate gate = DecomposeGate::Cost;
  /// Collectives not decomposed may become asynchronous.
  bool asyncCollectives = true;
  /// With gate=cost, price each block's loops together with each variant
  /// forced (the unroll or direction option is auto).
  bool loopsTogether = true;
};

/// What to price a candidate's forms beside.
struct PriceContext {
  /// The gate may make collectives asynchronous: the candidate's
  /// asynchronous form is priced, and the other collectives are priced
  /// asynchronous as the gate leaves them by default.
  bool asyncCollectives = false;
  /// Candidates decomposed (those chosen already), each with its loop.
  llvm::ArrayRef<Loop> decomposed;
  /// Price the candidate's own decomposition, when it has one.
  bool priceDecomposition = true;
};

/// Where the planner's prices come from.
class Pricing {
public:
  virtual ~Pricing();
  /// The forms of `candidate`, its decomposition as each of `loops`, into
  /// `result`; when it cannot be priced, `result` is left as it was and
  /// `unpriced` says why. Fails when planning cannot go on (the Pricing
  /// reported why).
  virtual llvm::LogicalResult price(size_t candidate,
                                    llvm::ArrayRef<DecomposeOptions> loops,
                                    const PriceContext &context,
                                    std::optional<CollectiveEstimate> &result,
                                    std::string &unpriced) = 0;
  /// The step time of `block` with `loops` decomposed and the other
  /// collectives as the context's asyncCollectives says, into `step`; when
  /// it cannot be priced, `why` says why. Fails as price does.
  virtual llvm::LogicalResult priceBlock(unsigned block, bool asyncCollectives,
                                         llvm::ArrayRef<Loop> loops,
                                         std::optional<double> &step,
                                         std::string &why) = 0;
  /// The loop `loop` asks for, as `candidate` can be built.
  virtual DecomposeOptions resolve(size_t candidate,
                                   const DecomposeOptions &loop) = 0;
  /// `candidate` for debug traces.
  virtual std::string describe(size_t candidate) = 0;
};

/// The gate's answer, by candidate.
struct Plan {
  std::vector<Decision> decisions;
  /// What pricing the blocks' loops together found, block by block.
  llvm::SmallVector<BlockLoops> together;
  /// The all_gathers that a decomposition in gather-scatter form takes
  /// along with its reduce_scatter: they are neither decomposed nor made
  /// asynchronous on their own.
  llvm::DenseSet<size_t> takenAlong;
};

/// The gate's decisions for `candidates`. Fails when `pricing` does.
llvm::FailureOr<Plan> plan(llvm::ArrayRef<Candidate> candidates,
                           const PlanOptions &options, Pricing &pricing);

} // namespace gate
} // namespace ovl
} // namespace mlir

#endif // OVERLAPDIALECT_GATE_PLANNER_H
