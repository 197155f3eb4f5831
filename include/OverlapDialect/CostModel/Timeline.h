//===- Timeline.h - One device's time through a step program ----*- C++ -*-===//
//
// The cost model's estimate of a SimProgram: the program played on one
// device, with every other device doing the same at the same time (SPMD in
// lockstep), so that each transfer a step starts is all groups' transfers
// of that step at once, routed on the machine. Compute runs on one stream;
// blocking collectives take their plan's time; asynchronous transfers wait
// for a DMA slot, stream after their route's latency and share the links
// they cross with the other transfers in flight (each link's bandwidth
// split among the transfers on it). The same per-op estimates as the event
// simulator, without its per-device detail: what the decomposition gate
// and the scheduler's guard price candidates with. No MLIR IR here.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAPDIALECT_COSTMODEL_TIMELINE_H
#define OVERLAPDIALECT_COSTMODEL_TIMELINE_H

#include "OverlapDialect/CostModel/Machine.h"
#include "OverlapDialect/CostModel/Program.h"

namespace mlir {
namespace ovl {

struct TimelineEstimate {
  /// From the first step's start to the last one's end, transfers started
  /// and never waited for included.
  double stepTime = 0;
  /// Time on the compute stream.
  double computeTime = 0;

  /// Time the device waited for communication.
  double exposedTime() const { return stepTime - computeTime; }
};

/// Plays `program` on one device of `machine` as described above, with at
/// most `maxInFlight` asynchronous transfers at once (0: the hardware's
/// dmaSlots). The program must be well formed (each done after its start);
/// steps that refer to missing pair lists count as no transfer.
TimelineEstimate estimateTimeline(const SimProgram &program,
                                  const MachineModel &machine,
                                  unsigned maxInFlight = 0);

} // namespace ovl
} // namespace mlir

#endif // OVERLAPDIALECT_COSTMODEL_TIMELINE_H
