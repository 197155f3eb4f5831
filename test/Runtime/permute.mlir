// RUN: split-file %s %t
// RUN: overlap-run %t/blocking.mlir --print-outputs | FileCheck %s --check-prefix=BLOCKING
// RUN: overlap-run %t/ring_loop.mlir --print-outputs | FileCheck %s --check-prefix=LOOP
// RUN: overlap-run %t/ring_loop.mlir --print-outputs --link-bandwidth 1 --link-latency 50 | FileCheck %s --check-prefix=LOOP

// Permutes on the CPU runtime: the blocking op on a ring and a 2-D grid, and
// asynchronous start/done pairs in a double-buffered ring loop, with and
// without link emulation.

//--- blocking.mlir
/// The left ring shift {0->3, 1->0, 2->1, 3->2}: device t receives the shard
/// of device t+1. On a 2x2 grid along axis 0, rows swap.
// BLOCKING: device 0 output 0 (2xf32): [10, 11]
// BLOCKING: device 0 output 1 (1xf32): [2]
// BLOCKING: device 1 output 0 (2xf32): [20, 21]
// BLOCKING: device 2 output 1 (1xf32): [0]
// BLOCKING: device 3 output 0 (2xf32): [0, 1]
// BLOCKING: device 3 output 1 (1xf32): [1]
shard.grid @ring(shape = 4)
shard.grid @torus(shape = 2x2)
func.func @main() -> (tensor<2xf32>, tensor<1xf32>) {
  %id = ovl.partition_id on @ring axes [0] : index
  %x = tensor.generate {
  ^bb0(%i: index):
    %c10 = arith.constant 10 : index
    %base = arith.muli %id, %c10 : index
    %b = arith.addi %i, %base : index
    %v = arith.index_cast %b : index to i64
    %f = arith.sitofp %v : i64 to f32
    tensor.yield %f : f32
  } : tensor<2xf32>
  %y = ovl.collective_permute %x on @ring axes [0] pairs [0 -> 3, 1 -> 0, 2 -> 1, 3 -> 2] : tensor<2xf32>
  %linear = ovl.partition_id on @torus axes [0, 1] : index
  %v = arith.index_cast %linear : index to i64
  %f = arith.sitofp %v : i64 to f32
  %z0 = tensor.splat %f : tensor<1xf32>
  %z = ovl.collective_permute %z0 on @torus axes [0] pairs [0 -> 1, 1 -> 0] : tensor<1xf32>
  return %y, %z : tensor<2xf32>, tensor<1xf32>
}

//--- ring_loop.mlir
/// Every device sums all shards by passing them around the ring with
/// asynchronous permutes, two steps per iteration (double buffering): the
/// result is the sum over devices of [d, 10 d], i.e. [6, 60] on 4 devices.
// LOOP-COUNT-4: output 0 (2xf32): [6, 60]
shard.grid @ring(shape = 4)
func.func @main() -> tensor<2xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %id = ovl.partition_id on @ring axes [0] : index
  %v = arith.index_cast %id : index to i64
  %f = arith.sitofp %v : i64 to f32
  %ten = arith.constant 10.0 : f32
  %g = arith.mulf %f, %ten : f32
  %x = tensor.from_elements %f, %g : tensor<2xf32>
  %zero = arith.constant dense<0.0> : tensor<2xf32>
  %buf = tensor.empty() : tensor<2xf32>
  %r:3 = scf.for %i = %c0 to %c2 step %c1 iter_args(%a = %x, %b = %buf, %acc = %zero)
      -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
    %p1, %t1 = ovl.collective_permute_start %a into %b on @ring axes [0] pairs [0 -> 3, 1 -> 0, 2 -> 1, 3 -> 2] : tensor<2xf32>
    %s1 = arith.addf %acc, %a : tensor<2xf32>
    %n1 = ovl.collective_permute_done %t1 keep(%a) into %p1 : tensor<2xf32>
    %p2, %t2 = ovl.collective_permute_start %n1 into %a on @ring axes [0] pairs [0 -> 3, 1 -> 0, 2 -> 1, 3 -> 2] : tensor<2xf32>
    %s2 = arith.addf %s1, %n1 : tensor<2xf32>
    %n2 = ovl.collective_permute_done %t2 keep(%n1) into %p2 : tensor<2xf32>
    scf.yield %n2, %n1, %s2 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
  }
  return %r#2 : tensor<2xf32>
}
