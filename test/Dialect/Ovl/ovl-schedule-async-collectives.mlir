// RUN: overlap-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(ovl-schedule{hardware=%S/Inputs/schedule-chip.json}))" | FileCheck %s
// RUN: overlap-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(ovl-schedule{algorithm=top-down hardware=%S/Inputs/schedule-chip.json}))" | FileCheck %s
// RUN: overlap-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(ovl-async-collectives{kinds=all_gather,reduce_scatter},ovl-schedule{hardware=%S/Inputs/schedule-chip.json}))" | FileCheck %s --check-prefix=PIPE

// ovl-schedule moves asynchronous all_gathers and reduce_scatters like
// permute pairs (Inputs/schedule-chip.json: an einsum of 4x32 by 32x16
// takes 4.1 us, the gathers here about as long): a weight gather's start
// goes above the layer-norm-like einsum that does not need it, so that the
// gather moves while it computes; a reduce_scatter's done goes below the
// independent work after it.

shard.grid @ring(shape = 4)

// CHECK-LABEL: func.func @weight_gather
// CHECK: ovl.all_gather_start
// CHECK: ovl.einsum "bf,fh->bh"
// CHECK: ovl.collective_done
// CHECK: ovl.einsum "bf,fh->bh"
func.func @weight_gather(%x: tensor<4x32xf32>, %m: tensor<32x32xf32>, %w: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %n = ovl.einsum "bf,fh->bh" %x, %m : tensor<4x32xf32>, tensor<32x32xf32> -> tensor<4x32xf32>
  %buf = bufferization.alloc_tensor() : tensor<32x16xf32>
  %p, %t = ovl.all_gather_start %w into %buf on @ring axes [0] dim 0 : tensor<8x16xf32> -> tensor<32x16xf32>
  %g = ovl.collective_done %t keep(%w : tensor<8x16xf32>) into %p : tensor<32x16xf32>
  %y = ovl.einsum "bf,fh->bh" %n, %g : tensor<4x32xf32>, tensor<32x16xf32> -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

shard.grid @ring(shape = 4)

// CHECK-LABEL: func.func @gradient_scatter
// CHECK: ovl.reduce_scatter_start
// CHECK: ovl.einsum "bf,fh->bh"
// CHECK: ovl.collective_done
func.func @gradient_scatter(%g: tensor<32x16xf32>, %x: tensor<4x32xf32>, %m: tensor<32x32xf32>) -> (tensor<8x16xf32>, tensor<4x32xf32>) {
  %buf = bufferization.alloc_tensor() : tensor<8x16xf32>
  %p, %t = ovl.reduce_scatter_start %g into %buf on @ring axes [0] dim 0 : tensor<32x16xf32> -> tensor<8x16xf32>
  %s = ovl.collective_done %t keep(%g : tensor<32x16xf32>) into %p : tensor<8x16xf32>
  %n = ovl.einsum "bf,fh->bh" %x, %m : tensor<4x32xf32>, tensor<32x32xf32> -> tensor<4x32xf32>
  return %s, %n : tensor<8x16xf32>, tensor<4x32xf32>
}

// -----

shard.grid @ring(shape = 4)

// From blocking collectives: ovl-async-collectives splits them, ovl-schedule
// moves them.
// PIPE-LABEL: func.func @blocking
// PIPE: ovl.all_gather_start
// PIPE: ovl.einsum "bf,fh->bh"
// PIPE: ovl.collective_done
// PIPE: ovl.einsum "bf,fh->bh"
func.func @blocking(%x: tensor<4x32xf32>, %m: tensor<32x32xf32>, %w: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %n = ovl.einsum "bf,fh->bh" %x, %m : tensor<4x32xf32>, tensor<32x32xf32> -> tensor<4x32xf32>
  %g = ovl.all_gather %w on @ring axes [0] dim 0 : tensor<8x16xf32> -> tensor<32x16xf32>
  %y = ovl.einsum "bf,fh->bh" %n, %g : tensor<4x32xf32>, tensor<32x16xf32> -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}
