//===- ContractionSchedule.mlir - Packed, vectorized f32 contractions -----===//
//
// Transform script: BLIS-style packing + register tiling for f32
// matmul-like contractions on tensors (MLIR 22).
//
// The `ovl-to-llvm` pipeline embeds this file (CMake turns it into a string
// at configure time, see CMakeLists.txt) and applies it with its `vectorize`
// option; bench/matmul uses the same file through `transform-interpreter`
// (entry point `@__transform_main`). Either way it runs on a module whose
// functions hold `linalg` ops on tensors, before bufferization. It rewrites
// every f32 contraction that looks like
//
//     C[(b,) m, n] += A[(b,) m|k, k|m] * B[(b,) k|n, n|k]
//
// (a named `linalg.matmul` / `linalg.batch_matmul`, with or without
// transposed operands through `indexing_maps`, or the equivalent
// `linalg.generic`, with its loops in the order (b,) m, n, k, which is what
// `ovl-einsum-to-linalg` emits for "mk,kn->mn"-like einsums) into
//
//   for nc in N step NC
//     for pc in K step KC                    \  B block (KC x NC) packed as
//                                             | [NC/NR][KC][1][NR] (hoisted pad)
//       for ic in M step MC                   \ A block (MC x KC) packed as
//         for jr in NC step NR                  [MC/MR][KC][MR][1] (hoisted pad)
//           for ir in MC step MR
//             acc = C[ir:+MR, jr:+NR]         (MR x NR/lanes vector accumulators)
//             for k in KC: acc += A_pack[k] (x) B_pack[k]   (broadcast + FMA)
//             C[ir:+MR, jr:+NR] = acc
//
// Everything else in the module is left alone (other contractions, e.g. f64
// ones or loops in another order, are lowered to plain loops by the
// pipeline). Contractions of bf16 or f16 inputs into f32 reach this script
// as f32 contractions of inputs widened by elementwise ops, which
// `ovl-apply-contraction-schedule` adds before it and folds into the vector
// reads of the packing copies after it: the packing reads bf16 (or f16),
// extends it in registers and stores f32 into the packed buffers, so the
// micro-kernel is the f32 one and no widened copy of A or B is written.
// Partial blocks and partial register tiles (sizes that are not
// multiples of the tile sizes) are peeled off into copies with smaller static
// sizes, so every micro-kernel is static; what is still partial is
// zero-padded into the packed buffers.
//
// The tile sizes come from one place, @tile_sizes below. Its constants are
// for one AVX-512 core (32 KiB L1d, 1 MiB L2):
//   MR x NR = 8 x 32: 16 zmm accumulators + 2 B vectors + 1 broadcast;
//   KC = 256: a KC x NR B micro-panel is 32 KiB (L1);
//   MC = 256: an MC x KC A block is 256 KiB (L2);
//   NC = 1024: a KC x NC B block is 1 MiB (L2/L3).
// `ovl-apply-contraction-schedule` replaces them with the sizes for its
// target CPU (overlap::contractionTilesFor in lib/Support/TargetCpu.cpp:
// e.g. 6 x 16 for AVX2's 16 ymm registers, KC and MC from the host's
// caches); bench/matmul, which applies this file as it is, uses them
// unchanged. The hoisting depths (`by N loops` in @pack_and_vectorize)
// follow from the loop structure, not from the sizes.
//
// Tags (discardable attributes, gone after vectorization): `ovl.pack_matmul`,
// `ovl.pack_batch_matmul` (matched contractions), `ovl.block`,
// `ovl.batch_block` (cache blocks), `ovl.microkernel` (register tiles).
//
// After this script the IR holds vector ops (fma / broadcast / transfer) and
// tensors; the pass pipeline (`ovl-to-llvm`, or bench/matmul/pipeline.txt)
// bufferizes and lowers it.
//
//===----------------------------------------------------------------------===//

module attributes {transform.with_named_sequence} {

