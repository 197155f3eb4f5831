//===- Machine.cpp - A grid placed on a modelled pod ----------------------===//
//
// Transfer loads routed on the topology, and the planner of blocking
// collectives: for each ring of a collective it tries the algorithms a
// collective library has (one way round; both ways with half blocks; both
// ways with whole blocks, half the rounds; a line both ways for a group
// whose closing edge is long) and keeps the fastest by the rounds' link
// times, so that a latency-bound collective takes the whole-block rounds
// and a group without wrap-around the line. A multi-axis collective on a
// torus is also tried split into one part per axis, each part running the
// axes in a rotated order so that every axis' links carry data at once,
// and the faster of split and sequential is kept.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/CostModel/Machine.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cassert>
#include <optional>
#include <set>

using namespace mlir::ovl;

llvm::StringRef mlir::ovl::stringifyRingAlgorithm(RingAlgorithm algorithm) {
  switch (algorithm) {
  case RingAlgorithm::Unidirectional:
    return "unidirectional";
  case RingAlgorithm::BidirectionalHalves:
    return "bidirectional-halves";
  case RingAlgorithm::BidirectionalWhole:
    return "bidirectional-whole";
  case RingAlgorithm::Line:
    return "line";
  }
  llvm_unreachable("unknown ring algorithm");
}

static std::string describeAxes(llvm::ArrayRef<int16_t> axes) {
  if (axes.size() == 1)
    return "axis " + std::to_string(axes.front());
  return "axes [" +
         llvm::join(
             llvm::map_range(axes, [](int16_t a) { return std::to_string(a); }),
             ", ") +
         "]";
}

std::string CollectivePlan::describe() const {
  if (phases.empty())
    return "nothing to move";
  std::string text;
  if (parts > 1)
    text = std::to_string(parts) + " parts: ";
  for (auto [i, phase] : llvm::enumerate(phases)) {
    if (i)
      text += ", ";
    if (parts > 1)
      text += "part " + std::to_string(phase.part) + " ";
    text += llvm::formatv("{0} on {1} (N={2})",
                          stringifyRingAlgorithm(phase.algorithm),
                          describeAxes(phase.axes), phase.size)
                .str();
  }
  return text;
}

//===----------------------------------------------------------------------===//
// Transfers
//===----------------------------------------------------------------------===//

void MachineModel::forEachLinkPart(
    const GroupTransfers &group,
    llvm::function_ref<void(int64_t, double, int64_t)> visit) const {
  int64_t size = assignment.groupSize(group.axes);
  std::vector<int64_t> targetOf(size, -1);
  for (auto [source, target] : group.pairs) {
    assert(source >= 0 && source < size && target >= 0 && target < size &&
           "pair outside the group");
    targetOf[source] = target;
  }
  llvm::SmallVector<llvm::SmallVector<int64_t, 8>, 3> routes;
  for (int64_t logical = 0, e = assignment.getNumLogicalDevices(); logical < e;
       ++logical) {
    int64_t target = targetOf[assignment.groupIndex(logical, group.axes)];
    if (target < 0)
      continue;
    int64_t src = assignment.physical(logical);
    int64_t dst = assignment.physical(
        assignment.groupMember(logical, group.axes, target));
    if (src == dst)
      continue;
    int64_t hops = topology.hops(src, dst);
    topology.routes(src, dst, routes, group.negative);
    double part = group.bytes / static_cast<double>(routes.size());
    for (const llvm::SmallVector<int64_t, 8> &route : routes)
      for (int64_t link : route)
        visit(link, part, hops);
  }
}

