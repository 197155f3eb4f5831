// RUN: overlap-opt %s --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --split-input-file | FileCheck %s

// One-Shot Bufferize turns the tensor collectives into their ovl.buffer forms.

shard.grid @torus(shape = 2x4)

/// Blocking collectives read their input and write a fresh buffer.
// CHECK-LABEL: func.func @blocking
// CHECK-SAME: (%[[X:[a-z0-9]+]]: memref<8x16xf32>)
// CHECK: %[[G:.+]] = memref.alloc() {{.*}} : memref<16x16xf32>
// CHECK: ovl.buffer.all_gather %[[X]] into %[[G]] on @torus axes [0] dim 0 : memref<8x16xf32>, memref<16x16xf32>
// CHECK: %[[S:.+]] = memref.alloc() {{.*}} : memref<8x4xf32>
// CHECK: ovl.buffer.reduce_scatter %[[X]] into %[[S]] on @torus axes [1] dim 1 reduce max : memref<8x16xf32>, memref<8x4xf32>
// CHECK: %[[R:.+]] = memref.alloc() {{.*}} : memref<8x16xf32>
// CHECK: ovl.buffer.all_reduce %[[X]] into %[[R]] on @torus axes [0, 1] : memref<8x16xf32>, memref<8x16xf32>
// CHECK: %[[P:.+]] = memref.alloc() {{.*}} : memref<8x16xf32>
// CHECK: ovl.buffer.permute %[[X]] into %[[P]] on @torus axes [0] pairs [0 -> 1, 1 -> 0] : memref<8x16xf32>, memref<8x16xf32>
// CHECK: return %[[G]], %[[S]], %[[R]], %[[P]]
func.func @blocking(%x: tensor<8x16xf32>)
    -> (tensor<16x16xf32>, tensor<8x4xf32>, tensor<8x16xf32>, tensor<8x16xf32>) {
  %0 = ovl.all_gather %x on @torus axes [0] dim 0 : tensor<8x16xf32> -> tensor<16x16xf32>
  %1 = ovl.reduce_scatter %x on @torus axes [1] dim 1 reduce max : tensor<8x16xf32> -> tensor<8x4xf32>
  %2 = ovl.all_reduce %x on @torus axes [0, 1] : tensor<8x16xf32>
  %3 = ovl.collective_permute %x on @torus axes [0] pairs [0 -> 1, 1 -> 0] : tensor<8x16xf32>
  return %0, %1, %2, %3 : tensor<16x16xf32>, tensor<8x4xf32>, tensor<8x16xf32>, tensor<8x16xf32>
}

// -----

shard.grid @ring(shape = 4)

/// A ring loop unrolled by two double-buffers: the two shard buffers swap
/// roles inside the body, so the loop allocates and copies nothing.
// CHECK-LABEL: func.func @ring_unrolled
// CHECK-SAME: (%[[X:[a-z0-9]+]]: memref<4x8xf32>, %[[W:[a-z0-9]+]]: memref<8x16xf32>, %[[ACC:[a-z0-9]+]]: memref<4x16xf32>)
// CHECK: %[[BUF:.+]] = memref.alloc() {{.*}} : memref<4x8xf32>
// CHECK: scf.for {{.*}} iter_args(%[[A:.+]] = %[[X]], %[[B:.+]] = %[[BUF]], %[[C:.+]] = %[[ACC]])
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.copy
// CHECK: %[[T1:.+]] = ovl.buffer.permute_start %[[A]] into %[[B]]
// CHECK: linalg.matmul ins(%[[A]], %[[W]] {{.*}} outs(%[[C]]
// CHECK: ovl.buffer.permute_done %[[T1]] keep(%[[A]]) into %[[B]]
// CHECK: %[[T2:.+]] = ovl.buffer.permute_start %[[B]] into %[[A]]
// CHECK: linalg.matmul ins(%[[B]], %[[W]] {{.*}} outs(%[[C]]
// CHECK: ovl.buffer.permute_done %[[T2]] keep(%[[B]]) into %[[A]]
// CHECK-NOT: memref.copy
// CHECK: scf.yield %[[A]], %[[B]], %[[C]]
func.func @ring_unrolled(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %acc0: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %buf = tensor.empty() : tensor<4x8xf32>
  %r:3 = scf.for %i = %c0 to %c2 step %c1 iter_args(%a = %x, %b = %buf, %acc = %acc0) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x16xf32>) {
    %p1, %t1 = ovl.collective_permute_start %a into %b on @ring axes [0] pairs [0 -> 3, 1 -> 0, 2 -> 1, 3 -> 2] : tensor<4x8xf32>
    %m1 = linalg.matmul ins(%a, %w : tensor<4x8xf32>, tensor<8x16xf32>) outs(%acc : tensor<4x16xf32>) -> tensor<4x16xf32>
    %n1 = ovl.collective_permute_done %t1 keep(%a) into %p1 : tensor<4x8xf32>
    %p2, %t2 = ovl.collective_permute_start %n1 into %a on @ring axes [0] pairs [0 -> 3, 1 -> 0, 2 -> 1, 3 -> 2] : tensor<4x8xf32>
    %m2 = linalg.matmul ins(%n1, %w : tensor<4x8xf32>, tensor<8x16xf32>) outs(%m1 : tensor<4x16xf32>) -> tensor<4x16xf32>
    %n2 = ovl.collective_permute_done %t2 keep(%n1) into %p2 : tensor<4x8xf32>
    scf.yield %n2, %n1, %m2 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x16xf32>
  }
  return %r#2 : tensor<4x16xf32>
}

