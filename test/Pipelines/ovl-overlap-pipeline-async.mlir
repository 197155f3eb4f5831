// RUN: overlap-opt %s --ovl-overlap-pipeline="gate=never hardware=%S/../Dialect/Ovl/Inputs/schedule-chip.json" | FileCheck %s
// RUN: overlap-opt %s --ovl-overlap-pipeline="async-collectives=false gate=never hardware=%S/../Dialect/Ovl/Inputs/schedule-chip.json" | FileCheck %s --check-prefix=BLOCKING

// By default (async-collectives=true) the pipeline makes the collectives it
// keeps asynchronous and the scheduler starts the weight gather above the
// independent einsum; with async-collectives=false they stay blocking.

// CHECK-LABEL: func.func @layer
// CHECK: ovl.all_gather_start
// CHECK: ovl.einsum "bf,fh->bh"
// CHECK: ovl.collective_done
// CHECK: ovl.einsum "bf,fh->bh"

// BLOCKING-LABEL: func.func @layer
// BLOCKING-NOT: _start
// BLOCKING: ovl.all_gather %
shard.grid @ring(shape = 4)
func.func @layer(%x: tensor<4x32xf32>, %m: tensor<32x32xf32>, %w: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %n = ovl.einsum "bf,fh->bh" %x, %m : tensor<4x32xf32>, tensor<32x32xf32> -> tensor<4x32xf32>
  %g = ovl.all_gather %w on @ring axes [0] dim 0 : tensor<8x16xf32> -> tensor<32x16xf32>
  %y = ovl.einsum "bf,fh->bh" %n, %g : tensor<4x32xf32>, tensor<32x16xf32> -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}
