//===- UpstreamCrashes.h - Inputs that crash MLIR 22 itself -----*- C++ -*-===//
//
// The fuzzer skips inputs that would crash Debian's MLIR 22 (parsers, a
// verifier) before any of overlap's code runs (docs/UpstreamIssues.md):
// they say nothing about overlap, and every run would stop on them.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAP_FUZZ_UPSTREAMCRASHES_H
#define OVERLAP_FUZZ_UPSTREAMCRASHES_H

#include "llvm/ADT/StringRef.h"

namespace overlap::fuzz {

/// Whether `text` holds one of the known upstream parser crashes: a
/// `linalg.transpose` whose permutation is not a closed list of integers,
/// a `tensor.from_elements` of 2^32 or more elements. (The third, a
/// `shard.all_slice` on a grid with an empty axis, is a verifier's: the
/// harness reads programs as the tools do, and refuses such grids first.)
bool hitsUpstreamCrash(llvm::StringRef text);

} // namespace overlap::fuzz

#endif // OVERLAP_FUZZ_UPSTREAMCRASHES_H
