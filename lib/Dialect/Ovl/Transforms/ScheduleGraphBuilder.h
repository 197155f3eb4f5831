//===- ScheduleGraphBuilder.h - Blocks as scheduling graphs -----*- C++ -*-===//
//
// The IR side of `ovl-schedule`: builds the IR-free graph the scheduling
// library orders (Scheduling/ScheduleGraph.h) from the ops of a block, their
// dependencies (SSA uses, in-place writes, memory effects), their costs on
// the cost model and what each permute start sends, and moves the ops into
// the order computed. Node i of a graph is the i-th op of its block; the
// builder hands back that table.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAP_LIB_DIALECT_OVL_TRANSFORMS_SCHEDULEGRAPHBUILDER_H
#define OVERLAP_LIB_DIALECT_OVL_TRANSFORMS_SCHEDULEGRAPHBUILDER_H

#include "OverlapDialect/Scheduling/ScheduleGraph.h"

#include "mlir/Analysis/AliasAnalysis/LocalAliasAnalysis.h"
#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir {
namespace ovl {
class AnalyticalCostModel;
class MachineModelCache;

/// The cost and the peak in-flight count of an op whose regions were
/// scheduled.
struct RegionSummary {
  double cost = 0;
  int peak = 0;
};

class ScheduleGraphBuilder {
public:
  /// Prices compute with `compute` and collectives on `machines`; an op in
  /// `summaries` costs, and holds the slots of, its scheduled regions.
  ScheduleGraphBuilder(MachineModelCache &machines,
                       const AnalyticalCostModel &compute,
                       const DenseMap<Operation *, RegionSummary> &summaries)
      : machines(machines), compute(compute), summaries(summaries),
        bufferizationState(bufferizationOptions) {}

  /// The graph of the ops of `block` before `terminator` (all of them when
  /// null), finalized and its transfers planned; `ops` receives the op of
  /// each node. Fails, after emitting an error at the op, when the machine
  /// of a collective's grid cannot be built.
  FailureOr<sched::ScheduleGraph> build(Block &block, Operation *terminator,
                                        SmallVectorImpl<Operation *> &ops);

private:
  FailureOr<double> costOf(Operation *op, bool touchesMemory);

  MachineModelCache &machines;
  const AnalyticalCostModel &compute;
  const DenseMap<Operation *, RegionSummary> &summaries;
  SymbolTableCollection symbols;
  LocalAliasAnalysis aliases;
  bufferization::BufferizationOptions bufferizationOptions;
  bufferization::AnalysisState bufferizationState;
};

/// Moves `ops` (the nodes of a graph of `block`, `terminator` as for
/// build) into `order`; returns how many changed position.
unsigned applyOrder(Block &block, Operation *terminator,
                    ArrayRef<Operation *> ops, ArrayRef<unsigned> order);

} // namespace ovl
} // namespace mlir

#endif // OVERLAP_LIB_DIALECT_OVL_TRANSFORMS_SCHEDULEGRAPHBUILDER_H
