// RUN: overlap-opt %s | overlap-opt | FileCheck %s
// RUN: overlap-opt %s --mlir-print-op-generic | overlap-opt | FileCheck %s
// RUN: overlap-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// Round trip of every ovl op in the custom form and through the generic form.

shard.grid @ring(shape = 4)
shard.grid @torus(shape = 2x4)
shard.grid @dyn(shape = ?x4)

/// Einsum: two inputs, batch dims, an accumulator, mixed precision, integers,
/// a single input and a scalar output.
// CHECK-LABEL: func.func @einsums
func.func @einsums(%x: tensor<2x8xf32>, %w: tensor<8x16xf32>,
                   %a: tensor<2x4x8xbf16>, %b: tensor<2x8x16xbf16>,
                   %acc: tensor<2x4x16xf32>, %i: tensor<4x8xi8>,
                   %j: tensor<8x4xi8>, %h: tensor<4x4xf16>) {
  // CHECK: ovl.einsum "bf,fh->bh" %{{.*}}, %{{.*}} : tensor<2x8xf32>, tensor<8x16xf32> -> tensor<2x16xf32>
  %0 = ovl.einsum "bf,fh->bh" %x, %w : tensor<2x8xf32>, tensor<8x16xf32> -> tensor<2x16xf32>
  // CHECK: ovl.einsum "bsf,bfh->bsh" %{{.*}}, %{{.*}} acc %{{.*}} : tensor<2x4x8xbf16>, tensor<2x8x16xbf16> -> tensor<2x4x16xf32>
  %1 = ovl.einsum "bsf,bfh->bsh" %a, %b acc %acc : tensor<2x4x8xbf16>, tensor<2x8x16xbf16> -> tensor<2x4x16xf32>
  // CHECK: ovl.einsum "mk,kn->mn" {{.*}} : tensor<4x8xi8>, tensor<8x4xi8> -> tensor<4x4xi32>
  %2 = ovl.einsum "mk,kn->mn" %i, %j : tensor<4x8xi8>, tensor<8x4xi8> -> tensor<4x4xi32>
  // CHECK: ovl.einsum "ij->ji" %{{.*}} : tensor<4x4xf16> -> tensor<4x4xf16>
  %3 = ovl.einsum "ij->ji" %h : tensor<4x4xf16> -> tensor<4x4xf16>
  // CHECK: ovl.einsum "ij,ij->" {{.*}} -> tensor<f16>
  %4 = ovl.einsum "ij,ij->" %h, %h : tensor<4x4xf16>, tensor<4x4xf16> -> tensor<f16>
  return
}
// GENERIC-LABEL: sym_name = "einsums"
// GENERIC: "ovl.einsum"(%{{.*}}, %{{.*}}) <{equation = "bf,fh->bh", operandSegmentSizes = array<i32: 2, 0>}>
// GENERIC: "ovl.einsum"(%{{.*}}, %{{.*}}, %{{.*}}) <{equation = "bsf,bfh->bsh", operandSegmentSizes = array<i32: 2, 1>}>

/// Gathers on a 1-D ring and on either axis or both axes of a 2-D torus.
// CHECK-LABEL: func.func @all_gathers
func.func @all_gathers(%w: tensor<8x4xf32>, %x: tensor<2x8xbf16>) {
  // CHECK: ovl.all_gather %{{.*}} on @ring axes [0] dim 1 : tensor<8x4xf32> -> tensor<8x16xf32>
  %0 = ovl.all_gather %w on @ring axes [0] dim 1 : tensor<8x4xf32> -> tensor<8x16xf32>
  // CHECK: ovl.all_gather %{{.*}} on @torus axes [1] dim 0 : tensor<2x8xbf16> -> tensor<8x8xbf16>
  %1 = ovl.all_gather %x on @torus axes [1] dim 0 : tensor<2x8xbf16> -> tensor<8x8xbf16>
  // CHECK: ovl.all_gather %{{.*}} on @torus axes [1, 0] dim 0 : tensor<2x8xbf16> -> tensor<16x8xbf16>
  %2 = ovl.all_gather %x on @torus axes [1, 0] dim 0 : tensor<2x8xbf16> -> tensor<16x8xbf16>
  // CHECK: ovl.all_gather %{{.*}} on @torus axes [] dim 0 : tensor<2x8xbf16> -> tensor<2x8xbf16>
  %3 = ovl.all_gather %x on @torus axes [] dim 0 : tensor<2x8xbf16> -> tensor<2x8xbf16>
  // A dynamic grid axis or a dynamic dim leaves the size unchecked.
  // CHECK: ovl.all_gather %{{.*}} on @dyn axes [0] dim 0 : tensor<2x8xbf16> -> tensor<?x8xbf16>
  %4 = ovl.all_gather %x on @dyn axes [0] dim 0 : tensor<2x8xbf16> -> tensor<?x8xbf16>
  return
}
// GENERIC-LABEL: sym_name = "all_gathers"
// GENERIC: "ovl.all_gather"(%{{.*}}) <{gather_dim = 1 : i64, grid = @ring, grid_axes = array<i16: 0>}>

