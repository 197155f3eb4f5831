//===- DecompositionCost.cpp - The cost-model gate's estimates ------------===//
//
// The gate prices what the pipeline builds. For one collective it copies a
// window of its block into a scratch module: the collective, the einsums
// its decomposition would consume and the collectives those also read or
// feed (the other candidate of a figure 3 einsum), and the ops before and
// after them until the compute on each side covers the collective's
// blocking time twice over (what an asynchronous form could hide behind,
// with room for the window's other transfers; more context would not
// change the choice, and pricing whole functions per candidate grows with
// the square of their length), at most kWindowSideOps ops a side. Values
// the window reads from elsewhere
// become function arguments; the grid is copied along. Each form is built
// on its own copy: the collective left blocking, split into a start and a
// done (makeCollectiveAsynchronous), or rewritten into its ring loop
// (decomposeAllGatherEinsum / decomposeEinsumReduceScatter); the window's
// other collectives as the pipeline leaves them by default; then what
// `ovl-overlap-pipeline` runs next (addAsyncCleanupPasses, scheduleRegions)
// and the price. Pricing is the simulator's own lowering of a function to
// steps (buildSimProgram: the same per-op estimates, loops unrolled) played
// by the event simulator on every device of the machine. Whatever a form
// adds (zero fills, concatenations, receive buffers) is priced because it
// is there, and on placements where the ring's edges differ each device
// waits for its own neighbours, as it will when the program runs; nothing
// replays the loop's shape or the schedule by hand.
//
//===----------------------------------------------------------------------===//

#include "OverlapDialect/Dialect/Ovl/Transforms/Transforms.h"

#include "OverlapDialect/Analysis/CostEstimates.h"
#include "OverlapDialect/Analysis/MachineModel.h"
#include "OverlapDialect/Analysis/SimProgramBuilder.h"
#include "OverlapDialect/Dialect/Ovl/IR/OvlOps.h"
#include "OverlapDialect/Simulator/Simulator.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/BLAKE3.h"
#include "llvm/Support/Debug.h"

#include <thread>

#define DEBUG_TYPE "ovl-decompose-collective-einsum"

using namespace mlir;
using namespace mlir::ovl;

namespace {
/// A window copied into a scratch module: `func` computes exactly what the
/// window's ops compute, from arguments standing for what they read.
struct ScratchWindow {
  OwningOpRef<ModuleOp> module;
  func::FuncOp func;
  /// The copy of the collective.
  Operation *collective = nullptr;
  /// Each op of the window to its copy.
  llvm::DenseMap<Operation *, Operation *> copies;
};
} // namespace

/// Copies `ops` (one block's, in order, `collective` among them unless it is
/// null) with the grids of their collectives into a new module at `loc`.
static ScratchWindow copyWindow(Operation *collective,
                                ArrayRef<Operation *> ops, Location loc) {
  MLIRContext *context = loc.getContext();
  ScratchWindow scratch;
  scratch.module = ModuleOp::create(loc);
  OpBuilder builder(context);
  builder.setInsertionPointToEnd(scratch.module->getBody());
  SymbolTableCollection symbols;
  llvm::SetVector<Operation *> grids;
  for (Operation *op : ops)
    op->walk([&](CollectiveOpInterface nested) {
      if (shard::GridOp grid = nested.getGridOp(symbols))
        grids.insert(grid);
    });
  for (Operation *grid : grids)
    builder.clone(*grid);

  llvm::SetVector<Operation *> inside(ops.begin(), ops.end());
  llvm::SetVector<Value> reads, results;
  for (Operation *op : ops) {
    for (Value operand : op->getOperands())
      if (!inside.contains(operand.getDefiningOp()))
        reads.insert(operand);
    for (Value result : op->getResults())
      if (llvm::any_of(result.getUsers(),
                       [&](Operation *user) { return !inside.contains(user); }))
        results.insert(result);
  }
  auto type = builder.getFunctionType(TypeRange(reads.getArrayRef()),
                                      TypeRange(results.getArrayRef()));
  scratch.func = func::FuncOp::create(builder, loc, "window", type);
  Block *body = scratch.func.addEntryBlock();
  builder.setInsertionPointToEnd(body);
  IRMapping mapping;
  mapping.map(reads.getArrayRef(), body->getArguments());
  for (Operation *op : ops) {
    Operation *copy = builder.clone(*op, mapping);
    scratch.copies[op] = copy;
    if (op == collective)
      scratch.collective = copy;
  }
  SmallVector<Value> returned;
  for (Value result : results)
    returned.push_back(mapping.lookup(result));
  func::ReturnOp::create(builder, loc, returned);
  return scratch;
}

