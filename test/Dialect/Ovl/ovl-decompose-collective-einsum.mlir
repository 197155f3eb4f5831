// RUN: overlap-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(ovl-decompose-collective-einsum{gate=always unroll=1 bidirectional=false}))" | FileCheck %s --check-prefixes=CHECK,UNI
// RUN: overlap-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(ovl-decompose-collective-einsum{gate=always unroll=2 bidirectional=false}))" | FileCheck %s --check-prefixes=CHECK,UNROLL
// RUN: overlap-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(ovl-decompose-collective-einsum{gate=always bidirectional=true unroll=1}))" | FileCheck %s --check-prefixes=CHECK,BIDI

// The loop structure, slices and ring pairs of each decomposition. That the
// results are right is checked by execution (test/Decompose/matrix.test).

shard.grid @ring(shape = 4)

/// AllGather case 1: the gathered dim (h) is free in the gathered operand;
/// partial results are inserted at the held shard's offset.
// CHECK-LABEL: func.func @case1
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<2x8xf32>, %[[W:[a-z0-9]+]]: tensor<8x4xf32>)
// CHECK: %[[ID:.+]] = ovl.partition_id on @ring axes [0] : index
// CHECK: %[[EMPTY:.+]] = tensor.empty() : tensor<2x16xf32>
// UNI: %[[LOOP:.+]]:2 = scf.for %[[K:.+]] = %{{.*}} to %[[C3:.+]] step {{.*}} iter_args(%[[SHARD:.+]] = %[[W]], %[[ACC:.+]] = %[[EMPTY]])
// UNI:   %[[NEXT:.+]] = ovl.collective_permute %[[SHARD]] on @ring axes [0] pairs [0 -> 3, 1 -> 0, 2 -> 1, 3 -> 2] : tensor<8x4xf32>
// UNI:   %[[SUM:.+]] = arith.addi %[[ID]], %[[K]] : index
// UNI:   %[[J:.+]] = arith.remui %[[SUM]], %{{.*}} : index
// UNI:   %[[OFF:.+]] = arith.muli %[[J]], %{{.*}} : index
// UNI:   %[[PART:.+]] = ovl.einsum "bf,fh->bh" %[[X]], %[[SHARD]] : tensor<2x8xf32>, tensor<8x4xf32> -> tensor<2x4xf32>
// UNI:   %[[INS:.+]] = tensor.insert_slice %[[PART]] into %[[ACC]][0, %[[OFF]]] [2, 4] [1, 1]
// UNI:   scf.yield %[[NEXT]], %[[INS]]
/// The last step has no permute: its data would be thrown away.
// UNI-NOT: ovl.collective_permute
// UNI: %[[LAST:.+]] = ovl.einsum "bf,fh->bh" %[[X]], %[[LOOP]]#0
// UNI: %[[RES:.+]] = tensor.insert_slice %[[LAST]] into %[[LOOP]]#1
// UNI: return %[[RES]]
/// Unrolled: two steps per iteration, then the odd permuted step and the
/// last step.
// UNROLL: scf.for
// UNROLL-COUNT-2: ovl.collective_permute
// UNROLL: scf.yield
// UNROLL: ovl.collective_permute
// UNROLL-COUNT-2: ovl.einsum
// UNROLL-NOT: ovl.collective_permute
// UNROLL: return
/// Bidirectional on 4 devices: the own shard first while both directions
/// start, one round computing the shards from both sides concatenated, then
/// the opposite shard (id + 2) from the left-moving chain.
// BIDI: %[[L:.+]] = ovl.collective_permute %[[W]] on @ring axes [0] pairs [0 -> 3, 1 -> 0, 2 -> 1, 3 -> 2]
// BIDI: %[[R:.+]] = ovl.collective_permute %[[W]] on @ring axes [0] pairs [0 -> 1, 1 -> 2, 2 -> 3, 3 -> 0]
// BIDI: ovl.einsum "bf,fh->bh" %[[X]], %[[W]] :
// BIDI: %[[L2:.+]] = ovl.collective_permute %[[L]] on @ring axes [0] pairs [0 -> 3, 1 -> 0, 2 -> 1, 3 -> 2]
// BIDI: %[[BOTH:.+]] = tensor.concat dim(1) %[[L]], %[[R]] : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x8xf32>
// BIDI: %[[PAIR:.+]] = ovl.einsum "bf,fh->bh" %[[X]], %[[BOTH]] : tensor<2x8xf32>, tensor<8x8xf32> -> tensor<2x8xf32>
// BIDI: tensor.extract_slice %[[PAIR]][0, 0] [2, 4]
// BIDI: tensor.extract_slice %[[PAIR]][0, 4] [2, 4]
// BIDI-NOT: ovl.collective_permute
// BIDI: ovl.einsum "bf,fh->bh" %[[X]], %[[L2]]
// BIDI: return
func.func @case1(%x: tensor<2x8xf32>, %w: tensor<8x4xf32>) -> tensor<2x16xf32> {
  %g = ovl.all_gather %w on @ring axes [0] dim 1 : tensor<8x4xf32> -> tensor<8x16xf32>
  %y = ovl.einsum "bf,fh->bh" %x, %g : tensor<2x8xf32>, tensor<8x16xf32> -> tensor<2x16xf32>
  return %y : tensor<2x16xf32>
}