/// Reduce-scatters with the default sum and the other reductions.
// CHECK-LABEL: func.func @reduce_scatters
func.func @reduce_scatters(%y: tensor<8x16xf32>, %i: tensor<8x16xi32>) {
  // CHECK: ovl.reduce_scatter %{{.*}} on @torus axes [0] dim 0 : tensor<8x16xf32> -> tensor<4x16xf32>
  %0 = ovl.reduce_scatter %y on @torus axes [0] dim 0 : tensor<8x16xf32> -> tensor<4x16xf32>
  // CHECK: ovl.reduce_scatter %{{.*}} on @torus axes [1] dim 1 reduce max : tensor<8x16xf32> -> tensor<8x4xf32>
  %1 = ovl.reduce_scatter %y on @torus axes [1] dim 1 reduce max : tensor<8x16xf32> -> tensor<8x4xf32>
  // CHECK: ovl.reduce_scatter %{{.*}} on @torus axes [0, 1] dim 1 reduce min : tensor<8x16xi32> -> tensor<8x2xi32>
  %2 = ovl.reduce_scatter %i on @torus axes [0, 1] dim 1 reduce min : tensor<8x16xi32> -> tensor<8x2xi32>
  // An explicit default prints without the keyword.
  // CHECK: ovl.reduce_scatter %{{.*}} on @ring axes [0] dim 0 : tensor<8x16xf32> -> tensor<2x16xf32>
  %3 = ovl.reduce_scatter %y on @ring axes [0] dim 0 reduce sum : tensor<8x16xf32> -> tensor<2x16xf32>
  return
}
// GENERIC-LABEL: sym_name = "reduce_scatters"
// GENERIC: "ovl.reduce_scatter"(%{{.*}}) <{grid = @torus, grid_axes = array<i16: 0>, reduction = #ovl<reduction sum>, scatter_dim = 0 : i64}>
// GENERIC: reduction = #ovl<reduction max>

// CHECK-LABEL: func.func @all_reduces
func.func @all_reduces(%y: tensor<8x16xf32>) {
  // CHECK: ovl.all_reduce %{{.*}} on @torus axes [0, 1] : tensor<8x16xf32>
  %0 = ovl.all_reduce %y on @torus axes [0, 1] : tensor<8x16xf32>
  // CHECK: ovl.all_reduce %{{.*}} on @ring axes [0] reduce prod : tensor<8x16xf32>
  %1 = ovl.all_reduce %y on @ring axes [0] reduce prod : tensor<8x16xf32>
  return
}

/// The blocking permute and the asynchronous pair, also with the token
/// carried across a loop's back edge.
// CHECK-LABEL: func.func @permutes
func.func @permutes(%x: tensor<2x8xf32>, %buf: tensor<2x8xf32>) -> tensor<2x8xf32> {
  // CHECK: ovl.collective_permute %{{.*}} on @ring axes [0] pairs [0 -> 3, 1 -> 0, 2 -> 1, 3 -> 2] : tensor<2x8xf32>
  %0 = ovl.collective_permute %x on @ring axes [0] pairs [0 -> 3, 1 -> 0, 2 -> 1, 3 -> 2] : tensor<2x8xf32>
  // CHECK: %[[PENDING:.+]], %[[TOKEN:.+]] = ovl.collective_permute_start %[[X:.+]] into %{{.*}} on @torus axes [0] pairs [0 -> 1, 1 -> 0] : tensor<2x8xf32>
  %pending, %token = ovl.collective_permute_start %x into %buf on @torus axes [0] pairs [0 -> 1, 1 -> 0] : tensor<2x8xf32>
  // CHECK: ovl.collective_permute_done %[[TOKEN]] keep(%[[X]]) into %[[PENDING]] : tensor<2x8xf32>
  %1 = ovl.collective_permute_done %token keep(%x) into %pending : tensor<2x8xf32>
  return %1 : tensor<2x8xf32>
}
// GENERIC-LABEL: sym_name = "permutes"
// GENERIC: "ovl.collective_permute"(%{{.*}}) <{grid = @ring, grid_axes = array<i16: 0>, pairs = array<i64: 0, 3, 1, 0, 2, 1, 3, 2>}>
// GENERIC: "ovl.collective_permute_start"(%{{.*}}, %{{.*}}) <{{.*}}> : (tensor<2x8xf32>, tensor<2x8xf32>) -> (tensor<2x8xf32>, !ovl.token)
// GENERIC: "ovl.collective_permute_done"(%{{.*}}, %{{.*}}, %{{.*}}) : (!ovl.token, tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>

