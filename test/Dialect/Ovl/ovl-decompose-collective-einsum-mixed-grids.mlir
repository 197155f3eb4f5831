// RUN: overlap-opt %s --pass-pipeline="builtin.module(func.func(ovl-decompose-collective-einsum{remarks=true}))" 2>&1 | FileCheck %s

// A block whose first collective is on a grid of dynamic shape, beside a
// decomposable pair on a static ring. The gate places the block on the
// machine of its first collective that has one (the ring's); the window
// holds the other grid, which the simulator cannot play, so nothing is
// priced and everything stays as written, each remark saying why.

// CHECK: remark: keeping all_gather along axis 0 (N=?) blocking (not decomposable: the group size is not static): grid @dyn has a dynamic shape, which the cost model cannot place on a machine
// CHECK: remark: not decomposing all_gather along axis 0 (N=8): the cost model cannot price it: the simulator needs a static grid shape, dyn has a dynamic axis; kept blocking
// CHECK: remark: the loops were not priced together: the simulator needs a static grid shape, dyn has a dynamic axis
// CHECK-LABEL: func.func @mixed
// CHECK: ovl.all_gather %{{.*}} on @dyn
// CHECK: ovl.all_gather %{{.*}} on @ring
// CHECK-NOT: scf.for

shard.grid @dyn(shape = ?x4)
shard.grid @ring(shape = 8)

func.func @mixed(%d: tensor<2x8xbf16>, %x: tensor<64x64xbf16>,
                 %w: tensor<64x32xbf16>)
    -> (tensor<?x8xbf16>, tensor<64x256xf32>) {
  %0 = ovl.all_gather %d on @dyn axes [0] dim 0
      : tensor<2x8xbf16> -> tensor<?x8xbf16>
  %w_full = ovl.all_gather %w on @ring axes [0] dim 1
      : tensor<64x32xbf16> -> tensor<64x256xbf16>
  %h = ovl.einsum "bf,fh->bh" %x, %w_full
      : tensor<64x64xbf16>, tensor<64x256xbf16> -> tensor<64x256xf32>
  return %0, %h : tensor<?x8xbf16>, tensor<64x256xf32>
}
