//===- Timeline.cpp - One device's time through a step program ------------===//
//
// A small fluid simulation of one device's transfers. Each started transfer
// stands for the same transfer of every group (the devices run in
// lockstep), so its parts (one per device, port and link crossed) load
// links all over the machine. A link shares its bandwidth equally among the
// parts streaming over it, as the event simulator does; a part that is
// through frees its share at once, and a transfer arrives when its last
// part is through. Rates change only when a transfer starts streaming or a
// part is through; the device's clock moves with compute steps, blocking
// collectives and waits.
//
// Transfers of the same shape (axes, pairs, bytes) share one routing, so a
// ring loop's repeated permutes are routed once.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/CostModel/Timeline.h"

#include "llvm/ADT/DenseMap.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

using namespace mlir::ovl;

namespace {

/// Where one shape of transfer streams: every part on every link it
/// crosses, with the part's bytes.
struct Footprint {
  struct LinkUse {
    int64_t link;
    double bytes;
  };
  std::vector<LinkUse> links;
  /// From the start to streaming: launch plus the longest route's latency.
  double latency = 0;
  /// Nothing moves (every pair stays on its device).
  bool empty = true;
};

struct Transfer {
  const Footprint *footprint;
  /// When it starts streaming.
  double streamAt;
  bool streaming = false;
  bool arrived = false;
  double arrival = 0;
  /// Per entry of the footprint, the bytes still to go (-1 once through);
  /// parts through.
  std::vector<double> remaining;
  size_t through = 0;
};

class Player {
public:
  Player(const SimProgram &program, const MachineModel &machine,
         unsigned maxInFlight)
      : program(program), machine(machine),
        maxInFlight(maxInFlight ? maxInFlight : machine.hardware.dmaSlots),
        bandwidth(machine.topology.getKind() == InterconnectKind::Switch
                      ? machine.hardware.egressBandwidth()
                      : machine.hardware.linkBandwidth),
        linkParts(machine.topology.getNumLinks(), 0) {
    if (this->maxInFlight == 0)
      this->maxInFlight = 1;
  }

  TimelineEstimate run();

private:
  const Footprint &footprintOf(const SimStep &step);
  /// Starts the transfer of `step` now; returns its index.
  size_t start(const SimStep &step);
  /// Moves the transfers forward to `time`, handling the events before it.
  void advanceTo(double time);
  /// Waits (moves the clock) until transfer `index` has arrived.
  void waitFor(size_t index);
  /// Waits until fewer than maxInFlight transfers are in flight.
  void waitForSlot();
  /// The time of the next transfer event, infinity if none.
  double nextEvent() const;
  /// Moves every streaming part forward from `updated` to `time`.
  void settle(double time);
  double rateOn(int64_t link) const { return bandwidth / linkParts[link]; }

  const SimProgram &program;
  const MachineModel &machine;
  unsigned maxInFlight;
  double bandwidth;
  std::map<std::tuple<llvm::SmallVector<int16_t, 2>, uint32_t, double>,
           Footprint>
      footprints;
  std::vector<Transfer> transfers;
  /// Transfers not yet arrived (indices into `transfers`).
  std::vector<size_t> inFlight;
  /// Parts streaming over each link.
  std::vector<int32_t> linkParts;
  /// When the streaming parts were last moved forward.
  double updated = 0;
  double now = 0;
  double computeTime = 0;
};

} // namespace

const Footprint &Player::footprintOf(const SimStep &step) {
  auto key = std::make_tuple(step.axes, step.pairs, step.bytes);
  auto [it, inserted] = footprints.try_emplace(key);
  Footprint &footprint = it->second;
  if (!inserted)
    return footprint;
  GroupTransfers group;
  group.axes = step.axes;
  group.bytes = step.bytes;
  if (step.pairs < program.pairLists.size())
    group.pairs = program.pairLists[step.pairs];
  int64_t maxHops = 0;
  machine.forEachLinkPart(group, [&](int64_t link, double bytes, int64_t hops) {
    maxHops = std::max(maxHops, hops);
    footprint.links.push_back({link, bytes});
  });
  footprint.empty = maxHops == 0;
  const HardwareDescription &hw = machine.hardware;
  double hopLatency = static_cast<double>(
      machine.topology.getKind() == InterconnectKind::Switch ? 1 : maxHops);
  footprint.latency = hw.collectiveLaunchOverhead + hopLatency * hw.hopLatency;
  return footprint;
}

