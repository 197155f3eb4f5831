// The 2-D MLP of figure 3 written as a global program with upstream shard
// annotations, partitioned by upstream mlir-opt, imported into ovl, checked
// against the hand-written examples/mlp_2d.mlir on the CPU runtime, then
// decomposed and checked against the imported program.
//
// RUN: mlir-opt --pass-pipeline="builtin.module(func.func(sharding-propagation,shard-partition))" %s | tee %t.partitioned.mlir | FileCheck %s --check-prefix=UPSTREAM
// RUN: overlap-opt --ovl-import-shard %t.partitioned.mlir | tee %t.ovl.mlir | FileCheck %s --check-prefix=IMPORT --implicit-check-not=shard.all_ --implicit-check-not=linalg.matmul --implicit-check-not=scf.if
// RUN: overlap-run %t.ovl.mlir --reference %overlap_src_root/examples/mlp_2d.mlir | FileCheck %s --check-prefix=EQUAL
// RUN: overlap-opt --ovl-decompose-collective-einsum="gate=always" %t.ovl.mlir | tee %t.decomposed.mlir | FileCheck %s --check-prefix=DECOMPOSED
// RUN: overlap-run %t.decomposed.mlir --reference %t.ovl.mlir | FileCheck %s --check-prefix=EQUAL

// What upstream emits: gathers, two matmuls (the second on a partial sum,
// with the scf.if init), and an all_reduce + all_slice.
// UPSTREAM-DAG: shard.all_gather %arg2 on @grid grid_axes = [1] gather_axis = 1 : tensor<32x8xf32> -> tensor<32x32xf32>
// UPSTREAM-DAG: shard.all_gather %arg1 on @grid grid_axes = [1] gather_axis = 0 : tensor<8x32xf32> -> tensor<32x32xf32>
// UPSTREAM-DAG: shard.all_gather %arg0 on @grid grid_axes = [0] gather_axis = 1 : tensor<4x16xf32> -> tensor<4x32xf32>
// UPSTREAM:     linalg.matmul
// UPSTREAM:     scf.if
// UPSTREAM:     linalg.matmul
// UPSTREAM:     shard.all_reduce {{.*}} on @grid grid_axes = [0] : tensor<4x32xf32> -> tensor<4x32xf32>
// UPSTREAM:     shard.all_slice {{.*}} on @grid grid_axes = [0] slice_axis = 1 : tensor<4x32xf32> -> tensor<4x16xf32>

// IMPORT-LABEL: func.func @mlp(
// IMPORT-SAME:    %[[X:.*]]: tensor<4x16xf32>, %[[W1:.*]]: tensor<8x32xf32>, %[[W2:.*]]: tensor<32x8xf32>)
// IMPORT-DAG:   %[[W2F:.*]] = ovl.all_gather %[[W2]] on @grid axes [1] dim 1 : tensor<32x8xf32> -> tensor<32x32xf32>
// IMPORT-DAG:   %[[W1F:.*]] = ovl.all_gather %[[W1]] on @grid axes [1] dim 0 : tensor<8x32xf32> -> tensor<32x32xf32>
// IMPORT-DAG:   %[[XF:.*]] = ovl.all_gather %[[X]] on @grid axes [0] dim 1 : tensor<4x16xf32> -> tensor<4x32xf32>
// IMPORT:       %[[H:.*]] = ovl.einsum "ac,cb->ab" %[[XF]], %[[W1F]] : tensor<4x32xf32>, tensor<32x32xf32> -> tensor<4x32xf32>
// IMPORT:       %[[R:.*]] = linalg.generic {{.*}} ins(%[[H]]
// IMPORT:         arith.maximumf
// IMPORT:       %[[P:.*]] = ovl.einsum "ac,cb->ab" %[[R]], %[[W2F]] : tensor<4x32xf32>, tensor<32x32xf32> -> tensor<4x32xf32>
// IMPORT:       %[[Y:.*]] = ovl.reduce_scatter %[[P]] on @grid axes [0] dim 1 : tensor<4x32xf32> -> tensor<4x16xf32>
// IMPORT:       return %[[Y]]

