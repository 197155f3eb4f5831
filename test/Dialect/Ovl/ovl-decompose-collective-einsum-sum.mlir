// RUN: overlap-opt %s --pass-pipeline="builtin.module(func.func(ovl-decompose-collective-einsum{gate=always remarks=true unroll=1 bidirectional=false}))" 2>&1 | FileCheck %s --check-prefixes=CHECK,UNI
// RUN: overlap-opt %s --pass-pipeline="builtin.module(func.func(ovl-decompose-collective-einsum{gate=always bidirectional=split remarks=true unroll=1}))" 2>&1 | FileCheck %s --check-prefixes=CHECK,SPLIT

// A reduce_scatter of a sum of einsums (the gradient of an input that Q, K
// and V read is dQ Wq + dK Wk + dV Wv): one loop whose rounds compute each
// einsum's partial result for the shard, each accumulating into the last,
// so the travelling sum carries all three. The einsums may differ
// (equations, contracted sizes) as long as each has the scattered letter
// and, for a split loop, the halved one. That the results are right is
// checked by execution (test/Decompose/matrix.test, the "rs_sum" programs).

shard.grid @ring(shape = 4)

// UNI: remark: decomposing reduce_scatter along axis 0 (N=4) into a ring loop (einsum-reduce_scatter of a sum of 3 einsums, unroll 1, unidirectional)
// SPLIT: remark: decomposing reduce_scatter along axis 0 (N=4) into a ring loop (einsum-reduce_scatter of a sum of 3 einsums, unroll 1, split)
// CHECK-LABEL: func.func @input_grad
// CHECK-SAME: (%[[DQ:[a-z0-9]+]]: tensor<6x8xf32>, %[[WQ:[a-z0-9]+]]: tensor<16x8xf32>, %[[DK:[a-z0-9]+]]: tensor<6x8xf32>, %[[WK:[a-z0-9]+]]: tensor<16x8xf32>, %[[DV:[a-z0-9]+]]: tensor<6x5xf32>, %[[WV:[a-z0-9]+]]: tensor<16x5xf32>)
// CHECK-NOT: arith.addf {{.*}} : tensor<6x16xf32>
// CHECK: scf.for
// UNI: ovl.collective_permute
// UNI: %[[P1:.+]] = ovl.einsum "bn,dn->bd" %[[DQ]], %{{.*}} : tensor<6x8xf32>, tensor<4x8xf32> -> tensor<6x4xf32>
// UNI: %[[P2:.+]] = ovl.einsum "bn,dn->bd" %[[DK]], %{{.*}} acc %[[P1]] : tensor<6x8xf32>, tensor<4x8xf32> -> tensor<6x4xf32>
// UNI: %[[P3:.+]] = ovl.einsum "bm,dm->bd" %[[DV]], %{{.*}} acc %[[P2]] : tensor<6x5xf32>, tensor<4x5xf32> -> tensor<6x4xf32>
// UNI: arith.addf %[[P3]], %{{.*}} : tensor<6x4xf32>
// SPLIT: %[[P1:.+]] = ovl.einsum "bn,dn->bd" %{{.*}}, %{{.*}} : tensor<3x8xf32>, tensor<4x8xf32> -> tensor<3x4xf32>
// SPLIT: %[[P2:.+]] = ovl.einsum "bn,dn->bd" %{{.*}}, %{{.*}} acc %[[P1]] : tensor<3x8xf32>, tensor<4x8xf32> -> tensor<3x4xf32>
// SPLIT: ovl.einsum "bm,dm->bd" %{{.*}}, %{{.*}} acc %[[P2]] : tensor<3x5xf32>, tensor<4x5xf32> -> tensor<3x4xf32>
// SPLIT: tensor.concat dim(0) {{.*}} -> tensor<6x4xf32>
// CHECK-NOT: ovl.reduce_scatter
// CHECK: return
func.func @input_grad(%dq: tensor<6x8xf32>, %wq: tensor<16x8xf32>,
                      %dk: tensor<6x8xf32>, %wk: tensor<16x8xf32>,
                      %dv: tensor<6x5xf32>, %wv: tensor<16x5xf32>) -> tensor<6x4xf32> {
  %q = ovl.einsum "bn,dn->bd" %dq, %wq : tensor<6x8xf32>, tensor<16x8xf32> -> tensor<6x16xf32>
  %k = ovl.einsum "bn,dn->bd" %dk, %wk : tensor<6x8xf32>, tensor<16x8xf32> -> tensor<6x16xf32>
  %v = ovl.einsum "bm,dm->bd" %dv, %wv : tensor<6x5xf32>, tensor<16x5xf32> -> tensor<6x16xf32>
  %qk = arith.addf %q, %k : tensor<6x16xf32>
  %sum = arith.addf %qk, %v : tensor<6x16xf32>
  %r = ovl.reduce_scatter %sum on @ring axes [0] dim 1 : tensor<6x16xf32> -> tensor<6x4xf32>
  return %r : tensor<6x4xf32>
}