// -----

shard.grid @ring(shape = 4)

/// AllGather case 2 with the gathered operand on the left: the other operand
/// is sliced along the contracting dim and partial results accumulate in
/// the einsum's accumulator. The first round's partial result starts the
/// sum (no zero fill to add into), so it is emitted before the loop.
// CHECK-LABEL: func.func @case2_lhs
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<2x2xf32>, %[[W:[a-z0-9]+]]: tensor<8x5xf32>)
// CHECK-NOT: linalg.fill
// UNI: %[[NEXT:.+]] = ovl.collective_permute %[[X]]
// UNI: %[[FIRST:.+]] = ovl.einsum "bf,fh->bh" %[[X]], %{{.*}} : tensor<2x2xf32>, tensor<2x5xf32> -> tensor<2x5xf32>
// UNI: scf.for {{.*}} iter_args(%[[SHARD:.+]] = %[[NEXT]], %[[ACC:.+]] = %[[FIRST]])
// UNI:   %[[SLICE:.+]] = tensor.extract_slice %[[W]][%{{.*}}, 0] [2, 5] [1, 1] : tensor<8x5xf32> to tensor<2x5xf32>
// UNI:   ovl.einsum "bf,fh->bh" %[[SHARD]], %[[SLICE]] acc %[[ACC]] : tensor<2x2xf32>, tensor<2x5xf32> -> tensor<2x5xf32>
// BIDI: tensor.concat dim(1) {{.*}} -> tensor<2x4xf32>
// BIDI: tensor.concat dim(0) {{.*}} -> tensor<4x5xf32>
// BIDI: ovl.einsum "bf,fh->bh" {{.*}} acc {{.*}} : tensor<2x4xf32>, tensor<4x5xf32> -> tensor<2x5xf32>
func.func @case2_lhs(%x: tensor<2x2xf32>, %w: tensor<8x5xf32>) -> tensor<2x5xf32> {
  %g = ovl.all_gather %x on @ring axes [0] dim 1 : tensor<2x2xf32> -> tensor<2x8xf32>
  %y = ovl.einsum "bf,fh->bh" %g, %w : tensor<2x8xf32>, tensor<8x5xf32> -> tensor<2x5xf32>
  return %y : tensor<2x5xf32>
}

// -----

shard.grid @torus(shape = 2x4)

