// RUN: overlap-opt %s --canonicalize --cse | FileCheck %s
// RUN: overlap-opt %s --ovl-overlap-pipeline | FileCheck %s --check-prefix=PIPELINE

// What the barrier is for: a recomputation that reads the barrier's result
// is not the forward's computation, so neither canonicalization nor CSE
// merges the two, and the barrier stays until bufferization.

shard.grid @ring(shape = 4)

// CHECK-LABEL: func.func @recompute
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<2x8xf32>, %[[W:[a-z0-9]+]]: tensor<8x8xf32>, %[[G:[a-z0-9]+]]: tensor<2x8xf32>)
// CHECK: %[[F:.+]] = ovl.einsum "bd,de->be" %[[X]], %[[W]]
// CHECK: %[[B:.+]]:2 = ovl.optimization_barrier %[[X]], %[[G]]
// CHECK: %[[R:.+]] = ovl.einsum "bd,de->be" %[[B]]#0, %[[W]]
// CHECK: ovl.einsum "be,be->be" %[[R]], %[[B]]#1
// PIPELINE-LABEL: func.func @recompute
// PIPELINE: ovl.einsum "bd,de->be"
// PIPELINE: ovl.optimization_barrier
// PIPELINE-COUNT-2: ovl.einsum
func.func @recompute(%x: tensor<2x8xf32>, %w: tensor<8x8xf32>,
                     %g: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %f = ovl.einsum "bd,de->be" %x, %w : tensor<2x8xf32>, tensor<8x8xf32> -> tensor<2x8xf32>
  %x_r, %g_r = ovl.optimization_barrier %x, %g : tensor<2x8xf32>, tensor<2x8xf32>
  %r = ovl.einsum "bd,de->be" %x_r, %w : tensor<2x8xf32>, tensor<8x8xf32> -> tensor<2x8xf32>
  %d = ovl.einsum "be,be->be" %r, %g_r : tensor<2x8xf32>, tensor<2x8xf32> -> tensor<2x8xf32>
  return %f, %d : tensor<2x8xf32>, tensor<2x8xf32>
}

// Without the barrier, CSE merges the recomputation into the forward.
// CHECK-LABEL: func.func @no_barrier
// CHECK-COUNT-2: ovl.einsum
// CHECK-NOT: ovl.einsum
// CHECK: return
func.func @no_barrier(%x: tensor<2x8xf32>, %w: tensor<8x8xf32>,
                      %g: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %f = ovl.einsum "bd,de->be" %x, %w : tensor<2x8xf32>, tensor<8x8xf32> -> tensor<2x8xf32>
  %r = ovl.einsum "bd,de->be" %x, %w : tensor<2x8xf32>, tensor<8x8xf32> -> tensor<2x8xf32>
  %d = ovl.einsum "be,be->be" %r, %g : tensor<2x8xf32>, tensor<2x8xf32> -> tensor<2x8xf32>
  return %f, %d : tensor<2x8xf32>, tensor<2x8xf32>
}
