//===- MachineModel.cpp - The machines of cost-driven passes -------------===//

#include "OverlapDialect/Analysis/MachineModel.h"

#include "OverlapDialect/Dialect/Ovl/IR/OvlOps.h"

using namespace mlir;
using namespace mlir::ovl;

llvm::Expected<const AnalyticalCostModel *> MachineModelCache::getCostModel() {
  if (!costModel) {
    llvm::Expected<HardwareDescription> hw = resolveHardware(hardwareName);
    if (!hw)
      return hw.takeError();
    costModel.emplace(std::move(*hw));
  }
  return &*costModel;
}

llvm::Expected<const MachineModel *>
MachineModelCache::get(llvm::ArrayRef<int64_t> gridShape) {
  llvm::SmallVector<int64_t> shape(gridShape);
  auto it = machines.find(shape);
  if (it == machines.end()) {
    llvm::Expected<MachineModel> machine =
        buildMachineModel(hardwareName, topologySpec, assignment, shape);
    if (!machine)
      return machine.takeError();
    it = machines.emplace(std::move(shape), std::move(*machine)).first;
  }
  return &it->second;
}

FailureOr<const MachineModel *>
MachineModelCache::getOrEmitError(Operation *collective,
                                  SymbolTableCollection &symbols) {
  auto op = dyn_cast<CollectiveOpInterface>(collective);
  if (!op)
    return static_cast<const MachineModel *>(nullptr);
  shard::GridOp grid = op.getGridOp(symbols);
  if (!grid || llvm::any_of(grid.getShape(), ShapedType::isDynamic))
    return static_cast<const MachineModel *>(nullptr);
  llvm::Expected<const MachineModel *> machine = get(grid.getShape());
  if (!machine) {
    collective->emitError("cannot map grid @")
        << grid.getSymName()
        << " onto the machine: " << llvm::toString(machine.takeError());
    return failure();
  }
  return *machine;
}
