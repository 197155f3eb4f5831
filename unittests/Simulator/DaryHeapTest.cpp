//===- DaryHeapTest.cpp - The event queue's heap --------------------------===//
//
// Under a strict total order the 4-ary heap yields the tops
// std::priority_queue yields, through any interleaving of pushes and pops:
// the event simulator's results do not depend on which one it uses. An
// element replaced where the heap says it is gives the tops of the heap
// holding the new element instead of the old (the simulator's finish
// events, moved at each change of a transfer's rate).
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/Support/DaryHeap.h"

#include "gtest/gtest.h"

#include <map>
#include <queue>
#include <random>
#include <set>
#include <utility>
#include <vector>

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

/// An element with an owner, whose position the heap tells.
struct Owned {
  Key key;
  unsigned owner;
};
struct OwnedLater {
  bool operator()(const Owned &a, const Owned &b) const {
    return Later()(a.key, b.key);
  }
};
struct TellOwner {
  std::vector<size_t> *positions;
  void operator()(const Owned &element, size_t at) const {
    (*positions)[element.owner] = at;
  }
};

TEST(DaryHeapTest, ReplacedWhereItIs) {
  std::mt19937 random(11);
  for (int round = 0; round < 50; ++round) {
    constexpr unsigned kOwners = 64;
    std::vector<size_t> positions(kOwners);
    overlap::DaryHeap<Owned, OwnedLater, TellOwner> heap(TellOwner{&positions});
    // The reference: each owner's key, when it has one in the heap, and
    // all of them ordered, the earliest first.
    std::map<unsigned, Key> keyOf;
    auto earlier = [](const Key &a, const Key &b) { return Later()(b, a); };
    std::set<Key, decltype(earlier)> reference(earlier);
    unsigned seq = 0;
    std::uniform_int_distribution<int> time(0, round % 2 ? 3 : 1000);
    std::uniform_int_distribution<unsigned> owner(0, kOwners - 1);
    std::uniform_int_distribution<int> action(0, 2);
    for (int step = 0; step < 4000; ++step) {
      unsigned who = owner(random);
      int what = action(random);
      Key key{time(random) * 0.5, seq++};
      if (what == 0 && !keyOf.count(who)) {
        heap.push({key, who});
      } else if (what == 1 && keyOf.count(who)) {
        heap.replace(positions[who], {key, who});
        reference.erase(keyOf[who]);
      } else if (!reference.empty()) {
        ASSERT_EQ(heap.size(), reference.size());
        Owned top = heap.top();
        ASSERT_EQ(top.key, *reference.begin());
        heap.pop();
        reference.erase(reference.begin());
        keyOf.erase(top.owner);
        continue;
      } else {
        continue;
      }
      keyOf[who] = key;
      reference.insert(key);
    }
    while (!reference.empty()) {
      ASSERT_EQ(heap.top().key, *reference.begin());
      heap.pop();
      reference.erase(reference.begin());
    }
    EXPECT_TRUE(heap.empty());
  }
}

} // namespace
