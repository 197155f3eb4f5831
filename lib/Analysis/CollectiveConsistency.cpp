//===- CollectiveConsistency.cpp - Do all devices communicate alike? ------===//
//
// Three checks per function (see the header): a "varying" analysis finds
// the values that may differ between devices and the control flow they
// steer; token uses are counted; the ops between each start and its done
// are searched for accesses to the transfer's buffers.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/Analysis/CollectiveConsistency.h"

#include "OverlapDialect/Dialect/Ovl/IR/OvlOps.h"

#include "mlir/Analysis/AliasAnalysis/LocalAliasAnalysis.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::ovl;

namespace {

/// Whether `op` itself talks to other devices: it has an effect on the
/// communication resource that orders all collectives.
bool isCommunication(Operation *op) {
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects)
    return false;
  SmallVector<MemoryEffects::EffectInstance> instances;
  effects.getEffects(instances);
  return llvm::any_of(instances, [](const MemoryEffects::EffectInstance &e) {
    return e.getResource() == CommunicationResource::get();
  });
}

/// The functions of a module that communicate, directly or through calls.
class CommunicatingFunctions {
public:
  explicit CommunicatingFunctions(ModuleOp module) : symbols(module) {
    module.walk([&](FunctionOpInterface func) {
      if (func->walk([](Operation *op) {
                return isCommunication(op) ? WalkResult::interrupt()
                                           : WalkResult::advance();
              })
              .wasInterrupted())
        communicating.insert(func);
    });
    // Callers of communicating functions communicate, to a fixpoint.
    for (bool changed = true; changed;) {
      changed = false;
      module.walk([&](FunctionOpInterface func) {
        if (communicating.contains(func))
          return;
        bool calls = func->walk([&](CallOpInterface call) {
                           return isCommunicatingCall(call)
                                      ? WalkResult::interrupt()
                                      : WalkResult::advance();
                         })
                         .wasInterrupted();
        if (calls) {
          communicating.insert(func);
          changed = true;
        }
      });
    }
  }

  /// The function `call` calls, if the module has it.
  FunctionOpInterface getCallee(CallOpInterface call) const {
    auto symbol =
        llvm::dyn_cast_if_present<SymbolRefAttr>(call.getCallableForCallee());
    if (!symbol)
      return {};
    return dyn_cast_if_present<FunctionOpInterface>(
        symbols.lookup(symbol.getLeafReference()));
  }

  bool isCommunicatingCall(CallOpInterface call) const {
    FunctionOpInterface callee = getCallee(call);
    // An indirect call may reach anything.
    return !callee || communicating.contains(callee);
  }

  /// Whether `op` or anything nested in it communicates.
  bool communicates(Operation *op) const {
    return op
        ->walk([&](Operation *inner) {
          auto call = dyn_cast<CallOpInterface>(inner);
          return isCommunication(inner) || (call && isCommunicatingCall(call))
                     ? WalkResult::interrupt()
                     : WalkResult::advance();
        })
        .wasInterrupted();
  }

private:
  SymbolTable symbols;
  llvm::DenseSet<Operation *> communicating;
};

/// The values of one function that may differ between devices, each with
/// the op it comes from (an `ovl.partition_id`, a read of data, or a call).
class VaryingValues {
public:
  VaryingValues(FunctionOpInterface func, ArrayRef<Operation *> argOrigins) {
    for (auto [arg, origin] : llvm::zip(func.getArguments(), argOrigins))
      if (origin)
        origins[arg] = origin;
    // Marking only ever adds values: a fixpoint after at most as many
    // rounds as the longest chain through loop-carried values.
    for (bool changed = true; changed;) {
      changed = false;
      func->walk([&](Operation *op) { changed |= visit(op); });
    }
  }

  /// The op the value of `v` varies by, or null when it is the same on
  /// every device.
  Operation *getOrigin(Value v) const { return origins.lookup(v); }
  bool isVarying(Value v) const { return origins.contains(v); }

private:
  /// Marks `v` as varying because of `origin`. Returns whether it is new.
  bool mark(Value v, Operation *origin) {
    if (!origin || isa<ShapedType>(v.getType()))
      return false;
    return origins.try_emplace(v, origin).second;
  }

