// One blocking all_reduce on the 1-D grid of 2^16 devices.
shard.grid @g(shape = 65536)
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = ovl.all_reduce %x on @g axes [0] : tensor<4xf32>
  return %r : tensor<4xf32>
}
