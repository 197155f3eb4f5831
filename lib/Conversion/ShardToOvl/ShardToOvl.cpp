//===- ShardToOvl.cpp - Import upstream shard-partition output into ovl ---===//
//
// Rewrites the per-device program that upstream `shard-partition` produces
// into ovl: the shard collectives become ovl collectives (an all_reduce whose
// only user is an all_slice over the same group becomes one reduce_scatter),
// and the linalg contractions (matmul, batch_matmul, einsum-like generic)
// become ovl.einsum. Only exact equivalences are rewritten; anything else is
// left as it is.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/Conversion/Passes.h"

#include "OverlapDialect/Dialect/Ovl/IR/OvlOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallBitVector.h"

namespace mlir::ovl {
#define GEN_PASS_DEF_OVLIMPORTSHARDPASS
#include "OverlapDialect/Conversion/Passes.h.inc"
} // namespace mlir::ovl

using namespace mlir;
using namespace mlir::ovl;

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

/// The number of devices in a group of `grid` along `axes`, when the grid and
/// the axes are static and valid.
static std::optional<int64_t> groupSize(Operation *op,
                                        FlatSymbolRefAttr gridSymbol,
                                        ArrayRef<int16_t> axes,
                                        SymbolTableCollection &symbols) {
  auto grid = symbols.lookupNearestSymbolFrom<shard::GridOp>(op, gridSymbol);
  if (!grid)
    return std::nullopt;
  ArrayRef<int64_t> shape = grid.getShape();
  int64_t size = 1;
  llvm::SmallDenseSet<int16_t> seen;
  for (int16_t axis : axes) {
    if (axis < 0 || axis >= static_cast<int64_t>(shape.size()) ||
        !seen.insert(axis).second || ShapedType::isDynamic(shape[axis]))
      return std::nullopt;
    size *= shape[axis];
  }
  return size;
}

static std::optional<ReductionKind> convertKind(shard::ReductionKind kind) {
  switch (kind) {
  case shard::ReductionKind::Sum:
    return ReductionKind::Sum;
  case shard::ReductionKind::Product:
    return ReductionKind::Prod;
  case shard::ReductionKind::Max:
    return ReductionKind::Max;
  case shard::ReductionKind::Min:
    return ReductionKind::Min;
  default:
    return std::nullopt;
  }
}

static RankedTensorType staticTensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape() || tensor.getEncoding())
    return {};
  return tensor;
}

/// Whether `result` is `input` with dimension `dim` multiplied by `factor`
/// (gather) or divided by it (scatter), the other dimensions equal.
static bool scaledAlong(RankedTensorType input, RankedTensorType result,
                        int64_t dim, int64_t factor, bool gather) {
  if (!input || !result || input.getRank() != result.getRank() ||
      input.getElementType() != result.getElementType() || dim < 0 ||
      dim >= input.getRank())
    return false;
  for (int64_t d = 0; d < input.getRank(); ++d) {
    int64_t in = input.getDimSize(d), out = result.getDimSize(d);
    if (d != dim) {
      if (in != out)
        return false;
    } else if (gather ? in * factor != out
                      : (in % factor != 0 || in / factor != out)) {
      return false;
    }
  }
  return true;
}

namespace {
struct Importer {
  SymbolTableCollection symbols;
  bool remarks = false;
  int64_t numCollectives = 0;
  int64_t numEinsums = 0;
  /// The zero inits that imported contractions no longer use.
  SmallVector<Value> droppedInits;

  void remark(Operation *op, const Twine &why) {
    if (remarks)
      op->emitRemark() << "ovl-import-shard: left as is: " << why;
  }

  /// The ovl reduction of `kind`, or a remark on `op` that it has none.
  std::optional<ReductionKind> importKind(Operation *op,
                                          shard::ReductionKind kind) {
    std::optional<ReductionKind> converted = convertKind(kind);
    if (!converted)
      remark(op, "reduction " + shard::stringifyReductionKind(kind) +
                     " has no ovl equivalent");
    return converted;
  }

  void importAllGather(shard::AllGatherOp op) {
    ArrayRef<int16_t> axes = op.getGridAxes();
    auto size = groupSize(op, op.getGridAttr(), axes, symbols);
    auto input = staticTensor(op.getInput().getType());
    auto result = staticTensor(op.getResult().getType());
    int64_t dim = op.getGatherAxis().getSExtValue();
    if (!size || !scaledAlong(input, result, dim, *size, /*gather=*/true))
      return remark(op, "needs a static grid and static tensor shapes");
    OpBuilder builder(op);
    Value gathered =
        AllGatherOp::create(builder, op.getLoc(), result, op.getInput(),
                            op.getGridAttr().getValue(), axes, dim);
    op.getResult().replaceAllUsesWith(gathered);
    op.erase();
    ++numCollectives;
  }

