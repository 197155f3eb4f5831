//===- LinkFlows.h - A block's transfers in flight, sharing links -*- C++ -*-//
//
// The transfers of a block in flight, played as the simulator plays them: a
// transfer waits out its setup, then streams its data, each of its
// transfers over the most loaded link of its route at the link bandwidth
// divided by the transfers streaming over that link; rates change whenever
// a transfer begins or ends streaming. Two transfers that share links thus
// take as long together as one after the other.
//
// Either way in time: forwards (the top-down scheduler, the replay) a
// transfer opens at its start and ends at its arrival; backwards (the
// bottom-up scheduler, whose clock runs from the block's end) it opens at
// its done and ends where its start may go, streaming first and then
// waiting out the setup.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAPDIALECT_SCHEDULING_LINKFLOWS_H
#define OVERLAPDIALECT_SCHEDULING_LINKFLOWS_H

#include "OverlapDialect/Scheduling/ScheduleGraph.h"

#include "llvm/ADT/STLExtras.h"

namespace mlir {
namespace ovl {
namespace sched {

class LinkFlows {
public:
  LinkFlows(const ScheduleGraph &graph, bool backwards)
      : graph(graph), backwards(backwards), firstFlow(graph.nodes.size(), -1),
        loads(graph.numLinkClasses, 0) {}

  /// Opens the transfers of start `s` at time `at`, no earlier than the
  /// transfers played so far; backwards, opening them again restarts them.
  void open(unsigned s, double at);

  bool isOpen(unsigned s) const { return firstFlow[s] >= 0; }
  /// Whether the transfers of `s` have ended by the time played so far.
  bool hasEnded(unsigned s) const {
    return isOpen(s) && llvm::all_of(groupFlows(s), [](const Flow &flow) {
             return flow.phase == 3;
           });
  }

  /// Plays the open transfers up to `until`.
  void advanceTo(double until) {
    while (step(until)) {
    }
  }

  /// When the transfers of `s` end, playing on the open transfers; they
  /// are played up to then.
  double end(unsigned s);
  /// The same, without playing them.
  double predictEnd(unsigned s) const { return LinkFlows(*this).end(s); }

private:
  /// The transfers of one group of a start.
  struct Flow {
    const TransferGroup *group = nullptr;
    /// Work left in each phase, in seconds at full rate: unshared, shared
    /// (streaming), unshared.
    double work[3] = {0, 0, 0};
    unsigned phase = 0;
    double end = 0;
  };

  llvm::ArrayRef<Flow> groupFlows(unsigned s) const {
    return llvm::ArrayRef<Flow>(flows).slice(firstFlow[s],
                                             graph.nodes[s].groups.size());
  }
  void load(const Flow &flow, int delta);
  void enterPhase(Flow &flow);
  double slowdown(const Flow &flow) const;
  bool step(double until);
  void progress(double until);
  void retire();

  const ScheduleGraph &graph;
  bool backwards;
  double time = 0;
  /// The flows of each start's groups, consecutive from firstFlow[start],
  /// and those that have not ended, in the order they were opened.
  llvm::SmallVector<Flow> flows;
  llvm::SmallVector<unsigned> active;
  llvm::SmallVector<int> firstFlow;
  llvm::SmallVector<int> loads;
};

} // namespace sched
} // namespace ovl
} // namespace mlir

#endif // OVERLAPDIALECT_SCHEDULING_LINKFLOWS_H
