// RUN: overlap-opt %s --split-input-file --verify-diagnostics --pass-pipeline="builtin.module(func.func(ovl-decompose-collective-einsum{async-collectives=false remarks=true unroll=1 bidirectional=false}))"
// RUN: overlap-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(ovl-decompose-collective-einsum{async-collectives=false unroll=1 bidirectional=false}))" | FileCheck %s
// RUN: overlap-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(ovl-decompose-collective-einsum{async-collectives=false gate=never unroll=1 bidirectional=false}))" | FileCheck %s --check-prefix=NEVER
// async-collectives=false throughout: the paper's gate, a pair decomposed or
// left blocking (ovl-decompose-collective-einsum-async.mlir tests the
// asynchronous alternative).

// The default cost-model gate (section 5.5) on TPU v4 at realistic sizes:
// a pair is decomposed when the loop the rewrite builds, priced by the cost
// model's timeline, is faster than the pair as written (a tie keeps it).
// A 4x16 grid fills the default 4x4x4 torus, which wraps: axis 0 runs
// along its x rings, axis 1 over y and z (two hops where the ring changes
// rows). With gate=never nothing is decomposed.

// NEVER-NOT: scf.for
// NEVER-NOT: ovl.collective_permute

shard.grid @grid(shape = 4x16)

/// A large AllGather-Einsum (2 ms of bf16 einsum, 32 MiB shards): the loop
/// hides the gather. Blocking: 1 us launch + whole shards both ways round
/// the ring of 4 (2 rounds of 1 us + 32 MiB / 45 GB/s, the second halved)
/// = 1.12 ms, then the einsum. Decomposed: three one-way permutes of 746 us
/// each, each beside a quarter of the einsum (500 us), then the last
/// quarter: 3 x 747 us + 500 us.
// CHECK-LABEL: func.func @large_gather
// CHECK-NOT: ovl.all_gather
// CHECK: scf.for
// CHECK: ovl.collective_permute
func.func @large_gather(%x: tensor<4096x8192xbf16>, %w: tensor<8192x2048xbf16>) -> tensor<4096x8192xf32> {
  // expected-remark @+1 {{decomposing all_gather along axis 0 (N=4) into a ring loop (case 1, gathered dim free (rhs), unroll 1, unidirectional): predicted 3.12 ms blocking (compute 2.00 ms), 2.74 ms decomposed (compute 2.00 ms), gain 378 us}}
  %g = ovl.all_gather %w on @grid axes [0] dim 1 : tensor<8192x2048xbf16> -> tensor<8192x8192xbf16>
  %y = ovl.einsum "bf,fh->bh" %x, %g : tensor<4096x8192xbf16>, tensor<8192x8192xbf16> -> tensor<4096x8192xf32>
  return %y : tensor<4096x8192xf32>
}

// -----

shard.grid @grid(shape = 4x16)

/// The same pair with a small batch: the einsum (250 us) cannot hide the
/// ring, which as one-way permutes takes twice the blocking gather's
/// transfer both ways.
// CHECK-LABEL: func.func @communication_bound_gather
// CHECK: ovl.all_gather
// CHECK-NOT: ovl.collective_permute
func.func @communication_bound_gather(%x: tensor<512x8192xbf16>, %w: tensor<8192x2048xbf16>) -> tensor<512x8192xf32> {
  // expected-remark @+1 {{not decomposing all_gather along axis 0 (N=4): predicted 1.37 ms blocking (compute 250 us), 2.31 ms decomposed (compute 250 us), gain -934 us}}
  %g = ovl.all_gather %w on @grid axes [0] dim 1 : tensor<8192x2048xbf16> -> tensor<8192x8192xbf16>
  %y = ovl.einsum "bf,fh->bh" %x, %g : tensor<512x8192xbf16>, tensor<8192x8192xbf16> -> tensor<512x8192xf32>
  return %y : tensor<512x8192xf32>
}

// -----

shard.grid @ring(shape = 4)

