//===- GateRemarks.h - What the gate decided, as remarks --------*- C++ -*-===//
//
// `ovl-decompose-collective-einsum remarks=true`: a remark on each
// candidate (its form and why, with the prices read) and on each block
// whose loops were priced together.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAP_LIB_DIALECT_OVL_TRANSFORMS_GATEREMARKS_H
#define OVERLAP_LIB_DIALECT_OVL_TRANSFORMS_GATEREMARKS_H

#include "OverlapDialect/Gate/Planner.h"

#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <vector>

namespace mlir {
class Block;
class Operation;

namespace ovl {

/// The pass's candidates, matched once: the planner's view of each and the
/// IR it stands for, by the same index.
struct MatchedCandidates {
  /// The collectives, in program order.
  SmallVector<Operation *> ops;
  /// Devices in each collective's group (0 when unknown).
  SmallVector<int64_t> groupSizes;
  /// The blocks, by the number the planner knows them by.
  SmallVector<Block *> blocks;
  std::vector<gate::Candidate> candidates;
};

/// The options the remarks explain.
struct GateRemarkOptions {
  DecomposeGate gate = DecomposeGate::Cost;
  bool asyncCollectives = true;
  GatherScatterChoice gatherScatter = GatherScatterChoice::Auto;
};

/// Emits the remarks of `plan`, made for `matched`. Before any rewrite: a
/// remark may name another candidate's collective, which its rewrite
/// erases.
void emitGateRemarks(const MatchedCandidates &matched, const gate::Plan &plan,
                     const GateRemarkOptions &options);

} // namespace ovl
} // namespace mlir

#endif // OVERLAP_LIB_DIALECT_OVL_TRANSFORMS_GATEREMARKS_H
