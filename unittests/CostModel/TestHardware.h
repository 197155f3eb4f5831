//===- TestHardware.h - Made-up machines for the unit tests -----*- C++ -*-===//
//
// Hardware with round figures, so that every expected time the cost-model
// and simulator tests write out by hand is an exact binary fraction: hop
// latency 2 s, links of 8 B/s, launch 0.5 s.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAP_UNITTESTS_COSTMODEL_TESTHARDWARE_H
#define OVERLAP_UNITTESTS_COSTMODEL_TESTHARDWARE_H

#include "OverlapDialect/CostModel/Hardware.h"

namespace mlir {
namespace ovl {
namespace test {

constexpr double kAlpha = 2, kB = 8, kLaunch = 0.5;

/// A torus of `rank` dimensions wrapping on multiples of `wrapUnit` (0:
/// always), with `dmaSlots` transfers in flight.
inline HardwareDescription testTorus(unsigned rank, unsigned wrapUnit,
                                     unsigned dmaSlots = 4) {
  HardwareDescription hw;
  hw.name = "test-torus";
  hw.peakFlops = {100, 400, 200, 800};
  hw.hbmBandwidth = 50;
  hw.linkBandwidth = kB;
  hw.linksPerChip = 2 * rank;
  hw.hopLatency = kAlpha;
  hw.dmaSlots = dmaSlots;
  hw.collectiveLaunchOverhead = kLaunch;
  hw.interconnect = InterconnectKind::Torus;
  hw.torusRank = rank;
  hw.wrapAroundUnit = wrapUnit;
  return hw;
}

/// A switch whose egress is 4 links x 8 B/s = 32 B/s.
inline HardwareDescription testSwitch() {
  HardwareDescription hw = testTorus(1, 0);
  hw.name = "test-switch";
  hw.linksPerChip = 4;
  hw.interconnect = InterconnectKind::Switch;
  hw.torusRank = 0;
  hw.wrapAroundUnit = 0;
  return hw;
}

} // namespace test
} // namespace ovl
} // namespace mlir

#endif // OVERLAP_UNITTESTS_COSTMODEL_TESTHARDWARE_H
