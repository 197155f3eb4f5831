// --repeat N runs N steps on fresh copies of the same inputs: each step's
// outputs must be the first step's, bit for bit, and the last step's are
// compared with the reference, so every step is checked. This program is
// wrong on its first step only (a global counts its steps): the last
// step's outputs, all that was compared, were equal to the reference and
// the run passed.
//
// RUN: split-file %s %t
// RUN: not overlap-run %t/first-step-wrong.mlir --reference %t/identity.mlir --repeat 3 | FileCheck %s
// RUN: not overlap-run %t/first-step-wrong.mlir --repeat 3 --json | FileCheck %s --check-prefix=JSON
// RUN: overlap-run %t/identity.mlir --reference %t/identity.mlir --repeat 3 | FileCheck %s --check-prefix=SAME
// RUN: not overlap-run %t/identity.mlir --repeat 1000001 2>&1 | FileCheck %s --check-prefix=LIMIT

// CHECK: step time: {{.*}} over 3 step(s)
// CHECK-NEXT: NOT THE SAME ON EVERY STEP: step 2's outputs on device 0 differ from step 1's, with the same inputs
// CHECK-NEXT: reference {{.*}}identity.mlir: equal
// JSON: "changed_step": {
// JSON-NEXT: "device": 0,
// JSON-NEXT: "step": 2
// SAME-NOT: NOT THE SAME
// SAME: reference {{.*}}identity.mlir: equal
// LIMIT: overlap-run: error: --repeat must be an integer between 1 and 1000000, got 1000001

//--- first-step-wrong.mlir
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

//--- identity.mlir
shard.grid @g(shape = 1)
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