  /// The tile sizes, yielded in the order MR, NR, MC, NC, KC (the pass
  /// rewrites these constants in place, by their position in the yield).
  transform.named_sequence @tile_sizes()
      -> (!transform.param<i64>, !transform.param<i64>, !transform.param<i64>,
          !transform.param<i64>, !transform.param<i64>) {
    %mr = transform.param.constant 8 : i64 -> !transform.param<i64>
    %nr = transform.param.constant 32 : i64 -> !transform.param<i64>
    %mc = transform.param.constant 256 : i64 -> !transform.param<i64>
    %nc = transform.param.constant 1024 : i64 -> !transform.param<i64>
    %kc = transform.param.constant 256 : i64 -> !transform.param<i64>
    transform.yield %mr, %nr, %mc, %nc, %kc
      : !transform.param<i64>, !transform.param<i64>, !transform.param<i64>,
        !transform.param<i64>, !transform.param<i64>
  }

  //===--------------------------------------------------------------------===//
  // Matchers
  //===--------------------------------------------------------------------===//

  /// Succeeds on an f32 contraction `C += A * B` with static sizes and loops
  /// (m, n, k): one M, one N and one K dimension, in that order, no batch
  /// dimension.
  transform.named_sequence @match_f32_matmul(
      %op: !transform.any_op {transform.readonly}) -> !transform.any_op {
    transform.match.structured %op : !transform.any_op {
    ^bb0(%c: !transform.any_op):
      %c0 = transform.param.constant 0 : i64 -> !transform.param<i64>
      %c1 = transform.param.constant 1 : i64 -> !transform.param<i64>
      %c2 = transform.param.constant 2 : i64 -> !transform.param<i64>
      %c3 = transform.param.constant 3 : i64 -> !transform.param<i64>
      %c32 = transform.param.constant 32 : i64 -> !transform.param<i64>
      %rank = transform.match.structured.rank %c
        : (!transform.any_op) -> !transform.param<i64>
      transform.match.param.cmpi eq %rank, %c3 : !transform.param<i64>
      // Static sizes only (a dynamic one reads as negative): hoist_pad
      // crashes on dynamically shaped blocks in 22.1.
      %d0 = transform.match.structured.dim %c[0]
        : (!transform.any_op) -> !transform.param<i64>
      transform.match.param.cmpi ge %d0, %c1 : !transform.param<i64>
      %d1 = transform.match.structured.dim %c[1]
        : (!transform.any_op) -> !transform.param<i64>
      transform.match.param.cmpi ge %d1, %c1 : !transform.param<i64>
      %d2 = transform.match.structured.dim %c[2]
        : (!transform.any_op) -> !transform.param<i64>
      transform.match.param.cmpi ge %d2, %c1 : !transform.param<i64>
      %n_ins = transform.match.structured.num_inputs %c
        : (!transform.any_op) -> !transform.param<i64>
      transform.match.param.cmpi eq %n_ins, %c2 : !transform.param<i64>
      %n_inits = transform.match.structured.num_inits %c
        : (!transform.any_op) -> !transform.param<i64>
      transform.match.param.cmpi eq %n_inits, %c1 : !transform.param<i64>
      transform.match.structured.input %c[all] {projected_permutation}
        : !transform.any_op
      transform.match.structured.init %c[0] {projected_permutation}
        : !transform.any_op
      transform.match.structured.body %c
        { contraction = ["arith.mulf", "arith.addf"] } : !transform.any_op
      // f32 operands: with the float body above, 32-bit elements are f32.
      // The body matcher also accepts casts, e.g. bf16 inputs extended to an
      // f32 accumulator, which the f32 padding below would not fit.
      %init = transform.match.structured.init %c[0]
        : (!transform.any_op) -> !transform.any_value
      %bw = transform.match.structured.elemental_bitwidth %init
        : (!transform.any_value) -> !transform.param<i64>
      transform.match.param.cmpi eq %bw, %c32 : !transform.param<i64>
      %lhs = transform.match.structured.input %c[0]
        : (!transform.any_op) -> !transform.any_value
      %lhs_bw = transform.match.structured.elemental_bitwidth %lhs
        : (!transform.any_value) -> !transform.param<i64>
      transform.match.param.cmpi eq %lhs_bw, %c32 : !transform.param<i64>
      %rhs = transform.match.structured.input %c[1]
        : (!transform.any_op) -> !transform.any_value
      %rhs_bw = transform.match.structured.elemental_bitwidth %rhs
        : (!transform.any_value) -> !transform.param<i64>
      transform.match.param.cmpi eq %rhs_bw, %c32 : !transform.param<i64>
      %batch, %m, %n, %k = transform.match.structured.classify_contraction_dims %c
        : (!transform.any_op) -> (!transform.param<i64>, !transform.param<i64>,
                                  !transform.param<i64>, !transform.param<i64>)
      %nb = transform.num_associations %batch
        : (!transform.param<i64>) -> !transform.param<i64>
      transform.match.param.cmpi eq %nb, %c0 : !transform.param<i64>
      %nm = transform.num_associations %m
        : (!transform.param<i64>) -> !transform.param<i64>
      transform.match.param.cmpi eq %nm, %c1 : !transform.param<i64>
      %nn = transform.num_associations %n
        : (!transform.param<i64>) -> !transform.param<i64>
      transform.match.param.cmpi eq %nn, %c1 : !transform.param<i64>
      %nk = transform.num_associations %k
        : (!transform.param<i64>) -> !transform.param<i64>
      transform.match.param.cmpi eq %nk, %c1 : !transform.param<i64>
      transform.match.param.cmpi eq %m, %c0 : !transform.param<i64>
      transform.match.param.cmpi eq %n, %c1 : !transform.param<i64>
      transform.match.param.cmpi eq %k, %c2 : !transform.param<i64>
    }
    transform.yield %op : !transform.any_op
  }

