// RUN: overlap-opt %s --pass-pipeline="builtin.module(func.func(ovl-einsum-to-linalg),ovl-apply-contraction-schedule{target-cpu=skylake-avx512})" | FileCheck %s --check-prefixes=CHECK,AVX512 --implicit-check-not=ovl.widen --implicit-check-not="tensor<301x270xf32>" --implicit-check-not="tensor<270x133xf32>"
// RUN: overlap-opt %s --pass-pipeline="builtin.module(func.func(ovl-einsum-to-linalg),ovl-apply-contraction-schedule{target-cpu=haswell})" | FileCheck %s --check-prefixes=CHECK,AVX2 --implicit-check-not=ovl.widen --implicit-check-not="tensor<301x270xf32>" --implicit-check-not="tensor<270x133xf32>"

// What ovl-apply-contraction-schedule makes of an einsum of bf16 inputs into
// f32: the f32 schedule, whose packing copies read bf16 vectors of A and B
// and widen them on the way into the f32 packed buffers. No widened f32 copy
// of A (301x270) or B (270x133) is left, and no linalg op. The sizes are no
// multiples of the register tiles (8 x 32 for skylake-avx512, 6 x 16 for
// haswell): the remainders are packed from narrower bf16 reads padded with a
// bf16 zero.

// CHECK-LABEL: func.func @odd(
// CHECK-NOT: linalg.generic
// B, full panels of NR columns:
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : bf16
// AVX512-NEXT: vector.transfer_read %arg1[{{.*}}], %[[ZERO]] {{.*}} : tensor<270x133xbf16>, vector<1x32xbf16>
// AVX512-NEXT: arith.extf %{{.*}} : vector<1x32xbf16> to vector<1x32xf32>
// AVX512-NEXT: vector.transfer_write {{.*}} : vector<1x32xf32>, tensor<{{.*}}x1x32xf32>
// AVX2-NEXT: vector.transfer_read %arg1[{{.*}}], %[[ZERO]] {{.*}} : tensor<270x133xbf16>, vector<1x16xbf16>
// AVX2-NEXT: arith.extf %{{.*}} : vector<1x16xbf16> to vector<1x16xf32>
// AVX2-NEXT: vector.transfer_write {{.*}} : vector<1x16xf32>, tensor<{{.*}}x1x16xf32>
// CHECK-NOT: linalg.generic
// B, the last 5 columns:
// CHECK: vector.transfer_read %arg1{{.*}} : tensor<270x133xbf16>, vector<1x5xbf16>
// CHECK-NEXT: arith.extf %{{.*}} : vector<1x5xbf16> to vector<1x5xf32>
// CHECK-NOT: linalg.generic
// A, full panels of MR rows, then the register tiles:
// AVX512: vector.transfer_read %arg0{{.*}} : tensor<301x270xbf16>, vector<8x1xbf16>
// AVX512-NEXT: arith.extf %{{.*}} : vector<8x1xbf16> to vector<8x1xf32>
// AVX512: vector.fma {{.*}} : vector<32xf32>
// AVX2: vector.transfer_read %arg0{{.*}} : tensor<301x270xbf16>, vector<6x1xbf16>
// AVX2-NEXT: arith.extf %{{.*}} : vector<6x1xbf16> to vector<6x1xf32>
// AVX2: vector.fma {{.*}} : vector<16xf32>
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @odd(%a: tensor<301x270xbf16>, %b: tensor<270x133xbf16>) -> tensor<301x133xf32> {
  %c = ovl.einsum "mk,kn->mn" %a, %b : tensor<301x270xbf16>, tensor<270x133xbf16> -> tensor<301x133xf32>
  return %c : tensor<301x133xf32>
}

// Two reduction dimensions: the schedule does not match the contraction, so
// the widenings stay elementwise ops (and lose their tag), read by the f32
// contraction that the pipeline turns into loops.
// CHECK-LABEL: func.func @two_reductions(
// CHECK: linalg.generic {{.*}} ins(%arg0 : tensor<20x6x7xbf16>) outs(%{{.*}} : tensor<20x6x7xf32>)
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: linalg.generic {{.*}} ins(%arg1 : tensor<6x7x36xbf16>) outs(%{{.*}} : tensor<6x7x36xf32>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<20x6x7xf32>, tensor<6x7x36xf32>)
func.func @two_reductions(%a: tensor<20x6x7xbf16>, %b: tensor<6x7x36xbf16>) -> tensor<20x36xf32> {
  %c = ovl.einsum "mkl,kln->mn" %a, %b : tensor<20x6x7xbf16>, tensor<6x7x36xbf16> -> tensor<20x36xf32>
  return %c : tensor<20x36xf32>
}
