//===- MachineModel.cpp - The machine cost-driven passes reason about -----===//

#include "OverlapDialect/Analysis/MachineModel.h"

#include "OverlapDialect/Dialect/Ovl/IR/OvlOps.h"

#include "llvm/ADT/DenseMap.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::ovl;

llvm::SmallVector<RingDim, 2>
MachineModel::getRingDims(llvm::ArrayRef<int16_t> axes) const {
  llvm::SmallVector<RingDim, 2> dims;
  for (int16_t axis : axes)
    dims.push_back(assignment.ringDim(topology, axis));
  return dims;
}

RingStepLoad
MachineModel::getRingStepLoad(llvm::ArrayRef<int16_t> axes,
                              llvm::ArrayRef<int64_t> shifts) const {
  RingStepLoad load;
  int64_t groupSize = assignment.groupSize(axes);
  if (groupSize <= 1)
    return load;
  llvm::DenseMap<int64_t, int64_t> transfersPerLink;
  llvm::SmallVector<int64_t, 8> links;
  for (int64_t logical = 0, e = assignment.getNumLogicalDevices(); logical < e;
       ++logical) {
    int64_t index = assignment.groupIndex(logical, axes);
    for (int64_t shift : shifts) {
      int64_t target = assignment.groupMember(
          logical, axes, ((index - shift) % groupSize + groupSize) % groupSize);
      int64_t src = assignment.physical(logical);
      int64_t dst = assignment.physical(target);
      if (src == dst)
        continue;
      load.maxHops = std::max(load.maxHops, topology.hops(src, dst));
      topology.route(src, dst, links);
      for (int64_t link : links)
        load.maxLinkLoad = std::max(load.maxLinkLoad, ++transfersPerLink[link]);
    }
  }
  return load;
}

double MachineModel::ringStepTime(llvm::ArrayRef<int16_t> axes,
                                  llvm::ArrayRef<int64_t> shifts,
                                  double bytes) const {
  RingStepLoad load = getRingStepLoad(axes, shifts);
  return costModel.permuteTime(static_cast<double>(load.maxLinkLoad) * bytes,
                               load.maxHops);
}

llvm::Expected<MachineModel>
mlir::ovl::buildMachineModel(llvm::StringRef hardware, llvm::StringRef topology,
                             llvm::ArrayRef<int64_t> assignment,
                             llvm::ArrayRef<int64_t> gridShape) {
  llvm::Expected<HardwareDescription> hw = resolveHardware(hardware);
  if (!hw)
    return hw.takeError();
  int64_t numDevices = 1;
  for (int64_t size : gridShape)
    numDevices *= size;
  llvm::Expected<Topology> topo = topology.empty()
                                      ? Topology::getDefault(*hw, numDevices)
                                      : Topology::parse(*hw, topology);
  if (!topo)
    return topo.takeError();
  llvm::Expected<DeviceAssignment> placed =
      assignment.empty()
          ? DeviceAssignment::rowMajor(gridShape, *topo)
          : DeviceAssignment::fromList(gridShape, *topo, assignment);
  if (!placed)
    return placed.takeError();
  return MachineModel{*hw, std::move(*topo), std::move(*placed),
                      AnalyticalCostModel(*hw)};
}

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