/// The simulated run of `func` on `machine`; fails with the simulator
/// builder's or the simulator's message in `why`.
static FailureOr<SimReport>
price(func::FuncOp func, const MachineModel &machine, std::string &why) {
  // A context's handlers serve every thread: the pass prices the functions
  // of a module in parallel, and the other threads' diagnostics (their
  // remarks, their errors) go on to the handlers below, not into `why`.
  std::thread::id self = std::this_thread::get_id();
  ScopedDiagnosticHandler capture(func->getContext(), [&](Diagnostic &diag) {
    if (std::this_thread::get_id() != self)
      return failure();
    if (why.empty())
      why = diag.str();
    return success();
  });
  FailureOr<SimProgram> program = buildSimProgram(func, machine);
  if (failed(program))
    return failure();
  llvm::Expected<SimReport> report = simulate(*program, machine);
  if (!report) {
    why = llvm::toString(report.takeError());
    return failure();
  }
  return std::move(*report);
}

/// The compute of `op` and of the ops nested in it, on one device.
static double getComputeTime(Operation *op, const CostModel &model) {
  double seconds = 0;
  op->walk([&](Operation *nested) {
    if (std::optional<ComputeEstimate> estimate =
            estimateCompute(nested, model))
      seconds += estimate->seconds;
  });
  return seconds;
}

/// How many times the collective's blocking time the compute on each side
/// of its window covers.
static constexpr double kWindowCover = 2;

/// The most ops each side of a window takes. Where compute is tiny beside
/// the collective's latency (programs shrunk to run on a CPU), no amount of
/// it covers the reach and the window would be the whole function, priced
/// per form at a cost that grows with its square; the transformer layers of
/// the GPT ladder reach their cover within 40.
static constexpr unsigned kWindowSideOps = 48;

