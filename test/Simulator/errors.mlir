// Programs the simulator cannot play end with a located error and exit 1;
// bad options with a message and exit 2.
//
// RUN: split-file %s %t
// RUN: not overlap-sim %t/dynamic-loop.mlir 2>&1 | FileCheck %s --check-prefix=LOOP
// RUN: not overlap-sim %t/branch.mlir 2>&1 | FileCheck %s --check-prefix=BRANCH
// RUN: not overlap-sim %t/two-grids.mlir 2>&1 | FileCheck %s --check-prefix=GRIDS
// RUN: not overlap-sim %t/two-funcs.mlir 2>&1 | FileCheck %s --check-prefix=ENTRY
// RUN: not overlap-sim %t/two-funcs.mlir --entry nope 2>&1 | FileCheck %s --check-prefix=NOPE
// RUN: not overlap-sim %t/dynamic-shape.mlir 2>&1 | FileCheck %s --check-prefix=SHAPE
// RUN: not overlap-sim %t/call.mlir 2>&1 | FileCheck %s --check-prefix=CALL
// RUN: not overlap-sim %t/branch.mlir --hardware no-such-chip 2>&1 | FileCheck %s --check-prefix=HW
// RUN: not overlap-sim %t/dynamic-loop.mlir --topology 1x1x2 2>&1 | FileCheck %s --check-prefix=SMALL
// RUN: not overlap-sim %t/two-funcs.mlir --entry f --trace /nonexistent/dir/t.json 2>&1 | FileCheck %s --check-prefix=TRACE
// RUN: not overlap-sim %t/missing.mlir 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: overlap-sim %t/branch.mlir --hardware no-such-chip; test $? -eq 2

// LOOP: dynamic-loop.mlir:5:8: error: the simulator plays loops with constant bounds and a positive constant step only
// BRANCH: branch.mlir:4:8: error: the simulator cannot play a branch on a value known only at run time
// GRIDS: two-grids.mlir:5:8: error: all communication of a simulated function must run on grids of one shape
// GRIDS: two-grids.mlir:4:8: note: the first collective is here
// ENTRY: error: several public functions with a body ({{.*}}); name the entry function with --entry
// NOPE: error: no function @nope with a body
// SHAPE: dynamic-shape.mlir:3:8: error: the simulator needs static shapes
// CALL: call.mlir:5:8: error: the simulator plays one function; inline calls first (--inline)
// HW: error: cannot build the machine model: unknown hardware 'no-such-chip'
// SMALL: error: cannot build the machine model: grid [4] has 4 devices but topology 1x1x2
// TRACE: overlap-sim: cannot write '/nonexistent/dir/t.json'
// MISSING: overlap-sim: {{.*}}missing.mlir

//--- dynamic-loop.mlir
shard.grid @ring(shape = 4)
func.func @f(%n: index, %x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %x) -> tensor<4x4xf32> {
    %p = ovl.collective_permute %a on @ring axes [0] pairs [0 -> 1, 1 -> 2, 2 -> 3, 3 -> 0] : tensor<4x4xf32>
    scf.yield %p : tensor<4x4xf32>
  }
  return %r : tensor<4x4xf32>
}

//--- branch.mlir
shard.grid @ring(shape = 4)
func.func @f(%c: i1, %x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %z = arith.addf %x, %x : tensor<4x4xf32>
  %r = scf.if %c -> tensor<4x4xf32> {
    scf.yield %x : tensor<4x4xf32>
  } else {
    scf.yield %z : tensor<4x4xf32>
  }
  return %r : tensor<4x4xf32>
}

//--- two-grids.mlir
shard.grid @a(shape = 8)
shard.grid @b(shape = 2x4)
func.func @f(%x: tensor<4x4xf32>) -> (tensor<32x4xf32>, tensor<8x4xf32>) {
  %0 = ovl.all_gather %x on @a axes [0] dim 0 : tensor<4x4xf32> -> tensor<32x4xf32>
  %1 = ovl.all_gather %x on @b axes [0] dim 0 : tensor<4x4xf32> -> tensor<8x4xf32>
  return %0, %1 : tensor<32x4xf32>, tensor<8x4xf32>
}

//--- two-funcs.mlir
func.func @f() {
  return
}
func.func @g() {
  return
}

//--- dynamic-shape.mlir
shard.grid @ring(shape = 4)
func.func @f(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %y = arith.addf %x, %x : tensor<?x4xf32>
  %z = arith.mulf %y, %y : tensor<?x4xf32>
  return %z : tensor<?x4xf32>
}

//--- call.mlir
func.func private @callee(%x: tensor<4x4xf32>) -> tensor<4x4xf32>
func.func @f(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = arith.addf %x, %x : tensor<4x4xf32>
  %1 = arith.addf %0, %x : tensor<4x4xf32>
  %2 = func.call @callee(%1) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %2 : tensor<4x4xf32>
}
