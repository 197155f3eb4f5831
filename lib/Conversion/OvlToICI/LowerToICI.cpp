//===- LowerToICI.cpp - Collectives as link-level transfers ---------------===//
//
// Records on every collective which links it uses on the pod, for one
// logical device: the plan of a blocking collective (its algorithm, rounds
// and estimate, and per ring the successor and predecessor this device
// sends to, with routes), or the target of a permute. The simulator plays
// the same plans; this makes the mapping of grid axes onto torus dimensions
// visible to users and tests.
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

  /// The rings of a collective's plan: for every phase, the sends of this
  /// device (to its successor, and its predecessor when the ring runs both
  /// ways), their bytes in the phase's first round and the phase's rounds.
  void addPlan(const CollectivePlan &plan) {
    fields.push_back(builder.getNamedAttr(
        "algorithm", builder.getStringAttr(plan.describe())));
    fields.push_back(builder.getNamedAttr(
        "rounds",
        builder.getI64IntegerAttr(static_cast<int64_t>(plan.rounds.size()))));
    // An all-reduce's phases are a reduce-scatter's, then an all-gather's.
    size_t scatterPhases = plan.kind == CollectiveKind::AllReduce
                               ? plan.phases.size() / 2
                               : plan.phases.size();
    for (auto [i, phase] : llvm::enumerate(plan.phases)) {
      StringRef name =
          plan.kind == CollectiveKind::AllGather ||
                  (plan.kind == CollectiveKind::AllReduce && i >= scatterPhases)
              ? "all_gather"
              : "reduce_scatter";
      addPhase(name, phase, plan.parts);
    }
  }

  void addPermute(ArrayRef<int16_t> axes,
                  ArrayRef<std::pair<int64_t, int64_t>> pairs, double bytes) {
    const DeviceAssignment &placed = machine.assignment;
    int64_t index = placed.groupIndex(device, axes);
    for (auto [source, target] : pairs)
      if (source == index) {
        SmallVector<NamedAttribute> entry = describeTransfer(
            placed.groupMember(device, axes, target), bytes, /*rounds=*/1);
        transfers.push_back(builder.getDictionaryAttr(entry));
      }
  }

  DictionaryAttr finish(std::optional<double> estimate) {
    if (estimate)
      fields.push_back(builder.getNamedAttr(
          "estimate_s", builder.getF64FloatAttr(*estimate)));
    fields.push_back(
        builder.getNamedAttr("transfers", builder.getArrayAttr(transfers)));
    return builder.getDictionaryAttr(fields);
  }

private:
  void addPhase(StringRef name, const CollectivePhase &phase, unsigned parts) {
    const DeviceAssignment &placed = machine.assignment;
    int64_t index = placed.groupIndex(device, phase.axes);
    auto add = [&](StringRef way, int64_t peerIndex) {
      if (!phase.wraps() && (peerIndex < 0 || peerIndex >= phase.size))
        return;
      peerIndex = (peerIndex % phase.size + phase.size) % phase.size;
      SmallVector<NamedAttribute> entry = describeTransfer(
          placed.groupMember(device, phase.axes, peerIndex), phase.sendBytes,
          phase.numRounds, /*negative=*/way == "backward");
      entry.push_back(
          builder.getNamedAttr("phase", builder.getStringAttr(name)));
      entry.push_back(builder.getNamedAttr(
          "axes", builder.getDenseI16ArrayAttr(phase.axes)));
      entry.push_back(
          builder.getNamedAttr("direction", builder.getStringAttr(way)));
      if (parts > 1)
        entry.push_back(builder.getNamedAttr(
            "part", builder.getI64IntegerAttr(phase.part)));
      transfers.push_back(builder.getDictionaryAttr(entry));
    };
    add("forward", index + 1);
    if (phase.bothWays())
      add("backward", index - 1);
  }

  /// One transfer to logical device `peer`: its routes (one per port), hops,
  /// bytes and how many rounds it repeats.
  SmallVector<NamedAttribute> describeTransfer(int64_t peer, double bytes,
                                               int64_t rounds,
                                               bool negative = false) {
    const Topology &topo = machine.topology;
    int64_t from = machine.assignment.physical(device);
    int64_t to = machine.assignment.physical(peer);
    SmallVector<SmallVector<int64_t, 8>, 3> routes;
    topo.routes(from, to, routes, negative);
    auto describeRoute = [&](ArrayRef<int64_t> links) {
      SmallVector<Attribute> route;
      for (int64_t link : links)
        route.push_back(builder.getStringAttr(topo.describeLink(link)));
      return builder.getArrayAttr(route);
    };
    std::string coords =
        "(" +
        llvm::join(llvm::map_range(topo.coordinates(to),
                                   [](int64_t c) { return std::to_string(c); }),
                   ",") +
        ")";
    SmallVector<NamedAttribute> entry = {
        builder.getNamedAttr("to", builder.getStringAttr(coords)),
        builder.getNamedAttr("hops",
                             builder.getI64IntegerAttr(topo.hops(from, to))),
        builder.getNamedAttr(
            "bytes", builder.getI64IntegerAttr(static_cast<int64_t>(bytes))),
        builder.getNamedAttr("rounds", builder.getI64IntegerAttr(rounds)),
    };
    if (routes.size() == 1) {
      entry.push_back(
          builder.getNamedAttr("route", describeRoute(routes.front())));
    } else {
      SmallVector<Attribute> all;
      for (const SmallVector<int64_t, 8> &route : routes)
        all.push_back(describeRoute(route));
      entry.push_back(
          builder.getNamedAttr("routes", builder.getArrayAttr(all)));
    }
    return entry;
  }

  Builder &builder;
  const MachineModel &machine;
  int64_t device;
  SmallVector<NamedAttribute> fields;
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
      std::optional<double> bytes = getStaticBytes(op.getPayloadType());
      std::optional<double> estimate;
      if (std::optional<CollectiveKind> kind = op.getCollectiveKind()) {
        if (bytes) {
          CollectivePlan plan =
              machine.planCollective(*kind, *bytes, axes, direction);
          recorder.addPlan(plan);
          estimate = plan.seconds;
        }
      } else {
        if (bytes)
          recorder.addPermute(axes, op.getSourceTargetPairs(), *bytes);
        // A start's transfer overlaps what follows it: no blocking time.
        if (isa<CollectivePermuteOp>(op.getOperation()))
          estimate = estimateCollective(op, machine, direction);
      }
      op->setAttr("ovl.ici", recorder.finish(estimate));
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
