//===- Transfers.cpp - How a block's transfers share links ----------------===//

#include "OverlapDialect/Scheduling/Transfers.h"

#include "OverlapDialect/CostModel/Machine.h"
#include "OverlapDialect/Scheduling/ScheduleGraph.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <tuple>

using namespace mlir::ovl;
using namespace mlir::ovl::sched;

namespace {
/// A transfer group crossing a link: (start node, group, load).
using LinkUser = std::tuple<unsigned, unsigned, int>;

/// The users of each link, in the order they are added. Each list is a node
/// of a trie, so that links with equal lists (a class) share one node,
/// found without comparing lists: on a pod of thousands of devices a
/// block's transfers cross tens of thousands of links, each hundreds of
/// times.
class LinkUserLists {
public:
  void add(int64_t link, LinkUser user) {
    unsigned &list = listOf[link];
    auto [it, added] = children.try_emplace(
        std::tuple_cat(std::make_tuple(list), user), trie.size());
    if (added)
      trie.push_back({list, user});
    list = it->second;
  }
  /// The links with users, in increasing order.
  llvm::SmallVector<int64_t> getLinks() const {
    llvm::SmallVector<int64_t> links;
    for (const auto &entry : listOf)
      links.push_back(entry.first);
    llvm::sort(links);
    return links;
  }
  /// The list of `link` (a trie node: equal lists, equal nodes).
  unsigned getList(int64_t link) const { return listOf.lookup(link); }
  /// The users of `list`, first added first.
  llvm::SmallVector<LinkUser> getUsers(unsigned list) const {
    llvm::SmallVector<LinkUser> users;
    for (; list != kRoot; list = trie[list].first)
      users.push_back(trie[list].second);
    std::reverse(users.begin(), users.end());
    return users;
  }

private:
  /// The empty list.
  static constexpr unsigned kRoot = 0;
  /// Each list's last user and the list before it.
  llvm::SmallVector<std::pair<unsigned, LinkUser>> trie = {{kRoot, {}}};
  llvm::DenseMap<std::tuple<unsigned, unsigned, unsigned, int>, unsigned>
      children;
  llvm::DenseMap<int64_t, unsigned> listOf;
};
} // namespace

void mlir::ovl::sched::planTransfers(ScheduleGraph &graph) {
  // The (start, group, load) of each link crossed.
  LinkUserLists linkUsers;
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
        linkUsers.add(link, {static_cast<unsigned>(i), 0u, load});
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
        linkUsers.add(link, {static_cast<unsigned>(i),
                             static_cast<unsigned>(node.groups.size()), load});
      node.groups.push_back({hw.collectiveLaunchOverhead +
                                 static_cast<double>(hops) * hw.hopLatency,
                             share,
                             {}});
    }
  }
  // Classes are numbered in the order of their first link.
  llvm::DenseMap<unsigned, unsigned> classes;
  for (int64_t link : linkUsers.getLinks()) {
    unsigned list = linkUsers.getList(link);
    auto [it, inserted] = classes.try_emplace(list, graph.numLinkClasses);
    if (!inserted)
      continue;
    ++graph.numLinkClasses;
    for (auto [i, group, load] : linkUsers.getUsers(list))
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
