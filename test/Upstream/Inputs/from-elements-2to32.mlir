func.func @f(%a: f32) -> tensor<4294967296xf32> {
  %r = tensor.from_elements %a : tensor<4294967296xf32>
  return %r : tensor<4294967296xf32>
}
