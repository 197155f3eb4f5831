// RUN: overlap-opt %s --split-input-file --verify-diagnostics --pass-pipeline="builtin.module(func.func(ovl-decompose-collective-einsum{async-collectives=false remarks=true gate=always unroll=1 bidirectional=false}))"
// async-collectives=false throughout: the paper's gate, a pair decomposed or
// left blocking (ovl-decompose-collective-einsum-async.mlir tests the
// asynchronous alternative).

// With remarks=true the pass says what it did to every candidate, and why
// it left a pair alone: users of peer systems most miss being told that
// overlap did not happen. gate=always, so that these tiny pairs are
// rewritten whatever the cost model says (it says no; the gate's decisions
// are in ovl-decompose-collective-einsum-gate.mlir).

shard.grid @ring(shape = 4)

func.func @rewritten(%x: tensor<2x8xf32>, %w: tensor<8x4xf32>) -> tensor<2x16xf32> {
  // expected-remark @+1 {{decomposing all_gather along axis 0 (N=4) into a ring loop (case 1, gathered dim free (rhs), unroll 1, unidirectional) as gate=always says: predicted 5.00 us blocking (compute 0.59 ns), 9.01 us decomposed (compute 0.75 ns), gain -4.00 us}}
  %g = ovl.all_gather %w on @ring axes [0] dim 1 : tensor<8x4xf32> -> tensor<8x16xf32>
  %y = ovl.einsum "bf,fh->bh" %x, %g : tensor<2x8xf32>, tensor<8x16xf32> -> tensor<2x16xf32>
  return %y : tensor<2x16xf32>
}

// -----

shard.grid @ring(shape = 4)

func.func @not_an_einsum_first(%x: tensor<2x8xf32>, %w: tensor<8x4xf32>) -> (tensor<2x16xf32>, tensor<8x16xf32>) {
  // expected-remark @+1 {{not decomposed: it also feeds 'arith.negf' before any einsum}}
  %g = ovl.all_gather %w on @ring axes [0] dim 1 : tensor<8x4xf32> -> tensor<8x16xf32>
  %n = arith.negf %g : tensor<8x16xf32>
  %y = ovl.einsum "bf,fh->bh" %x, %g : tensor<2x8xf32>, tensor<8x16xf32> -> tensor<2x16xf32>
  return %y, %n : tensor<2x16xf32>, tensor<8x16xf32>
}

// -----

shard.grid @ring(shape = 4)

/// Users after the einsum read the gathered tensor the loop assembles.
func.func @not_only_einsums(%x: tensor<2x8xf32>, %w: tensor<8x4xf32>) -> (tensor<2x16xf32>, tensor<8x16xf32>) {
  // expected-remark @+1 {{decomposing all_gather along axis 0 (N=4) into a ring loop (case 1, gathered dim free (rhs); the gathered tensor assembled for 1 later use, unroll 1, unidirectional)}}
  %g = ovl.all_gather %w on @ring axes [0] dim 1 : tensor<8x4xf32> -> tensor<8x16xf32>
  %y = ovl.einsum "bf,fh->bh" %x, %g : tensor<2x8xf32>, tensor<8x16xf32> -> tensor<2x16xf32>
  return %y, %g : tensor<2x16xf32>, tensor<8x16xf32>
}

// -----

shard.grid @ring(shape = 4)

func.func @opted_out(%x: tensor<2x8xf32>, %w: tensor<8x4xf32>) -> tensor<2x16xf32> {
  // expected-remark @+1 {{not decomposed: the collective has the ovl.no_decompose attribute}}
  %g = ovl.all_gather %w on @ring axes [0] dim 1 {ovl.no_decompose} : tensor<8x4xf32> -> tensor<8x16xf32>
  %y = ovl.einsum "bf,fh->bh" %x, %g : tensor<2x8xf32>, tensor<8x16xf32> -> tensor<2x16xf32>
  return %y : tensor<2x16xf32>
}

// -----

shard.grid @grid(shape = 1x4)

func.func @single_device(%x: tensor<2x8xf32>, %w: tensor<8x16xf32>) -> tensor<2x16xf32> {
  // expected-remark @+1 {{not decomposed: the group has a single device}}
  %g = ovl.all_gather %w on @grid axes [0] dim 1 : tensor<8x16xf32> -> tensor<8x16xf32>
  %y = ovl.einsum "bf,fh->bh" %x, %g : tensor<2x8xf32>, tensor<8x16xf32> -> tensor<2x16xf32>
  return %y : tensor<2x16xf32>
}

