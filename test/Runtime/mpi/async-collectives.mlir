// REQUIRES: mpi
// RUN: rm -rf %t && mkdir -p %t/threads %t/mpi
// RUN: overlap-opt %S/../async-collectives.mlir --pass-pipeline="builtin.module(func.func(ovl-async-collectives{kinds=all_gather,reduce_scatter,all_reduce}))" -o %t/async.mlir
// RUN: overlap-run %S/../async-collectives.mlir --seed 7 --save-outputs %t/threads
// RUN: %mpirun -np 8 overlap-run --transport mpi %t/async.mlir --seed 7 --save-outputs %t/mpi --reference %S/../async-collectives.mlir | FileCheck %s
// RUN: diff -r %t/threads %t/mpi
// RUN: overlap-opt %overlap_src_root/examples/mlp_2d.mlir --ovl-overlap-pipeline -o %t/mlp_overlap.mlir
// RUN: overlap-opt %t/mlp_overlap.mlir --pass-pipeline="builtin.module(func.func(ovl-async-collectives{kinds=all_gather,reduce_scatter,all_reduce}))" -o %t/mlp_async.mlir
// RUN: %mpirun -np 8 overlap-run --transport mpi %t/mlp_async.mlir --reference %overlap_src_root/examples/mlp_2d.mlir | FileCheck %s --check-prefix=MLP

// The asynchronous collectives of ../async-collectives.mlir under MPI, one
// rank per device: equal to the blocking program, and every output of every
// device bit-identical to the threads transport's blocking run. Then the
// figure 3 MLP after the pipeline with every collective it kept made
// asynchronous equals the original.

// CHECK: @main on 8 devices (mpi)
// CHECK: reference {{.*}}async-collectives.mlir: equal
// MLP: reference {{.*}}mlp_2d.mlir: equal