/// A tiny pair is latency-bound: three permutes, each paying a launch and
/// the hops of a 2x2 slice (no wrap-around, a ring with a two-hop edge),
/// cost more than one blocking gather.
// CHECK-LABEL: func.func @tiny_gather
// CHECK: ovl.all_gather
// CHECK-NOT: ovl.collective_permute
func.func @tiny_gather(%x: tensor<2x8xf32>, %w: tensor<8x4xf32>) -> tensor<2x16xf32> {
  // expected-remark @+1 {{not decomposing all_gather along axis 0 (N=4): predicted 5.00 us blocking (compute 0.59 ns), 9.01 us decomposed (compute 0.75 ns), gain -4.00 us}}
  %g = ovl.all_gather %w on @ring axes [0] dim 1 : tensor<8x4xf32> -> tensor<8x16xf32>
  %y = ovl.einsum "bf,fh->bh" %x, %g : tensor<2x8xf32>, tensor<8x16xf32> -> tensor<2x16xf32>
  return %y : tensor<2x16xf32>
}

// -----

shard.grid @grid(shape = 4x16)

/// Figure 3's first layer with realistic sizes: both inputs are gathered.
/// The weight's gather over the 16 devices of axis 1 would cut the
/// contracting dim into slices of 512, each partial einsum reading and
/// writing the whole 128 MiB f32 accumulator: memory-bound, far more loop
/// compute than the 2 ms einsum. The activation's gather over the 4 devices
/// of axis 0 keeps its steps compute-bound: the larger gain wins.
// CHECK-LABEL: func.func @two_gathers
// CHECK: ovl.all_gather %{{.*}} on @grid axes [1] dim 0
// CHECK-NOT: ovl.all_gather
// CHECK: scf.for
// CHECK: ovl.collective_permute %{{.*}} on @grid axes [0]
func.func @two_gathers(%x: tensor<8192x2048xbf16>, %w: tensor<512x4096xbf16>) -> tensor<8192x4096xf32> {
  // expected-remark @+1 {{decomposing all_gather along axis 0 (N=4) into a ring loop (case 2, gathered dim contracting (lhs), unroll 1, unidirectional): predicted 3.84 ms blocking (compute 2.00 ms), 3.21 ms decomposed (compute 2.00 ms), gain 626 us}}
  %xg = ovl.all_gather %x on @grid axes [0] dim 1 : tensor<8192x2048xbf16> -> tensor<8192x8192xbf16>
  // expected-remark @+1 {{not decomposing all_gather along axis 1 (N=16): the all_gather of the same einsum has the larger gain (626 us vs -923 us)}}
  %wg = ovl.all_gather %w on @grid axes [1] dim 0 : tensor<512x4096xbf16> -> tensor<8192x4096xbf16>
  %y = ovl.einsum "bf,fh->bh" %xg, %wg : tensor<8192x8192xbf16>, tensor<8192x4096xbf16> -> tensor<8192x4096xf32>
  return %y : tensor<8192x4096xf32>
}

// -----

shard.grid @grid(shape = 4x16)

/// Einsum-ReduceScatter with one chain on a communication-bound shape: the
/// loop's three one-way permutes and the additions between them take twice
/// the blocking reduce_scatter's transfer both ways, and the einsum cannot
/// hide them.
// CHECK-LABEL: func.func @scatter
// CHECK: ovl.reduce_scatter
// CHECK-NOT: ovl.collective_permute
func.func @scatter(%x: tensor<4096x2048xbf16>, %w: tensor<2048x8192xbf16>) -> tensor<4096x2048xbf16> {
  %y = ovl.einsum "bf,fh->bh" %x, %w : tensor<4096x2048xbf16>, tensor<2048x8192xbf16> -> tensor<4096x8192xbf16>
  // expected-remark @+1 {{not decomposing reduce_scatter along axis 0 (N=4): predicted 1.06 ms blocking (compute 500 us), 1.38 ms decomposed (compute 626 us), gain -313 us}}
  %r = ovl.reduce_scatter %y on @grid axes [0] dim 1 : tensor<4096x8192xbf16> -> tensor<4096x2048xbf16>
  return %r : tensor<4096x2048xbf16>
}