  /// The first varying value of `values`' origin, or null.
  Operation *firstOrigin(ValueRange values) const {
    for (Value v : values)
      if (Operation *origin = getOrigin(v))
        return origin;
    return nullptr;
  }

  /// What a region op's terminators pass on to its results and arguments.
  Operation *yieldedOrigin(Operation *op) const {
    for (Region &region : op->getRegions())
      for (Block &block : region)
        if (!block.empty() && block.back().hasTrait<OpTrait::IsTerminator>())
          if (Operation *origin = firstOrigin(block.back().getOperands()))
            return origin;
    return nullptr;
  }

  bool visit(Operation *op) {
    // A function's arguments are seeded; its results vary nothing here.
    if (isa<FunctionOpInterface>(op))
      return false;
    bool changed = false;
    auto markAll = [&](auto values, Operation *origin) {
      for (Value v : values)
        changed |= mark(v, origin);
    };
    if (isa<PartitionIdOp>(op)) {
      markAll(op->getResults(), op);
      return changed;
    }
    if (auto forOp = dyn_cast<scf::ForOp>(op)) {
      Operation *bounds = firstOrigin(
          {forOp.getLowerBound(), forOp.getUpperBound(), forOp.getStep()});
      changed |= mark(forOp.getInductionVar(), bounds);
      auto yield = cast<scf::YieldOp>(forOp.getBody()->getTerminator());
      for (auto [i, init] : llvm::enumerate(forOp.getInitArgs())) {
        Operation *origin = getOrigin(init);
        if (!origin)
          origin = getOrigin(yield.getOperand(i));
        changed |= mark(forOp.getRegionIterArg(i), origin);
        changed |= mark(forOp.getResult(i), origin);
      }
      return changed;
    }
    if (auto ifOp = dyn_cast<scf::IfOp>(op)) {
      Operation *condition = getOrigin(ifOp.getCondition());
      for (auto [i, result] : llvm::enumerate(ifOp.getResults())) {
        Operation *origin = condition;
        for (Region *region : {&ifOp.getThenRegion(), &ifOp.getElseRegion()})
          if (!origin && !region->empty())
            origin = getOrigin(region->front().getTerminator()->getOperand(i));
        changed |= mark(result, origin);
      }
      return changed;
    }
    if (op->getNumRegions() != 0) {
      // Any other region op: everything it defines varies with anything
      // it takes or passes on.
      Operation *origin = firstOrigin(op->getOperands());
      if (!origin)
        origin = yieldedOrigin(op);
      markAll(op->getResults(), origin);
      for (Region &region : op->getRegions())
        for (Block &block : region)
          markAll(block.getArguments(), origin);
      return changed;
    }
    Operation *origin = firstOrigin(op->getOperands());
    // A scalar read out of a tensor or buffer is data, which differs
    // between devices; so is what a call returns.
    bool readsData =
        llvm::any_of(op->getOperandTypes(), llvm::IsaPred<ShapedType>);
    if (!origin && (readsData || isa<CallOpInterface>(op)))
      origin = op;
    markAll(op->getResults(), origin);
    return changed;
  }

  llvm::DenseMap<Value, Operation *> origins;
};

/// A line for each communication of `region`, in program order, with the
/// region ops around them: the sequence a device issues when it runs the
/// region. Values defined outside the region are named by identity, so
/// two branches compare equal when they communicate alike.
class CommunicationSequence {
public:
  CommunicationSequence(Region &region, const CommunicatingFunctions &funcs)
      : region(region), funcs(funcs) {
    for (Block &block : region)
      for (Operation &op : block)
        append(&op);
  }

