//===- Passes.td - Transformations of ovl programs ---------*- tablegen -*-===//
//
// The passes of the paper: decomposing collective+einsum pairs into ring
// loops, making their permutes asynchronous and scheduling them.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAP_DIALECT_OVL_TRANSFORMS_PASSES_TD
#define OVERLAP_DIALECT_OVL_TRANSFORMS_PASSES_TD

include "OverlapDialect/Analysis/MachineOptions.td"
include "OverlapDialect/Dialect/Ovl/Transforms/PassOptions.td"
include "mlir/Pass/PassBase.td"

def OvlDecomposeCollectiveEinsumPass
    : Pass<"ovl-decompose-collective-einsum", "::mlir::func::FuncOp"> {
  let summary = "Decompose AllGather-Einsum and Einsum-ReduceScatter into "
                "ring loops (Looped CollectiveEinsum)";
  let description = [{
    Rewrites each `ovl.all_gather` whose result feeds `ovl.einsum`s, and
    each `ovl.einsum` whose result feeds an `ovl.reduce_scatter`, into a
    loop over the N devices of the collective's group that computes one
    partial einsum per shard while `ovl.collective_permute` ring steps
    bring the next shard (AllGather) or carry the partial sums on
    (ReduceScatter). This is the Looped CollectiveEinsum of the paper's
    section 5.1; `ovl-async-collectives` then makes the permutes
    asynchronous.

    AllGather cases, by the role of the gathered dimension's letter in the
    einsum: **case 1** free in the gathered operand (partial results are
    inserted with `tensor.insert_slice`), **case 2** contracting (the other
    operand is sliced with `tensor.extract_slice`, partial results are
    accumulated through the einsum's `acc` operand), **case 3** batch (the
    other operand is sliced along the batch dim, results inserted along it).
    A letter summed inside the gathered operand alone is accumulated like
    case 2 without slicing. The gathered operand may be either einsum
    input, the gathered dim any dim, the group any set of mesh axes; an
    all_gather feeding several einsums (Q, K and V projections) gets one
    loop that feeds all of them.

    ReduceScatter: the scattered output dim's letter must be free in one
    operand (that operand is sliced) or batch (both are sliced); the
    partial sum travels the ring and each step adds the partial einsum of
    the shard it will end on, so that device `id` ends with shard `id`.

    The ring pairs are `{0 -> N-1, 1 -> 0, ..., N-1 -> N-2}`: data moves to
    the left neighbour. The last AllGather step issues no permute.

    Options: `unroll=2` puts two ring steps in each loop iteration (double
    buffering for AllGather; two interleaved accumulation chains with a
    one-hop epilogue for ReduceScatter, figure 8); `bidirectional=true`
    sends half the shards each way round the ring (figures 9 and 10) and
    computes the two directions' partial einsums as one einsum on
    concatenated operands; `bidirectional=split` halves the pair along a
    free dim and sends each half of every shard its own way round, so each
    link direction carries (N-1)/2 shards as the blocking collective does.
    A collective with the `ovl.no_decompose` unit
    attribute is left alone.

    Gather-scatter form: an einsum that reads an `ovl.all_gather` along
    some grid axes (N devices) and whose result an `ovl.reduce_scatter`
    scatters along other axes (M devices, M dividing N) on the gathered
    letter, free in the einsum, is decomposed as one: the gathered shards go
    round the gather's ring while the partial sums of their columns go round
    the scatter's, each device adding its part one hop per N/M rounds (the
    rows of the gather's axes start rotated by N/M per position along the
    scatter's). The gathered tensor is never whole unless later users read
    it, for whom the rounds assemble it. Split (with `bidirectional`
    split or auto), each half of every shard goes its own way round the
    gather's ring. `gather-scatter=auto` (the
    default) makes it one more variant of the reduce_scatter the gate
    prices, when `unroll` and `bidirectional` are auto and N is at most 16;
    `gather-scatter=true` builds it for every pair that qualifies, and
    `gather-scatter=false` never.

    The cost-model gate (section 5.5) decides which decomposable pairs are
    rewritten. It prices what it would build: the pair is copied on its own,
    priced, rewritten exactly as this pass rewrites it, and priced again;
    with `gate=cost` (the default) the pair is decomposed when the loop is
    faster (a tie keeps the collective). Pricing is `overlap-sim` itself:
    the program as the simulator lowers it, played on every device of the
    machine the `hardware`, `topology` and `device-assignment` options
    describe (as for `ovl-lower-to-ici` and `overlap-sim`): compute on one
    stream per device, a blocking collective as the rounds of the algorithm
    its size and placement call for, each transfer routed on the topology
    and sharing links with the others in flight. The rewritten pair is
    priced after what `ovl-overlap-pipeline` runs next (asynchronous
    permutes, canonicalize, CSE, the default scheduler). Whatever the loop adds (partial
    einsums memory-bound where the whole one is not, additions, zero fills,
    concatenations) is priced because it is there. An einsum with two
    candidates (two gathered inputs, or a gathered input and a scattered
    result) is decomposed for the one with the larger gain only, unless
    the reduce_scatter's gather-scatter form, which takes both, is chosen.
    `gate=always` decomposes every decomposable pair (still the larger gain
    of two), `gate=never` none. A machine that cannot be built (unknown
    hardware, a topology too small for the grid, a bad device assignment)
    is an error. `remarks=true` emits a remark for every candidate: what
    was decided and why, with the estimated times, or why the pair cannot
    be decomposed.

    ```mlir
    %w = ovl.all_gather %w_shard on @ring axes [0] dim 1
        : tensor<32x16xf32> -> tensor<32x64xf32>
    %y = ovl.einsum "bf,fh->bh" %x, %w
        : tensor<4x32xf32>, tensor<32x64xf32> -> tensor<4x64xf32>
    // becomes, for the 4 devices of @ring (when decomposed):
    %id = ovl.partition_id on @ring axes [0] : index
    %r:2 = scf.for %k = %c0 to %c3 step %c1
        iter_args(%shard = %w_shard, %y0 = %empty) -> (...) {
      %next = ovl.collective_permute %shard on @ring axes [0]
          pairs [0 -> 3, 1 -> 0, 2 -> 1, 3 -> 2] : tensor<32x16xf32>
      %j = ((%id + %k) mod 4) * 16
      %part = ovl.einsum "bf,fh->bh" %x, %shard : ... -> tensor<4x16xf32>
      %y1 = tensor.insert_slice %part into %y0[0, %j] [4, 16] [1, 1]
      scf.yield %next, %y1 : ...
    }
    // ... and the last step, without a permute.
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::bufferization::BufferizationDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::tensor::TensorDialect"];
  let options = !listconcat(Overlap_MachineOptions, Overlap_DecomposeOptions);
  let statistics = [
    Statistic<"numAllGathers", "all-gathers", "AllGather-Einsum pairs rewritten">,
    Statistic<"numReduceScatters", "reduce-scatters",
              "Einsum-ReduceScatter pairs rewritten">,
    Statistic<"numAsynchronous", "asynchronous",
              "Collectives kept and made asynchronous">,
    Statistic<"numWindowsReused", "windows-reused",
              "Collectives priced from an identical window priced before">,
  ];
}

def OvlAsyncCollectivesPass
    : Pass<"ovl-async-collectives", "::mlir::func::FuncOp"> {
  let summary = "Turn blocking collectives into start/done pairs around the "
                "work they can overlap";
  let description = [{
    Replaces each `ovl.collective_permute` with an
    `ovl.collective_permute_start` at its place and an
    `ovl.collective_permute_done` right before the first use of its result,
    so that whatever the program does in between (in a decomposed loop, the
    partial einsum of the same step) runs while the data moves (the paper's
    section 5.2; `ovl-schedule` later reorders for more overlap).

    `kinds` says which collectives (default: `permute` alone). With
    `all_gather`, `reduce_scatter` or `all_reduce`, each such blocking
    collective likewise becomes `ovl.all_gather_start` (...) into a fresh
    destination and an `ovl.collective_done` before the first use of its
    result, so that independent work placed between them hides it.

    The start needs a destination buffer. A permute whose input came from
    another permute of the same block (directly, or through the
    accumulator of an einsum) receives into that permute's send buffer,
    which is free once the earlier transfer is done. The first permute of
    such a chain receives into a spare buffer: in an `scf.for`, a new
    iteration argument that the loop yields back as the chain's last send
    buffer, so that a loop with two steps per iteration bufferizes with no
    allocation or copy; elsewhere a new buffer. New buffers are
    `bufferization.alloc_tensor`s, which CSE does not merge: two transfers
    must never share a destination.

    ```mlir
    %next = ovl.collective_permute %shard on @ring axes [0]
        pairs [0 -> 1, 1 -> 0] : tensor<4x8xf32>
    %part = ovl.einsum "bf,fh->bh" %x, %shard : ...
    %use = ovl.einsum "bf,fh->bh" %x, %next : ...
    // becomes
    %pending, %token = ovl.collective_permute_start %shard into %spare
        on @ring axes [0] pairs [0 -> 1, 1 -> 0] : tensor<4x8xf32>
    %part = ovl.einsum "bf,fh->bh" %x, %shard : ...
    %next = ovl.collective_permute_done %token keep(%shard) into %pending
        : tensor<4x8xf32>
    %use = ovl.einsum "bf,fh->bh" %x, %next : ...
    ```
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect",
                           "::mlir::scf::SCFDialect"];
  let options = [
    ListOption<"kinds", "kinds", "std::string",
               "Which collectives to make asynchronous: permute, all_gather, "
               "reduce_scatter, all_reduce (default: permute)">,
  ];
  let statistics = [
    Statistic<"numPermutes", "permutes", "Permutes made asynchronous">,
    Statistic<"numCollectives", "collectives",
              "All-gathers, reduce-scatters and all-reduces made asynchronous">,
  ];
}

def OvlVerifyCollectivesPass
    : Pass<"ovl-verify-collectives", "::mlir::ModuleOp"> {
  let summary = "Check that every device issues the same collectives and "
                "that asynchronous permutes are used safely";
  let description = [{
    A static check of the SPMD program every device runs; the IR is left
    unchanged and the pass fails with a located error for each violation:

    - **Communication under control flow that differs between devices.**
      A value differs between devices when it depends on
      `ovl.partition_id` or on data (a scalar read from a tensor or buffer,
      what a call returns). An `scf.if` whose condition differs must issue
      the same communication (ops, grids, axes, pairs, types, in order) in
      both branches; a loop whose trip count differs, an `scf.while` whose
      condition differs, and a `cf` branch that differs in a function that
      communicates are refused. Calls of functions that communicate count
      as communication; scalar function arguments are the same on every
      device unless a call passes one that differs.
    - **Tokens.** Every `!ovl.token` (a start's, or one carried through
      loop arguments and region results) has exactly one use, in its own
      block: one done on every path, none dropped, none awaited twice;
      a done's keep and pending operands are the start's input and
      pending result along every path the token takes through `scf.for`
      arguments and `scf.if`/`scf.for` results.
    - **In-flight buffers.** A tensor permute's pending result is taken
      only by its done (or carried on with the token); between a buffer
      permute's start and done no op reads or writes the receive buffer,
      or writes the send buffer (memory effects, local alias analysis).

    `ovl-overlap-pipeline` runs it on its input and its output;
    `overlap-run` and `overlap-sim` run it before they play a program.

    ```mlir
    %id = ovl.partition_id on @ring axes [0] : index
    %first = arith.cmpi eq, %id, %c0 : index
    scf.if %first {   // error: the branches communicate differently
      %g = ovl.all_gather %x on @ring axes [0] dim 0 : ...
    }
    ```
  }];
}

def OvlVerifyInputPass : Pass<"ovl-verify-input"> {
  let summary = "Refuse degenerate grids, then verify the program";
  let description = [{
    Refuses each `shard.grid` with an axis of size 0 (a located error: every
    axis of a grid holds a device), then runs the verifier on the operation
    and everything in it. The IR is left unchanged.

    MLIR 22's verifiers of the shard ops divide by the sizes of their grid's
    axes (`shard.all_slice` on an axis of size 0 dies of SIGFPE), so a
    program has to be checked for such grids before they run.
    `overlap-opt` parses its input without verifying it and runs this pass
    ahead of the pipeline it is given; `overlap-sim`, `overlap-run` and the
    C API's parse apply the same check.
  }];
}

def OvlSchedulePass : Pass<"ovl-schedule", "::mlir::func::FuncOp"> {
  let summary = "Reorder each block so that asynchronous permutes hide "
                "behind computation (latency-hiding scheduling)";
  let description = [{
    Reorders the operations of every block of the function (its body, loop
    bodies, the regions of `scf.if` and other control flow, nested blocks
    first) so that the transfers between `ovl.collective_permute_start` and
    `ovl.collective_permute_done` overlap as much computation as the cost
    model estimates they need, with at most `max-in-flight` transfers in
    flight at any point. The order is the schedule `overlap-sim` and the
    runtime follow (the paper's section 5.2). Operations never cross blocks
    and terminators stay last.

    `algorithm=bottom-up` (the default, the paper's algorithm 2) is a list
    scheduler running from the terminator upwards: a ready queue that
    prefers dones and their users, a pending queue of starts whose transfer
    is not yet covered by what was scheduled below them (ready times from
    the cost model), and the in-flight budget: a done that would exceed it
    waits and the next candidate goes instead. A start therefore lands as
    late as its transfer allows, which keeps buffers short-lived.
    `algorithm=top-down` schedules forwards: each start as early as its
    operands and the budget allow, each done as late as its users allow,
    except that a done whose transfer has arrived (estimated) moves up when
    that lets another transfer start, so that the work is spread between
    the transfers by cost rather than piled behind the first.

    Transfers are timed as `overlap-sim` plays them: every transfer of a
    permute (each pair, in every group) is routed on the topology, and
    transfers streaming over the same links share their bandwidth. The list
    order is then improved by moving starts and dones (with the ops they
    need, or that need them, that they pass) where a replay of the block on
    that model finds it faster, and an order priced slower than the block's
    input order is never kept: the block keeps its input order (statistic
    `kept-input`). Blocks whose transfers all start and end in them are
    priced by the event simulator on every device instead of the replay
    (their moves too when devices x ops <= 4096).

    Dependencies are SSA uses (also from inside nested regions), in-place
    writes (an op writing into a tensor it takes as destination stays after
    the earlier readers of that tensor, so bufferization needs no copy) and
    memory-effect conflicts; ops with unknown effects are barriers. The
    communication resource of ovl collectives does not order them: every
    device runs the same, deterministically scheduled program. An op of any
    dialect is opaque compute priced by the cost model (its cost interface,
    one pass over its data when side-effect free) or a default of 1 us.

    A start occupies a slot until its done; tokens entering a block as
    arguments (carried from the previous iteration) occupy one from the
    block's start; an op with regions (an `scf.for` with permutes) needs as
    many slots as its own body at its peak. The costs and the budget come
    from the machine the `hardware`, `topology` and `device-assignment`
    options describe (as for `ovl-decompose-collective-einsum`); with
    `max-in-flight=0` the budget is the hardware's `dmaSlots`. The schedule
    is deterministic (ties keep the input order) and scheduling it again
    changes nothing.

    ```mlir
    %p, %t = ovl.collective_permute_start %a into %buf on @ring axes [0]
        pairs [0 -> 1, 1 -> 0] : tensor<32x16xf32>
    %d = ovl.collective_permute_done %t keep(%a) into %p : tensor<32x16xf32>
    %u = ovl.einsum "bf,fh->bh" %x, %d : ...
    %e = ovl.einsum "bf,fh->bh" %x, %w : ...   // independent work
    // becomes
    %p, %t = ovl.collective_permute_start %a into %buf ...
    %e = ovl.einsum "bf,fh->bh" %x, %w : ...
    %d = ovl.collective_permute_done %t keep(%a) into %p : tensor<32x16xf32>
    %u = ovl.einsum "bf,fh->bh" %x, %d : ...
    ```
  }];
  let options = !listconcat(Overlap_MachineOptions, Overlap_ScheduleOptions);
  let statistics = [
    Statistic<"numBlocks", "blocks", "Blocks scheduled">,
    Statistic<"numMoved", "ops-moved",
              "Operations whose position in their block changed">,
    Statistic<"numOverBudget", "over-budget",
              "Blocks whose dependencies force more transfers in flight "
              "than the budget">,
    Statistic<"numKeptInput", "kept-input",
              "Blocks left in their input order, which the cost model "
              "prices faster than the scheduler's">,
  ];
}

#endif // OVERLAP_DIALECT_OVL_TRANSFORMS_PASSES_TD
