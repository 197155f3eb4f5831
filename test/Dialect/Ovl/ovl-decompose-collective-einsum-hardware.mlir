// RUN: overlap-opt %s --split-input-file -o /dev/null --pass-pipeline="builtin.module(func.func(ovl-decompose-collective-einsum{async-collectives=false remarks=true unroll=1 bidirectional=false}))" 2>&1 | FileCheck %s --check-prefixes=V4
// RUN: overlap-opt %s --split-input-file -o /dev/null --pass-pipeline="builtin.module(func.func(ovl-decompose-collective-einsum{async-collectives=false remarks=true hardware=%S/Inputs/slow-chip.json unroll=1 bidirectional=false}))" 2>&1 | FileCheck %s --check-prefixes=SLOW
// RUN: overlap-opt %s --split-input-file -o /dev/null --pass-pipeline="builtin.module(func.func(ovl-decompose-collective-einsum{async-collectives=false remarks=true hardware=h100-nvlink unroll=1 bidirectional=false}))" 2>&1 | FileCheck %s --check-prefixes=H100
// RUN: overlap-opt %s --split-input-file -o /dev/null --pass-pipeline="builtin.module(func.func(ovl-decompose-collective-einsum{async-collectives=false remarks=true unroll=2 bidirectional=false}))" 2>&1 | FileCheck %s --check-prefixes=V4-UNROLL
// RUN: overlap-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(ovl-decompose-collective-einsum{async-collectives=false hardware=%S/Inputs/slow-chip.json unroll=1 bidirectional=false}))" | FileCheck %s --check-prefixes=SLOW-IR
// async-collectives=false throughout: the paper's gate, a pair decomposed or
// left blocking (ovl-decompose-collective-einsum-async.mlir tests the
// asynchronous alternative).

// The machine changes the decision. Inputs/slow-chip.json is TPU v4's
// interconnect with a tenth of its arithmetic: the einsum that cannot hide
// the ring on TPU v4 can there. On the H100 NVLink switch every permute is
// one hop at the full egress bandwidth. And the loop's structure changes it
// too: with unroll=2 the ReduceScatter's two chains overlap each other's
// einsums, but travel two hops per permute.

shard.grid @grid(shape = 4x16)

// V4:   remark: not decomposing all_gather along axis 0 (N=4): predicted 1.37 ms blocking (compute 250 us), 2.31 ms decomposed (compute 250 us), gain -934 us
// SLOW: remark: decomposing all_gather along axis 0 (N=4) into a ring loop (case 1, gathered dim free (rhs), unroll 1, unidirectional): predicted 3.62 ms blocking (compute 2.50 ms), 2.87 ms decomposed (compute 2.50 ms), gain 753 us
// H100: remark: decomposing all_gather along axis 0 (N=4) into a ring loop (case 1, gathered dim free (rhs), unroll 1, unidirectional): predicted 303 us blocking (compute 69.5 us), 264 us decomposed (compute 69.5 us), gain 39.6 us
// V4-UNROLL: remark: not decomposing all_gather along axis 0 (N=4): predicted 1.37 ms blocking (compute 250 us), 2.31 ms decomposed (compute 250 us), gain -934 us
// SLOW-IR-LABEL: func.func @communication_bound_gather
// SLOW-IR-NOT: ovl.all_gather
// SLOW-IR: ovl.collective_permute
func.func @communication_bound_gather(%x: tensor<512x8192xbf16>, %w: tensor<8192x2048xbf16>) -> tensor<512x8192xf32> {
  %g = ovl.all_gather %w on @grid axes [0] dim 1 : tensor<8192x2048xbf16> -> tensor<8192x8192xbf16>
  %y = ovl.einsum "bf,fh->bh" %x, %g : tensor<512x8192xbf16>, tensor<8192x8192xbf16> -> tensor<512x8192xf32>
  return %y : tensor<512x8192xf32>
}

// -----

/// 8 devices: a 2x2x2 torus slice on TPU v4, without wrap-around.
shard.grid @ring(shape = 8)

/// One chain computes each round's einsum while the previous sum travels;
/// the first einsum and the 7 additions, which also sit between the
/// chain's transfers, are the price. overlap-sim on the 2x2x2 slice agrees
/// with the figures: 4.83 -> 3.46 ms on TPU v4 through ovl-overlap-pipeline
/// (2.91 ms with unroll=2),
/// 22.8 -> 20.3 ms on the slow chip.
// V4:   remark: decomposing reduce_scatter along axis 0 (N=8) into a ring loop (einsum-reduce_scatter, unroll 1, unidirectional): predicted 4.83 ms blocking (compute 2.00 ms), 3.46 ms decomposed (compute 2.29 ms), gain 1.37 ms
// SLOW: remark: decomposing reduce_scatter along axis 0 (N=8) into a ring loop (einsum-reduce_scatter, unroll 1, unidirectional): predicted 22.8 ms blocking (compute 20.0 ms), 20.3 ms decomposed (compute 20.3 ms), gain 2.54 ms
// H100: remark: decomposing reduce_scatter along axis 0 (N=8) into a ring loop (einsum-reduce_scatter, unroll 1, unidirectional): predicted 832 us blocking (compute 556 us), 661 us decomposed (compute 661 us), gain 171 us
// V4-UNROLL: remark: decomposing reduce_scatter along axis 0 (N=8) into a ring loop (einsum-reduce_scatter, unroll 2, unidirectional): predicted 4.83 ms blocking (compute 2.00 ms), 2.91 ms decomposed (compute 2.04 ms), gain 1.92 ms
// SLOW-IR-LABEL: func.func @scatter
// SLOW-IR-NOT: ovl.reduce_scatter
// SLOW-IR: ovl.collective_permute
func.func @scatter(%x: tensor<8192x4096xbf16>, %w: tensor<4096x8192xbf16>) -> tensor<8192x1024xbf16> {
  %y = ovl.einsum "bf,fh->bh" %x, %w : tensor<8192x4096xbf16>, tensor<4096x8192xbf16> -> tensor<8192x8192xbf16>
  %r = ovl.reduce_scatter %y on @ring axes [0] dim 1 : tensor<8192x8192xbf16> -> tensor<8192x1024xbf16>
  return %r : tensor<8192x1024xbf16>
}
