//===- CollectiveKind.h - What a collective does ----------------*- C++ -*-===//
//
// The kinds of blocking collectives the cost model prices, in a header of
// its own so that the IR's collective interface can name them without the
// cost model.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAPDIALECT_COSTMODEL_COLLECTIVEKIND_H
#define OVERLAPDIALECT_COSTMODEL_COLLECTIVEKIND_H

namespace mlir {
namespace ovl {

enum class CollectiveKind { AllGather, ReduceScatter, AllReduce };

/// Whether rings send one way round only, or may use both directions of
/// their links at once.
enum class RingDirection { Unidirectional, Bidirectional };

} // namespace ovl
} // namespace mlir

#endif // OVERLAPDIALECT_COSTMODEL_COLLECTIVEKIND_H
