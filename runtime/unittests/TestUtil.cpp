//===- TestUtil.cpp - Helpers for the runtime's tests ---------------------===//
//
// Index iteration and the expected groups of the tests' grids, written out
// per case so that the tests do not reuse the runtime's own arithmetic.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

using namespace ovlrt;
using namespace ovlrt::test;

void ovlrt::test::forEachIndex(
    const std::vector<int64_t> &sizes,
    const std::function<void(const std::vector<int64_t> &)> &fn) {
  if (product(sizes) == 0)
    return;
  std::vector<int64_t> index(sizes.size(), 0);
  while (true) {
    fn(index);
    int64_t d = static_cast<int64_t>(sizes.size()) - 1;
    for (; d >= 0; --d) {
      if (++index[d] < sizes[d])
        break;
      index[d] = 0;
    }
    if (d < 0)
      return;
  }
}

int64_t ovlrt::test::linearIndex(const std::vector<int64_t> &sizes,
                                 const std::vector<int64_t> &index) {
  int64_t linear = 0;
  for (size_t d = 0; d < sizes.size(); ++d)
    linear = linear * sizes[d] + index[d];
  return linear;
}

int64_t ovlrt::test::product(const std::vector<int64_t> &sizes) {
  int64_t result = 1;
  for (int64_t size : sizes)
    result *= size;
  return result;
}

ExpectedGroup ovlrt::test::expectedGroup(const std::vector<int64_t> &gridShape,
                                         const std::vector<int64_t> &axes,
                                         int64_t device) {
  ExpectedGroup group{0, {}};
  if (gridShape.size() == 1) {
    EXPECT_EQ(axes, std::vector<int64_t>({0}));
    group.index = device;
    for (int64_t i = 0; i < gridShape[0]; ++i)
      group.members.push_back(i);
    return group;
  }
  int64_t rows = gridShape[0], cols = gridShape[1];
  int64_t r = device / cols, c = device % cols;
  using Axes = std::vector<int64_t>;
  if (axes.empty()) {
    group.members = {device};
  } else if (axes == Axes{0}) {
    group.index = r;
    for (int64_t i = 0; i < rows; ++i)
      group.members.push_back(i * cols + c);
  } else if (axes == Axes{1}) {
    group.index = c;
    for (int64_t i = 0; i < cols; ++i)
      group.members.push_back(r * cols + i);
  } else if (axes == Axes{0, 1}) {
    group.index = device;
    for (int64_t i = 0; i < rows * cols; ++i)
      group.members.push_back(i);
  } else if (axes == Axes{1, 0}) {
    // Axis 1 is the major one: index = c * rows + r.
    group.index = c * rows + r;
    for (int64_t i = 0; i < rows * cols; ++i)
      group.members.push_back((i % rows) * cols + i / rows);
  } else {
    ADD_FAILURE() << "no expected group for axes " << formatList(axes);
  }
  return group;
}

std::vector<int64_t> ovlrt::test::shiftPairs(int64_t n, int64_t shift) {
  std::vector<int64_t> flat;
  for (int64_t i = 0; i < n; ++i) {
    flat.push_back(i);
    flat.push_back(((i + shift) % n + n) % n);
  }
  return flat;
}

void ovlrt::test::runWorld(int64_t numDevices,
                           const std::function<void(Device &)> &body,
                           double timeoutSeconds) {
  WorldOptions options;
  options.numDevices = numDevices;
  options.timeoutSeconds = timeoutSeconds;
  ThreadsWorld(options).run(body);
}
