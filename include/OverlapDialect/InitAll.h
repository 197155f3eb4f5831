//===- InitAll.h - Register everything overlap provides ---------*- C++ -*-===//
//
// One-call registration for embedders: the ovl dialect with the upstream
// dialects its programs and pipelines use, and every overlap pass.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAPDIALECT_INITALL_H
#define OVERLAPDIALECT_INITALL_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace overlap {

/// Adds ovl and the dialects overlap programs are written in and lowered
/// through (func, arith, tensor, scf, cf, linalg, shard, bufferization,
/// memref, llvm), with the bufferization, deallocation and linalg interface
/// models the `ovl-to-llvm` pipeline needs.
void registerAllDialects(mlir::DialectRegistry &registry);

/// Registers every overlap pass and pipeline with the global registry, so
/// that textual pipelines and `overlap-opt` flags find them.
void registerAllPasses();

} // namespace overlap

#endif // OVERLAPDIALECT_INITALL_H
