//===- Topology.cpp - Physical interconnect and device placement ----------===//
//
// Tori and switches: building them from extents (given, parsed from "4x4x4"
// or chosen for a device count), numbering of devices and links, and
// dimension-order routing. Device assignments: the placement of a grid's
// logical devices on physical ones, the group arithmetic the simulator uses
// to find ring and permute peers.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/CostModel/Topology.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cassert>
#include <limits>

using namespace mlir::ovl;

/// More devices than this are refused: every structure built from a
/// topology (links, loads, the simulator's devices) is per device, and the
/// largest machines the cost model knows have thousands (a TPU v5p pod
/// 8960), so 2^20 leaves room without letting a typo ask for gigabytes.
static constexpr int64_t kMaxDevices = int64_t(1) << 20;

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// "4x4x4".
static std::string joinExtents(llvm::ArrayRef<int64_t> extents) {
  std::string result;
  llvm::raw_string_ostream os(result);
  llvm::interleave(extents, os, "x");
  return result;
}

//===----------------------------------------------------------------------===//
// Topology
//===----------------------------------------------------------------------===//

llvm::Expected<Topology> Topology::get(const HardwareDescription &hw,
                                       llvm::ArrayRef<int64_t> extents) {
  std::string spec = joinExtents(extents);
  if (hw.interconnect == InterconnectKind::Switch) {
    if (extents.size() != 1)
      return makeError(llvm::formatv(
          "topology '{0}' has {1} dimensions but {2} is a switch, which takes "
          "a single device count",
          spec, extents.size(), hw.name));
  } else {
    if (hw.torusRank == 0)
      return makeError("hardware " + hw.name + " is a torus of rank 0");
    if (extents.size() != hw.torusRank)
      return makeError(llvm::formatv(
          "topology '{0}' has {1} dimension{2} but {3} has a {4}-D torus", spec,
          extents.size(), extents.size() == 1 ? "" : "s", hw.name,
          hw.torusRank));
  }
  int64_t numDevices = 1;
  for (int64_t extent : extents) {
    if (extent < 1)
      return makeError(llvm::formatv(
          "topology '{0}' has extent {1}; extents must be positive", spec,
          extent));
    if (extent > kMaxDevices || numDevices * extent > kMaxDevices)
      return makeError(llvm::formatv("topology '{0}' has more than {1} devices",
                                     spec, kMaxDevices));
    numDevices *= extent;
  }

  Topology topology;
  topology.kind = hw.interconnect;
  topology.extents.assign(extents.begin(), extents.end());
  for (unsigned dim = 0; dim < extents.size(); ++dim)
    topology.wraps.push_back(hw.wrapsDimension(extents, dim));
  topology.numDevices = numDevices;
  return topology;
}

llvm::Expected<Topology> Topology::parse(const HardwareDescription &hw,
                                         llvm::StringRef spec) {
  llvm::SmallVector<llvm::StringRef, 3> parts;
  spec.trim().split(parts, 'x');
  llvm::SmallVector<int64_t, 3> extents;
  for (llvm::StringRef part : parts) {
    int64_t extent;
    // getAsInteger returns true on failure; it also rejects "" and "+4".
    if (part.empty() || !llvm::isDigit(part.front()) ||
        part.getAsInteger(10, extent))
      return makeError("invalid topology '" + spec +
                       "': expected positive extents separated by 'x', "
                       "like 4x4x4 (or a device count for a switch)");
    extents.push_back(extent);
  }
  return get(hw, extents);
}

