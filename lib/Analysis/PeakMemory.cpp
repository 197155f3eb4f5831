//===- PeakMemory.cpp - Peak live bytes of one device's program -----------===//
//
// Buffers are alias classes of tensor values (union-find over the aliasing
// rules in PeakMemory.h). A block is walked in order: at each op, the bytes
// of the classes live across it plus what the op itself needs (its new
// results, or the peak of its regions) is a candidate for the peak; a class
// dies after the last op of the block that uses one of its values.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/Analysis/PeakMemory.h"

#include "OverlapDialect/Dialect/Ovl/IR/OvlOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "ovl-peak-memory"

using namespace mlir;
using namespace mlir::ovl;

namespace {

/// The bytes of a statically shaped tensor, or nullopt.
std::optional<int64_t> getBytes(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return std::nullopt;
  std::optional<int64_t> element = getElementBytes(tensor.getElementType());
  if (!element)
    return std::nullopt;
  return tensor.getNumElements() * *element;
}

/// A splat constant is a broadcast that its users fuse (XLA) or read-only
/// data of the executable (One-Shot Bufferize makes it a memref.global):
/// no buffer of the step. Counted, CSE's merging of the zeros of every
/// ReLU in a training step would hold one activation-sized tensor live
/// from the first layer's forward to the last layer's backward.
bool isSplatConstant(Value value) {
  DenseElementsAttr attr;
  return matchPattern(value, m_Constant(&attr)) && attr.isSplat();
}

class Estimator {
public:
  LogicalResult build(func::FuncOp func) {
    WalkResult result = func.walk([&](Operation *op) {
      for (Value value : op->getResults())
        if (!isSplatConstant(value) && failed(add(value, op)))
          return WalkResult::interrupt();
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (BlockArgument arg : block.getArguments())
            if (failed(add(arg, op)))
              return WalkResult::interrupt();
      unite(op);
      return WalkResult::advance();
    });
    return failure(result.wasInterrupted());
  }

  /// The peak of `block`, given the classes live on entry (`liveIn`), of
  /// which `pinned` stay live to the end; classes in `outer` are live
  /// around the block and counted there, not here. Linear in the block's
  /// ops and values (a whole model's training step is one block of tens of
  /// thousands of ops): the live bytes are kept as a running sum and each
  /// class leaves the live set once, at its last use.
  int64_t peakOf(Block &block, const llvm::SetVector<Value> &liveIn,
                 const llvm::DenseSet<Value> &pinned,
                 const llvm::DenseSet<Value> &outer) {
    // The last op of the block using each class (through nested uses), and
    // the classes each op uses last.
    llvm::DenseMap<Value, Operation *> lastUse;
    for (Operation &op : block)
      op.walk([&](Operation *inner) {
        for (Value operand : inner->getOperands())
          if (classes.contains(operand))
            lastUse[leader(operand)] = &op;
      });
    for (Value value : liveIn)
      lastUse.try_emplace(value, nullptr);
    llvm::DenseMap<Operation *, llvm::SmallVector<Value, 2>> dying;
    for (auto [value, op] : lastUse)
      if (op)
        dying[op].push_back(value);

    llvm::DenseSet<Value> live(liveIn.begin(), liveIn.end());
    int64_t liveBytes = sum(liveIn);
    int64_t peak = liveBytes;
    auto kill = [&](Value value) {
      if (!pinned.contains(value) && live.erase(value))
        liveBytes -= bytesOf(value);
    };
    for (Operation &op : block) {
      int64_t inner = 0;
      if (op.getNumRegions() != 0) {
        llvm::DenseSet<Value> around = outer;
        around.insert(live.begin(), live.end());
        for (Region &region : op.getRegions())
          for (Block &nested : region) {
            llvm::SetVector<Value> entry;
            for (BlockArgument arg : nested.getArguments())
              if (classes.contains(arg) && !around.contains(leader(arg)))
                entry.insert(leader(arg));
            inner = std::max(inner, peakOf(nested, entry, {}, around));
          }
      }
      // Results no op of the block uses die where they are made.
      llvm::SmallVector<Value, 2> unused;
      for (Value result : op.getResults()) {
        if (!classes.contains(result) || outer.contains(leader(result)))
          continue;
        Value value = leader(result);
        if (live.insert(value).second)
          liveBytes += bytesOf(value);
        if (!lastUse.contains(value))
          unused.push_back(value);
      }
      peak = std::max(peak, liveBytes + inner);
      LLVM_DEBUG(llvm::dbgs() << "peak-memory: " << liveBytes << " + " << inner
                              << " bytes at " << op.getName() << "\n");
      llvm::for_each(unused, kill);
      if (auto it = dying.find(&op); it != dying.end())
        llvm::for_each(it->second, kill);
    }
    return peak;
  }

