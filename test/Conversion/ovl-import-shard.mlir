// RUN: overlap-opt --ovl-import-shard %s | FileCheck %s
// RUN: overlap-opt --ovl-import-shard=remarks=true %s -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK

shard.grid @grid(shape = 2x4)

// CHECK-LABEL: func.func @all_gather(
// CHECK-SAME:    %[[X:.*]]: tensor<4x8xf32>
// CHECK:         %[[G:.*]] = ovl.all_gather %[[X]] on @grid axes [1, 0] dim 1 : tensor<4x8xf32> -> tensor<4x64xf32>
// CHECK-NOT:     tensor.cast
// CHECK:         return %[[G]]
func.func @all_gather(%x: tensor<4x8xf32>) -> tensor<4x64xf32> {
  %g = shard.all_gather %x on @grid grid_axes = [1, 0] gather_axis = 1
      : tensor<4x8xf32> -> tensor<4x64xf32>
  %c = tensor.cast %g : tensor<4x64xf32> to tensor<4x64xf32>
  return %c : tensor<4x64xf32>
}

// CHECK-LABEL: func.func @reduce_scatter(
// CHECK:         ovl.reduce_scatter %{{.*}} on @grid axes [0] dim 0 : tensor<8x16xf32> -> tensor<4x16xf32>
// CHECK:         ovl.reduce_scatter %{{.*}} on @grid axes [1] dim 1 reduce max : tensor<8x16xf32> -> tensor<8x4xf32>
// CHECK:         ovl.reduce_scatter %{{.*}} on @grid axes [1] dim 1 reduce prod : tensor<8x16xf32> -> tensor<8x4xf32>
// CHECK:         shard.reduce_scatter %{{.*}} on @grid grid_axes = [1] reduction = average
func.func @reduce_scatter(%x: tensor<8x16xf32>)
    -> (tensor<4x16xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>) {
  %a = shard.reduce_scatter %x on @grid grid_axes = [0] scatter_axis = 0
      : tensor<8x16xf32> -> tensor<4x16xf32>
  %b = shard.reduce_scatter %x on @grid grid_axes = [1] reduction = max
      scatter_axis = 1 : tensor<8x16xf32> -> tensor<8x4xf32>
  %c = shard.reduce_scatter %x on @grid grid_axes = [1] reduction = product
      scatter_axis = 1 : tensor<8x16xf32> -> tensor<8x4xf32>
  // REMARK: remark: ovl-import-shard: left as is: reduction average has no ovl equivalent
  %d = shard.reduce_scatter %x on @grid grid_axes = [1] reduction = average
      scatter_axis = 1 : tensor<8x16xf32> -> tensor<8x4xf32>
  return %a, %b, %c, %d : tensor<4x16xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>
}

// An all_reduce feeding only an all_slice of the same group is one
// reduce_scatter; one whose result is used otherwise is an all_reduce; one
// that changes the element type stays.
// CHECK-LABEL: func.func @all_reduce(
// CHECK-SAME:    %[[X:.*]]: tensor<8x16xf32>
// CHECK:         %[[RS:.*]] = ovl.reduce_scatter %[[X]] on @grid axes [0, 1] dim 0 : tensor<8x16xf32> -> tensor<1x16xf32>
// CHECK:         %[[AR:.*]] = ovl.all_reduce %[[X]] on @grid axes [1] reduce min : tensor<8x16xf32>
// CHECK:         %[[SL:.*]] = shard.all_slice %[[AR]] on @grid grid_axes = [0] slice_axis = 1
// CHECK:         %[[WIDE:.*]] = shard.all_reduce %[[X]] on @grid grid_axes = [1] : tensor<8x16xf32> -> tensor<8x16xf64>
// CHECK:         return %[[RS]], %[[SL]], %[[WIDE]]
func.func @all_reduce(%x: tensor<8x16xf32>)
    -> (tensor<1x16xf32>, tensor<8x8xf32>, tensor<8x16xf64>) {
  %r = shard.all_reduce %x on @grid grid_axes = [0, 1]
      : tensor<8x16xf32> -> tensor<8x16xf32>
  %s = shard.all_slice %r on @grid grid_axes = [0, 1] slice_axis = 0
      : tensor<8x16xf32> -> tensor<1x16xf32>
  %m = shard.all_reduce %x on @grid grid_axes = [1] reduction = min
      : tensor<8x16xf32> -> tensor<8x16xf32>
  %t = shard.all_slice %m on @grid grid_axes = [0] slice_axis = 1
      : tensor<8x16xf32> -> tensor<8x8xf32>
  // REMARK: remark: ovl-import-shard: left as is: needs tensors of one type and a static grid
  %w = shard.all_reduce %x on @grid grid_axes = [1]
      : tensor<8x16xf32> -> tensor<8x16xf64>
  return %s, %t, %w : tensor<1x16xf32>, tensor<8x8xf32>, tensor<8x16xf64>
}

