//===- CoverAccount.h - The compute that may hide each transfer -*- C++ -*-===//
//
// Which ops may lie within each transfer of a block, between its start and
// the first op consuming its token: those that neither precede the start
// nor follow a consumer. Keeps, for the transfers the bottom-up scheduler
// has not opened yet (no consumer placed), the compute still unplaced that
// could hide them, so that the schedulers can tell where an op's cover is
// worth most.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAPDIALECT_SCHEDULING_COVERACCOUNT_H
#define OVERLAPDIALECT_SCHEDULING_COVERACCOUNT_H

#include "OverlapDialect/Scheduling/ScheduleGraph.h"

#include "llvm/ADT/DenseMap.h"

#include <optional>

namespace mlir {
namespace ovl {
namespace sched {

class CoverAccount {
public:
  explicit CoverAccount(const ScheduleGraph &graph);

  /// What compute op `c` is worth to the transfers not opened yet: the most
  /// it would cut from one's exposed time, were that transfer hidden by all
  /// the compute it may have, this op last.
  double worthElsewhere(unsigned c) const;

  /// The unplaced compute that may hide the transfer of start `s`, besides
  /// op `c`; std::nullopt when `c` may not hide it.
  std::optional<double> availableBesides(unsigned s, unsigned c) const;

  /// Node `i` is placed: it no longer hides what it may, and if it consumes
  /// a transfer's token that transfer is opened.
  void place(unsigned i);

private:
  /// A transfer that has consumers in the block, and the ops that may lie
  /// within it.
  struct Window {
    unsigned start = 0;
    llvm::BitVector mayCover;
    double available = 0;
    bool opened = false;
  };
  const ScheduleGraph &graph;
  llvm::SmallVector<Window> windows;
  /// Window index by its start node.
  llvm::DenseMap<unsigned, unsigned> windowByStart;
  /// The windows that any one op may be worth something to: those whose
  /// cover left is short of their transfer by more than the dearest op.
  /// A window's cover only shrinks, so a window joins once; weighing each
  /// op against every window made the bottom-up scheduler quadratic in
  /// the layers of a model.
  llvm::SmallVector<unsigned> shortWindows;
  llvm::BitVector isShort;
  double dearest = 0;
  void noteShort(unsigned index);
};

} // namespace sched
} // namespace ovl
} // namespace mlir

#endif // OVERLAPDIALECT_SCHEDULING_COVERACCOUNT_H
