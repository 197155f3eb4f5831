// RUN: overlap-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(ovl-decompose-collective-einsum{gate=always unroll=1 bidirectional=false}))" | FileCheck %s --check-prefixes=CHECK,UNI
// RUN: overlap-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(ovl-decompose-collective-einsum{gate=always bidirectional=split unroll=1}))" | FileCheck %s --check-prefixes=CHECK,SPLIT

// A gathered tensor with users after its einsum: the loop computes the
// einsum and assembles the gathered tensor from the shards that pass
// through, for the later users (here an einsum that reads the first one's
// result, as a backward pass reads the forward's, and the return). Before,
// the later einsum was taken into the loop and read a result the loop had
// not made yet (invalid IR). That the results are right is checked by
// execution (test/Decompose/matrix.test, the "_later_" programs).

shard.grid @ring(shape = 4)

// CHECK-LABEL: func.func @forward_and_backward
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<6x2xf32>, %[[W:[a-z0-9]+]]: tensor<8x5xf32>)
// CHECK: %[[EMPTY:.+]] = tensor.empty() : tensor<6x8xf32>
// UNI: %[[FIRST:.+]] = tensor.insert_slice %[[X]] into %[[EMPTY]][0, %{{.*}}] [6, 2] [1, 1] : tensor<6x2xf32> into tensor<6x8xf32>
// UNI: %[[LOOP:.+]]:3 = scf.for {{.*}} iter_args(%[[SHARD:[a-z0-9_]+]] = %{{.*}}, %{{.*}} = %{{.*}}, %[[ASM:[a-z0-9_]+]] = %[[FIRST]])
// UNI: %[[IN:.+]] = tensor.insert_slice %[[SHARD]] into %[[ASM]][0, %{{.*}}] [6, 2] [1, 1] : tensor<6x2xf32> into tensor<6x8xf32>
// UNI: ovl.einsum "bf,fh->bh" %[[SHARD]], %{{.*}}
// UNI: scf.yield %{{.*}}, %{{.*}}, %[[IN]]
// UNI: %[[FULL:.+]] = tensor.insert_slice %[[LOOP]]#0 into %[[LOOP]]#2
// SPLIT: scf.for
// SPLIT-DAG: tensor.insert_slice %{{.*}} into %{{.*}}[0, %{{.*}}] [3, 2] [1, 1] : tensor<3x2xf32> into tensor<6x8xf32>
// SPLIT-DAG: tensor.insert_slice %{{.*}} into %{{.*}}[3, %{{.*}}] [3, 2] [1, 1] : tensor<3x2xf32> into tensor<6x8xf32>
// SPLIT: scf.yield
// SPLIT: %[[FULL:.+]] = tensor.insert_slice %{{.*}} into %{{.*}}[3, %{{.*}}] [3, 2] [1, 1] : tensor<3x2xf32> into tensor<6x8xf32>
// CHECK-NOT: ovl.all_gather
// UNI: %[[Y:.+]] = ovl.einsum "bf,fh->bh" %[[LOOP]]#0
// SPLIT: %[[Y:.+]] = tensor.concat
// CHECK: %[[Z:.+]] = ovl.einsum "bh,bf->fh" %[[Y]], %[[FULL]]
// CHECK: return %[[Y]], %[[Z]], %[[FULL]]
func.func @forward_and_backward(%x: tensor<6x2xf32>, %w: tensor<8x5xf32>)
    -> (tensor<6x5xf32>, tensor<8x5xf32>, tensor<6x8xf32>) {
  %g = ovl.all_gather %x on @ring axes [0] dim 1 : tensor<6x2xf32> -> tensor<6x8xf32>
  %y = ovl.einsum "bf,fh->bh" %g, %w : tensor<6x8xf32>, tensor<8x5xf32> -> tensor<6x5xf32>
  %z = ovl.einsum "bh,bf->fh" %y, %g : tensor<6x5xf32>, tensor<6x8xf32> -> tensor<8x5xf32>
  return %y, %z, %g : tensor<6x5xf32>, tensor<8x5xf32>, tensor<6x8xf32>
}