llvm::Expected<Topology> Topology::getDefault(const HardwareDescription &hw,
                                              int64_t numDevices) {
  if (numDevices < 1)
    return makeError(llvm::formatv(
        "cannot build a topology of {0} devices; need at least one",
        numDevices));
  if (numDevices > kMaxDevices)
    return makeError(llvm::formatv(
        "cannot build a topology of {0} devices; at most {1} are supported",
        numDevices, kMaxDevices));
  if (hw.interconnect == InterconnectKind::Switch)
    return get(hw, {numDevices});
  if (hw.torusRank == 0)
    return makeError("hardware " + hw.name + " is a torus of rank 0");

  // Prime factors, largest first, each given to the dimension with the
  // smallest extent so far (the lowest-numbered on a tie): powers of two
  // spread as evenly as they can, e.g. 2^11 over three dimensions ends as
  // 16x16x8, and other factors still give near-equal extents.
  llvm::SmallVector<int64_t, 16> factors;
  int64_t rest = numDevices;
  for (int64_t p = 2; p * p <= rest; ++p)
    while (rest % p == 0) {
      factors.push_back(p);
      rest /= p;
    }
  if (rest > 1)
    factors.push_back(rest);
  std::sort(factors.begin(), factors.end(), std::greater<int64_t>());

  llvm::SmallVector<int64_t, 3> extents(hw.torusRank, 1);
  for (int64_t factor : factors)
    *std::min_element(extents.begin(), extents.end()) *= factor;
  std::sort(extents.begin(), extents.end(), std::greater<int64_t>());
  return get(hw, extents);
}

int64_t Topology::getNumLinks() const {
  if (kind == InterconnectKind::Switch)
    return 2 * numDevices;
  return numDevices * static_cast<int64_t>(extents.size()) * 2;
}

std::string Topology::dimensionName(int64_t dim) {
  if (dim < 3)
    return std::string(1, "xyz"[dim]);
  return "d" + std::to_string(dim);
}

std::string Topology::describe() const {
  if (kind == InterconnectKind::Switch)
    return llvm::formatv("{0}-device switch", numDevices).str();
  std::string result = joinExtents(extents) + " torus";
  if (hasWrapAround())
    return result;
  llvm::SmallVector<std::string, 3> wrapping;
  for (unsigned dim = 0; dim < extents.size(); ++dim)
    if (wraps[dim])
      wrapping.push_back(dimensionName(dim));
  if (wrapping.empty())
    return result + " without wrap-around";
  return result + " with wrap-around on " + llvm::join(wrapping, ", ") +
         " only";
}

std::string Topology::describeLink(int64_t link) const {
  assert(link >= 0 && link < getNumLinks() && "link out of range");
  if (kind == InterconnectKind::Switch)
    return llvm::formatv("{0} {1}", link / 2, link % 2 ? "ingress" : "egress")
        .str();
  int64_t rank = static_cast<int64_t>(extents.size());
  int64_t device = link / 2 / rank;
  int64_t dim = link / 2 % rank;
  std::string result = "(";
  llvm::raw_string_ostream os(result);
  llvm::interleave(coordinates(device), os, ",");
  os << ") " << dimensionName(dim) << (link % 2 ? "-" : "+");
  return result;
}

llvm::SmallVector<int64_t, 3> Topology::coordinates(int64_t device) const {
  assert(device >= 0 && device < numDevices && "device out of range");
  llvm::SmallVector<int64_t, 3> coords(extents.size());
  for (size_t i = extents.size(); i-- > 0;) {
    coords[i] = device % extents[i];
    device /= extents[i];
  }
  return coords;
}

int64_t Topology::deviceAt(llvm::ArrayRef<int64_t> coordinates) const {
  assert(coordinates.size() == extents.size() && "wrong rank");
  int64_t device = 0;
  for (auto [coord, extent] : llvm::zip_equal(coordinates, extents)) {
    assert(coord >= 0 && coord < extent && "coordinate out of range");
    device = device * extent + coord;
  }
  return device;
}

