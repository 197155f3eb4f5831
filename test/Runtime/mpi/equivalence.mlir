// REQUIRES: mpi
// RUN: rm -rf %t && mkdir -p %t/threads %t/mpi
// RUN: overlap-run %overlap_src_root/examples/mlp_1d.mlir --seed 1 --save-outputs %t/threads
// RUN: %mpirun -np 4 overlap-run --transport mpi %overlap_src_root/examples/mlp_1d.mlir --reference %overlap_src_root/examples/mlp_1d_reference.mlir --seed 1 --save-outputs %t/mpi | FileCheck %s --check-prefix=MLP1D
// RUN: overlap-run %overlap_src_root/examples/mlp_2d.mlir --seed 2 --save-outputs %t/threads
// RUN: %mpirun -np 8 overlap-run --transport mpi %overlap_src_root/examples/mlp_2d.mlir --reference %overlap_src_root/examples/mlp_2d_reference.mlir --seed 2 --save-outputs %t/mpi | FileCheck %s --check-prefix=MLP2D
// RUN: diff -r %t/threads %t/mpi

// The paper's MLPs (examples/) on random inputs: with MPI they equal their
// references, and every output of every device is bit-identical to the
// threads transport's (collectives combine members in group-index order
// with either transport).

// MLP1D: examples/mlp_1d.mlir: @mlp on 4 devices (mpi)
// MLP1D: reference {{.*}}mlp_1d_reference.mlir: equal
// MLP2D: examples/mlp_2d.mlir: @mlp on 8 devices (mpi)
// MLP2D: reference {{.*}}mlp_2d_reference.mlir: equal