  void importReduceScatter(shard::ReduceScatterOp op) {
    ArrayRef<int16_t> axes = op.getGridAxes();
    std::optional<ReductionKind> kind = importKind(op, op.getReduction());
    if (!kind)
      return;
    auto size = groupSize(op, op.getGridAttr(), axes, symbols);
    auto input = staticTensor(op.getInput().getType());
    auto result = staticTensor(op.getResult().getType());
    int64_t dim = op.getScatterAxis().getSExtValue();
    if (!size || !scaledAlong(input, result, dim, *size, /*gather=*/false))
      return remark(op, "needs a static grid, static shapes and one element "
                        "type");
    OpBuilder builder(op);
    Value scattered =
        ReduceScatterOp::create(builder, op.getLoc(), result, op.getInput(),
                                op.getGridAttr().getValue(), axes, dim, *kind);
    op.getResult().replaceAllUsesWith(scattered);
    op.erase();
    ++numCollectives;
  }

  void importAllReduce(shard::AllReduceOp op) {
    ArrayRef<int16_t> axes = op.getGridAxes();
    std::optional<ReductionKind> kind = importKind(op, op.getReduction());
    if (!kind)
      return;
    auto input = dyn_cast<RankedTensorType>(op.getInput().getType());
    if (!input || input != op.getResult().getType() ||
        !groupSize(op, op.getGridAttr(), axes, symbols))
      return remark(op, "needs tensors of one type and a static grid");
    OpBuilder builder(op);

    // all_reduce followed only by an all_slice of the same group is a
    // reduce_scatter: all_slice keeps the part of the in-group linear index,
    // which is the same row-major order over the listed axes.
    if (op->hasOneUse()) {
      auto slice = dyn_cast<shard::AllSliceOp>(*op->getUsers().begin());
      if (slice && slice.getGridAttr() == op.getGridAttr() &&
          slice.getGridAxes() == axes) {
        auto size = groupSize(op, op.getGridAttr(), axes, symbols);
        auto result = staticTensor(slice.getResult().getType());
        int64_t dim = slice.getSliceAxis().getSExtValue();
        if (scaledAlong(staticTensor(input), result, dim, *size,
                        /*gather=*/false)) {
          builder.setInsertionPoint(slice);
          Value scattered = ReduceScatterOp::create(
              builder, slice.getLoc(), result, op.getInput(),
              op.getGridAttr().getValue(), axes, dim, *kind);
          slice.getResult().replaceAllUsesWith(scattered);
          slice.erase();
          op.erase();
          ++numCollectives;
          return;
        }
      }
    }
    Value reduced =
        AllReduceOp::create(builder, op.getLoc(), input, op.getInput(),
                            op.getGridAttr().getValue(), axes, *kind);
    op.getResult().replaceAllUsesWith(reduced);
    op.erase();
    ++numCollectives;
  }

  //===--------------------------------------------------------------------===//
  // Contractions
  //===--------------------------------------------------------------------===//

  /// Whether `value` is a tensor of +0 (integer 0): a linalg.fill of such a
  /// constant, a zero splat constant, or an scf.if whose branches both yield
  /// zeros (the init upstream builds for partial sums).
  static bool isZeroTensor(Value value, int depth = 0) {
    if (depth > 4)
      return false;
    auto isZeroScalar = [](Value scalar) {
      return matchPattern(scalar, m_PosZeroFloat()) ||
             matchPattern(scalar, m_Zero());
    };
    if (auto fill = value.getDefiningOp<linalg::FillOp>())
      return fill.getNumDpsInputs() == 1 && isZeroScalar(fill.getInputs()[0]);
    Attribute attr;
    if (matchPattern(value, m_Constant(&attr))) {
      auto splat = dyn_cast<SplatElementsAttr>(attr);
      if (!splat)
        return false;
      if (auto f = dyn_cast<FloatAttr>(splat.getSplatValue<Attribute>()))
        return f.getValue().isPosZero();
      if (auto i = dyn_cast<IntegerAttr>(splat.getSplatValue<Attribute>()))
        return i.getValue().isZero();
      return false;
    }
    if (auto ifOp = value.getDefiningOp<scf::IfOp>()) {
      if (ifOp.getElseRegion().empty())
        return false;
      unsigned index = cast<OpResult>(value).getResultNumber();
      return isZeroTensor(ifOp.thenYield().getOperand(index), depth + 1) &&
             isZeroTensor(ifOp.elseYield().getOperand(index), depth + 1);
    }
    return false;
  }

