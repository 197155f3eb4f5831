// RUN: overlap-opt %s --pass-pipeline="builtin.module(func.func(ovl-decompose-collective-einsum{gate=always gather-scatter=true bidirectional=false async-collectives=false remarks=true}))" 2>&1 | FileCheck %s
// RUN: overlap-opt %s --pass-pipeline="builtin.module(func.func(ovl-decompose-collective-einsum{gate=always gather-scatter=true bidirectional=split async-collectives=false remarks=true}))" 2>&1 | FileCheck %s --check-prefix=SPLIT
// RUN: overlap-opt %s --pass-pipeline="builtin.module(func.func(ovl-decompose-collective-einsum{gate=always gather-scatter=false async-collectives=false}))" | FileCheck %s --check-prefix=OFF

// The gather-scatter form: an all_gather, its einsum and the einsum's
// reduce_scatter on the gathered letter rewritten together (docs/
// Decomposition.md). On the 2x4 grid, the gather's 4 devices along axis 1
// are twice the scatter's 2 along axis 0 (G = 2): the second row starts
// rotated by 2, the partial sums hop along axis 0 every 2 rounds, and the
// last 2 rounds send completed sums to their owners. That the results are
// right is checked by execution (test/Decompose/gather-scatter.test); the
// pairs those files write out are checked here. The pairs that do not
// qualify say why. Split (bidirectional=split), each half of every shard
// goes its own way round the gather's ring, with its own rotation and
// owners.

shard.grid @grid(shape = 2x4)

// CHECK: remark: decomposing all_gather along axis 1 (N=4) with the reduce_scatter of its einsum (gather-scatter form)
// CHECK: remark: decomposing reduce_scatter along axis 0 (N=2) into a ring loop (einsum-reduce_scatter, gather-scatter, with the all_gather of its einsum) as gate=always says
// CHECK: remark: not in gather-scatter form: the scattered letter is not the gathered one
// CHECK: remark: not in gather-scatter form: the gather's group is not a multiple of the scatter's
// CHECK: remark: not in gather-scatter form: no operand of the einsum is an all_gather used by it and after the reduce_scatter only

// CHECK-LABEL: func.func @fig3
// CHECK-SAME: (%[[X:.+]]: tensor<4x32xf32>, %[[W:.+]]: tensor<32x8xf32>)
// CHECK: %[[Y:.+]] = ovl.partition_id on @grid axes [1]
// CHECK: %[[S0:.+]] = ovl.collective_permute %[[W]] on @grid axes [0, 1] pairs [0 -> 0, 1 -> 1, 2 -> 2, 3 -> 3, 4 -> 6, 5 -> 7, 6 -> 4, 7 -> 5]
// CHECK: %[[S1:.+]] = ovl.collective_permute %[[S0]] on @grid axes [1] pairs [0 -> 3, 1 -> 0, 2 -> 1, 3 -> 2]
// CHECK: %[[P0:.+]] = ovl.einsum "bh,hf->bf" %[[X]], %[[S0]] : tensor<4x32xf32>, tensor<32x8xf32> -> tensor<4x8xf32>
// CHECK: %[[S2:.+]] = ovl.collective_permute %[[S1]] on @grid axes [1]
// CHECK: %[[R0:.+]] = ovl.collective_permute %[[P0]] on @grid axes [0] pairs [0 -> 1, 1 -> 0]
// CHECK: %[[P1:.+]] = ovl.einsum "bh,hf->bf" %[[X]], %[[S1]]
// CHECK: %[[R1:.+]] = ovl.collective_permute %[[P1]] on @grid axes [0] pairs [0 -> 1, 1 -> 0]
// CHECK: %[[P2:.+]] = ovl.einsum "bh,hf->bf" %[[X]], %[[S2]]
// CHECK: %[[A2:.+]] = arith.addf %[[R0]], %[[P2]]
// CHECK: %[[C0:.+]] = ovl.collective_permute %[[A2]] on @grid axes [0, 1] pairs [0 -> 4, 1 -> 5, 2 -> 2, 3 -> 3, 4 -> 0, 5 -> 1, 6 -> 6, 7 -> 7]
// CHECK: tensor.insert_slice %[[C0]]
// CHECK: arith.addf %[[R1]]
// CHECK: ovl.collective_permute %{{.+}} on @grid axes [0, 1] pairs [0 -> 4, 1 -> 1, 2 -> 2, 3 -> 7, 4 -> 0, 5 -> 5, 6 -> 6, 7 -> 3]
// CHECK: %[[OUT:.+]] = tensor.insert_slice
// CHECK-NOT: ovl.all_gather
// CHECK-NOT: ovl.reduce_scatter
// CHECK: return %[[OUT]]

