// f32 matmul kernels benchmarked against OpenBLAS (see README.md).
//
// Each function computes C = A * B from tensor operands the way the project's
// einsum lowering does (`tensor.empty` + zero `linalg.fill` + one
// contraction), and stores the result into the caller's buffer `%C` with
// `bufferization.materialize_in_destination`. After `eliminate-empty-tensors`
// and one-shot bufferization the fill and the matmul write straight into `%C`:
// no result allocation, no copy. (Returning the tensor instead makes
// `buffer-deallocation-pipeline` clone the 4 MiB result of a public function
// on every call; see README.md.)
//
// The contractions come in the forms the schedule has to handle: named
// `linalg.matmul`, the same as a `linalg.generic`, transposed operands
// (`indexing_maps` on `linalg.matmul`, or a generic) and `linalg.batch_matmul`.
// The order of functions matches HARNESS_CASES in harness.h.

#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#nk = affine_map<(m, n, k) -> (n, k)>
#km = affine_map<(m, n, k) -> (k, m)>
#mn = affine_map<(m, n, k) -> (m, n)>

func.func @matmul_1024(%A: tensor<1024x1024xf32>, %B: tensor<1024x1024xf32>, %C: memref<1024x1024xf32>)
    attributes {llvm.emit_c_interface} {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<1024x1024xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  %r = linalg.matmul ins(%A, %B : tensor<1024x1024xf32>, tensor<1024x1024xf32>) outs(%init : tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  bufferization.materialize_in_destination %r in restrict writable %C
      : (tensor<1024x1024xf32>, memref<1024x1024xf32>) -> ()
  return
}

func.func @matmul_512(%A: tensor<512x512xf32>, %B: tensor<512x512xf32>, %C: memref<512x512xf32>)
    attributes {llvm.emit_c_interface} {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<512x512xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<512x512xf32>) -> tensor<512x512xf32>
  %r = linalg.matmul ins(%A, %B : tensor<512x512xf32>, tensor<512x512xf32>) outs(%init : tensor<512x512xf32>) -> tensor<512x512xf32>
  bufferization.materialize_in_destination %r in restrict writable %C
      : (tensor<512x512xf32>, memref<512x512xf32>) -> ()
  return
}

// One device's share of a 2048x1024 @ 1024x4096 MLP layer: rows split 8 ways
// (M = 256) and columns 4 ways (N = 1024) ...
func.func @mlp_256x1024x1024(%A: tensor<256x1024xf32>, %B: tensor<1024x1024xf32>, %C: memref<256x1024xf32>)
    attributes {llvm.emit_c_interface} {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<256x1024xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<256x1024xf32>) -> tensor<256x1024xf32>
  %r = linalg.matmul ins(%A, %B : tensor<256x1024xf32>, tensor<1024x1024xf32>) outs(%init : tensor<256x1024xf32>) -> tensor<256x1024xf32>
  bufferization.materialize_in_destination %r in restrict writable %C
      : (tensor<256x1024xf32>, memref<256x1024xf32>) -> ()
  return
}

// ... or only the columns, 8 ways (all 2048 rows, N = 512).
func.func @mlp_2048x512x1024(%A: tensor<2048x1024xf32>, %B: tensor<1024x512xf32>, %C: memref<2048x512xf32>)
    attributes {llvm.emit_c_interface} {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<2048x512xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<2048x512xf32>) -> tensor<2048x512xf32>
  %r = linalg.matmul ins(%A, %B : tensor<2048x1024xf32>, tensor<1024x512xf32>) outs(%init : tensor<2048x512xf32>) -> tensor<2048x512xf32>
  bufferization.materialize_in_destination %r in restrict writable %C
      : (tensor<2048x512xf32>, memref<2048x512xf32>) -> ()
  return
}

