// RUN: split-file --leading-lines %s %t
// RUN: not overlap-run %t/mismatch.mlir --verify-collectives=false 2>&1 | FileCheck %s --check-prefix=MISMATCH
// RUN: not overlap-run %t/missing.mlir --verify-collectives=false 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not overlap-run %t/mismatch.mlir 2>&1 | FileCheck %s --check-prefix=STATIC
// RUN: not overlap-run %t/missing.mlir 2>&1 | FileCheck %s --check-prefix=STATIC
// RUN: not overlap-run %t/stuck.mlir --timeout 1 2>&1 | FileCheck %s --check-prefix=STUCK

// Devices that disagree end the run with an error naming the device, the op
// and its location, and a non-zero exit: never a hang. These programs
// disagree visibly (a branch on ovl.partition_id), so overlap-run refuses
// them before they run (STATIC) unless --verify-collectives=false lets the
// runtime meet the mismatch.
// STATIC: error: the branches of this 'scf.if' communicate differently
// STATIC: note: it depends on the device's position (ovl.partition_id) here
// STATIC: overlap-run: error: {{.*}}the devices would not communicate alike (ovl-verify-collectives)

//--- mismatch.mlir
/// Device 0 sums, the others take the max.
// Which side reports first depends on timing.
// MISMATCH: ovlrt: error: device {{[0-3]}}: ovl.all_reduce at {{.*}}mismatch.mlir:{{(27|30)}}:10: does not match device {{[0-3]}} (group index {{[0-3]}}), which called ovl.all_reduce at {{.*}}mismatch.mlir:{{(27|30)}}:10 as call #0 on the group of axes [0] of grid 4: reductions differ ({{(sum|max)}} here, {{(sum|max)}} there)
shard.grid @ring(shape = 4)
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %id = ovl.partition_id on @ring axes [0] : index
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %id, %c0 : index
  %y = scf.if %first -> tensor<2xf32> {
    %a = ovl.all_reduce %x on @ring axes [0] : tensor<2xf32>
    scf.yield %a : tensor<2xf32>
  } else {
    %b = ovl.all_reduce %x on @ring axes [0] reduce max : tensor<2xf32>
    scf.yield %b : tensor<2xf32>
  }
  return %y : tensor<2xf32>
}

//--- missing.mlir
/// Only device 0 reaches the collective; the others finish their program.
// MISSING: ovlrt: error: device 0: ovl.all_reduce at {{.*}}missing.mlir:[[#@LINE+7]]:10: device {{[1-3]}} (group index {{[1-3]}}) ended its program without reaching call #0 on the group of axes [0] of grid 4
shard.grid @ring(shape = 4)
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %id = ovl.partition_id on @ring axes [0] : index
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %id, %c0 : index
  %y = scf.if %first -> tensor<2xf32> {
    %a = ovl.all_reduce %x on @ring axes [0] : tensor<2xf32>
    scf.yield %a : tensor<2xf32>
  } else {
    scf.yield %x : tensor<2xf32>
  }
  return %y : tensor<2xf32>
}

//--- stuck.mlir
/// Device 1 never leaves its loop; device 0 gives up after the timeout.
// STUCK: ovlrt: error: device 0: ovl.all_reduce at {{.*}}stuck.mlir:[[#@LINE+21]]:8: timed out after 1 s waiting for device 1 (group index 1) to reach call #0 on the group of axes [0] of grid 2
shard.grid @ring(shape = 2)
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %id = ovl.partition_id on @ring axes [0] : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // Device 0 leaves the loop at once; device 1 never does.
  %n = scf.while (%i = %id) : (index) -> index {
    %go = arith.cmpi ne, %i, %c0 : index
    scf.condition(%go) %i : index
  } do {
  ^bb0(%i: index):
    %next = arith.addi %i, %c1 : index
    %wrapped = arith.andi %next, %c1 : index
    %one = arith.ori %wrapped, %c1 : index
    scf.yield %one : index
  }
  %v = arith.index_cast %n : index to i64
  %f = arith.sitofp %v : i64 to f32
  %s = tensor.splat %f : tensor<2xf32>
  %y = arith.addf %x, %s : tensor<2xf32>
  %a = ovl.all_reduce %y on @ring axes [0] : tensor<2xf32>
  return %a : tensor<2xf32>
}

//--- slow.mlir
// RUN: not overlap-run %t/slow.mlir --link-bandwidth 1e-12 --timeout 5 2>&1 | FileCheck %s --check-prefix=SLOW
/// An emulated link so slow that the transfer would outlast the timeout
/// many times over ends the run at once (it used to sleep for 30 years).
// SLOW: ovlrt: error: device {{[0-1]}}: ovl.collective_permute_done at {{.*}}slow.mlir:[[#@LINE+6]]:8: the emulated link takes {{.*}} s for this transfer, more than the timeout of 5 s
shard.grid @pair(shape = 2)
func.func @main(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %buf = bufferization.alloc_tensor() : tensor<1024xf32>
  %p, %t = ovl.collective_permute_start %x into %buf on @pair axes [0]
      pairs [0 -> 1, 1 -> 0] : tensor<1024xf32>
  %y = ovl.collective_permute_done %t keep(%x) into %p : tensor<1024xf32>
  return %y : tensor<1024xf32>
}
