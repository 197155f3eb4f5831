func.func @f(%x: tensor<2x3xf32>, %y: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %r = linalg.transpose ins(%x : tensor<2x3xf32>) outs(%y : tensor<3x2xf32>) permutation = [1, 0
  return %r : tensor<3x2xf32>
}