size_t Player::start(const SimStep &step) {
  const Footprint &footprint = footprintOf(step);
  Transfer transfer;
  transfer.footprint = &footprint;
  transfer.streamAt = now + footprint.latency;
  if (footprint.empty) {
    transfer.arrived = true;
    transfer.arrival = now;
  }
  transfers.push_back(std::move(transfer));
  if (!footprint.empty)
    inFlight.push_back(transfers.size() - 1);
  return transfers.size() - 1;
}

double Player::nextEvent() const {
  double next = std::numeric_limits<double>::infinity();
  for (size_t i : inFlight) {
    const Transfer &t = transfers[i];
    if (!t.streaming) {
      next = std::min(next, t.streamAt);
      continue;
    }
    for (auto [use, left] : llvm::zip(t.footprint->links, t.remaining))
      if (left > 0)
        next = std::min(next, updated + left / rateOn(use.link));
  }
  return next;
}

void Player::settle(double time) {
  double elapsed = time - updated;
  updated = time;
  if (elapsed <= 0)
    return;
  for (size_t i : inFlight) {
    Transfer &t = transfers[i];
    if (!t.streaming)
      continue;
    for (auto [use, left] : llvm::zip(t.footprint->links, t.remaining))
      if (left > 0)
        left = std::max(0.0, left - rateOn(use.link) * elapsed);
  }
}

void Player::advanceTo(double time) {
  while (true) {
    double event = nextEvent();
    if (event > time)
      break;
    settle(event);
    // Everything due at `event`: streams that begin, parts that are
    // through (within rounding), transfers whose last part is.
    std::vector<size_t> still;
    for (size_t i : inFlight) {
      Transfer &t = transfers[i];
      const std::vector<Footprint::LinkUse> &uses = t.footprint->links;
      if (!t.streaming && t.streamAt <= event) {
        t.streaming = true;
        t.remaining.resize(uses.size());
        for (auto [use, left] : llvm::zip(uses, t.remaining)) {
          left = use.bytes;
          ++linkParts[use.link];
        }
      } else if (t.streaming) {
        for (auto [use, left] : llvm::zip(uses, t.remaining))
          if (left >= 0 && left <= 1e-9 * use.bytes) {
            left = -1;
            --linkParts[use.link];
            ++t.through;
          }
      }
      if (t.streaming && t.through == uses.size()) {
        t.arrived = true;
        t.arrival = event;
        continue;
      }
      still.push_back(i);
    }
    inFlight = std::move(still);
  }
  settle(time);
}

void Player::waitFor(size_t index) {
  while (!transfers[index].arrived) {
    double event = nextEvent();
    assert(event < std::numeric_limits<double>::infinity() &&
           "a transfer in flight never arrives");
    now = std::max(now, event);
    advanceTo(now);
  }
  now = std::max(now, transfers[index].arrival);
}

void Player::waitForSlot() {
  while (inFlight.size() >= maxInFlight) {
    now = std::max(now, nextEvent());
    advanceTo(now);
  }
}

TimelineEstimate Player::run() {
  std::vector<size_t> started(program.steps.size(), 0);
  for (size_t i = 0; i < program.steps.size(); ++i) {
    const SimStep &step = program.steps[i];
    switch (step.kind) {
    case SimStep::Kind::Compute:
      computeTime += step.seconds;
      now += step.seconds;
      advanceTo(now);
      break;
    case SimStep::Kind::Collective:
      now += machine.collectiveTime(step.collective, step.bytes, step.axes,
                                    step.direction);
      advanceTo(now);
      break;
    case SimStep::Kind::Permute:
      waitFor(start(step));
      break;
    case SimStep::Kind::PermuteStart:
      waitForSlot();
      started[i] = start(step);
      break;
    case SimStep::Kind::PermuteDone:
      assert(step.start < i && "a done before its start");
      waitFor(started[step.start]);
      break;
    }
  }
  // Transfers never waited for still take their time.
  for (size_t i = 0; i < transfers.size(); ++i)
    waitFor(i);
  return TimelineEstimate{now, computeTime};
}

TimelineEstimate mlir::ovl::estimateTimeline(const SimProgram &program,
                                             const MachineModel &machine,
                                             unsigned maxInFlight) {
  return Player(program, machine, maxInFlight).run();
}
