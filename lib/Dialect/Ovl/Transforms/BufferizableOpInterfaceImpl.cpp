//===- BufferizableOpInterfaceImpl.cpp - Bufferizing ovl ops --------------===//
//
// Blocking collectives read their input and write a fresh buffer. The
// asynchronous pairs (permutes and the other collectives alike) are in
// destination-passing style: the start writes (later)
// into its destination without reading it, so an out-of-place destination is
// an allocation without a copy; the done must stay in place on the pending
// buffer, where the data lands, and reads the send buffer (`keep`) so that no
// write to it is placed before the send completes. With these rules a
// double-buffered ring loop bufferizes with no allocation or copy per step.
// An optimization barrier's results are its operands' buffers.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/Dialect/Ovl/Transforms/BufferizableOpInterfaceImpl.h"

#include "OverlapDialect/Dialect/Ovl/IR/OvlOps.h"

#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace mlir::bufferization;
using namespace mlir::ovl;

namespace {

/// Creates the buffer form of a blocking collective.
Operation *createBufferOp(RewriterBase &rewriter, AllGatherOp op, Value input,
                          Value output) {
  return BufferAllGatherOp::create(rewriter, op.getLoc(), input, output,
                                   op.getGridAttr(), op.getGridAxesAttr(),
                                   op.getGatherDimAttr());
}
Operation *createBufferOp(RewriterBase &rewriter, ReduceScatterOp op,
                          Value input, Value output) {
  return BufferReduceScatterOp::create(
      rewriter, op.getLoc(), input, output, op.getGridAttr(),
      op.getGridAxesAttr(), op.getScatterDimAttr(), op.getReductionAttr());
}
Operation *createBufferOp(RewriterBase &rewriter, AllReduceOp op, Value input,
                          Value output) {
  return BufferAllReduceOp::create(rewriter, op.getLoc(), input, output,
                                   op.getGridAttr(), op.getGridAxesAttr(),
                                   op.getReductionAttr());
}
Operation *createBufferOp(RewriterBase &rewriter, CollectivePermuteOp op,
                          Value input, Value output) {
  return BufferPermuteOp::create(rewriter, op.getLoc(), input, output,
                                 op.getGridAttr(), op.getGridAxesAttr(),
                                 op.getPairsAttr());
}

/// The identity-layout buffer type of a statically shaped tensor.
FailureOr<MemRefType> getStaticBufferType(Operation *op, Type tensorType) {
  auto type = cast<RankedTensorType>(tensorType);
  if (!type.hasStaticShape())
    return op->emitOpError("needs a static shape to bufferize, got ") << type;
  return MemRefType::get(type.getShape(), type.getElementType());
}

/// all_gather, reduce_scatter, all_reduce, collective_permute: read the
/// input, write a new buffer.
template <typename OpTy>
struct BlockingCollectiveInterface
    : public BufferizableOpInterface::ExternalModel<
          BlockingCollectiveInterface<OpTy>, OpTy> {
  bool bufferizesToMemoryRead(Operation *, OpOperand &,
                              const AnalysisState &) const {
    return true;
  }
  bool bufferizesToMemoryWrite(Operation *, OpOperand &,
                               const AnalysisState &) const {
    return false;
  }
  AliasingValueList getAliasingValues(Operation *, OpOperand &,
                                      const AnalysisState &) const {
    return {};
  }
  bool bufferizesToAllocation(Operation *, Value) const { return true; }

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto collective = cast<OpTy>(op);
    FailureOr<Value> input =
        getBuffer(rewriter, collective.getInput(), options, state);
    if (failed(input))
      return failure();
    FailureOr<MemRefType> outputType =
        getStaticBufferType(op, collective.getResult().getType());
    if (failed(outputType))
      return failure();
    FailureOr<Value> output =
        options.createAlloc(rewriter, op->getLoc(), *outputType, {});
    if (failed(output))
      return failure();
    createBufferOp(rewriter, collective, *input, *output);
    replaceOpWithBufferizedValues(rewriter, op, *output);
    return success();
  }
};

