//===- BlockSimulation.h - A block played by the event simulator -*- C++ -*-=//
//
// A block played by the event simulator on every device of its machine, in
// a given order. The replay (Replay.h) keeps all devices in step, so that
// each transfer waits for its slowest part in any group; on placements
// where the groups' edges differ (a ring on a line, folded over torus
// dimensions, a scrambled assignment) each device really waits for its own
// neighbours only, and the orders the two prefer can differ. Only blocks
// whose transfers all start and end in the block, on one grid, can be
// played on their own; ops are priced as in the graph (a loop as its
// scheduled body times its trip count).
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAPDIALECT_SCHEDULING_BLOCKSIMULATION_H
#define OVERLAPDIALECT_SCHEDULING_BLOCKSIMULATION_H

#include "OverlapDialect/CostModel/Program.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace mlir {
namespace ovl {
struct MachineModel;

namespace sched {
struct ScheduleGraph;

class BlockSimulation {
public:
  /// The simulation of `graph` with at most `maxInFlight` transfers in
  /// flight; std::nullopt when the block cannot be played on its own.
  static std::optional<BlockSimulation> build(const ScheduleGraph &graph,
                                              unsigned maxInFlight);

  /// Devices times steps, an asynchronous collective counting as the
  /// rounds of its ring (one less than its group): what one play costs.
  int64_t size() const;

  /// The simulated step time of the block in `order`; std::nullopt if the
  /// simulator refuses it.
  std::optional<double> stepTime(llvm::ArrayRef<unsigned> order) const;

  /// A lower bound on stepTime(order), computed without playing it: each
  /// device runs the block's compute one step after the other, and no
  /// transfer ends on any device before the earliest time a device can
  /// start it plus the time it takes there with the machine to itself.
  /// Contention and DMA slots only add to that.
  double lowerBound(llvm::ArrayRef<unsigned> order) const;

private:
  /// Fills `alone`, on the first lowerBound: only improve asks for it.
  void playAlone() const;

  const MachineModel *machine = nullptr;
  /// One step per node, in node order; a done's `start` is its start's node.
  SimProgram program;
  unsigned maxInFlight = 0;
  /// By done node: the time from its start to it on the device that ends
  /// it first, its transfer played alone (0 for other nodes).
  mutable llvm::SmallVector<double> alone;
};

} // namespace sched
} // namespace ovl
} // namespace mlir

#endif // OVERLAPDIALECT_SCHEDULING_BLOCKSIMULATION_H