// -----

shard.grid @grid(shape = 2x4)

/// Figure 3's first layer: both inputs are gathered; the one with the
/// larger gain is decomposed (even with gate=always), the other stays a
/// blocking gather. Here the x gather's ring has two devices and one step.
/// (The numbers are in ovl-decompose-collective-einsum-gate.mlir.)
func.func @two_gathers(%x: tensor<4x16xf32>, %w: tensor<8x32xf32>) -> tensor<4x32xf32> {
  // expected-remark @+1 {{decomposing all_gather along axis 0 (N=2) into a ring loop (case 2, gathered dim contracting (lhs), unroll 1, unidirectional) as gate=always says: predicted}}
  %xg = ovl.all_gather %x on @grid axes [0] dim 1 : tensor<4x16xf32> -> tensor<4x32xf32>
  // expected-remark @+1 {{not decomposing all_gather along axis 1 (N=4): the all_gather of the same einsum has the larger gain (}}
  %wg = ovl.all_gather %w on @grid axes [1] dim 0 : tensor<8x32xf32> -> tensor<32x32xf32>
  %y = ovl.einsum "bf,fh->bh" %xg, %wg : tensor<4x32xf32>, tensor<32x32xf32> -> tensor<4x32xf32>
  return %y : tensor<4x32xf32>
}

// -----

shard.grid @grid(shape = 2x4)