  bool operator==(const CommunicationSequence &other) const {
    return lines == other.lines;
  }
  /// "nothing", or the first op (its name and attributes) and how many
  /// lines follow.
  std::string summary() const {
    if (lines.empty())
      return "nothing";
    std::string text = "'" + descriptions.front() + "'";
    if (lines.size() > 1)
      text += " and " + std::to_string(lines.size() - 1) + " more";
    return text;
  }

private:
  void append(Operation *op) {
    if (!funcs.communicates(op))
      return;
    std::string line;
    llvm::raw_string_ostream os(line);
    os << op->getName() << " " << op->getAttrDictionary();
    descriptions.push_back(line);
    // Data (tensors, buffers) may differ between the branches; what
    // steers communication (bounds, conditions) must be the same value.
    for (Value operand : op->getOperands()) {
      os << " ";
      if (isa<ShapedType, TokenType>(operand.getType()))
        os << operand.getType();
      else if (Attribute constant = constantOf(operand))
        os << constant;
      else if (region.isAncestor(operand.getParentRegion()))
        os << "local " << operand.getType();
      else
        os << "outer:" << operand.getAsOpaquePointer();
    }
    lines.push_back(line);
    for (Region &nested : op->getRegions()) {
      descriptions.push_back("{");
      lines.push_back("{");
      for (Block &block : nested)
        for (Operation &inner : block)
          append(&inner);
      descriptions.push_back("}");
      lines.push_back("}");
    }
  }

  static Attribute constantOf(Value v) {
    Operation *def = v.getDefiningOp();
    if (!def || !def->hasTrait<OpTrait::ConstantLike>())
      return {};
    SmallVector<OpFoldResult> folded;
    if (failed(def->fold({}, folded)) || folded.size() != 1)
      return {};
    return dyn_cast_if_present<Attribute>(folded.front());
  }

  Region &region;
  const CommunicatingFunctions &funcs;
  /// What is compared, and the same lines without operands for messages.
  SmallVector<std::string> lines, descriptions;
};

/// Attaches "the condition differs between devices: it depends on ..." at
/// the value's origin.
void noteOrigin(InFlightDiagnostic &diag, Operation *origin) {
  if (isa<PartitionIdOp>(origin))
    diag.attachNote(origin->getLoc())
        << "it depends on the device's position (ovl.partition_id) here";
  else if (isa<CallOpInterface>(origin))
    diag.attachNote(origin->getLoc())
        << "it depends on what this call returns, which may differ";
  else
    diag.attachNote(origin->getLoc())
        << "it depends on data, read here, which differs between devices";
}

class Checker {
public:
  Checker(ModuleOp module) : module(module), funcs(module) {}

  LogicalResult run() {
    // Which scalar arguments of each function vary: those some call passes
    // a varying value for, to a fixpoint over the call graph.
    SmallVector<FunctionOpInterface> functions;
    module.walk([&](FunctionOpInterface f) { functions.push_back(f); });
    for (FunctionOpInterface f : functions)
      argOrigins[f].assign(f.getNumArguments(), nullptr);
    for (bool changed = true; changed;) {
      changed = false;
      for (FunctionOpInterface f : functions) {
        VaryingValues varying(f, argOrigins[f]);
        f->walk([&](CallOpInterface call) {
          FunctionOpInterface callee = funcs.getCallee(call);
          if (!callee ||
              callee.getNumArguments() != call.getArgOperands().size())
            return;
          for (auto [i, operand] : llvm::enumerate(call.getArgOperands()))
            if (Operation *origin = varying.getOrigin(operand))
              if (!argOrigins[callee][i]) {
                argOrigins[callee][i] = origin;
                changed = true;
              }
        });
      }
    }
    bool ok = true;
    for (FunctionOpInterface f : functions) {
      if (f.isExternal())
        continue;
      VaryingValues varying(f, argOrigins[f]);
      ok &= succeeded(checkControlFlow(f, varying));
      ok &= succeeded(checkTokens(f));
      ok &= succeeded(checkInFlightBuffers(f));
    }
    return success(ok);
  }

private:
  LogicalResult checkControlFlow(FunctionOpInterface func,
                                 const VaryingValues &varying);
  LogicalResult checkTokens(FunctionOpInterface func);
  LogicalResult checkInFlightBuffers(FunctionOpInterface func);

