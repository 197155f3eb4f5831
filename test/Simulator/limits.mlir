// The simulator checks the work before it allocates: machines of more than
// 2^20 devices, loops of more iterations than the 2^21 steps a program may
// unroll into (an empty body used to spin for ever, and so did two nested
// loops of 2^20 iterations each), and simulations of
// more than 2^30 device-steps are refused with the numbers, and so are
// more than 2^30 rounds on the devices played once the symmetry is known (a
// collective plays the rounds of its ring). They used to abort with "out
// of memory" (a 100000000x4 grid, --topology 1024x1024x1024), take 19 GB
// and a minute (512x512x512) or, for one all_reduce on 2^20 devices, play
// for hours (refused in 10 s, most of it planning the ring of 2^20; here
// 17 all_reduces on 2^16 devices, which plan in a fraction of that).
//
// RUN: split-file %s %t
// RUN: sh -c 'overlap-sim %t/huge-grid.mlir 2>&1; echo "exit status $?"' | FileCheck %s --check-prefix=GRID
// RUN: sh -c 'overlap-sim %t/overflow-grid.mlir 2>&1; echo "exit status $?"' | FileCheck %s --check-prefix=OVERFLOW
// RUN: sh -c 'overlap-sim %t/huge-grid.mlir --topology 1024x1024x1024 2>&1; echo "exit status $?"' | FileCheck %s --check-prefix=TOPO
// RUN: sh -c 'overlap-sim %t/long-loop.mlir 2>&1; echo "exit status $?"' | FileCheck %s --check-prefix=LOOP
// RUN: sh -c 'overlap-sim %t/nested-loops.mlir 2>&1; echo "exit status $?"' | FileCheck %s --check-prefix=NEST
// RUN: sh -c 'overlap-sim %t/device-steps.mlir 2>&1; echo "exit status $?"' | FileCheck %s --check-prefix=WORK
// RUN: sh -c 'overlap-sim %t/device-rounds.mlir 2>&1; echo "exit status $?"' | FileCheck %s --check-prefix=ROUNDS
// RUN: not overlap-opt %t/huge-grid.mlir --ovl-overlap-pipeline="remarks=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=GATE

// GRID: error: cannot build the machine model: grid [100000000, 4] has 400000000 devices; at most 1048576 are supported
// GRID: exit status 2
// OVERFLOW: error: cannot build the machine model: grid [4294967296, 4294967296] has more than 2^63 devices; at most 1048576 are supported
// OVERFLOW: exit status 2
// TOPO: error: cannot build the machine model: topology '1024x1024x1024' has more than 1048576 devices
// TOPO: exit status 2
// LOOP: long-loop.mlir:6:8: error: the loop runs 2147483648 iterations; the simulator plays at most 2097152 steps
// LOOP: exit status 1
// NEST: nested-loops.mlir:7:10: error: the loop runs 1048576 iterations inside loops that run 1048576, more in all than the 2097152 iterations the simulator plays
// NEST: exit status 1
// WORK: error: cannot simulate: the simulation would play 2049 steps on each of 1048576 devices, more than 1073741824 device-steps
// WORK: exit status 1
// ROUNDS: error: cannot simulate: the simulation would play 1114112 rounds (each step once, each collective as the rounds of its ring) on each of 1024 devices played (65536 devices in 1024 orbits of the translations by x+1), more than 1073741824 device-rounds
// ROUNDS: exit status 1
/// The gate cannot place the grid either, and says so where it is used.
// GATE: error: cannot map grid @g onto the machine: grid [100000000, 4] has 400000000 devices; at most 1048576 are supported

//--- huge-grid.mlir
shard.grid @g(shape = 100000000x4)
func.func @f(%x: tensor<4x8xf32>, %w: tensor<8x4xf32>) -> tensor<16x4xf32> {
  %g = ovl.all_gather %x on @g axes [1] dim 0 : tensor<4x8xf32> -> tensor<16x8xf32>
  %y = ovl.einsum "bf,fh->bh" %g, %w : tensor<16x8xf32>, tensor<8x4xf32> -> tensor<16x4xf32>
  return %y : tensor<16x4xf32>
}

//--- overflow-grid.mlir
shard.grid @g(shape = 4294967296x4294967296)
func.func @f(%x: tensor<4x8xf32>) -> tensor<17179869184x8xf32> {
  %g = ovl.all_gather %x on @g axes [1] dim 0 : tensor<4x8xf32> -> tensor<17179869184x8xf32>
  return %g : tensor<17179869184x8xf32>
}

//--- long-loop.mlir
shard.grid @g(shape = 4)
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 2147483648 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %x) -> tensor<4xf32> {
    scf.yield %a : tensor<4xf32>
  }
  %s = ovl.all_reduce %r on @g axes [0] : tensor<4xf32>
  return %s : tensor<4xf32>
}

//--- nested-loops.mlir
shard.grid @g(shape = 4)
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 1048576 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %x) -> tensor<4xf32> {
    %q = scf.for %j = %c0 to %n step %c1 iter_args(%b = %a) -> tensor<4xf32> {
      scf.yield %b : tensor<4xf32>
    }
    scf.yield %q : tensor<4xf32>
  }
  %s = ovl.all_reduce %r on @g axes [0] : tensor<4xf32>
  return %s : tensor<4xf32>
}

//--- device-steps.mlir
shard.grid @g(shape = 1048576)
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 2048 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %x) -> tensor<4xf32> {
    %b = arith.addf %a, %a : tensor<4xf32>
    scf.yield %b : tensor<4xf32>
  }
  %s = ovl.all_reduce %r on @g axes [0] : tensor<4xf32>
  return %s : tensor<4xf32>
}

//--- device-rounds.mlir
shard.grid @g(shape = 65536)
func.func @f(%x: tensor<65536xf32>) -> tensor<65536xf32> {
  %s0 = ovl.all_reduce %x on @g axes [0] : tensor<65536xf32>
  %s1 = ovl.all_reduce %s0 on @g axes [0] : tensor<65536xf32>
  %s2 = ovl.all_reduce %s1 on @g axes [0] : tensor<65536xf32>
  %s3 = ovl.all_reduce %s2 on @g axes [0] : tensor<65536xf32>
  %s4 = ovl.all_reduce %s3 on @g axes [0] : tensor<65536xf32>
  %s5 = ovl.all_reduce %s4 on @g axes [0] : tensor<65536xf32>
  %s6 = ovl.all_reduce %s5 on @g axes [0] : tensor<65536xf32>
  %s7 = ovl.all_reduce %s6 on @g axes [0] : tensor<65536xf32>
  %s8 = ovl.all_reduce %s7 on @g axes [0] : tensor<65536xf32>
  %s9 = ovl.all_reduce %s8 on @g axes [0] : tensor<65536xf32>
  %s10 = ovl.all_reduce %s9 on @g axes [0] : tensor<65536xf32>
  %s11 = ovl.all_reduce %s10 on @g axes [0] : tensor<65536xf32>
  %s12 = ovl.all_reduce %s11 on @g axes [0] : tensor<65536xf32>
  %s13 = ovl.all_reduce %s12 on @g axes [0] : tensor<65536xf32>
  %s14 = ovl.all_reduce %s13 on @g axes [0] : tensor<65536xf32>
  %s15 = ovl.all_reduce %s14 on @g axes [0] : tensor<65536xf32>
  %s16 = ovl.all_reduce %s15 on @g axes [0] : tensor<65536xf32>
  return %s16 : tensor<65536xf32>
}
