// An asynchronous all_gather started before a loop and awaited in it, its
// send buffer a loop argument that never changes. Canonicalize folds that
// argument into the value it starts as, so the dones keep the function's
// argument while the token goes through the loop: the same buffer on every
// path. ovl-overlap-pipeline, whose own canonicalize does the folding,
// refused its result; what its passes make must verify, and run equal.

// RUN: overlap-opt %s --ovl-verify-collectives | FileCheck %s --check-prefix=AS-IS
// RUN: overlap-opt %s --canonicalize --ovl-verify-collectives | FileCheck %s --check-prefix=FOLDED
// RUN: overlap-opt %s --ovl-overlap-pipeline -o %t.mlir
// RUN: overlap-run %t.mlir --reference %s | FileCheck %s --check-prefix=EXEC

// AS-IS: ovl.collective_done %{{.+}} keep(%{{.+}} : tensor<4xf32>)
// FOLDED-LABEL: func.func @gather_in_loop(
// FOLDED-SAME: %[[X:arg0]]: tensor<4xf32>
// FOLDED: scf.for
// FOLDED: ovl.collective_done %{{.+}} keep(%[[X]] : tensor<4xf32>)
// FOLDED: ovl.collective_done %{{.+}} keep(%[[X]] : tensor<4xf32>)
// EXEC: reference {{.+}}: equal

shard.grid @ring(shape = 4)

func.func @gather_in_loop(%x: tensor<4xf32>, %buf: tensor<16xf32>) -> tensor<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %p, %t = ovl.all_gather_start %x into %buf on @ring axes [0] dim 0 : tensor<4xf32> -> tensor<16xf32>
  %r:3 = scf.for %i = %c0 to %c3 step %c1 iter_args(%ap = %p, %at = %t, %k = %x) -> (tensor<16xf32>, !ovl.token, tensor<4xf32>) {
    %d = ovl.collective_done %at keep(%k : tensor<4xf32>) into %ap : tensor<16xf32>
    %p2, %t2 = ovl.all_gather_start %k into %d on @ring axes [0] dim 0 : tensor<4xf32> -> tensor<16xf32>
    scf.yield %p2, %t2, %k : tensor<16xf32>, !ovl.token, tensor<4xf32>
  }
  %e = ovl.collective_done %r#1 keep(%r#2 : tensor<4xf32>) into %r#0 : tensor<16xf32>
  return %e : tensor<16xf32>
}