// "mk,kn->mn" as a linalg.generic, the form an einsum lowering emits.
func.func @generic_1024(%A: tensor<1024x1024xf32>, %B: tensor<1024x1024xf32>, %C: memref<1024x1024xf32>)
    attributes {llvm.emit_c_interface} {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<1024x1024xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  %r = linalg.generic {indexing_maps = [#mk, #kn, #mn],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%A, %B : tensor<1024x1024xf32>, tensor<1024x1024xf32>) outs(%init : tensor<1024x1024xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<1024x1024xf32>
  bufferization.materialize_in_destination %r in restrict writable %C
      : (tensor<1024x1024xf32>, memref<1024x1024xf32>) -> ()
  return
}

// "mk,nk->mn": B transposed (B is N x K), as a generic.
func.func @matmul_tb_1024(%A: tensor<1024x1024xf32>, %B: tensor<1024x1024xf32>, %C: memref<1024x1024xf32>)
    attributes {llvm.emit_c_interface} {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<1024x1024xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  %r = linalg.generic {indexing_maps = [#mk, #nk, #mn],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%A, %B : tensor<1024x1024xf32>, tensor<1024x1024xf32>) outs(%init : tensor<1024x1024xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<1024x1024xf32>
  bufferization.materialize_in_destination %r in restrict writable %C
      : (tensor<1024x1024xf32>, memref<1024x1024xf32>) -> ()
  return
}

// "km,kn->mn": A transposed (A is K x M), as a named op with indexing_maps.
func.func @matmul_ta_1024(%A: tensor<1024x1024xf32>, %B: tensor<1024x1024xf32>, %C: memref<1024x1024xf32>)
    attributes {llvm.emit_c_interface} {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<1024x1024xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  %r = linalg.matmul indexing_maps = [#km, #kn, #mn]
      ins(%A, %B : tensor<1024x1024xf32>, tensor<1024x1024xf32>) outs(%init : tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  bufferization.materialize_in_destination %r in restrict writable %C
      : (tensor<1024x1024xf32>, memref<1024x1024xf32>) -> ()
  return
}

func.func @batch_4x256(%A: tensor<4x256x256xf32>, %B: tensor<4x256x256xf32>, %C: memref<4x256x256xf32>)
    attributes {llvm.emit_c_interface} {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x256x256xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x256x256xf32>) -> tensor<4x256x256xf32>
  %r = linalg.batch_matmul ins(%A, %B : tensor<4x256x256xf32>, tensor<4x256x256xf32>)
      outs(%init : tensor<4x256x256xf32>) -> tensor<4x256x256xf32>
  bufferization.materialize_in_destination %r in restrict writable %C
      : (tensor<4x256x256xf32>, memref<4x256x256xf32>) -> ()
  return
}

// Sizes that are not multiples of any tile size (peeled blocks and tiles).
func.func @odd_1000(%A: tensor<1000x1000xf32>, %B: tensor<1000x1000xf32>,
                    %C: memref<1000x1000xf32>)
    attributes {llvm.emit_c_interface} {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<1000x1000xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<1000x1000xf32>)
      -> tensor<1000x1000xf32>
  %r = linalg.matmul
      ins(%A, %B : tensor<1000x1000xf32>, tensor<1000x1000xf32>)
      outs(%init : tensor<1000x1000xf32>) -> tensor<1000x1000xf32>
  bufferization.materialize_in_destination %r in restrict writable %C
      : (tensor<1000x1000xf32>, memref<1000x1000xf32>) -> ()
  return
}

func.func @odd_1030x1100x1000(%A: tensor<1030x1000xf32>,
                              %B: tensor<1000x1100xf32>,
                              %C: memref<1030x1100xf32>)
    attributes {llvm.emit_c_interface} {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<1030x1100xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<1030x1100xf32>)
      -> tensor<1030x1100xf32>
  %r = linalg.matmul
      ins(%A, %B : tensor<1030x1000xf32>, tensor<1000x1100xf32>)
      outs(%init : tensor<1030x1100xf32>) -> tensor<1030x1100xf32>
  bufferization.materialize_in_destination %r in restrict writable %C
      : (tensor<1030x1100xf32>, memref<1030x1100xf32>) -> ()
  return
}
