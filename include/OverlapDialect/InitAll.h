//===- InitAll.h - Register everything overlap provides ---------*- C++ -*-===//
//
// One-call registration for embedders and overlap's tools: the ovl dialect
// with every upstream dialect, and every overlap pass.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAPDIALECT_INITALL_H
#define OVERLAPDIALECT_INITALL_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace overlap {

/// Adds ovl and every upstream dialect and extension (what `overlap-opt`,
/// `overlap-run`, `overlap-sim` and the C API parse), with the
/// bufferization, deallocation, linalg and transform models the
/// `ovl-to-llvm` pipeline needs.
void registerAllDialects(mlir::DialectRegistry &registry);

/// Registers every overlap pass and pipeline with the global registry, so
/// that textual pipelines and `overlap-opt` flags find them.
void registerAllPasses();

} // namespace overlap

#endif // OVERLAPDIALECT_INITALL_H
