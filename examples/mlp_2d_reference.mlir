// Reference for examples/mlp_2d.mlir: gathers as all_reduces of zero-padded
// shards, the reduce_scatter as an all_reduce and a slice, the einsums as
// linalg.matmul.

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
