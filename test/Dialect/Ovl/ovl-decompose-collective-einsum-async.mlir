// RUN: overlap-opt %s --split-input-file --verify-diagnostics --pass-pipeline="builtin.module(func.func(ovl-decompose-collective-einsum{remarks=true async-collectives=true unroll=1 bidirectional=false}))"
// RUN: overlap-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(ovl-decompose-collective-einsum{unroll=1 bidirectional=false}))" | FileCheck %s
// RUN: overlap-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(ovl-decompose-collective-einsum{async-collectives=true gate=never unroll=1 bidirectional=false}))" | FileCheck %s --check-prefix=NEVER
// RUN: overlap-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(ovl-decompose-collective-einsum{async-collectives=false unroll=1 bidirectional=false}))" | FileCheck %s --check-prefix=OFF

// With async-collectives=true the gate chooses each collective's form among
// blocking, asynchronous (a start and a done for ovl-schedule to hide behind
// independent work) and, for decomposable pairs, decomposed: each priced in
// its window of the block on TPU v4's default 4x4x4 torus. A tie between
// blocking and asynchronous makes it asynchronous; a pair is decomposed only
// when the loop beats both. With gate=never every collective becomes
// asynchronous unpriced; without the option none does.

// NEVER-NOT: scf.for
// NEVER-NOT: ovl.all_gather %
// NEVER-NOT: ovl.all_reduce %
// OFF-NOT: _start

shard.grid @grid(shape = 4x16)

/// An independent einsum of 2 ms before the pair hides the whole 1.12 ms
/// gather once it is asynchronous: 4.00 ms, the compute alone. The loop
/// would hide it too but pays its one-way permutes (4.74 ms).
// CHECK-LABEL: func.func @independent_work
// CHECK-NOT: scf.for
// CHECK: ovl.all_gather_start
// CHECK: ovl.collective_done
func.func @independent_work(%a: tensor<4096x8192xbf16>, %b: tensor<8192x8192xbf16>, %x: tensor<4096x8192xbf16>, %w: tensor<8192x2048xbf16>) -> (tensor<4096x8192xf32>, tensor<4096x8192xf32>) {
  %z = ovl.einsum "bf,fh->bh" %a, %b : tensor<4096x8192xbf16>, tensor<8192x8192xbf16> -> tensor<4096x8192xf32>
  // expected-remark @+1 {{not decomposing all_gather along axis 0 (N=4): predicted 5.12 ms blocking (compute 4.00 ms), 4.00 ms asynchronous (compute 4.00 ms), 4.74 ms decomposed (compute 4.00 ms), gain -744 us; kept asynchronous}}
  %g = ovl.all_gather %w on @grid axes [0] dim 1 : tensor<8192x2048xbf16> -> tensor<8192x8192xbf16>
  %y = ovl.einsum "bf,fh->bh" %x, %g : tensor<4096x8192xbf16>, tensor<8192x8192xbf16> -> tensor<4096x8192xf32>
  return %z, %y : tensor<4096x8192xf32>, tensor<4096x8192xf32>
}

// -----

shard.grid @grid(shape = 4x16)

/// Nothing independent: asynchronous is no faster than blocking, and the
/// loop, which hides the gather behind its own einsum, wins.
// CHECK-LABEL: func.func @large_gather
// CHECK: scf.for
// CHECK-NOT: ovl.all_gather
func.func @large_gather(%x: tensor<4096x8192xbf16>, %w: tensor<8192x2048xbf16>) -> tensor<4096x8192xf32> {
  // expected-remark @+1 {{decomposing all_gather along axis 0 (N=4) into a ring loop (case 1, gathered dim free (rhs), unroll 1, unidirectional): predicted 3.12 ms blocking (compute 2.00 ms), 3.12 ms asynchronous (compute 2.00 ms), 2.74 ms decomposed (compute 2.00 ms), gain 378 us}}
  %g = ovl.all_gather %w on @grid axes [0] dim 1 : tensor<8192x2048xbf16> -> tensor<8192x8192xbf16>
  %y = ovl.einsum "bf,fh->bh" %x, %g : tensor<4096x8192xbf16>, tensor<8192x8192xbf16> -> tensor<4096x8192xf32>
  return %y : tensor<4096x8192xf32>
}

// -----

shard.grid @grid(shape = 4x16)

/// all_reduce has no decomposition; its forms are priced all the same. One
/// of the two statistics' all_reduces is exposed whatever their forms (146
/// us either way): the tie makes both asynchronous.
// CHECK-LABEL: func.func @statistics
// CHECK-COUNT-2: ovl.all_reduce_start
// NEVER-LABEL: func.func @statistics
// NEVER-COUNT-2: ovl.all_reduce_start
func.func @statistics(%x: tensor<4096x8192xbf16>) -> (tensor<4096xf32>, tensor<4096xf32>) {
  %s = ovl.einsum "bd->b" %x : tensor<4096x8192xbf16> -> tensor<4096xf32>
  %q = ovl.einsum "bd,bd->b" %x, %x : tensor<4096x8192xbf16>, tensor<4096x8192xbf16> -> tensor<4096xf32>
  // expected-remark @+1 {{keeping all_reduce along axis 1 (N=16) asynchronous (not decomposable: all_reduce has no decomposition): predicted 146 us blocking (compute 112 us), 146 us asynchronous (compute 112 us)}}
  %rs = ovl.all_reduce %s on @grid axes [1] : tensor<4096xf32>
  // expected-remark @+1 {{keeping all_reduce along axis 1 (N=16) asynchronous}}
  %rq = ovl.all_reduce %q on @grid axes [1] : tensor<4096xf32>
  return %rs, %rq : tensor<4096xf32>, tensor<4096xf32>
}

