// A permute of an empty tensor moves no bytes: the scheduler prices its
// launch alone (the shares of 0 bytes over its links were 0 / 0, and the
// scheduler's transfer model never reached the transfer's end). timeout:
// a regression is a failure, not a hung suite (60 s: each command takes
// 0.3 s on a loaded machine).
//
// RUN: timeout 60 overlap-opt %s --ovl-schedule | FileCheck %s
// RUN: timeout 60 overlap-opt %s --pass-pipeline="builtin.module(func.func(ovl-schedule{algorithm=top-down}))" | FileCheck %s
// RUN: timeout 60 overlap-sim %s | FileCheck %s --check-prefix=SIM

// CHECK-LABEL: func.func @empty
// CHECK: ovl.collective_permute_start
// CHECK: ovl.einsum
// CHECK: ovl.collective_permute_done
// SIM: step time
shard.grid @ring(shape = 4)
func.func @empty(%x: tensor<0x8xf32>, %v: tensor<4x4xf32>) -> (tensor<0x8xf32>, tensor<4x4xf32>) {
  %buf = bufferization.alloc_tensor() : tensor<0x8xf32>
  %p, %t = ovl.collective_permute_start %x into %buf on @ring axes [0] pairs [0 -> 1, 1 -> 2, 2 -> 3, 3 -> 0] : tensor<0x8xf32>
  %e = ovl.einsum "ab,bc->ac" %v, %v : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  %d = ovl.collective_permute_done %t keep(%x) into %p : tensor<0x8xf32>
  return %d, %e : tensor<0x8xf32>, tensor<4x4xf32>
}
