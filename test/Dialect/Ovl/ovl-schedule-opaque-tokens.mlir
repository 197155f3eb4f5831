// A token a loop body passes on that no start of the body made (a buffer
// permute, or an scf.if that starts one) is opaque work to the scheduler:
// its replay asserted when it asked for the end of a transfer it had never
// opened. Found by the fuzzer (bench/fuzz).
//
// RUN: overlap-opt %s --split-input-file --ovl-schedule | FileCheck %s
// RUN: overlap-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(ovl-schedule{algorithm=top-down}))" | FileCheck %s

// CHECK-LABEL: func.func @buffer_token_in_loop
// CHECK: scf.for
// CHECK: ovl.buffer.permute_done
// CHECK: ovl.buffer.permute_start
// CHECK: scf.yield
shard.grid @ring(shape = 4)
func.func @buffer_token_in_loop(%a: memref<4xf32>, %b: memref<4xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %t0 = ovl.buffer.permute_start %a into %b on @ring axes [0] pairs [0 -> 3, 1 -> 0, 2 -> 1, 3 -> 2] : memref<4xf32>, memref<4xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%t = %t0) -> (!ovl.token) {
    ovl.buffer.permute_done %t keep(%a) into %b : memref<4xf32>, memref<4xf32>
    %t1 = ovl.buffer.permute_start %a into %b on @ring axes [0] pairs [0 -> 3, 1 -> 0, 2 -> 1, 3 -> 2] : memref<4xf32>, memref<4xf32>
    scf.yield %t1 : !ovl.token
  }
  ovl.buffer.permute_done %r keep(%a) into %b : memref<4xf32>, memref<4xf32>
  return
}

// -----

// CHECK-LABEL: func.func @token_from_if_in_loop
// CHECK: scf.for
// CHECK: scf.if
// CHECK: scf.yield
shard.grid @ring(shape = 4)
func.func @token_from_if_in_loop(%a: tensor<4xf32>, %n: index, %c: i1) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %buf = bufferization.alloc_tensor() : tensor<4xf32>
  %p0, %t0 = ovl.collective_permute_start %a into %buf on @ring axes [0] pairs [0 -> 3, 1 -> 0, 2 -> 1, 3 -> 2] : tensor<4xf32>
  %r:3 = scf.for %i = %c0 to %n step %c1 iter_args(%p = %p0, %t = %t0, %s = %a) -> (tensor<4xf32>, !ovl.token, tensor<4xf32>) {
    %d = ovl.collective_permute_done %t keep(%s) into %p : tensor<4xf32>
    %q:3 = scf.if %c -> (tensor<4xf32>, !ovl.token, tensor<4xf32>) {
      %buf2 = bufferization.alloc_tensor() : tensor<4xf32>
      %p1, %t1 = ovl.collective_permute_start %d into %buf2 on @ring axes [0] pairs [0 -> 3, 1 -> 0, 2 -> 1, 3 -> 2] : tensor<4xf32>
      scf.yield %p1, %t1, %d : tensor<4xf32>, !ovl.token, tensor<4xf32>
    } else {
      %buf3 = bufferization.alloc_tensor() : tensor<4xf32>
      %p2, %t2 = ovl.collective_permute_start %a into %buf3 on @ring axes [0] pairs [0 -> 3, 1 -> 0, 2 -> 1, 3 -> 2] : tensor<4xf32>
      scf.yield %p2, %t2, %a : tensor<4xf32>, !ovl.token, tensor<4xf32>
    }
    scf.yield %q#0, %q#1, %q#2 : tensor<4xf32>, !ovl.token, tensor<4xf32>
  }
  %e = ovl.collective_permute_done %r#1 keep(%r#2) into %r#0 : tensor<4xf32>
  return %e : tensor<4xf32>
}
