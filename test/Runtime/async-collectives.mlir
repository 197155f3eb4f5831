// RUN: rm -rf %t && mkdir -p %t/blocking %t/async
// RUN: overlap-opt %s --pass-pipeline="builtin.module(func.func(ovl-async-collectives{kinds=all_gather,reduce_scatter,all_reduce}))" -o %t/async.mlir
// RUN: FileCheck %s --check-prefix=IR --input-file %t/async.mlir
// RUN: overlap-run %s --seed 7 --save-outputs %t/blocking
// RUN: overlap-run %t/async.mlir --seed 7 --save-outputs %t/async --reference %s | FileCheck %s
// RUN: diff -r %t/blocking %t/async
// RUN: overlap-run %t/async.mlir --seed 7 --link-bandwidth 1 --link-latency 5 --reference %s | FileCheck %s

// Asynchronous all_gather, reduce_scatter and all_reduce on the threads
// transport: on a 2x4 grid, over rows, columns and the whole grid, in f32,
// bf16 and i32, several in flight at once with independent work between the
// starts and the dones, done in another order than started. The outputs are
// bit-identical to the blocking program's (also with emulated links).
// test/Runtime/mpi/async-collectives.mlir runs the same under MPI.

// IR-COUNT-5: _start
// IR-NOT: ovl.all_gather %
// IR-NOT: ovl.reduce_scatter %
// IR-NOT: ovl.all_reduce %

// CHECK: @main on 8 devices (threads)
// CHECK: reference {{.*}}async-collectives.mlir: equal

shard.grid @torus(shape = 2x4)
func.func @main(%w: tensor<4x3xf32>, %x: tensor<8x8xbf16>, %n: tensor<6xi32>, %y: tensor<2x4xf32>)
    -> (tensor<4x12xf32>, tensor<8x1xbf16>, tensor<6xi32>, tensor<2x4xf32>, tensor<4x3xf32>) {
  %g = ovl.all_gather %w on @torus axes [1] dim 1 : tensor<4x3xf32> -> tensor<4x12xf32>
  %s = ovl.reduce_scatter %x on @torus axes [1, 0] dim 1 : tensor<8x8xbf16> -> tensor<8x1xbf16>
  %m = ovl.all_reduce %n on @torus axes [0, 1] reduce max : tensor<6xi32>
  %r = ovl.all_reduce %y on @torus axes [0] : tensor<2x4xf32>
  %sq = ovl.einsum "ij,ij->ij" %y, %y : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  %sum = ovl.einsum "ij,ij->ij" %r, %sq : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  %h = ovl.reduce_scatter %w on @torus axes [0] dim 0 reduce min : tensor<4x3xf32> -> tensor<2x3xf32>
  %hh = ovl.all_gather %h on @torus axes [0] dim 0 : tensor<2x3xf32> -> tensor<4x3xf32>
  return %g, %s, %m, %sum, %hh : tensor<4x12xf32>, tensor<8x1xbf16>, tensor<6xi32>, tensor<2x4xf32>, tensor<4x3xf32>
}