  /// Same as @match_f32_matmul with one leading batch dimension: loops
  /// (b, m, n, k).
  transform.named_sequence @match_f32_batch_matmul(
      %op: !transform.any_op {transform.readonly}) -> !transform.any_op {
    transform.match.structured %op : !transform.any_op {
    ^bb0(%c: !transform.any_op):
      %c0 = transform.param.constant 0 : i64 -> !transform.param<i64>
      %c1 = transform.param.constant 1 : i64 -> !transform.param<i64>
      %c2 = transform.param.constant 2 : i64 -> !transform.param<i64>
      %c3 = transform.param.constant 3 : i64 -> !transform.param<i64>
      %c4 = transform.param.constant 4 : i64 -> !transform.param<i64>
      %c32 = transform.param.constant 32 : i64 -> !transform.param<i64>
      %rank = transform.match.structured.rank %c
        : (!transform.any_op) -> !transform.param<i64>
      transform.match.param.cmpi eq %rank, %c4 : !transform.param<i64>
      // Static sizes only (see @match_f32_matmul).
      %d0 = transform.match.structured.dim %c[0]
        : (!transform.any_op) -> !transform.param<i64>
      transform.match.param.cmpi ge %d0, %c1 : !transform.param<i64>
      %d1 = transform.match.structured.dim %c[1]
        : (!transform.any_op) -> !transform.param<i64>
      transform.match.param.cmpi ge %d1, %c1 : !transform.param<i64>
      %d2 = transform.match.structured.dim %c[2]
        : (!transform.any_op) -> !transform.param<i64>
      transform.match.param.cmpi ge %d2, %c1 : !transform.param<i64>
      %d3 = transform.match.structured.dim %c[3]
        : (!transform.any_op) -> !transform.param<i64>
      transform.match.param.cmpi ge %d3, %c1 : !transform.param<i64>
      %n_ins = transform.match.structured.num_inputs %c
        : (!transform.any_op) -> !transform.param<i64>
      transform.match.param.cmpi eq %n_ins, %c2 : !transform.param<i64>
      %n_inits = transform.match.structured.num_inits %c
        : (!transform.any_op) -> !transform.param<i64>
      transform.match.param.cmpi eq %n_inits, %c1 : !transform.param<i64>
      transform.match.structured.input %c[all] {projected_permutation}
        : !transform.any_op
      transform.match.structured.init %c[0] {projected_permutation}
        : !transform.any_op
      transform.match.structured.body %c
        { contraction = ["arith.mulf", "arith.addf"] } : !transform.any_op
      // f32 operands: with the float body above, 32-bit elements are f32.
      // The body matcher also accepts casts, e.g. bf16 inputs extended to an
      // f32 accumulator, which the f32 padding below would not fit.
      %init = transform.match.structured.init %c[0]
        : (!transform.any_op) -> !transform.any_value
      %bw = transform.match.structured.elemental_bitwidth %init
        : (!transform.any_value) -> !transform.param<i64>
      transform.match.param.cmpi eq %bw, %c32 : !transform.param<i64>
      %lhs = transform.match.structured.input %c[0]
        : (!transform.any_op) -> !transform.any_value
      %lhs_bw = transform.match.structured.elemental_bitwidth %lhs
        : (!transform.any_value) -> !transform.param<i64>
      transform.match.param.cmpi eq %lhs_bw, %c32 : !transform.param<i64>
      %rhs = transform.match.structured.input %c[1]
        : (!transform.any_op) -> !transform.any_value
      %rhs_bw = transform.match.structured.elemental_bitwidth %rhs
        : (!transform.any_value) -> !transform.param<i64>
      transform.match.param.cmpi eq %rhs_bw, %c32 : !transform.param<i64>
      %batch, %m, %n, %k = transform.match.structured.classify_contraction_dims %c
        : (!transform.any_op) -> (!transform.param<i64>, !transform.param<i64>,
                                  !transform.param<i64>, !transform.param<i64>)
      %nb = transform.num_associations %batch
        : (!transform.param<i64>) -> !transform.param<i64>
      transform.match.param.cmpi eq %nb, %c1 : !transform.param<i64>
      %nm = transform.num_associations %m
        : (!transform.param<i64>) -> !transform.param<i64>
      transform.match.param.cmpi eq %nm, %c1 : !transform.param<i64>
      %nn = transform.num_associations %n
        : (!transform.param<i64>) -> !transform.param<i64>
      transform.match.param.cmpi eq %nn, %c1 : !transform.param<i64>
      %nk = transform.num_associations %k
        : (!transform.param<i64>) -> !transform.param<i64>
      transform.match.param.cmpi eq %nk, %c1 : !transform.param<i64>
      transform.match.param.cmpi eq %batch, %c0 : !transform.param<i64>
      transform.match.param.cmpi eq %m, %c1 : !transform.param<i64>
      transform.match.param.cmpi eq %n, %c2 : !transform.param<i64>
      transform.match.param.cmpi eq %k, %c3 : !transform.param<i64>
    }
    transform.yield %op : !transform.any_op
  }

