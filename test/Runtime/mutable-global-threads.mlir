// A memref.global the program writes is one copy per process: the device
// threads of --transport threads shared it (each device saw the others'
// writes), where MPI's ranks each have their own, so the program computed
// another thing on each transport, silently. With more than one device the
// threads transport refuses it; one device, or one rank per device, runs it.
//
// RUN: sh -c 'overlap-run %s; echo "exit status $?"' 2>&1 | FileCheck %s
// RUN: sed 's/shape = 2/shape = 1/' %s > %t.one.mlir
// RUN: overlap-run %t.one.mlir --print-outputs | FileCheck %s --check-prefix=ONE

// CHECK: overlap-run: error: memref.global @count is not constant: the 2 device threads of --transport threads would share one copy of it; run the devices as MPI ranks (--transport mpi), or carry the state in the function's arguments and results
// CHECK: exit status 1
// ONE: device 0 output 0 (1xf32): [1]
shard.grid @g(shape = 2)
memref.global "private" @count : memref<1xf32> = dense<0.0>
func.func @main() -> tensor<1xf32> {
  %m = memref.get_global @count : memref<1xf32>
  %old = bufferization.to_tensor %m restrict : memref<1xf32> to tensor<1xf32>
  %one = arith.constant dense<1.0> : tensor<1xf32>
  %new = arith.addf %old, %one : tensor<1xf32>
  %nm = bufferization.to_buffer %new : tensor<1xf32> to memref<1xf32>
  memref.copy %nm, %m : memref<1xf32> to memref<1xf32>
  return %new : tensor<1xf32>
}
