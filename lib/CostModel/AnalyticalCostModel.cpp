//===- AnalyticalCostModel.cpp - Closed-form time estimates ---------------===//
//
// The roofline and transfer formulas documented on AnalyticalCostModel,
// literal transcriptions of them.
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
