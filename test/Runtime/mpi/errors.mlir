// REQUIRES: mpi
// RUN: split-file --leading-lines %S/../errors.mlir %t/threads
// RUN: not %mpirun -np 4 overlap-run --transport mpi %t/threads/mismatch.mlir --verify-collectives=false 2>&1 | FileCheck %S/../errors.mlir --check-prefix=MISMATCH
// RUN: not %mpirun -np 4 overlap-run --transport mpi %t/threads/missing.mlir --verify-collectives=false 2>&1 | FileCheck %S/../errors.mlir --check-prefix=MISSING
// RUN: not %mpirun -np 2 overlap-run --transport mpi %t/threads/stuck.mlir --timeout 1 2>&1 | FileCheck %S/../errors.mlir --check-prefix=STUCK
// RUN: split-file --leading-lines %s %t
// RUN: not %mpirun -np 4 overlap-run --transport mpi %t/other_op.mlir --verify-collectives=false 2>&1 | FileCheck %s --check-prefix=OTHER-OP
// RUN: not %mpirun -np 4 overlap-run --transport mpi %t/other_group.mlir --verify-collectives=false 2>&1 | FileCheck %s --check-prefix=OTHER-GROUP
// RUN: not %mpirun -np 4 overlap-run --transport mpi %t/extra.mlir --verify-collectives=false 2>&1 | FileCheck %s --check-prefix=EXTRA
// RUN: not %mpirun -np 4 overlap-run --transport mpi %t/pairs.mlir --verify-collectives=false 2>&1 | FileCheck %s --check-prefix=PAIRS
// RUN: not %mpirun -np 4 overlap-run --transport mpi %t/extra_permute.mlir --verify-collectives=false 2>&1 | FileCheck %s --check-prefix=EXTRA-PERMUTE
// RUN: not %mpirun -np 2 overlap-run --transport mpi %t/stuck_permute.mlir --verify-collectives=false --timeout 1 2>&1 | FileCheck %s --check-prefix=STUCK-PERMUTE
// RUN: sh -c '%mpirun -np 3 overlap-run --transport mpi %t/extra.mlir --verify-collectives=false 2>&1; echo "exit status $?"' | FileCheck %s --check-prefix=RANKS
// RUN: env OVERLAP_MPI_PLUGIN=%t/none.so not overlap-run --transport mpi %t/extra.mlir 2>&1 | FileCheck %s --check-prefix=PLUGIN

// Devices that disagree under MPI end the whole job with an error naming the
// device, the op and its location, and a non-zero exit: never a hang. The
// threads transport's cases (a different reduction, a device that skips a
// collective, a device that never arrives), then calls on a group that
// already has a communicator, permutes, and a wrong number of ranks. Only
// STUCK and STUCK-PERMUTE end by a timeout (a short one: the peer never
// comes); in the other cases a device learns at once that a peer disagrees
// or ended its program, and the default timeout (30 s) keeps the devices
// that wait for it from ending the job first, however far the ranks drift
// apart on a loaded machine.

//--- other_op.mlir
/// Device 0 gathers, the others reduce, at their first call on the group.
// OTHER-OP: ovlrt: error: device {{[0-3]}}: ovl.{{all_gather|all_reduce}} at {{.*}}other_op.mlir:{{(36|40)}}:10: does not match device {{[0-3]}} (group index {{[0-3]}}), which called ovl.{{all_gather|all_reduce}} at {{.*}}other_op.mlir:{{(36|40)}}:10 as call #0 on the group of axes [0] of grid 4: the operations differ
shard.grid @ring(shape = 4)
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %id = ovl.partition_id on @ring axes [0] : index
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %id, %c0 : index
  %y = scf.if %first -> tensor<2xf32> {
    %a = ovl.all_gather %x on @ring axes [0] dim 0 : tensor<2xf32> -> tensor<8xf32>
    %b = tensor.extract_slice %a[0] [2] [1] : tensor<8xf32> to tensor<2xf32>
    scf.yield %b : tensor<2xf32>
  } else {
    %b = ovl.all_reduce %x on @ring axes [0] : tensor<2xf32>
    scf.yield %b : tensor<2xf32>
  }
  return %y : tensor<2xf32>
}

//--- other_group.mlir
/// On a 2x2 grid, device 0 gathers along axis 0 (with device 2), the others
/// along axis 1: devices 2 and 3 finish, and device 0 learns that device 2
/// will never join it.
// OTHER-GROUP: ovlrt: error: device 0: ovl.all_gather at {{.*}}other_group.mlir:[[#@LINE+7]]:10: device 2 (group index 1) ended its program without reaching call #0 on the group of axes [0] of grid 2x2
shard.grid @torus(shape = 2x2)
func.func @main(%x: tensor<1xf32>) -> tensor<2xf32> {
  %id = ovl.partition_id on @torus axes [0, 1] : index
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %id, %c0 : index
  %y = scf.if %first -> tensor<2xf32> {
    %a = ovl.all_gather %x on @torus axes [0] dim 0 : tensor<1xf32> -> tensor<2xf32>
    scf.yield %a : tensor<2xf32>
  } else {
    %b = ovl.all_gather %x on @torus axes [1] dim 0 : tensor<1xf32> -> tensor<2xf32>
    scf.yield %b : tensor<2xf32>
  }
  return %y : tensor<2xf32>
}

