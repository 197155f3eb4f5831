// One blocking all_reduce on the largest 1-D grid allowed.
shard.grid @g(shape = 1048576)
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = ovl.all_reduce %x on @g axes [0] : tensor<4xf32>
  return %r : tensor<4xf32>
}
