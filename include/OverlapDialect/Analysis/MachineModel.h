//===- MachineModel.h - The machines of cost-driven passes ------*- C++ -*-===//
//
// The IR side of MachineModel (CostModel/Machine.h): the machines one set of
// pass options describes, one per grid shape, and the machine of a
// collective op's grid with a located error when it cannot be built.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAPDIALECT_ANALYSIS_MACHINEMODEL_H
#define OVERLAPDIALECT_ANALYSIS_MACHINEMODEL_H

#include "OverlapDialect/CostModel/Machine.h"

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
