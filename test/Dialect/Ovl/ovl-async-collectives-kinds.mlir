// RUN: overlap-opt %s --pass-pipeline="builtin.module(func.func(ovl-async-collectives{kinds=all_gather,reduce_scatter,all_reduce}))" | FileCheck %s
// RUN: overlap-opt %s --pass-pipeline="builtin.module(func.func(ovl-async-collectives{kinds=all_gather}))" | FileCheck %s --check-prefix=GATHER
// RUN: overlap-opt %s --pass-pipeline="builtin.module(func.func(ovl-async-collectives))" | FileCheck %s --check-prefix=DEFAULT
// RUN: not overlap-opt %s --pass-pipeline="builtin.module(func.func(ovl-async-collectives{kinds=gather}))" 2>&1 | FileCheck %s --check-prefix=BAD

// With `kinds`, blocking all_gathers, reduce_scatters and all_reduces
// become start/done pairs: the start in the collective's place, into a
// fresh destination, the done right before the first use of the result, so
// that the independent work in between (here the layer-norm-like scaling)
// runs while the data moves. Kinds not asked for stay blocking; the default
// is permutes alone.

shard.grid @torus(shape = 2x4)

// CHECK-LABEL: func.func @layer
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<8x16xf32>, %[[W:[a-z0-9]+]]: tensor<16x4xf32>, %[[S:[a-z0-9]+]]: tensor<16xf32>)
// CHECK: %[[GB:.+]] = bufferization.alloc_tensor() : tensor<16x16xf32>
// CHECK: %[[GP:.+]], %[[GT:.+]] = ovl.all_gather_start %[[W]] into %[[GB]] on @torus axes [1] dim 1 : tensor<16x4xf32> -> tensor<16x16xf32>
// CHECK: %[[N:.+]] = ovl.einsum "bf,f->bf" %[[X]], %[[S]]
// CHECK: %[[G:.+]] = ovl.collective_done %[[GT]] keep(%[[W]] : tensor<16x4xf32>) into %[[GP]] : tensor<16x16xf32>
// CHECK: %[[Y:.+]] = ovl.einsum "bf,fh->bh" %[[N]], %[[G]]
// CHECK: %[[RB:.+]] = bufferization.alloc_tensor() : tensor<4x16xf32>
// CHECK: %[[RP:.+]], %[[RT:.+]] = ovl.reduce_scatter_start %[[Y]] into %[[RB]] on @torus axes [0] dim 0 : tensor<8x16xf32> -> tensor<4x16xf32>
// CHECK: %[[AB:.+]] = bufferization.alloc_tensor() : tensor<16xf32>
// CHECK: %[[AP:.+]], %[[AT:.+]] = ovl.all_reduce_start %[[S]] into %[[AB]] on @torus axes [0, 1] reduce max : tensor<16xf32> -> tensor<16xf32>
// CHECK: %[[R:.+]] = ovl.collective_done %[[RT]] keep(%[[Y]] : tensor<8x16xf32>) into %[[RP]] : tensor<4x16xf32>
// CHECK: %[[A:.+]] = ovl.collective_done %[[AT]] keep(%[[S]] : tensor<16xf32>) into %[[AP]] : tensor<16xf32>
// CHECK: return %[[R]], %[[A]]

// GATHER-LABEL: func.func @layer
// GATHER: ovl.all_gather_start
// GATHER: ovl.collective_done
// GATHER: ovl.reduce_scatter %
// GATHER: ovl.all_reduce %

// DEFAULT-LABEL: func.func @layer
// DEFAULT-NOT: _start
// DEFAULT: ovl.all_gather %
// DEFAULT: ovl.reduce_scatter %
// DEFAULT: ovl.all_reduce %

// BAD: error: ovl-async-collectives: unknown kind 'gather' in kinds; expected permute, all_gather, reduce_scatter or all_reduce
func.func @layer(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>, %s: tensor<16xf32>) -> (tensor<4x16xf32>, tensor<16xf32>) {
  %g = ovl.all_gather %w on @torus axes [1] dim 1 : tensor<16x4xf32> -> tensor<16x16xf32>
  %n = ovl.einsum "bf,f->bf" %x, %s : tensor<8x16xf32>, tensor<16xf32> -> tensor<8x16xf32>
  %y = ovl.einsum "bf,fh->bh" %n, %g : tensor<8x16xf32>, tensor<16x16xf32> -> tensor<8x16xf32>
  %r = ovl.reduce_scatter %y on @torus axes [0] dim 0 : tensor<8x16xf32> -> tensor<4x16xf32>
  %a = ovl.all_reduce %s on @torus axes [0, 1] reduce max : tensor<16xf32>
  return %r, %a : tensor<4x16xf32>, tensor<16xf32>
}
