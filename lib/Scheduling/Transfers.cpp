//===- Transfers.cpp - How a block's transfers share links ----------------===//

#include "OverlapDialect/Scheduling/Transfers.h"

#include "OverlapDialect/CostModel/Machine.h"
#include "OverlapDialect/Scheduling/ScheduleGraph.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <map>
#include <tuple>

using namespace mlir::ovl;
using namespace mlir::ovl::sched;

void mlir::ovl::sched::planTransfers(ScheduleGraph &graph) {
  // The (start, group, load) of each link crossed.
  std::map<int64_t, llvm::SmallVector<std::tuple<unsigned, unsigned, int>, 2>>
      linkUsers;
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
      // The layers of a model repeat their transfers: the machine plans
      // and routes each distinct one once (every pair on a pod of
      // thousands of devices).
      const CollectivePlan &plan =
          machine->planCollective(transfer.collective, *transfer.bytes,
                                  transfer.axes, RingDirection::Bidirectional);
      const std::map<int64_t, int> &loads = machine->getCollectiveLinkLoads(
          transfer.collective, *transfer.bytes, transfer.axes);
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
    GroupTransfers sent;
    sent.axes = transfer.axes;
    sent.bytes = *transfer.bytes;
    sent.pairs = transfer.pairs;
    for (auto &[group, loads] : machine->getPermuteLinkLoads(sent)) {
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
