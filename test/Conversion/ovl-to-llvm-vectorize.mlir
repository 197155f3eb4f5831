// RUN: overlap-opt %s --pass-pipeline="builtin.module(func.func(ovl-einsum-to-linalg),ovl-apply-contraction-schedule{target-cpu=skylake-avx512})" | FileCheck %s --check-prefix=SCHED
// RUN: overlap-opt %s --pass-pipeline="builtin.module(ovl-to-llvm{target-cpu=skylake-avx512})" | FileCheck %s --check-prefix=VEC
// RUN: overlap-opt %s --pass-pipeline="builtin.module(ovl-to-llvm{vectorize=false})" | FileCheck %s --check-prefix=NOVEC --implicit-check-not="vector<"
// RUN: overlap-opt %s --pass-pipeline="builtin.module(func.func(ovl-einsum-to-linalg),ovl-apply-contraction-schedule{target-cpu=haswell})" | FileCheck %s --check-prefix=AVX2
// RUN: overlap-opt %s --pass-pipeline="builtin.module(func.func(ovl-einsum-to-linalg),ovl-apply-contraction-schedule{target-cpu=x86-64})" | FileCheck %s --check-prefix=SSE
// RUN: not overlap-opt %s --pass-pipeline="builtin.module(ovl-apply-contraction-schedule{target-cpu=haswel})" 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// ovl-to-llvm{vectorize} (the default) applies the contraction schedule of
// lib/Pipelines/ContractionSchedule.mlir before bufferization: f32 einsums
// whose loops come out as (m, n, k) or (b, m, n, k) become packed loop nests
// around a register tile of FMAs; everything else stays a linalg.generic and
// becomes plain loops, as with vectorize=false, which vectorizes nothing.
// The register tile fits the target CPU's vector registers: 8x32 on
// vector<32xf32> with AVX-512 (skylake-avx512, pinned so that the test does
// not depend on the host), 6x16 on vector<16xf32> with AVX2 (haswell), 6x8
// on vector<8xf32> with SSE only (x86-64).

// UNKNOWN: error: ovl-apply-contraction-schedule: unknown target CPU 'haswel' (did you mean 'haswell'?)

shard.grid @ring(shape = 2)

// SCHED-LABEL: func.func @matmul(
// SCHED-NOT: linalg.generic
// The k loop carries the accumulator tile in registers.
// SCHED: scf.for {{.*}} -> (vector<8x32xf32>)
// SCHED-COUNT-8: vector.fma {{.*}} : vector<32xf32>
// SCHED-NOT: linalg.generic
// AVX2-LABEL: func.func @matmul(
// AVX2: scf.for {{.*}} -> (vector<6x16xf32>)
// AVX2-COUNT-6: vector.fma {{.*}} : vector<16xf32>
// AVX2-NOT: vector.fma {{.*}} : vector<32xf32>
// SSE-LABEL: func.func @matmul(
// SSE: scf.for {{.*}} -> (vector<6x8xf32>)
// SSE-COUNT-6: vector.fma {{.*}} : vector<8xf32>
// SSE-NOT: vector.fma {{.*}} : vector<16xf32>
// VEC-LABEL: llvm.func @matmul(
// VEC-COUNT-8: llvm.intr.fmuladd({{.*}}) : (vector<32xf32>, vector<32xf32>, vector<32xf32>) -> vector<32xf32>
// NOVEC-LABEL: llvm.func @matmul(
// NOVEC: llvm.fmul {{.*}} : f32
func.func @matmul(%x: tensor<96x160xf32>, %w: tensor<160x256xf32>) -> tensor<96x256xf32> {
  %y = ovl.einsum "mk,kn->mn" %x, %w : tensor<96x160xf32>, tensor<160x256xf32> -> tensor<96x256xf32>
  return %y : tensor<96x256xf32>
}

