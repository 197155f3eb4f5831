//===- DecomposeCollectiveEinsum.cpp - The decomposition pass -------------===//
//
// Picks the AllGather-Einsum and Einsum-ReduceScatter pairs of a function
// and rewrites each with LoopedAllGatherEinsum / LoopedEinsumReduceScatter
// when the cost model prices the loop faster than the pair (section 5.5;
// DecompositionCost.cpp builds both and prices them). An einsum with two
// candidates (figure 3: two gathered inputs, or a gathered input and a
// scattered result) is decomposed for the one with the larger gain only; the
// other stays blocking.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/Dialect/Ovl/Transforms/Passes.h"

#include "OverlapDialect/Analysis/MachineModel.h"
#include "OverlapDialect/Dialect/Ovl/IR/OvlOps.h"
#include "OverlapDialect/Dialect/Ovl/Transforms/Transforms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <optional>

#define DEBUG_TYPE "ovl-decompose-collective-einsum"

namespace mlir::ovl {
#define GEN_PASS_DEF_OVLDECOMPOSECOLLECTIVEEINSUMPASS
#include "OverlapDialect/Dialect/Ovl/Transforms/Passes.h.inc"
} // namespace mlir::ovl

using namespace mlir;
using namespace mlir::ovl;

namespace {

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
  return text + " (N=" + std::to_string(groupSize) + ")";
}

/// "predicted 1.20 ms blocking (compute 800 us), 1.05 ms decomposed
/// (compute 810 us), gain 150 us".
std::string describeEstimate(const DecompositionEstimate &estimate) {
  return llvm::formatv("predicted {0} blocking (compute {1}), {2} decomposed "
                       "(compute {3}), gain {4}",
                       formatTime(estimate.blocking),
                       formatTime(estimate.blockingCompute),
                       formatTime(estimate.decomposed),
                       formatTime(estimate.decomposedCompute),
                       formatTime(estimate.gain()))
      .str();
}

/// One collective the pass considers.
struct Candidate {
  Operation *op;
  /// Why it cannot be decomposed; empty when it can.
  std::string why;
  int64_t groupSize = 0;
  /// The einsums its rewrite consumes.
  SmallVector<Operation *, 2> einsums;
  std::optional<DecompositionEstimate> estimate;
  /// Why there is no estimate, when there is none.
  std::string unpriced;
  /// The candidate that took one of its einsums with a larger gain.
  const Candidate *outvotedBy = nullptr;
  bool selected = false;
};

