//===- MachineModel.h - The machine cost-driven passes reason about -*- C++
//-*-===//
//
// One object for "this program on that machine": a hardware description, the
// physical topology, where the grid's devices sit on it, and the cost model
// over them. The decomposition gate, the link-level lowering and overlap-sim
// build it from the same three options (hardware, topology, device
// assignment), so they agree on what a collective costs.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAPDIALECT_ANALYSIS_MACHINEMODEL_H
#define OVERLAPDIALECT_ANALYSIS_MACHINEMODEL_H

#include "OverlapDialect/CostModel/CostModel.h"
#include "OverlapDialect/Simulator/Topology.h"

#include "mlir/Support/LLVM.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

#include <map>
#include <optional>
#include <string>

namespace mlir {
class Operation;
class SymbolTableCollection;

namespace ovl {

/// What one step of ring permutes asks of the interconnect.
struct RingStepLoad {
  /// The most transfers any one link carries at once.
  int64_t maxLinkLoad = 0;
  /// The longest route, in hops.
  int64_t maxHops = 0;
};

struct MachineModel {
  HardwareDescription hardware;
  Topology topology;
  DeviceAssignment assignment;
  AnalyticalCostModel costModel;

  /// The rings a collective along `axes` runs, one per axis in order, as the
  /// cost model sees them from logical device 0.
  llvm::SmallVector<RingDim, 2> getRingDims(llvm::ArrayRef<int16_t> axes) const;

  /// Permutes along `axes` issued together, one per entry of `shifts`: in
  /// every group at once, the member at group index i sends to the member at
  /// (i - shift) mod N. Routes every transfer on the topology and counts the
  /// transfers per link, so that a step whose transfers share links (two
  /// hops at a time, both directions of a line without wrap-around, several
  /// destinations behind one switch port) shows it.
  RingStepLoad getRingStepLoad(llvm::ArrayRef<int16_t> axes,
                               llvm::ArrayRef<int64_t> shifts) const;

  /// The time of such a step moving `bytes` per transfer: the most loaded
  /// link shares its bandwidth among its transfers, and the longest route
  /// sets the latency, permuteTime(maxLinkLoad * bytes, maxHops).
  double ringStepTime(llvm::ArrayRef<int16_t> axes,
                      llvm::ArrayRef<int64_t> shifts, double bytes) const;
};

/// Builds the model of a grid of `gridShape` on `hardware` (a built-in name or
/// a JSON file), on the topology `topology` ("AxBxC"; empty for the default
/// topology of the grid's device count) with logical device i on physical
/// device `assignment[i]` (empty for row-major placement).
llvm::Expected<MachineModel>
buildMachineModel(llvm::StringRef hardware, llvm::StringRef topology,
                  llvm::ArrayRef<int64_t> assignment,
                  llvm::ArrayRef<int64_t> gridShape);

/// The machines of one set of `hardware`, `topology` and `device-assignment`
/// options, the three options every cost-driven pass takes: built on first
/// use, one per grid shape, so that a function with many collectives on one
/// grid routes its topology once. Not thread-safe; a pass keeps one per
/// instance.
class MachineModelCache {
public:
  MachineModelCache(llvm::StringRef hardware, llvm::StringRef topology,
                    llvm::ArrayRef<int64_t> assignment)
      : hardwareName(hardware.str()), topologySpec(topology.str()),
        assignment(assignment) {}

  /// The hardware description alone (no grid needed): for compute costs and
  /// `dmaSlots`. Resolved once; the error of resolveHardware otherwise.
  llvm::Expected<const AnalyticalCostModel *> getCostModel();

  /// The machine of a grid of static shape `gridShape`, or why it cannot be
  /// built (the error of buildMachineModel).
  llvm::Expected<const MachineModel *> get(llvm::ArrayRef<int64_t> gridShape);

  /// The machine the grid of `collective` (an op implementing
  /// CollectiveOpInterface) is placed on. Fails after emitting "cannot map
  /// grid @g onto the machine: <why>" at the op when it cannot be built;
  /// nullptr when the grid is unresolved or has a dynamic shape, which the
  /// cost model cannot place.
  FailureOr<const MachineModel *>
  getOrEmitError(Operation *collective, SymbolTableCollection &symbols);

private:
  std::string hardwareName;
  std::string topologySpec;
  llvm::SmallVector<int64_t> assignment;
  std::optional<AnalyticalCostModel> costModel;
  std::map<llvm::SmallVector<int64_t>, MachineModel> machines;
};

} // namespace ovl
} // namespace mlir

#endif // OVERLAPDIALECT_ANALYSIS_MACHINEMODEL_H
