// RUN: split-file %s %t
// RUN: overlap-run %t/matmul.mlir --reference %t/matmul_ref.mlir | FileCheck %s --check-prefix=EQUAL
// RUN: overlap-run %t/batched.mlir --reference %t/batched_ref.mlir | FileCheck %s --check-prefix=EQUAL
// RUN: overlap-run %t/transposed.mlir --reference %t/transposed_ref.mlir | FileCheck %s --check-prefix=EQUAL
// RUN: overlap-run %t/bf16.mlir --reference %t/bf16_ref.mlir | FileCheck %s --check-prefix=EQUAL
// RUN: overlap-run %t/int8.mlir --reference %t/int8_ref.mlir | FileCheck %s --check-prefix=EXACT
// RUN: overlap-run %t/acc.mlir --reference %t/acc_ref.mlir --seed 7 | FileCheck %s --check-prefix=EQUAL
// RUN: not overlap-run %t/matmul.mlir --reference %t/wrong_ref.mlir | FileCheck %s --check-prefix=WRONG

// ovl.einsum on the CPU runtime against references built from linalg named
// ops (a different lowering path) on the same random inputs.

// EQUAL: reference {{.*}}: equal (max abs error
// EXACT: reference {{.*}}: equal (max abs error 0.000000e+00, max rel error 0.000000e+00; rtol relative to tensor-scale)
// WRONG: reference {{.*}}wrong_ref.mlir: NOT EQUAL
// WRONG-NEXT: first difference: device 0 output 0 at [0, {{[0-9]+}}]

//--- matmul.mlir
func.func @main(%x: tensor<16x32xf32>, %w: tensor<32x24xf32>) -> tensor<16x24xf32> {
  %y = ovl.einsum "bf,fh->bh" %x, %w : tensor<16x32xf32>, tensor<32x24xf32> -> tensor<16x24xf32>
  return %y : tensor<16x24xf32>
}

//--- matmul_ref.mlir
func.func @main(%x: tensor<16x32xf32>, %w: tensor<32x24xf32>) -> tensor<16x24xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x24xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<16x24xf32>) -> tensor<16x24xf32>
  %y = linalg.matmul ins(%x, %w : tensor<16x32xf32>, tensor<32x24xf32>) outs(%init : tensor<16x24xf32>) -> tensor<16x24xf32>
  return %y : tensor<16x24xf32>
}

//--- wrong_ref.mlir
/// Contracts against the other dim of %w's transpose: a different result.
func.func @main(%x: tensor<16x32xf32>, %w: tensor<32x24xf32>) -> tensor<16x24xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x24xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<16x24xf32>) -> tensor<16x24xf32>
  %wr = tensor.empty() : tensor<32x24xf32>
  %rev = linalg.generic {indexing_maps = [affine_map<(i, j) -> (31 - i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<32x24xf32>) outs(%wr : tensor<32x24xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  } -> tensor<32x24xf32>
  %y = linalg.matmul ins(%x, %rev : tensor<16x32xf32>, tensor<32x24xf32>) outs(%init : tensor<16x24xf32>) -> tensor<16x24xf32>
  return %y : tensor<16x24xf32>
}

//--- batched.mlir
func.func @main(%a: tensor<3x8x16xf32>, %b: tensor<3x16x4xf32>) -> tensor<3x8x4xf32> {
  %y = ovl.einsum "bsf,bfh->bsh" %a, %b : tensor<3x8x16xf32>, tensor<3x16x4xf32> -> tensor<3x8x4xf32>
  return %y : tensor<3x8x4xf32>
}

//--- batched_ref.mlir
func.func @main(%a: tensor<3x8x16xf32>, %b: tensor<3x16x4xf32>) -> tensor<3x8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x8x4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<3x8x4xf32>) -> tensor<3x8x4xf32>
  %y = linalg.batch_matmul ins(%a, %b : tensor<3x8x16xf32>, tensor<3x16x4xf32>) outs(%init : tensor<3x8x4xf32>) -> tensor<3x8x4xf32>
  return %y : tensor<3x8x4xf32>
}

//--- transposed.mlir
/// Both operands transposed: y[b, h] = sum_f x[f, b] w[h, f].
func.func @main(%x: tensor<32x16xf32>, %w: tensor<24x32xf32>) -> tensor<16x24xf32> {
  %y = ovl.einsum "fb,hf->bh" %x, %w : tensor<32x16xf32>, tensor<24x32xf32> -> tensor<16x24xf32>
  return %y : tensor<16x24xf32>
}

//--- transposed_ref.mlir
func.func @main(%x: tensor<32x16xf32>, %w: tensor<24x32xf32>) -> tensor<16x24xf32> {
  %zero = arith.constant 0.0 : f32
  %xe = tensor.empty() : tensor<16x32xf32>
  %xt = linalg.transpose ins(%x : tensor<32x16xf32>) outs(%xe : tensor<16x32xf32>) permutation = [1, 0]
  %we = tensor.empty() : tensor<32x24xf32>
  %wt = linalg.transpose ins(%w : tensor<24x32xf32>) outs(%we : tensor<32x24xf32>) permutation = [1, 0]
  %e = tensor.empty() : tensor<16x24xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<16x24xf32>) -> tensor<16x24xf32>
  %y = linalg.matmul ins(%xt, %wt : tensor<16x32xf32>, tensor<32x24xf32>) outs(%init : tensor<16x24xf32>) -> tensor<16x24xf32>
  return %y : tensor<16x24xf32>
}

//--- bf16.mlir
/// bf16 products accumulated in f32.
func.func @main(%x: tensor<8x64xbf16>, %w: tensor<64x8xbf16>) -> tensor<8x8xf32> {
  %y = ovl.einsum "bf,fh->bh" %x, %w : tensor<8x64xbf16>, tensor<64x8xbf16> -> tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}

//--- bf16_ref.mlir
func.func @main(%x: tensor<8x64xbf16>, %w: tensor<64x8xbf16>) -> tensor<8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  %y = linalg.matmul ins(%x, %w : tensor<8x64xbf16>, tensor<64x8xbf16>) outs(%init : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}

//--- int8.mlir
func.func @main(%x: tensor<8x16xi8>, %w: tensor<16x4xi8>) -> tensor<8x4xi32> {
  %y = ovl.einsum "mk,kn->mn" %x, %w : tensor<8x16xi8>, tensor<16x4xi8> -> tensor<8x4xi32>
  return %y : tensor<8x4xi32>
}

//--- int8_ref.mlir
func.func @main(%x: tensor<8x16xi8>, %w: tensor<16x4xi8>) -> tensor<8x4xi32> {
  %zero = arith.constant 0 : i32
  %e = tensor.empty() : tensor<8x4xi32>
  %init = linalg.fill ins(%zero : i32) outs(%e : tensor<8x4xi32>) -> tensor<8x4xi32>
  %y = linalg.matmul ins(%x, %w : tensor<8x16xi8>, tensor<16x4xi8>) outs(%init : tensor<8x4xi32>) -> tensor<8x4xi32>
  return %y : tensor<8x4xi32>
}

//--- acc.mlir
/// An accumulator input: y = c + x w.
func.func @main(%x: tensor<4x8xf32>, %w: tensor<8x4xf32>, %c: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %y = ovl.einsum "bf,fh->bh" %x, %w acc %c : tensor<4x8xf32>, tensor<8x4xf32> -> tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}

//--- acc_ref.mlir
func.func @main(%x: tensor<4x8xf32>, %w: tensor<8x4xf32>, %c: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %y = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x4xf32>) outs(%c : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %y : tensor<4x4xf32>
}