// -----

shard.grid @torus(shape = 2x4)

/// Asynchronous all_gather, reduce_scatter and all_reduce: the start writes
/// its destination (a fresh buffer, no copy), the done returns it. A write
/// to a start's input while the transfer is in flight goes to a copy: the
/// in-flight buffer is neither reused nor overwritten before the done.
// CHECK-LABEL: func.func @async_collectives
// CHECK-SAME: (%[[X:[a-z0-9]+]]: memref<8x16xf32>, %[[C:[a-z0-9]+]]: f32)
// CHECK: %[[G:.+]] = memref.alloc() {{.*}} : memref<16x16xf32>
// CHECK: %[[TG:.+]] = ovl.buffer.all_gather_start %[[X]] into %[[G]] on @torus axes [0] dim 0 : memref<8x16xf32>, memref<16x16xf32>
// CHECK: %[[S:.+]] = memref.alloc() {{.*}} : memref<8x4xf32>
// CHECK: %[[TS:.+]] = ovl.buffer.reduce_scatter_start %[[X]] into %[[S]] on @torus axes [1] dim 1 reduce max : memref<8x16xf32>, memref<8x4xf32>
// CHECK: %[[R:.+]] = memref.alloc() {{.*}} : memref<8x16xf32>
// CHECK: %[[TR:.+]] = ovl.buffer.all_reduce_start %[[X]] into %[[R]] on @torus axes [0, 1] : memref<8x16xf32>, memref<8x16xf32>
// CHECK: %[[F:.+]] = memref.alloc() {{.*}} : memref<8x16xf32>
// CHECK: linalg.fill ins(%[[C]] : f32) outs(%[[F]] : memref<8x16xf32>)
// CHECK: ovl.buffer.collective_done %[[TG]] keep(%[[X]]) into %[[G]] : memref<8x16xf32>, memref<16x16xf32>
// CHECK: ovl.buffer.collective_done %[[TS]] keep(%[[X]]) into %[[S]] : memref<8x16xf32>, memref<8x4xf32>
// CHECK: ovl.buffer.collective_done %[[TR]] keep(%[[X]]) into %[[R]] : memref<8x16xf32>, memref<8x16xf32>
// CHECK: return %[[G]], %[[S]], %[[R]], %[[F]]
func.func @async_collectives(%x: tensor<8x16xf32>, %c: f32) -> (tensor<16x16xf32>, tensor<8x4xf32>, tensor<8x16xf32>, tensor<8x16xf32>) {
  %eg = tensor.empty() : tensor<16x16xf32>
  %pg, %tg = ovl.all_gather_start %x into %eg on @torus axes [0] dim 0 : tensor<8x16xf32> -> tensor<16x16xf32>
  %es = tensor.empty() : tensor<8x4xf32>
  %ps, %ts = ovl.reduce_scatter_start %x into %es on @torus axes [1] dim 1 reduce max : tensor<8x16xf32> -> tensor<8x4xf32>
  %er = tensor.empty() : tensor<8x16xf32>
  %pr, %tr = ovl.all_reduce_start %x into %er on @torus axes [0, 1] : tensor<8x16xf32> -> tensor<8x16xf32>
  %filled = linalg.fill ins(%c : f32) outs(%x : tensor<8x16xf32>) -> tensor<8x16xf32>
  %g = ovl.collective_done %tg keep(%x : tensor<8x16xf32>) into %pg : tensor<16x16xf32>
  %s = ovl.collective_done %ts keep(%x : tensor<8x16xf32>) into %ps : tensor<8x4xf32>
  %r = ovl.collective_done %tr keep(%x : tensor<8x16xf32>) into %pr : tensor<8x16xf32>
  return %g, %s, %r, %filled : tensor<16x16xf32>, tensor<8x4xf32>, tensor<8x16xf32>, tensor<8x16xf32>
}

// -----

/// An optimization barrier bufferizes to its operands' buffers: no copy, no
/// allocation, nothing left of it.
// CHECK-LABEL: func.func @barrier
// CHECK-SAME: (%[[X:[a-z0-9]+]]: memref<2x8xf32>, %[[G:[a-z0-9]+]]: memref<2x8xf32>)
// CHECK-NOT: ovl.
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.copy
// CHECK: return %[[X]], %[[G]]
func.func @barrier(%x: tensor<2x8xf32>, %g: tensor<2x8xf32>)
    -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %x_r, %g_r = ovl.optimization_barrier %x, %g : tensor<2x8xf32>, tensor<2x8xf32>
  return %x_r, %g_r : tensor<2x8xf32>, tensor<2x8xf32>
}
