//===- PassOptions.td - Options shared with the pipeline ---*- tablegen -*-===//
//
// The decomposition's and the scheduler's options, declared once: the two
// passes take them, and `ovl-overlap-pipeline` takes both lists (with the
// machine options) and hands them on.
//
//===----------------------------------------------------------------------===//

#ifndef OVERLAP_OVL_TRANSFORMS_PASSOPTIONS_TD
#define OVERLAP_OVL_TRANSFORMS_PASSOPTIONS_TD

include "mlir/Pass/PassBase.td"

defvar Overlap_DecomposeOptions = [
  Option<"unroll", "unroll", "::mlir::ovl::UnrollChoice",
         /*default=*/"::mlir::ovl::UnrollChoice::Auto",
         "Ring steps per loop iteration: 1, 2, or auto (the default: the "
         "gate prices both for each candidate and builds the faster; 1 for "
         "a candidate it cannot price)",
         [{::llvm::cl::values(
           clEnumValN(::mlir::ovl::UnrollChoice::One, "1", "one step"),
           clEnumValN(::mlir::ovl::UnrollChoice::Two, "2", "two steps"),
           clEnumValN(::mlir::ovl::UnrollChoice::Auto, "auto",
                      "the faster per candidate"))}]>,
  Option<"bidirectional", "bidirectional", "::mlir::ovl::DirectionChoice",
         /*default=*/"::mlir::ovl::DirectionChoice::Auto",
         "Which way the ring's data goes: false (one way), true (half of "
         "the shards each way, the paper's figures 9 and 10), split (half of "
         "every shard each way, where the pair has a free dim of even size "
         "to halve; else as true), or auto (the default: the gate prices "
         "each for each candidate and builds the fastest; false for a "
         "candidate it cannot price)",
         [{::llvm::cl::values(
           clEnumValN(::mlir::ovl::DirectionChoice::Unidirectional, "false",
                      "one way round"),
           clEnumValN(::mlir::ovl::DirectionChoice::Bidirectional, "true",
                      "half of the shards each way"),
           clEnumValN(::mlir::ovl::DirectionChoice::Split, "split",
                      "half of every shard each way"),
           clEnumValN(::mlir::ovl::DirectionChoice::Auto, "auto",
                      "the faster per candidate"))}]>,
  Option<"gatherScatter", "gather-scatter",
         "::mlir::ovl::GatherScatterChoice",
         /*default=*/"::mlir::ovl::GatherScatterChoice::Auto",
         "Decompose a reduce_scatter together with the all_gather feeding "
         "its einsum, where the gathered letter is the scattered one (the "
         "gather-scatter form): auto (the default: variants the gate "
         "prices when unroll and bidirectional are auto and the gather's "
         "group has at most 16 devices), true (the only variants "
         "of every pair that qualifies; split as bidirectional says) or "
         "false",
         [{::llvm::cl::values(
           clEnumValN(::mlir::ovl::GatherScatterChoice::Never, "false",
                      "never"),
           clEnumValN(::mlir::ovl::GatherScatterChoice::Always, "true",
                      "every pair that qualifies"),
           clEnumValN(::mlir::ovl::GatherScatterChoice::Auto, "auto",
                      "priced among the variants"))}]>,
  Option<"gate", "gate", "::mlir::ovl::DecomposeGate",
         /*default=*/"::mlir::ovl::DecomposeGate::Cost",
         "Which decomposable pairs to rewrite: cost (those the cost "
         "model estimates a gain for), always or never",
         [{::llvm::cl::values(
           clEnumValN(::mlir::ovl::DecomposeGate::Cost, "cost",
                      "those the cost model estimates a gain for"),
           clEnumValN(::mlir::ovl::DecomposeGate::Always, "always",
                      "all of them"),
           clEnumValN(::mlir::ovl::DecomposeGate::Never, "never",
                      "none"))}]>,
  Option<"asyncCollectives", "async-collectives", "bool",
         /*default=*/"true",
         "Let each all_gather, reduce_scatter and all_reduce not decomposed "
         "become asynchronous, for ovl-schedule to hide behind independent "
         "work: with gate=cost when the cost model prices that faster than "
         "blocking (and a pair is decomposed only when that beats both), "
         "otherwise always; false keeps them blocking (the paper's gate)">,
  Option<"remarks", "remarks", "bool", /*default=*/"false",
         "Emit a remark for each candidate: what was decided and why, "
         "with the estimated times">,
];

defvar Overlap_ScheduleOptions = [
  Option<"algorithm", "algorithm", "::mlir::ovl::ScheduleAlgorithm",
         /*default=*/"::mlir::ovl::ScheduleAlgorithm::BottomUp",
         "The list scheduler: bottom-up (the paper's algorithm 2) or "
         "top-down",
         [{::llvm::cl::values(
           clEnumValN(::mlir::ovl::ScheduleAlgorithm::BottomUp, "bottom-up",
                      "from the terminator upwards, ready and pending "
                      "queues"),
           clEnumValN(::mlir::ovl::ScheduleAlgorithm::TopDown, "top-down",
                      "starts as early, dones as late as allowed, after "
                      "rebalancing by cost"))}]>,
  Option<"maxInFlight", "max-in-flight", "unsigned", /*default=*/"0",
         "Asynchronous transfers in flight at once (0: the hardware's "
         "dmaSlots)">,
  Option<"memoryBudget", "memory-budget", "double", /*default=*/"0",
         "Bytes the buffers of a block's transfers in flight may hold at "
         "once, so that prefetching cannot exceed memory (0: the "
         "hardware's hbmCapacity; unlimited when that is unknown)">,
];

#endif // OVERLAP_OVL_TRANSFORMS_PASSOPTIONS_TD
