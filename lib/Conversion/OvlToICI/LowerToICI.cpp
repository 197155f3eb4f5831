//===- LowerToICI.cpp - Collectives as link-level transfers ---------------===//
//
// Records on every collective which links it uses on the pod, for one
// logical device: the ring successor (and predecessor, when the ring runs
// both ways) of each grid axis with its route, or the target of a permute.
// The simulator lowers collectives the same way; this makes the mapping of
// grid axes onto torus dimensions visible to users and tests.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/Analysis/CostEstimates.h"
#include "OverlapDialect/Analysis/MachineModel.h"
#include "OverlapDialect/Conversion/Passes.h"
#include "OverlapDialect/Dialect/Ovl/IR/OvlOps.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringExtras.h"

#include <map>

namespace mlir::ovl {
#define GEN_PASS_DEF_OVLLOWERTOICIPASS
#include "OverlapDialect/Conversion/Passes.h.inc"
} // namespace mlir::ovl

using namespace mlir;
using namespace mlir::ovl;

namespace {
/// Builds the `ovl.ici` attribute of one op as seen from one device.
class TransferRecorder {
public:
  TransferRecorder(Builder &builder, const MachineModel &machine,
                   int64_t device)
      : builder(builder), machine(machine), device(device) {}

  /// One ring of `bytesPerStep` along `axis`, one way or both.
  void addRing(StringRef phase, int16_t axis, double bytesPerStep,
               RingDirection direction) {
    const DeviceAssignment &placed = machine.assignment;
    int64_t size = placed.getGridShape()[axis];
    if (size == 1)
      return;
    int64_t index = placed.groupIndex(device, {axis});
    int64_t maxHops = 0;
    for (int64_t k = 0; k < size; ++k)
      maxHops = std::max(maxHops, hopsBetween(axis, k, (k + 1) % size));
    bool both = direction == RingDirection::Bidirectional;
    double bytes = both ? bytesPerStep / 2 : bytesPerStep;
    auto add = [&](StringRef way, int64_t peerIndex) {
      int64_t peer = placed.groupMember(device, {axis}, peerIndex);
      SmallVector<NamedAttribute> fields = entry(peer, bytes, size - 1);
      fields.push_back(
          builder.getNamedAttr("phase", builder.getStringAttr(phase)));
      fields.push_back(
          builder.getNamedAttr("axis", builder.getI64IntegerAttr(axis)));
      fields.push_back(
          builder.getNamedAttr("direction", builder.getStringAttr(way)));
      fields.push_back(builder.getNamedAttr(
          "ring_max_hops", builder.getI64IntegerAttr(maxHops)));
      transfers.push_back(builder.getDictionaryAttr(fields));
    };
    add("forward", (index + 1) % size);
    if (both)
      add("backward", (index + size - 1) % size);
  }

  /// The collective's rings: an all-gather grows its data axis by axis, a
  /// reduce-scatter shrinks it in the reverse order (as the cost model).
  void addGather(ArrayRef<int16_t> axes, double shardBytes,
                 RingDirection direction, StringRef phase = "all_gather") {
    double bytes = shardBytes;
    for (int16_t axis : axes) {
      addRing(phase, axis, bytes, direction);
      bytes *= machine.assignment.getGridShape()[axis];
    }
  }
  void addScatter(ArrayRef<int16_t> axes, double resultBytes,
                  RingDirection direction) {
    double bytes = resultBytes;
    for (int16_t axis : axes)
      bytes *= machine.assignment.getGridShape()[axis];
    for (int16_t axis : axes) {
      bytes /= machine.assignment.getGridShape()[axis];
      addRing("reduce_scatter", axis, bytes, direction);
    }
  }

  void addPermute(ArrayRef<int16_t> axes,
                  ArrayRef<std::pair<int64_t, int64_t>> pairs, double bytes) {
    const DeviceAssignment &placed = machine.assignment;
    int64_t index = placed.groupIndex(device, axes);
    for (auto [source, target] : pairs)
      if (source == index) {
        SmallVector<NamedAttribute> fields =
            entry(placed.groupMember(device, axes, target), bytes, 1);
        transfers.push_back(builder.getDictionaryAttr(fields));
      }
  }

  DictionaryAttr finish(std::optional<double> estimate) {
    SmallVector<NamedAttribute> fields;
    if (estimate)
      fields.push_back(builder.getNamedAttr(
          "estimate_s", builder.getF64FloatAttr(*estimate)));
    fields.push_back(
        builder.getNamedAttr("transfers", builder.getArrayAttr(transfers)));
    return builder.getDictionaryAttr(fields);
  }

private:
  int64_t hopsBetween(int16_t axis, int64_t a, int64_t b) const {
    const DeviceAssignment &placed = machine.assignment;
    return machine.topology.hops(
        placed.physical(placed.groupMember(device, {axis}, a)),
        placed.physical(placed.groupMember(device, {axis}, b)));
  }

