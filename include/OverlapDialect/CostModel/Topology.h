//===- Topology.h - Physical interconnect and device placement --*- C++ -*-===//
//
// Where devices sit and how a transfer gets from one to another: a torus of
// chips (TPU ICI) with or without wrap-around links, or a switch (NVSwitch)
// through which every device reaches every other in one hop. A
// DeviceAssignment places the logical devices of a `shard.grid` onto the
// physical ones, by default row-major; with it a grid axis maps to torus
// dimensions and a group's ring to concrete links. No MLIR IR here.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAPDIALECT_COSTMODEL_TOPOLOGY_H
#define OVERLAPDIALECT_COSTMODEL_TOPOLOGY_H

#include "OverlapDialect/CostModel/CostModel.h"
#include "OverlapDialect/CostModel/Hardware.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir {
namespace ovl {

/// The physical devices and their directed links.
///
/// Torus: devices are numbered row-major over `extents` (the last dimension
/// fastest). Every device has one outgoing link per dimension and direction;
/// link id `(device * rank + dim) * 2 + (negative ? 1 : 0)` leaves `device`
/// along `dim`. Without wrap-around the links leaving the ends of a line do
/// not exist and routes never use them.
///
/// Switch: link `2 * d` is device d's egress, `2 * d + 1` its ingress; every
/// route is {egress(src), ingress(dst)}, one hop.
class Topology {
public:
  /// A topology of `extents` for `hw`: a torus needs hw.torusRank extents
  /// (wrap-around from hw.hasWrapAround), a switch exactly one.
  static llvm::Expected<Topology> get(const HardwareDescription &hw,
                                      llvm::ArrayRef<int64_t> extents);
  /// Parses "AxBxC" and calls get().
  static llvm::Expected<Topology> parse(const HardwareDescription &hw,
                                        llvm::StringRef spec);
  /// The default topology for `numDevices` devices of `hw`: a switch of
  /// that many; for a torus the extents, each a power of two where
  /// possible, as near-equal as they can be, largest first, whose product
  /// is numDevices (e.g. 64 -> 4x4x4, 2048 -> 16x16x8 on a 3-D torus).
  static llvm::Expected<Topology> getDefault(const HardwareDescription &hw,
                                             int64_t numDevices);

  InterconnectKind getKind() const { return kind; }
  llvm::ArrayRef<int64_t> getExtents() const { return extents; }
  /// Whether every dimension wraps around.
  bool hasWrapAround() const {
    return llvm::all_of(wraps, [](bool w) { return w; });
  }
  bool wrapsDimension(unsigned dim) const { return wraps[dim]; }
  int64_t getNumDevices() const { return numDevices; }
  int64_t getNumLinks() const;
  /// "4x4x4 torus", "4x4x4 torus without wrap-around", "8x16 torus with
  /// wrap-around on y only", "8-device switch".
  std::string describe() const;
  /// "(1,2,0) x+" for torus links (dimensions named x, y, z, then d3...),
  /// "3 egress" / "3 ingress" for a switch.
  std::string describeLink(int64_t link) const;
  /// The name of torus dimension `dim`: x, y, z, then d3, d4, ...
  static std::string dimensionName(int64_t dim);

  llvm::SmallVector<int64_t, 3> coordinates(int64_t device) const;
  int64_t deviceAt(llvm::ArrayRef<int64_t> coordinates) const;

  /// The links from `src` to `dst` in order: dimension-order routing
  /// starting at dimension `firstDim` (x, then y, then z from `firstDim` = 0;
  /// y, z, x from 1), each dimension the shorter way round when it wraps
  /// (ties positive, or negative with `tiesNegative`: the backward half of a
  /// bidirectional ring of two goes round the other way). Empty when
  /// src == dst.
  void route(int64_t src, int64_t dst, llvm::SmallVectorImpl<int64_t> &links,
             bool tiesNegative = false, unsigned firstDim = 0) const;
  /// The routes a point-to-point transfer from `src` to `dst` splits over,
  /// one per port: on a torus, one dimension-order route starting at each
  /// dimension in which the two differ (the rotations of the dimension
  /// order, which share no link), each carrying an equal part of the bytes;
  /// one route on a switch or when they differ in one dimension; none when
  /// src == dst.
  void routes(int64_t src, int64_t dst,
              llvm::SmallVectorImpl<llvm::SmallVector<int64_t, 8>> &result,
              bool tiesNegative = false) const;
  int64_t hops(int64_t src, int64_t dst) const;

private:
  InterconnectKind kind = InterconnectKind::Torus;
  llvm::SmallVector<int64_t, 3> extents;
  /// Per dimension: whether its ends are linked.
  llvm::SmallVector<bool, 3> wraps;
  int64_t numDevices = 0;
};

/// The number of devices of a grid of shape `gridShape` (row-major
/// extents), or why it has none: a dynamic or non-positive extent, or more
/// devices than a machine model supports (2^20).
llvm::Expected<int64_t> getGridSize(llvm::ArrayRef<int64_t> gridShape);

/// Where each logical device of a grid sits on a Topology. Logical devices
/// are numbered row-major over the grid shape (the runtime's device ids); a
/// device's index in a group along `axes` is the row-major linearization of
/// its coordinates along those axes, in the listed order.
class DeviceAssignment {
public:
  /// Logical device i on physical device i: with the grid shape and the
  /// torus extents both row-major, a grid axis whose size equals the product
  /// of trailing torus extents lands on those dimensions.
  static llvm::Expected<DeviceAssignment>
  rowMajor(llvm::ArrayRef<int64_t> gridShape, const Topology &topology);
  /// `physical[i]` is the physical device of logical device i; must be
  /// injective and within the topology. Errors name the offending entry.
  static llvm::Expected<DeviceAssignment>
  fromList(llvm::ArrayRef<int64_t> gridShape, const Topology &topology,
           llvm::ArrayRef<int64_t> physical);

  llvm::ArrayRef<int64_t> getGridShape() const { return gridShape; }
  int64_t getNumLogicalDevices() const;
  int64_t physical(int64_t logical) const { return placement[logical]; }

  int64_t groupSize(llvm::ArrayRef<int16_t> axes) const;
  int64_t groupIndex(int64_t logical, llvm::ArrayRef<int16_t> axes) const;
  /// The logical device at group index `index` of the group along `axes`
  /// that contains `logical`.
  int64_t groupMember(int64_t logical, llvm::ArrayRef<int16_t> axes,
                      int64_t index) const;

private:
  llvm::SmallVector<int64_t, 4> gridShape;
  std::vector<int64_t> placement;
};

} // namespace ovl
} // namespace mlir

#endif // OVERLAPDIALECT_COSTMODEL_TOPOLOGY_H
