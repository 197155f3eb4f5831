//===- DaryHeapTest.cpp - The event queue's heap --------------------------===//
//
// Under a strict total order the 4-ary heap yields the tops
// std::priority_queue yields, through any interleaving of pushes and pops:
// the event simulator's results do not depend on which one it uses.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/Support/DaryHeap.h"

#include "gtest/gtest.h"

#include <queue>
#include <random>
#include <utility>

namespace {

/// (time, sequence number), the earlier first: the simulator's order.
using Key = std::pair<double, unsigned>;
struct Later {
  bool operator()(const Key &a, const Key &b) const {
    return a.first != b.first ? a.first > b.first : a.second > b.second;
  }
};

TEST(DaryHeapTest, TopsInTheOrderOfAPriorityQueue) {
  std::mt19937 random(7);
  for (int round = 0; round < 50; ++round) {
    overlap::DaryHeap<Key, Later> heap;
    std::priority_queue<Key, std::vector<Key>, Later> reference;
    unsigned seq = 0;
    // Few distinct times: most order comes from the sequence numbers.
    std::uniform_int_distribution<int> time(0, round % 2 ? 3 : 1000);
    std::bernoulli_distribution pushes(round % 3 ? 0.6 : 0.4);
    for (int step = 0; step < 2000; ++step) {
      if (reference.empty() || pushes(random)) {
        Key key{time(random) * 0.5, seq++};
        heap.push(key);
        reference.push(key);
        continue;
      }
      ASSERT_EQ(heap.size(), reference.size());
      ASSERT_EQ(heap.top(), reference.top());
      heap.pop();
      reference.pop();
    }
    while (!reference.empty()) {
      ASSERT_EQ(heap.top(), reference.top());
      heap.pop();
      reference.pop();
    }
    EXPECT_TRUE(heap.empty());
  }
}

} // namespace