// Batched, with a transposed operand and sizes that are not multiples of
// the tiles (peeled and padded).
// SCHED-LABEL: func.func @batched(
// SCHED-NOT: linalg.generic
// SCHED: vector.fma {{.*}} : vector<32xf32>
// SCHED-NOT: linalg.generic
// VEC-LABEL: llvm.func @batched(
// VEC: llvm.intr.fmuladd({{.*}}) : (vector<32xf32>, vector<32xf32>, vector<32xf32>) -> vector<32xf32>
func.func @batched(%a: tensor<3x50x70xf32>, %b: tensor<3x40x70xf32>) -> tensor<3x50x40xf32> {
  %y = ovl.einsum "bsf,bhf->bsh" %a, %b : tensor<3x50x70xf32>, tensor<3x40x70xf32> -> tensor<3x50x40xf32>
  return %y : tensor<3x50x40xf32>
}

// In a loop that carries its B operand, with sizes below one register tile:
// the block loops have one iteration and are folded away, only the k loop
// remains around the micro-kernel, so hoisting the B pack by 4 loops would
// reach the program's loop, which defines B. The pad is hoisted by fewer
// loops instead (here by one, the k loop).
// SCHED-LABEL: func.func @in_loop(
// SCHED: scf.for
// SCHED-NOT: linalg.generic
// SCHED: vector.fma {{.*}} : vector<7xf32>
// SCHED-NOT: linalg.generic
// VEC-LABEL: llvm.func @in_loop(
// VEC: llvm.intr.fmuladd({{.*}}) : (vector<7xf32>, vector<7xf32>, vector<7xf32>) -> vector<7xf32>
func.func @in_loop(%s: tensor<5x5xf32>, %c: tensor<5x7xf32>, %n: index) -> tensor<5x7xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%b = %c) -> tensor<5x7xf32> {
    %next = ovl.einsum "mk,kn->mn" %s, %b : tensor<5x5xf32>, tensor<5x7xf32> -> tensor<5x7xf32>
    scf.yield %next : tensor<5x7xf32>
  }
  return %r : tensor<5x7xf32>
}

// Left alone by the schedule: a transposed result (loops (n, m, k)), f64
// and a dynamic size.
// SCHED-LABEL: func.func @transposed_result(
// SCHED: linalg.generic
// SCHED-NOT: vector.
// SCHED-LABEL: func.func @f64(
// SCHED: linalg.generic
// SCHED-NOT: vector.
// VEC-LABEL: llvm.func @transposed_result(
// VEC-NOT: vector<
// VEC-LABEL: llvm.func @f64(
// VEC-NOT: vector<
func.func @transposed_result(%x: tensor<16x32xf32>, %w: tensor<32x64xf32>) -> tensor<64x16xf32> {
  %y = ovl.einsum "mk,kn->nm" %x, %w : tensor<16x32xf32>, tensor<32x64xf32> -> tensor<64x16xf32>
  return %y : tensor<64x16xf32>
}

func.func @f64(%x: tensor<16x32xf64>, %w: tensor<32x64xf64>) -> tensor<16x64xf64> {
  %y = ovl.einsum "mk,kn->mn" %x, %w : tensor<16x32xf64>, tensor<32x64xf64> -> tensor<16x64xf64>
  return %y : tensor<16x64xf64>
}

// bf16 inputs into f32: the contraction is vectorized as an f32 one, and
// the packing copies read bf16 vectors and widen them (see
// test/Pipelines/contraction-schedule-bf16.mlir).
// SCHED-LABEL: func.func @bf16(
// SCHED-NOT: linalg.generic
// SCHED: vector.transfer_read %arg1{{.*}} : tensor<32x64xbf16>, vector<1x32xbf16>
// SCHED-NEXT: arith.extf {{.*}} : vector<1x32xbf16> to vector<1x32xf32>
// SCHED-NOT: linalg.generic
// SCHED: vector.transfer_read %arg0{{.*}} : tensor<16x32xbf16>, vector<8x1xbf16>
// SCHED-NEXT: arith.extf {{.*}} : vector<8x1xbf16> to vector<8x1xf32>
// SCHED-NOT: linalg.generic
// SCHED: vector.fma {{.*}} : vector<32xf32>
// VEC-LABEL: llvm.func @bf16(
// VEC: llvm.intr.fmuladd({{.*}}) : (vector<32xf32>, vector<32xf32>, vector<32xf32>) -> vector<32xf32>
// The dynamic size (left alone, see above):
// SCHED-LABEL: func.func @dynamic(
// SCHED: linalg.generic
// SCHED-NOT: vector.
func.func @bf16(%x: tensor<16x32xbf16>, %w: tensor<32x64xbf16>) -> tensor<16x64xf32> {
  %y = ovl.einsum "mk,kn->mn" %x, %w : tensor<16x32xbf16>, tensor<32x64xbf16> -> tensor<16x64xf32>
  return %y : tensor<16x64xf32>
}