  /// Matches `value` as block argument `arg` of the body, possibly extended
  /// (extf for floats, extsi for integers) to `to`. Records the cast op.
  static bool matchOperand(Value value, BlockArgument &arg, Type to,
                           SmallVectorImpl<Operation *> &matched) {
    if (auto blockArg = dyn_cast<BlockArgument>(value)) {
      arg = blockArg;
      return true;
    }
    Operation *def = value.getDefiningOp();
    if (!def || !isa<arith::ExtFOp, arith::ExtSIOp>(def) ||
        def->getResult(0).getType() != to)
      return false;
    if (isa<arith::ExtFOp>(def) != isa<FloatType>(to))
      return false;
    auto blockArg = dyn_cast<BlockArgument>(def->getOperand(0));
    if (!blockArg)
      return false;
    arg = blockArg;
    matched.push_back(def);
    return true;
  }

  /// The einsum equation of a contraction `op`, or nothing when `op` is not
  /// exactly `out += ext(in0) * ext(in1)` over projected-permutation maps.
  static std::optional<std::string> contractionEquation(linalg::LinalgOp op) {
    if (!isa<linalg::MatmulOp, linalg::BatchMatmulOp, linalg::GenericOp>(op))
      return std::nullopt;
    if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
        op.getNumDpsInits() != 1 || op->getNumResults() != 1 ||
        op.hasIndexSemantics())
      return std::nullopt;
    Value out = op.getDpsInitOperand(0)->get();
    Value in0 = op.getDpsInputOperand(0)->get();
    Value in1 = op.getDpsInputOperand(1)->get();
    auto outType = staticTensor(out.getType());
    auto in0Type = staticTensor(in0.getType());
    auto in1Type = staticTensor(in1.getType());
    if (!outType || !in0Type || !in1Type ||
        outType != op->getResult(0).getType())
      return std::nullopt;
    Type outElem = outType.getElementType();
    Type inElem = in0Type.getElementType();
    if (in1Type.getElementType() != inElem)
      return std::nullopt;
    // The result type equals the inputs' or widens it within its kind, as
    // ovl.einsum requires.
    if (inElem != outElem) {
      auto fin = dyn_cast<FloatType>(inElem),
           fout = dyn_cast<FloatType>(outElem);
      auto iin = dyn_cast<IntegerType>(inElem),
           iout = dyn_cast<IntegerType>(outElem);
      bool widens = (fin && fout && fin.getWidth() < fout.getWidth()) ||
                    (iin && iout && iin.isSignless() && iout.isSignless() &&
                     iin.getWidth() < iout.getWidth());
      if (!widens)
        return std::nullopt;
    } else if (!isa<FloatType, IntegerType>(inElem)) {
      return std::nullopt;
    }

    // Body: yield (out + ext(a) * ext(b)) in either operand order.
    Block *body = op.getBlock();
    auto yield = cast<linalg::YieldOp>(body->getTerminator());
    if (yield.getNumOperands() != 1)
      return std::nullopt;
    bool isFloat = isa<FloatType>(outElem);
    Operation *add = yield.getOperand(0).getDefiningOp();
    if (!add || add->getBlock() != body ||
        !(isFloat ? isa<arith::AddFOp>(add) : isa<arith::AddIOp>(add)))
      return std::nullopt;
    BlockArgument outArg = body->getArgument(2);
    Value product;
    if (add->getOperand(0) == outArg)
      product = add->getOperand(1);
    else if (add->getOperand(1) == outArg)
      product = add->getOperand(0);
    else
      return std::nullopt;
    Operation *mul = product.getDefiningOp();
    if (!mul || mul->getBlock() != body ||
        !(isFloat ? isa<arith::MulFOp>(mul) : isa<arith::MulIOp>(mul)))
      return std::nullopt;
    SmallVector<Operation *> matched = {add, mul};
    BlockArgument lhs, rhs;
    if (!matchOperand(mul->getOperand(0), lhs, outElem, matched) ||
        !matchOperand(mul->getOperand(1), rhs, outElem, matched))
      return std::nullopt;
    // One factor per input; the result element type must be reached by the
    // extensions (no extension when the types agree).
    if (!((lhs.getArgNumber() == 0 && rhs.getArgNumber() == 1) ||
          (lhs.getArgNumber() == 1 && rhs.getArgNumber() == 0)))
      return std::nullopt;
    if (lhs.getType() != inElem && lhs.getType() != outElem)
      return std::nullopt;
    size_t expectedCasts = inElem == outElem ? 0 : 2;
    if (matched.size() != 2 + expectedCasts)
      return std::nullopt;
    // Nothing else in the body.
    if (static_cast<size_t>(std::distance(body->begin(), body->end())) !=
        matched.size() + 1)
      return std::nullopt;

