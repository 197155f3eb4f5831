//===- DecomposeCollectiveEinsum.cpp - The decomposition pass -------------===//
//
// Picks the AllGather-Einsum and Einsum-ReduceScatter pairs of a function
// and rewrites each with LoopedAllGatherEinsum / LoopedEinsumReduceScatter.
// An einsum with two candidates (figure 3: two gathered inputs, or a
// gathered input and a scattered result) is decomposed for only one of
// them; until the cost model decides (section 5.5), the collective moving
// more bytes wins, the other stays blocking.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/Dialect/Ovl/Transforms/Passes.h"

#include "OverlapDialect/Dialect/Ovl/IR/OvlOps.h"
#include "OverlapDialect/Dialect/Ovl/Transforms/Transforms.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

#define DEBUG_TYPE "ovl-decompose-collective-einsum"

namespace mlir::ovl {
#define GEN_PASS_DEF_OVLDECOMPOSECOLLECTIVEEINSUMPASS
#include "OverlapDialect/Dialect/Ovl/Transforms/Passes.h.inc"
} // namespace mlir::ovl

using namespace mlir;
using namespace mlir::ovl;

namespace {

/// Bytes one device sends for the collective, or 0 when unknown.
int64_t bytesPerDevice(Operation *op) {
  auto collective = cast<CollectiveOpInterface>(op);
  SymbolTableCollection symbols;
  std::optional<int64_t> groupSize = collective.getGroupSize(symbols);
  if (!groupSize || ShapedType::isDynamic(*groupSize))
    return 0;
  return collective.getBytesSentPerDevice(*groupSize).value_or(0);
}

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

    SmallVector<Operation *> candidates;
    getOperation().walk([&](Operation *op) {
      if (isa<AllGatherOp, ReduceScatterOp>(op))
        candidates.push_back(op);
    });

    // An einsum with several candidates (two gathered inputs, or a gathered
    // input and a scattered result) keeps the one moving the most bytes.
    llvm::DenseSet<Operation *> outvoted;
    auto compete = [&](ArrayRef<Operation *> rivals) {
      Operation *best = nullptr;
      for (Operation *rival : rivals)
        if (!best || bytesPerDevice(rival) > bytesPerDevice(best))
          best = rival;
      for (Operation *rival : rivals)
        if (rival != best)
          outvoted.insert(rival);
    };
    getOperation().walk([&](EinsumOp einsum) {
      SmallVector<Operation *> rivals;
      for (Value input : einsum.getInputs())
        if (auto gather = input.getDefiningOp<AllGatherOp>())
          rivals.push_back(gather);
      for (Operation *user : einsum.getResult().getUsers())
        if (isa<ReduceScatterOp>(user))
          rivals.push_back(user);
      if (rivals.size() > 1)
        compete(rivals);
    });

    IRRewriter rewriter(&getContext());
    for (Operation *op : candidates) {
      std::string why;
      int64_t bytes = bytesPerDevice(op);
      // Outvoted candidates first: the winner's rewrite may have consumed
      // the einsum they share.
      if (outvoted.contains(op))
        why = "another collective of the same einsum moves more bytes and "
              "is decomposed instead";
      else if (auto gather = dyn_cast<AllGatherOp>(op))
        why = whyNotDecomposable(gather);
      else
        why = whyNotDecomposable(cast<ReduceScatterOp>(op));
      if (why.empty() && bytes < minBytes)
        why = "it moves " + std::to_string(bytes) +
              " bytes per device, below min-bytes=" + std::to_string(minBytes);
      if (!why.empty()) {
        if (remarks)
          op->emitRemark("not decomposed: ") << why;
        continue;
      }
      std::string what = "decomposed into a ring loop (";
      if (auto gather = dyn_cast<AllGatherOp>(op))
        what += describeAllGatherCases(gather);
      else
        what += "einsum-reduce_scatter";
      what += ", unroll " + std::to_string(options.unroll) +
              (options.bidirectional ? ", bidirectional)" : ", unidirectional)");
      if (remarks)
        op->emitRemark(what);
      if (auto gather = dyn_cast<AllGatherOp>(op)) {
        if (succeeded(decomposeAllGatherEinsum(rewriter, gather, options)))
          ++numAllGathers;
      } else if (succeeded(decomposeEinsumReduceScatter(
                     rewriter, cast<ReduceScatterOp>(op), options))) {
        ++numReduceScatters;
      }
    }
  }
};
} // namespace
