//===- Group.h - Device groups of a grid ------------------------*- C++ -*-===//
//
// The arithmetic that places a device in a group of a device grid, shared by
// every transport. A grid has a shape such as [2, 4]; a device's id is the
// row-major linear index of its grid coordinates. A group is named by an
// ordered list of distinct grid axes: the devices that share their
// coordinates on every other axis form one group, and a device's index in
// its group is the row-major linearization of its coordinates along the
// listed axes, in the order listed (axes [1, 0] make axis 1 the major one).
// No axes make a group of one device.
//
//===----------------------------------------------------------------------===//

#ifndef OVLRT_GROUP_H
#define OVLRT_GROUP_H

#include <cstdint>
#include <string>
#include <vector>

namespace ovlrt {

struct Group {
  std::vector<int64_t> gridShape;
  std::vector<int64_t> axes;
};

/// Where one device sits in its group.
struct GroupLayout {
  /// This device's index in the group.
  int64_t index = 0;
  /// The device ids of the members, by group index.
  std::vector<int64_t> members;

  int64_t size() const { return static_cast<int64_t>(members.size()); }
};

/// An empty string if `group` is valid for a world of `numDevices` (the grid
/// has that many devices, the axes are distinct and within the grid's rank),
/// otherwise what is wrong with it.
std::string checkGroup(const Group &group, int64_t numDevices);

/// The layout of `device`'s group. `group` must be valid.
GroupLayout layoutGroup(const Group &group, int64_t device);

/// "[0, 1]".
std::string formatList(const std::vector<int64_t> &values);
/// "axes [1] of grid 2x4".
std::string formatGroup(const Group &group);

/// The (source, target) pairs of a permute, in group indices, stored flat
/// as s0, t0, s1, t1, ... like the dialect's `pairs` attribute.
struct PermutePairs {
  const int64_t *flat = nullptr;
  int64_t numPairs = 0;

  int64_t source(int64_t pair) const { return flat[2 * pair]; }
  int64_t target(int64_t pair) const { return flat[2 * pair + 1]; }
};

/// "[0->1, 1->0]".
std::string formatPairs(const PermutePairs &pairs);

/// Who one device sends to and receives from in a permute, as group indices.
struct PermuteRoute {
  int64_t sendTo = 0;
  int64_t receiveFrom = 0;
};

/// An empty string if `pairs` is a permutation of a group of `groupSize`
/// (indices in range, every index exactly once a source and once a target),
/// otherwise what is wrong with it.
std::string checkPairs(const PermutePairs &pairs, int64_t groupSize);

/// The route of the device with group index `index`. `pairs` must be valid.
PermuteRoute routeOf(const PermutePairs &pairs, int64_t index);

} // namespace ovlrt

#endif // OVLRT_GROUP_H
