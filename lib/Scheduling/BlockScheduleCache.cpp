//===- BlockScheduleCache.cpp - Blocks scheduled once ---------------------===//

#include "OverlapDialect/Scheduling/BlockScheduleCache.h"

#include "OverlapDialect/Scheduling/ScheduleGraph.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/BLAKE3.h"

#include <algorithm>
#include <optional>
#include <type_traits>
#include <utility>

using namespace mlir::ovl::sched;

namespace {
/// Feeds values to the digest, each by its bytes; a sequence by its length
/// and then its elements, so that [a, b][] and [a][b] differ.
class Digest {
public:
  template <typename T> void add(const T &value) {
    static_assert(std::is_trivially_copyable_v<T>, "hashed by its bytes");
    hasher.update(llvm::ArrayRef<uint8_t>(
        reinterpret_cast<const uint8_t *>(&value), sizeof(T)));
  }
  template <typename Range> void addAll(const Range &range) {
    add(static_cast<uint64_t>(std::size(range)));
    for (const auto &element : range)
      add(element);
  }
  template <typename A, typename B> void add(const std::pair<A, B> &pair) {
    add(pair.first);
    add(pair.second);
  }
  void add(const std::optional<double> &value) {
    add(value.has_value());
    add(value.value_or(0));
  }
  void add(const TransferGroup &group) {
    add(group.setup);
    add(group.share);
    addAll(group.linkLoads);
  }
  BlockKey final() {
    BlockKey key;
    llvm::BLAKE3Result<32> digest = hasher.final();
    std::copy(digest.begin(), digest.end(), key.begin());
    return key;
  }

private:
  llvm::BLAKE3 hasher;
};
} // namespace

BlockKey mlir::ovl::sched::getBlockKey(const ScheduleGraph &graph,
                                       const BlockScheduleOptions &options) {
  Digest digest;
  digest.add(options.algorithm);
  digest.add(options.budget);
  digest.add(options.simulatedImproveReplays);
  digest.add(graph.entryInFlight);
  digest.add(graph.exitInFlight);
  digest.add(graph.numLinkClasses);
  digest.add(graph.memoryBudget);
  digest.add(static_cast<uint64_t>(graph.nodes.size()));
  for (const Node &node : graph.nodes) {
    digest.add(node.kind);
    digest.add(node.cost);
    const Transfer &transfer = node.transfer;
    digest.add(transfer.kind);
    digest.add(transfer.machine);
    digest.addAll(transfer.axes);
    digest.add(transfer.bytes);
    digest.addAll(transfer.pairs);
    digest.add(transfer.collective);
    digest.add(node.bytes);
    digest.add(node.stream);
    digest.addAll(node.groups);
    digest.add(node.latency);
    digest.add(node.consumes);
    digest.add(node.produces);
    digest.add(node.slots);
    digest.add(node.usesDone);
    digest.add(node.feedsStart);
    digest.add(node.waitsOnEntry);
    digest.add(node.leavesBlock);
    digest.addAll(node.preds);
    digest.addAll(node.succs);
    digest.addAll(node.asyncPreds);
  }
  return digest.final();
}

const BlockSchedule &
BlockScheduleCache::schedule(const ScheduleGraph &graph,
                             const BlockScheduleOptions &options) {
  auto [it, inserted] = made.try_emplace(getBlockKey(graph, options));
  if (inserted)
    it->second = scheduleBlock(graph, options);
  else
    ++hits;
  return it->second;
}
