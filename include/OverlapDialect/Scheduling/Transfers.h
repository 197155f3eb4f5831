//===- Transfers.h - How a block's transfers share links --------*- C++ -*-===//
//
// Derives, from what each start of a graph sends (Node::transfer), the
// transfers LinkFlows plays: a permute is routed on its machine's topology
// as the simulator routes it, every pair in every group, each split over
// its ports; transfers of one start with as many hops and as large a share
// go as one group, and the links the block's groups cross alike as one
// class. A collective, priced alone by its plan as blocking collectives
// are, and a transfer the cost model cannot price take a fixed time and
// share no link.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAPDIALECT_SCHEDULING_TRANSFERS_H
#define OVERLAPDIALECT_SCHEDULING_TRANSFERS_H

namespace mlir {
namespace ovl {
namespace sched {
struct ScheduleGraph;

/// Sets the stream, groups and latency of every start of `graph`, and the
/// graph's link classes (numbered in the order of the links' ids).
void planTransfers(ScheduleGraph &graph);

} // namespace sched
} // namespace ovl
} // namespace mlir

#endif // OVERLAPDIALECT_SCHEDULING_TRANSFERS_H
