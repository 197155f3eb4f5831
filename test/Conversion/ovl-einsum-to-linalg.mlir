// RUN: overlap-opt %s --pass-pipeline="builtin.module(func.func(ovl-einsum-to-linalg))" --split-input-file | FileCheck %s --implicit-check-not=ovl.einsum

// Each einsum becomes one linalg.generic: output letters are the leading
// parallel loops, summed letters trail as reductions.

// CHECK-DAG: #[[LHS:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[RHS:.+]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-DAG: #[[OUT:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
/// A matmul: zero-filled init, multiply-add body.
// CHECK-LABEL: func.func @matmul
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<2x8xf32>, %[[W:[a-z0-9]+]]: tensor<8x16xf32>)
// CHECK: %[[EMPTY:.+]] = tensor.empty() : tensor<2x16xf32>
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[INIT:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[EMPTY]] : tensor<2x16xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[LHS]], #[[RHS]], #[[OUT]]], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%[[X]], %[[W]] : tensor<2x8xf32>, tensor<8x16xf32>) outs(%[[INIT]] : tensor<2x16xf32>)
// CHECK: ^bb0(%[[A:.+]]: f32, %[[B:.+]]: f32, %[[C:.+]]: f32):
// CHECK:   %[[P:.+]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK:   %[[S:.+]] = arith.addf %[[C]], %[[P]] : f32
// CHECK:   linalg.yield %[[S]] : f32
func.func @matmul(%x: tensor<2x8xf32>, %w: tensor<8x16xf32>) -> tensor<2x16xf32> {
  %0 = ovl.einsum "bf,fh->bh" %x, %w : tensor<2x8xf32>, tensor<8x16xf32> -> tensor<2x16xf32>
  return %0 : tensor<2x16xf32>
}

// -----

// CHECK-DAG: #[[LHS:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[RHS:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
// CHECK-DAG: #[[OUT:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
/// Batch dims, an accumulator as the init, bf16 products accumulated in f32.
// CHECK-LABEL: func.func @batched_mixed_precision_acc
// CHECK-SAME: %[[ACC:[a-z0-9]+]]: tensor<2x4x16xf32>
// CHECK-NOT: linalg.fill
// CHECK: linalg.generic {indexing_maps = [#[[LHS]], #[[RHS]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// CHECK-SAME: outs(%[[ACC]] : tensor<2x4x16xf32>)
// CHECK: ^bb0(%[[A:.+]]: bf16, %[[B:.+]]: bf16, %[[C:.+]]: f32):
// CHECK:   %[[EA:.+]] = arith.extf %[[A]] : bf16 to f32
// CHECK:   %[[EB:.+]] = arith.extf %[[B]] : bf16 to f32
// CHECK:   arith.mulf %[[EA]], %[[EB]] : f32
func.func @batched_mixed_precision_acc(%a: tensor<2x4x8xbf16>, %b: tensor<2x8x16xbf16>, %acc: tensor<2x4x16xf32>) -> tensor<2x4x16xf32> {
  %0 = ovl.einsum "bsf,bfh->bsh" %a, %b acc %acc : tensor<2x4x8xbf16>, tensor<2x8x16xbf16> -> tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// -----

/// Integers sign-extend and use integer arithmetic.
// CHECK-LABEL: func.func @int8
// CHECK: arith.constant 0 : i32
// CHECK: arith.extsi %{{.*}} : i8 to i32
// CHECK: arith.muli
// CHECK: arith.addi
func.func @int8(%a: tensor<4x8xi8>, %b: tensor<8x4xi8>) -> tensor<4x4xi32> {
  %0 = ovl.einsum "mk,kn->mn" %a, %b : tensor<4x8xi8>, tensor<8x4xi8> -> tensor<4x4xi32>
  return %0 : tensor<4x4xi32>
}

// -----

// CHECK-DAG: #[[IN:.+]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-DAG: #[[OUT:.+]] = affine_map<(d0, d1) -> (d0, d1)>
/// One input: a transpose is a copy into the permuted init.
// CHECK-LABEL: func.func @transpose
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]], iterator_types = ["parallel", "parallel"]}
// CHECK: ^bb0(%[[A:.+]]: f16, %[[C:.+]]: f16):
// CHECK:   arith.addf %[[C]], %[[A]] : f16
func.func @transpose(%a: tensor<4x8xf16>) -> tensor<8x4xf16> {
  %0 = ovl.einsum "ij->ji" %a : tensor<4x8xf16> -> tensor<8x4xf16>
  return %0 : tensor<8x4xf16>
}

// -----

/// Dynamic result dims take their size from the input that has the letter.
// CHECK-LABEL: func.func @dynamic
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<?x8xf32>, %[[W:[a-z0-9]+]]: tensor<8x?xf32>)
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.+]] = arith.constant 1 : index
// CHECK-DAG: %[[B:.+]] = tensor.dim %[[X]], %[[C0]]
// CHECK-DAG: %[[H:.+]] = tensor.dim %[[W]], %[[C1]]
// CHECK: tensor.empty(%[[B]], %[[H]]) : tensor<?x?xf32>
func.func @dynamic(%x: tensor<?x8xf32>, %w: tensor<8x?xf32>) -> tensor<?x?xf32> {
  %0 = ovl.einsum "bf,fh->bh" %x, %w : tensor<?x8xf32>, tensor<8x?xf32> -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}

// -----

/// Three inputs multiply together before the add.
// CHECK-LABEL: func.func @three_inputs
// CHECK: ^bb0(%[[A:.+]]: f32, %[[B:.+]]: f32, %[[C:.+]]: f32, %[[O:.+]]: f32):
// CHECK:   %[[AB:.+]] = arith.mulf %[[A]], %[[B]]
// CHECK:   %[[ABC:.+]] = arith.mulf %[[AB]], %[[C]]
// CHECK:   arith.addf %[[O]], %[[ABC]]
func.func @three_inputs(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>, %c: tensor<4x5xf32>) -> tensor<2x5xf32> {
  %0 = ovl.einsum "ij,jk,kl->il" %a, %b, %c : tensor<2x3xf32>, tensor<3x4xf32>, tensor<4x5xf32> -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}
