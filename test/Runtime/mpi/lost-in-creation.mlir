// REQUIRES: mpi, gdb
// RUN: not %mpirun -np 4 %S/Inputs/stop-in-creation.sh 1 overlap-run --transport mpi %s --timeout 50 --lost-after 0.5 2>&1 | FileCheck %s

// A rank lost while the members of a group create its communicator: that
// MPI call (MPI_Comm_create_group, at the group's first call, once every
// member has arrived) blocks and has no timed form. gdb stops rank 1 for
// good as it enters it; the other ranks, inside the same call or about to
// be, end naming the lost device and the op within --lost-after (a thread
// watches the heartbeat during the call), not never.

// CHECK-DAG: ovlrt: error: device 0: ovl.all_gather at {{.*}}lost-in-creation.mlir:[[#@LINE+6]]:8: device 1 is lost: {{no heartbeat from it for [0-9.]+ s|device [23] heard no heartbeat from it}} (its process ended, or the network to it failed)
// CHECK-DAG: ovlrt: error: device 2: ovl.all_gather at {{.*}}: device 1 is lost:
// CHECK-DAG: ovlrt: error: device 3: ovl.all_gather at {{.*}}: device 1 is lost:

shard.grid @ring(shape = 4)
func.func @main(%x: tensor<2xf32>) -> tensor<8xf32> {
  %y = ovl.all_gather %x on @ring axes [0] dim 0 : tensor<2xf32> -> tensor<8xf32>
  return %y : tensor<8xf32>
}
