//===- SimProgramBuilder.cpp - From a function to a SimProgram ------------===//

#include "OverlapDialect/Analysis/SimProgramBuilder.h"
#include "OverlapDialect/Analysis/CostEstimates.h"
#include "OverlapDialect/Dialect/Ovl/IR/OvlOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::ovl;

FailureOr<SmallVector<int64_t, 4>>
mlir::ovl::getProgramGridShape(FunctionOpInterface func) {
  SymbolTableCollection symbols;
  std::optional<SmallVector<int64_t, 4>> shape;
  Operation *first = nullptr;
  WalkResult result = func->walk([&](CollectiveOpInterface collective) {
    shard::GridOp grid = collective.getGridOp(symbols);
    if (!grid) {
      collective->emitError("grid ")
          << collective.getGridAttr() << " does not name a shard.grid";
      return WalkResult::interrupt();
    }
    ArrayRef<int64_t> gridShape = grid.getShape();
    if (llvm::any_of(gridShape, ShapedType::isDynamic)) {
      collective->emitError("the simulator needs a static grid shape, ")
          << grid.getSymName() << " has a dynamic axis";
      return WalkResult::interrupt();
    }
    if (!shape) {
      shape.emplace(gridShape);
      first = collective;
      return WalkResult::advance();
    }
    if (ArrayRef<int64_t>(*shape) != gridShape) {
      InFlightDiagnostic diag = collective->emitError(
          "all communication of a simulated function must run on grids of "
          "one shape");
      diag.attachNote(first->getLoc()) << "the first collective is here";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (result.wasInterrupted())
    return failure();
  if (!shape)
    return SmallVector<int64_t, 4>{1};
  return *shape;
}

namespace {
/// Plays the function once, as every device would, recording steps.
class ProgramPlayer {
public:
  ProgramPlayer(const MachineModel &machine, const SimProgramOptions &options,
                ArrayRef<int64_t> gridShape)
      : machine(machine), options(options) {
    program.gridShape.assign(gridShape.begin(), gridShape.end());
  }

  LogicalResult playBlock(Block &block) {
    for (Operation &op : block.without_terminator())
      if (failed(play(&op)))
        return failure();
    return success();
  }

  SimProgram takeProgram() { return std::move(program); }

private:
  LogicalResult play(Operation *op);
  LogicalResult playFor(scf::ForOp loop);
  LogicalResult playIf(scf::IfOp branch);
  LogicalResult addStep(Operation *op, SimStep step);
  LogicalResult
  addCollective(Operation *op, CollectiveKind kind, ArrayRef<int16_t> axes,
                Type bytesOf,
                SimStep::Kind stepKind = SimStep::Kind::Collective);
  LogicalResult addPermute(Operation *op, SimStep::Kind kind,
                           ArrayRef<int16_t> axes, Type bytesOf,
                           SmallVector<std::pair<int64_t, int64_t>> pairs);
  uint32_t getLabel(Operation *op);
  int64_t groupSize(ArrayRef<int16_t> axes) const {
    return machine.assignment.groupSize(axes);
  }

  const MachineModel &machine;
  const SimProgramOptions &options;
  SimProgram program;
  /// The step of the start each live token value comes from (kNoStep: a
  /// collective on a one-device group, which plays no step).
  DenseMap<Value, uint32_t> tokenStarts;
  static constexpr uint32_t kNoStep = ~uint32_t(0);
  DenseMap<Operation *, uint32_t> labels;
  /// The iterations of the loops around the op being played, multiplied.
  uint64_t enclosingTrips = 1;
};
} // namespace

/// "file.mlir:12:5" for the innermost file location, or the printed
/// location.
static std::string formatLocation(Location loc) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (auto fileLoc = loc->findInstanceOf<FileLineColLoc>())
    os << fileLoc.getFilename().getValue() << ':' << fileLoc.getLine() << ':'
       << fileLoc.getColumn();
  else
    loc.print(os);
  return text;
}

uint32_t ProgramPlayer::getLabel(Operation *op) {
  auto [it, inserted] = labels.try_emplace(op, 0);
  if (inserted) {
    std::string label = op->getName().getStringRef().str();
    if (auto einsum = dyn_cast<EinsumOp>(op))
      label += " \"" + einsum.getEquation().str() + "\"";
    it->second = program.addLabel(label + " @ " + formatLocation(op->getLoc()));
  }
  return it->second;
}

LogicalResult ProgramPlayer::addStep(Operation *op, SimStep step) {
  if (program.steps.size() >= options.maxSteps)
    return op->emitError("the simulated program unrolls into more than ")
           << options.maxSteps << " steps";
  step.label = getLabel(op);
  program.steps.push_back(std::move(step));
  return success();
}

LogicalResult ProgramPlayer::addCollective(Operation *op, CollectiveKind kind,
                                           ArrayRef<int16_t> axes, Type bytesOf,
                                           SimStep::Kind stepKind) {
  // A one-device group communicates nothing (the op folds away).
  if (groupSize(axes) == 1)
    return success();
  std::optional<double> bytes = getStaticBytes(bytesOf);
  if (!bytes)
    return op->emitError("the simulator needs static shapes");
  SimStep step;
  step.kind = stepKind;
  step.collective = kind;
  step.direction = options.collectiveDirection;
  step.axes.assign(axes.begin(), axes.end());
  step.bytes = *bytes;
  return addStep(op, std::move(step));
}

LogicalResult
ProgramPlayer::addPermute(Operation *op, SimStep::Kind kind,
                          ArrayRef<int16_t> axes, Type bytesOf,
                          SmallVector<std::pair<int64_t, int64_t>> pairs) {
  std::optional<double> bytes = getStaticBytes(bytesOf);
  if (!bytes)
    return op->emitError("the simulator needs static shapes");
  SimStep step;
  step.kind = kind;
  step.axes.assign(axes.begin(), axes.end());
  step.bytes = *bytes;
  step.pairs = program.addPairs({pairs.begin(), pairs.end()});
  return addStep(op, std::move(step));
}

LogicalResult ProgramPlayer::playFor(scf::ForOp loop) {
  std::optional<int64_t> lower = getConstantIntValue(loop.getLowerBound());
  std::optional<int64_t> upper = getConstantIntValue(loop.getUpperBound());
  std::optional<int64_t> stride = getConstantIntValue(loop.getStep());
  if (!lower || !upper || !stride || *stride <= 0)
    return loop.emitError("the simulator plays loops with constant bounds "
                          "and a positive constant step only");
  // Counted without overflow; refused before playing when even one step
  // per iteration would be too many (an empty body would spin for ever).
  uint64_t span = *upper <= *lower ? 0
                                   : static_cast<uint64_t>(*upper) -
                                         static_cast<uint64_t>(*lower);
  uint64_t step = static_cast<uint64_t>(*stride);
  uint64_t trips = span / step + (span % step != 0);
  if (trips > options.maxSteps)
    return loop.emitError("the loop runs ")
           << trips << " iterations; the simulator plays at most "
           << options.maxSteps << " steps";
  // Nested loops whose bodies add no step would spin through the product
  // of their trip counts: refused here, before the first iteration.
  if (trips > 0 && enclosingTrips > options.maxSteps / trips)
    return loop.emitError("the loop runs ")
           << trips << " iterations inside loops that run " << enclosingTrips
           << ", more in all than the " << options.maxSteps
           << " iterations the simulator plays";
  uint64_t outer = std::exchange(enclosingTrips, enclosingTrips * trips);
  llvm::scope_exit restore([&] { enclosingTrips = outer; });
  // Tokens travel through iter_args: bind each iteration's block arguments
  // to the starts of the previous iteration's yielded tokens.
  auto bind = [&](ValueRange to, ValueRange from) {
    for (auto [dst, src] : llvm::zip(to, from))
      if (isa<TokenType>(dst.getType())) {
        auto it = tokenStarts.find(src);
        if (it != tokenStarts.end())
          tokenStarts[dst] = it->second;
      }
  };
  bind(loop.getRegionIterArgs(), loop.getInitArgs());
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  for (uint64_t trip = 0; trip < trips; ++trip) {
    if (failed(playBlock(*loop.getBody())))
      return failure();
    bind(loop.getRegionIterArgs(), yield.getOperands());
  }
  bind(loop.getResults(), loop.getRegionIterArgs());
  return success();
}

LogicalResult ProgramPlayer::playIf(scf::IfOp branch) {
  std::optional<int64_t> condition = getConstantIntValue(branch.getCondition());
  if (!condition)
    return branch.emitError("the simulator cannot play a branch on a value "
                            "known only at run time");
  Region &taken = *condition ? branch.getThenRegion() : branch.getElseRegion();
  if (taken.empty())
    return success();
  if (failed(playBlock(taken.front())))
    return failure();
  auto yield = cast<scf::YieldOp>(taken.front().getTerminator());
  for (auto [result, yielded] :
       llvm::zip(branch.getResults(), yield.getOperands()))
    if (isa<TokenType>(result.getType()) && tokenStarts.count(yielded))
      tokenStarts[result] = tokenStarts.lookup(yielded);
  return success();
}

LogicalResult ProgramPlayer::play(Operation *op) {
  if (auto loop = dyn_cast<scf::ForOp>(op))
    return playFor(loop);
  if (auto branch = dyn_cast<scf::IfOp>(op))
    return playIf(branch);
  if (auto start = dyn_cast<AsyncStartOpInterface>(op);
      start && !isa<CollectivePermuteStartOp>(op)) {
    auto collective = cast<CollectiveOpInterface>(op);
    size_t index = program.steps.size();
    if (failed(addCollective(
            op, *collective.getCollectiveKind(), collective.getGridAxes(),
            collective.getPayloadType(), SimStep::Kind::CollectiveStart)))
      return failure();
    // A one-device group adds no step: its done adds none either.
    tokenStarts[start.getToken()] =
        program.steps.size() == index ? kNoStep : index;
    return success();
  }
  if (auto done = dyn_cast<CollectiveDoneOp>(op)) {
    auto it = tokenStarts.find(done.getToken());
    if (it == tokenStarts.end())
      return op->emitError("the simulator cannot tell which asynchronous "
                           "collective this token comes from");
    if (it->second == kNoStep)
      return success();
    SimStep step;
    step.kind = SimStep::Kind::CollectiveDone;
    step.start = it->second;
    return addStep(op, std::move(step));
  }
  if (auto collective = dyn_cast<CollectiveOpInterface>(op))
    if (std::optional<CollectiveKind> kind = collective.getCollectiveKind())
      return addCollective(op, *kind, collective.getGridAxes(),
                           collective.getPayloadType());
  if (auto permute = dyn_cast<CollectivePermuteOp>(op))
    return addPermute(op, SimStep::Kind::Permute, permute.getGridAxes(),
                      permute.getInput().getType(),
                      permute.getSourceTargetPairs());
  if (auto start = dyn_cast<CollectivePermuteStartOp>(op)) {
    tokenStarts[start.getToken()] = program.steps.size();
    return addPermute(op, SimStep::Kind::PermuteStart, start.getGridAxes(),
                      start.getInput().getType(), start.getSourceTargetPairs());
  }
  if (auto done = dyn_cast<CollectivePermuteDoneOp>(op)) {
    auto it = tokenStarts.find(done.getToken());
    if (it == tokenStarts.end())
      return op->emitError("the simulator cannot tell which "
                           "collective_permute_start this token comes from");
    SimStep step;
    step.kind = SimStep::Kind::PermuteDone;
    step.start = it->second;
    return addStep(op, std::move(step));
  }
  if (isa<CallOpInterface>(op))
    return op->emitError("the simulator plays one function; inline calls "
                         "first (--inline)");
  if (isa<LoopLikeOpInterface, RegionBranchOpInterface>(op))
    return op->emitError("the simulator does not know how often this "
                         "region runs");
  std::optional<ComputeEstimate> estimate =
      estimateCompute(op, machine.costModel);
  if (!estimate)
    return op->emitError("the simulator needs static shapes");
  if (estimate->seconds <= 0)
    return success();
  SimStep step;
  step.kind = SimStep::Kind::Compute;
  step.seconds = estimate->seconds;
  step.flops = estimate->flops;
  step.elementKind = estimate->kind;
  return addStep(op, std::move(step));
}

FailureOr<SimProgram>
mlir::ovl::buildSimProgram(FunctionOpInterface func,
                           const MachineModel &machine,
                           const SimProgramOptions &options) {
  if (func.isExternal())
    return func.emitError("cannot simulate a function without a body");
  FailureOr<SmallVector<int64_t, 4>> gridShape = getProgramGridShape(func);
  if (failed(gridShape))
    return failure();
  if (ArrayRef<int64_t>(*gridShape) != machine.assignment.getGridShape())
    return func.emitError("the machine model was built for another grid");
  ProgramPlayer builder(machine, options, *gridShape);
  if (failed(builder.playBlock(func.getFunctionBody().front())))
    return failure();
  return builder.takeProgram();
}