void Topology::route(int64_t src, int64_t dst,
                     llvm::SmallVectorImpl<int64_t> &links, bool tiesNegative,
                     unsigned firstDim) const {
  links.clear();
  if (src == dst)
    return;
  if (kind == InterconnectKind::Switch) {
    links.push_back(2 * src);
    links.push_back(2 * dst + 1);
    return;
  }
  int64_t rank = static_cast<int64_t>(extents.size());
  llvm::SmallVector<int64_t, 3> cur = coordinates(src);
  llvm::SmallVector<int64_t, 3> target = coordinates(dst);
  // Row-major strides, to step the device id along one dimension.
  llvm::SmallVector<int64_t, 3> strides(rank, 1);
  for (int64_t d = rank - 1; d > 0; --d)
    strides[d - 1] = strides[d] * extents[d];

  int64_t device = src;
  for (int64_t i = 0; i < rank; ++i) {
    int64_t d = (firstDim + i) % rank;
    int64_t n = extents[d];
    if (cur[d] == target[d])
      continue;
    int64_t forward = ((target[d] - cur[d]) % n + n) % n;
    bool negative;
    int64_t steps;
    if (wraps[d]) {
      negative = tiesNegative ? forward >= n - forward : forward > n - forward;
      steps = negative ? n - forward : forward;
    } else {
      negative = target[d] < cur[d];
      steps = negative ? cur[d] - target[d] : target[d] - cur[d];
    }
    for (int64_t s = 0; s < steps; ++s) {
      links.push_back((device * rank + d) * 2 + (negative ? 1 : 0));
      int64_t next = negative ? (cur[d] + n - 1) % n : (cur[d] + 1) % n;
      device += (next - cur[d]) * strides[d];
      cur[d] = next;
    }
  }
  assert(device == dst && "route does not arrive");
}

void Topology::routes(
    int64_t src, int64_t dst,
    llvm::SmallVectorImpl<llvm::SmallVector<int64_t, 8>> &result,
    bool tiesNegative) const {
  result.clear();
  if (src == dst)
    return;
  llvm::SmallVector<unsigned, 3> differing;
  if (kind == InterconnectKind::Torus) {
    llvm::SmallVector<int64_t, 3> a = coordinates(src), b = coordinates(dst);
    for (unsigned d = 0; d < a.size(); ++d)
      if (a[d] != b[d])
        differing.push_back(d);
  }
  if (differing.size() <= 1) {
    result.emplace_back();
    route(src, dst, result.back(), tiesNegative);
    return;
  }
  for (unsigned first : differing) {
    result.emplace_back();
    route(src, dst, result.back(), tiesNegative, first);
  }
}

int64_t Topology::hops(int64_t src, int64_t dst) const {
  if (src == dst)
    return 0;
  if (kind == InterconnectKind::Switch)
    return 1;
  int64_t total = 0;
  for (size_t i = extents.size(); i-- > 0;) {
    int64_t n = extents[i];
    int64_t a = src % n, b = dst % n;
    src /= n;
    dst /= n;
    int64_t distance = a > b ? a - b : b - a;
    if (wraps[i])
      distance = std::min(distance, n - distance);
    total += distance;
  }
  return total;
}

//===----------------------------------------------------------------------===//
// DeviceAssignment
//===----------------------------------------------------------------------===//

static std::string describeGrid(llvm::ArrayRef<int64_t> gridShape) {
  return "[" +
         llvm::join(
             llvm::map_range(gridShape,
                             [](int64_t e) {
                               // MLIR's marker of a dynamic extent.
                               return e == std::numeric_limits<int64_t>::min()
                                          ? std::string("?")
                                          : std::to_string(e);
                             }),
             ", ") +
         "]";
}

llvm::Expected<int64_t>
mlir::ovl::getGridSize(llvm::ArrayRef<int64_t> gridShape) {
  int64_t size = 1;
  bool overflows = false;
  for (int64_t extent : gridShape) {
    if (extent == std::numeric_limits<int64_t>::min())
      return makeError(llvm::formatv(
          "grid shape {0} is dynamic; a machine needs every extent",
          describeGrid(gridShape)));
    if (extent < 1)
      return makeError(llvm::formatv(
          "grid shape {0} has extent {1}; extents must be positive",
          describeGrid(gridShape), extent));
    overflows |= __builtin_mul_overflow(size, extent, &size);
  }
  if (overflows)
    return makeError(llvm::formatv(
        "grid {0} has more than 2^63 devices; at most {1} are supported",
        describeGrid(gridShape), kMaxDevices));
  if (size > kMaxDevices)
    return makeError(
        llvm::formatv("grid {0} has {1} devices; at most {2} are supported",
                      describeGrid(gridShape), size, kMaxDevices));
  return size;
}