// -----

shard.grid @grid(shape = 4x16)

/// Figure 3's first einsum: the activation's gather is decomposed; the
/// weight's is then priced again beside that loop (a blocking gather can
/// no longer hide under the other's transfer) and kept asynchronous.
// CHECK-LABEL: func.func @two_gathers
// CHECK: ovl.all_gather_start {{.*}} axes [1]
// CHECK: scf.for
func.func @two_gathers(%x: tensor<16384x2048xbf16>, %w: tensor<512x8192xbf16>) -> tensor<16384x8192xf32> {
  // expected-remark @+1 {{decomposing all_gather along axis 0 (N=4) into a ring loop (case 2, gathered dim contracting (lhs), unroll 1, unidirectional): predicted 10.2 ms blocking (compute 8.00 ms), 10.2 ms asynchronous (compute 8.00 ms), 9.41 ms decomposed (compute 8.00 ms), gain 823 us}}
  %xg = ovl.all_gather %x on @grid axes [0] dim 1 : tensor<16384x2048xbf16> -> tensor<16384x8192xbf16>
  // expected-remark @+1 {{not decomposing all_gather along axis 1 (N=16): the all_gather of the same einsum has the larger gain (823 us vs -6.24 ms); kept asynchronous beside the loops chosen: predicted 9.41 ms blocking (compute 8.00 ms), 9.41 ms asynchronous (compute 8.00 ms)}}
  %wg = ovl.all_gather %w on @grid axes [1] dim 0 : tensor<512x8192xbf16> -> tensor<8192x8192xbf16>
  %y = ovl.einsum "bf,fh->bh" %xg, %wg : tensor<16384x8192xbf16>, tensor<8192x8192xbf16> -> tensor<16384x8192xf32>
  return %y : tensor<16384x8192xf32>
}

// -----

shard.grid @ring(shape = 8)

/// The figure 2 MLP on a ring of 8. Priced first, each gather's loop gains
/// little over the other gather made asynchronous (the link is the
/// bottleneck either way); once the first is a loop, the second's loop
/// gains 10 ms beside it, and it is decomposed too.
// CHECK-LABEL: func.func @mlp
// CHECK-COUNT-2: scf.for
// CHECK-NOT: ovl.all_gather
func.func @mlp(%x: tensor<8192x8192xbf16>, %w1: tensor<8192x4096xbf16>,
               %w2: tensor<4096x8192xbf16>) -> tensor<8192x8192xf32> {
  // expected-remark @+1 {{decomposing all_gather along axis 0 (N=8) into a ring loop (case 1, gathered dim free (rhs), unroll 1, unidirectional): predicted 47.3 ms blocking (compute 36.0 ms), 47.3 ms asynchronous (compute 36.0 ms), 46.4 ms decomposed (compute 36.0 ms), gain 897 us}}
  %w1_full = ovl.all_gather %w1 on @ring axes [0] dim 1
      : tensor<8192x4096xbf16> -> tensor<8192x32768xbf16>
  %h = ovl.einsum "bf,fh->bh" %x, %w1_full
      : tensor<8192x8192xbf16>, tensor<8192x32768xbf16> -> tensor<8192x32768xf32>
  %zero = arith.constant dense<0.0> : tensor<8192x32768xf32>
  %relu = arith.maximumf %h, %zero : tensor<8192x32768xf32>
  %act = arith.truncf %relu : tensor<8192x32768xf32> to tensor<8192x32768xbf16>
  // expected-remark @+1 {{decomposing all_gather along axis 0 (N=8) into a ring loop (case 2, gathered dim contracting (rhs), unroll 1, unidirectional): predicted 58.6 ms blocking (compute 36.0 ms), 47.3 ms asynchronous (compute 36.0 ms), 47.3 ms decomposed (compute 36.0 ms), gain -1.71 us; beside the loops chosen: predicted 47.3 ms blocking (compute 36.0 ms), 46.4 ms asynchronous (compute 36.0 ms), 36.0 ms decomposed (compute 36.0 ms), gain 10.4 ms}}
  %w2_full = ovl.all_gather %w2 on @ring axes [0] dim 0
      : tensor<4096x8192xbf16> -> tensor<32768x8192xbf16>
  %y = ovl.einsum "bh,hf->bf" %act, %w2_full
      : tensor<8192x32768xbf16>, tensor<32768x8192xbf16> -> tensor<8192x8192xf32>
  return %y : tensor<8192x8192xf32>
}
