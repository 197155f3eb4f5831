//===- Trace.h - Naming nodes in -debug-only=ovl-schedule traces -*- C++ -*-=//
//
// The scheduling library traces its choices under the pass's debug type, so
// that `-debug-only=ovl-schedule` follows a block from the graph the pass
// builds (which names each node's op) to the order it applies.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAP_LIB_SCHEDULING_TRACE_H
#define OVERLAP_LIB_SCHEDULING_TRACE_H

#include "OverlapDialect/Scheduling/ScheduleGraph.h"

#include "llvm/Support/raw_ostream.h"

namespace mlir {
namespace ovl {
namespace sched {

/// Prints as "node 3 (start)".
struct NodeName {
  const ScheduleGraph &graph;
  unsigned node;
};

inline llvm::raw_ostream &operator<<(llvm::raw_ostream &os, NodeName name) {
  return os << "node " << name.node << " ("
            << stringifyNodeKind(name.graph.nodes[name.node].kind) << ")";
}

} // namespace sched
} // namespace ovl
} // namespace mlir

#endif // OVERLAP_LIB_SCHEDULING_TRACE_H
