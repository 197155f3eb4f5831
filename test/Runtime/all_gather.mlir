// RUN: split-file %s %t
// RUN: overlap-run %t/ring2.mlir --print-outputs | FileCheck %s --check-prefix=RING2
// RUN: overlap-run %t/ring3.mlir --print-outputs | FileCheck %s --check-prefix=RING3
// RUN: overlap-run %t/ring8.mlir --print-outputs | FileCheck %s --check-prefix=RING8
// RUN: overlap-run %t/torus.mlir --print-outputs | FileCheck %s --check-prefix=TORUS

// all_gather on the CPU runtime against hand-computed results. Each device
// contributes values made of its grid coordinates, so every position of the
// result says where it came from.

//--- ring2.mlir
/// Gathering dim 1 of a 2x2 shard: device d holds [[10d, 10d+1], [10d+2, 10d+3]].
// RING2-COUNT-2: output 0 (2x4xf32): [0, 1, 10, 11, 2, 3, 12, 13]
shard.grid @ring(shape = 2)
func.func @main() -> tensor<2x4xf32> {
  %id = ovl.partition_id on @ring axes [0] : index
  %x = tensor.generate {
  ^bb0(%i: index, %j: index):
    %c2 = arith.constant 2 : index
    %c10 = arith.constant 10 : index
    %row = arith.muli %i, %c2 : index
    %base = arith.muli %id, %c10 : index
    %a = arith.addi %row, %j : index
    %b = arith.addi %a, %base : index
    %v = arith.index_cast %b : index to i64
    %f = arith.sitofp %v : i64 to f32
    tensor.yield %f : f32
  } : tensor<2x2xf32>
  %y = ovl.all_gather %x on @ring axes [0] dim 1 : tensor<2x2xf32> -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

//--- ring3.mlir
/// Three devices, dim 0, i32.
// RING3-COUNT-3: output 0 (6xi32): [0, 1, 100, 101, 200, 201]
shard.grid @ring(shape = 3)
func.func @main() -> tensor<6xi32> {
  %id = ovl.partition_id on @ring axes [0] : index
  %x = tensor.generate {
  ^bb0(%i: index):
    %c100 = arith.constant 100 : index
    %base = arith.muli %id, %c100 : index
    %b = arith.addi %i, %base : index
    %v = arith.index_cast %b : index to i32
    tensor.yield %v : i32
  } : tensor<2xi32>
  %y = ovl.all_gather %x on @ring axes [0] dim 0 : tensor<2xi32> -> tensor<6xi32>
  return %y : tensor<6xi32>
}

//--- ring8.mlir
/// Eight devices, one element each, bf16.
// RING8-COUNT-8: output 0 (8xbf16): [0, 1, 2, 3, 4, 5, 6, 7]
shard.grid @ring(shape = 8)
func.func @main() -> tensor<8xbf16> {
  %id = ovl.partition_id on @ring axes [0] : index
  %v = arith.index_cast %id : index to i64
  %f = arith.sitofp %v : i64 to bf16
  %x = tensor.splat %f : tensor<1xbf16>
  %y = ovl.all_gather %x on @ring axes [0] dim 0 : tensor<1xbf16> -> tensor<8xbf16>
  return %y : tensor<8xbf16>
}

//--- torus.mlir
/// A 2x4 grid: device (r, c) holds 10r + c. Gathers along axis 1 (rows of
/// 4), axis 0 (columns of 2), and both axes in both orders.
// TORUS: device 0 output 0 (4xf32): [0, 1, 2, 3]
// TORUS: device 0 output 1 (2xf32): [0, 10]
// TORUS: device 0 output 2 (8xf32): [0, 1, 2, 3, 10, 11, 12, 13]
// TORUS: device 0 output 3 (8xf32): [0, 10, 1, 11, 2, 12, 3, 13]
// TORUS: device 6 output 0 (4xf32): [10, 11, 12, 13]
// TORUS: device 6 output 1 (2xf32): [2, 12]
// TORUS: device 6 output 2 (8xf32): [0, 1, 2, 3, 10, 11, 12, 13]
// TORUS: device 6 output 3 (8xf32): [0, 10, 1, 11, 2, 12, 3, 13]
shard.grid @torus(shape = 2x4)
func.func @main() -> (tensor<4xf32>, tensor<2xf32>, tensor<8xf32>, tensor<8xf32>) {
  %r = ovl.partition_id on @torus axes [0] : index
  %c = ovl.partition_id on @torus axes [1] : index
  %c10 = arith.constant 10 : index
  %r10 = arith.muli %r, %c10 : index
  %rc = arith.addi %r10, %c : index
  %v = arith.index_cast %rc : index to i64
  %f = arith.sitofp %v : i64 to f32
  %x = tensor.splat %f : tensor<1xf32>
  %row = ovl.all_gather %x on @torus axes [1] dim 0 : tensor<1xf32> -> tensor<4xf32>
  %col = ovl.all_gather %x on @torus axes [0] dim 0 : tensor<1xf32> -> tensor<2xf32>
  %all = ovl.all_gather %x on @torus axes [0, 1] dim 0 : tensor<1xf32> -> tensor<8xf32>
  %lla = ovl.all_gather %x on @torus axes [1, 0] dim 0 : tensor<1xf32> -> tensor<8xf32>
  return %row, %col, %all, %lla : tensor<4xf32>, tensor<2xf32>, tensor<8xf32>, tensor<8xf32>
}
