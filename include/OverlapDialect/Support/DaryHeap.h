//===- DaryHeap.h - A priority queue with four children a node --*- C++ -*-===//
//
// std::priority_queue's interface over a 4-ary heap: half the levels of a
// binary heap, and a node's children share a cache line or two, so a pop
// of a large queue (the event simulator's: tens of thousands of pending
// events) touches half the memory. With a strict total order the sequence
// of tops is the same as any other priority queue's.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAPDIALECT_SUPPORT_DARYHEAP_H
#define OVERLAPDIALECT_SUPPORT_DARYHEAP_H

#include <cassert>
#include <cstddef>
#include <utility>
#include <vector>

namespace overlap {

/// A max-heap under `Less` (as std::priority_queue: top() is the greatest).
template <typename T, typename Less> class DaryHeap {
public:
  bool empty() const { return elements.empty(); }
  size_t size() const { return elements.size(); }
  const T &top() const {
    assert(!elements.empty() && "top of an empty heap");
    return elements.front();
  }
  void push(T value) {
    size_t at = elements.size();
    elements.push_back(std::move(value));
    T moving = std::move(elements[at]);
    while (at > 0) {
      size_t parent = (at - 1) / kArity;
      if (!less(elements[parent], moving))
        break;
      elements[at] = std::move(elements[parent]);
      at = parent;
    }
    elements[at] = std::move(moving);
  }
  void pop() {
    assert(!elements.empty() && "pop of an empty heap");
    T moving = std::move(elements.back());
    elements.pop_back();
    size_t n = elements.size();
    if (n == 0)
      return;
    size_t at = 0;
    while (true) {
      size_t first = at * kArity + 1;
      if (first >= n)
        break;
      size_t last = first + kArity < n ? first + kArity : n;
      size_t best = first;
      for (size_t child = first + 1; child < last; ++child)
        if (less(elements[best], elements[child]))
          best = child;
      if (!less(moving, elements[best]))
        break;
      elements[at] = std::move(elements[best]);
      at = best;
    }
    elements[at] = std::move(moving);
  }

private:
  static constexpr size_t kArity = 4;
  std::vector<T> elements;
  Less less;
};

} // namespace overlap

#endif // OVERLAPDIALECT_SUPPORT_DARYHEAP_H
