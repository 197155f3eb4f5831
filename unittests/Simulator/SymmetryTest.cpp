//===- SymmetryTest.cpp - Playing one device per orbit --------------------===//
//
// DeviceSymmetry on placements and patterns whose translations are known
// by hand (row-major grids on tori, snakes, lines without wrap-around,
// permutes that break the symmetry, shuffled placements, grids smaller than
// their torus, switches); then the simulation that plays one device per
// orbit against the brute-force one on random programs of every step kind
// on TPU v4 tori, every figure of the report bit for bit.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/Simulator/DeviceSymmetry.h"
#include "OverlapDialect/Simulator/Simulator.h"

#include "../CostModel/TestHardware.h"

#include "gtest/gtest.h"

#include <random>

using namespace mlir::ovl;
using namespace mlir::ovl::test;

namespace {

template <typename T> T mustGet(llvm::Expected<T> value) {
  EXPECT_TRUE(static_cast<bool>(value)) << llvm::toString(value.takeError());
  return std::move(*value);
}

HardwareDescription tpuV4() { return *lookupHardware("tpu-v4"); }

/// A ring along `axes` of a grid: each device sends to the member `shift`
/// group indices on.
struct Ring {
  llvm::SmallVector<int16_t, 2> axes;
  int64_t shift = 1;
};

DeviceSymmetry findFor(const Topology &topology,
                       const DeviceAssignment &assignment,
                       llvm::ArrayRef<Ring> rings) {
  return DeviceSymmetry::find(
      topology, assignment, rings.size(), [&](size_t i, int64_t logical) {
        const Ring &ring = rings[i];
        int64_t n = assignment.groupSize(ring.axes);
        int64_t index = assignment.groupIndex(logical, ring.axes);
        return assignment.groupMember(logical, ring.axes,
                                      ((index + ring.shift) % n + n) % n);
      });
}

//===----------------------------------------------------------------------===//
// Finding the symmetry
//===----------------------------------------------------------------------===//

TEST(DeviceSymmetryTest, RowMajorGridOnItsTorus) {
  // The GPT ladder's 1024B: a 256 x 8 grid on 16x16x8. The data axis snakes
  // over x and y, so only moves along x keep its ring (a move along y takes
  // its step from (x, 15) to (x+1, 0) onto one from (x, 0) to (x+1, 1),
  // which is none of its steps); the model axis is z.
  Topology topology = mustGet(Topology::get(tpuV4(), {16, 16, 8}));
  DeviceAssignment assignment =
      mustGet(DeviceAssignment::rowMajor({256, 8}, topology));
  DeviceSymmetry symmetry =
      findFor(topology, assignment, {Ring{{0}, 1}, Ring{{1}, 1}});
  EXPECT_FALSE(symmetry.isTrivial());
  EXPECT_EQ(symmetry.getSteps(), llvm::ArrayRef<int64_t>({1, 16, 1}));
  EXPECT_EQ(symmetry.getNumOrbits(), 16);
  EXPECT_EQ(symmetry.describe(),
            "2048 devices in 16 orbits of the translations by x+1, z+1");
  // The orbits are the y coordinates; each is played by its lowest device,
  // at x = 0, z = 0.
  for (uint32_t orbit = 0; orbit < 16; ++orbit)
    EXPECT_EQ(symmetry.representative(orbit), orbit * 8);
  for (int64_t logical = 0; logical < 2048; ++logical)
    EXPECT_EQ(symmetry.orbitOf(logical), logical / 8 % 16);
  // A link stands for the links leaving the devices of its orbit in its
  // dimension and direction.
  EXPECT_EQ(symmetry.getNumLinkClasses(), 16 * 3 * 2);
  auto link = [&](int64_t x, int64_t y, int64_t z, int64_t dim, bool negative) {
    return (topology.deviceAt({x, y, z}) * 3 + dim) * 2 + (negative ? 1 : 0);
  };
  EXPECT_EQ(symmetry.linkClassOf(link(5, 3, 7, 1, true)),
            symmetry.linkClassOf(link(0, 3, 0, 1, true)));
  EXPECT_NE(symmetry.linkClassOf(link(5, 3, 7, 1, true)),
            symmetry.linkClassOf(link(5, 4, 7, 1, true)));
  EXPECT_NE(symmetry.linkClassOf(link(5, 3, 7, 1, true)),
            symmetry.linkClassOf(link(5, 3, 7, 1, false)));

  // Rings that fit the torus's dimensions: every move keeps them.
  DeviceAssignment cube =
      mustGet(DeviceAssignment::rowMajor({16, 16, 8}, topology));
  DeviceSymmetry all =
      findFor(topology, cube, {Ring{{0}, 1}, Ring{{1}, -1}, Ring{{2}, 3}});
  EXPECT_EQ(all.getNumOrbits(), 1);
  EXPECT_EQ(all.getNumLinkClasses(), 6);
}

TEST(DeviceSymmetryTest, ShiftsThatSkipDevicesNeedLargerMoves) {
  // A ring of 8 along a line of 8 shifted by 2 maps to itself under every
  // move; pairs that swap neighbours (0 <-> 1, 2 <-> 3, ...) only under
  // even moves.
  Topology topology = mustGet(Topology::get(testTorus(1, 0), {8}));
  DeviceAssignment assignment =
      mustGet(DeviceAssignment::rowMajor({8}, topology));
  EXPECT_EQ(findFor(topology, assignment, {Ring{{0}, 2}}).getNumOrbits(), 1);
  DeviceSymmetry swaps =
      DeviceSymmetry::find(topology, assignment, 1,
                           [](size_t, int64_t logical) { return logical ^ 1; });
  EXPECT_EQ(swaps.getSteps(), llvm::ArrayRef<int64_t>({2}));
  EXPECT_EQ(swaps.getNumOrbits(), 2);
  EXPECT_EQ(swaps.representative(1), 1);
  EXPECT_EQ(swaps.orbitOf(6), 0u);
  EXPECT_EQ(swaps.orbitOf(7), 1u);
}

TEST(DeviceSymmetryTest, WhatBreaksIt) {
  // Without wrap-around nothing moves (test torus wrapping at multiples of
  // 16 only).
  Topology line = mustGet(Topology::get(testTorus(1, 16), {8}));
  DeviceAssignment onLine = mustGet(DeviceAssignment::rowMajor({8}, line));
  DeviceSymmetry open = findFor(line, onLine, {Ring{{0}, 1}});
  EXPECT_TRUE(open.isTrivial());
  EXPECT_EQ(open.getNumOrbits(), 8);
  EXPECT_EQ(open.getNumLinkClasses(), line.getNumLinks());
  EXPECT_EQ(open.linkClassOf(5), 5);
  EXPECT_EQ(open.describe(),
            "brute force: no translation of the torus maps the placement "
            "and the program's communication onto themselves");

  // A permute between two devices only.
  Topology ring = mustGet(Topology::get(testTorus(1, 0), {8}));
  DeviceAssignment onRing = mustGet(DeviceAssignment::rowMajor({8}, ring));
  EXPECT_TRUE(DeviceSymmetry::find(ring, onRing, 1,
                                   [](size_t, int64_t logical) -> int64_t {
                                     return logical == 0 ? 1 : -1;
                                   })
                  .isTrivial());

  // A placement that is not a translation of the ring's.
  DeviceAssignment shuffled =
      mustGet(DeviceAssignment::fromList({8}, ring, {0, 2, 4, 6, 1, 3, 5, 7}));
  EXPECT_TRUE(findFor(ring, shuffled, {Ring{{0}, 1}}).isTrivial());

  // A 2 x 4 grid on half of a 4x4 torus: moves along x leave the placed
  // half, moves along y keep its rings.
  Topology square = mustGet(Topology::get(testTorus(2, 0), {4, 4}));
  DeviceAssignment half = mustGet(DeviceAssignment::rowMajor({2, 4}, square));
  DeviceSymmetry halfSymmetry =
      findFor(square, half, {Ring{{0}, 1}, Ring{{1}, 1}});
  EXPECT_EQ(halfSymmetry.getSteps(), llvm::ArrayRef<int64_t>({4, 1}));
  EXPECT_EQ(halfSymmetry.getNumOrbits(), 2);

  // A switch.
  Topology crossbar = mustGet(Topology::get(testSwitch(), {8}));
  DeviceAssignment onSwitch =
      mustGet(DeviceAssignment::rowMajor({8}, crossbar));
  DeviceSymmetry none = findFor(crossbar, onSwitch, {Ring{{0}, 1}});
  EXPECT_TRUE(none.isTrivial());
  EXPECT_EQ(none.describe(), "brute force: only translations of a torus are "
                             "tried, this is a switch");
}

//===----------------------------------------------------------------------===//
// The symmetric simulation against the brute-force one
//===----------------------------------------------------------------------===//

/// A random program on `grid`: compute steps, blocking and asynchronous
/// collectives and permutes with random sizes, their dones at random later
/// points. Communication is along one axis or all axes in order, and
/// permutes shift group indices; with `breakSymmetry`, axes are any subset
/// in any order and some permutes pair two devices only, which few
/// translations survive.
SimProgram randomProgram(llvm::ArrayRef<int64_t> grid, unsigned seed,
                         bool breakSymmetry) {
  std::mt19937 random(seed);
  auto pick = [&](int64_t n) {
    return std::uniform_int_distribution<int64_t>(0, n - 1)(random);
  };
  auto real = [&](double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(random);
  };
  SimProgram program;
  program.gridShape.assign(grid.begin(), grid.end());
  for (const char *name : {"compute", "collective", "start", "done", "permute",
                           "permute-start", "permute-done"})
    program.addLabel(name);
  auto randomAxes = [&] {
    llvm::SmallVector<int16_t, 2> axes;
    int16_t rank = grid.size();
    if (!breakSymmetry) {
      if (pick(3) == 0)
        for (int16_t axis = 0; axis < rank; ++axis)
          axes.push_back(axis);
      else
        axes.push_back(pick(rank));
      return axes;
    }
    for (int16_t axis = 0; axis < rank; ++axis)
      if (pick(2))
        axes.push_back(axis);
    if (axes.empty())
      axes.push_back(pick(rank));
    if (pick(2))
      std::reverse(axes.begin(), axes.end());
    return axes;
  };
  std::vector<uint32_t> open;
  auto closeOne = [&] {
    size_t which = pick(open.size());
    SimStep done;
    bool permute =
        program.steps[open[which]].kind == SimStep::Kind::PermuteStart;
    done.kind =
        permute ? SimStep::Kind::PermuteDone : SimStep::Kind::CollectiveDone;
    done.label = permute ? 6 : 3;
    done.start = open[which];
    program.steps.push_back(done);
    open.erase(open.begin() + which);
  };
  for (int i = 0; i < 40; ++i) {
    SimStep step;
    switch (pick(5)) {
    case 0:
    case 1:
      step.kind = SimStep::Kind::Compute;
      step.label = 0;
      step.seconds = real(1e-6, 2e-3);
      step.flops = real(1e6, 1e9);
      step.elementKind = ElementKind::BF16;
      break;
    case 2:
      step.kind =
          pick(2) ? SimStep::Kind::Collective : SimStep::Kind::CollectiveStart;
      step.label = step.kind == SimStep::Kind::Collective ? 1 : 2;
      step.collective = static_cast<CollectiveKind>(pick(3));
      step.direction = pick(2) ? RingDirection::Bidirectional
                               : RingDirection::Unidirectional;
      step.axes = randomAxes();
      step.bytes = real(1e3, 3e7);
      break;
    default: {
      step.kind =
          pick(2) ? SimStep::Kind::Permute : SimStep::Kind::PermuteStart;
      step.label = step.kind == SimStep::Kind::Permute ? 4 : 5;
      step.axes = randomAxes();
      step.bytes = real(1e3, 3e7);
      int64_t n = 1;
      for (int16_t axis : step.axes)
        n *= grid[axis];
      std::vector<std::pair<int64_t, int64_t>> pairs;
      if (breakSymmetry && n > 1 && pick(3) == 0) {
        pairs.push_back({0, 1});
      } else {
        int64_t shift = pick(n);
        for (int64_t j = 0; j < n; ++j)
          pairs.push_back({j, (j + shift) % n});
      }
      step.pairs = program.addPairs(std::move(pairs));
      break;
    }
    }
    program.steps.push_back(step);
    if (step.kind == SimStep::Kind::CollectiveStart ||
        step.kind == SimStep::Kind::PermuteStart)
      open.push_back(program.steps.size() - 1);
    while (!open.empty() && pick(3) == 0)
      closeOne();
  }
  while (!open.empty())
    closeOne();
  return program;
}

void expectSameReport(const SimReport &symmetric, const SimReport &brute) {
  EXPECT_EQ(symmetric.numDevices, brute.numDevices);
  EXPECT_EQ(symmetric.criticalDevice, brute.criticalDevice);
  EXPECT_EQ(symmetric.stepTime, brute.stepTime);
  EXPECT_EQ(symmetric.computeTime, brute.computeTime);
  EXPECT_EQ(symmetric.commTime, brute.commTime);
  EXPECT_EQ(symmetric.exposedCommTime, brute.exposedCommTime);
  EXPECT_EQ(symmetric.overlapFraction, brute.overlapFraction);
  EXPECT_EQ(symmetric.flops, brute.flops);
  EXPECT_EQ(symmetric.flopsPerSecond, brute.flopsPerSecond);
  EXPECT_EQ(symmetric.utilization, brute.utilization);
  EXPECT_EQ(symmetric.bytesSent, brute.bytesSent);
  ASSERT_EQ(symmetric.ops.size(), brute.ops.size());
  for (size_t i = 0; i < brute.ops.size(); ++i) {
    EXPECT_EQ(symmetric.ops[i].label, brute.ops[i].label);
    EXPECT_EQ(symmetric.ops[i].count, brute.ops[i].count);
    EXPECT_EQ(symmetric.ops[i].computeSeconds, brute.ops[i].computeSeconds);
    EXPECT_EQ(symmetric.ops[i].exposedSeconds, brute.ops[i].exposedSeconds);
  }
}

struct Machine {
  std::vector<int64_t> extents;
  std::vector<int64_t> grid;
};

TEST(SymmetricSimulationTest, EqualsBruteForce) {
  // Grids that fit the torus, snakes over two dimensions (as the GPT
  // ladder's data axis), a torus that wraps on one dimension only (2x2x4),
  // and a grid on half of the torus.
  const Machine machines[] = {
      {{4, 4, 4}, {4, 4, 4}}, {{4, 4, 4}, {16, 4}},   {{8, 8, 4}, {32, 8}},
      {{4, 4, 8}, {2, 4, 8}}, {{2, 2, 4}, {2, 2, 4}}, {{4, 4, 4}, {64}},
      {{8, 4, 4}, {4, 4, 4}},
  };
  int symmetric = 0, runs = 0;
  for (const Machine &m : machines) {
    Topology topology = mustGet(Topology::get(tpuV4(), m.extents));
    DeviceAssignment assignment =
        mustGet(DeviceAssignment::rowMajor(m.grid, topology));
    MachineModel machine(tpuV4(), topology, assignment);
    for (unsigned seed = 0; seed < 6; ++seed) {
      for (bool breakSymmetry : {false, true}) {
        SCOPED_TRACE(topology.describe() + " grid of " +
                     std::to_string(assignment.getNumLogicalDevices()) +
                     ", seed " + std::to_string(seed) +
                     (breakSymmetry ? ", two-device permutes" : ""));
        SimProgram program = randomProgram(m.grid, seed, breakSymmetry);
        // Few DMA slots make devices wait for them too.
        for (unsigned slots : {1u, 4u}) {
          SimOptions options;
          options.maxInFlight = slots;
          SimReport fast = mustGet(simulate(program, machine, options));
          options.bruteForce = true;
          SimReport brute = mustGet(simulate(program, machine, options));
          EXPECT_EQ(brute.simulatedDevices, brute.numDevices);
          EXPECT_EQ(brute.symmetry, "brute force: asked for");
          expectSameReport(fast, brute);
          ++runs;
          if (fast.simulatedDevices < fast.numDevices)
            ++symmetric;
          else
            EXPECT_EQ(fast.symmetry.rfind("brute force: ", 0), 0u);
        }
      }
    }
  }
  // Many programs keep a symmetry (on 4x4x4 rings over all axes keep only
  // moves along x, as the data axis of the ladder), some lose it.
  EXPECT_GT(symmetric, runs / 4);
  EXPECT_LT(symmetric, runs);
}

TEST(SymmetricSimulationTest, DeadlockNamesTheLowestStuckDevice) {
  // Links without bandwidth never deliver: every device is stuck in its
  // permute, and both simulations name the lowest, device 0.
  HardwareDescription hw = tpuV4();
  hw.linkBandwidth = 0;
  Topology topology = mustGet(Topology::get(hw, {4, 4, 4}));
  DeviceAssignment assignment =
      mustGet(DeviceAssignment::rowMajor({4, 4, 4}, topology));
  MachineModel machine(hw, topology, assignment);
  SimProgram program;
  program.gridShape = {4, 4, 4};
  program.addLabel("permute");
  SimStep step;
  step.kind = SimStep::Kind::Permute;
  step.axes = {2};
  step.bytes = 64;
  step.pairs = program.addPairs({{0, 1}, {1, 2}, {2, 3}, {3, 0}});
  program.steps.push_back(step);
  SimOptions brute;
  brute.bruteForce = true;
  llvm::Expected<SimReport> fast = simulate(program, machine);
  llvm::Expected<SimReport> slow = simulate(program, machine, brute);
  ASSERT_FALSE(static_cast<bool>(fast));
  ASSERT_FALSE(static_cast<bool>(slow));
  std::string fastError = llvm::toString(fast.takeError());
  EXPECT_EQ(fastError, llvm::toString(slow.takeError()));
  EXPECT_NE(fastError.find("device 0 (physical 0)"), std::string::npos)
      << fastError;
}

TEST(SymmetricSimulationTest, TraceAndOptionPlayEveryDevice) {
  Topology topology = mustGet(Topology::get(tpuV4(), {4, 4, 4}));
  DeviceAssignment assignment =
      mustGet(DeviceAssignment::rowMajor({4, 4, 4}, topology));
  MachineModel machine(tpuV4(), topology, assignment);
  // Rings along single axes: every move keeps them.
  SimProgram program;
  program.gridShape = {4, 4, 4};
  program.addLabel("op");
  SimStep collective;
  collective.kind = SimStep::Kind::Collective;
  collective.collective = CollectiveKind::AllReduce;
  collective.axes = {2};
  collective.bytes = 1e6;
  program.steps.push_back(collective);
  SimStep permute;
  permute.kind = SimStep::Kind::Permute;
  permute.axes = {0};
  permute.bytes = 3e6;
  permute.pairs = program.addPairs({{0, 1}, {1, 2}, {2, 3}, {3, 0}});
  program.steps.push_back(permute);
  SimReport fast = mustGet(simulate(program, machine));
  EXPECT_EQ(fast.simulatedDevices, 1);
  EXPECT_EQ(fast.symmetry,
            "64 devices in 1 orbit of the translations by x+1, y+1, z+1");
  std::string trace;
  llvm::raw_string_ostream os(trace);
  SimOptions traced;
  traced.trace = &os;
  SimReport brute = mustGet(simulate(program, machine, traced));
  EXPECT_EQ(brute.simulatedDevices, 64);
  EXPECT_EQ(brute.symmetry, "brute force: the trace shows every device");
  expectSameReport(fast, brute);
}

} // namespace
