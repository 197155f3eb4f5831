//===- MachineModel.cpp - The machine cost-driven passes reason about -----===//

#include "OverlapDialect/Analysis/MachineModel.h"

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
