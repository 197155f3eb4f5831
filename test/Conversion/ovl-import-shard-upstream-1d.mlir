// The 1-D MLP of figure 2 as a global program with upstream shard
// annotations: upstream partitioning gathers both weights, the import turns
// the program into examples/mlp_1d.mlir (checked on the CPU runtime), and
// the decomposition makes a ring loop of each gather + einsum.
//
// RUN: mlir-opt --pass-pipeline="builtin.module(func.func(sharding-propagation,shard-partition))" %s | tee %t.partitioned.mlir | FileCheck %s --check-prefix=UPSTREAM
// RUN: overlap-opt --ovl-import-shard %t.partitioned.mlir | tee %t.ovl.mlir | FileCheck %s --check-prefix=IMPORT --implicit-check-not=shard.all_ --implicit-check-not=linalg.matmul
// RUN: overlap-run %t.ovl.mlir --reference %overlap_src_root/examples/mlp_1d.mlir | FileCheck %s --check-prefix=EQUAL
// RUN: overlap-opt --ovl-decompose-collective-einsum="gate=always unroll=1 bidirectional=false" %t.ovl.mlir | tee %t.decomposed.mlir | FileCheck %s --check-prefix=DECOMPOSED
// RUN: overlap-run %t.decomposed.mlir --reference %t.ovl.mlir | FileCheck %s --check-prefix=EQUAL

// UPSTREAM-DAG: shard.all_gather %arg2 on @ring grid_axes = [0] gather_axis = 0 : tensor<16x32xf32> -> tensor<64x32xf32>
// UPSTREAM-DAG: shard.all_gather %arg1 on @ring grid_axes = [0] gather_axis = 1 : tensor<32x16xf32> -> tensor<32x64xf32>
// UPSTREAM:     linalg.fill
// UPSTREAM:     linalg.matmul
// UPSTREAM:     linalg.generic
// UPSTREAM:     linalg.matmul

// IMPORT-LABEL: func.func @mlp(
// IMPORT-SAME:    %[[X:.*]]: tensor<4x32xf32>, %[[W1:.*]]: tensor<32x16xf32>, %[[W2:.*]]: tensor<16x32xf32>)
// IMPORT-DAG:   %[[W2F:.*]] = ovl.all_gather %[[W2]] on @ring axes [0] dim 0 : tensor<16x32xf32> -> tensor<64x32xf32>
// IMPORT-DAG:   %[[W1F:.*]] = ovl.all_gather %[[W1]] on @ring axes [0] dim 1 : tensor<32x16xf32> -> tensor<32x64xf32>
// IMPORT:       %[[H:.*]] = ovl.einsum "ac,cb->ab" %[[X]], %[[W1F]] : tensor<4x32xf32>, tensor<32x64xf32> -> tensor<4x64xf32>
// IMPORT:       %[[R:.*]] = linalg.generic {{.*}} ins(%[[H]]
// IMPORT:       %[[Y:.*]] = ovl.einsum "ac,cb->ab" %[[R]], %[[W2F]] : tensor<4x64xf32>, tensor<64x32xf32> -> tensor<4x32xf32>
// IMPORT:       return %[[Y]]

// DECOMPOSED-LABEL: func.func @mlp(
// DECOMPOSED-NOT:   ovl.all_gather
// DECOMPOSED:       scf.for
// DECOMPOSED:         ovl.collective_permute
// DECOMPOSED:         ovl.einsum
// DECOMPOSED:       scf.for
// DECOMPOSED:         ovl.collective_permute
// DECOMPOSED:         ovl.einsum

// EQUAL: equal (max abs error

shard.grid @ring(shape = 4)

func.func @mlp(%x: tensor<16x32xf32>, %w1: tensor<32x64xf32>,
               %w2: tensor<64x32xf32>) -> tensor<16x32xf32> {
  %rows = shard.sharding @ring split_axes = [[0]] : !shard.sharding
  %cols = shard.sharding @ring split_axes = [[], [0]] : !shard.sharding
  %repl = shard.sharding @ring split_axes = [[]] : !shard.sharding
  %x0 = shard.shard %x to %rows : tensor<16x32xf32>
  %x1 = shard.shard %x0 to %rows annotate_for_users : tensor<16x32xf32>
  %w10 = shard.shard %w1 to %cols : tensor<32x64xf32>
  %w11 = shard.shard %w10 to %repl annotate_for_users : tensor<32x64xf32>
  %c0 = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<16x64xf32>
  %z1 = linalg.fill ins(%c0 : f32) outs(%e1 : tensor<16x64xf32>) -> tensor<16x64xf32>
  %z1s = shard.shard %z1 to %rows : tensor<16x64xf32>
  %z1u = shard.shard %z1s to %rows annotate_for_users : tensor<16x64xf32>
  %h = linalg.matmul ins(%x1, %w11 : tensor<16x32xf32>, tensor<32x64xf32>)
                     outs(%z1u : tensor<16x64xf32>) -> tensor<16x64xf32>
  %h0 = shard.shard %h to %rows : tensor<16x64xf32>
  %hr = shard.shard %h0 to %rows annotate_for_users : tensor<16x64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>,
                                        affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%hr : tensor<16x64xf32>) outs(%e1 : tensor<16x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %c0 : f32
    linalg.yield %m : f32
  } -> tensor<16x64xf32>
  %r0 = shard.shard %r to %rows : tensor<16x64xf32>
  %h1 = shard.shard %r0 to %rows annotate_for_users : tensor<16x64xf32>
  %w20 = shard.shard %w2 to %rows : tensor<64x32xf32>
  %w21 = shard.shard %w20 to %repl annotate_for_users : tensor<64x32xf32>
  %e2 = tensor.empty() : tensor<16x32xf32>
  %z2 = linalg.fill ins(%c0 : f32) outs(%e2 : tensor<16x32xf32>) -> tensor<16x32xf32>
  %z2s = shard.shard %z2 to %rows : tensor<16x32xf32>
  %z2u = shard.shard %z2s to %rows annotate_for_users : tensor<16x32xf32>
  %y = linalg.matmul ins(%h1, %w21 : tensor<16x64xf32>, tensor<64x32xf32>)
                     outs(%z2u : tensor<16x32xf32>) -> tensor<16x32xf32>
  %y0 = shard.shard %y to %rows : tensor<16x32xf32>
  %y1 = shard.shard %y0 to %rows annotate_for_users : tensor<16x32xf32>
  return %y1 : tensor<16x32xf32>
}
