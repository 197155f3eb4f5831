// Correctness checks for the schedule on IR around and beside the kernels
// (checked by check_misc.c against naive loops; not timed):
//   - two dependent contractions in one function, and an elementwise
//     epilogue (bias + ReLU) after a contraction: other ops are left alone;
//   - sizes that are not multiples of any tile size;
//   - contractions the schedule must not touch (f64; loops in the order
//     (n, m, k); dynamic sizes), which the pipeline lowers to plain loops.

#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
#n_mk = affine_map<(n, m, k) -> (m, k)>
#n_kn = affine_map<(n, m, k) -> (k, n)>
#n_mn = affine_map<(n, m, k) -> (m, n)>
#id = affine_map<(m, n) -> (m, n)>
#row = affine_map<(m, n) -> (n)>

// D = (A * B) * C, A 200x300, B 300x150, C 150x70.
func.func @two_matmuls(%A: tensor<200x300xf32>, %B: tensor<300x150xf32>,
                       %C: tensor<150x70xf32>, %D: memref<200x70xf32>)
    attributes {llvm.emit_c_interface} {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<200x150xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<200x150xf32>)
      -> tensor<200x150xf32>
  %ab = linalg.matmul ins(%A, %B : tensor<200x300xf32>, tensor<300x150xf32>)
                      outs(%f0 : tensor<200x150xf32>) -> tensor<200x150xf32>
  %e1 = tensor.empty() : tensor<200x70xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<200x70xf32>)
      -> tensor<200x70xf32>
  %abc = linalg.matmul ins(%ab, %C : tensor<200x150xf32>, tensor<150x70xf32>)
                       outs(%f1 : tensor<200x70xf32>) -> tensor<200x70xf32>
  bufferization.materialize_in_destination %abc in restrict writable %D
      : (tensor<200x70xf32>, memref<200x70xf32>) -> ()
  return
}

// Y = relu(X * W + bias), X 333x260, W 260x520, bias 520.
func.func @matmul_bias_relu(%X: tensor<333x260xf32>, %W: tensor<260x520xf32>,
                            %bias: tensor<520xf32>, %Y: memref<333x520xf32>)
    attributes {llvm.emit_c_interface} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<333x520xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<333x520xf32>)
      -> tensor<333x520xf32>
  %xw = linalg.generic {indexing_maps = [#mk, #kn, #mn],
                        iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%X, %W : tensor<333x260xf32>, tensor<260x520xf32>)
      outs(%f : tensor<333x520xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<333x520xf32>
  %e2 = tensor.empty() : tensor<333x520xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #id],
                       iterator_types = ["parallel", "parallel"]}
      ins(%xw, %bias : tensor<333x520xf32>, tensor<520xf32>)
      outs(%e2 : tensor<333x520xf32>) {
  ^bb0(%v: f32, %b: f32, %o: f32):
    %s = arith.addf %v, %b : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<333x520xf32>
  bufferization.materialize_in_destination %y in restrict writable %Y
      : (tensor<333x520xf32>, memref<333x520xf32>) -> ()
  return
}

// Not matched (f64): lowered to loops.
func.func @matmul_f64(%A: tensor<64x48xf64>, %B: tensor<48x40xf64>,
                      %C: memref<64x40xf64>)
    attributes {llvm.emit_c_interface} {
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<64x40xf64>
  %f = linalg.fill ins(%zero : f64) outs(%e : tensor<64x40xf64>)
      -> tensor<64x40xf64>
  %r = linalg.matmul ins(%A, %B : tensor<64x48xf64>, tensor<48x40xf64>)
                     outs(%f : tensor<64x40xf64>) -> tensor<64x40xf64>
  bufferization.materialize_in_destination %r in restrict writable %C
      : (tensor<64x40xf64>, memref<64x40xf64>) -> ()
  return
}

// Not matched (loops ordered (n, m, k)): lowered to loops.
func.func @matmul_nmk(%A: tensor<96x80xf32>, %B: tensor<80x72xf32>,
                      %C: memref<96x72xf32>)
    attributes {llvm.emit_c_interface} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<96x72xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<96x72xf32>)
      -> tensor<96x72xf32>
  %r = linalg.generic {indexing_maps = [#n_mk, #n_kn, #n_mn],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%A, %B : tensor<96x80xf32>, tensor<80x72xf32>)
      outs(%f : tensor<96x72xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<96x72xf32>
  bufferization.materialize_in_destination %r in restrict writable %C
      : (tensor<96x72xf32>, memref<96x72xf32>) -> ()
  return
}

// Batch matmul with sizes that are not multiples of the tiles.
func.func @batch_odd(%A: tensor<3x100x70xf32>, %B: tensor<3x70x45xf32>,
                     %C: memref<3x100x45xf32>)
    attributes {llvm.emit_c_interface} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x100x45xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<3x100x45xf32>)
      -> tensor<3x100x45xf32>
  %r = linalg.batch_matmul
      ins(%A, %B : tensor<3x100x70xf32>, tensor<3x70x45xf32>)
      outs(%f : tensor<3x100x45xf32>) -> tensor<3x100x45xf32>
  bufferization.materialize_in_destination %r in restrict writable %C
      : (tensor<3x100x45xf32>, memref<3x100x45xf32>) -> ()
  return
}

// Not matched (dynamic sizes): lowered to loops. Called with 37x23 * 23x29.
func.func @matmul_dyn(%A: tensor<?x?xf32>, %B: tensor<?x?xf32>,
                      %C: memref<?x?xf32>)
    attributes {llvm.emit_c_interface} {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %A, %c0 : tensor<?x?xf32>
  %n = tensor.dim %B, %c1 : tensor<?x?xf32>
  %e = tensor.empty(%m, %n) : tensor<?x?xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<?x?xf32>)
      -> tensor<?x?xf32>
  %r = linalg.matmul ins(%A, %B : tensor<?x?xf32>, tensor<?x?xf32>)
                     outs(%f : tensor<?x?xf32>) -> tensor<?x?xf32>
  bufferization.materialize_in_destination %r in restrict writable %C
      : (tensor<?x?xf32>, memref<?x?xf32>) -> ()
  return
}
