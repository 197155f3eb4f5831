//===- DaryHeap.h - A priority queue with four children a node --*- C++ -*-===//
//
// std::priority_queue's interface over a 4-ary heap: half the levels of a
// binary heap, and a node's children share a cache line or two, so a pop
// of a large queue (the event simulator's: tens of thousands of pending
// events) touches half the memory. With a strict total order the sequence
// of tops is the same as any other priority queue's.
//
// An element can be replaced where it is (`replace`), so that a queue
// whose entries change (a transfer's finish, again at each change of its
// rate) holds each once instead of its superseded copies: `Placed` is told
// each element's position whenever it moves.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAPDIALECT_SUPPORT_DARYHEAP_H
#define OVERLAPDIALECT_SUPPORT_DARYHEAP_H

#include <cassert>
#include <cstddef>
#include <utility>
#include <vector>

namespace overlap {

/// Tells nothing of where elements go.
struct IgnorePlaced {
  template <typename T> void operator()(const T &, size_t) const {}
};

/// A max-heap under `Less` (as std::priority_queue: top() is the greatest);
/// `Placed` is called with each element moved and its new position.
template <typename T, typename Less, typename Placed = IgnorePlaced>
class DaryHeap {
public:
  explicit DaryHeap(Placed placed = Placed()) : placed(std::move(placed)) {}

  bool empty() const { return elements.empty(); }
  size_t size() const { return elements.size(); }
  const T &top() const {
    assert(!elements.empty() && "top of an empty heap");
    return elements.front();
  }
  /// The element at position `at` (as told to `Placed`).
  const T &operator[](size_t at) const {
    assert(at < elements.size() && "past the heap");
    return elements[at];
  }
  void push(T value) {
    // The new slot is written once, where `value` ends: storing it there
    // first and reading it back stalls on the store.
    elements.emplace_back();
    siftUp(elements.size() - 1, std::move(value));
  }
  void pop() {
    assert(!elements.empty() && "pop of an empty heap");
    T moving = std::move(elements.back());
    elements.pop_back();
    if (!elements.empty())
      siftDown(0, std::move(moving));
  }
  /// Replaces the element at position `at` (as told to `Placed`) by
  /// `value`: the tops to come are those of the heap with `value` pushed
  /// in place of the replaced element.
  void replace(size_t at, T value) {
    assert(at < elements.size() && "replacing past the heap");
    if (at > 0 && less(elements[(at - 1) / kArity], value))
      siftUp(at, std::move(value));
    else
      siftDown(at, std::move(value));
  }

private:
  /// Puts `moving` at `at` or above, where it is not greater than its
  /// parent.
  void siftUp(size_t at, T moving) {
    while (at > 0) {
      size_t parent = (at - 1) / kArity;
      if (!less(elements[parent], moving))
        break;
      put(at, std::move(elements[parent]));
      at = parent;
    }
    put(at, std::move(moving));
  }
  /// Puts `moving` at `at` or below, where no child is greater.
  void siftDown(size_t at, T moving) {
    size_t n = elements.size();
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
      put(at, std::move(elements[best]));
      at = best;
    }
    put(at, std::move(moving));
  }
  void put(size_t at, T value) {
    elements[at] = std::move(value);
    placed(elements[at], at);
  }

  static constexpr size_t kArity = 4;
  std::vector<T> elements;
  Less less;
  Placed placed;
};

} // namespace overlap

#endif // OVERLAPDIALECT_SUPPORT_DARYHEAP_H
