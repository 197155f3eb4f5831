// REQUIRES: mpi
// RUN: rm -rf %t && split-file %s %t && mkdir -p %t/gen %t/in
// RUN: sh -c '%mpirun -np 4 overlap-run --transport mpi %t/sum.mlir --reference %t/sum_ring.mlir --seed 3; echo "exit status $?"' | FileCheck %s --check-prefix=EQUAL
// RUN: sh -c '%mpirun -np 4 overlap-run --transport mpi %t/sum.mlir --reference %t/max.mlir --seed 3; echo "exit status $?"' | FileCheck %s --check-prefix=WRONG

// Inputs from .npy files: each rank reads its own device's.
// RUN: overlap-run %t/gen.mlir --save-outputs %t/gen
// RUN: mv %t/gen/device0_output0.npy %t/in/device0_input0.npy
// RUN: mv %t/gen/device1_output0.npy %t/in/device1_input0.npy
// RUN: mv %t/gen/device2_output0.npy %t/in/device2_input0.npy
// RUN: mv %t/gen/device3_output0.npy %t/in/device3_input0.npy
// RUN: %mpirun -np 4 overlap-run --transport mpi %t/sum.mlir --inputs %t/in --print-outputs | FileCheck %s --check-prefix=NPY
// RUN: rm %t/in/device2_input0.npy
// RUN: sh -c '%mpirun -np 4 overlap-run --transport mpi %t/sum.mlir --inputs %t/in 2>&1; echo "exit status $?"' | FileCheck %s --check-prefix=NOFILE

// --reference with MPI: rank 0 gathers both programs' outputs, compares
// and reports, and every rank exits with the verdict: 0 when equal, 1 when
// not (mpirun passes it on), 2 when one rank could not read its inputs.

// EQUAL: sum.mlir: @main on 4 devices (mpi)
// EQUAL: reference {{.*}}sum_ring.mlir: equal
// EQUAL: exit status 0
// WRONG: reference {{.*}}max.mlir: NOT EQUAL
// WRONG-NEXT: first difference: device 0 output 0 at [0]
// WRONG: exit status 1
// NPY-COUNT-4: output 0 (2xf32): [6, 60]
// NOFILE: overlap-run: error: {{.*}}device2_input0.npy
// NOFILE-NOT: overlap-run: error
// NOFILE: exit status 2

//--- gen.mlir
/// Device d returns [d, 10 d].
shard.grid @ring(shape = 4)
func.func @main() -> tensor<2xf32> {
  %id = ovl.partition_id on @ring axes [0] : index
  %v = arith.index_cast %id : index to i64
  %f = arith.sitofp %v : i64 to f32
  %ten = arith.constant 10.0 : f32
  %g = arith.mulf %f, %ten : f32
  %x = tensor.from_elements %f, %g : tensor<2xf32>
  return %x : tensor<2xf32>
}

//--- sum.mlir
shard.grid @ring(shape = 4)
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = ovl.all_reduce %x on @ring axes [0] : tensor<2xf32>
  return %y : tensor<2xf32>
}

//--- max.mlir
shard.grid @ring(shape = 4)
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = ovl.all_reduce %x on @ring axes [0] reduce max : tensor<2xf32>
  return %y : tensor<2xf32>
}

//--- sum_ring.mlir
/// The sum by passing the shards around the ring with asynchronous
/// permutes, one in flight while the previous shard is added.
shard.grid @ring(shape = 4)
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant dense<0.0> : tensor<2xf32>
  %r:2 = scf.for %i = %c0 to %c4 step %c1 iter_args(%a = %x, %acc = %zero)
      -> (tensor<2xf32>, tensor<2xf32>) {
    %buf = tensor.empty() : tensor<2xf32>
    %p, %t = ovl.collective_permute_start %a into %buf on @ring axes [0] pairs [0 -> 1, 1 -> 2, 2 -> 3, 3 -> 0] : tensor<2xf32>
    %s = arith.addf %acc, %a : tensor<2xf32>
    %n = ovl.collective_permute_done %t keep(%a) into %p : tensor<2xf32>
    scf.yield %n, %s : tensor<2xf32>, tensor<2xf32>
  }
  return %r#1 : tensor<2xf32>
}
