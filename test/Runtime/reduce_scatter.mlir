// RUN: split-file %s %t
// RUN: overlap-run %t/ring4.mlir --print-outputs | FileCheck %s --check-prefix=RING4
// RUN: overlap-run %t/torus.mlir --print-outputs | FileCheck %s --check-prefix=TORUS

// reduce_scatter on the CPU runtime against hand-computed results.

//--- ring4.mlir
/// Device d holds x[i] = i + 100 d (8 elements). Summed over 4 devices,
/// x[i] = 4 i + 600; device k keeps elements 2k and 2k+1. The max is
/// i + 300.
// RING4: device 0 output 0 (2xf32): [600, 604]
// RING4: device 0 output 1 (2xf32): [300, 301]
// RING4: device 1 output 0 (2xf32): [608, 612]
// RING4: device 1 output 1 (2xf32): [302, 303]
// RING4: device 3 output 0 (2xf32): [624, 628]
// RING4: device 3 output 1 (2xf32): [306, 307]
shard.grid @ring(shape = 4)
func.func @main() -> (tensor<2xf32>, tensor<2xf32>) {
  %id = ovl.partition_id on @ring axes [0] : index
  %x = tensor.generate {
  ^bb0(%i: index):
    %c100 = arith.constant 100 : index
    %base = arith.muli %id, %c100 : index
    %b = arith.addi %i, %base : index
    %v = arith.index_cast %b : index to i64
    %f = arith.sitofp %v : i64 to f32
    tensor.yield %f : f32
  } : tensor<8xf32>
  %sum = ovl.reduce_scatter %x on @ring axes [0] dim 0 : tensor<8xf32> -> tensor<2xf32>
  %max = ovl.reduce_scatter %x on @ring axes [0] dim 0 reduce max : tensor<8xf32> -> tensor<2xf32>
  return %sum, %max : tensor<2xf32>, tensor<2xf32>
}

//--- torus.mlir
/// A 2x4 grid; device (r, c) has linear index L = 4r + c and holds
/// x[i][j] = 10L + 2i + j (2x2, f32) and w[i][j] = 10L + 4i + j (2x4, i32).
/// Along axis 0 the sum of x is 20c + 40 + 4i + 2j and device (r, c) keeps
/// row r. Along axis 1 the sum of w is 160r + 60 + 16i + 4j and device
/// (r, c) keeps column c.
// TORUS: device 0 output 0 (1x2xf32): [40, 42]
// TORUS: device 0 output 1 (2x1xi32): [60, 76]
// TORUS: device 6 output 0 (1x2xf32): [84, 86]
// TORUS: device 6 output 1 (2x1xi32): [228, 244]
shard.grid @torus(shape = 2x4)
func.func @main() -> (tensor<1x2xf32>, tensor<2x1xi32>) {
  %r = ovl.partition_id on @torus axes [0] : index
  %c = ovl.partition_id on @torus axes [1] : index
  %linear = ovl.partition_id on @torus axes [0, 1] : index
  %x = tensor.generate {
  ^bb0(%i: index, %j: index):
    %c2 = arith.constant 2 : index
    %c10 = arith.constant 10 : index
    %v = arith.muli %linear, %c10 : index
    %row = arith.muli %i, %c2 : index
    %a = arith.addi %v, %row : index
    %b = arith.addi %a, %j : index
    %e = arith.index_cast %b : index to i64
    %f = arith.sitofp %e : i64 to f32
    tensor.yield %f : f32
  } : tensor<2x2xf32>
  %y = ovl.reduce_scatter %x on @torus axes [0] dim 0 : tensor<2x2xf32> -> tensor<1x2xf32>
  %w = tensor.generate {
  ^bb0(%i: index, %j: index):
    %c4 = arith.constant 4 : index
    %c10 = arith.constant 10 : index
    %v = arith.muli %linear, %c10 : index
    %row = arith.muli %i, %c4 : index
    %a = arith.addi %v, %row : index
    %b = arith.addi %a, %j : index
    %e = arith.index_cast %b : index to i32
    tensor.yield %e : i32
  } : tensor<2x4xi32>
  %z = ovl.reduce_scatter %w on @torus axes [1] dim 1 : tensor<2x4xi32> -> tensor<2x1xi32>
  return %y, %z : tensor<1x2xf32>, tensor<2x1xi32>
}