    // Maps: projected permutations; output letters are exactly the parallel
    // loops, every loop occurs in an input.
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
    unsigned numLoops = op.getNumLoops();
    if (numLoops > 52)
      return std::nullopt;
    auto letter = [](unsigned dim) -> char {
      return dim < 26 ? 'a' + dim : 'A' + (dim - 26);
    };
    llvm::SmallBitVector inInput(numLoops), inOutput(numLoops);
    std::string terms[3];
    for (unsigned i = 0; i < 3; ++i) {
      AffineMap map = maps[i];
      if (map.getNumSymbols() != 0 || !map.isProjectedPermutation(
                                          /*allowZeroInResults=*/false))
        return std::nullopt;
      for (AffineExpr expr : map.getResults()) {
        unsigned dim = cast<AffineDimExpr>(expr).getPosition();
        terms[i].push_back(letter(dim));
        (i < 2 ? inInput : inOutput).set(dim);
      }
    }
    for (unsigned dim = 0; dim < numLoops; ++dim) {
      if (!inInput.test(dim))
        return std::nullopt;
      bool parallel = iterators[dim] == utils::IteratorType::parallel;
      if (parallel != inOutput.test(dim))
        return std::nullopt;
    }
    return terms[0] + "," + terms[1] + "->" + terms[2];
  }

  void importContraction(linalg::LinalgOp op) {
    std::optional<std::string> equation = contractionEquation(op);
    if (!equation) {
      if (isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op))
        remark(op, "not an exact einsum (casts, maps or types)");
      return;
    }
    Value init = op.getDpsInitOperand(0)->get();
    Value acc = isZeroTensor(init) ? Value() : init;
    if (!acc)
      droppedInits.push_back(init);
    OpBuilder builder(op);
    Value result = EinsumOp::create(builder, op.getLoc(), *equation,
                                    ValueRange{op.getDpsInputOperand(0)->get(),
                                               op.getDpsInputOperand(1)->get()},
                                    op->getResult(0).getType(), acc);
    op->getResult(0).replaceAllUsesWith(result);
    op->erase();
    ++numEinsums;
  }
};

struct OvlImportShardPass
    : public ovl::impl::OvlImportShardPassBase<OvlImportShardPass> {
  using OvlImportShardPassBase::OvlImportShardPassBase;

  void runOnOperation() override {
    Operation *root = getOperation();
    Importer importer;
    importer.remarks = remarks;

    // Upstream leaves `tensor.cast`s to the same type after each collective;
    // they would hide the collective from the einsum that uses it.
    root->walk([](tensor::CastOp cast) {
      if (cast.getSource().getType() == cast.getType()) {
        cast.getResult().replaceAllUsesWith(cast.getSource());
        cast.erase();
      }
    });

    SmallVector<Operation *> ops;
    root->walk([&](Operation *op) {
      if (isa<shard::AllGatherOp, shard::ReduceScatterOp, shard::AllReduceOp,
              linalg::LinalgOp>(op))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      if (auto gather = dyn_cast<shard::AllGatherOp>(op))
        importer.importAllGather(gather);
      else if (auto scatter = dyn_cast<shard::ReduceScatterOp>(op))
        importer.importReduceScatter(scatter);
      else if (auto reduce = dyn_cast<shard::AllReduceOp>(op))
        importer.importAllReduce(reduce);
      else
        importer.importContraction(cast<linalg::LinalgOp>(op));
    }

    // The zero inits of imported contractions (fills, the scf.if upstream
    // builds around a partial sum's init) are now unused: erase them and
    // whatever fed only them. Nothing that was dead before is touched.
    llvm::SetVector<Operation *> worklist;
    for (Value init : importer.droppedInits)
      if (Operation *def = init.getDefiningOp())
        worklist.insert(def);
    while (!worklist.empty()) {
      Operation *op = worklist.pop_back_val();
      if (!isOpTriviallyDead(op))
        continue;
      op->walk([&](Operation *nested) {
        if (nested != op)
          worklist.remove(nested);
        for (Value operand : nested->getOperands()) {
          Operation *owner = operand.getDefiningOp();
          if (owner && !op->isAncestor(owner))
            worklist.insert(owner);
        }
      });
      op->erase();
    }

    numCollectives += importer.numCollectives;
    numEinsums += importer.numEinsums;
  }
};
} // namespace
