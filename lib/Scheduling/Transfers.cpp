//===- Transfers.cpp - How a block's transfers share links ----------------===//

#include "OverlapDialect/Scheduling/Transfers.h"

#include "OverlapDialect/CostModel/Machine.h"
#include "OverlapDialect/Scheduling/ScheduleGraph.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

using namespace mlir::ovl;
using namespace mlir::ovl::sched;

namespace {

/// For the parts of each route length in hops and share of the bytes, how
/// many cross each link.
using LoadsByGroup =
    std::map<std::pair<int64_t, double>, std::map<int64_t, int>>;

/// Routes every transfer of `transfer` (each of its pairs, in every group of
/// the grid at once, as all devices run it) on `machine`'s topology, split
/// over its ports as the simulator splits it (MachineModel::forEachLinkPart).
LoadsByGroup routePermute(const Transfer &transfer,
                          const MachineModel &machine) {
  GroupTransfers group;
  group.axes = transfer.axes;
  group.bytes = *transfer.bytes;
  group.pairs = transfer.pairs;
  LoadsByGroup loads;
  machine.forEachLinkPart(group, [&](int64_t link, double part, int64_t hops) {
    if (machine.topology.getKind() == InterconnectKind::Switch)
      hops = 1;
    ++loads[{hops, part / group.bytes}][link];
  });
  return loads;
}

/// How many parts of a send of `plan` cross each link in the round that
/// loads it most.
std::map<int64_t, int> routeCollective(const CollectivePlan &plan,
                                       const MachineModel &machine) {
  std::map<int64_t, int> loads;
  std::set<std::vector<CollectiveSend>> seen;
  for (const CollectiveRound &round : plan.rounds) {
    if (!seen.insert({round.sends.begin(), round.sends.end()}).second)
      continue;
    std::map<int64_t, int> roundLoads;
    for (const CollectiveSend &send : round.sends)
      machine.forEachLinkPart(
          machine.getSendTransfers(send),
          [&](int64_t link, double, int64_t) { ++roundLoads[link]; });
    for (auto [link, load] : roundLoads)
      loads[link] = std::max(loads[link], load);
  }
  return loads;
}

} // namespace

void mlir::ovl::sched::planTransfers(ScheduleGraph &graph) {
  // The (start, group, load) of each link crossed.
  std::map<int64_t, llvm::SmallVector<std::tuple<unsigned, unsigned, int>, 2>>
      linkUsers;
  // The layers of a model repeat their transfers: each distinct one is
  // planned and routed once (every pair on a pod of thousands of devices).
  using Key = std::tuple<const MachineModel *, Transfer::Kind, CollectiveKind,
                         double, llvm::SmallVector<int16_t, 2>,
                         std::vector<std::pair<int64_t, int64_t>>>;
  std::map<Key, std::pair<CollectivePlan, std::map<int64_t, int>>> collectives;
  std::map<Key, LoadsByGroup> permutes;
  for (auto [i, node] : llvm::enumerate(graph.nodes)) {
    if (node.kind != NodeKind::Start)
      continue;
    const Transfer &transfer = node.transfer;
    const MachineModel *machine = transfer.machine;
    if (!machine || !transfer.bytes) {
      node.groups.push_back({kDefaultCost, 1, {}});
      continue;
    }
    const HardwareDescription &hw = machine->hardware;
    if (transfer.kind == Transfer::Kind::Collective) {
      // One flow over the links its rounds cross (each link as loaded as
      // in its busiest round), as long alone as its plan: it shares them
      // with the permutes and collectives in flight.
      Key key{machine,         transfer.kind, transfer.collective,
              *transfer.bytes, transfer.axes, {}};
      auto [it, inserted] = collectives.try_emplace(key);
      if (inserted) {
        it->second.first = machine->planCollective(
            transfer.collective, *transfer.bytes, transfer.axes,
            RingDirection::Bidirectional);
        it->second.second = routeCollective(it->second.first, *machine);
      }
      const auto &[plan, loads] = it->second;
      int selfLoad = 1;
      for (auto [link, load] : loads)
        selfLoad = std::max(selfLoad, load);
      double streaming = plan.seconds - hw.collectiveLaunchOverhead;
      if (loads.empty() || streaming <= 0) {
        node.groups.push_back({plan.seconds, 1, {}});
        continue;
      }
      node.stream = streaming / selfLoad;
      for (auto [link, load] : loads)
        linkUsers[link].push_back({static_cast<unsigned>(i), 0u, load});
      node.groups.push_back({hw.collectiveLaunchOverhead, 1, {}});
      continue;
    }
    if (*transfer.bytes == 0) {
      // Nothing streams (and the shares of nothing would be 0 / 0): the
      // launch alone.
      node.groups.push_back({hw.collectiveLaunchOverhead, 1, {}});
      continue;
    }
    node.stream = machine->topology.getKind() == InterconnectKind::Switch
                      ? *transfer.bytes / hw.egressBandwidth()
                      : *transfer.bytes / hw.linkBandwidth;
    Key key{machine,         transfer.kind, transfer.collective,
            *transfer.bytes, transfer.axes, transfer.pairs};
    auto [routed, inserted] = permutes.try_emplace(key);
    if (inserted)
      routed->second = routePermute(transfer, *machine);
    for (auto &[group, loads] : routed->second) {
      auto [hops, share] = group;
      for (auto [link, load] : loads)
        linkUsers[link].push_back({static_cast<unsigned>(i),
                                   static_cast<unsigned>(node.groups.size()),
                                   load});
      node.groups.push_back({hw.collectiveLaunchOverhead +
                                 static_cast<double>(hops) * hw.hopLatency,
                             share,
                             {}});
    }
  }
  std::map<llvm::SmallVector<std::tuple<unsigned, unsigned, int>, 2>, unsigned>
      classes;
  for (auto &[link, users] : linkUsers) {
    auto [it, inserted] = classes.try_emplace(users, graph.numLinkClasses);
    if (!inserted)
      continue;
    ++graph.numLinkClasses;
    for (auto [i, group, load] : users)
      graph.nodes[i].groups[group].linkLoads.push_back({it->second, load});
  }
  for (Node &node : graph.nodes)
    for (const TransferGroup &group : node.groups) {
      int selfLoad = 1;
      for (auto [linkClass, load] : group.linkLoads)
        selfLoad = std::max(selfLoad, load);
      node.latency = std::max(
          node.latency, group.setup + node.stream * group.share * selfLoad);
    }
}