//--- extra.mlir
/// Every device reduces once; device 1 reduces a second time, on the
/// group's communicator, and learns that the others ended their program.
// EXTRA: ovlrt: error: device 1: ovl.all_reduce at {{.*}}extra.mlir:[[#@LINE+8]]:10: device {{[023]}} (group index {{[023]}}) ended its program without reaching call #1 on the group of axes [0] of grid 4
shard.grid @ring(shape = 4)
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = ovl.all_reduce %x on @ring axes [0] : tensor<2xf32>
  %id = ovl.partition_id on @ring axes [0] : index
  %c1 = arith.constant 1 : index
  %second = arith.cmpi eq, %id, %c1 : index
  %z = scf.if %second -> tensor<2xf32> {
    %a = ovl.all_reduce %y on @ring axes [0] : tensor<2xf32>
    scf.yield %a : tensor<2xf32>
  } else {
    scf.yield %y : tensor<2xf32>
  }
  return %z : tensor<2xf32>
}

//--- pairs.mlir
/// Two permutes on a ring; in the second, device 0 shifts the other way.
// PAIRS: ovlrt: error: device {{[0-3]}}: ovl.collective_permute at {{.*}}pairs.mlir:{{(95|98)}}:10: does not match device {{[0-3]}} (group index {{[0-3]}}), which called ovl.collective_permute at {{.*}}pairs.mlir:{{(95|98)}}:10 as call #1 on the group of axes [0] of grid 4: pairs differ
shard.grid @ring(shape = 4)
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = ovl.collective_permute %x on @ring axes [0] pairs [0 -> 1, 1 -> 2, 2 -> 3, 3 -> 0] : tensor<2xf32>
  %id = ovl.partition_id on @ring axes [0] : index
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %id, %c0 : index
  %z = scf.if %first -> tensor<2xf32> {
    %a = ovl.collective_permute %y on @ring axes [0] pairs [0 -> 3, 1 -> 0, 2 -> 1, 3 -> 2] : tensor<2xf32>
    scf.yield %a : tensor<2xf32>
  } else {
    %b = ovl.collective_permute %y on @ring axes [0] pairs [0 -> 1, 1 -> 2, 2 -> 3, 3 -> 0] : tensor<2xf32>
    scf.yield %b : tensor<2xf32>
  }
  return %z : tensor<2xf32>
}

//--- extra_permute.mlir
/// Device 0 starts a second asynchronous permute that nobody else does. Its
/// done waits for both peers, the one it sends to (1) and the one it
/// receives from (3); under MPI either may be found ended first.
// EXTRA-PERMUTE: ovlrt: error: device 0: ovl.collective_permute_done at {{.*}}extra_permute.mlir:[[#@LINE+10]]:10: device [[PEER:[13]]] (group index [[PEER]]) ended its program without reaching call #1 on the group of axes [0] of grid 4
shard.grid @ring(shape = 4)
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = ovl.collective_permute %x on @ring axes [0] pairs [0 -> 1, 1 -> 2, 2 -> 3, 3 -> 0] : tensor<2xf32>
  %id = ovl.partition_id on @ring axes [0] : index
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %id, %c0 : index
  %z = scf.if %first -> tensor<2xf32> {
    %buf = tensor.empty() : tensor<2xf32>
    %p, %t = ovl.collective_permute_start %y into %buf on @ring axes [0] pairs [0 -> 1, 1 -> 2, 2 -> 3, 3 -> 0] : tensor<2xf32>
    %n = ovl.collective_permute_done %t keep(%y) into %p : tensor<2xf32>
    %s = arith.addf %n, %y : tensor<2xf32>
    scf.yield %s : tensor<2xf32>
  } else {
    %s = arith.addf %y, %y : tensor<2xf32>
    scf.yield %s : tensor<2xf32>
  }
  return %z : tensor<2xf32>
}

//--- stuck_permute.mlir
/// Device 1 never leaves its loop before the second permute; device 0
/// gives up after the timeout.
// STUCK-PERMUTE: ovlrt: error: device 0: ovl.collective_permute at {{.*}}stuck_permute.mlir:[[#@LINE+21]]:8: timed out after 1 s waiting for device 1 (group index 1) to reach call #1 on the group of axes [0] of grid 2
shard.grid @ring(shape = 2)
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = ovl.collective_permute %x on @ring axes [0] pairs [0 -> 1, 1 -> 0] : tensor<2xf32>
  %id = ovl.partition_id on @ring axes [0] : index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
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
  %w = arith.addf %y, %s : tensor<2xf32>
  %z = ovl.collective_permute %w on @ring axes [0] pairs [0 -> 1, 1 -> 0] : tensor<2xf32>
  return %z : tensor<2xf32>
}

// One rank per device, or a clear error and status 2 on every rank.
// RANKS: overlap-run: error: the program runs on 4 devices but the MPI world has 3 ranks: start one rank per device (mpirun -np 4)
// RANKS-NOT: overlap-run: error
// RANKS: exit status 2

// PLUGIN: overlap-run: error: cannot load the MPI transport plugin: {{.*}}none.so
