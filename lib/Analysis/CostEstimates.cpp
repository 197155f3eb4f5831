//===- CostEstimates.cpp - Cost-model estimates of ops --------------------===//

#include "OverlapDialect/Analysis/CostEstimates.h"
#include "OverlapDialect/Dialect/Ovl/IR/OvlDialect.h"
#include "OverlapDialect/Dialect/Ovl/IR/OvlOps.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;
using namespace mlir::ovl;

ElementKind mlir::ovl::getElementKind(Type elementType) {
  if (elementType.isBF16())
    return ElementKind::BF16;
  if (elementType.isF16())
    return ElementKind::F16;
  if (elementType.isInteger(8))
    return ElementKind::I8;
  return ElementKind::F32;
}

std::optional<double> mlir::ovl::getStaticBytes(Type type) {
  auto shaped = dyn_cast<ShapedType>(type);
  if (!shaped || !shaped.hasStaticShape())
    return std::nullopt;
  std::optional<int64_t> element = getElementBytes(shaped.getElementType());
  if (!element)
    return std::nullopt;
  return static_cast<double>(shaped.getNumElements()) * *element;
}

/// Ops that name, reslice or hold data without computing on it.
static bool isDataMovementFree(Operation *op) {
  return op->hasTrait<OpTrait::ConstantLike>() ||
         isa<ViewLikeOpInterface, OffsetSizeAndStrideOpInterface,
             tensor::EmptyOp, bufferization::AllocTensorOp, tensor::CastOp,
             tensor::ReshapeOp, tensor::CollapseShapeOp, tensor::ExpandShapeOp>(
             op) ||
         isa_and_nonnull<OvlDialect>(op->getDialect());
}

std::optional<ComputeEstimate>
mlir::ovl::estimateCompute(Operation *op, const CostModel &model) {
  if (auto costed = dyn_cast<ComputeCostOpInterface>(op)) {
    std::optional<int64_t> flops = costed.getFlops();
    std::optional<int64_t> bytes = costed.getBytesAccessed();
    if (!flops || !bytes)
      return std::nullopt;
    // The inputs' element type sets the rate: bf16 x bf16 -> f32 runs at
    // the bf16 rate.
    ElementKind kind = ElementKind::F32;
    if (op->getNumOperands() > 0)
      if (auto shaped = dyn_cast<ShapedType>(op->getOperand(0).getType()))
        kind = getElementKind(shaped.getElementType());
    return ComputeEstimate{model.einsumTime(*flops, *bytes, kind),
                           static_cast<double>(*flops), kind};
  }
  // Control flow costs nothing itself; the simulator plays its body. Other
  // region ops (linalg.generic, ...) are priced as a whole.
  if (isDataMovementFree(op) ||
      isa<RegionBranchOpInterface, LoopLikeOpInterface>(op) ||
      op->getNumResults() == 0 || !isMemoryEffectFree(op))
    return ComputeEstimate{};
  // Opaque elementwise-like work: one operation per result element, one
  // pass over every shaped operand and result.
  double bytes = 0, elements = 0;
  ElementKind kind = ElementKind::F32;
  bool shapedResult = false;
  for (Value result : op->getResults()) {
    auto shaped = dyn_cast<ShapedType>(result.getType());
    if (!shaped)
      continue;
    std::optional<double> resultBytes = getStaticBytes(shaped);
    if (!resultBytes)
      return std::nullopt;
    shapedResult = true;
    bytes += *resultBytes;
    elements += shaped.getNumElements();
    kind = getElementKind(shaped.getElementType());
  }
  if (!shapedResult)
    return ComputeEstimate{};
  for (Value operand : op->getOperands())
    if (isa<ShapedType>(operand.getType())) {
      std::optional<double> operandBytes = getStaticBytes(operand.getType());
      if (!operandBytes)
        return std::nullopt;
      bytes += *operandBytes;
    }
  return ComputeEstimate{model.einsumTime(elements, bytes, kind), elements,
                         kind};
}

std::optional<double> mlir::ovl::estimateCollective(Operation *op,
                                                    const MachineModel &machine,
                                                    RingDirection direction) {
  auto collective = dyn_cast<CollectiveOpInterface>(op);
  if (!collective)
    return std::nullopt;
  std::optional<CollectiveKind> kind = collective.getCollectiveKind();
  if (!kind)
    return estimatePermuteTransfer(op, machine);
  std::optional<double> bytes = getStaticBytes(collective.getPayloadType());
  if (!bytes)
    return std::nullopt;
  return machine.collectiveTime(*kind, *bytes, collective.getGridAxes(),
                                direction);
}

std::optional<double>
mlir::ovl::estimatePermuteTransfer(Operation *op, const MachineModel &machine) {
  auto collective = dyn_cast<CollectiveOpInterface>(op);
  if (!collective || collective.getCollectiveKind())
    return std::nullopt;
  std::optional<double> bytes = getStaticBytes(collective.getPayloadType());
  if (!bytes)
    return std::nullopt;
  GroupTransfers transfers;
  ArrayRef<int16_t> axes = collective.getGridAxes();
  transfers.axes.assign(axes.begin(), axes.end());
  transfers.bytes = *bytes;
  for (auto [source, target] : collective.getSourceTargetPairs())
    transfers.pairs.emplace_back(source, target);
  return machine.transferTime(transfers);
}