  /// Actions of the matchers: tag the op. The rewrite happens later, on the
  /// ops found by their tag.
  transform.named_sequence @tag_matmul(
      %op: !transform.any_op {transform.readonly}) {
    transform.annotate %op "ovl.pack_matmul" : !transform.any_op
    transform.yield
  }
  transform.named_sequence @tag_batch_matmul(
      %op: !transform.any_op {transform.readonly}) {
    transform.annotate %op "ovl.pack_batch_matmul" : !transform.any_op
    transform.yield
  }

  //===--------------------------------------------------------------------===//
  // Tiling, peeling, packing
  //
  // Every phase below works on all tagged contractions of the module at once
  // and finds its ops again by tag after the previous phase: a phase that
  // canonicalizes whole functions may replace ops, and a handle list taken
  // before (e.g. by transform.foreach) would then dangle.
  //===--------------------------------------------------------------------===//

  /// Peels the last, partial iteration off each loop of `%loops`, if any.
  transform.named_sequence @peel_partial(
      %loops: !transform.any_op {transform.readonly}) {
    transform.foreach %loops : !transform.any_op {
    ^bb0(%loop: !transform.any_op):
      // Nothing to peel when the trip count is a multiple of the step.
      transform.sequence %loop : !transform.any_op failures(suppress) {
      ^bb0(%l: !transform.any_op):
        %for = transform.cast %l : !transform.any_op to !transform.op<"scf.for">
        transform.loop.peel %for
          : (!transform.op<"scf.for">) -> (!transform.any_op, !transform.any_op)
      }
    }
    transform.yield
  }

