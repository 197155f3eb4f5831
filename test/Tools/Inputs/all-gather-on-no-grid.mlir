// Parses, does not verify: the grid it names does not exist.
func.func @f(%x: tensor<2x8xf32>) -> tensor<8x8xf32> {
  %0 = ovl.all_gather %x on @nope axes [0] dim 0 : tensor<2x8xf32> -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