// CHECK-LABEL: func.func @token_across_loop
func.func @token_across_loop(%x: tensor<2x8xf32>, %buf: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %p0, %t0 = ovl.collective_permute_start %x into %buf on @ring axes [0] pairs [0 -> 3, 1 -> 0, 2 -> 1, 3 -> 2] : tensor<2x8xf32>
  // CHECK: scf.for {{.*}} iter_args({{.*}}) -> (tensor<2x8xf32>, tensor<2x8xf32>, !ovl.token)
  %r:3 = scf.for %i = %c0 to %c3 step %c1 iter_args(%cur = %x, %pend = %p0, %tok = %t0)
      -> (tensor<2x8xf32>, tensor<2x8xf32>, !ovl.token) {
    %next = ovl.collective_permute_done %tok keep(%cur) into %pend : tensor<2x8xf32>
    %p, %t = ovl.collective_permute_start %next into %cur on @ring axes [0] pairs [0 -> 3, 1 -> 0, 2 -> 1, 3 -> 2] : tensor<2x8xf32>
    scf.yield %next, %p, %t : tensor<2x8xf32>, tensor<2x8xf32>, !ovl.token
  }
  // CHECK: ovl.collective_permute_done %{{.*}}#2 keep(%{{.*}}#0) into %{{.*}}#1
  %last = ovl.collective_permute_done %r#2 keep(%r#0) into %r#1 : tensor<2x8xf32>
  return %last : tensor<2x8xf32>
}

// CHECK-LABEL: func.func @partition_ids
func.func @partition_ids() -> (index, index, index) {
  // CHECK: ovl.partition_id on @ring axes [0] : index
  %0 = ovl.partition_id on @ring axes [0] : index
  // CHECK: ovl.partition_id on @torus axes [1, 0] : index
  %1 = ovl.partition_id on @torus axes [1, 0] : index
  // CHECK: ovl.partition_id on @dyn axes [0] : index
  %2 = ovl.partition_id on @dyn axes [0] : index
  return %0, %1, %2 : index, index, index
}

/// The buffer forms that bufferization produces.
// CHECK-LABEL: func.func @buffer_forms
func.func @buffer_forms(%x: memref<2x8xf32>, %g: memref<8x8xf32>, %s: memref<2x2xf32>, %y: memref<2x8xf32>) {
  // CHECK: ovl.buffer.all_gather %{{.*}} into %{{.*}} on @ring axes [0] dim 0 : memref<2x8xf32>, memref<8x8xf32>
  ovl.buffer.all_gather %x into %g on @ring axes [0] dim 0 : memref<2x8xf32>, memref<8x8xf32>
  // CHECK: ovl.buffer.reduce_scatter %{{.*}} into %{{.*}} on @ring axes [0] dim 1 reduce min : memref<2x8xf32>, memref<2x2xf32>
  ovl.buffer.reduce_scatter %x into %s on @ring axes [0] dim 1 reduce min : memref<2x8xf32>, memref<2x2xf32>
  // CHECK: ovl.buffer.all_reduce %{{.*}} into %{{.*}} on @torus axes [1] : memref<2x8xf32>, memref<2x8xf32>
  ovl.buffer.all_reduce %x into %y on @torus axes [1] : memref<2x8xf32>, memref<2x8xf32>
  // CHECK: ovl.buffer.permute %{{.*}} into %{{.*}} on @ring axes [0] pairs [0 -> 1, 1 -> 2, 2 -> 3, 3 -> 0] : memref<2x8xf32>, memref<2x8xf32>
  ovl.buffer.permute %x into %y on @ring axes [0] pairs [0 -> 1, 1 -> 2, 2 -> 3, 3 -> 0] : memref<2x8xf32>, memref<2x8xf32>
  // CHECK: %[[T:.+]] = ovl.buffer.permute_start %{{.*}} into %{{.*}} on @ring axes [0] pairs [0 -> 1, 1 -> 2, 2 -> 3, 3 -> 0] : memref<2x8xf32>, memref<2x8xf32>
  %t = ovl.buffer.permute_start %x into %y on @ring axes [0] pairs [0 -> 1, 1 -> 2, 2 -> 3, 3 -> 0] : memref<2x8xf32>, memref<2x8xf32>
  // CHECK: ovl.buffer.permute_done %[[T]] keep(%{{.*}}) into %{{.*}} : memref<2x8xf32>, memref<2x8xf32>
  ovl.buffer.permute_done %t keep(%x) into %y : memref<2x8xf32>, memref<2x8xf32>
  return
}

/// An optimization barrier: its operands' types, one or more.
// CHECK-LABEL: func.func @barriers
func.func @barriers(%x: tensor<2x8xbf16>, %g: tensor<2x8xf32>) -> (tensor<2x8xbf16>, tensor<2x8xf32>, tensor<2x8xf32>) {
  // CHECK: %[[B:.+]]:2 = ovl.optimization_barrier %{{.*}}, %{{.*}} : tensor<2x8xbf16>, tensor<2x8xf32>
  %x_r, %g_r = ovl.optimization_barrier %x, %g : tensor<2x8xbf16>, tensor<2x8xf32>
  // CHECK: ovl.optimization_barrier %[[B]]#1 : tensor<2x8xf32>
  %h = ovl.optimization_barrier %g_r : tensor<2x8xf32>
  return %x_r, %g_r, %h : tensor<2x8xbf16>, tensor<2x8xf32>, tensor<2x8xf32>
}
// GENERIC-LABEL: sym_name = "barriers"
// GENERIC: "ovl.optimization_barrier"(%{{.*}}, %{{.*}}) : (tensor<2x8xbf16>, tensor<2x8xf32>) -> (tensor<2x8xbf16>, tensor<2x8xf32>)