/// The window of `collective` in its block, in program order (see the file
/// comment); fails with `why` when its einsums are in another block.
static FailureOr<SmallVector<Operation *>>
getWindow(Operation *collective, const MachineModel &machine,
          std::string &why) {
  Block *block = collective->getBlock();
  SmallVector<Operation *, 2> einsums = getDecomposedEinsums(collective);
  llvm::SetVector<Operation *> ops;
  ops.insert(collective);
  ops.insert(einsums.begin(), einsums.end());
  // The other collectives whose loops would take the same einsums run with
  // them: the loop may hide behind them once scheduled. A gather the einsum
  // only reads as a later user (a forward gather read in the backward) is
  // not one: its loop is elsewhere, and taking it in would stretch the
  // window over everything between.
  for (Operation *einsum : einsums) {
    for (Value input : einsum->getOperands())
      if (auto producer = input.getDefiningOp<AllGatherOp>())
        if (llvm::is_contained(getDecomposedEinsums(producer), einsum))
          ops.insert(producer);
    for (Operation *user : einsum->getUsers())
      if (isa<ReduceScatterOp>(user) &&
          llvm::is_contained(getDecomposedEinsums(user), einsum))
        ops.insert(user);
  }
  if (llvm::any_of(ops,
                   [&](Operation *op) { return op->getBlock() != block; })) {
    why = "its einsums are in another block";
    return failure();
  }
  Operation *first = collective, *last = collective;
  for (Operation *op : ops) {
    if (op->isBeforeInBlock(first))
      first = op;
    if (last->isBeforeInBlock(op))
      last = op;
  }
  for (Operation *op = first;; op = op->getNextNode()) {
    ops.insert(op);
    if (op == last)
      break;
  }
  double reach = kWindowCover * estimateCollective(collective, machine,
                                                   RingDirection::Bidirectional)
                                    .value_or(0);
  const CostModel &model = machine.costModel;
  // Each side of [first, last] takes ops until its work independent of the
  // collective covers the reach, or its work the collective depends on
  // (before) or that depends on it (after) does: the collective cannot move
  // past that. Each walk starts at the collective so that the ops of
  // [first, last] count as feeding it or depending on it.
  auto hasUserIn = [&](Operation *op,
                       const llvm::SmallPtrSetImpl<Operation *> &set) {
    return llvm::any_of(op->getUsers(), [&](Operation *user) {
      return set.contains(block->findAncestorOpInBlock(*user));
    });
  };
  llvm::SmallPtrSet<Operation *, 16> inputs = {collective};
  double independent = 0, dependent = 0;
  unsigned taken = 0;
  for (Operation *op = collective->getPrevNode(); op; op = op->getPrevNode()) {
    bool outside = op->isBeforeInBlock(first);
    if (outside && (independent >= reach || dependent >= reach ||
                    ++taken > kWindowSideOps))
      break;
    bool feeds = hasUserIn(op, inputs);
    if (feeds)
      inputs.insert(op);
    if (outside) {
      ops.insert(op);
      (feeds ? dependent : independent) += getComputeTime(op, model);
    }
  }
  llvm::SmallPtrSet<Operation *, 16> dependents = {collective};
  auto usesDependent = [&](Operation *op) {
    bool uses = false;
    op->walk([&](Operation *nested) {
      for (Value operand : nested->getOperands())
        if (Operation *producer = operand.getDefiningOp())
          if (Operation *ancestor = block->findAncestorOpInBlock(*producer))
            uses |= dependents.contains(ancestor);
    });
    return uses;
  };
  independent = dependent = 0;
  taken = 0;
  for (Operation *op = collective->getNextNode();
       op && !op->hasTrait<OpTrait::IsTerminator>(); op = op->getNextNode()) {
    bool outside = last->isBeforeInBlock(op);
    if (outside && (independent >= reach || dependent >= reach ||
                    ++taken > kWindowSideOps))
      break;
    bool uses = usesDependent(op);
    if (uses)
      dependents.insert(op);
    if (outside) {
      ops.insert(op);
      (uses ? dependent : independent) += getComputeTime(op, model);
    }
  }
  SmallVector<Operation *> window(ops.begin(), ops.end());
  llvm::sort(window,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return window;
}

/// Whether decomposing `other` as `loop` would erase `collective` (a
/// gather-scatter rewrite takes its all_gather along).
static bool takesAlong(Operation *other, const DecomposeOptions &loop,
                       Operation *collective) {
  auto scatter = dyn_cast<ReduceScatterOp>(other);
  return collective && scatter && loop.withGather &&
         getGatherDecomposedWith(scatter) == collective;
}

/// Builds `form` of the copy `collective` in `scratch` (decomposed as
/// `loop`), the window's other collectives as `context` says, and runs on
/// it what the pipeline runs next, the scheduler spending at most
/// `simulatedImproveReplays` on each block the simulator judges.
static LogicalResult buildForm(ScratchWindow &scratch, CollectiveForm form,
                               const DecomposeOptions &loop,
                               const FormContext &context,
                               MachineModelCache &machines,
                               unsigned simulatedImproveReplays,
                               PricingCache *cache, std::string &why) {
  IRRewriter rewriter(scratch.func->getContext());
  Operation *collective = scratch.collective;
  // The decompositions chosen for others first: they are what the
  // collective's forms run beside. One whose einsums reach out of the
  // window stays as it is.
  for (auto [other, otherLoop] : context.decomposed)
    if (Operation *copy = scratch.copies.lookup(other))
      if (copy != collective && !takesAlong(copy, otherLoop, collective))
        (void)decomposeCollective(rewriter, copy, otherLoop);
  if (!collective) {
    // A whole block: no collective of its own.
  } else if (form == CollectiveForm::Decomposed) {
    if (failed(decomposeCollective(rewriter, collective, loop))) {
      why = "the rewrite does not apply";
      return failure();
    }
    collective = nullptr;
  } else if (form == CollectiveForm::Asynchronous) {
    if (failed(makeCollectiveAsynchronous(rewriter, collective))) {
      why = "it has no asynchronous form";
      return failure();
    }
    collective = nullptr;
  }
  if (context.asyncCollectives) {
    SmallVector<Operation *> others;
    scratch.func.walk([&](Operation *op) {
      if (op != collective &&
          isa<AllGatherOp, ReduceScatterOp, AllReduceOp>(op))
        others.push_back(op);
    });
    for (Operation *op : others)
      (void)makeCollectiveAsynchronous(rewriter, op);
  }
  PricingCache::Cleanup uncached;
  PassManager &cleanup =
      (cache ? cache->cleanup : uncached).get(scratch.func->getContext());
  if (failed(cleanup.run(scratch.func)) || failed(verify(scratch.func))) {
    why = "the program does not survive the clean-up passes";
    return failure();
  }
  ScheduleOptions schedule;
  schedule.simulatedImproveReplays = simulatedImproveReplays;
  schedule.schedules = cache ? &cache->schedules : nullptr;
  if (failed(scheduleRegions(scratch.func, machines, schedule))) {
    why = "the scheduler cannot order it";
    return failure();
  }
  return success();
}

PricingCache::Cleanup::Cleanup() = default;
// A pass manager runs on one thread at a time: a copy builds its own.
PricingCache::Cleanup::Cleanup(const Cleanup &) {}
PricingCache::Cleanup &PricingCache::Cleanup::operator=(const Cleanup &) {
  return *this;
}
PricingCache::Cleanup::~Cleanup() = default;

PassManager &PricingCache::Cleanup::get(MLIRContext *context) {
  if (!passes || passes->getContext() != context) {
    passes = std::make_unique<PassManager>(context,
                                           func::FuncOp::getOperationName());
    addAsyncCleanupPasses(*passes);
    // Verified once at the end rather than after each pass: the forms are
    // built by tested rewrites, and a window is verified thousands of
    // times.
    passes->enableVerifier(false);
  }
  return *passes;
}

FailureOr<double> mlir::ovl::estimateBlock(
    Block *block, const MachineModel &machine, MachineModelCache &machines,
    const FormContext &context, PricingCache *cache, std::string &why) {
  SmallVector<Operation *> ops;
  for (Operation &op : block->without_terminator())
    ops.push_back(&op);
  if (ops.empty()) {
    why = "the block is empty";
    return failure();
  }
  ScratchWindow scratch =
      copyWindow(/*collective=*/nullptr, ops, block->getParentOp()->getLoc());
  // Priced as the pipeline builds it, with the final schedule's budget.
  if (failed(buildForm(scratch, CollectiveForm::Blocking, DecomposeOptions(),
                       context, machines, sched::kImproveReplays, cache, why)))
    return failure();
  FailureOr<SimReport> report = price(scratch.func, machine, why);
  if (failed(report))
    return failure();
  return report->stepTime;
}

/// What determines the estimates of `collective`'s window: the window's
/// module printed (its digest, printed once per window), which op of it the
/// collective is, which ops the context decomposes how, and what is priced
/// how (not which loops: each loop's estimate is kept apart).
static std::string getCacheKey(Operation *collective,
                               PricingCache::Window &window,
                               const FormContext &context) {
  if (window.printed.empty()) {
    ScratchWindow scratch =
        copyWindow(collective, window.ops, collective->getLoc());
    std::string text;
    llvm::raw_string_ostream os(text);
    scratch.module->print(os);
    window.printed =
        llvm::toHex(llvm::BLAKE3::hash(llvm::arrayRefFromStringRef(text)));
  }
  ArrayRef<Operation *> ops = window.ops;
  std::string key;
  llvm::raw_string_ostream os(key);
  os << window.printed << "\nsubject "
     << llvm::find(ops, collective) - ops.begin();
  for (auto [op, loop] : context.decomposed)
    if (const auto *it = llvm::find(ops, op); it != ops.end())
      os << "\ndecomposed " << it - ops.begin() << " " << describeLoop(loop);
  os << "\nasync " << context.asyncCollectives << " price-decomposition "
     << context.priceDecomposition;
  return key;
}

/// The window of `collective` (see getWindow), from `cache` when it has it.
static PricingCache::Window &findWindow(Operation *collective,
                                        const MachineModel &machine,
                                        PricingCache *cache,
                                        PricingCache::Window &uncached) {
  PricingCache::Window *window = &uncached;
  if (cache) {
    auto [it, inserted] = cache->windows.try_emplace(collective);
    window = &it->second;
    if (!inserted)
      return *window;
  }
  FailureOr<SmallVector<Operation *>> ops =
      getWindow(collective, machine, window->why);
  if (succeeded(ops))
    window->ops = std::move(*ops);
  return *window;
}

FailureOr<CollectiveEstimate> mlir::ovl::estimateCollectiveForms(
    Operation *collective, const MachineModel &machine,
    MachineModelCache &machines, ArrayRef<DecomposeOptions> loops,
    const FormContext &context, PricingCache *cache, std::string &why) {
  assert((isa<AllGatherOp, ReduceScatterOp, AllReduceOp>(collective)) &&
         "prices all_gather, reduce_scatter and all_reduce");
  assert(!loops.empty() && "prices at least one loop");
  PricingCache::Window uncached;
  PricingCache::Window &found =
      findWindow(collective, machine, cache, uncached);
  if (!found.why.empty()) {
    why = found.why;
    return failure();
  }
  ArrayRef<Operation *> window = found.ops;
  std::string key;
  const CollectiveEstimate *known = nullptr;
  if (cache) {
    key = getCacheKey(collective, found, context);
    auto it = cache->estimates.find(key);
    known = it == cache->estimates.end() ? nullptr : &it->second;
  }
  bool decomposable =
      context.priceDecomposition && whyNotDecomposable(collective).empty();
  auto priceForm =
      [&](CollectiveForm form,
          const DecomposeOptions &loop) -> FailureOr<FormEstimate> {
    ScratchWindow scratch =
        copyWindow(collective, window, collective->getLoc());
    if (failed(buildForm(scratch, form, loop, context, machines,
                         sched::kPricingSimulatedImproveReplays, cache, why)))
      return failure();
    FailureOr<SimReport> report = price(scratch.func, machine, why);
    if (failed(report))
      return failure();
    LLVM_DEBUG(llvm::dbgs()
               << "[" DEBUG_TYPE "] " << collective->getName() << " @ "
               << collective->getLoc() << ": " << stringifyCollectiveForm(form)
               << (form == CollectiveForm::Decomposed ? " " + describeLoop(loop)
                                                      : "")
               << " " << report->stepTime << " s (compute "
               << report->computeTime << ") in a window of " << window.size()
               << " ops\n");
    return FormEstimate{report->stepTime, report->computeTime};
  };
  // Every form priced in this window before (the layers of a model repeat
  // their windows, and the gate asks again for one loop variant at a time)
  // is taken from the cache; only the loops not priced yet are built.
  CollectiveEstimate priced;
  bool pricedNow = false;
  if (known) {
    priced = *known;
  } else {
    FailureOr<FormEstimate> blocking =
        priceForm(CollectiveForm::Blocking, loops.front());
    if (failed(blocking))
      return failure();
    priced.blocking = *blocking;
    if (context.asyncCollectives) {
      FailureOr<FormEstimate> async =
          priceForm(CollectiveForm::Asynchronous, loops.front());
      if (failed(async))
        return failure();
      priced.asynchronous = *async;
    }
    pricedNow = true;
  }
  for (const DecomposeOptions &loop :
       decomposable ? loops : ArrayRef<DecomposeOptions>()) {
    if (llvm::any_of(priced.loops, [&](const LoopEstimate &known) {
          return known.loop == loop;
        }))
      continue;
    FailureOr<FormEstimate> decomposed =
        priceForm(CollectiveForm::Decomposed, loop);
    if (failed(decomposed))
      return failure();
    priced.loops.push_back({loop, *decomposed});
    pricedNow = true;
  }
  if (cache) {
    if (!pricedNow) {
      ++cache->hits;
      LLVM_DEBUG(llvm::dbgs()
                 << "[" DEBUG_TYPE "] " << collective->getName() << " @ "
                 << collective->getLoc() << ": its window was priced before\n");
    }
    cache->estimates[key] = priced;
  }
  // The loops asked for, in their order; the fastest, a tie keeping the
  // earlier, simpler one.
  CollectiveEstimate estimate;
  estimate.blocking = priced.blocking;
  estimate.asynchronous = priced.asynchronous;
  for (const DecomposeOptions &loop :
       decomposable ? loops : ArrayRef<DecomposeOptions>()) {
    auto it = llvm::find_if(priced.loops, [&](const LoopEstimate &known) {
      return known.loop == loop;
    });
    estimate.loops.push_back(*it);
    if (!estimate.decomposed || it->estimate.step < estimate.decomposed->step) {
      estimate.decomposed = it->estimate;
      estimate.loop = loop;
    }
  }
  SymbolTableCollection symbols;
  estimate.groupSize =
      cast<CollectiveOpInterface>(collective).getGroupSize(symbols).value_or(0);
  return estimate;
}
