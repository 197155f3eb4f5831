shard.grid @grid(shape = 0x4)
func.func @f(%x: tensor<8x16xf32>) -> tensor<1x16xf32> {
  %s = shard.all_slice %x on @grid grid_axes = [0, 1] slice_axis = 0 : tensor<8x16xf32> -> tensor<1x16xf32>
  return %s : tensor<1x16xf32>
}