llvm::Expected<DeviceAssignment>
DeviceAssignment::rowMajor(llvm::ArrayRef<int64_t> gridShape,
                           const Topology &topology) {
  llvm::Expected<int64_t> size = getGridSize(gridShape);
  if (!size)
    return size.takeError();
  if (*size > topology.getNumDevices())
    return makeError(
        llvm::formatv("grid {0} has {1} devices but topology {2} has only {3}",
                      describeGrid(gridShape), *size, topology.describe(),
                      topology.getNumDevices()));
  std::vector<int64_t> physical(*size);
  for (int64_t i = 0; i < *size; ++i)
    physical[i] = i;
  DeviceAssignment assignment;
  assignment.gridShape.assign(gridShape.begin(), gridShape.end());
  assignment.placement = std::move(physical);
  return assignment;
}

llvm::Expected<DeviceAssignment>
DeviceAssignment::fromList(llvm::ArrayRef<int64_t> gridShape,
                           const Topology &topology,
                           llvm::ArrayRef<int64_t> physical) {
  llvm::Expected<int64_t> size = getGridSize(gridShape);
  if (!size)
    return size.takeError();
  if (static_cast<int64_t>(physical.size()) != *size)
    return makeError(llvm::formatv(
        "device assignment lists {0} physical devices but grid {1} has {2}",
        physical.size(), describeGrid(gridShape), *size));
  std::vector<int64_t> owner(topology.getNumDevices(), -1);
  for (auto [logical, phys] : llvm::enumerate(physical)) {
    if (phys < 0 || phys >= topology.getNumDevices())
      return makeError(llvm::formatv(
          "device assignment entry {0} is physical device {1}, outside "
          "topology {2} of {3} devices",
          logical, phys, topology.describe(), topology.getNumDevices()));
    if (owner[phys] >= 0)
      return makeError(llvm::formatv(
          "device assignment entry {0} is physical device {1}, already "
          "taken by entry {2}",
          logical, phys, owner[phys]));
    owner[phys] = static_cast<int64_t>(logical);
  }
  DeviceAssignment assignment;
  assignment.gridShape.assign(gridShape.begin(), gridShape.end());
  assignment.placement.assign(physical.begin(), physical.end());
  return assignment;
}

int64_t DeviceAssignment::getNumLogicalDevices() const {
  return static_cast<int64_t>(placement.size());
}

/// The stride of grid axis `axis` in the row-major numbering of logical
/// devices.
static int64_t axisStride(llvm::ArrayRef<int64_t> gridShape, int16_t axis) {
  int64_t stride = 1;
  for (size_t i = axis + 1; i < gridShape.size(); ++i)
    stride *= gridShape[i];
  return stride;
}

int64_t DeviceAssignment::groupSize(llvm::ArrayRef<int16_t> axes) const {
  int64_t size = 1;
  for (int16_t axis : axes) {
    assert(axis >= 0 && static_cast<size_t>(axis) < gridShape.size() &&
           "axis out of range");
    size *= gridShape[axis];
  }
  return size;
}

int64_t DeviceAssignment::groupIndex(int64_t logical,
                                     llvm::ArrayRef<int16_t> axes) const {
  int64_t index = 0;
  for (int16_t axis : axes) {
    assert(axis >= 0 && static_cast<size_t>(axis) < gridShape.size() &&
           "axis out of range");
    int64_t coord = logical / axisStride(gridShape, axis) % gridShape[axis];
    index = index * gridShape[axis] + coord;
  }
  return index;
}

int64_t DeviceAssignment::groupMember(int64_t logical,
                                      llvm::ArrayRef<int16_t> axes,
                                      int64_t index) const {
  assert(index >= 0 && index < groupSize(axes) && "index out of range");
  int64_t member = logical;
  for (size_t i = axes.size(); i-- > 0;) {
    int16_t axis = axes[i];
    int64_t extent = gridShape[axis];
    int64_t stride = axisStride(gridShape, axis);
    int64_t coord = member / stride % extent;
    member += (index % extent - coord) * stride;
    index /= extent;
  }
  return member;
}