/// AllGather case 3 on axis 1 of a 2-D grid: the batch dim of both operands
/// is sliced and the result inserted along batch.
// CHECK-LABEL: func.func @case3
// CHECK-SAME: (%[[A:[a-z0-9]+]]: tensor<8x4x5xf32>, %[[B:[a-z0-9]+]]: tensor<2x5x7xf32>)
// CHECK: ovl.partition_id on @torus axes [1] : index
// UNI: scf.for
// UNI:   ovl.collective_permute %{{.*}} on @torus axes [1] pairs [0 -> 3, 1 -> 0, 2 -> 1, 3 -> 2]
// UNI:   %[[BATCH:.+]] = tensor.extract_slice %[[A]][%{{.*}}, 0, 0] [2, 4, 5] [1, 1, 1] : tensor<8x4x5xf32> to tensor<2x4x5xf32>
// UNI:   %[[PART:.+]] = ovl.einsum "bsf,bfh->bsh" %[[BATCH]], %{{.*}} : tensor<2x4x5xf32>, tensor<2x5x7xf32> -> tensor<2x4x7xf32>
// UNI:   tensor.insert_slice %[[PART]] into %{{.*}}[%{{.*}}, 0, 0] [2, 4, 7] [1, 1, 1]
func.func @case3(%a: tensor<8x4x5xf32>, %b: tensor<2x5x7xf32>) -> tensor<8x4x7xf32> {
  %gb = ovl.all_gather %b on @torus axes [1] dim 0 : tensor<2x5x7xf32> -> tensor<8x5x7xf32>
  %y = ovl.einsum "bsf,bfh->bsh" %a, %gb : tensor<8x4x5xf32>, tensor<8x5x7xf32> -> tensor<8x4x7xf32>
  return %y : tensor<8x4x7xf32>
}

// -----

shard.grid @ring(shape = 4)