  /// Phase 1, cache blocking: tiles every tagged contraction into loops
  /// (nc, pc, ic) = (n, k, m) over blocks of MC x NC x KC (the batch dimension, if any, goes outermost with a tile of 1), peels
  /// the partial blocks so that every block has static sizes, and tags the
  /// block ops.
  transform.named_sequence @cache_blocking(
      %root: !transform.any_op {transform.readonly},
      %mc: !transform.param<i64> {transform.readonly},
      %nc_size: !transform.param<i64> {transform.readonly},
      %kc: !transform.param<i64> {transform.readonly}) {
    %mms = transform.structured.match attributes{ovl.pack_matmul} in %root
      : (!transform.any_op) -> !transform.any_op
    // tile_using_for takes one value of each size parameter per target.
    %mms_mc, %mms_nc_size, %mms_kc = transform.foreach %mms
        : !transform.any_op -> !transform.param<i64>, !transform.param<i64>, !transform.param<i64> {
    ^bb0(%op: !transform.any_op):
      transform.yield %mc, %nc_size, %kc : !transform.param<i64>, !transform.param<i64>, !transform.param<i64>
    }
    %t, %nc, %pc, %ic = transform.structured.tile_using_for %mms
      tile_sizes [%mms_mc, %mms_nc_size, %mms_kc] interchange = [1, 2, 0]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>,
         !transform.param<i64>) -> (!transform.any_op, !transform.any_op,
                                !transform.any_op, !transform.any_op)
    transform.annotate %t "ovl.block" : !transform.any_op
    %bmms = transform.structured.match
      attributes{ovl.pack_batch_matmul} in %root
      : (!transform.any_op) -> !transform.any_op
    // tile_using_for takes one value of each size parameter per target.
    %bmms_mc, %bmms_nc_size, %bmms_kc = transform.foreach %bmms
        : !transform.any_op -> !transform.param<i64>, !transform.param<i64>, !transform.param<i64> {
    ^bb0(%op: !transform.any_op):
      transform.yield %mc, %nc_size, %kc : !transform.param<i64>, !transform.param<i64>, !transform.param<i64>
    }
    %bt, %bb, %bnc, %bpc, %bic = transform.structured.tile_using_for %bmms
      tile_sizes [1, %bmms_mc, %bmms_nc_size, %bmms_kc] interchange = [0, 2, 3, 1]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>,
         !transform.param<i64>) -> (!transform.any_op, !transform.any_op,
                                !transform.any_op, !transform.any_op,
                                !transform.any_op)
    transform.annotate %bt "ovl.batch_block" : !transform.any_op
    // Innermost first: peeling a loop clones its body, which must already be
    // final.
    %ics = transform.merge_handles %ic, %bic : !transform.any_op
    transform.include @peel_partial failures(propagate) (%ics)
      : (!transform.any_op) -> ()
    %pcs = transform.merge_handles %pc, %bpc : !transform.any_op
    transform.include @peel_partial failures(propagate) (%pcs)
      : (!transform.any_op) -> ()
    %ncs = transform.merge_handles %nc, %bnc : !transform.any_op
    transform.include @peel_partial failures(propagate) (%ncs)
      : (!transform.any_op) -> ()
    // Fold the block sizes to constants (also of single-iteration loops,
    // where a tile size is at least the dimension). The canonicalizer also
    // removes single-iteration loops, which moves the packing of the blocks
    // inside one loop further out, since `hoist_pad ... by N loops` counts
    // the loops that remain. (With dynamically shaped blocks instead,
    // hoist_pad crashes in 22.1.)
    %funcs = transform.structured.match ops{["func.func"]} in %root
      : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %funcs {
      transform.apply_patterns.linalg.tiling_canonicalization
      transform.apply_patterns.scf.for_loop_canonicalization
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.yield
  }

  /// Phase 2, register blocking: tiles every block into loops (jr, ir, k) =
  /// (n, m, k) around an MR x NR x 1 micro-kernel, peels the
  /// partial register tiles so that all full tiles are static, and tags the
  /// micro-kernel ops (and their peeled copies).
  transform.named_sequence @register_blocking(
      %root: !transform.any_op {transform.readonly},
      %mr: !transform.param<i64> {transform.readonly},
      %nr: !transform.param<i64> {transform.readonly}) {
    %blocks = transform.structured.match attributes{ovl.block} in %root
      : (!transform.any_op) -> !transform.any_op
    // tile_using_for takes one value of each size parameter per target.
    %blocks_mr, %blocks_nr = transform.foreach %blocks
        : !transform.any_op -> !transform.param<i64>, !transform.param<i64> {
    ^bb0(%op: !transform.any_op):
      transform.yield %mr, %nr : !transform.param<i64>, !transform.param<i64>
    }
    %t, %jr, %ir, %k = transform.structured.tile_using_for %blocks
      tile_sizes [%blocks_mr, %blocks_nr, 1] interchange = [1, 0, 2]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
        -> (!transform.any_op, !transform.any_op,
                                !transform.any_op, !transform.any_op)
    transform.annotate %t "ovl.microkernel" : !transform.any_op
    %bblocks = transform.structured.match attributes{ovl.batch_block} in %root
      : (!transform.any_op) -> !transform.any_op
    // tile_using_for takes one value of each size parameter per target.
    %bblocks_mr, %bblocks_nr = transform.foreach %bblocks
        : !transform.any_op -> !transform.param<i64>, !transform.param<i64> {
    ^bb0(%op: !transform.any_op):
      transform.yield %mr, %nr : !transform.param<i64>, !transform.param<i64>
    }
    %bt, %bjr, %bir, %bk = transform.structured.tile_using_for %bblocks
      tile_sizes [0, %bblocks_mr, %bblocks_nr, 1] interchange = [0, 2, 1, 3]
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
        -> (!transform.any_op, !transform.any_op,
                                !transform.any_op, !transform.any_op)
    transform.annotate %bt "ovl.microkernel" : !transform.any_op
    %irs = transform.merge_handles %ir, %bir : !transform.any_op
    transform.include @peel_partial failures(propagate) (%irs)
      : (!transform.any_op) -> ()
    %jrs = transform.merge_handles %jr, %bjr : !transform.any_op
    transform.include @peel_partial failures(propagate) (%jrs)
      : (!transform.any_op) -> ()
    // Compose the slices of the two tiling levels so that the operand slices
    // of the micro-kernels read the function arguments directly (hoist_pad
    // cannot hoist above a loop that defines the sliced tensor).
    %funcs = transform.structured.match ops{["func.func"]} in %root
      : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %funcs {
      transform.apply_patterns.tensor.merge_consecutive_insert_extract_slice
    } : !transform.any_op
    transform.yield
  }

  /// Phase 3, packing, for one micro-kernel op `%mk`: pads its operands A, B
  /// and C to a full MR x NR x 1 tile, hoists the A and B pads out of the loop
  /// nest, which turns them into packed copies of the A and B blocks, and
  /// vectorizes the micro-kernel.
  ///
  /// `hoist_pad ... by N loops` counts the scf.for loops that enclose the
  /// pad, whoever made them. When the canonicalization of phase 1 has removed
  /// single-iteration block loops, the N-th loop can be a loop of the
  /// program around the contraction (e.g. an ovl ring loop); hoisting above
  /// it fails if the operand is carried by that loop (and is fine, packing
  /// once for all its iterations, if the operand is invariant). Each pad is
  /// therefore hoisted by as many loops as possible, from N down to 1: an
  /// attempt that fails changes nothing, and once a pad is hoisted the
  /// operand no longer comes from a tensor.pad, which ends the attempts. A
  /// pad hoisted by no loop stays in place: a packed copy per micro-kernel,
  /// correct but slower. An operand that moves with a loop of the program
  /// is copied inside that loop before this script runs
  /// (isolateMovingSlices in ContractionSchedule.cpp), as hoisting its pad
  /// above the loop miscompiles.
  transform.named_sequence @pack_and_vectorize(
      %mk: !transform.any_op {transform.consumed}) {
    // `nofold` on A and B: the pads must materialize even for full tiles,
    // they become the packing copies. C is only padded for partial tiles.
    %padded, %pad, %copy = transform.structured.pad %mk {
      padding_values = [0.0 : f32, 0.0 : f32, 0.0 : f32],
      padding_dimensions = [0, 1, 2],
      nofold_flags = [1, 1, 0],
      copy_back_op = "none"
    } : (!transform.any_op)
      -> (!transform.any_op, !transform.any_op, !transform.any_op)
    // B does not depend on ir and ic: hoisting it above k, ir, jr, ic packs
    // the whole KC x NC block once per (nc, pc), laid out [NC/NR][KC][NR].
    transform.sequence %padded : !transform.any_op failures(suppress) {
    ^bb0(%p: !transform.any_op):
      %operand_pad = transform.get_producer_of_operand %p[1]
        : (!transform.any_op) -> !transform.any_op
      transform.match.operation_name %operand_pad ["tensor.pad"]
        : !transform.any_op
      transform.structured.hoist_pad %operand_pad by 4 loops
        : (!transform.any_op) -> !transform.any_op
    }
    transform.sequence %padded : !transform.any_op failures(suppress) {
    ^bb0(%p: !transform.any_op):
      %operand_pad = transform.get_producer_of_operand %p[1]
        : (!transform.any_op) -> !transform.any_op
      transform.match.operation_name %operand_pad ["tensor.pad"]
        : !transform.any_op
      transform.structured.hoist_pad %operand_pad by 3 loops
        : (!transform.any_op) -> !transform.any_op
    }
    transform.sequence %padded : !transform.any_op failures(suppress) {
    ^bb0(%p: !transform.any_op):
      %operand_pad = transform.get_producer_of_operand %p[1]
        : (!transform.any_op) -> !transform.any_op
      transform.match.operation_name %operand_pad ["tensor.pad"]
        : !transform.any_op
      transform.structured.hoist_pad %operand_pad by 2 loops
        : (!transform.any_op) -> !transform.any_op
    }
    transform.sequence %padded : !transform.any_op failures(suppress) {
    ^bb0(%p: !transform.any_op):
      %operand_pad = transform.get_producer_of_operand %p[1]
        : (!transform.any_op) -> !transform.any_op
      transform.match.operation_name %operand_pad ["tensor.pad"]
        : !transform.any_op
      transform.structured.hoist_pad %operand_pad by 1 loops
        : (!transform.any_op) -> !transform.any_op
    }
    // A does not depend on jr: hoisting above k, ir, jr packs the MC x KC
    // block once per ic, laid out [MC/MR][KC][MR].
    transform.sequence %padded : !transform.any_op failures(suppress) {
    ^bb0(%p: !transform.any_op):
      %operand_pad = transform.get_producer_of_operand %p[0]
        : (!transform.any_op) -> !transform.any_op
      transform.match.operation_name %operand_pad ["tensor.pad"]
        : !transform.any_op
      transform.structured.hoist_pad %operand_pad by 3 loops
        : (!transform.any_op) -> !transform.any_op
    }
    transform.sequence %padded : !transform.any_op failures(suppress) {
    ^bb0(%p: !transform.any_op):
      %operand_pad = transform.get_producer_of_operand %p[0]
        : (!transform.any_op) -> !transform.any_op
      transform.match.operation_name %operand_pad ["tensor.pad"]
        : !transform.any_op
      transform.structured.hoist_pad %operand_pad by 2 loops
        : (!transform.any_op) -> !transform.any_op
    }
    transform.sequence %padded : !transform.any_op failures(suppress) {
    ^bb0(%p: !transform.any_op):
      %operand_pad = transform.get_producer_of_operand %p[0]
        : (!transform.any_op) -> !transform.any_op
      transform.match.operation_name %operand_pad ["tensor.pad"]
        : !transform.any_op
      transform.structured.hoist_pad %operand_pad by 1 loops
        : (!transform.any_op) -> !transform.any_op
    }
    transform.structured.vectorize %padded : !transform.any_op
    transform.yield
  }

  //===--------------------------------------------------------------------===//
  // Vectorization and vector lowering (whole module)
  //===--------------------------------------------------------------------===//

  transform.named_sequence @vectorize_and_lower(
      %root: !transform.any_op {transform.readonly}) {
    %funcs = transform.structured.match ops{["func.func"]} in %root
      : (!transform.any_op) -> !transform.any_op
    // Packing copies: tensor.pad -> transfer_read (+ padding) / transfer_write,
    // written straight into the packed buffer.
    transform.apply_patterns to %funcs {
      transform.apply_patterns.linalg.pad_vectorization
      transform.apply_patterns.tensor.fold_tensor_subset_ops_into_vector_transfers
    } : !transform.any_op
    transform.apply_patterns to %funcs {
      transform.apply_patterns.vector.reduction_to_contract
      transform.apply_patterns.vector.transfer_permutation_patterns
    } : !transform.any_op
    transform.apply_patterns to %funcs {
      transform.apply_patterns.canonicalization
      transform.apply_patterns.tensor.fold_tensor_subset_ops_into_vector_transfers
      transform.apply_patterns.linalg.tiling_canonicalization
    } : !transform.any_op
    transform.apply_cse to %funcs : !transform.any_op
    // Keep the C tile in registers across the k loop: hoist the loop-invariant
    // transfer_read / transfer_write pair of the accumulator.
    %loops = transform.structured.match ops{["scf.for"]} in %root
      : (!transform.any_op) -> !transform.any_op
    transform.foreach %loops : !transform.any_op {
    ^bb0(%l: !transform.any_op):
      transform.loop.hoist_loop_invariant_subsets %l : !transform.any_op
    }
    // vector.contract (MR x 1) * (1 x NR) -> MR broadcast+FMA of NR lanes.
    // The stages are separate on purpose: in one greedy set, the transpose
    // and shape_cast patterns and the canonicalizer rewrite each other's
    // output forever on transposed operands (B as N x K).
    transform.apply_patterns to %funcs {
      transform.apply_patterns.vector.lower_contraction
        lowering_strategy = "outerproduct"
    } : !transform.any_op
    transform.apply_patterns to %funcs {
      transform.apply_patterns.vector.lower_outerproduct
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.vector.lower_multi_reduction
        lowering_strategy = "innerparallel"
    } : !transform.any_op
    transform.apply_patterns to %funcs {
      transform.apply_patterns.vector.lower_transpose
        lowering_strategy = "shuffle_1d"
      transform.apply_patterns.vector.lower_shape_cast
    } : !transform.any_op
    transform.apply_patterns to %funcs {
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.yield
  }

  //===--------------------------------------------------------------------===//
  // Entry point
  //===--------------------------------------------------------------------===//

  transform.named_sequence @__transform_main(
      %root: !transform.any_op {transform.consumed}) {
    %root2 = transform.foreach_match in %root
        @match_f32_matmul -> @tag_matmul,
        @match_f32_batch_matmul -> @tag_batch_matmul
      : (!transform.any_op) -> !transform.any_op
    %mr, %nr, %mc, %nc, %kc = transform.include @tile_sizes
      failures(propagate) () : () -> (!transform.param<i64>,
        !transform.param<i64>, !transform.param<i64>, !transform.param<i64>,
        !transform.param<i64>)
    transform.include @cache_blocking failures(propagate)
      (%root2, %mc, %nc, %kc)
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>,
         !transform.param<i64>) -> ()
    transform.include @register_blocking failures(propagate) (%root2, %mr, %nr)
      : (!transform.any_op, !transform.param<i64>, !transform.param<i64>)
        -> ()
    %mks = transform.structured.match attributes{ovl.microkernel} in %root2
      : (!transform.any_op) -> !transform.any_op
    transform.foreach %mks : !transform.any_op {
    ^bb0(%mk: !transform.any_op):
      transform.include @pack_and_vectorize failures(propagate) (%mk)
        : (!transform.any_op) -> ()
    }
    transform.include @vectorize_and_lower failures(propagate) (%root2)
      : (!transform.any_op) -> ()
    transform.yield
  }
}
