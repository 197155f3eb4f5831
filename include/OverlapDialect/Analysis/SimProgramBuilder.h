//===- SimProgramBuilder.h - From a function to a SimProgram ----*- C++ -*-===//
//
// Flattens an SPMD function into the steps the simulator plays on every
// device: loops with constant bounds unrolled, each compute op priced by the
// cost model, each ovl collective turned into a blocking collective or a
// permute (start/done pairs matched through tokens, also across loop
// iterations). Control flow that depends on data has no single step list
// and is refused with a located error.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAPDIALECT_ANALYSIS_SIMPROGRAMBUILDER_H
#define OVERLAPDIALECT_ANALYSIS_SIMPROGRAMBUILDER_H

#include "OverlapDialect/Analysis/MachineModel.h"
#include "OverlapDialect/CostModel/Program.h"

#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Support/LLVM.h"

namespace mlir {
namespace ovl {

/// The shape of the grid the communication of `func` runs on: all its
/// collectives must use grids of one static shape. A function without
/// communication runs on a single device, {1}. Emits an error on the first
/// op that disagrees.
FailureOr<SmallVector<int64_t, 4>>
getProgramGridShape(FunctionOpInterface func);

struct SimProgramOptions {
  /// The ring algorithm of blocking collectives.
  RingDirection collectiveDirection = RingDirection::Bidirectional;
  /// Refuse programs that unroll into more steps than this, and loop nests
  /// that run more iterations in all (their bodies may add no step).
  uint64_t maxSteps = uint64_t(1) << 21;
};

FailureOr<SimProgram> buildSimProgram(FunctionOpInterface func,
                                      const MachineModel &machine,
                                      const SimProgramOptions &options = {});

} // namespace ovl
} // namespace mlir

#endif // OVERLAPDIALECT_ANALYSIS_SIMPROGRAMBUILDER_H
