//===- GateRemarks.cpp - What the gate decided, as remarks ----------------===//

#include "GateRemarks.h"

#include "OverlapDialect/Dialect/Ovl/IR/OvlOps.h"
#include "OverlapDialect/Dialect/Ovl/Transforms/Transforms.h"

#include "mlir/IR/Block.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace mlir::ovl;

namespace {

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

/// "into a ring loop (<the einsums' cases>, unroll 1, unidirectional)".
std::string describeRingLoop(Operation *op, size_t einsums,
                             const DecomposeOptions &loop) {
  std::string text = "into a ring loop (";
  if (auto gather = dyn_cast<AllGatherOp>(op))
    text += describeAllGatherCases(gather);
  else if (einsums > 1)
    text += "einsum-reduce_scatter of a sum of " + std::to_string(einsums) +
            " einsums";
  else
    text += "einsum-reduce_scatter";
  return text + ", " + describeLoop(loop) + ")";
}

class Remarks {
public:
  Remarks(const MatchedCandidates &matched, const gate::Plan &plan,
          const GateRemarkOptions &options)
      : matched(matched), plan(plan), options(options) {}

  void emit() {
    for (size_t index = 0; index < matched.ops.size(); ++index)
      remarkCandidate(index);
    for (const gate::BlockLoops &loops : plan.together)
      remarkBlock(loops);
  }

private:
  /// What pricing a block's loops together found.
  void remarkBlock(const gate::BlockLoops &loops) {
    Operation *parent = matched.blocks[loops.block]->getParentOp();
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
  std::string describeUnpricedGate(const gate::Decision &decision) const {
    if (decision.form == CollectiveForm::Blocking)
      return ": its result has a dynamic shape";
    return std::string(" as gate=") +
           (options.gate == DecomposeGate::Never ? "never" : "always") +
           " with async-collectives says";
  }

  /// "; kept asynchronous beside the loops chosen: <estimate>": the
  /// asynchronous choice, for a candidate not decomposed.
  void addKeptClause(InFlightDiagnostic &diag,
                     const gate::Decision &decision) const {
    if (!options.asyncCollectives)
      return;
    diag << "; kept " << stringifyCollectiveForm(decision.form);
    if (options.gate != DecomposeGate::Cost)
      diag << describeUnpricedGate(decision);
    else if (decision.besideLoops)
      diag << " beside the loops chosen: "
           << describeEstimate(*decision.besideLoops);
  }

  /// What was decided for candidate `index` and why, with the estimates.
  void remarkCandidate(size_t index) {
    Operation *op = matched.ops[index];
    const gate::Candidate &candidate = matched.candidates[index];
    const gate::Decision &decision = plan.decisions[index];
    std::string what = describeCollective(op, matched.groupSizes[index]);
    if (auto scatter = dyn_cast<ReduceScatterOp>(op);
        scatter && options.gatherScatter == GatherScatterChoice::Always)
      if (std::string why = whyNotDecomposableTogether(scatter); !why.empty())
        op->emitRemark("not in gather-scatter form: ") << why;
    if (plan.takenAlong.contains(index)) {
      op->emitRemark("decomposing ")
          << what << " with the reduce_scatter of its einsum (gather-scatter "
          << "form)";
      return;
    }
    if (!candidate.decomposable())
      return remarkNotDecomposable(op, what, candidate, decision);
    if (options.gate == DecomposeGate::Never) {
      InFlightDiagnostic diag = op->emitRemark("not decomposing ");
      diag << what << ": gate=never";
      addKeptClause(diag, decision);
      return;
    }
    if (decision.outvotedBy)
      return remarkOutvoted(op, what, decision);
    if (decision.form != CollectiveForm::Decomposed) {
      InFlightDiagnostic diag = op->emitRemark("not decomposing ");
      diag << what << ": ";
      if (decision.estimate)
        diag << describeEstimate(*decision.estimate);
      else
        diag << decision.unpriced;
      addKeptClause(diag, decision);
      return;
    }
    InFlightDiagnostic diag = op->emitRemark("decomposing ");
    diag << what << " "
         << describeRingLoop(op, candidate.einsums.size(), decision.loop);
    if (options.gate == DecomposeGate::Always)
      diag << " as gate=always says";
    diag << ": ";
    if (decision.estimate)
      diag << describeEstimate(*decision.estimate);
    else
      diag << "no estimate, " << decision.unpriced;
    if (decision.decomposedBeside)
      diag << "; beside the loops chosen: "
           << describeEstimate(*decision.besideLoops);
    if (decision.amongLoops)
      diag << "; its loops beside the others: "
           << describeEstimate(*decision.amongLoops);
  }

  void remarkNotDecomposable(Operation *op, const std::string &what,
                             const gate::Candidate &candidate,
                             const gate::Decision &decision) {
    if (!options.asyncCollectives) {
      op->emitRemark("not decomposed: ") << candidate.why;
      return;
    }
    InFlightDiagnostic diag = op->emitRemark("keeping ");
    diag << what << " " << stringifyCollectiveForm(decision.form)
         << " (not decomposable: " << candidate.why << ")";
    if (options.gate != DecomposeGate::Cost)
      diag << describeUnpricedGate(decision);
    else if (decision.estimate)
      diag << ": " << describeEstimate(*decision.estimate);
    else
      diag << ": " << decision.unpriced;
  }

  void remarkOutvoted(Operation *op, const std::string &what,
                      const gate::Decision &decision) {
    size_t winnerIndex = *decision.outvotedBy;
    const gate::Decision &winner = plan.decisions[winnerIndex];
    InFlightDiagnostic diag = op->emitRemark("not decomposing ");
    diag << what << ": the "
         << matched.ops[winnerIndex]->getName().stripDialect()
         << " of the same einsum has the larger gain";
    if (winner.estimate && decision.estimate)
      diag << " (" << formatTime(winner.chosenGain()) << " vs "
           << formatTime(decision.gain()) << ")";
    addKeptClause(diag, decision);
  }

  const MatchedCandidates &matched;
  const gate::Plan &plan;
  const GateRemarkOptions &options;
};

} // namespace

void mlir::ovl::emitGateRemarks(const MatchedCandidates &matched,
                                const gate::Plan &plan,
                                const GateRemarkOptions &options) {
  Remarks(matched, plan, options).emit();
}