  ModuleOp module;
  CommunicatingFunctions funcs;
  llvm::DenseMap<Operation *, SmallVector<Operation *>> argOrigins;
};

LogicalResult Checker::checkControlFlow(FunctionOpInterface func,
                                        const VaryingValues &varying) {
  bool ok = true;
  // Every refusal names the value's origin in a note.
  auto refuse = [&](InFlightDiagnostic diag, Operation *origin) {
    noteOrigin(diag, origin);
    ok = false;
  };
  func->walk([&](Operation *op) {
    if (op->getNumRegions() == 0 && !isa<BranchOpInterface>(op))
      return;
    if (auto ifOp = dyn_cast<scf::IfOp>(op)) {
      Operation *origin = varying.getOrigin(ifOp.getCondition());
      if (!origin || !funcs.communicates(op))
        return;
      CommunicationSequence thenSeq(ifOp.getThenRegion(), funcs);
      CommunicationSequence elseSeq(ifOp.getElseRegion(), funcs);
      if (thenSeq == elseSeq)
        return;
      refuse(op->emitError("the branches of this 'scf.if' communicate "
                           "differently (then: ")
                 << thenSeq.summary() << "; else: " << elseSeq.summary()
                 << ") and its condition differs between devices: every device "
                    "must issue the same collectives in the same order",
             origin);
      return;
    }
    if (auto whileOp = dyn_cast<scf::WhileOp>(op)) {
      Operation *origin =
          varying.getOrigin(whileOp.getConditionOp().getCondition());
      if (!origin || !funcs.communicates(op))
        return;
      refuse(op->emitError("this 'scf.while' communicates and how often it "
                           "iterates differs between devices: every device "
                           "must issue the same collectives in the same order"),
             origin);
      return;
    }
    if (auto loop = dyn_cast<LoopLikeOpInterface>(op)) {
      Operation *origin = nullptr;
      for (auto bounds : {loop.getLoopLowerBounds(), loop.getLoopUpperBounds(),
                          loop.getLoopSteps()})
        if (bounds)
          for (OpFoldResult bound : *bounds)
            if (auto value = dyn_cast<Value>(bound); value && !origin)
              origin = varying.getOrigin(value);
      if (!origin || !funcs.communicates(op))
        return;
      refuse(
          op->emitError("this '")
              << op->getName()
              << "' communicates and its trip count differs between devices: "
                 "every device must issue the same collectives in the same "
                 "order",
          origin);
      return;
    }
    if (auto branch = dyn_cast<BranchOpInterface>(op);
        branch && op->getNumSuccessors() > 1) {
      // The operands that choose the successor: those not passed on to one.
      llvm::DenseSet<unsigned> forwarded;
      for (unsigned i = 0; i < op->getNumSuccessors(); ++i) {
        OperandRange passed =
            branch.getSuccessorOperands(i).getForwardedOperands();
        for (unsigned k = 0; k < passed.size(); ++k)
          forwarded.insert(passed.getBeginOperandIndex() + k);
      }
      Operation *origin = nullptr;
      for (OpOperand &operand : op->getOpOperands())
        if (!origin && !forwarded.contains(operand.getOperandNumber()))
          origin = varying.getOrigin(operand.get());
      if (!origin || !funcs.communicates(func))
        return;
      refuse(op->emitError("this branch's condition differs between devices in "
                           "a function that communicates: collectives under "
                           "unstructured control flow must not depend on the "
                           "device or on data (use scf.if with branches that "
                           "communicate alike)"),
             origin);
      return;
    }
    if (op->getNumRegions() != 0 && !isa<FunctionOpInterface>(op) &&
        !isa<RegionBranchOpInterface>(op) && funcs.communicates(op)) {
      // An op whose regions run we know not how: only uniform operands.
      for (Value operand : op->getOperands())
        if (Operation *origin = varying.getOrigin(operand)) {
          refuse(
              op->emitError("this '")
                  << op->getName()
                  << "' communicates inside its regions and takes a value that "
                     "differs between devices",
              origin);
          return;
        }
    }
  });
  return success(ok);
}

