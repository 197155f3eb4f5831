//===- AnalyticalCostModel.cpp - Closed-form time estimates ---------------===//
//
// The roofline and ring formulas documented on AnalyticalCostModel. They are
// the reference the simulator is checked against, so they stay literal
// transcriptions of the formulas rather than anything cleverer.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/CostModel/CostModel.h"

#include <algorithm>
#include <cassert>

using namespace mlir::ovl;

// Anchors the vtable in this file.
CostModel::~CostModel() = default;

double AnalyticalCostModel::einsumTime(double flops, double bytes,
                                       ElementKind kind) const {
  assert(flops >= 0 && bytes >= 0 && "negative work");
  return std::max(flops / hw.peak(kind), bytes / hw.hbmBandwidth);
}

double AnalyticalCostModel::ringTime(double shardBytes, RingDim dim,
                                     RingDirection direction) const {
  assert(dim.size >= 1 && shardBytes >= 0 && "invalid ring");
  double steps = static_cast<double>(dim.size - 1);
  double alpha = hw.hopLatency;
  double stepTime;
  if (hw.interconnect == InterconnectKind::Switch)
    stepTime = alpha + shardBytes / hw.egressBandwidth();
  else if (!dim.wrapAround)
    stepTime = steps * alpha + shardBytes / hw.linkBandwidth;
  else if (direction == RingDirection::Bidirectional)
    stepTime = alpha + shardBytes / (2 * hw.linkBandwidth);
  else
    stepTime = alpha + shardBytes / hw.linkBandwidth;
  return steps * stepTime;
}

double AnalyticalCostModel::collectiveTime(CollectiveKind kind, double bytes,
                                           llvm::ArrayRef<RingDim> dims,
                                           RingDirection direction) const {
  assert(bytes >= 0 && "negative bytes");
  int64_t groupSize = 1;
  for (RingDim dim : dims)
    groupSize *= dim.size;
  if (groupSize == 1)
    return 0;

  // AllGather of shard `shard`; ReduceScatter costs the same (see the class
  // comment), so both kinds and the two halves of AllReduce use it.
  auto allGather = [&](double shard) {
    if (hw.interconnect == InterconnectKind::Switch)
      return ringTime(shard, RingDim{groupSize, true}, direction);
    double time = 0;
    for (RingDim dim : dims) {
      time += ringTime(shard, dim, direction);
      shard *= static_cast<double>(dim.size);
    }
    return time;
  };

  double transfer = 0;
  switch (kind) {
  case CollectiveKind::AllGather:
  case CollectiveKind::ReduceScatter:
    transfer = allGather(bytes);
    break;
  case CollectiveKind::AllReduce:
    transfer = 2 * allGather(bytes / static_cast<double>(groupSize));
    break;
  }
  return hw.collectiveLaunchOverhead + transfer;
}

double AnalyticalCostModel::permuteTime(double bytes, int64_t hops) const {
  assert(bytes >= 0 && hops >= 0 && "invalid permute");
  if (hops == 0)
    return 0;
  if (hw.interconnect == InterconnectKind::Switch)
    return hw.collectiveLaunchOverhead + hw.hopLatency +
           bytes / hw.egressBandwidth();
  return hw.collectiveLaunchOverhead +
         static_cast<double>(hops) * hw.hopLatency + bytes / hw.linkBandwidth;
}