TransferLoad
MachineModel::getLoad(llvm::ArrayRef<GroupTransfers> transfers) const {
  TransferLoad load;
  bool isSwitch = topology.getKind() == InterconnectKind::Switch;
  double bandwidth =
      isSwitch ? hardware.egressBandwidth() : hardware.linkBandwidth;
  struct Use {
    int64_t link;
    double start;
    double bytes;
  };
  std::vector<Use> uses;
  for (const GroupTransfers &group : transfers)
    forEachLinkPart(group, [&](int64_t link, double bytes, int64_t hops) {
      load.maxHops = std::max(load.maxHops, hops);
      double start = static_cast<double>(hops) * hardware.hopLatency;
      uses.push_back(Use{link, start, bytes});
      load.seconds = std::max(load.seconds, start + bytes / bandwidth);
    });
  // Per link, the end of its busy period: for every start time s, the link
  // cannot be done before s plus the bytes of the transfers that start at
  // s or later (exact for one link shared fairly, whatever the order).
  llvm::sort(uses, [](const Use &a, const Use &b) {
    return a.link != b.link ? a.link < b.link : a.start > b.start;
  });
  for (size_t i = 0; i < uses.size();) {
    double bytes = 0;
    size_t j = i;
    for (; j < uses.size() && uses[j].link == uses[i].link; ++j) {
      bytes += uses[j].bytes;
      load.seconds = std::max(load.seconds, uses[j].start + bytes / bandwidth);
    }
    load.maxLinkBytes = std::max(load.maxLinkBytes, bytes);
    i = j;
  }
  return load;
}

double
MachineModel::transferTime(llvm::ArrayRef<GroupTransfers> transfers) const {
  TransferLoad load = getLoad(transfers);
  if (load.maxHops == 0)
    return 0;
  return hardware.collectiveLaunchOverhead + load.seconds;
}

double MachineModel::roundTime(const CollectiveRound &round) const {
  std::vector<CollectiveSend> key(round.sends.begin(), round.sends.end());
  auto it = roundTimes.find(key);
  if (it != roundTimes.end())
    return it->second;
  llvm::SmallVector<GroupTransfers, 2> transfers;
  for (const CollectiveSend &send : round.sends)
    transfers.push_back(getSendTransfers(send));
  double seconds = getLoad(transfers).seconds;
  roundTimes.emplace(std::move(key), seconds);
  return seconds;
}

