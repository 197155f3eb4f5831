//===- CollectiveConsistency.h - Do all devices communicate alike? -*- C++
//-*-===//
//
// An SPMD program deadlocks, or exchanges the wrong data, when its devices
// do not issue the same collectives in the same order, and it reads garbage
// when it touches a buffer a transfer is still writing. The checks here find
// both statically, on the program every device runs:
//  - communication (ovl collectives, permute starts and dones, calls of
//    functions that communicate) under control flow whose condition or trip
//    count differs between devices, because it depends on `ovl.partition_id`
//    or on data (a scalar read from a tensor or a buffer), unless every
//    branch issues the same sequence;
//  - every asynchronous permute's token awaited exactly once on every path:
//    one use, in the block that defines it (the done, or the terminator or
//    call that carries it on);
//  - no access to an in-flight buffer: a tensor permute's pending result
//    read by anything but its done, a buffer permute's receive buffer read
//    or written, or its send buffer written, before the done.
//
// Scalar function arguments are taken to be the same on every device (the
// runtime passes only tensors to an entry function); a call that passes a
// value that differs is checked in the callee as such.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAPDIALECT_ANALYSIS_COLLECTIVECONSISTENCY_H
#define OVERLAPDIALECT_ANALYSIS_COLLECTIVECONSISTENCY_H

#include "mlir/Support/LLVM.h"

namespace mlir {
class ModuleOp;

namespace ovl {

/// Runs the checks on every function of `module`, emitting a located error
/// (with notes) for each violation. Fails when there is one.
LogicalResult verifyCollectiveConsistency(ModuleOp module);

} // namespace ovl
} // namespace mlir

#endif // OVERLAPDIALECT_ANALYSIS_COLLECTIVECONSISTENCY_H
