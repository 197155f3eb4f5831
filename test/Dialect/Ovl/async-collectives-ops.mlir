// RUN: overlap-opt %s | overlap-opt | FileCheck %s
// RUN: overlap-opt %s --mlir-print-op-generic | overlap-opt | FileCheck %s
// RUN: overlap-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC
// RUN: overlap-opt %s --canonicalize | FileCheck %s --check-prefix=CANON

// The asynchronous all_gather, reduce_scatter and all_reduce and their done
// round-trip in the custom and the generic form; on a group of one device
// canonicalization folds a pair to its input.

shard.grid @torus(shape = 2x4)
shard.grid @single(shape = 1x4)

// CHECK-LABEL: func.func @gather
func.func @gather(%x: tensor<8x4xf32>, %buf: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // CHECK: %[[P:.+]], %[[T:.+]] = ovl.all_gather_start %[[X:.+]] into %{{.+}} on @torus axes [1] dim 1 : tensor<8x4xf32> -> tensor<8x16xf32>
  %p, %t = ovl.all_gather_start %x into %buf on @torus axes [1] dim 1 : tensor<8x4xf32> -> tensor<8x16xf32>
  // CHECK: ovl.collective_done %[[T]] keep(%[[X]] : tensor<8x4xf32>) into %[[P]] : tensor<8x16xf32>
  %r = ovl.collective_done %t keep(%x : tensor<8x4xf32>) into %p : tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}
// GENERIC: "ovl.all_gather_start"(%{{.*}}, %{{.*}}) <{gather_dim = 1 : i64, grid = @torus, grid_axes = array<i16: 1>}> : (tensor<8x4xf32>, tensor<8x16xf32>) -> (tensor<8x16xf32>, !ovl.token)
// GENERIC: "ovl.collective_done"(%{{.*}}, %{{.*}}, %{{.*}}) : (!ovl.token, tensor<8x4xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>

// CHECK-LABEL: func.func @scatter
func.func @scatter(%x: tensor<8x16xf32>, %buf: tensor<4x16xf32>) -> tensor<4x16xf32> {
  // CHECK: ovl.reduce_scatter_start %{{.+}} into %{{.+}} on @torus axes [0] dim 0 reduce max : tensor<8x16xf32> -> tensor<4x16xf32>
  %p, %t = ovl.reduce_scatter_start %x into %buf on @torus axes [0] dim 0 reduce max : tensor<8x16xf32> -> tensor<4x16xf32>
  %r = ovl.collective_done %t keep(%x : tensor<8x16xf32>) into %p : tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}
// GENERIC: "ovl.reduce_scatter_start"(%{{.*}}, %{{.*}}) <{grid = @torus, grid_axes = array<i16: 0>, reduction = #ovl<reduction max>, scatter_dim = 0 : i64}>

// CHECK-LABEL: func.func @reduce
func.func @reduce(%x: tensor<8x16xbf16>, %buf: tensor<8x16xbf16>) -> tensor<8x16xbf16> {
  // CHECK: ovl.all_reduce_start %{{.+}} into %{{.+}} on @torus axes [0, 1] : tensor<8x16xbf16> -> tensor<8x16xbf16>
  %p, %t = ovl.all_reduce_start %x into %buf on @torus axes [0, 1] : tensor<8x16xbf16> -> tensor<8x16xbf16>
  %r = ovl.collective_done %t keep(%x : tensor<8x16xbf16>) into %p : tensor<8x16xbf16>
  return %r : tensor<8x16xbf16>
}

// A token carried through a loop, as the scheduler leaves a prefetch.
// CHECK-LABEL: func.func @carried
func.func @carried(%x: tensor<4xf32>, %buf: tensor<8xf32>, %n: index) -> tensor<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %p, %t = ovl.all_gather_start %x into %buf on @torus axes [0] dim 0 : tensor<4xf32> -> tensor<8xf32>
  // CHECK: scf.for {{.*}} iter_args({{.*}}) -> (tensor<8xf32>, !ovl.token)
  %lp, %lt = scf.for %i = %c0 to %n step %c1 iter_args(%ap = %p, %at = %t) -> (tensor<8xf32>, !ovl.token) {
    scf.yield %ap, %at : tensor<8xf32>, !ovl.token
  }
  %r = ovl.collective_done %lt keep(%x : tensor<4xf32>) into %lp : tensor<8xf32>
  return %r : tensor<8xf32>
}

// CANON-LABEL: func.func @one_device
// CANON-NOT: ovl.
// CANON: return %arg0
func.func @one_device(%x: tensor<4xf32>, %buf: tensor<4xf32>) -> tensor<4xf32> {
  %p, %t = ovl.all_gather_start %x into %buf on @single axes [0] dim 0 : tensor<4xf32> -> tensor<4xf32>
  %r = ovl.collective_done %t keep(%x : tensor<4xf32>) into %p : tensor<4xf32>
  return %r : tensor<4xf32>
}

// CANON-LABEL: func.func @kept
// CANON: ovl.all_reduce_start
// CANON: ovl.collective_done
func.func @kept(%x: tensor<4xf32>, %buf: tensor<4xf32>) -> tensor<4xf32> {
  %p, %t = ovl.all_reduce_start %x into %buf on @torus axes [1] : tensor<4xf32> -> tensor<4xf32>
  %r = ovl.collective_done %t keep(%x : tensor<4xf32>) into %p : tensor<4xf32>
  return %r : tensor<4xf32>
}
