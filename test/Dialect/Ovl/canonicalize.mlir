// RUN: overlap-opt %s --canonicalize --split-input-file | FileCheck %s

// Collectives that move nothing fold away; those that move data stay.

shard.grid @torus(shape = 1x4)

/// A group spanned by a size-1 axis (or by no axis) holds one device.
// CHECK-LABEL: func.func @single_device_collectives
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<2x8xf32>)
// CHECK-NOT: ovl.
// CHECK: return %[[X]], %[[X]], %[[X]], %[[X]], %[[X]]
func.func @single_device_collectives(%x: tensor<2x8xf32>)
    -> (tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>) {
  %0 = ovl.all_gather %x on @torus axes [0] dim 0 : tensor<2x8xf32> -> tensor<2x8xf32>
  %1 = ovl.reduce_scatter %x on @torus axes [0] dim 1 : tensor<2x8xf32> -> tensor<2x8xf32>
  %2 = ovl.all_reduce %x on @torus axes [0] : tensor<2x8xf32>
  %3 = ovl.collective_permute %x on @torus axes [0] pairs [0 -> 0] : tensor<2x8xf32>
  %4 = ovl.all_gather %x on @torus axes [] dim 1 : tensor<2x8xf32> -> tensor<2x8xf32>
  return %0, %1, %2, %3, %4 : tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>
}

/// negative_: the same collectives along the size-4 axis stay.
// CHECK-LABEL: func.func @negative_multi_device_collectives
// CHECK: ovl.all_gather
// CHECK: ovl.reduce_scatter
// CHECK: ovl.all_reduce
// CHECK: ovl.collective_permute
func.func @negative_multi_device_collectives(%x: tensor<2x8xf32>)
    -> (tensor<8x8xf32>, tensor<2x2xf32>, tensor<2x8xf32>, tensor<2x8xf32>) {
  %0 = ovl.all_gather %x on @torus axes [1] dim 0 : tensor<2x8xf32> -> tensor<8x8xf32>
  %1 = ovl.reduce_scatter %x on @torus axes [1] dim 1 : tensor<2x8xf32> -> tensor<2x2xf32>
  %2 = ovl.all_reduce %x on @torus axes [1] : tensor<2x8xf32>
  %3 = ovl.collective_permute %x on @torus axes [1] pairs [0 -> 1, 1 -> 2, 2 -> 3, 3 -> 0] : tensor<2x8xf32>
  return %0, %1, %2, %3 : tensor<8x8xf32>, tensor<2x2xf32>, tensor<2x8xf32>, tensor<2x8xf32>
}

// -----

shard.grid @ring(shape = 4)

/// A permute whose pairs keep every shard in place is the identity.
// CHECK-LABEL: func.func @identity_permute
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<2x8xf32>
// CHECK-NOT: ovl.collective_permute
// CHECK: return %[[X]]
func.func @identity_permute(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %0 = ovl.collective_permute %x on @ring axes [0] pairs [0 -> 0, 1 -> 1, 2 -> 2, 3 -> 3] : tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

/// The asynchronous pair folds the same way: the done yields the kept input.
// CHECK-LABEL: func.func @identity_permute_start_done
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<2x8xf32>
// CHECK-NOT: ovl.collective_permute
// CHECK: return %[[X]]
func.func @identity_permute_start_done(%x: tensor<2x8xf32>, %b: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %p, %t = ovl.collective_permute_start %x into %b on @ring axes [0] pairs [0 -> 0, 1 -> 1, 2 -> 2, 3 -> 3] : tensor<2x8xf32>
  %0 = ovl.collective_permute_done %t keep(%x) into %p : tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

/// negative_: a ring shift moves data, so the pair stays.
// CHECK-LABEL: func.func @negative_ring_start_done
// CHECK: ovl.collective_permute_start
// CHECK: ovl.collective_permute_done
func.func @negative_ring_start_done(%x: tensor<2x8xf32>, %b: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %p, %t = ovl.collective_permute_start %x into %b on @ring axes [0] pairs [0 -> 3, 1 -> 0, 2 -> 1, 3 -> 2] : tensor<2x8xf32>
  %0 = ovl.collective_permute_done %t keep(%x) into %p : tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

/// negative_: a collective is not dead code even when its result is unused:
/// every device must take part.
// CHECK-LABEL: func.func @negative_unused_collective
// CHECK: ovl.all_gather
func.func @negative_unused_collective(%x: tensor<2x8xf32>) {
  %0 = ovl.all_gather %x on @ring axes [0] dim 0 : tensor<2x8xf32> -> tensor<8x8xf32>
  return
}

// -----

shard.grid @torus(shape = 1x4)

/// The partition id in a one-device group is 0.
// CHECK-LABEL: func.func @partition_id
// CHECK-DAG: %[[ZERO:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[ID:.+]] = ovl.partition_id on @torus axes [1] : index
// CHECK: return %[[ZERO]], %[[ZERO]], %[[ID]]
func.func @partition_id() -> (index, index, index) {
  %0 = ovl.partition_id on @torus axes [0] : index
  %1 = ovl.partition_id on @torus axes [] : index
  %2 = ovl.partition_id on @torus axes [1] : index
  return %0, %1, %2 : index, index, index
}
