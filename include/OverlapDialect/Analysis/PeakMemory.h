//===- PeakMemory.h - Peak live bytes of one device's program ---*- C++ -*-===//
//
// How much memory one device needs at the worst point of its program, so
// that a schedule that prefetches weights (asynchronous all_gathers started
// a layer early) can be checked against the chip's HBM. A model of what
// One-Shot Bufferize makes of the program, in program order:
//  - every tensor an op creates is a buffer, live from its definition to
//    the last use of it or of anything that aliases it: a view
//    (extract_slice, reshapes, casts), a result written in place into a
//    destination or an einsum's accumulator, a loop's iteration argument
//    and result, a pending tensor and its done's result, an optimization
//    barrier's operand and result;
//  - a splat constant is no buffer (a broadcast its users fuse, or
//    read-only data);
//  - the entry function's arguments are live throughout (the caller holds
//    them), its results until the end;
//  - an op with regions needs what is live around it plus the peak of its
//    body; a loop's carried buffers are live across its iterations, and a
//    transfer in flight keeps its send and receive buffers live until its
//    done (its token ties them to the done).
// Dynamic shapes cannot be priced: the estimate then fails.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAPDIALECT_ANALYSIS_PEAKMEMORY_H
#define OVERLAPDIALECT_ANALYSIS_PEAKMEMORY_H

#include "mlir/Support/LLVM.h"

#include <cstdint>

namespace mlir {
namespace func {
class FuncOp;
} // namespace func

namespace ovl {

struct PeakMemory {
  /// The most bytes live at once.
  int64_t peakBytes = 0;
  /// Of which the function's arguments (held by the caller throughout).
  int64_t argumentBytes = 0;
};

/// The peak live bytes of `func` on one device; a located error (and
/// failure) on a tensor of dynamic shape.
FailureOr<PeakMemory> estimatePeakMemory(func::FuncOp func);

} // namespace ovl
} // namespace mlir

#endif // OVERLAPDIALECT_ANALYSIS_PEAKMEMORY_H
