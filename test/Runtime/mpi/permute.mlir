// REQUIRES: mpi
// RUN: split-file %S/../permute.mlir %t
// RUN: %mpirun -np 4 overlap-run --transport mpi %t/blocking.mlir --print-outputs | FileCheck %S/../permute.mlir --check-prefix=BLOCKING
// RUN: %mpirun -np 4 overlap-run --transport mpi %t/ring_loop.mlir --print-outputs --repeat 3 | FileCheck %S/../permute.mlir --check-prefix=LOOP
// RUN: %mpirun -np 4 overlap-run --transport mpi %t/ring_loop.mlir --repeat 3 --json | FileCheck %s --check-prefix=JSON

// Permutes with one MPI rank per device: the blocking op on a ring and on
// sub-groups of a 2x2 grid, and the double-buffered ring loop of
// asynchronous start/done pairs (several permutes of one group in flight),
// run three times in a row on the same communicators.

// JSON: "devices": 4,
// JSON: "steps": 3,
// JSON: "transport": "mpi"
