//===- DecomposeCollectiveEinsum.cpp - The decomposition pass -------------===//
//
// Picks the AllGather-Einsum and Einsum-ReduceScatter pairs of a function
// and rewrites each with LoopedAllGatherEinsum / LoopedEinsumReduceScatter.
// An einsum fed by two gathers (figure 3's first layer) can be decomposed
// for only one of them; until the cost model decides (section 5.5), the
// gather moving more bytes wins, the other stays a blocking collective.
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

    // An einsum with two gathered inputs keeps the larger gather.
    llvm::DenseSet<Operation *> outvoted;
    for (Operation *op : candidates) {
      auto gather = dyn_cast<AllGatherOp>(op);
      if (!gather)
        continue;
      for (Operation *user : gather.getResult().getUsers()) {
        auto einsum = dyn_cast<EinsumOp>(user);
        if (!einsum)
          continue;
        for (Value input : einsum.getInputs()) {
          auto rival = input.getDefiningOp<AllGatherOp>();
          if (!rival || rival == gather)
            continue;
          int64_t mine = bytesPerDevice(gather), theirs = bytesPerDevice(rival);
          if (mine < theirs || (mine == theirs && rival->isBeforeInBlock(gather)))
            outvoted.insert(gather);
        }
      }
    }

    IRRewriter rewriter(&getContext());
    for (Operation *op : candidates) {
      std::string why;
      int64_t bytes = bytesPerDevice(op);
      if (auto gather = dyn_cast<AllGatherOp>(op))
        why = whyNotDecomposable(gather);
      else
        why = whyNotDecomposable(cast<ReduceScatterOp>(op));
      if (why.empty() && outvoted.contains(op))
        why = "another gathered input of the same einsum moves more bytes "
              "and is decomposed instead";
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
