// RUN: split-file %s %t
// RUN: overlap-run %overlap_src_root/examples/mlp_1d.mlir --reference %t/mlp_1d_ref.mlir --seed 1 | FileCheck %s --check-prefix=MLP1D
// RUN: overlap-run %overlap_src_root/examples/mlp_2d.mlir --reference %t/mlp_2d_ref.mlir --seed 2 | FileCheck %s --check-prefix=MLP2D

// The paper's figure 2 and figure 3 MLPs (examples/) on the CPU runtime,
// against references that build every gathered tensor with an all_reduce of
// zero-padded shards and every scattered one with an all_reduce and a slice:
// other collectives of the runtime, the same mathematics.

// MLP1D: examples/mlp_1d.mlir: @mlp on 4 devices (threads)
// MLP1D: reference {{.*}}mlp_1d_ref.mlir: equal
// MLP2D: examples/mlp_2d.mlir: @mlp on 8 devices (threads)
// MLP2D: reference {{.*}}mlp_2d_ref.mlir: equal

//--- mlp_1d_ref.mlir
shard.grid @ring(shape = 4)
func.func @mlp(%x: tensor<4x32xf32>, %w1: tensor<32x16xf32>, %w2: tensor<16x32xf32>) -> tensor<4x32xf32> {
  %id = ovl.partition_id on @ring axes [0] : index
  %c16 = arith.constant 16 : index
  %off = arith.muli %id, %c16 : index
  %z1 = arith.constant dense<0.0> : tensor<32x64xf32>
  %p1 = tensor.insert_slice %w1 into %z1[0, %off] [32, 16] [1, 1] : tensor<32x16xf32> into tensor<32x64xf32>
  %w1_full = ovl.all_reduce %p1 on @ring axes [0] : tensor<32x64xf32>
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<4x64xf32>
  %i1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x64xf32>) -> tensor<4x64xf32>
  %h = linalg.matmul ins(%x, %w1_full : tensor<4x32xf32>, tensor<32x64xf32>) outs(%i1 : tensor<4x64xf32>) -> tensor<4x64xf32>
  %zeros = arith.constant dense<0.0> : tensor<4x64xf32>
  %relu = arith.maximumf %h, %zeros : tensor<4x64xf32>
  %z2 = arith.constant dense<0.0> : tensor<64x32xf32>
  %p2 = tensor.insert_slice %w2 into %z2[%off, 0] [16, 32] [1, 1] : tensor<16x32xf32> into tensor<64x32xf32>
  %w2_full = ovl.all_reduce %p2 on @ring axes [0] : tensor<64x32xf32>
  %e2 = tensor.empty() : tensor<4x32xf32>
  %i2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x32xf32>) -> tensor<4x32xf32>
  %y = linalg.matmul ins(%relu, %w2_full : tensor<4x64xf32>, tensor<64x32xf32>) outs(%i2 : tensor<4x32xf32>) -> tensor<4x32xf32>
  return %y : tensor<4x32xf32>
}

//--- mlp_2d_ref.mlir
shard.grid @grid(shape = 2x4)
func.func @mlp(%x: tensor<4x16xf32>, %w1: tensor<8x32xf32>, %w2: tensor<32x8xf32>) -> tensor<4x16xf32> {
  %ix = ovl.partition_id on @grid axes [0] : index
  %iy = ovl.partition_id on @grid axes [1] : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %xoff = arith.muli %ix, %c16 : index
  %yoff = arith.muli %iy, %c8 : index
  %zx = arith.constant dense<0.0> : tensor<4x32xf32>
  %px = tensor.insert_slice %x into %zx[0, %xoff] [4, 16] [1, 1] : tensor<4x16xf32> into tensor<4x32xf32>
  %x_full = ovl.all_reduce %px on @grid axes [0] : tensor<4x32xf32>
  %zw = arith.constant dense<0.0> : tensor<32x32xf32>
  %p1 = tensor.insert_slice %w1 into %zw[%yoff, 0] [8, 32] [1, 1] : tensor<8x32xf32> into tensor<32x32xf32>
  %w1_full = ovl.all_reduce %p1 on @grid axes [1] : tensor<32x32xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x32xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<4x32xf32>) -> tensor<4x32xf32>
  %h = linalg.matmul ins(%x_full, %w1_full : tensor<4x32xf32>, tensor<32x32xf32>) outs(%i : tensor<4x32xf32>) -> tensor<4x32xf32>
  %zeros = arith.constant dense<0.0> : tensor<4x32xf32>
  %relu = arith.maximumf %h, %zeros : tensor<4x32xf32>
  %p2 = tensor.insert_slice %w2 into %zw[0, %yoff] [32, 8] [1, 1] : tensor<32x8xf32> into tensor<32x32xf32>
  %w2_full = ovl.all_reduce %p2 on @grid axes [1] : tensor<32x32xf32>
  %partial = linalg.matmul ins(%relu, %w2_full : tensor<4x32xf32>, tensor<32x32xf32>) outs(%i : tensor<4x32xf32>) -> tensor<4x32xf32>
  %sum = ovl.all_reduce %partial on @grid axes [0] : tensor<4x32xf32>
  %y = tensor.extract_slice %sum[0, %xoff] [4, 16] [1, 1] : tensor<4x32xf32> to tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}