  SmallVector<NamedAttribute> entry(int64_t peer, double bytes, int64_t steps) {
    const Topology &topo = machine.topology;
    int64_t from = machine.assignment.physical(device);
    int64_t to = machine.assignment.physical(peer);
    SmallVector<int64_t> links;
    topo.route(from, to, links);
    SmallVector<Attribute> route;
    for (int64_t link : links)
      route.push_back(builder.getStringAttr(topo.describeLink(link)));
    std::string coords =
        "(" +
        llvm::join(llvm::map_range(topo.coordinates(to),
                                   [](int64_t c) { return std::to_string(c); }),
                   ",") +
        ")";
    return {
        builder.getNamedAttr("to", builder.getStringAttr(coords)),
        builder.getNamedAttr("route", builder.getArrayAttr(route)),
        builder.getNamedAttr("hops",
                             builder.getI64IntegerAttr(topo.hops(from, to))),
        builder.getNamedAttr(
            "bytes", builder.getI64IntegerAttr(static_cast<int64_t>(bytes))),
        builder.getNamedAttr("steps", builder.getI64IntegerAttr(steps)),
    };
  }

  Builder &builder;
  const MachineModel &machine;
  int64_t device;
  SmallVector<Attribute> transfers;
};

struct OvlLowerToICIPass
    : public ovl::impl::OvlLowerToICIPassBase<OvlLowerToICIPass> {
  using Base::Base;

  void runOnOperation() override {
    SymbolTableCollection symbols;
    std::map<SmallVector<int64_t>, MachineModel> machines;
    Builder builder(&getContext());
    RingDirection direction = unidirectional ? RingDirection::Unidirectional
                                             : RingDirection::Bidirectional;
    WalkResult result = getOperation().walk([&](CollectiveOpInterface op) {
      shard::GridOp grid = op.getGridOp(symbols);
      if (!grid) // The verifier reports unresolved grids.
        return WalkResult::advance();
      SmallVector<int64_t> shape(grid.getShape());
      auto it = machines.find(shape);
      if (it == machines.end()) {
        llvm::Expected<MachineModel> machine =
            buildMachineModel(hardware, topology, deviceAssignment, shape);
        if (!machine) {
          op->emitError("cannot map grid ")
              << grid.getSymName()
              << " onto the machine: " << llvm::toString(machine.takeError());
          return WalkResult::interrupt();
        }
        it = machines.emplace(shape, std::move(*machine)).first;
      }
      const MachineModel &machine = it->second;
      if (device < 0 || device >= machine.assignment.getNumLogicalDevices()) {
        op->emitError("device ")
            << static_cast<int64_t>(device) << " is not on grid "
            << grid.getSymName() << " of "
            << machine.assignment.getNumLogicalDevices() << " devices";
        return WalkResult::interrupt();
      }
      TransferRecorder recorder(builder, machine, device);
      ArrayRef<int16_t> axes = op.getGridAxes();
      std::optional<double> estimate;
      if (auto gather = dyn_cast<AllGatherOp>(op.getOperation())) {
        if (std::optional<double> bytes =
                getStaticBytes(gather.getInput().getType()))
          recorder.addGather(axes, *bytes, direction);
        estimate = estimateCollective(op, machine, direction);
      } else if (auto scatter = dyn_cast<ReduceScatterOp>(op.getOperation())) {
        if (std::optional<double> bytes =
                getStaticBytes(scatter.getResult().getType()))
          recorder.addScatter(axes, *bytes, direction);
        estimate = estimateCollective(op, machine, direction);
      } else if (auto reduce = dyn_cast<AllReduceOp>(op.getOperation())) {
        if (std::optional<double> bytes =
                getStaticBytes(reduce.getInput().getType())) {
          double shard = *bytes / machine.assignment.groupSize(axes);
          recorder.addScatter(axes, shard, direction);
          recorder.addGather(axes, shard, direction);
        }
        estimate = estimateCollective(op, machine, direction);
      } else if (auto permute =
                     dyn_cast<CollectivePermuteOp>(op.getOperation())) {
        if (std::optional<double> bytes =
                getStaticBytes(permute.getInput().getType()))
          recorder.addPermute(axes, permute.getSourceTargetPairs(), *bytes);
        estimate = estimateCollective(op, machine, direction);
      } else if (auto start =
                     dyn_cast<CollectivePermuteStartOp>(op.getOperation())) {
        if (std::optional<double> bytes =
                getStaticBytes(start.getInput().getType()))
          recorder.addPermute(axes, start.getSourceTargetPairs(), *bytes);
      } else {
        return WalkResult::advance();
      }
      op->setAttr("ovl.ici", recorder.finish(estimate));
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