// Both einsums are decomposed (N = 2 along axis 0: the ring loop is
// unrolled into permutes).
// DECOMPOSED-LABEL: func.func @mlp(
// DECOMPOSED:       ovl.collective_permute
// DECOMPOSED-NOT:   ovl.reduce_scatter
// DECOMPOSED-NOT:   ovl.all_gather %arg0

// EQUAL: equal (max abs error

shard.grid @grid(shape = 2x4)

func.func @mlp(%x: tensor<16x32xf32>, %w1: tensor<32x64xf32>,
               %w2: tensor<64x32xf32>) -> tensor<16x32xf32> {
  // x [B, F] and the output split [B/N, F/M]; w1 [F/N, H/M]; w2 [H/M, F/N]
  // (axis 0 is M = 2, axis 1 is N = 4), as in examples/mlp_2d.mlir.
  %s_x = shard.sharding @grid split_axes = [[1], [0]] : !shard.sharding
  %s_b = shard.sharding @grid split_axes = [[1]] : !shard.sharding
  %s_w1 = shard.sharding @grid split_axes = [[1], [0]] : !shard.sharding
  %s_w1u = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %s_w2 = shard.sharding @grid split_axes = [[0], [1]] : !shard.sharding
  %s_w2u = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %x0 = shard.shard %x to %s_x : tensor<16x32xf32>
  %x1 = shard.shard %x0 to %s_b annotate_for_users : tensor<16x32xf32>
  %w10 = shard.shard %w1 to %s_w1 : tensor<32x64xf32>
  %w11 = shard.shard %w10 to %s_w1u annotate_for_users : tensor<32x64xf32>
  %e1 = tensor.empty() : tensor<16x64xf32>
  %c0 = arith.constant 0.0 : f32
  %z1 = linalg.fill ins(%c0 : f32) outs(%e1 : tensor<16x64xf32>) -> tensor<16x64xf32>
  %z1s = shard.shard %z1 to %s_x : tensor<16x64xf32>
  %z1u = shard.shard %z1s to %s_x annotate_for_users : tensor<16x64xf32>
  %h = linalg.matmul ins(%x1, %w11 : tensor<16x32xf32>, tensor<32x64xf32>)
                     outs(%z1u : tensor<16x64xf32>) -> tensor<16x64xf32>
  %h0 = shard.shard %h to %s_x : tensor<16x64xf32>
  %hr = shard.shard %h0 to %s_x annotate_for_users : tensor<16x64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>,
                                        affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%hr : tensor<16x64xf32>) outs(%e1 : tensor<16x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %c0 : f32
    linalg.yield %m : f32
  } -> tensor<16x64xf32>
  %r0 = shard.shard %r to %s_x : tensor<16x64xf32>
  %h1 = shard.shard %r0 to %s_x annotate_for_users : tensor<16x64xf32>
  %w20 = shard.shard %w2 to %s_w2 : tensor<64x32xf32>
  %w21 = shard.shard %w20 to %s_w2u annotate_for_users : tensor<64x32xf32>
  %e2 = tensor.empty() : tensor<16x32xf32>
  %z2 = linalg.fill ins(%c0 : f32) outs(%e2 : tensor<16x32xf32>) -> tensor<16x32xf32>
  %z2s = shard.shard %z2 to %s_b : tensor<16x32xf32>
  %z2u = shard.shard %z2s to %s_b annotate_for_users : tensor<16x32xf32>
  %y = linalg.matmul ins(%h1, %w21 : tensor<16x64xf32>, tensor<64x32xf32>)
                     outs(%z2u : tensor<16x32xf32>) -> tensor<16x32xf32>
  %y0 = shard.shard %y to %s_b : tensor<16x32xf32>
  %y1 = shard.shard %y0 to %s_x annotate_for_users : tensor<16x32xf32>
  return %y1 : tensor<16x32xf32>
}