GroupTransfers
MachineModel::getSendTransfers(const CollectiveSend &send) const {
  int64_t size = assignment.groupSize(send.axes);
  GroupTransfers group;
  group.axes = send.axes;
  group.bytes = send.bytes;
  group.negative = send.shift < 0;
  for (int64_t i = 0; i < size; ++i) {
    int64_t j = i + send.shift;
    if (send.wraps)
      j = (j % size + size) % size;
    else if (j < 0 || j >= size)
      continue;
    group.pairs.emplace_back(i, j);
  }
  return group;
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

namespace {
/// `count` rounds alike.
struct RoundRun {
  CollectiveRound round;
  int64_t count;
};
} // namespace

/// The rounds of one ring of `size` members along `axes` moving blocks of
/// `block` bytes with `algorithm`, as runs of equal rounds (at most two):
/// a ring of 2^20 members is priced without 2^20 copies of one round.
static llvm::SmallVector<RoundRun, 2> ringRounds(llvm::ArrayRef<int16_t> axes,
                                                 int64_t size, double block,
                                                 RingAlgorithm algorithm) {
  auto send = [&](int64_t shift, bool wraps, double bytes) {
    CollectiveSend s;
    s.axes.assign(axes.begin(), axes.end());
    s.shift = shift;
    s.wraps = wraps;
    s.bytes = bytes;
    return s;
  };
  auto bothWays = [&](bool wraps, double bytes) {
    CollectiveRound round;
    round.sends.push_back(send(1, wraps, bytes));
    round.sends.push_back(send(-1, wraps, bytes));
    return round;
  };
  llvm::SmallVector<RoundRun, 2> runs;
  switch (algorithm) {
  case RingAlgorithm::Unidirectional: {
    CollectiveRound round;
    round.sends.push_back(send(1, true, block));
    runs.push_back({round, size - 1});
    break;
  }
  case RingAlgorithm::BidirectionalHalves:
    runs.push_back({bothWays(true, block / 2), size - 1});
    break;
  case RingAlgorithm::BidirectionalWhole:
    runs.push_back({bothWays(true, block), (size - 1) / 2});
    // With N even the member opposite is reached from both sides at once:
    // each side brings half of its block.
    if (size % 2 == 0)
      runs.push_back({bothWays(true, block / 2), 1});
    break;
  case RingAlgorithm::Line:
    runs.push_back({bothWays(false, block), size - 1});
    break;
  }
  llvm::erase_if(runs, [](const RoundRun &run) { return run.count == 0; });
  return runs;
}

bool MachineModel::closes(llvm::ArrayRef<int16_t> ring) const {
  int64_t size = assignment.groupSize(ring);
  int64_t longestEdge = 0, longestClosing = 0;
  for (int64_t logical = 0, e = assignment.getNumLogicalDevices(); logical < e;
       ++logical) {
    int64_t index = assignment.groupIndex(logical, ring);
    int64_t next = assignment.groupMember(logical, ring, (index + 1) % size);
    int64_t hops =
        topology.hops(assignment.physical(logical), assignment.physical(next));
    int64_t &longest = index + 1 == size ? longestClosing : longestEdge;
    longest = std::max(longest, hops);
  }
  return longestClosing <= longestEdge;
}

namespace {
/// One candidate plan: the rings of each part in order.
struct PlanCandidate {
  unsigned parts = 1;
  /// Per part, the rings (each a list of axes) in the order it runs them.
  std::vector<std::vector<llvm::SmallVector<int16_t, 2>>> order;
};
} // namespace

const CollectivePlan &
MachineModel::planCollective(CollectiveKind kind, double bytes,
                             llvm::ArrayRef<int16_t> axes,
                             RingDirection direction) const {
  auto key = std::make_tuple(
      kind, bytes, std::vector<int16_t>(axes.begin(), axes.end()), direction);
  auto it = plans.find(key);
  if (it == plans.end())
    it = plans.emplace(key, makePlan(kind, bytes, axes, direction)).first;
  return it->second;
}

CollectivePlan MachineModel::makePlan(CollectiveKind kind, double bytes,
                                      llvm::ArrayRef<int16_t> axes,
                                      RingDirection direction) const {
  CollectivePlan plan;
  plan.kind = kind;
  int64_t groupSize = assignment.groupSize(axes);
  if (groupSize <= 1)
    return plan;

  if (kind == CollectiveKind::AllReduce) {
    // A reduce-scatter then an all-gather of the shards, one launch.
    double shard = bytes / static_cast<double>(groupSize);
    const CollectivePlan &scatter =
        planCollective(CollectiveKind::ReduceScatter, shard, axes, direction);
    const CollectivePlan &gather =
        planCollective(CollectiveKind::AllGather, shard, axes, direction);
    plan.parts = std::max(scatter.parts, gather.parts);
    plan.phases = scatter.phases;
    llvm::append_range(plan.phases, gather.phases);
    plan.rounds = scatter.rounds;
    llvm::append_range(plan.rounds, gather.rounds);
    plan.seconds = hardware.collectiveLaunchOverhead;
    for (const CollectiveRound &round : plan.rounds)
      plan.seconds += round.seconds;
    return plan;
  }

  // The rings: one per axis of more than one device on a torus; a switch
  // reaches every member in one hop, so its group is one ring.
  std::vector<llvm::SmallVector<int16_t, 2>> rings;
  if (topology.getKind() == InterconnectKind::Switch)
    rings.emplace_back(axes.begin(), axes.end());
  else
    for (int16_t axis : axes)
      if (assignment.getGridShape()[axis] > 1)
        rings.push_back({axis});
  // A reduce-scatter runs the all-gather's rings in reverse, on shrinking
  // data: the phase order of both is decided here only.
  bool scatter = kind == CollectiveKind::ReduceScatter;
  if (scatter)
    std::reverse(rings.begin(), rings.end());

  std::vector<PlanCandidate> candidates;
  candidates.push_back(PlanCandidate{1, {rings}});
  if (rings.size() > 1) {
    PlanCandidate split;
    split.parts = rings.size();
    for (size_t j = 0; j < rings.size(); ++j) {
      std::vector<llvm::SmallVector<int16_t, 2>> rotated(rings.begin() + j,
                                                         rings.end());
      rotated.insert(rotated.end(), rings.begin(), rings.begin() + j);
      split.order.push_back(std::move(rotated));
    }
    candidates.push_back(std::move(split));
  }

  // Both ways round a ring only where it closes: a closing edge longer than
  // the ring's other edges (a group laid along a line without wrap-around)
  // is walked by the line instead, as collective libraries do.
  auto algorithmsFor = [&](llvm::ArrayRef<int16_t> ring) {
    llvm::SmallVector<RingAlgorithm, 4> algorithms = {
        RingAlgorithm::Unidirectional};
    if (direction == RingDirection::Unidirectional)
      return algorithms;
    if (closes(ring))
      algorithms.append({RingAlgorithm::BidirectionalHalves,
                         RingAlgorithm::BidirectionalWhole});
    algorithms.push_back(RingAlgorithm::Line);
    return algorithms;
  };

  std::optional<CollectivePlan> best;
  for (const PlanCandidate &candidate : candidates) {
    CollectivePlan option;
    option.kind = kind;
    option.parts = candidate.parts;
    std::vector<std::vector<CollectiveRound>> partRounds;
    double partBytes = bytes / static_cast<double>(candidate.parts);
    for (auto [part, ringsOfPart] : llvm::enumerate(candidate.order)) {
      std::vector<CollectiveRound> &mine = partRounds.emplace_back();
      // All-gather blocks grow ring by ring; a reduce-scatter's start at
      // the whole buffer and shrink.
      double data =
          scatter ? partBytes * static_cast<double>(groupSize) : partBytes;
      for (const llvm::SmallVector<int16_t, 2> &ring : ringsOfPart) {
        int64_t size = assignment.groupSize(ring);
        double block = scatter ? data / static_cast<double>(size) : data;
        RingAlgorithm chosen = RingAlgorithm::Unidirectional;
        llvm::SmallVector<RoundRun, 2> chosenRuns;
        double chosenTime = 0;
        for (RingAlgorithm algorithm : algorithmsFor(ring)) {
          llvm::SmallVector<RoundRun, 2> runs =
              ringRounds(ring, size, block, algorithm);
          // Round by round, as the rounds are played: the same sum.
          double time = 0;
          for (RoundRun &run : runs) {
            run.round.seconds = roundTime(run.round);
            for (int64_t i = 0; i < run.count; ++i)
              time += run.round.seconds;
          }
          if (chosenRuns.empty() || time < chosenTime) {
            chosen = algorithm;
            chosenRuns = std::move(runs);
            chosenTime = time;
          }
        }
        int64_t ringRoundCount = 0;
        for (const RoundRun &run : chosenRuns) {
          ringRoundCount += run.count;
          mine.insert(mine.end(), run.count, run.round);
        }
        option.phases.push_back(CollectivePhase{
            static_cast<unsigned>(part), ring, size, block, chosen,
            ringRoundCount, chosenRuns.front().round.sends.front().bytes});
        data = scatter ? block : data * static_cast<double>(size);
      }
    }
    // The parts' rounds side by side.
    size_t numRounds = 0;
    for (const std::vector<CollectiveRound> &rounds : partRounds)
      numRounds = std::max(numRounds, rounds.size());
    option.seconds = hardware.collectiveLaunchOverhead;
    // One part: its rounds are the plan's, each already priced.
    if (partRounds.size() == 1) {
      option.rounds = std::move(partRounds.front());
      for (const CollectiveRound &round : option.rounds)
        option.seconds += round.seconds;
      numRounds = 0;
    }
    option.rounds.reserve(std::max(option.rounds.size(), numRounds));
    for (size_t r = 0; r < numRounds; ++r) {
      CollectiveRound merged;
      for (const std::vector<CollectiveRound> &rounds : partRounds)
        if (r < rounds.size())
          llvm::append_range(merged.sends, rounds[r].sends);
      merged.seconds = roundTime(merged);
      option.seconds += merged.seconds;
      option.rounds.push_back(std::move(merged));
    }
    if (!best || option.seconds < best->seconds)
      best = std::move(option);
  }
  return std::move(*best);
}

const std::map<int64_t, int> &
MachineModel::getCollectiveLinkLoads(CollectiveKind kind, double bytes,
                                     llvm::ArrayRef<int16_t> axes) const {
  auto key = std::make_tuple(kind, bytes,
                             std::vector<int16_t>(axes.begin(), axes.end()));
  auto [it, inserted] = collectiveLinkLoads.try_emplace(key);
  if (!inserted)
    return it->second;
  std::map<int64_t, int> &loads = it->second;
  const CollectivePlan &plan =
      planCollective(kind, bytes, axes, RingDirection::Bidirectional);
  std::set<std::vector<CollectiveSend>> seen;
  for (const CollectiveRound &round : plan.rounds) {
    if (!seen.insert({round.sends.begin(), round.sends.end()}).second)
      continue;
    std::map<int64_t, int> roundLoads;
    for (const CollectiveSend &send : round.sends)
      forEachLinkPart(
          getSendTransfers(send),
          [&](int64_t link, double, int64_t) { ++roundLoads[link]; });
    for (auto [link, load] : roundLoads)
      loads[link] = std::max(loads[link], load);
  }
  return loads;
}

const MachineModel::PermuteLinkLoads &
MachineModel::getPermuteLinkLoads(const GroupTransfers &group) const {
  auto key = std::make_tuple(
      std::vector<int16_t>(group.axes.begin(), group.axes.end()), group.bytes,
      group.pairs);
  auto [it, inserted] = permuteLinkLoads.try_emplace(key);
  if (!inserted)
    return it->second;
  PermuteLinkLoads &loads = it->second;
  forEachLinkPart(group, [&](int64_t link, double part, int64_t hops) {
    if (topology.getKind() == InterconnectKind::Switch)
      hops = 1;
    ++loads[{hops, part / group.bytes}][link];
  });
  return loads;
}

//===----------------------------------------------------------------------===//
// Building
//===----------------------------------------------------------------------===//

llvm::Expected<MachineModel> mlir::ovl::buildMachineModel(
    const HardwareDescription &hw, llvm::StringRef topology,
    llvm::ArrayRef<int64_t> assignment, llvm::ArrayRef<int64_t> gridShape) {
  // A topology given is checked first; the default one is the grid's size.
  llvm::Expected<Topology> topo = [&]() -> llvm::Expected<Topology> {
    if (!topology.empty())
      return Topology::parse(hw, topology);
    llvm::Expected<int64_t> numDevices = getGridSize(gridShape);
    if (!numDevices)
      return numDevices.takeError();
    return Topology::getDefault(hw, *numDevices);
  }();
  if (!topo)
    return topo.takeError();
  llvm::Expected<DeviceAssignment> placed =
      assignment.empty()
          ? DeviceAssignment::rowMajor(gridShape, *topo)
          : DeviceAssignment::fromList(gridShape, *topo, assignment);
  if (!placed)
    return placed.takeError();
  return MachineModel(hw, std::move(*topo), std::move(*placed));
}

llvm::Expected<MachineModel>
mlir::ovl::buildMachineModel(llvm::StringRef hardware, llvm::StringRef topology,
                             llvm::ArrayRef<int64_t> assignment,
                             llvm::ArrayRef<int64_t> gridShape) {
  llvm::Expected<HardwareDescription> hw = resolveHardware(hardware);
  if (!hw)
    return hw.takeError();
  return buildMachineModel(*hw, topology, assignment, gridShape);
}
