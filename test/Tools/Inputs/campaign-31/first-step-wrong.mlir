// x + 1 on the first step only: --repeat compares every step.
shard.grid @g(shape = 1)
memref.global "private" @steps : memref<4xf32> = dense<0.0>
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %m = memref.get_global @steps : memref<4xf32>
  %old = bufferization.to_tensor %m restrict : memref<4xf32> to tensor<4xf32>
  %one = arith.constant dense<1.0> : tensor<4xf32>
  %zero = arith.constant dense<0.0> : tensor<4xf32>
  // x + 1 on the first step, x after it.
  %left = arith.subf %one, %old : tensor<4xf32>
  %bump = arith.maximumf %left, %zero : tensor<4xf32>
  %y = arith.addf %x, %bump : tensor<4xf32>
  %new = arith.addf %old, %one : tensor<4xf32>
  %nm = bufferization.to_buffer %new : tensor<4xf32> to memref<4xf32>
  memref.copy %nm, %m : memref<4xf32> to memref<4xf32>
  return %y : tensor<4xf32>
}
