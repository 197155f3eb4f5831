//===- Forms.h - The forms the gate chooses among ------------*- C++ -*-===//
//
// What the decomposition gate decides (a collective's form, a ring loop's
// variant) and what it reads to decide (the predicted times of each form),
// without IR: the planner, the pass's remarks and the benches share them.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAPDIALECT_GATE_FORMS_H
#define OVERLAPDIALECT_GATE_FORMS_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
namespace ovl {

/// Which way a ring loop's data travels.
enum class RingLoopDirection {
  /// One way round the ring.
  Unidirectional,
  /// Whole shards both ways, half of the rounds (the paper's figures 9 and
  /// 10): each round computes two shards' einsums as one.
  Bidirectional,
  /// Half of every shard each way: the pair is split in two along a free
  /// dim and each half runs the unidirectional loop, one clockwise and one
  /// counter-clockwise, in one loop. Each direction of each link carries
  /// (N-1)/2 shards, as the blocking collective's ring does.
  Split,
};

/// How a collective+einsum pair is decomposed.
struct DecomposeOptions {
  /// Ring steps per loop iteration: 1 or 2.
  unsigned unroll = 1;
  RingLoopDirection direction = RingLoopDirection::Unidirectional;
  /// A reduce_scatter decomposed together with the all_gather feeding its
  /// einsum (decomposeGatherEinsumScatter); unroll and direction do not
  /// apply.
  bool withGather = false;

  bool operator==(const DecomposeOptions &other) const {
    return unroll == other.unroll && direction == other.direction &&
           withGather == other.withGather;
  }
};

/// "unroll 1, unidirectional", "unroll 2, split".
std::string describeLoop(const DecomposeOptions &loop);

/// The `unroll` option: ring steps per loop iteration, or the gate's
/// choice per candidate.
enum class UnrollChoice { One, Two, Auto };

/// The `bidirectional` option: one way round the ring, whole shards both
/// ways, half of each shard each way, or the gate's choice per candidate.
enum class DirectionChoice { Unidirectional, Bidirectional, Split, Auto };

/// The `gather-scatter` option: whether a reduce_scatter is decomposed
/// together with the all_gather of its einsum's operand where the pair
/// qualifies (whyNotDecomposableTogether).
enum class GatherScatterChoice {
  /// Never.
  Never,
  /// Variants the gate prices, when unroll and bidirectional are auto too
  /// and the gather's group has at most kMaxGatherScatterRounds devices.
  Auto,
  /// Its only variants.
  Always,
};

/// How `ovl-decompose-collective-einsum` decides which decomposable pairs
/// to rewrite (the paper's section 5.5).
enum class DecomposeGate {
  /// Those whose decomposition the cost model prices faster.
  Cost,
  /// All of them, whatever the estimates say.
  Always,
  /// None.
  Never,
};

/// The forms the gate chooses among for one collective.
enum class CollectiveForm {
  /// As written.
  Blocking,
  /// A start and a done, for `ovl-schedule` to hide behind independent work.
  Asynchronous,
  /// A ring loop of partial einsums (all_gather and reduce_scatter pairs).
  Decomposed,
};

/// "blocking", "asynchronous", "decomposed".
llvm::StringRef stringifyCollectiveForm(CollectiveForm form);

/// One form's predicted run, in seconds on one device.
struct FormEstimate {
  double step = 0;
  double compute = 0;
};

/// One loop variant's predicted run.
struct LoopEstimate {
  DecomposeOptions loop;
  FormEstimate estimate;
};

/// What the cost-model gate finds for one collective: its window (the op,
/// its einsums and the collectives they also read or feed, and the ops
/// around them in the block until the compute on each side covers the
/// collective's blocking time twice over, so that an asynchronous form
/// finds the independent work it could hide behind) built with the
/// collective in each form, every other collective of the window in the
/// form the gate has left it so far, then what `ovl-overlap-pipeline` runs next
/// (asynchronous permutes, canonicalize, CSE, `ovl-schedule`'s default
/// scheduler), each played by the event simulator on every device of the
/// machine.
struct CollectiveEstimate {
  FormEstimate blocking;
  /// Priced when the gate may make collectives asynchronous.
  std::optional<FormEstimate> asynchronous;
  /// Priced for decomposable all_gather and reduce_scatter pairs: the
  /// fastest of `loops`, and its variant.
  std::optional<FormEstimate> decomposed;
  DecomposeOptions loop;
  /// Every loop variant priced, in the order asked for.
  std::vector<LoopEstimate> loops;
  /// Devices in the collective's group.
  int64_t groupSize = 0;

  /// The faster of the forms that keep the collective (blocking, or
  /// asynchronous when priced). A tie makes it asynchronous: its start and
  /// done can still be scheduled together, and work outside the window
  /// may hide it.
  CollectiveForm bestKept() const {
    return asynchronous && asynchronous->step <= blocking.step
               ? CollectiveForm::Asynchronous
               : CollectiveForm::Blocking;
  }
  double kept() const {
    return bestKept() == CollectiveForm::Asynchronous ? asynchronous->step
                                                      : blocking.step;
  }
  /// What decomposing saves over the best kept form (0 when not priced).
  double gain() const { return decomposed ? kept() - decomposed->step : 0; }
  /// Whether decomposing saves more than rounding: a gain below a
  /// millionth of the kept time is a tie, which keeps the collective (the
  /// loop costs buffers and code).
  bool decompositionPays() const { return gain() > 1e-6 * kept(); }
};

/// `seconds` with three significant digits in s, ms, us or ns: "1.20 ms",
/// "450 us", "-3.07 us".
std::string formatTime(double seconds);

/// "predicted 1.20 ms blocking (compute 800 us), 1.10 ms asynchronous
/// (compute 800 us), 1.05 ms decomposed (compute 810 us), gain 50 us": the
/// forms priced, and what decomposing saves over the best of the others.
std::string describeEstimate(const CollectiveEstimate &estimate);

} // namespace ovl
} // namespace mlir

#endif // OVERLAPDIALECT_GATE_FORMS_H