/// Figure 3's second layer: a gathered weight and a scattered result; the
/// scatter over two devices has the larger gain.
func.func @gather_and_scatter(%h: tensor<4x32xf32>, %w: tensor<32x8xf32>) -> tensor<4x16xf32> {
  // expected-remark @+1 {{not decomposing all_gather along axis 1 (N=4): the reduce_scatter of the same einsum has the larger gain (}}
  %wg = ovl.all_gather %w on @grid axes [1] dim 1 : tensor<32x8xf32> -> tensor<32x32xf32>
  %p = ovl.einsum "bh,hf->bf" %h, %wg : tensor<4x32xf32>, tensor<32x32xf32> -> tensor<4x32xf32>
  // expected-remark @+1 {{decomposing reduce_scatter along axis 0 (N=2) into a ring loop (einsum-reduce_scatter, unroll 1, unidirectional) as gate=always says: predicted}}
  %y = ovl.reduce_scatter %p on @grid axes [0] dim 1 : tensor<4x32xf32> -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

shard.grid @ring(shape = 4)

func.func @scatter_max(%x: tensor<3x5xf32>, %w: tensor<5x8xf32>) -> tensor<3x2xf32> {
  %y = ovl.einsum "bf,fh->bh" %x, %w : tensor<3x5xf32>, tensor<5x8xf32> -> tensor<3x8xf32>
  // expected-remark @+1 {{not decomposed: it reduces with max, not sum}}
  %r = ovl.reduce_scatter %y on @ring axes [0] dim 1 reduce max : tensor<3x8xf32> -> tensor<3x2xf32>
  return %r : tensor<3x2xf32>
}

// -----

shard.grid @ring(shape = 4)

func.func @scatter_with_acc(%x: tensor<3x5xf32>, %w: tensor<5x8xf32>, %c: tensor<3x8xf32>) -> tensor<3x2xf32> {
  %y = ovl.einsum "bf,fh->bh" %x, %w acc %c : tensor<3x5xf32>, tensor<5x8xf32> -> tensor<3x8xf32>
  // expected-remark @+1 {{not decomposed: the einsum has an accumulator operand}}
  %r = ovl.reduce_scatter %y on @ring axes [0] dim 1 : tensor<3x8xf32> -> tensor<3x2xf32>
  return %r : tensor<3x2xf32>
}

// -----

shard.grid @ring(shape = 4)

func.func @scatter_of_argument(%y: tensor<3x8xf32>) -> tensor<3x2xf32> {
  // expected-remark @+1 {{not decomposed: its input does not come from an einsum}}
  %r = ovl.reduce_scatter %y on @ring axes [0] dim 1 : tensor<3x8xf32> -> tensor<3x2xf32>
  return %r : tensor<3x2xf32>
}

// -----

shard.grid @ring(shape = 4)

func.func @scatter_sum_with_argument(%x: tensor<3x5xf32>, %w: tensor<5x8xf32>, %y: tensor<3x8xf32>) -> tensor<3x2xf32> {
  %a = ovl.einsum "bf,fh->bh" %x, %w : tensor<3x5xf32>, tensor<5x8xf32> -> tensor<3x8xf32>
  %s = arith.addf %a, %y : tensor<3x8xf32>
  // expected-remark @+1 {{not decomposed: its input does not come from an einsum or a sum of einsums}}
  %r = ovl.reduce_scatter %s on @ring axes [0] dim 1 : tensor<3x8xf32> -> tensor<3x2xf32>
  return %r : tensor<3x2xf32>
}

// -----

shard.grid @ring(shape = 4)

func.func @scatter_shared_sum(%x: tensor<3x5xf32>, %w: tensor<5x8xf32>, %v: tensor<5x8xf32>) -> (tensor<3x2xf32>, tensor<3x8xf32>) {
  %a = ovl.einsum "bf,fh->bh" %x, %w : tensor<3x5xf32>, tensor<5x8xf32> -> tensor<3x8xf32>
  %b = ovl.einsum "bf,fh->bh" %x, %v : tensor<3x5xf32>, tensor<5x8xf32> -> tensor<3x8xf32>
  %s = arith.addf %a, %b : tensor<3x8xf32>
  // expected-remark @+1 {{not decomposed: a sum of the einsums has other users}}
  %r = ovl.reduce_scatter %s on @ring axes [0] dim 1 : tensor<3x8xf32> -> tensor<3x2xf32>
  return %r, %s : tensor<3x2xf32>, tensor<3x8xf32>
}

// -----

shard.grid @ring(shape = 4)

func.func @scatter_shared_einsum(%x: tensor<3x5xf32>, %w: tensor<5x8xf32>) -> (tensor<3x2xf32>, tensor<3x8xf32>) {
  %y = ovl.einsum "bf,fh->bh" %x, %w : tensor<3x5xf32>, tensor<5x8xf32> -> tensor<3x8xf32>
  // expected-remark @+1 {{not decomposed: the einsum's result has other users}}
  %r = ovl.reduce_scatter %y on @ring axes [0] dim 1 : tensor<3x8xf32> -> tensor<3x2xf32>
  return %r, %y : tensor<3x2xf32>, tensor<3x8xf32>
}

// -----

shard.grid @ring(shape = 4)

func.func @scatter_rewritten(%x: tensor<3x5xf32>, %w: tensor<5x8xf32>) -> tensor<3x2xf32> {
  %y = ovl.einsum "bf,fh->bh" %x, %w : tensor<3x5xf32>, tensor<5x8xf32> -> tensor<3x8xf32>
  // expected-remark @+1 {{decomposing reduce_scatter along axis 0 (N=4) into a ring loop (einsum-reduce_scatter, unroll 1, unidirectional) as gate=always says: predicted 5.00 us blocking (compute 0.26 ns), 9.00 us decomposed (compute 0.59 ns), gain -4.00 us}}
  %r = ovl.reduce_scatter %y on @ring axes [0] dim 1 : tensor<3x8xf32> -> tensor<3x2xf32>
  return %r : tensor<3x2xf32>
}

// -----

/// An empty shard: nothing to overlap. The rewrite used to emit invalid IR
/// and the gate's scheduler spun for ever on 0 / 0 link shares.
shard.grid @ring(shape = 4)

func.func @empty(%x: tensor<0x8xf32>, %w: tensor<8x4xf32>) -> tensor<0x4xf32> {
  // expected-remark @+1 {{not decomposed: a tensor of the pair is empty}}
  %g = ovl.all_gather %x on @ring axes [0] dim 0 : tensor<0x8xf32> -> tensor<0x8xf32>
  %y = ovl.einsum "bf,fh->bh" %g, %w : tensor<0x8xf32>, tensor<8x4xf32> -> tensor<0x4xf32>
  return %y : tensor<0x4xf32>
}

// -----

shard.grid @ring(shape = 4)

func.func @empty_scatter(%x: tensor<3x0xf32>, %w: tensor<0x8xf32>) -> tensor<3x2xf32> {
  %y = ovl.einsum "bf,fh->bh" %x, %w : tensor<3x0xf32>, tensor<0x8xf32> -> tensor<3x8xf32>
  // expected-remark @+1 {{not decomposed: a tensor of the pair is empty}}
  %r = ovl.reduce_scatter %y on @ring axes [0] dim 1 : tensor<3x8xf32> -> tensor<3x2xf32>
  return %r : tensor<3x2xf32>
}
