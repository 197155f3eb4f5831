// RUN: overlap-opt %s --ovl-to-llvm | FileCheck %s --implicit-check-not="ovl." --implicit-check-not="linalg." --implicit-check-not="memref." --implicit-check-not="scf." --implicit-check-not="func.func" --implicit-check-not="shard."
// RUN: overlap-opt %s --ovl-to-llvm | mlir-translate --mlir-to-llvmir | FileCheck %s --check-prefix=LLVMIR

// The whole lowering: an ovl program on tensors with every collective and a
// loop carrying an asynchronous permute comes out as the LLVM dialect, with
// the collectives calling the runtime's C interface.

shard.grid @torus(shape = 2x2)

// CHECK-DAG: llvm.func @_mlir_ciface_ovlrt_all_gather_f32(!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr)
// CHECK-DAG: llvm.func @_mlir_ciface_ovlrt_reduce_scatter_f32(
// CHECK-DAG: llvm.func @_mlir_ciface_ovlrt_all_reduce_f32(
// CHECK-DAG: llvm.func @_mlir_ciface_ovlrt_permute_f32(
// CHECK-DAG: llvm.func @_mlir_ciface_ovlrt_permute_start_f32({{.*}}) -> i64
// CHECK-DAG: llvm.func @_mlir_ciface_ovlrt_permute_done(i64, !llvm.ptr)
// CHECK-DAG: llvm.func @_mlir_ciface_ovlrt_partition_id(!llvm.ptr) -> i64
// CHECK-LABEL: llvm.func @program
// LLVMIR-LABEL: define {{.*}} @program(
// LLVMIR: call void @ovlrt_all_gather_f32(
func.func @program(%x: tensor<2x4xf32>, %w: tensor<4x4xf32>, %n: index) -> (tensor<2x4xf32>, index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %g = ovl.all_gather %w on @torus axes [0] dim 0 : tensor<4x4xf32> -> tensor<8x4xf32>
  %y = ovl.einsum "bf,hf->bh" %x, %g : tensor<2x4xf32>, tensor<8x4xf32> -> tensor<2x8xf32>
  %zero = arith.constant dense<0.0> : tensor<2x8xf32>
  %relu = arith.maximumf %y, %zero : tensor<2x8xf32>
  %s = ovl.reduce_scatter %relu on @torus axes [1] dim 1 : tensor<2x8xf32> -> tensor<2x4xf32>
  %a = ovl.all_reduce %s on @torus axes [0] : tensor<2x4xf32>
  %p = ovl.collective_permute %a on @torus axes [1] pairs [0 -> 1, 1 -> 0] : tensor<2x4xf32>
  %buf = tensor.empty() : tensor<2x4xf32>
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%cur = %p, %other = %buf) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
    %pending, %token = ovl.collective_permute_start %cur into %other on @torus axes [1] pairs [0 -> 1, 1 -> 0] : tensor<2x4xf32>
    %next = ovl.collective_permute_done %token keep(%cur) into %pending : tensor<2x4xf32>
    scf.yield %next, %cur : tensor<2x4xf32>, tensor<2x4xf32>
  }
  %id = ovl.partition_id on @torus axes [0, 1] : index
  return %r#0, %id : tensor<2x4xf32>, index
}
