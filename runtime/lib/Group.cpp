//===- Group.cpp - Device groups of a grid --------------------------------===//
//
// Validation and index arithmetic for groups and permutation pairs. A device
// id is split into grid coordinates; the coordinates along the group's axes
// give the index in the group, and substituting every possible index back
// into those coordinates enumerates the members.
//
//===----------------------------------------------------------------------===//

#include "ovlrt/Group.h"

using namespace ovlrt;

std::string ovlrt::checkGroup(const Group &group, int64_t numDevices) {
  int64_t gridSize = 1;
  for (int64_t size : group.gridShape) {
    if (size <= 0)
      return "grid shape " + formatList(group.gridShape) +
             " has a non-positive size";
    gridSize *= size;
  }
  if (gridSize != numDevices)
    return "grid shape " + formatList(group.gridShape) + " has " +
           std::to_string(gridSize) + " devices but the world has " +
           std::to_string(numDevices);
  int64_t rank = static_cast<int64_t>(group.gridShape.size());
  std::vector<bool> seen(rank, false);
  for (int64_t axis : group.axes) {
    if (axis < 0 || axis >= rank)
      return "grid axis " + std::to_string(axis) +
             " is out of range for grid " + formatList(group.gridShape);
    if (seen[axis])
      return "grid axis " + std::to_string(axis) + " is listed twice in " +
             formatList(group.axes);
    seen[axis] = true;
  }
  return "";
}

GroupLayout ovlrt::layoutGroup(const Group &group, int64_t device) {
  int64_t rank = static_cast<int64_t>(group.gridShape.size());
  std::vector<int64_t> coords(rank);
  for (int64_t d = rank - 1, rest = device; d >= 0; --d) {
    coords[d] = rest % group.gridShape[d];
    rest /= group.gridShape[d];
  }

  GroupLayout layout;
  int64_t groupSize = 1;
  for (int64_t axis : group.axes) {
    layout.index = layout.index * group.gridShape[axis] + coords[axis];
    groupSize *= group.gridShape[axis];
  }

  layout.members.reserve(groupSize);
  for (int64_t index = 0; index < groupSize; ++index) {
    // Replace the coordinates along the axes by those of `index`, the last
    // listed axis varying fastest.
    std::vector<int64_t> member = coords;
    int64_t rest = index;
    for (auto axis = group.axes.rbegin(); axis != group.axes.rend(); ++axis) {
      member[*axis] = rest % group.gridShape[*axis];
      rest /= group.gridShape[*axis];
    }
    int64_t id = 0;
    for (int64_t d = 0; d < rank; ++d)
      id = id * group.gridShape[d] + member[d];
    layout.members.push_back(id);
  }
  return layout;
}

std::string ovlrt::formatList(const std::vector<int64_t> &values) {
  std::string text = "[";
  for (size_t i = 0; i < values.size(); ++i)
    text += (i ? ", " : "") + std::to_string(values[i]);
  return text + "]";
}

std::string ovlrt::formatGroup(const Group &group) {
  std::string shape;
  for (size_t i = 0; i < group.gridShape.size(); ++i)
    shape += (i ? "x" : "") + std::to_string(group.gridShape[i]);
  return "axes " + formatList(group.axes) + " of grid " + shape;
}

std::string ovlrt::formatPairs(const PermutePairs &pairs) {
  std::string text = "[";
  for (int64_t i = 0; i < pairs.numPairs; ++i)
    text += (i ? ", " : "") + std::to_string(pairs.source(i)) + "->" +
            std::to_string(pairs.target(i));
  return text + "]";
}

std::string ovlrt::checkPairs(const PermutePairs &pairs, int64_t groupSize) {
  if (pairs.numPairs < 0 || (pairs.numPairs > 0 && !pairs.flat))
    return "malformed pair list";
  std::vector<bool> isSource(groupSize, false), isTarget(groupSize, false);
  for (int64_t i = 0; i < pairs.numPairs; ++i) {
    int64_t source = pairs.source(i), target = pairs.target(i);
    std::string pair = std::to_string(source) + "->" + std::to_string(target);
    if (source < 0 || source >= groupSize || target < 0 || target >= groupSize)
      return "pair " + pair + " is out of range for a group of " +
             std::to_string(groupSize) + " devices";
    if (isSource[source])
      return "group index " + std::to_string(source) +
             " is the source of more than one pair";
    if (isTarget[target])
      return "group index " + std::to_string(target) +
             " is the target of more than one pair";
    isSource[source] = isTarget[target] = true;
  }
  if (pairs.numPairs != groupSize)
    return "pairs " + formatPairs(pairs) + " cover " +
           std::to_string(pairs.numPairs) + " of the " +
           std::to_string(groupSize) +
           " devices of the group; expected a permutation of the whole group";
  return "";
}

PermuteRoute ovlrt::routeOf(const PermutePairs &pairs, int64_t index) {
  PermuteRoute route;
  for (int64_t i = 0; i < pairs.numPairs; ++i) {
    if (pairs.source(i) == index)
      route.sendTo = pairs.target(i);
    if (pairs.target(i) == index)
      route.receiveFrom = pairs.source(i);
  }
  return route;
}