  Value leader(Value value) { return classes.getLeaderValue(value); }

  /// The bytes of a class: its largest member (a view is no larger).
  int64_t bytesOf(Value leaderValue) { return classBytes.lookup(leaderValue); }

  int64_t sum(const llvm::SetVector<Value> &live) {
    int64_t total = 0;
    for (Value value : live)
      total += bytesOf(value);
    return total;
  }

  void finish() {
    for (auto [value, bytes] : valueBytes) {
      int64_t &total = classBytes[leader(value)];
      total = std::max(total, bytes);
    }
  }

private:
  LogicalResult add(Value value, Operation *at) {
    if (!isa<TensorType>(value.getType()))
      return success();
    std::optional<int64_t> bytes = getBytes(value.getType());
    if (!bytes)
      return at->emitError("the peak-memory estimate needs static shapes of "
                           "integers, floats, index or complex numbers, got ")
             << value.getType();
    classes.insert(value);
    valueBytes.push_back({value, *bytes});
    return success();
  }

  void join(Value a, Value b) {
    if (classes.contains(a) && classes.contains(b))
      classes.unionSets(a, b);
  }

  /// The aliasing rules: what bufferization places in one buffer.
  void unite(Operation *op) {
    if (isa<tensor::ExtractSliceOp, tensor::CollapseShapeOp,
            tensor::ExpandShapeOp, tensor::CastOp, tensor::ReshapeOp>(op))
      join(op->getOperand(0), op->getResult(0));
    if (isa<OptimizationBarrierOp>(op))
      for (auto [input, result] :
           llvm::zip(op->getOperands(), op->getResults()))
        join(input, result);
    if (auto insert = dyn_cast<tensor::InsertSliceOp>(op))
      join(insert.getDest(), insert.getResult());
    if (auto dps = dyn_cast<DestinationStyleOpInterface>(op))
      for (OpOperand &init : dps.getDpsInitsMutable())
        if (OpResult tied = dps.getTiedOpResult(&init))
          join(init.get(), tied);
    if (auto einsum = dyn_cast<EinsumOp>(op); einsum && einsum.getAcc())
      join(einsum.getAcc(), einsum.getResult());
    if (auto start = dyn_cast<AsyncStartOpInterface>(op))
      join(start.getDest(), start.getPending());
    if (auto done = dyn_cast<CollectivePermuteDoneOp>(op))
      join(done.getPending(), done.getResult());
    if (auto done = dyn_cast<CollectiveDoneOp>(op))
      join(done.getPending(), done.getResult());
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
      for (auto [init, arg, result, yielded] :
           llvm::zip(loop.getInitArgs(), loop.getRegionIterArgs(),
                     loop.getResults(), yield.getOperands())) {
        join(init, arg);
        join(arg, result);
        join(arg, yielded);
      }
    }
    if (auto branch = dyn_cast<scf::IfOp>(op))
      for (Region &region : branch->getRegions())
        for (auto [result, yielded] :
             llvm::zip(branch.getResults(),
                       region.front().getTerminator()->getOperands()))
          join(result, yielded);
  }

  llvm::EquivalenceClasses<Value> classes;
  SmallVector<std::pair<Value, int64_t>> valueBytes;
  llvm::DenseMap<Value, int64_t> classBytes;
};

} // namespace

FailureOr<PeakMemory> mlir::ovl::estimatePeakMemory(func::FuncOp func) {
  Estimator estimator;
  if (failed(estimator.build(func)))
    return failure();
  estimator.finish();
  Block &entry = func.getBody().front();
  PeakMemory result;
  // Arguments stay live to the end: the caller holds them. Results die at
  // the return, the last op.
  llvm::SetVector<Value> arguments;
  for (BlockArgument arg : entry.getArguments())
    if (isa<TensorType>(arg.getType()))
      arguments.insert(estimator.leader(arg));
  result.argumentBytes = estimator.sum(arguments);
  llvm::DenseSet<Value> pinned(arguments.begin(), arguments.end());
  result.peakBytes = estimator.peakOf(entry, arguments, pinned, {});
  return result;
}