func.func @dynamic(%x: tensor<?x32xf32>, %w: tensor<32x64xf32>) -> tensor<?x64xf32> {
  %y = ovl.einsum "mk,kn->mn" %x, %w : tensor<?x32xf32>, tensor<32x64xf32> -> tensor<?x64xf32>
  return %y : tensor<?x64xf32>
}

// The script runs CSE on whole functions, which merges the two destinations;
// the pass gives them back one tensor.empty each, as the bufferization of the
// asynchronous permutes needs (one shared buffer would receive both).
// SCHED-LABEL: func.func @distinct_destinations(
// SCHED-COUNT-2: tensor.empty() : tensor<4x4xf32>
// SCHED-NOT: tensor.empty
func.func @distinct_destinations(%x: tensor<4x4xf32>, %y: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %e0 = tensor.empty() : tensor<4x4xf32>
  %e1 = tensor.empty() : tensor<4x4xf32>
  %p0, %t0 = ovl.collective_permute_start %x into %e0 on @ring axes [0] pairs [0 -> 1, 1 -> 0] : tensor<4x4xf32>
  %p1, %t1 = ovl.collective_permute_start %y into %e1 on @ring axes [0] pairs [0 -> 1, 1 -> 0] : tensor<4x4xf32>
  %r0 = ovl.collective_permute_done %t0 keep(%x) into %p0 : tensor<4x4xf32>
  %r1 = ovl.collective_permute_done %t1 keep(%y) into %p1 : tensor<4x4xf32>
  return %r0, %r1 : tensor<4x4xf32>, tensor<4x4xf32>
}

// A contraction operand that moves with a loop of the program (an
// Einsum-ReduceScatter ring loop's slice of the weights) is copied inside
// the loop, so that its packing is not hoisted above it: MLIR 22's
// hoist_pad miscompiles that (found by test/Decompose/matrix.test).
// SCHED-LABEL: func.func @moving_slice(
// SCHED: scf.for {{.*}} -> (tensor<3x2xf32>) {
// SCHED: %[[SLICE:.+]] = tensor.extract_slice %{{.*}}[0, %{{.*}}] [5, 2] [1, 1] : tensor<5x8xf32> to tensor<5x2xf32>
// SCHED: linalg.copy ins(%[[SLICE]] : tensor<5x2xf32>)
// SCHED: scf.yield
// SCHED-NOT: tensor<3x1x5x1x2xf32>
// SCHED: return
// VEC-LABEL: llvm.func @moving_slice(
func.func @moving_slice(%x: tensor<3x5xf32>, %w: tensor<5x8xf32>, %init: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %k = %c0 to %c3 step %c1 iter_args(%acc = %init) -> (tensor<3x2xf32>) {
    %t = arith.addi %k, %c1 : index
    %s = arith.remui %t, %c4 : index
    %off = arith.muli %s, %c2 : index
    %slice = tensor.extract_slice %w[0, %off] [5, 2] [1, 1] : tensor<5x8xf32> to tensor<5x2xf32>
    %p = ovl.einsum "bf,fh->bh" %x, %slice : tensor<3x5xf32>, tensor<5x2xf32> -> tensor<3x2xf32>
    %sum = arith.addf %p, %acc : tensor<3x2xf32>
    scf.yield %sum : tensor<3x2xf32>
  }
  return %r : tensor<3x2xf32>
}
