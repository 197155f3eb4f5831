// A tensor whose elements are neither integers nor floats.
shard.grid @g(shape = 4)
func.func @f(%x: tensor<2x8xcomplex<f32>>) -> tensor<8x8xcomplex<f32>> {
  %g = ovl.all_gather %x on @g axes [0] dim 0 : tensor<2x8xcomplex<f32>> -> tensor<8x8xcomplex<f32>>
  return %g : tensor<8x8xcomplex<f32>>
}
