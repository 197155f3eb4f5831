// Reference for examples/mlp_1d.mlir: every gathered weight is built with an
// all_reduce of zero-padded shards, a different collective of the runtime
// with the same mathematics, and the einsums are linalg.matmul. overlap-run
// compares the two (scripts/demo.sh, test/Runtime/mlp.mlir).

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

