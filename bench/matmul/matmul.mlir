// f32 matmul kernels benchmarked against OpenBLAS (see README.md).
//
// Every function takes its operands and the destination as tensors and
// returns the result, like the project's einsum lowering does; the body is a
// zero fill of the destination followed by one contraction. The contractions
// come in the forms the schedule has to handle: named `linalg.matmul`, a
// `linalg.generic` written out (as an einsum lowering produces it), matmuls
// with a transposed operand (`indexing_maps` on `linalg.matmul`) and a batch
// matmul.

!A1k = tensor<1024x1024xf32>

func.func @matmul_1024(%A: !A1k, %B: !A1k, %C: !A1k) -> !A1k
    attributes {llvm.emit_c_interface} {
  %zero = arith.constant 0.0 : f32
  %init = linalg.fill ins(%zero : f32) outs(%C : !A1k) -> !A1k
  %r = linalg.matmul ins(%A, %B : !A1k, !A1k) outs(%init : !A1k) -> !A1k
  return %r : !A1k
}

func.func @matmul_512(%A: tensor<512x512xf32>, %B: tensor<512x512xf32>,
                      %C: tensor<512x512xf32>) -> tensor<512x512xf32>
    attributes {llvm.emit_c_interface} {
  %zero = arith.constant 0.0 : f32
  %init = linalg.fill ins(%zero : f32) outs(%C : tensor<512x512xf32>)
      -> tensor<512x512xf32>
  %r = linalg.matmul ins(%A, %B : tensor<512x512xf32>, tensor<512x512xf32>)
                     outs(%init : tensor<512x512xf32>) -> tensor<512x512xf32>
  return %r : tensor<512x512xf32>
}

// One device's share of a 2048x1024 @ 1024x4096 MLP layer, split 8 ways on
// the rows (M = 256, N = 1024 after the N split by 4) ...
func.func @mlp_256x1024x1024(%A: tensor<256x1024xf32>, %B: !A1k,
                             %C: tensor<256x1024xf32>) -> tensor<256x1024xf32>
    attributes {llvm.emit_c_interface} {
  %zero = arith.constant 0.0 : f32
  %init = linalg.fill ins(%zero : f32) outs(%C : tensor<256x1024xf32>)
      -> tensor<256x1024xf32>
  %r = linalg.matmul ins(%A, %B : tensor<256x1024xf32>, !A1k)
                     outs(%init : tensor<256x1024xf32>) -> tensor<256x1024xf32>
  return %r : tensor<256x1024xf32>
}

// ... and split 8 ways on the columns (all 2048 rows, N = 512).
func.func @mlp_2048x512x1024(%A: tensor<2048x1024xf32>,
                             %B: tensor<1024x512xf32>,
                             %C: tensor<2048x512xf32>) -> tensor<2048x512xf32>
    attributes {llvm.emit_c_interface} {
  %zero = arith.constant 0.0 : f32
  %init = linalg.fill ins(%zero : f32) outs(%C : tensor<2048x512xf32>)
      -> tensor<2048x512xf32>
  %r = linalg.matmul ins(%A, %B : tensor<2048x1024xf32>, tensor<1024x512xf32>)
                     outs(%init : tensor<2048x512xf32>) -> tensor<2048x512xf32>
  return %r : tensor<2048x512xf32>
}

// "mk,kn->mn" as a generic, the form an einsum lowering emits.
#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#nk = affine_map<(m, n, k) -> (n, k)>
#km = affine_map<(m, n, k) -> (k, m)>
#mn = affine_map<(m, n, k) -> (m, n)>
func.func @generic_1024(%A: !A1k, %B: !A1k, %C: !A1k) -> !A1k
    attributes {llvm.emit_c_interface} {
  %zero = arith.constant 0.0 : f32
  %init = linalg.fill ins(%zero : f32) outs(%C : !A1k) -> !A1k
  %r = linalg.generic {indexing_maps = [#mk, #kn, #mn],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%A, %B : !A1k, !A1k) outs(%init : !A1k) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> !A1k
  return %r : !A1k
}

// "mk,nk->mn": B transposed (B is N x K).
func.func @matmul_tb_1024(%A: !A1k, %B: !A1k, %C: !A1k) -> !A1k
    attributes {llvm.emit_c_interface} {
  %zero = arith.constant 0.0 : f32
  %init = linalg.fill ins(%zero : f32) outs(%C : !A1k) -> !A1k
  %r = linalg.generic {indexing_maps = [#mk, #nk, #mn],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%A, %B : !A1k, !A1k) outs(%init : !A1k) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> !A1k
  return %r : !A1k
}

// "km,kn->mn": A transposed (A is K x M), as a named op with indexing_maps.
func.func @matmul_ta_1024(%A: !A1k, %B: !A1k, %C: !A1k) -> !A1k
    attributes {llvm.emit_c_interface} {
  %zero = arith.constant 0.0 : f32
  %init = linalg.fill ins(%zero : f32) outs(%C : !A1k) -> !A1k
  %r = linalg.matmul indexing_maps = [#km, #kn, #mn]
      ins(%A, %B : !A1k, !A1k) outs(%init : !A1k) -> !A1k
  return %r : !A1k
}

func.func @batch_4x256(%A: tensor<4x256x256xf32>, %B: tensor<4x256x256xf32>,
                       %C: tensor<4x256x256xf32>) -> tensor<4x256x256xf32>
    attributes {llvm.emit_c_interface} {
  %zero = arith.constant 0.0 : f32
  %init = linalg.fill ins(%zero : f32) outs(%C : tensor<4x256x256xf32>)
      -> tensor<4x256x256xf32>
  %r = linalg.batch_matmul
      ins(%A, %B : tensor<4x256x256xf32>, tensor<4x256x256xf32>)
      outs(%init : tensor<4x256x256xf32>) -> tensor<4x256x256xf32>
  return %r : tensor<4x256x256xf32>
}
