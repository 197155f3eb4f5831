//===- GroupTest.cpp - Group arithmetic and permutation pairs -------------===//
//
// The layout of groups on grids of one to three dimensions against
// hand-computed members and indices, the validation of groups and pairs,
// and the routes a permutation gives each device.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

using namespace ovlrt;
using namespace ovlrt::test;

namespace {

using Ids = std::vector<int64_t>;

TEST(GroupLayoutTest, TwoByFourGrid) {
  // Device 5 sits at (1, 1) of the 2x4 grid.
  Group rows{{2, 4}, {1}};
  EXPECT_EQ(layoutGroup(rows, 5).index, 1);
  EXPECT_EQ(layoutGroup(rows, 5).members, (Ids{4, 5, 6, 7}));
  Group columns{{2, 4}, {0}};
  EXPECT_EQ(layoutGroup(columns, 5).index, 1);
  EXPECT_EQ(layoutGroup(columns, 5).members, (Ids{1, 5}));
  Group both{{2, 4}, {0, 1}};
  EXPECT_EQ(layoutGroup(both, 5).index, 5);
  EXPECT_EQ(layoutGroup(both, 5).members, (Ids{0, 1, 2, 3, 4, 5, 6, 7}));
  // Axis 1 major: index = 1 * 2 + 1.
  Group reversed{{2, 4}, {1, 0}};
  EXPECT_EQ(layoutGroup(reversed, 5).index, 3);
  EXPECT_EQ(layoutGroup(reversed, 5).members, (Ids{0, 4, 1, 5, 2, 6, 3, 7}));
  Group alone{{2, 4}, {}};
  EXPECT_EQ(layoutGroup(alone, 5).index, 0);
  EXPECT_EQ(layoutGroup(alone, 5).members, (Ids{5}));
}

TEST(GroupLayoutTest, ThreeDimensionalGrid) {
  // Grid 2x3x2: device 9 = (1, 1, 1).
  Group group{{2, 3, 2}, {2, 0}};
  GroupLayout layout = layoutGroup(group, 9);
  // Coordinates (z, x) = (1, 1) along axes [2, 0]: index 1 * 2 + 1.
  EXPECT_EQ(layout.index, 3);
  // y stays 1: (x, z) = (0,0), (1,0), (0,1), (1,1) -> 2, 8, 3, 9.
  EXPECT_EQ(layout.members, (Ids{2, 8, 3, 9}));
}

TEST(GroupLayoutTest, MatchesTheTestsExpectations) {
  for (const Ids &grid : {Ids{2, 2}, Ids{2, 4}})
    for (const Ids &axes : {Ids{}, Ids{0}, Ids{1}, Ids{0, 1}, Ids{1, 0}})
      for (int64_t device = 0; device < product(grid); ++device) {
        GroupLayout layout = layoutGroup({grid, axes}, device);
        ExpectedGroup expected = expectedGroup(grid, axes, device);
        EXPECT_EQ(layout.index, expected.index);
        EXPECT_EQ(layout.members, expected.members);
      }
}

TEST(GroupCheckTest, ReportsInvalidGroups) {
  EXPECT_EQ(checkGroup({{2, 4}, {1, 0}}, 8), "");
  EXPECT_EQ(checkGroup({{2, 4}, {}}, 8), "");
  EXPECT_EQ(checkGroup({{2, 4}, {0}}, 4),
            "grid shape [2, 4] has 8 devices but the world has 4");
  EXPECT_EQ(checkGroup({{2, 4}, {2}}, 8),
            "grid axis 2 is out of range for grid [2, 4]");
  EXPECT_EQ(checkGroup({{2, 4}, {-1}}, 8),
            "grid axis -1 is out of range for grid [2, 4]");
  EXPECT_EQ(checkGroup({{2, 4}, {1, 1}}, 8),
            "grid axis 1 is listed twice in [1, 1]");
  EXPECT_EQ(checkGroup({{0, 4}, {0}}, 0),
            "grid shape [0, 4] has a non-positive size");
}

TEST(PairsTest, AcceptsPermutationsOnly) {
  auto check = [](const Ids &flat, int64_t n) {
    return checkPairs(pairsOf(flat), n);
  };
  EXPECT_EQ(check({0, 1, 1, 2, 2, 0}, 3), "");
  EXPECT_EQ(check({0, 0}, 1), "");
  EXPECT_EQ(check({0, 1, 1, 3}, 3),
            "pair 1->3 is out of range for a group of 3 devices");
  EXPECT_EQ(check({-1, 0}, 3),
            "pair -1->0 is out of range for a group of 3 devices");
  EXPECT_EQ(check({0, 1, 0, 2, 2, 0}, 3),
            "group index 0 is the source of more than one pair");
  EXPECT_EQ(check({0, 1, 2, 1, 1, 0}, 3),
            "group index 1 is the target of more than one pair");
  EXPECT_EQ(check({0, 1, 1, 0}, 3),
            "pairs [0->1, 1->0] cover 2 of the 3 devices of the group; "
            "expected a permutation of the whole group");
}

TEST(PairsTest, Routes) {
  Ids ring = shiftPairs(4, -1); // 0->3, 1->0, 2->1, 3->2
  EXPECT_EQ(ring, (Ids{0, 3, 1, 0, 2, 1, 3, 2}));
  PermuteRoute route = routeOf(pairsOf(ring), 0);
  EXPECT_EQ(route.sendTo, 3);
  EXPECT_EQ(route.receiveFrom, 1);
  route = routeOf(pairsOf(ring), 2);
  EXPECT_EQ(route.sendTo, 1);
  EXPECT_EQ(route.receiveFrom, 3);
  EXPECT_EQ(formatPairs(pairsOf(ring)), "[0->3, 1->0, 2->1, 3->2]");
}

} // namespace
