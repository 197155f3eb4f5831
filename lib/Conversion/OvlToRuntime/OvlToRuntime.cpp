//===- OvlToRuntime.cpp - Bufferized ovl ops to ovlrt calls ---------------===//
//
// Lowers the buffer forms of the collectives, the asynchronous pairs
// (permutes and all_gather / reduce_scatter / all_reduce) and partition_id to
// calls of the C runtime, and the token type to the runtime's i64 request
// handle. Expects bufferized IR: tensor-level ovl ops are reported as errors.
//
// The runtime ABI (runtime/README.md) takes, besides the buffers, a constant
// i64 "config" array describing the op and a NUL-terminated location string:
//
//   config = [grid rank, grid shape..., #axes, axes..., dim, reduction,
//             #pairs, (source, target)...]
//
// with dim = -1 and #pairs = 0 where they do not apply.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/Conversion/Passes.h"

#include "OverlapDialect/Dialect/Ovl/IR/OvlOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::ovl {
#define GEN_PASS_DEF_OVLLOWERTORUNTIMEPASS
#include "OverlapDialect/Conversion/Passes.h.inc"
} // namespace mlir::ovl

using namespace mlir;
using namespace mlir::ovl;

/// The runtime's suffix for an element type, or an empty string.
static StringRef getTypeSuffix(Type type) {
  if (type.isF32())
    return "f32";
  if (type.isF64())
    return "f64";
  if (type.isF16())
    return "f16";
  if (type.isBF16())
    return "bf16";
  if (type.isInteger(8))
    return "i8";
  if (type.isInteger(16))
    return "i16";
  if (type.isInteger(32))
    return "i32";
  if (type.isInteger(64))
    return "i64";
  return "";
}

