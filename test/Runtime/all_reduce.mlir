// RUN: overlap-run %s --print-outputs | FileCheck %s

// all_reduce on three devices with every reduction, against hand-computed
// results. Device d holds x[i] = i + 10 d + 1.

// CHECK: device 0 output 0 (2xi32): [33, 36]
// CHECK-NEXT: device 0 output 1 (2xi32): [21, 22]
// CHECK-NEXT: device 0 output 2 (2xi32): [1, 2]
// CHECK-NEXT: device 0 output 3 (2xi32): [231, 528]
// CHECK-NEXT: device 1 output 0 (2xi32): [33, 36]
// CHECK: device 2 output 0 (2xi32): [33, 36]
// CHECK-NEXT: device 2 output 1 (2xi32): [21, 22]
// CHECK-NEXT: device 2 output 2 (2xi32): [1, 2]
// CHECK-NEXT: device 2 output 3 (2xi32): [231, 528]
shard.grid @ring(shape = 3)
func.func @main() -> (tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>) {
  %id = ovl.partition_id on @ring axes [0] : index
  %x = tensor.generate {
  ^bb0(%i: index):
    %c1 = arith.constant 1 : index
    %c10 = arith.constant 10 : index
    %base = arith.muli %id, %c10 : index
    %a = arith.addi %i, %base : index
    %b = arith.addi %a, %c1 : index
    %v = arith.index_cast %b : index to i32
    tensor.yield %v : i32
  } : tensor<2xi32>
  %sum = ovl.all_reduce %x on @ring axes [0] : tensor<2xi32>
  %max = ovl.all_reduce %x on @ring axes [0] reduce max : tensor<2xi32>
  %min = ovl.all_reduce %x on @ring axes [0] reduce min : tensor<2xi32>
  %prod = ovl.all_reduce %x on @ring axes [0] reduce prod : tensor<2xi32>
  return %sum, %max, %min, %prod : tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>
}
