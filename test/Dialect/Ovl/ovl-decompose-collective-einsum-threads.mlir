// Functions priced in parallel keep their remarks: the gate captures the
// simulator's diagnostics while it prices a window, and a context's handlers
// serve every thread, so the capture must let the other functions' remarks
// through (once, about one run in three lost a function's remarks). Twelve
// functions, each with two candidates, and three runs: every remark comes
// out, in function order.
// RUN: for i in 1 2 3; do overlap-opt %s --pass-pipeline="builtin.module(func.func(ovl-decompose-collective-einsum{remarks=true}))" -o /dev/null 2>&1; done | FileCheck %s

shard.grid @grid(shape = 2x4)

func.func @f01(%x: tensor<4x32xf32>, %w: tensor<32x8xf32>) -> tensor<4x16xf32> {
  %wf = ovl.all_gather %w on @grid axes [1] dim 1 : tensor<32x8xf32> -> tensor<32x32xf32>
  %p = ovl.einsum "bh,hf->bf" %x, %wf : tensor<4x32xf32>, tensor<32x32xf32> -> tensor<4x32xf32>
  %y = ovl.reduce_scatter %p on @grid axes [0] dim 1 : tensor<4x32xf32> -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

func.func @f02(%x: tensor<4x32xf32>, %w: tensor<32x8xf32>) -> tensor<4x16xf32> {
  %wf = ovl.all_gather %w on @grid axes [1] dim 1 : tensor<32x8xf32> -> tensor<32x32xf32>
  %p = ovl.einsum "bh,hf->bf" %x, %wf : tensor<4x32xf32>, tensor<32x32xf32> -> tensor<4x32xf32>
  %y = ovl.reduce_scatter %p on @grid axes [0] dim 1 : tensor<4x32xf32> -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

func.func @f03(%x: tensor<4x32xf32>, %w: tensor<32x8xf32>) -> tensor<4x16xf32> {
  %wf = ovl.all_gather %w on @grid axes [1] dim 1 : tensor<32x8xf32> -> tensor<32x32xf32>
  %p = ovl.einsum "bh,hf->bf" %x, %wf : tensor<4x32xf32>, tensor<32x32xf32> -> tensor<4x32xf32>
  %y = ovl.reduce_scatter %p on @grid axes [0] dim 1 : tensor<4x32xf32> -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

func.func @f04(%x: tensor<4x32xf32>, %w: tensor<32x8xf32>) -> tensor<4x16xf32> {
  %wf = ovl.all_gather %w on @grid axes [1] dim 1 : tensor<32x8xf32> -> tensor<32x32xf32>
  %p = ovl.einsum "bh,hf->bf" %x, %wf : tensor<4x32xf32>, tensor<32x32xf32> -> tensor<4x32xf32>
  %y = ovl.reduce_scatter %p on @grid axes [0] dim 1 : tensor<4x32xf32> -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

func.func @f05(%x: tensor<4x32xf32>, %w: tensor<32x8xf32>) -> tensor<4x16xf32> {
  %wf = ovl.all_gather %w on @grid axes [1] dim 1 : tensor<32x8xf32> -> tensor<32x32xf32>
  %p = ovl.einsum "bh,hf->bf" %x, %wf : tensor<4x32xf32>, tensor<32x32xf32> -> tensor<4x32xf32>
  %y = ovl.reduce_scatter %p on @grid axes [0] dim 1 : tensor<4x32xf32> -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

func.func @f06(%x: tensor<4x32xf32>, %w: tensor<32x8xf32>) -> tensor<4x16xf32> {
  %wf = ovl.all_gather %w on @grid axes [1] dim 1 : tensor<32x8xf32> -> tensor<32x32xf32>
  %p = ovl.einsum "bh,hf->bf" %x, %wf : tensor<4x32xf32>, tensor<32x32xf32> -> tensor<4x32xf32>
  %y = ovl.reduce_scatter %p on @grid axes [0] dim 1 : tensor<4x32xf32> -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

func.func @f07(%x: tensor<4x32xf32>, %w: tensor<32x8xf32>) -> tensor<4x16xf32> {
  %wf = ovl.all_gather %w on @grid axes [1] dim 1 : tensor<32x8xf32> -> tensor<32x32xf32>
  %p = ovl.einsum "bh,hf->bf" %x, %wf : tensor<4x32xf32>, tensor<32x32xf32> -> tensor<4x32xf32>
  %y = ovl.reduce_scatter %p on @grid axes [0] dim 1 : tensor<4x32xf32> -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

func.func @f08(%x: tensor<4x32xf32>, %w: tensor<32x8xf32>) -> tensor<4x16xf32> {
  %wf = ovl.all_gather %w on @grid axes [1] dim 1 : tensor<32x8xf32> -> tensor<32x32xf32>
  %p = ovl.einsum "bh,hf->bf" %x, %wf : tensor<4x32xf32>, tensor<32x32xf32> -> tensor<4x32xf32>
  %y = ovl.reduce_scatter %p on @grid axes [0] dim 1 : tensor<4x32xf32> -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

func.func @f09(%x: tensor<4x32xf32>, %w: tensor<32x8xf32>) -> tensor<4x16xf32> {
  %wf = ovl.all_gather %w on @grid axes [1] dim 1 : tensor<32x8xf32> -> tensor<32x32xf32>
  %p = ovl.einsum "bh,hf->bf" %x, %wf : tensor<4x32xf32>, tensor<32x32xf32> -> tensor<4x32xf32>
  %y = ovl.reduce_scatter %p on @grid axes [0] dim 1 : tensor<4x32xf32> -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

func.func @f10(%x: tensor<4x32xf32>, %w: tensor<32x8xf32>) -> tensor<4x16xf32> {
  %wf = ovl.all_gather %w on @grid axes [1] dim 1 : tensor<32x8xf32> -> tensor<32x32xf32>
  %p = ovl.einsum "bh,hf->bf" %x, %wf : tensor<4x32xf32>, tensor<32x32xf32> -> tensor<4x32xf32>
  %y = ovl.reduce_scatter %p on @grid axes [0] dim 1 : tensor<4x32xf32> -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

func.func @f11(%x: tensor<4x32xf32>, %w: tensor<32x8xf32>) -> tensor<4x16xf32> {
  %wf = ovl.all_gather %w on @grid axes [1] dim 1 : tensor<32x8xf32> -> tensor<32x32xf32>
  %p = ovl.einsum "bh,hf->bf" %x, %wf : tensor<4x32xf32>, tensor<32x32xf32> -> tensor<4x32xf32>
  %y = ovl.reduce_scatter %p on @grid axes [0] dim 1 : tensor<4x32xf32> -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

func.func @f12(%x: tensor<4x32xf32>, %w: tensor<32x8xf32>) -> tensor<4x16xf32> {
  %wf = ovl.all_gather %w on @grid axes [1] dim 1 : tensor<32x8xf32> -> tensor<32x32xf32>
  %p = ovl.einsum "bh,hf->bf" %x, %wf : tensor<4x32xf32>, tensor<32x32xf32> -> tensor<4x32xf32>
  %y = ovl.reduce_scatter %p on @grid axes [0] dim 1 : tensor<4x32xf32> -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// Each run: each function's three remarks, in function order.
// CHECK: threads.mlir:12:9: remark: not decomposing all_gather
// CHECK-NEXT: ovl.all_gather
// CHECK: threads.mlir:14:8: remark: decomposing reduce_scatter
// CHECK: threads.mlir:11:1: remark: loops priced together
// CHECK: threads.mlir:19:9: remark: not decomposing all_gather
// CHECK-NEXT: ovl.all_gather
// CHECK: threads.mlir:21:8: remark: decomposing reduce_scatter
// CHECK: threads.mlir:18:1: remark: loops priced together
// CHECK: threads.mlir:26:9: remark: not decomposing all_gather
// CHECK-NEXT: ovl.all_gather
// CHECK: threads.mlir:28:8: remark: decomposing reduce_scatter
// CHECK: threads.mlir:25:1: remark: loops priced together
// CHECK: threads.mlir:33:9: remark: not decomposing all_gather
// CHECK-NEXT: ovl.all_gather
// CHECK: threads.mlir:35:8: remark: decomposing reduce_scatter
// CHECK: threads.mlir:32:1: remark: loops priced together
// CHECK: threads.mlir:40:9: remark: not decomposing all_gather
// CHECK-NEXT: ovl.all_gather
// CHECK: threads.mlir:42:8: remark: decomposing reduce_scatter
// CHECK: threads.mlir:39:1: remark: loops priced together
// CHECK: threads.mlir:47:9: remark: not decomposing all_gather
// CHECK-NEXT: ovl.all_gather
// CHECK: threads.mlir:49:8: remark: decomposing reduce_scatter
// CHECK: threads.mlir:46:1: remark: loops priced together
// CHECK: threads.mlir:54:9: remark: not decomposing all_gather
// CHECK-NEXT: ovl.all_gather
// CHECK: threads.mlir:56:8: remark: decomposing reduce_scatter
// CHECK: threads.mlir:53:1: remark: loops priced together
// CHECK: threads.mlir:61:9: remark: not decomposing all_gather
// CHECK-NEXT: ovl.all_gather
// CHECK: threads.mlir:63:8: remark: decomposing reduce_scatter
// CHECK: threads.mlir:60:1: remark: loops priced together
// CHECK: threads.mlir:68:9: remark: not decomposing all_gather
// CHECK-NEXT: ovl.all_gather
// CHECK: threads.mlir:70:8: remark: decomposing reduce_scatter
// CHECK: threads.mlir:67:1: remark: loops priced together
// CHECK: threads.mlir:75:9: remark: not decomposing all_gather
// CHECK-NEXT: ovl.all_gather
// CHECK: threads.mlir:77:8: remark: decomposing reduce_scatter
// CHECK: threads.mlir:74:1: remark: loops priced together
// CHECK: threads.mlir:82:9: remark: not decomposing all_gather
// CHECK-NEXT: ovl.all_gather
// CHECK: threads.mlir:84:8: remark: decomposing reduce_scatter
// CHECK: threads.mlir:81:1: remark: loops priced together
// CHECK: threads.mlir:89:9: remark: not decomposing all_gather
// CHECK-NEXT: ovl.all_gather
// CHECK: threads.mlir:91:8: remark: decomposing reduce_scatter
// CHECK: threads.mlir:88:1: remark: loops priced together
// CHECK: threads.mlir:12:9: remark: not decomposing all_gather
// CHECK-NEXT: ovl.all_gather
// CHECK: threads.mlir:14:8: remark: decomposing reduce_scatter
// CHECK: threads.mlir:11:1: remark: loops priced together
// CHECK: threads.mlir:19:9: remark: not decomposing all_gather
// CHECK-NEXT: ovl.all_gather
// CHECK: threads.mlir:21:8: remark: decomposing reduce_scatter
// CHECK: threads.mlir:18:1: remark: loops priced together
// CHECK: threads.mlir:26:9: remark: not decomposing all_gather
// CHECK-NEXT: ovl.all_gather
// CHECK: threads.mlir:28:8: remark: decomposing reduce_scatter
// CHECK: threads.mlir:25:1: remark: loops priced together
// CHECK: threads.mlir:33:9: remark: not decomposing all_gather
// CHECK-NEXT: ovl.all_gather
// CHECK: threads.mlir:35:8: remark: decomposing reduce_scatter
// CHECK: threads.mlir:32:1: remark: loops priced together
// CHECK: threads.mlir:40:9: remark: not decomposing all_gather
// CHECK-NEXT: ovl.all_gather
// CHECK: threads.mlir:42:8: remark: decomposing reduce_scatter
// CHECK: threads.mlir:39:1: remark: loops priced together
// CHECK: threads.mlir:47:9: remark: not decomposing all_gather
// CHECK-NEXT: ovl.all_gather
// CHECK: threads.mlir:49:8: remark: decomposing reduce_scatter
// CHECK: threads.mlir:46:1: remark: loops priced together
// CHECK: threads.mlir:54:9: remark: not decomposing all_gather
// CHECK-NEXT: ovl.all_gather
// CHECK: threads.mlir:56:8: remark: decomposing reduce_scatter
// CHECK: threads.mlir:53:1: remark: loops priced together
// CHECK: threads.mlir:61:9: remark: not decomposing all_gather
// CHECK-NEXT: ovl.all_gather
// CHECK: threads.mlir:63:8: remark: decomposing reduce_scatter
// CHECK: threads.mlir:60:1: remark: loops priced together
// CHECK: threads.mlir:68:9: remark: not decomposing all_gather
// CHECK-NEXT: ovl.all_gather
// CHECK: threads.mlir:70:8: remark: decomposing reduce_scatter
// CHECK: threads.mlir:67:1: remark: loops priced together
// CHECK: threads.mlir:75:9: remark: not decomposing all_gather
// CHECK-NEXT: ovl.all_gather
// CHECK: threads.mlir:77:8: remark: decomposing reduce_scatter
// CHECK: threads.mlir:74:1: remark: loops priced together
// CHECK: threads.mlir:82:9: remark: not decomposing all_gather
// CHECK-NEXT: ovl.all_gather
// CHECK: threads.mlir:84:8: remark: decomposing reduce_scatter
// CHECK: threads.mlir:81:1: remark: loops priced together
// CHECK: threads.mlir:89:9: remark: not decomposing all_gather
// CHECK-NEXT: ovl.all_gather
// CHECK: threads.mlir:91:8: remark: decomposing reduce_scatter
// CHECK: threads.mlir:88:1: remark: loops priced together
// CHECK: threads.mlir:12:9: remark: not decomposing all_gather
// CHECK-NEXT: ovl.all_gather
// CHECK: threads.mlir:14:8: remark: decomposing reduce_scatter
// CHECK: threads.mlir:11:1: remark: loops priced together
// CHECK: threads.mlir:19:9: remark: not decomposing all_gather
// CHECK-NEXT: ovl.all_gather
// CHECK: threads.mlir:21:8: remark: decomposing reduce_scatter
// CHECK: threads.mlir:18:1: remark: loops priced together
// CHECK: threads.mlir:26:9: remark: not decomposing all_gather
// CHECK-NEXT: ovl.all_gather
// CHECK: threads.mlir:28:8: remark: decomposing reduce_scatter
// CHECK: threads.mlir:25:1: remark: loops priced together
// CHECK: threads.mlir:33:9: remark: not decomposing all_gather
// CHECK-NEXT: ovl.all_gather
// CHECK: threads.mlir:35:8: remark: decomposing reduce_scatter
// CHECK: threads.mlir:32:1: remark: loops priced together
// CHECK: threads.mlir:40:9: remark: not decomposing all_gather
// CHECK-NEXT: ovl.all_gather
// CHECK: threads.mlir:42:8: remark: decomposing reduce_scatter
// CHECK: threads.mlir:39:1: remark: loops priced together
// CHECK: threads.mlir:47:9: remark: not decomposing all_gather
// CHECK-NEXT: ovl.all_gather
// CHECK: threads.mlir:49:8: remark: decomposing reduce_scatter
// CHECK: threads.mlir:46:1: remark: loops priced together
// CHECK: threads.mlir:54:9: remark: not decomposing all_gather
// CHECK-NEXT: ovl.all_gather
// CHECK: threads.mlir:56:8: remark: decomposing reduce_scatter
// CHECK: threads.mlir:53:1: remark: loops priced together
// CHECK: threads.mlir:61:9: remark: not decomposing all_gather
// CHECK-NEXT: ovl.all_gather
// CHECK: threads.mlir:63:8: remark: decomposing reduce_scatter
// CHECK: threads.mlir:60:1: remark: loops priced together
// CHECK: threads.mlir:68:9: remark: not decomposing all_gather
// CHECK-NEXT: ovl.all_gather
// CHECK: threads.mlir:70:8: remark: decomposing reduce_scatter
// CHECK: threads.mlir:67:1: remark: loops priced together
// CHECK: threads.mlir:75:9: remark: not decomposing all_gather
// CHECK-NEXT: ovl.all_gather
// CHECK: threads.mlir:77:8: remark: decomposing reduce_scatter
// CHECK: threads.mlir:74:1: remark: loops priced together
// CHECK: threads.mlir:82:9: remark: not decomposing all_gather
// CHECK-NEXT: ovl.all_gather
// CHECK: threads.mlir:84:8: remark: decomposing reduce_scatter
// CHECK: threads.mlir:81:1: remark: loops priced together
// CHECK: threads.mlir:89:9: remark: not decomposing all_gather
// CHECK-NEXT: ovl.all_gather
// CHECK: threads.mlir:91:8: remark: decomposing reduce_scatter
// CHECK: threads.mlir:88:1: remark: loops priced together
// CHECK-NOT: remark
