// RUN: overlap-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(ovl-decompose-collective-einsum{gate=always bidirectional=split unroll=1}))" | FileCheck %s --check-prefixes=CHECK,SPLIT
// RUN: overlap-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(ovl-decompose-collective-einsum{gate=always unroll=2 bidirectional=split}))" | FileCheck %s --check-prefixes=CHECK,UNROLL
// RUN: overlap-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(ovl-decompose-collective-einsum{gate=always bidirectional=split remarks=true unroll=1}))" -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK -DU=1
// RUN: overlap-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(ovl-decompose-collective-einsum{gate=always unroll=2 bidirectional=split remarks=true}))" -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK -DU=2

// Split loops (bidirectional=split): the pair is halved along a free dim and
// each half goes its own way round the ring, so each direction of a link
// carries half of every shard. That the results are right is checked by
// execution (test/Decompose/matrix.test runs every split loop).

shard.grid @ring(shape = 4)

/// Einsum-ReduceScatter: the result is halved along b (the free letter of
/// %x); the first half's partial sums travel to lower device indices, the
/// second half's to higher ones, and the owner concatenates the two halves.
// REMARK: remark: decomposing reduce_scatter along axis 0 (N=4) into a ring loop (einsum-reduce_scatter, unroll [[U]], split)
// CHECK-LABEL: func.func @scatter
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<6x8xf32>, %[[W:[a-z0-9]+]]: tensor<8x16xf32>)
// CHECK-DAG: tensor.extract_slice %[[X]][0, 0] [3, 8] [1, 1] : tensor<6x8xf32> to tensor<3x8xf32>
// CHECK-DAG: tensor.extract_slice %[[X]][3, 0] [3, 8] [1, 1] : tensor<6x8xf32> to tensor<3x8xf32>
// SPLIT: scf.for
// CHECK-DAG: ovl.collective_permute %{{.*}} on @ring axes [0] pairs [0 -> 3, 1 -> 0, 2 -> 1, 3 -> 2] : tensor<3x4xf32>
// CHECK-DAG: ovl.collective_permute %{{.*}} on @ring axes [0] pairs [0 -> 1, 1 -> 2, 2 -> 3, 3 -> 0] : tensor<3x4xf32>
// CHECK-NOT: tensor<6x16xf32>
// CHECK: %[[RES:.+]] = tensor.concat dim(0) %{{.*}}, %{{.*}} : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<6x4xf32>
// CHECK: return %[[RES]]
func.func @scatter(%x: tensor<6x8xf32>, %w: tensor<8x16xf32>) -> tensor<6x4xf32> {
  %y = ovl.einsum "bf,fh->bh" %x, %w
      : tensor<6x8xf32>, tensor<8x16xf32> -> tensor<6x16xf32>
  %r = ovl.reduce_scatter %y on @ring axes [0] dim 1
      : tensor<6x16xf32> -> tensor<6x4xf32>
  return %r : tensor<6x4xf32>
}

// -----

shard.grid @ring(shape = 4)

/// AllGather case 2: each device halves its shard along b; the halves
/// travel opposite ways, and each accumulates its own half of the result.
// REMARK: remark: decomposing all_gather along axis 0 (N=4) into a ring loop (case 2, gathered dim contracting (lhs), unroll [[U]], split)
// CHECK-LABEL: func.func @gather
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<6x2xf32>
// CHECK-DAG: %[[LO:.+]] = tensor.extract_slice %[[X]][0, 0] [3, 2] [1, 1] : tensor<6x2xf32> to tensor<3x2xf32>
// CHECK-DAG: %[[HI:.+]] = tensor.extract_slice %[[X]][3, 0] [3, 2] [1, 1] : tensor<6x2xf32> to tensor<3x2xf32>
// SPLIT-DAG: ovl.collective_permute %[[LO]] on @ring axes [0] pairs [0 -> 3, 1 -> 0, 2 -> 1, 3 -> 2] : tensor<3x2xf32>
// SPLIT-DAG: ovl.collective_permute %[[HI]] on @ring axes [0] pairs [0 -> 1, 1 -> 2, 2 -> 3, 3 -> 0] : tensor<3x2xf32>
// UNROLL: scf.for
// UNROLL-DAG: ovl.collective_permute %{{.*}} on @ring axes [0] pairs [0 -> 3, 1 -> 0, 2 -> 1, 3 -> 2] : tensor<3x2xf32>
// UNROLL-DAG: ovl.collective_permute %{{.*}} on @ring axes [0] pairs [0 -> 1, 1 -> 2, 2 -> 3, 3 -> 0] : tensor<3x2xf32>
// CHECK-NOT: tensor<6x8xf32>
// CHECK: %[[RES:.+]] = tensor.concat dim(0) %{{.*}}, %{{.*}} : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<6x5xf32>
// CHECK: return %[[RES]]
func.func @gather(%x: tensor<6x2xf32>, %w: tensor<8x5xf32>) -> tensor<6x5xf32> {
  %g = ovl.all_gather %x on @ring axes [0] dim 1
      : tensor<6x2xf32> -> tensor<6x8xf32>
  %y = ovl.einsum "bf,fh->bh" %g, %w
      : tensor<6x8xf32>, tensor<8x5xf32> -> tensor<6x5xf32>
  return %y : tensor<6x5xf32>
}

// -----

shard.grid @ring(shape = 4)

/// negative_: no free dim of even size to halve (b is 3): the paper's
/// bidirectional loop instead, whole shards both ways, and the remark says
/// which loop was built.
// REMARK: remark: decomposing all_gather along axis 0 (N=4) into a ring loop (case 2, gathered dim contracting (lhs), unroll [[U]], bidirectional)
// CHECK-LABEL: func.func @negative_odd
// CHECK-NOT: tensor.concat dim(0)
// CHECK: ovl.collective_permute %{{.*}} : tensor<3x2xf32>
// CHECK: return
func.func @negative_odd(%x: tensor<3x2xf32>, %w: tensor<8x5xf32>)
    -> tensor<3x5xf32> {
  %g = ovl.all_gather %x on @ring axes [0] dim 1
      : tensor<3x2xf32> -> tensor<3x8xf32>
  %y = ovl.einsum "bf,fh->bh" %g, %w
      : tensor<3x8xf32>, tensor<8x5xf32> -> tensor<3x5xf32>
  return %y : tensor<3x5xf32>
}

// -----

shard.grid @ring(shape = 4)

/// negative_: the only other dim (f) is contracted with the other operand,
/// so halving it would add partial sums, not halve the result: bidirectional.
// REMARK: remark: decomposing all_gather along axis 0 (N=4) into a ring loop (case 1, gathered dim free (rhs), unroll [[U]], bidirectional)
// CHECK-LABEL: func.func @negative_contracted
func.func @negative_contracted(%x: tensor<2x8xf32>, %w: tensor<8x4xf32>)
    -> tensor<2x16xf32> {
  %g = ovl.all_gather %w on @ring axes [0] dim 1
      : tensor<8x4xf32> -> tensor<8x16xf32>
  %y = ovl.einsum "bf,fh->bh" %x, %g
      : tensor<2x8xf32>, tensor<8x16xf32> -> tensor<2x16xf32>
  return %y : tensor<2x16xf32>
}