/// Creates the buffer form of an asynchronous start; returns its token.
Value createBufferStart(RewriterBase &rewriter, CollectivePermuteStartOp op,
                        Value input, Value dest) {
  return BufferPermuteStartOp::create(rewriter, op.getLoc(), input, dest,
                                      op.getGridAttr(), op.getGridAxesAttr(),
                                      op.getPairsAttr());
}
Value createBufferStart(RewriterBase &rewriter, AllGatherStartOp op,
                        Value input, Value dest) {
  return BufferAllGatherStartOp::create(rewriter, op.getLoc(), input, dest,
                                        op.getGridAttr(), op.getGridAxesAttr(),
                                        op.getGatherDimAttr());
}
Value createBufferStart(RewriterBase &rewriter, ReduceScatterStartOp op,
                        Value input, Value dest) {
  return BufferReduceScatterStartOp::create(
      rewriter, op.getLoc(), input, dest, op.getGridAttr(),
      op.getGridAxesAttr(), op.getScatterDimAttr(), op.getReductionAttr());
}
Value createBufferStart(RewriterBase &rewriter, AllReduceStartOp op,
                        Value input, Value dest) {
  return BufferAllReduceStartOp::create(rewriter, op.getLoc(), input, dest,
                                        op.getGridAttr(), op.getGridAxesAttr(),
                                        op.getReductionAttr());
}

/// Creates the buffer form of a done.
void createBufferDone(RewriterBase &rewriter, CollectivePermuteDoneOp op,
                      Value keep, Value pending) {
  BufferPermuteDoneOp::create(rewriter, op.getLoc(), op.getToken(), keep,
                              pending);
}
void createBufferDone(RewriterBase &rewriter, CollectiveDoneOp op, Value keep,
                      Value pending) {
  BufferCollectiveDoneOp::create(rewriter, op.getLoc(), op.getToken(), keep,
                                 pending);
}

/// A start (permute, all_gather, reduce_scatter, all_reduce): reads its
/// input, will write its destination.
template <typename OpTy>
struct AsyncStartInterface
    : public BufferizableOpInterface::ExternalModel<AsyncStartInterface<OpTy>,
                                                    OpTy> {
  bool bufferizesToMemoryRead(Operation *op, OpOperand &operand,
                              const AnalysisState &) const {
    return operand.get() == cast<OpTy>(op).getInput();
  }
  bool bufferizesToMemoryWrite(Operation *op, OpOperand &operand,
                               const AnalysisState &) const {
    return operand.get() == cast<OpTy>(op).getDest();
  }
  AliasingValueList getAliasingValues(Operation *op, OpOperand &operand,
                                      const AnalysisState &) const {
    auto start = cast<OpTy>(op);
    if (&operand != &start.getDestMutable())
      return {};
    return {{start.getPending(), BufferRelation::Equivalent}};
  }

  /// A pending tensor that crosses a loop's back edge must stay in its
  /// buffer: a yield into a non-equivalent iteration argument would copy it
  /// before the data has arrived.
  LogicalResult verifyAnalysis(Operation *op,
                               const AnalysisState &state) const {
    Value pending = cast<OpTy>(op).getPending();
    for (OpOperand &use : pending.getUses()) {
      auto yield = dyn_cast<scf::YieldOp>(use.getOwner());
      auto loop = yield ? dyn_cast<scf::ForOp>(yield->getParentOp()) : nullptr;
      if (!loop)
        continue;
      Value iterArg = loop.getRegionIterArgs()[use.getOperandNumber()];
      if (!state.areEquivalentBufferizedValues(pending, iterArg))
        return op->emitOpError("pending result is carried across the loop's "
                               "back edge into iteration argument #")
               << use.getOperandNumber()
               << ", which does not bufferize to the same buffer; the "
                  "transfer's destination would be copied before the data "
                  "arrives (yield it where the start's destination came from)";
    }
    return success();
  }

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto start = cast<OpTy>(op);
    FailureOr<Value> input =
        getBuffer(rewriter, start.getInput(), options, state);
    FailureOr<Value> dest =
        getBuffer(rewriter, start.getDest(), options, state);
    if (failed(input) || failed(dest))
      return failure();
    Value token = createBufferStart(rewriter, start, *input, *dest);
    replaceOpWithBufferizedValues(rewriter, op, {*dest, token});
    return success();
  }
};

