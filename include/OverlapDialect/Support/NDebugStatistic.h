//===- NDebugStatistic.h - llvm::Statistic as libLLVM sees it ---*- C++ -*-===//
//
// Force-included (-include) into every C++ file of the project when it
// keeps its own asserts (OVERLAP_ENABLE_ASSERTIONS adds -UNDEBUG) while
// linking an LLVM/MLIR built with NDEBUG, as Debian's is. llvm::Statistic
// is a TrackingStatistic without NDEBUG and a NoopStatistic with it, and
// mlir::Pass::Statistic's constructor lives in libMLIR: the two views of
// one object must agree, so Statistic.h is read here with NDEBUG, once,
// before anything else. Pass statistics then count nothing, as in the
// library (-mlir-pass-statistics shows them, without values). assert.h is
// read again afterwards so that `assert` checks the project's invariants.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAPDIALECT_SUPPORT_NDEBUGSTATISTIC_H
#define OVERLAPDIALECT_SUPPORT_NDEBUGSTATISTIC_H

#ifndef NDEBUG
#define NDEBUG 1
#include "llvm/ADT/Statistic.h"
#undef NDEBUG
#include <assert.h>
#endif

#endif // OVERLAPDIALECT_SUPPORT_NDEBUGSTATISTIC_H
