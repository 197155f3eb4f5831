// REQUIRES: mpi
// RUN: rm -f %t.ready
// RUN: not %mpirun -np 4 %S/Inputs/kill-rank.sh 1 %t.ready overlap-run --transport mpi %s --repeat 1000000 --timeout 50 --lost-after 0.5 --ready-file %t.ready 2>&1 | FileCheck %s --check-prefix=LOST
// RUN: rm -f %t.ready-healthy %t.ready-off
// RUN: %mpirun -np 4 overlap-run --transport mpi %s --repeat 20 --lost-after 0.5 --ready-file %t.ready-healthy | FileCheck %s --check-prefix=HEALTHY
// RUN: %mpirun -np 4 overlap-run --transport mpi %s --repeat 20 --lost-after 0 --ready-file %t.ready-off | FileCheck %s --check-prefix=HEALTHY
// RUN: test -f %t.ready-healthy && test -f %t.ready-off
// RUN: sh -c '%mpirun -np 4 overlap-run --transport mpi %s --ready-file %t.missing/ready 2>&1; echo "exit status $?"' | FileCheck %s --check-prefix=NO-READY
// RUN: not overlap-run --transport mpi %s --lost-after -1 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not overlap-run --transport mpi %s --lost-after nan 2>&1 | FileCheck %s --check-prefix=BAD

// A rank that dies (SIGKILL, once every rank runs its steps and hears the
// others' heartbeats: --ready-file) is found by the MPI transport itself,
// not by the launcher (which sees the rank's wrapper live on): every other
// rank ends within --lost-after with an error that names the lost device
// and the op or host wait it waited in, well before the timeout (50 s; ten
// minutes for the host's waits). Healthy runs pass with a short window (no
// live rank is taken for lost: 0.5 s is 10 times a window that no run beside
// two CPU-bound processes has misfired with, 0.05 s) and with the heartbeat
// off, and rank 0 writes the --ready-file in both (or every rank ends with
// status 2 when it cannot).

// LOST-DAG: ovlrt: error: device 0: {{.+}}: device 1 is lost: {{no heartbeat from it for [0-9.]+ s|device [023] heard no heartbeat from it}} (its process ended, or the network to it failed)
// LOST-DAG: ovlrt: error: device 2: {{.+}}: device 1 is lost:
// LOST-DAG: ovlrt: error: device 3: {{.+}}: device 1 is lost:

// HEALTHY: over 20 step(s)

// NO-READY: overlap-run: error: cannot write {{.*}}.missing/ready: No such file or directory
// NO-READY-NOT: overlap-run: error
// NO-READY: exit status 2

// BAD: overlap-run: error: --lost-after must be 0 or between 0.001 and 1000000, got {{-1|nan}}

shard.grid @ring(shape = 4)
func.func @main(%x: tensor<2xf32>) -> tensor<8xf32> {
  %y = ovl.all_gather %x on @ring axes [0] dim 0 : tensor<2xf32> -> tensor<8xf32>
  %z = ovl.all_reduce %y on @ring axes [0] : tensor<8xf32>
  return %z : tensor<8xf32>
}