// A zero-filled init is dropped (and erased); any other init is the acc.
// CHECK-LABEL: func.func @matmul(
// CHECK-SAME:    %[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<8x16xf32>, %[[C:.*]]: tensor<4x16xf32>
// CHECK-NOT:     linalg.fill
// CHECK:         %[[P:.*]] = ovl.einsum "ac,cb->ab" %[[A]], %[[B]] : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
// CHECK:         %[[Q:.*]] = ovl.einsum "ac,cb->ab" %[[A]], %[[B]] acc %[[C]] : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
// CHECK:         return %[[P]], %[[Q]]
func.func @matmul(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %c: tensor<4x16xf32>)
    -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %p = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>)
                     outs(%z : tensor<4x16xf32>) -> tensor<4x16xf32>
  %q = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>)
                     outs(%c : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %p, %q : tensor<4x16xf32>, tensor<4x16xf32>
}

// A fill of 1 is not zero; a fill of -0.0 is not +0 either.
// CHECK-LABEL: func.func @matmul_nonzero_fill(
// CHECK:         %[[ONE:.*]] = linalg.fill
// CHECK:         ovl.einsum "ac,cb->ab" %{{.*}}, %{{.*}} acc %[[ONE]]
// CHECK:         %[[NEG:.*]] = linalg.fill
// CHECK:         ovl.einsum "ac,cb->ab" %{{.*}}, %{{.*}} acc %[[NEG]]
func.func @matmul_nonzero_fill(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>)
    -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %one = arith.constant 1.0 : f32
  %negzero = arith.constant -0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %o = linalg.fill ins(%one : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %p = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>)
                     outs(%o : tensor<4x16xf32>) -> tensor<4x16xf32>
  %n = linalg.fill ins(%negzero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %q = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>)
                     outs(%n : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %p, %q : tensor<4x16xf32>, tensor<4x16xf32>
}

// The init upstream builds for a partial sum when the original init is zero:
// zero on every branch, so no acc; the scf.if and what fed it are erased.
// CHECK-LABEL: func.func @matmul_partial_init(
// CHECK-NOT:     scf.if
// CHECK-NOT:     shard.process_multi_index
// CHECK:         %[[P:.*]] = ovl.einsum "ac,cb->ab" %{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
// CHECK:         ovl.all_reduce %[[P]]
func.func @matmul_partial_init(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %idx = shard.process_multi_index on @grid axes = [0] : index
  %c0 = arith.constant 0 : index
  %first = arith.cmpi eq, %idx, %c0 : index
  %init = scf.if %first -> (tensor<4x16xf32>) {
    scf.yield %z : tensor<4x16xf32>
  } else {
    %e2 = tensor.empty() : tensor<4x16xf32>
    %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x16xf32>) -> tensor<4x16xf32>
    scf.yield %z2 : tensor<4x16xf32>
  }
  %p = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>)
                     outs(%init : tensor<4x16xf32>) -> tensor<4x16xf32>
  %r = shard.all_reduce %p on @grid grid_axes = [0] : tensor<4x16xf32> -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}

// CHECK-LABEL: func.func @batch_matmul(
// CHECK:         ovl.einsum "abd,adc->abc" %{{.*}}, %{{.*}} acc %{{.*}} : tensor<2x4x8xf32>, tensor<2x8x16xf32> -> tensor<2x4x16xf32>
func.func @batch_matmul(%a: tensor<2x4x8xf32>, %b: tensor<2x8x16xf32>,
                        %c: tensor<2x4x16xf32>) -> tensor<2x4x16xf32> {
  %r = linalg.batch_matmul ins(%a, %b : tensor<2x4x8xf32>, tensor<2x8x16xf32>)
                           outs(%c : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  return %r : tensor<2x4x16xf32>
}

// Mixed precision: bf16 products accumulated in f32, from a named matmul and
// from a generic with extf.
// CHECK-LABEL: func.func @mixed_precision(
// CHECK:         ovl.einsum "ac,cb->ab" %{{.*}}, %{{.*}} : tensor<4x8xbf16>, tensor<8x16xbf16> -> tensor<4x16xf32>
// CHECK:         ovl.einsum "ac,cb->ab" %{{.*}}, %{{.*}} : tensor<4x8xbf16>, tensor<8x16xbf16> -> tensor<4x16xf32>
func.func @mixed_precision(%a: tensor<4x8xbf16>, %b: tensor<8x16xbf16>)
    -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %p = linalg.matmul ins(%a, %b : tensor<4x8xbf16>, tensor<8x16xbf16>)
                     outs(%z : tensor<4x16xf32>) -> tensor<4x16xf32>
  %q = linalg.generic {
      indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                       affine_map<(m, n, k) -> (k, n)>,
                       affine_map<(m, n, k) -> (m, n)>],
      iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<4x8xbf16>, tensor<8x16xbf16>)
      outs(%z : tensor<4x16xf32>) {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %xf = arith.extf %x : bf16 to f32
    %yf = arith.extf %y : bf16 to f32
    %m = arith.mulf %xf, %yf : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  return %p, %q : tensor<4x16xf32>, tensor<4x16xf32>
}