/// A done (collective_permute_done, collective_done): its result is the
/// pending buffer, where the data has landed. The write is the start's (to
/// its destination); the done only reads (keep: the send buffer stays intact
/// until now). Declaring the done a write of the pending tensor that must
/// stay in place made a pair inside an scf.if unbufferizable: the if's
/// result joins the pending buffer's alias set with the other branch's
/// value, a conflict no copy could resolve.
template <typename OpTy>
struct AsyncDoneInterface
    : public BufferizableOpInterface::ExternalModel<AsyncDoneInterface<OpTy>,
                                                    OpTy> {
  bool bufferizesToMemoryRead(Operation *, OpOperand &,
                              const AnalysisState &) const {
    return true;
  }
  bool bufferizesToMemoryWrite(Operation *, OpOperand &,
                               const AnalysisState &) const {
    return false;
  }
  AliasingValueList getAliasingValues(Operation *op, OpOperand &operand,
                                      const AnalysisState &) const {
    auto done = cast<OpTy>(op);
    if (&operand != &done.getPendingMutable())
      return {};
    return {{done.getResult(), BufferRelation::Equivalent}};
  }

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto done = cast<OpTy>(op);
    FailureOr<Value> keep = getBuffer(rewriter, done.getKeep(), options, state);
    FailureOr<Value> pending =
        getBuffer(rewriter, done.getPending(), options, state);
    if (failed(keep) || failed(pending))
      return failure();
    createBufferDone(rewriter, done, *keep, *pending);
    replaceOpWithBufferizedValues(rewriter, op, *pending);
    return success();
  }
};

/// optimization_barrier: each result is its operand's buffer; the barrier
/// itself neither reads nor writes (like tensor.cast).
struct OptimizationBarrierInterface
    : public BufferizableOpInterface::ExternalModel<
          OptimizationBarrierInterface, OptimizationBarrierOp> {
  bool bufferizesToMemoryRead(Operation *, OpOperand &,
                              const AnalysisState &) const {
    return false;
  }
  bool bufferizesToMemoryWrite(Operation *, OpOperand &,
                               const AnalysisState &) const {
    return false;
  }
  AliasingValueList getAliasingValues(Operation *op, OpOperand &operand,
                                      const AnalysisState &) const {
    return {{op->getResult(operand.getOperandNumber()),
             BufferRelation::Equivalent}};
  }

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    SmallVector<Value> buffers;
    for (Value input : op->getOperands()) {
      FailureOr<Value> buffer = getBuffer(rewriter, input, options, state);
      if (failed(buffer))
        return failure();
      buffers.push_back(*buffer);
    }
    replaceOpWithBufferizedValues(rewriter, op, buffers);
    return success();
  }
};

} // namespace

LogicalResult mlir::ovl::checkBufferizable(Operation *root) {
  WalkResult walk = root->walk([](Operation *op) {
    if (!isa<AllGatherOp, ReduceScatterOp, AllReduceOp, CollectivePermuteOp>(
            op))
      return WalkResult::advance();
    return failed(getStaticBufferType(op, op->getResult(0).getType()))
               ? WalkResult::interrupt()
               : WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

void mlir::ovl::registerBufferizableOpInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, OvlDialect *) {
    AllGatherOp::attachInterface<BlockingCollectiveInterface<AllGatherOp>>(
        *context);
    ReduceScatterOp::attachInterface<
        BlockingCollectiveInterface<ReduceScatterOp>>(*context);
    AllReduceOp::attachInterface<BlockingCollectiveInterface<AllReduceOp>>(
        *context);
    CollectivePermuteOp::attachInterface<
        BlockingCollectiveInterface<CollectivePermuteOp>>(*context);
    CollectivePermuteStartOp::attachInterface<
        AsyncStartInterface<CollectivePermuteStartOp>>(*context);
    AllGatherStartOp::attachInterface<AsyncStartInterface<AllGatherStartOp>>(
        *context);
    ReduceScatterStartOp::attachInterface<
        AsyncStartInterface<ReduceScatterStartOp>>(*context);
    AllReduceStartOp::attachInterface<AsyncStartInterface<AllReduceStartOp>>(
        *context);
    CollectivePermuteDoneOp::attachInterface<
        AsyncDoneInterface<CollectivePermuteDoneOp>>(*context);
    CollectiveDoneOp::attachInterface<AsyncDoneInterface<CollectiveDoneOp>>(
        *context);
    OptimizationBarrierOp::attachInterface<OptimizationBarrierInterface>(
        *context);
  });
}
