// RUN: overlap-opt %s --pass-pipeline="builtin.module(func.func(ovl-async-collectives{kinds=all_gather}))" | FileCheck %s
// RUN: overlap-opt %s --pass-pipeline="builtin.module(func.func(ovl-decompose-collective-einsum{gate=never}))" | FileCheck %s
// RUN: overlap-opt %s --ovl-overlap-pipeline | FileCheck %s
// RUN: overlap-opt %s --pass-pipeline="builtin.module(func.func(ovl-decompose-collective-einsum{gate=never remarks=true}))" -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK

// A collective whose result has a dynamic shape stays blocking: its
// receive buffer would need sizes only the running program knows (the
// grid's extent here). Each path that makes collectives asynchronous
// leaves it valid and as it was.

// REMARK: remark: keeping all_gather along axis 0 (N=?) blocking (not decomposable: the group size is not static): its result has a dynamic shape

// CHECK-LABEL: func.func @dynamic_grid
// CHECK-NOT: _start
// CHECK: ovl.all_gather %{{.*}} on @dyn axes [0] dim 0 : tensor<2x8xbf16> -> tensor<?x8xbf16>
shard.grid @dyn(shape = ?x4)
func.func @dynamic_grid(%x: tensor<2x8xbf16>) -> tensor<?x8xbf16> {
  %0 = ovl.all_gather %x on @dyn axes [0] dim 0 : tensor<2x8xbf16> -> tensor<?x8xbf16>
  return %0 : tensor<?x8xbf16>
}