/// "file:line:col" of the innermost file location, for runtime messages.
static std::string describeLocation(Location loc) {
  std::string text;
  loc->walk([&](Location nested) {
    if (auto file = dyn_cast<FileLineColLoc>(nested)) {
      text = (file.getFilename().strref() + ":" + Twine(file.getLine()) + ":" +
              Twine(file.getColumn()))
                 .str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (text.empty())
    llvm::raw_string_ostream(text) << loc;
  return text;
}

namespace {

/// Declares runtime functions and the constant globals calls refer to,
/// reusing identical ones.
class RuntimeABI {
public:
  explicit RuntimeABI(ModuleOp module) : module(module), symbols(module) {}

  /// A private `llvm.emit_c_interface` declaration of `name`.
  func::FuncOp getFunction(StringRef name, TypeRange inputs,
                           TypeRange results) {
    if (auto existing = symbols.lookup<func::FuncOp>(name))
      return existing;
    OpBuilder builder = OpBuilder::atBlockBegin(module.getBody());
    auto func = func::FuncOp::create(builder, module.getLoc(), name,
                                     builder.getFunctionType(inputs, results));
    func.setPrivate();
    func->setAttr("llvm.emit_c_interface", builder.getUnitAttr());
    symbols.insert(func);
    return func;
  }

  /// A `memref<?xi64>` view of a constant global holding `values`.
  Value getConfig(OpBuilder &builder, Location loc, ArrayRef<int64_t> values) {
    auto type = RankedTensorType::get({static_cast<int64_t>(values.size())},
                                      builder.getI64Type());
    return getGlobal(builder, loc, "__ovl_config",
                     DenseIntElementsAttr::get(type, values));
  }

  /// A `memref<?xi8>` view of a constant NUL-terminated `text`.
  Value getString(OpBuilder &builder, Location loc, StringRef text) {
    SmallVector<int8_t> bytes(text.begin(), text.end());
    bytes.push_back(0);
    auto type = RankedTensorType::get({static_cast<int64_t>(bytes.size())},
                                      builder.getI8Type());
    return getGlobal(builder, loc, "__ovl_where",
                     DenseIntElementsAttr::get(type, ArrayRef(bytes)));
  }

private:
  Value getGlobal(OpBuilder &builder, Location loc, StringRef prefix,
                  DenseIntElementsAttr value) {
    auto memrefType = MemRefType::get(value.getType().getShape(),
                                      value.getType().getElementType());
    memref::GlobalOp &global = globals[value];
    if (!global) {
      OpBuilder moduleBuilder = OpBuilder::atBlockBegin(module.getBody());
      global = memref::GlobalOp::create(
          moduleBuilder, module.getLoc(),
          (prefix + "_" + Twine(counters[prefix]++)).str(),
          moduleBuilder.getStringAttr("private"), memrefType, value,
          /*constant=*/true, /*alignment=*/nullptr);
      symbols.insert(global);
    }
    Value view = memref::GetGlobalOp::create(builder, loc, memrefType,
                                             global.getSymName());
    auto dynamicType =
        MemRefType::get({ShapedType::kDynamic}, memrefType.getElementType());
    return memref::CastOp::create(builder, loc, dynamicType, view);
  }

  ModuleOp module;
  SymbolTable symbols;
  llvm::DenseMap<Attribute, memref::GlobalOp> globals;
  llvm::StringMap<unsigned> counters;
};

/// The config array of a collective; `grid` has been verified to resolve.
SmallVector<int64_t> buildConfig(shard::GridOp grid, ArrayRef<int16_t> axes,
                                 int64_t dim, ReductionKind reduction,
                                 ArrayRef<int64_t> pairs) {
  SmallVector<int64_t> config;
  config.push_back(grid.getRank());
  llvm::append_range(config, grid.getShape());
  config.push_back(axes.size());
  llvm::append_range(config, axes);
  config.push_back(dim);
  config.push_back(static_cast<int64_t>(reduction));
  config.push_back(pairs.size() / 2);
  llvm::append_range(config, pairs);
  return config;
}

/// Shared state of the patterns.
struct LoweringContext {
  RuntimeABI &abi;
  SymbolTableCollection &symbolTables;
  int64_t &numCalls;
};

/// Lowers one buffer collective `OpTy` to `ovlrt_<name>_<type>(in, out,
/// config, where)`, returning the start's token as i64 where it has one.
template <typename OpTy>
struct BufferCollectiveLowering : public OpConversionPattern<OpTy> {
  BufferCollectiveLowering(const TypeConverter &converter, MLIRContext *context,
                           LoweringContext &lowering, StringRef name)
      : OpConversionPattern<OpTy>(converter, context), lowering(lowering),
        name(name) {}

  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    StringRef suffix = getTypeSuffix(
        cast<MemRefType>(op.getInput().getType()).getElementType());
    auto grid = lowering.symbolTables.lookupNearestSymbolFrom<shard::GridOp>(
        op, op.getGridAttr());
    SmallVector<int64_t> config = buildConfig(
        grid, op.getGridAxes(), getDim(op), getReduction(op), getPairs(op));
    SmallVector<Type> results;
    if constexpr (isStart)
      results.push_back(rewriter.getI64Type());
    // The descriptors the unranked casts put on the stack live as long as
    // the call: in a loop, they would pile up one set per iteration (85,000
    // collectives overflowed a device thread's stack).
    auto scope = memref::AllocaScopeOp::create(rewriter, loc, results);
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(
        rewriter.createBlock(&scope.getBodyRegion()));
    Value configView = lowering.abi.getConfig(rewriter, loc, config);
    Value where =
        lowering.abi.getString(rewriter, loc, describeLocation(op.getLoc()));
    auto unranked = [&](Value buffer) {
      auto type = UnrankedMemRefType::get(
          cast<MemRefType>(buffer.getType()).getElementType(), 0);
      return memref::CastOp::create(rewriter, loc, type, buffer).getResult();
    };
    SmallVector<Value> operands = {unranked(adaptor.getInput()),
                                   unranked(adaptor.getOutput()), configView,
                                   where};
    func::FuncOp callee =
        lowering.abi.getFunction(("ovlrt_" + name + "_" + suffix).str(),
                                 ValueRange(operands).getTypes(), results);
    auto call = func::CallOp::create(rewriter, loc, callee, operands);
    memref::AllocaScopeReturnOp::create(rewriter, loc, call.getResults());
    ++lowering.numCalls;
    rewriter.replaceOp(op, scope.getResults());
    return success();
  }

private:
  static constexpr bool isStart =
      std::is_same_v<OpTy, BufferPermuteStartOp> ||
      std::is_same_v<OpTy, BufferAllGatherStartOp> ||
      std::is_same_v<OpTy, BufferReduceScatterStartOp> ||
      std::is_same_v<OpTy, BufferAllReduceStartOp>;

  static int64_t getDim(OpTy op) {
    if constexpr (std::is_same_v<OpTy, BufferAllGatherOp> ||
                  std::is_same_v<OpTy, BufferAllGatherStartOp>)
      return op.getGatherDim();
    else if constexpr (std::is_same_v<OpTy, BufferReduceScatterOp> ||
                       std::is_same_v<OpTy, BufferReduceScatterStartOp>)
      return op.getScatterDim();
    return -1;
  }
  static ReductionKind getReduction(OpTy op) {
    if constexpr (std::is_same_v<OpTy, BufferReduceScatterOp> ||
                  std::is_same_v<OpTy, BufferAllReduceOp> ||
                  std::is_same_v<OpTy, BufferReduceScatterStartOp> ||
                  std::is_same_v<OpTy, BufferAllReduceStartOp>)
      return op.getReduction();
    return ReductionKind::Sum;
  }
  static ArrayRef<int64_t> getPairs(OpTy op) {
    if constexpr (std::is_same_v<OpTy, BufferPermuteOp> ||
                  std::is_same_v<OpTy, BufferPermuteStartOp>)
      return op.getPairs();
    return {};
  }

  LoweringContext &lowering;
  std::string name;
};

/// `ovl.buffer.permute_done` -> `ovlrt_permute_done(token, where)`,
/// `ovl.buffer.collective_done` -> `ovlrt_collective_done(token, where)`.
template <typename OpTy>
struct DoneLowering : public OpConversionPattern<OpTy> {
  DoneLowering(const TypeConverter &converter, MLIRContext *context,
               LoweringContext &lowering, StringRef callee)
      : OpConversionPattern<OpTy>(converter, context), lowering(lowering),
        callee(callee) {}

  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value where =
        lowering.abi.getString(rewriter, loc, describeLocation(op.getLoc()));
    SmallVector<Value> operands = {adaptor.getToken(), where};
    func::FuncOp function =
        lowering.abi.getFunction(callee, ValueRange(operands).getTypes(), {});
    func::CallOp::create(rewriter, loc, function, operands);
    ++lowering.numCalls;
    rewriter.eraseOp(op);
    return success();
  }

  LoweringContext &lowering;
  std::string callee;
};

/// `ovl.partition_id` -> `ovlrt_partition_id(config)`.
struct PartitionIdLowering : public OpConversionPattern<PartitionIdOp> {
  PartitionIdLowering(const TypeConverter &converter, MLIRContext *context,
                      LoweringContext &lowering)
      : OpConversionPattern(converter, context), lowering(lowering) {}

  LogicalResult
  matchAndRewrite(PartitionIdOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto grid = lowering.symbolTables.lookupNearestSymbolFrom<shard::GridOp>(
        op, op.getGridAttr());
    Value config = lowering.abi.getConfig(
        rewriter, loc,
        buildConfig(grid, op.getGridAxes(), -1, ReductionKind::Sum, {}));
    func::FuncOp callee = lowering.abi.getFunction(
        "ovlrt_partition_id", {config.getType()}, {rewriter.getI64Type()});
    auto call = func::CallOp::create(rewriter, loc, callee, config);
    ++lowering.numCalls;
    rewriter.replaceOpWithNewOp<arith::IndexCastOp>(op, rewriter.getIndexType(),
                                                    call.getResult(0));
    return success();
  }

  LoweringContext &lowering;
};

/// Checks that the patterns can lower `op`: an ovl op on buffers (or a
/// partition id), of a supported element type, on a static grid.
LogicalResult checkLowerable(Operation *op, SymbolTableCollection &symbols) {
  if (!isa_and_nonnull<OvlDialect>(op->getDialect()))
    return success();
  if (!op->getName().getStringRef().starts_with("ovl.buffer.") &&
      !isa<PartitionIdOp>(op))
    return op->emitOpError("is still on tensors; run one-shot-bufferize "
                           "(after ovl-einsum-to-linalg) before "
                           "ovl-lower-to-runtime");
  for (Type type : op->getOperandTypes())
    if (auto memref = dyn_cast<MemRefType>(type);
        memref && getTypeSuffix(memref.getElementType()).empty())
      return op->emitOpError("element type ")
             << memref.getElementType()
             << " has no runtime implementation; expected f32, f64, f16, "
                "bf16, i8, i16, i32 or i64";
  auto gridSymbol = op->getAttrOfType<FlatSymbolRefAttr>("grid");
  if (!gridSymbol)
    return success();
  auto grid = symbols.lookupNearestSymbolFrom<shard::GridOp>(op, gridSymbol);
  if (!grid || llvm::any_of(grid.getShape(), ShapedType::isDynamic))
    return op->emitOpError("the runtime needs a static grid shape");
  return success();
}

struct OvlLowerToRuntimePass
    : public ovl::impl::OvlLowerToRuntimePassBase<OvlLowerToRuntimePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *context = &getContext();

    // Report everything the patterns cannot lower before converting.
    SymbolTableCollection symbolTables;
    WalkResult invalid = module.walk([&](Operation *op) {
      if (failed(checkLowerable(op, symbolTables)))
        return WalkResult::interrupt();
      return WalkResult::advance();
    });
    if (invalid.wasInterrupted())
      return signalPassFailure();

    TypeConverter converter;
    converter.addConversion([](Type type) { return type; });
    converter.addConversion(
        [](TokenType type) { return IntegerType::get(type.getContext(), 64); });

    RuntimeABI abi(module);
    int64_t calls = 0;
    LoweringContext lowering{abi, symbolTables, calls};

    RewritePatternSet patterns(context);
    patterns.add<BufferCollectiveLowering<BufferAllGatherOp>>(
        converter, context, lowering, "all_gather");
    patterns.add<BufferCollectiveLowering<BufferReduceScatterOp>>(
        converter, context, lowering, "reduce_scatter");
    patterns.add<BufferCollectiveLowering<BufferAllReduceOp>>(
        converter, context, lowering, "all_reduce");
    patterns.add<BufferCollectiveLowering<BufferPermuteOp>>(
        converter, context, lowering, "permute");
    patterns.add<BufferCollectiveLowering<BufferPermuteStartOp>>(
        converter, context, lowering, "permute_start");
    patterns.add<BufferCollectiveLowering<BufferAllGatherStartOp>>(
        converter, context, lowering, "all_gather_start");
    patterns.add<BufferCollectiveLowering<BufferReduceScatterStartOp>>(
        converter, context, lowering, "reduce_scatter_start");
    patterns.add<BufferCollectiveLowering<BufferAllReduceStartOp>>(
        converter, context, lowering, "all_reduce_start");
    patterns.add<DoneLowering<BufferPermuteDoneOp>>(
        converter, context, lowering, "ovlrt_permute_done");
    patterns.add<DoneLowering<BufferCollectiveDoneOp>>(
        converter, context, lowering, "ovlrt_collective_done");
    patterns.add<PartitionIdLowering>(converter, context, lowering);

    ConversionTarget target(*context);
    target.addIllegalDialect<OvlDialect>();
    target.markUnknownOpDynamicallyLegal(
        [&](Operation *op) { return converter.isLegal(op); });
    target.addDynamicallyLegalOp<func::FuncOp>([&](func::FuncOp func) {
      return converter.isSignatureLegal(func.getFunctionType()) &&
             converter.isLegal(&func.getBody());
    });
    scf::populateSCFStructuralTypeConversionsAndLegality(converter, patterns,
                                                         target);
    populateFunctionOpInterfaceTypeConversionPattern<func::FuncOp>(patterns,
                                                                   converter);
    populateCallOpTypeConversionPattern(patterns, converter);
    populateReturnOpTypeConversionPattern(patterns, converter);

    if (failed(applyFullConversion(module, target, std::move(patterns))))
      return signalPassFailure();
    numCalls += calls;

    // The grids were only symbols for the collectives.
    for (auto grid : llvm::make_early_inc_range(module.getOps<shard::GridOp>()))
      if (SymbolTable::symbolKnownUseEmpty(grid, module))
        grid.erase();
  }
};
} // namespace
