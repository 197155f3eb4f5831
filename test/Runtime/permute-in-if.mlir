// An asynchronous permute pair in one branch of an scf.if bufferizes and
// runs equal to the blocking permute. One-Shot Bufferize used to refuse it ("cannot
// avoid RaW conflict"): the done was declared to write its pending tensor
// in place, and the scf.if's result put that tensor in one alias set with
// the other branch's value. The done writes nothing (the transfer's write
// is the start's); it only ties its result to the pending buffer.
//
// RUN: split-file %s %t
// RUN: overlap-opt %t/async.mlir --ovl-verify-collectives 2>&1 | FileCheck %s --check-prefix=VERIFIED
// RUN: overlap-run %t/async.mlir --reference %t/blocking.mlir | FileCheck %s
// RUN: overlap-run %t/async.mlir --reference %t/blocking.mlir --seed 7 | FileCheck %s
// RUN: not overlap-run %t/async.mlir --reference %t/other.mlir 2>&1 | FileCheck %s --check-prefix=DIFF

// VERIFIED-NOT: error
// VERIFIED: func.func private @maybe_shift
// VERIFIED: ovl.collective_permute_start
// CHECK: equal
// DIFF: NOT EQUAL

//--- async.mlir
/// The permute runs in one branch; the condition is the same on every
/// device (a call's uniform argument), so ovl-verify-collectives accepts
/// it.
shard.grid @ring(shape = 4)
func.func private @maybe_shift(%x: tensor<4x8xf32>, %shift: i1) -> tensor<4x8xf32> {
  %r = scf.if %shift -> tensor<4x8xf32> {
    %buf = bufferization.alloc_tensor() : tensor<4x8xf32>
    %p, %t = ovl.collective_permute_start %x into %buf on @ring axes [0] pairs [0 -> 3, 1 -> 0, 2 -> 1, 3 -> 2] : tensor<4x8xf32>
    %d = ovl.collective_permute_done %t keep(%x) into %p : tensor<4x8xf32>
    scf.yield %d : tensor<4x8xf32>
  } else {
    scf.yield %x : tensor<4x8xf32>
  }
  return %r : tensor<4x8xf32>
}
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %true = arith.constant true
  %r = func.call @maybe_shift(%x, %true) : (tensor<4x8xf32>, i1) -> tensor<4x8xf32>
  %out = arith.addf %r, %x : tensor<4x8xf32>
  return %out : tensor<4x8xf32>
}

//--- blocking.mlir
shard.grid @ring(shape = 4)
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %r = ovl.collective_permute %x on @ring axes [0] pairs [0 -> 3, 1 -> 0, 2 -> 1, 3 -> 2] : tensor<4x8xf32>
  %out = arith.addf %r, %x : tensor<4x8xf32>
  return %out : tensor<4x8xf32>
}

//--- other.mlir
/// The wrong direction round the ring: the comparison must see it.
shard.grid @ring(shape = 4)
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %r = ovl.collective_permute %x on @ring axes [0] pairs [0 -> 1, 1 -> 2, 2 -> 3, 3 -> 0] : tensor<4x8xf32>
  %out = arith.addf %r, %x : tensor<4x8xf32>
  return %out : tensor<4x8xf32>
}