/// A token's single use must be in its block: a done there runs once on
/// every path through the function, as does a terminator that carries it
/// on; a use nested in a region would run on some paths only, or on every
/// iteration.
LogicalResult Checker::checkTokens(FunctionOpInterface func) {
  bool ok = true;
  auto check = [&](Value token, Operation *at, StringRef what) {
    size_t uses = std::distance(token.use_begin(), token.use_end());
    if (uses == 0) {
      at->emitError() << what
                      << " is never awaited: every transfer needs exactly one "
                         "done on every path";
      ok = false;
      return;
    }
    if (uses > 1) {
      InFlightDiagnostic diag = at->emitError()
                                << what << " is awaited " << uses
                                << " times: every transfer needs exactly one "
                                   "done on every path";
      for (Operation *user : token.getUsers())
        diag.attachNote(user->getLoc()) << "used here";
      ok = false;
      return;
    }
    Operation *user = *token.user_begin();
    if (user->getBlock() != token.getParentBlock()) {
      InFlightDiagnostic diag =
          at->emitError()
          << what
          << " is awaited inside a nested region, which runs on some paths "
             "only or more than once: await it, or carry it on, in its own "
             "block";
      diag.attachNote(user->getLoc()) << "used here";
      ok = false;
    }
  };
  func->walk([&](Operation *op) {
    for (OpResult result : op->getResults())
      if (isa<TokenType>(result.getType()))
        check(result, op,
              ("token #" + std::to_string(result.getResultNumber()) + " of '" +
               op->getName().getStringRef() + "'")
                  .str());
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          if (isa<TokenType>(arg.getType()))
            check(arg, op,
                  ("token argument #" + std::to_string(arg.getArgNumber()) +
                   " of a block of '" + op->getName().getStringRef() + "'")
                      .str());
  });
  return success(ok);
}

/// Whether `buffer` is, along every path `token` takes from the starts
/// that produce it (through scf.for arguments and results and scf.if
/// results), the operand `pick` takes of that start: a done's keep must be
/// the start's input and its pending the start's pending result, as the
/// verifier checks when the start is in sight. The buffer goes along the
/// same loop arguments and region results as the token, or is defined
/// outside the loop or branch the token goes through (the same value on
/// every path: canonicalize folds a loop argument that is never changed
/// into the value it starts as). Token sources it cannot follow (an
/// scf.while, a function argument) are accepted.
class CarriedBuffers {
public:
  using Pick = Value (*)(AsyncStartOpInterface);