struct OvlDecomposeCollectiveEinsumPass
    : public ovl::impl::OvlDecomposeCollectiveEinsumPassBase<
          OvlDecomposeCollectiveEinsumPass> {
  using Base::Base;

  void runOnOperation() override {
    if (unroll != 1 && unroll != 2) {
      getOperation().emitError("ovl-decompose-collective-einsum: unroll must "
                               "be 1 or 2, got ")
          << unroll.getValue();
      return signalPassFailure();
    }
    DecomposeOptions options;
    options.unroll = unroll;
    options.bidirectional = bidirectional;

    SmallVector<Candidate> candidates;
    getOperation().walk([&](Operation *op) {
      if (isa<AllGatherOp, ReduceScatterOp>(op)) {
        candidates.emplace_back();
        candidates.back().op = op;
      }
    });

    SymbolTableCollection symbols;
    for (Candidate &candidate : candidates) {
      Operation *op = candidate.op;
      if (auto gather = dyn_cast<AllGatherOp>(op)) {
        candidate.why = whyNotDecomposable(gather);
        if (candidate.why.empty())
          candidate.einsums.append(gather.getResult().getUsers().begin(),
                                   gather.getResult().getUsers().end());
      } else {
        auto scatter = cast<ReduceScatterOp>(op);
        candidate.why = whyNotDecomposable(scatter);
        if (candidate.why.empty())
          candidate.einsums.push_back(scatter.getInput().getDefiningOp());
      }
      if (!candidate.why.empty())
        continue;
      // Decomposable implies a static group size.
      candidate.groupSize =
          *cast<CollectiveOpInterface>(op).getGroupSize(symbols);
      if (gate == DecomposeGate::Never)
        continue;
      if (failed(estimate(candidate, options, symbols)))
        return signalPassFailure();
    }

    select(candidates);

    // Every remark before any rewrite: a remark may name another candidate's
    // collective, which its rewrite erases.
    if (remarks)
      for (const Candidate &candidate : candidates)
        remark(candidate);
    IRRewriter rewriter(&getContext());
    for (Candidate &candidate : candidates) {
      if (!candidate.selected)
        continue;
      if (auto gather = dyn_cast<AllGatherOp>(candidate.op)) {
        if (succeeded(decomposeAllGatherEinsum(rewriter, gather, options)))
          ++numAllGathers;
      } else if (succeeded(decomposeEinsumReduceScatter(
                     rewriter, cast<ReduceScatterOp>(candidate.op), options))) {
        ++numReduceScatters;
      }
    }
  }

private:
  /// The machine of the candidate's grid (built once per grid shape) and
  /// the candidate's estimate on it. Fails, with an error on the
  /// collective, when the machine cannot be built.
  LogicalResult estimate(Candidate &candidate, const DecomposeOptions &options,
                         SymbolTableCollection &symbols) {
    auto collective = cast<CollectiveOpInterface>(candidate.op);
    shard::GridOp grid = collective.getGridOp(symbols);
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
    FailureOr<DecompositionEstimate> estimate =
        isa<AllGatherOp>(candidate.op)
            ? estimateDecomposition(cast<AllGatherOp>(candidate.op), **machine,
                                    *machines, options, why)
            : estimateDecomposition(cast<ReduceScatterOp>(candidate.op),
                                    **machine, *machines, options, why);
    if (failed(estimate))
      candidate.unpriced = "the cost model cannot price it: " + why;
    else
      candidate.estimate = *estimate;
    return success();
  }

  /// Marks the candidates to rewrite: by decreasing gain (those without an
  /// estimate last, in program order), each decomposable candidate whose
  /// einsums no earlier one took, if the gate lets it through.
  void select(MutableArrayRef<Candidate> candidates) {
    if (gate == DecomposeGate::Never)
      return;
    // Candidates are in program order in `candidates`; ties keep it.
    SmallVector<Candidate *> order;
    for (Candidate &candidate : candidates)
      if (candidate.why.empty())
        order.push_back(&candidate);
    llvm::sort(order, [](const Candidate *a, const Candidate *b) {
      if (a->estimate && b->estimate &&
          a->estimate->gain() != b->estimate->gain())
        return a->estimate->gain() > b->estimate->gain();
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
          (!candidate->estimate || candidate->estimate->gain() <= 0))
        continue;
      candidate->selected = true;
      for (Operation *einsum : candidate->einsums)
        takenBy[einsum] = candidate;
    }
  }

  /// What was decided for `candidate` and why, with the estimates.
  void remark(const Candidate &candidate) {
    Operation *op = candidate.op;
    if (!candidate.why.empty()) {
      op->emitRemark("not decomposed: ") << candidate.why;
      return;
    }
    std::string what = describeCollective(op, candidate.groupSize);
    if (gate == DecomposeGate::Never) {
      op->emitRemark("not decomposing ") << what << ": gate=never";
      return;
    }
    if (candidate.outvotedBy) {
      const Candidate &winner = *candidate.outvotedBy;
      InFlightDiagnostic diag = op->emitRemark("not decomposing ");
      diag << what << ": the " << winner.op->getName().stripDialect()
           << " of the same einsum has the larger gain";
      if (winner.estimate && candidate.estimate)
        diag << " (" << formatTime(winner.estimate->gain()) << " vs "
             << formatTime(candidate.estimate->gain()) << ")";
      return;
    }
    if (!candidate.selected) {
      InFlightDiagnostic diag = op->emitRemark("not decomposing ");
      diag << what << ": ";
      if (candidate.estimate)
        diag << describeEstimate(*candidate.estimate);
      else
        diag << candidate.unpriced;
      return;
    }
    std::string loop = "into a ring loop (";
    if (auto gather = dyn_cast<AllGatherOp>(op))
      loop += describeAllGatherCases(gather);
    else
      loop += "einsum-reduce_scatter";
    loop += ", unroll " + std::to_string(unroll) +
            (bidirectional ? ", bidirectional)" : ", unidirectional)");
    InFlightDiagnostic diag = op->emitRemark("decomposing ");
    diag << what << " " << loop;
    if (gate == DecomposeGate::Always)
      diag << " as gate=always says";
    diag << ": ";
    if (candidate.estimate)
      diag << describeEstimate(*candidate.estimate);
    else
      diag << "no estimate, " << candidate.unpriced;
  }

  /// One machine per grid shape, from the pass options.
  std::optional<MachineModelCache> machines;
};
} // namespace
