// REQUIRES: mpi
// RUN: split-file %S/../all_gather.mlir %t/all_gather
// RUN: split-file %S/../reduce_scatter.mlir %t/reduce_scatter
// RUN: %mpirun -np 2 overlap-run --transport mpi %t/all_gather/ring2.mlir --print-outputs | FileCheck %S/../all_gather.mlir --check-prefix=RING2
// RUN: %mpirun -np 3 overlap-run --transport mpi %t/all_gather/ring3.mlir --print-outputs | FileCheck %S/../all_gather.mlir --check-prefix=RING3
// RUN: %mpirun -np 8 overlap-run --transport mpi %t/all_gather/ring8.mlir --print-outputs | FileCheck %S/../all_gather.mlir --check-prefix=RING8
// RUN: %mpirun -np 8 overlap-run --transport mpi %t/all_gather/torus.mlir --print-outputs | FileCheck %S/../all_gather.mlir --check-prefix=TORUS
// RUN: %mpirun -np 4 overlap-run --transport mpi %t/reduce_scatter/ring4.mlir --print-outputs | FileCheck %S/../reduce_scatter.mlir --check-prefix=RING4
// RUN: %mpirun -np 8 overlap-run --transport mpi %t/reduce_scatter/torus.mlir --print-outputs | FileCheck %S/../reduce_scatter.mlir --check-prefix=TORUS
// RUN: %mpirun -np 3 overlap-run --transport mpi %S/../all_reduce.mlir --print-outputs | FileCheck %S/../all_reduce.mlir
// RUN: %mpirun -np 3 overlap-run --transport mpi %S/../all_reduce.mlir --print-outputs | FileCheck %s --check-prefix=MPI

// The blocking collectives with one MPI rank per device, on the programs of
// the threads transport's tests and against the same expectations: rings of
// 2, 3, 4 and 8 devices and a 2x4 grid gathered and scattered along each
// axis and both, for f32, i32 and bf16. Only rank 0 prints.

// MPI: on {{[0-9]}} devices (mpi)
// MPI-NOT: on {{[0-9]}} devices