  bool matches(Value token, Value buffer, Pick pick) {
    if (!visiting.insert({token, buffer}).second)
      return true;
    if (auto start = token.getDefiningOp<AsyncStartOpInterface>())
      return buffer == pick(start);
    if (auto result = dyn_cast<OpResult>(token)) {
      auto carried = dyn_cast<OpResult>(buffer);
      Operation *owner = result.getOwner();
      unsigned i = result.getResultNumber();
      if (auto forOp = dyn_cast<scf::ForOp>(owner)) {
        auto yield = cast<scf::YieldOp>(forOp.getBody()->getTerminator());
        // A loop that runs no iteration returns its init values.
        if (carried && carried.getOwner() == owner) {
          unsigned j = carried.getResultNumber();
          return matches(forOp.getInitArgs()[i], forOp.getInitArgs()[j],
                         pick) &&
                 matches(yield.getOperand(i), yield.getOperand(j), pick);
        }
        return isDefinedOutside(buffer, owner) &&
               matches(forOp.getInitArgs()[i], buffer, pick) &&
               matches(yield.getOperand(i), buffer, pick);
      }
      if (auto ifOp = dyn_cast<scf::IfOp>(owner)) {
        bool along = carried && carried.getOwner() == owner;
        if (!along && !isDefinedOutside(buffer, owner))
          return false;
        return llvm::all_of(ifOp->getRegions(), [&](Region &region) {
          Operation *yield = region.front().getTerminator();
          return matches(yield->getOperand(i),
                         along ? yield->getOperand(carried.getResultNumber())
                               : buffer,
                         pick);
        });
      }
      return true;
    }
    auto arg = cast<BlockArgument>(token);
    auto forOp = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp());
    if (!forOp || arg.getArgNumber() == 0)
      return true;
    unsigned i = arg.getArgNumber() - 1;
    auto yield = cast<scf::YieldOp>(forOp.getBody()->getTerminator());
    auto carried = dyn_cast<BlockArgument>(buffer);
    if (carried && carried.getOwner() == arg.getOwner() &&
        carried.getArgNumber() != 0) {
      unsigned j = carried.getArgNumber() - 1;
      return matches(forOp.getInitArgs()[i], forOp.getInitArgs()[j], pick) &&
             matches(yield.getOperand(i), yield.getOperand(j), pick);
    }
    return isDefinedOutside(buffer, forOp) &&
           matches(forOp.getInitArgs()[i], buffer, pick) &&
           matches(yield.getOperand(i), buffer, pick);
  }

private:
  /// Whether `value` is defined outside `op`: the same value in each of its
  /// iterations and branches.
  static bool isDefinedOutside(Value value, Operation *op) {
    return !op->isAncestor(value.getParentRegion()->getParentOp());
  }

  llvm::DenseSet<std::pair<Value, Value>> visiting;
};

/// The ops strictly between `start` and `done` in their block, with
/// everything nested in them.
template <typename Fn>
void forEachOpBetween(Operation *start, Operation *done, Fn &&fn) {
  for (Operation *op = start->getNextNode(); op && op != done;
       op = op->getNextNode())
    op->walk([&](Operation *inner) { fn(inner); });
}

/// A done of either kind, seen alike.
struct AsyncDone {
  Value token, keep, pending;
};
std::optional<AsyncDone> getAsyncDone(Operation *op) {
  if (auto done = dyn_cast<CollectivePermuteDoneOp>(op))
    return AsyncDone{done.getToken(), done.getKeep(), done.getPending()};
  if (auto done = dyn_cast<CollectiveDoneOp>(op))
    return AsyncDone{done.getToken(), done.getKeep(), done.getPending()};
  return std::nullopt;
}

/// A buffer-form start of any kind: its token, send and receive buffers.
struct BufferStart {
  Value token, input, output;
};
std::optional<BufferStart> getBufferStart(Operation *op) {
  if (auto start = dyn_cast<BufferPermuteStartOp>(op))
    return BufferStart{start.getToken(), start.getInput(), start.getOutput()};
  if (auto start = dyn_cast<BufferAllGatherStartOp>(op))
    return BufferStart{start.getToken(), start.getInput(), start.getOutput()};
  if (auto start = dyn_cast<BufferReduceScatterStartOp>(op))
    return BufferStart{start.getToken(), start.getInput(), start.getOutput()};
  if (auto start = dyn_cast<BufferAllReduceStartOp>(op))
    return BufferStart{start.getToken(), start.getInput(), start.getOutput()};
  return std::nullopt;
}

/// "permute" or "collective", for messages.
StringRef describeTransfer(Operation *start) {
  return isa<CollectivePermuteStartOp, BufferPermuteStartOp>(start)
             ? "permute"
             : "collective";
}

