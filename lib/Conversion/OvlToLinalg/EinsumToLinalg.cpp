//===- EinsumToLinalg.cpp - ovl.einsum to linalg.generic ------------------===//
//
// Lowers each einsum to one linalg.generic contraction on tensors. Loops are
// ordered output letters first, then the summed letters in order of first
// appearance, so that a matmul comes out as the (m, n, k) loop nest that
// linalg's matmul recognizer and tiling heuristics expect.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/Conversion/Passes.h"

#include "OverlapDialect/Dialect/Ovl/IR/OvlOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace mlir::ovl {
#define GEN_PASS_DEF_OVLEINSUMTOLINALGPASS
#include "OverlapDialect/Conversion/Passes.h.inc"
} // namespace mlir::ovl

using namespace mlir;
using namespace mlir::ovl;

/// Converts a scalar of an input's element type to the result element type
/// (the verifier allows only widening within floats or within integers).
static Value widen(OpBuilder &builder, Location loc, Value value, Type to) {
  if (value.getType() == to)
    return value;
  if (isa<FloatType>(to))
    return arith::ExtFOp::create(builder, loc, to, value);
  return arith::ExtSIOp::create(builder, loc, to, value);
}

namespace {
struct EinsumToGeneric : public OpRewritePattern<EinsumOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(EinsumOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *context = op.getContext();
    EinsumEquation equation = op.getParsedEquation();
    auto resultType = cast<RankedTensorType>(op.getResult().getType());
    Type elementType = resultType.getElementType();

    std::string loops = equation.getOutput().str();
    for (char index : equation.getIndices())
      if (loops.find(index) == std::string::npos)
        loops.push_back(index);
    auto mapOf = [&](StringRef term) {
      SmallVector<AffineExpr> exprs;
      for (char index : term)
        exprs.push_back(getAffineDimExpr(loops.find(index), context));
      return AffineMap::get(loops.size(), 0, exprs, context);
    };
    SmallVector<AffineMap> maps;
    for (StringRef term : equation.getInputs())
      maps.push_back(mapOf(term));
    maps.push_back(mapOf(equation.getOutput()));
    SmallVector<utils::IteratorType> iterators(loops.size(),
                                               utils::IteratorType::reduction);
    std::fill_n(iterators.begin(), equation.getOutput().size(),
                utils::IteratorType::parallel);

    Value init = op.getAcc();
    if (!init) {
      // Dynamic result sizes come from the input that holds the letter.
      SmallVector<Value> dynamicSizes;
      for (auto [dim, index] : llvm::enumerate(equation.getOutput())) {
        if (!resultType.isDynamicDim(dim))
          continue;
        for (unsigned i = 0, e = equation.getNumInputs(); i < e; ++i) {
          if (std::optional<unsigned> pos = equation.findInInput(i, index)) {
            dynamicSizes.push_back(
                tensor::DimOp::create(rewriter, loc, op.getInputs()[i], *pos));
            break;
          }
        }
      }
      Value empty = tensor::EmptyOp::create(
          rewriter, loc, resultType.getShape(), elementType, dynamicSizes);
      Value zero = arith::ConstantOp::create(rewriter, loc, elementType,
                                             rewriter.getZeroAttr(elementType));
      init = linalg::FillOp::create(rewriter, loc, zero, empty).getResult(0);
    }

    bool isFloat = isa<FloatType>(elementType);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, resultType, op.getInputs(), init, maps, iterators,
        [&](OpBuilder &builder, Location bodyLoc, ValueRange args) {
          Value product = widen(builder, bodyLoc, args[0], elementType);
          for (Value arg : args.drop_front().drop_back()) {
            Value factor = widen(builder, bodyLoc, arg, elementType);
            product =
                isFloat
                    ? arith::MulFOp::create(builder, bodyLoc, product, factor)
                          .getResult()
                    : arith::MulIOp::create(builder, bodyLoc, product, factor)
                          .getResult();
          }
          Value sum = isFloat ? arith::AddFOp::create(builder, bodyLoc,
                                                      args.back(), product)
                                    .getResult()
                              : arith::AddIOp::create(builder, bodyLoc,
                                                      args.back(), product)
                                    .getResult();
          linalg::YieldOp::create(builder, bodyLoc, sum);
        });
    rewriter.replaceOp(op, generic.getResults());
    return success();
  }
};

struct OvlEinsumToLinalgPass
    : public ovl::impl::OvlEinsumToLinalgPassBase<OvlEinsumToLinalgPass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateEinsumToLinalgPatterns(patterns);
    getOperation()->walk([&](EinsumOp) { ++numEinsums; });
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};
} // namespace

void mlir::ovl::populateEinsumToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<EinsumToGeneric>(patterns.getContext());
}