// SPLIT: remark: decomposing reduce_scatter along axis 0 (N=2) into a ring loop (einsum-reduce_scatter, gather-scatter, split, with the all_gather of its einsum) as gate=always says
// SPLIT-LABEL: func.func @fig3
// SPLIT-SAME: (%[[X:.+]]: tensor<4x32xf32>, %[[W:.+]]: tensor<32x8xf32>)
// SPLIT: %[[H0:.+]] = tensor.extract_slice %[[W]][0, 0] [32, 4] [1, 1]
// SPLIT: ovl.collective_permute %[[H0]] on @grid axes [0, 1] pairs [0 -> 0, 1 -> 1, 2 -> 2, 3 -> 3, 4 -> 6, 5 -> 7, 6 -> 4, 7 -> 5]
// SPLIT: %[[H1:.+]] = tensor.extract_slice %[[W]][0, 4] [32, 4] [1, 1]
// SPLIT: ovl.collective_permute %[[H1]] on @grid axes [0, 1]
// SPLIT: ovl.collective_permute %{{.+}} on @grid axes [1] pairs [0 -> 3, 1 -> 0, 2 -> 1, 3 -> 2] : tensor<32x4xf32>
// SPLIT: ovl.collective_permute %{{.+}} on @grid axes [1] pairs [0 -> 1, 1 -> 2, 2 -> 3, 3 -> 0] : tensor<32x4xf32>
// SPLIT: ovl.einsum "bh,hf->bf" %[[X]], %{{.+}} : tensor<4x32xf32>, tensor<32x4xf32> -> tensor<4x4xf32>
// SPLIT: ovl.einsum "bh,hf->bf" %[[X]], %{{.+}} : tensor<4x32xf32>, tensor<32x4xf32> -> tensor<4x4xf32>
// SPLIT-NOT: ovl.all_gather
// SPLIT-NOT: ovl.reduce_scatter
// SPLIT: return

// OFF-LABEL: func.func @fig3
// OFF-NOT: axes [0, 1]
// OFF: return

func.func @fig3(%x: tensor<4x32xf32>, %w: tensor<32x8xf32>) -> tensor<4x16xf32> {
  %wf = ovl.all_gather %w on @grid axes [1] dim 1 : tensor<32x8xf32> -> tensor<32x32xf32>
  %p = ovl.einsum "bh,hf->bf" %x, %wf : tensor<4x32xf32>, tensor<32x32xf32> -> tensor<4x32xf32>
  %y = ovl.reduce_scatter %p on @grid axes [0] dim 1 : tensor<4x32xf32> -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

func.func @other_letter(%x: tensor<4x32xf32>, %w: tensor<32x8xf32>) -> tensor<2x32xf32> {
  %wf = ovl.all_gather %w on @grid axes [1] dim 1 : tensor<32x8xf32> -> tensor<32x32xf32>
  %p = ovl.einsum "bh,hf->bf" %x, %wf : tensor<4x32xf32>, tensor<32x32xf32> -> tensor<4x32xf32>
  %y = ovl.reduce_scatter %p on @grid axes [0] dim 0 : tensor<4x32xf32> -> tensor<2x32xf32>
  return %y : tensor<2x32xf32>
}

func.func @not_multiple(%x: tensor<4x32xf32>, %w: tensor<32x16xf32>) -> tensor<4x8xf32> {
  %wf = ovl.all_gather %w on @grid axes [0] dim 1 : tensor<32x16xf32> -> tensor<32x32xf32>
  %p = ovl.einsum "bh,hf->bf" %x, %wf : tensor<4x32xf32>, tensor<32x32xf32> -> tensor<4x32xf32>
  %y = ovl.reduce_scatter %p on @grid axes [1] dim 1 : tensor<4x32xf32> -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

func.func @used_before(%x: tensor<4x32xf32>, %w: tensor<32x8xf32>) -> (tensor<4x16xf32>, tensor<32x32xf32>) {
  %wf = ovl.all_gather %w on @grid axes [1] dim 1 : tensor<32x8xf32> -> tensor<32x32xf32>
  %p = ovl.einsum "bh,hf->bf" %x, %wf : tensor<4x32xf32>, tensor<32x32xf32> -> tensor<4x32xf32>
  %n = arith.negf %wf : tensor<32x32xf32>
  %y = ovl.reduce_scatter %p on @grid axes [0] dim 1 : tensor<4x32xf32> -> tensor<4x16xf32>
  return %y, %n : tensor<4x16xf32>, tensor<32x32xf32>
}