/// Q, K and V projections of one gathered activation: one loop feeds all
/// three einsums, in their order; bidirectionally the two directions'
/// shards are concatenated once for the three.
// CHECK-LABEL: func.func @qkv
// CHECK-SAME: (%{{.*}}: tensor<2x8xf32>, %[[WQ:[a-z0-9]+]]: tensor<8x8xf32>, %[[WK:[a-z0-9]+]]: tensor<8x8xf32>, %[[WV:[a-z0-9]+]]: tensor<8x8xf32>)
// UNI: scf.for
// UNI:   ovl.collective_permute
// UNI:   ovl.einsum "sd,de->se" %{{.*}}, %[[WQ]]
// UNI:   ovl.einsum "sd,de->se" %{{.*}}, %[[WK]]
// UNI:   ovl.einsum "sd,de->se" %{{.*}}, %[[WV]]
// UNI: scf.yield
// UNI-COUNT-3: ovl.einsum
// BIDI: %[[BOTH:.+]] = tensor.concat
// BIDI-NOT: tensor.concat
// BIDI: ovl.einsum "sd,de->se" %[[BOTH]], %[[WQ]]
// BIDI: ovl.einsum "sd,de->se" %[[BOTH]], %[[WK]]
// BIDI: ovl.einsum "sd,de->se" %[[BOTH]], %[[WV]]
// UNI-NOT: scf.for
// CHECK: return
func.func @qkv(%x: tensor<2x8xf32>, %wq: tensor<8x8xf32>, %wk: tensor<8x8xf32>, %wv: tensor<8x8xf32>)
    -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) {
  %g = ovl.all_gather %x on @ring axes [0] dim 0 : tensor<2x8xf32> -> tensor<8x8xf32>
  %q = ovl.einsum "sd,de->se" %g, %wq : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
  %k = ovl.einsum "sd,de->se" %g, %wk : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
  %v = ovl.einsum "sd,de->se" %g, %wv : tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>
  return %q, %k, %v : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

shard.grid @ring(shape = 4)

/// Einsum-ReduceScatter: the partial sum travels left; in round r device id
/// adds the einsum of shard id + r + 1 (its slice of the free operand), so
/// that after the last round it holds shard id. Each round's einsum is
/// computed before the sum it adds to arrives (it does not read it), so
/// the transfer can overlap it.
// CHECK-LABEL: func.func @reduce_scatter
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<3x5xf32>, %[[W:[a-z0-9]+]]: tensor<5x8xf32>)
// CHECK: %[[ID:.+]] = ovl.partition_id on @ring axes [0] : index
// UNI-NOT: linalg.fill
// UNI: %[[FIRST:.+]] = ovl.einsum "bf,fh->bh" %[[X]], %{{.*}} : tensor<3x5xf32>, tensor<5x2xf32> -> tensor<3x2xf32>
// UNI: %[[LOOP:.+]] = scf.for %[[K:.+]] = {{.*}} iter_args(%[[SUM:.+]] = %[[FIRST]]) -> (tensor<3x2xf32>)
// UNI:   %[[MOVED:.+]] = ovl.collective_permute %[[SUM]] on @ring axes [0] pairs [0 -> 3, 1 -> 0, 2 -> 1, 3 -> 2]
// UNI:   %[[T:.+]] = arith.addi %[[ID]], %[[K]] : index
// UNI:   %[[T1:.+]] = arith.addi %[[T]], %{{.*}} : index
// UNI:   %[[SLICE:.+]] = tensor.extract_slice %[[W]][0, %{{.*}}] [5, 2] [1, 1] : tensor<5x8xf32> to tensor<5x2xf32>
// UNI:   %[[PART:.+]] = ovl.einsum "bf,fh->bh" %[[X]], %[[SLICE]] : tensor<3x5xf32>, tensor<5x2xf32> -> tensor<3x2xf32>
// UNI:   %[[ADDED:.+]] = arith.addf %[[PART]], %[[MOVED]] : tensor<3x2xf32>
// UNI:   scf.yield %[[ADDED]]
// UNI-NOT: ovl.einsum
// UNI-NOT: ovl.collective_permute
// UNI: return %[[LOOP]]
/// Unrolled: two interleaved chains hopping two devices, so that one
/// chain's transfer can overlap the other's einsum; on 4 devices two rounds.
/// The second chain ends one device short and takes a one-hop epilogue
/// before the chains are added. Each chain's first einsum starts its sum.
// UNROLL-NOT: linalg.fill
// UNROLL-NOT: scf.for
// UNROLL: %[[A0:.+]] = ovl.einsum
// UNROLL: %[[A1:.+]] = ovl.collective_permute %[[A0]] on @ring axes [0] pairs [0 -> 2, 1 -> 3, 2 -> 0, 3 -> 1]
// UNROLL: %[[B0:.+]] = ovl.einsum
// UNROLL: %[[B1:.+]] = ovl.collective_permute %[[B0]] on @ring axes [0] pairs [0 -> 2, 1 -> 3, 2 -> 0, 3 -> 1]
// UNROLL: %[[A2:.+]] = ovl.einsum {{.*}} acc %[[A1]]
// UNROLL: %[[B2:.+]] = ovl.einsum {{.*}} acc %[[B1]]
// UNROLL: %[[B3:.+]] = ovl.collective_permute %[[B2]] on @ring axes [0] pairs [0 -> 3, 1 -> 0, 2 -> 1, 3 -> 2]
// UNROLL: arith.addf %[[A2]], %[[B3]]
/// Bidirectional: chains travel both ways, computed as one einsum on
/// concatenated slices once both have started (on 4 devices the downward
/// chain starts a round later); the owner adds its own shard last.
// BIDI: ovl.einsum "bf,fh->bh" %[[X]], %{{.*}} : tensor<3x5xf32>, tensor<5x2xf32> -> tensor<3x2xf32>
// BIDI: ovl.collective_permute %{{.*}} pairs [0 -> 3, 1 -> 0, 2 -> 1, 3 -> 2]
// BIDI: tensor.concat dim(1) {{.*}} -> tensor<5x4xf32>
// BIDI: ovl.einsum "bf,fh->bh" %[[X]], %{{.*}} : tensor<3x5xf32>, tensor<5x4xf32> -> tensor<3x4xf32>
// BIDI: arith.addf
// BIDI-DAG: ovl.collective_permute %{{.*}} pairs [0 -> 3, 1 -> 0, 2 -> 1, 3 -> 2]
// BIDI-DAG: ovl.collective_permute %{{.*}} pairs [0 -> 1, 1 -> 2, 2 -> 3, 3 -> 0]
// BIDI: arith.addf
// BIDI: ovl.einsum "bf,fh->bh" %[[X]], %{{.*}} acc
// BIDI-NEXT: return
func.func @reduce_scatter(%x: tensor<3x5xf32>, %w: tensor<5x8xf32>) -> tensor<3x2xf32> {
  %y = ovl.einsum "bf,fh->bh" %x, %w : tensor<3x5xf32>, tensor<5x8xf32> -> tensor<3x8xf32>
  %r = ovl.reduce_scatter %y on @ring axes [0] dim 1 : tensor<3x8xf32> -> tensor<3x2xf32>
  return %r : tensor<3x2xf32>
}
