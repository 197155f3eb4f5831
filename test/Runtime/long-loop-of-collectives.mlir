// RUN: overlap-run %s --print-outputs | FileCheck %s

// A training loop's worth of collectives: 100,000 all_reduces in an scf.for
// on two devices. The runtime call of each took its buffers' descriptors
// on the device thread's stack and left them there (about 100 bytes an
// iteration, a SIGSEGV without a message at about 85,000); they now live
// as long as the call. Each iteration adds the all_reduce of a 1 from each
// device: 2 x 100,000.

// CHECK: device 0 output 0 (1xi32): [200000]
// CHECK-NEXT: device 1 output 0 (1xi32): [200000]
shard.grid @pair(shape = 2)
func.func @main() -> tensor<1xi32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 100000 : index
  %zero = arith.constant dense<0> : tensor<1xi32>
  %one = arith.constant dense<1> : tensor<1xi32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%count = %zero) -> tensor<1xi32> {
    %s = ovl.all_reduce %one on @pair axes [0] : tensor<1xi32>
    %next = arith.addi %count, %s : tensor<1xi32>
    scf.yield %next : tensor<1xi32>
  }
  return %r : tensor<1xi32>
}