// An attention-score-like generic with permuted maps, i8 -> i32.
// CHECK-LABEL: func.func @generic_i8(
// CHECK:         ovl.einsum "acd,abd->abc" %{{.*}}, %{{.*}} acc %{{.*}} : tensor<2x4x8xi8>, tensor<2x16x8xi8> -> tensor<2x16x4xi32>
func.func @generic_i8(%q: tensor<2x4x8xi8>, %k: tensor<2x16x8xi8>,
                      %c: tensor<2x16x4xi32>) -> tensor<2x16x4xi32> {
  %r = linalg.generic {
      indexing_maps = [affine_map<(b, t, s, d) -> (b, s, d)>,
                       affine_map<(b, t, s, d) -> (b, t, d)>,
                       affine_map<(b, t, s, d) -> (b, t, s)>],
      iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<2x4x8xi8>, tensor<2x16x8xi8>)
      outs(%c : tensor<2x16x4xi32>) {
  ^bb0(%x: i8, %y: i8, %acc: i32):
    %xi = arith.extsi %x : i8 to i32
    %yi = arith.extsi %y : i8 to i32
    %m = arith.muli %yi, %xi : i32
    %s = arith.addi %m, %acc : i32
    linalg.yield %s : i32
  } -> tensor<2x16x4xi32>
  return %r : tensor<2x16x4xi32>
}

// Left alone: an elementwise generic, unsigned extension, a product rounded
// before the extension, a broadcast output loop.
// CHECK-LABEL: func.func @not_einsums(
// CHECK-NOT:     ovl.einsum
// CHECK-COUNT-4: linalg.generic
// CHECK-NOT:     ovl.einsum
// CHECK:         return
func.func @not_einsums(%a: tensor<4x8xi8>, %b: tensor<8x16xi8>, %c: tensor<4x16xi32>,
                       %f: tensor<4x8xbf16>, %g: tensor<8x16xbf16>, %h: tensor<4x16xf32>,
                       %x: tensor<4x8xf32>, %w: tensor<4x8xf32>, %v: tensor<8xf32>)
    -> (tensor<4x8xf32>, tensor<4x16xi32>, tensor<4x16xf32>, tensor<4x8xf32>) {
  %add = linalg.generic {
      indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>,
                       affine_map<(i, j) -> (i, j)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%x, %w : tensor<4x8xf32>, tensor<4x8xf32>) outs(%x : tensor<4x8xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %s = arith.addf %p, %q : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %unsigned = linalg.generic {
      indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                       affine_map<(m, n, k) -> (k, n)>,
                       affine_map<(m, n, k) -> (m, n)>],
      iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<4x8xi8>, tensor<8x16xi8>) outs(%c : tensor<4x16xi32>) {
  ^bb0(%p: i8, %q: i8, %o: i32):
    %pi = arith.extui %p : i8 to i32
    %qi = arith.extui %q : i8 to i32
    %m = arith.muli %pi, %qi : i32
    %s = arith.addi %o, %m : i32
    linalg.yield %s : i32
  } -> tensor<4x16xi32>
  %rounded = linalg.generic {
      indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                       affine_map<(m, n, k) -> (k, n)>,
                       affine_map<(m, n, k) -> (m, n)>],
      iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%f, %g : tensor<4x8xbf16>, tensor<8x16xbf16>) outs(%h : tensor<4x16xf32>) {
  ^bb0(%p: bf16, %q: bf16, %o: f32):
    %m = arith.mulf %p, %q : bf16
    %mf = arith.extf %m : bf16 to f32
    %s = arith.addf %o, %mf : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  %bcast = linalg.generic {
      indexing_maps = [affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (j)>,
                       affine_map<(i, j) -> (i, j)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%v, %v : tensor<8xf32>, tensor<8xf32>) outs(%x : tensor<4x8xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  return %add, %unsigned, %rounded, %bcast : tensor<4x8xf32>, tensor<4x16xi32>, tensor<4x16xf32>, tensor<4x8xf32>
}