LogicalResult Checker::checkInFlightBuffers(FunctionOpInterface func) {
  bool ok = true;
  // Tensors: the pending result is the receive buffer in flight; only the
  // done may take it, or a loop or branch op (its operands, its
  // terminators) that carries it on with the token, to be checked where it
  // arrives.
  auto checkPending = [&](Value pending, Operation *start) {
    for (OpOperand &use : pending.getUses()) {
      Operation *user = use.getOwner();
      if (isa<CollectivePermuteDoneOp, CollectiveDoneOp,
              RegionBranchOpInterface>(user) ||
          user->hasTrait<OpTrait::IsTerminator>())
        continue;
      InFlightDiagnostic diag = user->emitError("reads the receive buffer of "
                                                "an asynchronous ")
                                << describeTransfer(start)
                                << " before its done: use the done's result";
      diag.attachNote(start->getLoc()) << "the transfer into it";
      ok = false;
    }
  };
  LocalAliasAnalysis aliases;
  func->walk([&](Operation *op) {
    if (auto start = dyn_cast<AsyncStartOpInterface>(op)) {
      checkPending(start.getPending(), op);
      return;
    }
    if (std::optional<AsyncDone> done = getAsyncDone(op)) {
      if (done->token.getDefiningOp<AsyncStartOpInterface>())
        return;
      checkPending(done->pending, op);
      // A token carried through loops and branches: its buffers must be
      // carried alongside, or the done waits on one buffer while the
      // transfer uses another (canonicalize, folding a one-trip loop,
      // then exposes what the verifier refuses).
      CarriedBuffers keep, pending;
      const char *wrong = nullptr;
      if (!keep.matches(
              done->token, done->keep,
              [](AsyncStartOpInterface s) -> Value { return s.getInput(); }))
        wrong = "keep operand is not, on every path, the input of the start "
                "that produced the token";
      else if (!pending.matches(done->token, done->pending,
                                [](AsyncStartOpInterface s) -> Value {
                                  return s.getPending();
                                }))
        wrong = "pending operand is not, on every path, the pending result "
                "of the start that produced the token";
      if (wrong) {
        op->emitError(wrong)
            << ": carry the send buffer and the pending tensor through the "
               "same loop arguments and region results as the token";
        ok = false;
      }
      return;
    }
    std::optional<BufferStart> start = getBufferStart(op);
    if (!start || !start->token.hasOneUse())
      return;
    Operation *done = *start->token.user_begin();
    if (!isa<BufferPermuteDoneOp, BufferCollectiveDoneOp>(done) ||
        done->getBlock() != op->getBlock())
      return;
    std::string kind = describeTransfer(op).str();
    // Buffers: until the done, the send buffer must not be written and the
    // receive buffer neither read nor written.
    forEachOpBetween(op, done, [&](Operation *inner) {
      auto effects = dyn_cast<MemoryEffectOpInterface>(inner);
      if (!effects)
        return;
      SmallVector<MemoryEffects::EffectInstance> instances;
      effects.getEffects(instances);
      for (const MemoryEffects::EffectInstance &effect : instances) {
        Value value = effect.getValue();
        if (!value || !isa<BaseMemRefType>(value.getType()))
          continue;
        bool writes = isa<MemoryEffects::Write>(effect.getEffect());
        bool reads = isa<MemoryEffects::Read>(effect.getEffect());
        // Only accesses known to overlap: distinct function arguments may
        // alias as far as the analysis knows, but are distinct buffers in
        // every program bufferization makes.
        auto overlaps = [&](Value buffer) {
          AliasResult result = aliases.alias(value, buffer);
          return result.isMust() || result.isPartial();
        };
        std::string problem;
        if ((reads || writes) && overlaps(start->output))
          problem = std::string(writes ? "writes" : "reads") +
                    " the receive buffer of an in-flight " + kind +
                    " before its done";
        else if (writes && overlaps(start->input))
          problem = "writes the send buffer of an in-flight " + kind +
                    " before its done";
        if (problem.empty())
          continue;
        InFlightDiagnostic diag = inner->emitError(problem);
        diag.attachNote(op->getLoc()) << "the transfer";
        diag.attachNote(done->getLoc()) << "its done";
        ok = false;
        return;
      }
    });
  });
  return success(ok);
}

} // namespace

LogicalResult mlir::ovl::verifyCollectiveConsistency(ModuleOp module) {
  return Checker(module).run();
}
