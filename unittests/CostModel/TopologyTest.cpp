//===- TopologyTest.cpp - Tori, switches and device assignments -----------===//
//
// Building topologies (given, parsed, default extents) and their errors, the
// wrap-around rule, link numbering and dimension-order routes on tori with
// and without wrap-around and on a switch, and device assignments: row-major
// and listed placements, their errors and group arithmetic over several
// axes. How a placement shapes a collective is CollectivePlanTest's.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/CostModel/Topology.h"

#include "gtest/gtest.h"

using namespace mlir::ovl;

namespace {

HardwareDescription tpuV4() { return *lookupHardware("tpu-v4"); }
HardwareDescription h100() { return *lookupHardware("h100-nvlink"); }

/// The error message of `value`, or "" when it succeeded.
template <typename T> std::string errorOf(llvm::Expected<T> value) {
  if (value)
    return "";
  return llvm::toString(value.takeError());
}

Topology mustParse(const HardwareDescription &hw, llvm::StringRef spec) {
  llvm::Expected<Topology> topology = Topology::parse(hw, spec);
  EXPECT_TRUE(static_cast<bool>(topology)) << errorOf(std::move(topology));
  if (!topology)
    return Topology();
  return std::move(*topology);
}

DeviceAssignment mustRowMajor(llvm::ArrayRef<int64_t> grid,
                              const Topology &topology) {
  llvm::Expected<DeviceAssignment> assignment =
      DeviceAssignment::rowMajor(grid, topology);
  EXPECT_TRUE(static_cast<bool>(assignment)) << errorOf(std::move(assignment));
  if (!assignment)
    return DeviceAssignment();
  return std::move(*assignment);
}

std::vector<int64_t> defaultExtents(const HardwareDescription &hw,
                                    int64_t numDevices) {
  llvm::Expected<Topology> topology = Topology::getDefault(hw, numDevices);
  if (!topology) {
    ADD_FAILURE() << llvm::toString(topology.takeError());
    return {};
  }
  return std::vector<int64_t>(topology->getExtents().begin(),
                              topology->getExtents().end());
}

std::vector<int64_t> routeOf(const Topology &topology, int64_t src,
                             int64_t dst) {
  llvm::SmallVector<int64_t, 8> links;
  topology.route(src, dst, links);
  return std::vector<int64_t>(links.begin(), links.end());
}

TEST(TopologyTest, ParseAndGet) {
  Topology cube = mustParse(tpuV4(), "4x4x8");
  EXPECT_EQ(cube.getKind(), InterconnectKind::Torus);
  EXPECT_EQ(cube.getExtents(), llvm::ArrayRef<int64_t>({4, 4, 8}));
  EXPECT_EQ(cube.getNumDevices(), 128);
  EXPECT_EQ(cube.getNumLinks(), 128 * 3 * 2);
  EXPECT_EQ(cube.describe(), "4x4x8 torus");

  Topology node = mustParse(h100(), "8");
  EXPECT_EQ(node.getKind(), InterconnectKind::Switch);
  EXPECT_EQ(node.getNumDevices(), 8);
  EXPECT_EQ(node.getNumLinks(), 16);
  EXPECT_EQ(node.describe(), "8-device switch");
}

TEST(TopologyTest, ParseAndGetErrors) {
  EXPECT_EQ(errorOf(Topology::parse(tpuV4(), "4x4")),
            "topology '4x4' has 2 dimensions but tpu-v4 has a 3-D torus");
  EXPECT_EQ(errorOf(Topology::get(tpuV4(), {4, 4, 4, 4})),
            "topology '4x4x4x4' has 4 dimensions but tpu-v4 has a 3-D torus");
  EXPECT_EQ(errorOf(Topology::parse(h100(), "2x4")),
            "topology '2x4' has 2 dimensions but h100-nvlink is a switch, "
            "which takes a single device count");
  EXPECT_EQ(errorOf(Topology::parse(tpuV4(), "0x4x4")),
            "topology '0x4x4' has extent 0; extents must be positive");
  for (llvm::StringRef bad : {"", "4x", "4xax4", "4x-4x4", "4,4,4", "x4x4"}) {
    SCOPED_TRACE(bad.str());
    std::string message = errorOf(Topology::parse(tpuV4(), bad));
    EXPECT_NE(message.find("invalid topology '" + bad.str() + "'"),
              std::string::npos)
        << message;
  }
  EXPECT_NE(errorOf(Topology::getDefault(tpuV4(), 0))
                .find("cannot build a topology of 0 devices"),
            std::string::npos);
  EXPECT_NE(errorOf(Topology::getDefault(h100(), -3)), "");
}

TEST(TopologyTest, DefaultExtents) {
  HardwareDescription v4 = tpuV4();
  EXPECT_EQ(defaultExtents(v4, 64), std::vector<int64_t>({4, 4, 4}));
  EXPECT_EQ(defaultExtents(v4, 2048), std::vector<int64_t>({16, 16, 8}));
  EXPECT_EQ(defaultExtents(v4, 8), std::vector<int64_t>({2, 2, 2}));
  EXPECT_EQ(defaultExtents(v4, 128), std::vector<int64_t>({8, 4, 4}));
  EXPECT_EQ(defaultExtents(v4, 2), std::vector<int64_t>({2, 1, 1}));
  EXPECT_EQ(defaultExtents(v4, 1), std::vector<int64_t>({1, 1, 1}));
  // Not powers of two: still near-equal, largest first.
  EXPECT_EQ(defaultExtents(v4, 12), std::vector<int64_t>({3, 2, 2}));
  EXPECT_EQ(defaultExtents(v4, 48), std::vector<int64_t>({4, 4, 3}));
  EXPECT_EQ(defaultExtents(v4, 7), std::vector<int64_t>({7, 1, 1}));
  HardwareDescription v5e = *lookupHardware("tpu-v5e");
  EXPECT_EQ(defaultExtents(v5e, 16), std::vector<int64_t>({4, 4}));
  EXPECT_EQ(defaultExtents(v5e, 32), std::vector<int64_t>({8, 4}));
  EXPECT_EQ(defaultExtents(h100(), 8), std::vector<int64_t>({8}));
}

TEST(TopologyTest, WrapAroundRule) {
  HardwareDescription v4 = tpuV4();
  EXPECT_TRUE(mustParse(v4, "4x4x4").hasWrapAround());
  EXPECT_TRUE(mustParse(v4, "4x8x16").hasWrapAround());
  EXPECT_FALSE(mustParse(v4, "2x2x2").hasWrapAround());
  EXPECT_FALSE(mustParse(v4, "4x4x2").hasWrapAround());
  EXPECT_EQ(mustParse(v4, "2x2x2").describe(),
            "2x2x2 torus without wrap-around");
  EXPECT_TRUE(mustParse(h100(), "8").hasWrapAround());
}

TEST(TopologyTest, WrapAroundPerDimensionOnV5e) {
  // An 8x16 v5e slice wraps along its 16-long axis only: routes along y
  // take the short way round, along x they walk the line.
  HardwareDescription v5e = *lookupHardware("tpu-v5e");
  Topology slice = mustParse(v5e, "8x16");
  EXPECT_FALSE(slice.hasWrapAround());
  EXPECT_FALSE(slice.wrapsDimension(0));
  EXPECT_TRUE(slice.wrapsDimension(1));
  EXPECT_EQ(slice.describe(), "8x16 torus with wrap-around on y only");
  EXPECT_EQ(slice.hops(slice.deviceAt({0, 0}), slice.deviceAt({0, 15})), 1);
  EXPECT_EQ(slice.hops(slice.deviceAt({0, 0}), slice.deviceAt({7, 0})), 7);
  EXPECT_TRUE(mustParse(v5e, "16x16").hasWrapAround());
}

TEST(TopologyTest, CoordinatesAreRowMajor) {
  Topology topology = mustParse(tpuV4(), "2x3x4");
  EXPECT_EQ(topology.coordinates(0), llvm::SmallVector<int64_t>({0, 0, 0}));
  EXPECT_EQ(topology.coordinates(1), llvm::SmallVector<int64_t>({0, 0, 1}));
  EXPECT_EQ(topology.coordinates(4), llvm::SmallVector<int64_t>({0, 1, 0}));
  EXPECT_EQ(topology.coordinates(23), llvm::SmallVector<int64_t>({1, 2, 3}));
  for (int64_t d = 0; d < topology.getNumDevices(); ++d)
    EXPECT_EQ(topology.deviceAt(topology.coordinates(d)), d);
}

TEST(TopologyTest, RoutesWithWrapAroundGoTheShorterWay) {
  Topology topology = mustParse(tpuV4(), "4x4x4");
  // (0,0,0) -> (0,0,3): one hop backwards along z, link (0*3+2)*2+1.
  EXPECT_EQ(routeOf(topology, 0, 3), std::vector<int64_t>({5}));
  EXPECT_EQ(topology.describeLink(5), "(0,0,0) z-");
  // (0,0,0) -> (2,1,3): x first, two hops forward (a tie goes positive),
  // then y forward, then z one hop backwards round the wrap.
  int64_t dst = topology.deviceAt({2, 1, 3});
  std::vector<int64_t> expected = {
      (0 * 3 + 0) * 2,      // (0,0,0) x+
      (16 * 3 + 0) * 2,     // (1,0,0) x+
      (32 * 3 + 1) * 2,     // (2,0,0) y+
      (36 * 3 + 2) * 2 + 1, // (2,1,0) z-
  };
  EXPECT_EQ(routeOf(topology, 0, dst), expected);
  EXPECT_EQ(topology.hops(0, dst), 4);
  EXPECT_EQ(topology.describeLink(expected[3]), "(2,1,0) z-");
  EXPECT_EQ(topology.describeLink(expected[2]), "(2,0,0) y+");
  EXPECT_TRUE(routeOf(topology, 7, 7).empty());
  EXPECT_EQ(topology.hops(7, 7), 0);
  // Going back from (2,1,3) to the origin: x two hops forward (tie, via
  // the wrap), y back, z forward via the wrap.
  EXPECT_EQ(topology.hops(dst, 0), 4);
  EXPECT_EQ(routeOf(topology, dst, 0).front(), (dst * 3 + 0) * 2);
}

TEST(TopologyTest, RoutesWithoutWrapAroundFollowTheLine) {
  Topology topology = mustParse(tpuV4(), "4x4x2");
  ASSERT_FALSE(topology.hasWrapAround());
  int64_t end = topology.deviceAt({3, 0, 0});
  // Three hops forward along x, and three back: no link closes the line.
  EXPECT_EQ(routeOf(topology, 0, end),
            std::vector<int64_t>({0, (8 * 3) * 2, (16 * 3) * 2}));
  EXPECT_EQ(routeOf(topology, end, 0),
            std::vector<int64_t>(
                {(24 * 3) * 2 + 1, (16 * 3) * 2 + 1, (8 * 3) * 2 + 1}));
  EXPECT_EQ(topology.hops(end, 0), 3);
  EXPECT_EQ(topology.hops(0, topology.deviceAt({3, 3, 1})), 7);
}

TEST(TopologyTest, RoutesArriveAndHopsAgree) {
  for (llvm::StringRef spec : {"4x4x4", "2x3x4", "4x4x2", "1x5x3"}) {
    SCOPED_TRACE(spec.str());
    Topology topology = mustParse(tpuV4(), spec);
    llvm::SmallVector<int64_t, 3> extents(topology.getExtents());
    int64_t rank = extents.size();
    for (int64_t src = 0; src < topology.getNumDevices(); ++src) {
      for (int64_t dst = 0; dst < topology.getNumDevices(); ++dst) {
        std::vector<int64_t> links = routeOf(topology, src, dst);
        ASSERT_EQ(static_cast<int64_t>(links.size()), topology.hops(src, dst));
        // Walk the links: each leaves the device the previous one reached.
        llvm::SmallVector<int64_t, 3> at = topology.coordinates(src);
        for (int64_t link : links) {
          ASSERT_EQ(link / 2 / rank, topology.deviceAt(at));
          int64_t dim = link / 2 % rank;
          int64_t next = at[dim] + (link % 2 ? -1 : 1);
          if (!topology.hasWrapAround())
            ASSERT_TRUE(next >= 0 && next < extents[dim]) << "missing link";
          at[dim] = (next + extents[dim]) % extents[dim];
        }
        ASSERT_EQ(topology.deviceAt(at), dst);
      }
    }
  }
}

TEST(TopologyTest, SwitchRoutesThroughEgressAndIngress) {
  Topology topology = mustParse(h100(), "8");
  EXPECT_EQ(routeOf(topology, 1, 5), std::vector<int64_t>({2, 11}));
  EXPECT_EQ(topology.hops(1, 5), 1);
  EXPECT_EQ(topology.hops(7, 0), 1);
  EXPECT_TRUE(routeOf(topology, 3, 3).empty());
  EXPECT_EQ(topology.hops(3, 3), 0);
  EXPECT_EQ(topology.describeLink(2), "1 egress");
  EXPECT_EQ(topology.describeLink(11), "5 ingress");
}

TEST(TopologyTest, RowMajorMapsGridAxesOntoTrailingDimensions) {
  Topology topology = mustParse(tpuV4(), "4x4x4");
  DeviceAssignment assignment = mustRowMajor({16, 4}, topology);
  EXPECT_EQ(assignment.getNumLogicalDevices(), 64);
  for (int64_t d = 0; d < 64; ++d)
    EXPECT_EQ(assignment.physical(d), d);
  // Axis 1 (4 devices) runs along z: neighbours one hop apart.
  int64_t logical = 21; // grid (5, 1)
  for (int64_t i = 0; i < 4; ++i) {
    int64_t member = assignment.groupMember(logical, {1}, i);
    llvm::SmallVector<int64_t, 3> coords =
        topology.coordinates(assignment.physical(member));
    EXPECT_EQ(coords, llvm::SmallVector<int64_t>({1, 1, i}));
  }
  // Axis 0 (16 devices) covers x and y.
  for (int64_t i = 0; i < 16; ++i) {
    int64_t member = assignment.groupMember(logical, {0}, i);
    llvm::SmallVector<int64_t, 3> coords =
        topology.coordinates(assignment.physical(member));
    EXPECT_EQ(coords, llvm::SmallVector<int64_t>({i / 4, i % 4, 1}));
  }

  EXPECT_NE(errorOf(DeviceAssignment::rowMajor({16, 8}, topology))
                .find("grid [16, 8] has 128 devices but topology 4x4x4 "
                      "torus has only 64"),
            std::string::npos);
  EXPECT_NE(errorOf(DeviceAssignment::rowMajor({0, 8}, topology)), "");
}

TEST(TopologyTest, FromListPlacesAndChecks) {
  Topology topology = mustParse(tpuV4(), "2x2x2");
  llvm::Expected<DeviceAssignment> reversed =
      DeviceAssignment::fromList({2, 4}, topology, {7, 6, 5, 4, 3, 2, 1, 0});
  ASSERT_TRUE(static_cast<bool>(reversed)) << errorOf(std::move(reversed));
  EXPECT_EQ(reversed->physical(0), 7);
  EXPECT_EQ(reversed->physical(6), 1);
  EXPECT_EQ(reversed->getGridShape(), llvm::ArrayRef<int64_t>({2, 4}));

  EXPECT_EQ(errorOf(DeviceAssignment::fromList({2, 2}, topology, {0, 1, 2, 1})),
            "device assignment entry 3 is physical device 1, already taken by "
            "entry 1");
  EXPECT_EQ(errorOf(DeviceAssignment::fromList({2, 2}, topology, {0, 1, 8, 2})),
            "device assignment entry 2 is physical device 8, outside topology "
            "2x2x2 torus without wrap-around of 8 devices");
  EXPECT_EQ(
      errorOf(DeviceAssignment::fromList({2, 2}, topology, {0, -1, 2, 3})),
      "device assignment entry 1 is physical device -1, outside topology "
      "2x2x2 torus without wrap-around of 8 devices");
  EXPECT_EQ(errorOf(DeviceAssignment::fromList({2, 2}, topology, {0, 1, 2})),
            "device assignment lists 3 physical devices but grid [2, 2] has 4");
}

TEST(TopologyTest, GroupsOverSeveralAxes) {
  Topology topology = mustParse(tpuV4(), "2x3x4");
  DeviceAssignment assignment = mustRowMajor({2, 3, 4}, topology);
  // Logical (a, b, c) is a * 12 + b * 4 + c. Over axes {2, 0} the group
  // index is c * 2 + a, listed order, last axis fastest.
  EXPECT_EQ(assignment.groupSize({2, 0}), 8);
  EXPECT_EQ(assignment.groupIndex(23, {2, 0}), 3 * 2 + 1);
  EXPECT_EQ(assignment.groupIndex(23, {0, 2}), 1 * 4 + 3);
  EXPECT_EQ(assignment.groupIndex(23, {1}), 2);
  EXPECT_EQ(assignment.groupIndex(23, {}), 0);
  EXPECT_EQ(assignment.groupMember(23, {2, 0}, 0), 8);  // (0, 2, 0)
  EXPECT_EQ(assignment.groupMember(23, {2, 0}, 5), 22); // (1, 2, 2)
  EXPECT_EQ(assignment.groupMember(23, {0, 2}, 5), 21); // (1, 2, 1)

  const std::vector<std::vector<int16_t>> axesLists = {
      {0}, {1}, {2}, {0, 1}, {1, 0}, {2, 0}, {0, 1, 2}, {2, 1, 0}};
  for (const std::vector<int16_t> &axes : axesLists) {
    int64_t size = assignment.groupSize(axes);
    for (int64_t d = 0; d < 24; ++d) {
      for (int64_t i = 0; i < size; ++i) {
        int64_t member = assignment.groupMember(d, axes, i);
        ASSERT_EQ(assignment.groupIndex(member, axes), i);
        // Coordinates off the group's axes are those of `d`.
        llvm::SmallVector<int64_t, 3> a = topology.coordinates(d);
        llvm::SmallVector<int64_t, 3> b = topology.coordinates(member);
        for (int16_t axis = 0; axis < 3; ++axis)
          if (!llvm::is_contained(axes, axis))
            ASSERT_EQ(a[axis], b[axis]);
      }
      ASSERT_EQ(assignment.groupMember(d, axes, assignment.groupIndex(d, axes)),
                d);
    }
  }
}

} // namespace
