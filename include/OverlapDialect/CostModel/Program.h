//===- Program.h - The program every device plays in the simulator -*- C++
//-*-===//
//
// An SPMD program as the simulator sees it: one flat list of steps that every
// device of the grid runs in order (loops already unrolled, costs already
// estimated). Steps name their communication by grid axes and group indices,
// so one list serves all devices; the simulator resolves peers and routes per
// device through a DeviceAssignment. Built from IR by buildSimProgram
// (Simulator/FromIR.h) or by hand in tests. No MLIR IR here.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAPDIALECT_COSTMODEL_PROGRAM_H
#define OVERLAPDIALECT_COSTMODEL_PROGRAM_H

#include "OverlapDialect/CostModel/CostModel.h"
#include "OverlapDialect/CostModel/Hardware.h"

#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace mlir {
namespace ovl {

struct SimStep {
  enum class Kind : uint8_t {
    /// Busy on the device's compute stream for `seconds`.
    Compute,
    /// A blocking collective over the group along `axes`: the device runs
    /// the ring algorithm (`collective`, `direction`, `bytes` as in
    /// CostModel::collectiveTime) and continues when it has finished.
    Collective,
    /// A blocking permute: send `bytes` to the target paired with this
    /// device's group index, wait for the own send and the receive.
    Permute,
    /// Starts the same transfer and continues at once (after waiting for a
    /// free DMA slot when the device has `maxInFlight` transfers going).
    PermuteStart,
    /// Waits for the transfer started by step `start` to be received (and
    /// the own send of it to be finished).
    PermuteDone,
    /// Starts the rounds of the same collective as Collective and continues
    /// at once; they go on over the links meanwhile. Holds a DMA slot (after
    /// waiting for a free one, as PermuteStart) until the device's part of
    /// the collective has finished.
    CollectiveStart,
    /// Waits until the device's part of the collective started by step
    /// `start` has finished.
    CollectiveDone,
  };

  Kind kind = Kind::Compute;
  /// Index into SimProgram::labels: which op this step comes from.
  uint32_t label = 0;

  /// Compute: its duration, FLOPs and element kind (for utilization).
  double seconds = 0;
  double flops = 0;
  ElementKind elementKind = ElementKind::F32;

  /// Collective, CollectiveStart, Permute, PermuteStart: the group and the
  /// payload.
  llvm::SmallVector<int16_t, 2> axes;
  double bytes = 0;
  CollectiveKind collective = CollectiveKind::AllGather;
  RingDirection direction = RingDirection::Bidirectional;
  /// Permute, PermuteStart: index into SimProgram::pairLists, pairs of
  /// group indices (source, target).
  uint32_t pairs = 0;

  /// PermuteDone, CollectiveDone: index in SimProgram::steps of its
  /// PermuteStart or CollectiveStart.
  uint32_t start = 0;
};

struct SimProgram {
  /// The shape of the grid the program's groups refer to.
  llvm::SmallVector<int64_t, 4> gridShape;
  std::vector<SimStep> steps;
  /// One per op of the source program: "ovl.einsum @ file.mlir:12:5".
  std::vector<std::string> labels;
  std::vector<std::vector<std::pair<int64_t, int64_t>>> pairLists;

  uint32_t addLabel(std::string label) {
    labels.push_back(std::move(label));
    return labels.size() - 1;
  }
  uint32_t addPairs(std::vector<std::pair<int64_t, int64_t>> pairs) {
    pairLists.push_back(std::move(pairs));
    return pairLists.size() - 1;
  }
};

} // namespace ovl
} // namespace mlir

#endif // OVERLAPDIALECT_COSTMODEL_PROGRAM_H
