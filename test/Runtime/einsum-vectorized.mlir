// RUN: split-file %s %t
// RUN: overlap-run %t/matmul.mlir --reference %t/matmul_ref.mlir | FileCheck %s
// RUN: overlap-run %t/odd.mlir --reference %t/odd_ref.mlir --seed 3 | FileCheck %s
// RUN: overlap-run %t/batched.mlir --reference %t/batched_ref.mlir --seed 5 | FileCheck %s
// RUN: overlap-run %t/acc.mlir --reference %t/acc_ref.mlir --seed 7 | FileCheck %s
// RUN: overlap-run %t/loop.mlir --reference %t/loop_ref.mlir --seed 9 | FileCheck %s
// RUN: overlap-run %t/matmul.mlir --reference %t/matmul_ref.mlir --target-cpu haswell | FileCheck %s
// RUN: overlap-run %t/odd.mlir --reference %t/odd_ref.mlir --seed 3 --target-cpu haswell | FileCheck %s
// RUN: overlap-run %t/batched.mlir --reference %t/batched_ref.mlir --seed 5 --target-cpu haswell | FileCheck %s
// RUN: overlap-run %t/acc.mlir --reference %t/acc_ref.mlir --seed 7 --target-cpu haswell | FileCheck %s
// RUN: overlap-run %t/loop.mlir --reference %t/loop_ref.mlir --seed 9 --target-cpu haswell | FileCheck %s
// RUN: overlap-run %t/matmul.mlir --reference %t/matmul_ref.mlir --target-cpu x86-64 | FileCheck %s
// RUN: overlap-run %t/odd.mlir --reference %t/odd_ref.mlir --seed 3 --target-cpu x86-64 | FileCheck %s
// RUN: overlap-run %t/batched.mlir --reference %t/batched_ref.mlir --seed 5 --target-cpu x86-64 | FileCheck %s
// RUN: overlap-run %t/acc.mlir --reference %t/acc_ref.mlir --seed 7 --target-cpu x86-64 | FileCheck %s
// RUN: overlap-run %t/loop.mlir --reference %t/loop_ref.mlir --seed 9 --target-cpu x86-64 | FileCheck %s
// RUN: overlap-run %t/bf16.mlir --reference %t/bf16_ref.mlir --seed 11 | FileCheck %s
// RUN: overlap-run %t/f16.mlir --reference %t/f16_ref.mlir --seed 13 | FileCheck %s
// RUN: overlap-run %t/bf16.mlir --reference %t/bf16_ref.mlir --seed 11 --target-cpu haswell | FileCheck %s
// RUN: overlap-run %t/f16.mlir --reference %t/f16_ref.mlir --seed 13 --target-cpu haswell | FileCheck %s
// RUN: overlap-run %t/bf16.mlir --reference %t/bf16_ref.mlir --seed 11 --target-cpu x86-64 | FileCheck %s
// RUN: overlap-run %t/f16.mlir --reference %t/f16_ref.mlir --seed 13 --target-cpu x86-64 | FileCheck %s
// RUN: sh -c 'overlap-run %t/matmul.mlir --target-cpu haswel 2>&1; echo "exit status $?"' | FileCheck %s --check-prefix=UNKNOWN
// RUN: sh -c 'overlap-run %t/matmul.mlir --target-cpu arm64 2>&1; echo "exit status $?"' | FileCheck %s --check-prefix=FOREIGN

// f32 einsums that ovl-to-llvm tiles, packs and vectorizes (see
// test/Conversion/ovl-to-llvm-vectorize.mlir), against references that
// compute the same sums with scalar loops over tensor.extract and
// tensor.insert: the contraction schedule does not match those, so the
// reference does not go through the code it checks. Sizes cover full and
// partial cache blocks (256) and register tiles (8 x 32; of 6 x 16, batched
// is partial in m and odd in n), a batch dim, a transposed operand, an
// accumulator input, a B operand carried by a loop around the einsum, and
// bf16 and f16 inputs accumulated in f32.
// Each program runs compiled for the host (native), for an AVX2 CPU
// (haswell: 6x16 register tiles on ymm registers) and for baseline x86-64
// (SSE2: 6x8 tiles on xmm registers); a CPU name LLVM does not know is a
// usage error.

// UNKNOWN: overlap-run: error: --target-cpu: unknown target CPU 'haswel' (did you mean 'haswell'?); expected native or an x86-64 CPU name of LLVM, e.g. haswell, skylake-avx512, znver4, x86-64-v3
// UNKNOWN: exit status 2
// FOREIGN: overlap-run: error: --target-cpu: unknown target CPU 'arm64'
// FOREIGN: exit status 2

// CHECK: reference {{.*}}: equal (max abs error

//--- matmul.mlir
// C[m, n] = sum_k A[m, k] B[k, n], 96 x 256 x 160.
func.func @main(%a: tensor<96x160xf32>, %b: tensor<160x256xf32>) -> tensor<96x256xf32> {
  %c = ovl.einsum "mk,kn->mn" %a, %b : tensor<96x160xf32>, tensor<160x256xf32> -> tensor<96x256xf32>
  return %c : tensor<96x256xf32>
}

//--- matmul_ref.mlir
func.func @main(%a: tensor<96x160xf32>, %b: tensor<160x256xf32>) -> tensor<96x256xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = arith.constant 96 : index
  %n = arith.constant 256 : index
  %k = arith.constant 160 : index
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<96x256xf32>
  %c = scf.for %i = %c0 to %m step %c1 iter_args(%ci = %init) -> tensor<96x256xf32> {
    %row = scf.for %j = %c0 to %n step %c1 iter_args(%cj = %ci) -> tensor<96x256xf32> {
      %sum = scf.for %l = %c0 to %k step %c1 iter_args(%acc = %zero) -> f32 {
        %x = tensor.extract %a[%i, %l] : tensor<96x160xf32>
        %y = tensor.extract %b[%l, %j] : tensor<160x256xf32>
        %p = arith.mulf %x, %y : f32
        %s = arith.addf %acc, %p : f32
        scf.yield %s : f32
      }
      %next = tensor.insert %sum into %cj[%i, %j] : tensor<96x256xf32>
      scf.yield %next : tensor<96x256xf32>
    }
    scf.yield %row : tensor<96x256xf32>
  }
  return %c : tensor<96x256xf32>
}

//--- odd.mlir
// 300 x 130 x 270: partial cache blocks in m and k, partial register tiles
// in m and n.
func.func @main(%a: tensor<300x270xf32>, %b: tensor<270x130xf32>) -> tensor<300x130xf32> {
  %c = ovl.einsum "mk,kn->mn" %a, %b : tensor<300x270xf32>, tensor<270x130xf32> -> tensor<300x130xf32>
  return %c : tensor<300x130xf32>
}

//--- odd_ref.mlir
func.func @main(%a: tensor<300x270xf32>, %b: tensor<270x130xf32>) -> tensor<300x130xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = arith.constant 300 : index
  %n = arith.constant 130 : index
  %k = arith.constant 270 : index
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<300x130xf32>
  %c = scf.for %i = %c0 to %m step %c1 iter_args(%ci = %init) -> tensor<300x130xf32> {
    %row = scf.for %j = %c0 to %n step %c1 iter_args(%cj = %ci) -> tensor<300x130xf32> {
      %sum = scf.for %l = %c0 to %k step %c1 iter_args(%acc = %zero) -> f32 {
        %x = tensor.extract %a[%i, %l] : tensor<300x270xf32>
        %y = tensor.extract %b[%l, %j] : tensor<270x130xf32>
        %p = arith.mulf %x, %y : f32
        %s = arith.addf %acc, %p : f32
        scf.yield %s : f32
      }
      %next = tensor.insert %sum into %cj[%i, %j] : tensor<300x130xf32>
      scf.yield %next : tensor<300x130xf32>
    }
    scf.yield %row : tensor<300x130xf32>
  }
  return %c : tensor<300x130xf32>
}

//--- batched.mlir
// C[b, s, h] = sum_f A[b, s, f] B[b, h, f] (B transposed), 3 x 100 x 70 x 130.
func.func @main(%a: tensor<3x100x130xf32>, %b: tensor<3x70x130xf32>) -> tensor<3x100x70xf32> {
  %c = ovl.einsum "bsf,bhf->bsh" %a, %b : tensor<3x100x130xf32>, tensor<3x70x130xf32> -> tensor<3x100x70xf32>
  return %c : tensor<3x100x70xf32>
}

//--- batched_ref.mlir
func.func @main(%a: tensor<3x100x130xf32>, %b: tensor<3x70x130xf32>) -> tensor<3x100x70xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %nb = arith.constant 3 : index
  %m = arith.constant 100 : index
  %n = arith.constant 70 : index
  %k = arith.constant 130 : index
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<3x100x70xf32>
  %c = scf.for %q = %c0 to %nb step %c1 iter_args(%cq = %init) -> tensor<3x100x70xf32> {
    %batch = scf.for %i = %c0 to %m step %c1 iter_args(%ci = %cq) -> tensor<3x100x70xf32> {
      %row = scf.for %j = %c0 to %n step %c1 iter_args(%cj = %ci) -> tensor<3x100x70xf32> {
        %sum = scf.for %l = %c0 to %k step %c1 iter_args(%acc = %zero) -> f32 {
          %x = tensor.extract %a[%q, %i, %l] : tensor<3x100x130xf32>
          %y = tensor.extract %b[%q, %j, %l] : tensor<3x70x130xf32>
          %p = arith.mulf %x, %y : f32
          %s = arith.addf %acc, %p : f32
          scf.yield %s : f32
        }
        %next = tensor.insert %sum into %cj[%q, %i, %j] : tensor<3x100x70xf32>
        scf.yield %next : tensor<3x100x70xf32>
      }
      scf.yield %row : tensor<3x100x70xf32>
    }
    scf.yield %batch : tensor<3x100x70xf32>
  }
  return %c : tensor<3x100x70xf32>
}

//--- acc.mlir
// An accumulator input, updated in place: C = C0 + A B, 100 x 130 x 70.
func.func @main(%a: tensor<100x70xf32>, %b: tensor<70x130xf32>, %c0: tensor<100x130xf32>) -> tensor<100x130xf32> {
  %c = ovl.einsum "mk,kn->mn" %a, %b acc %c0 : tensor<100x70xf32>, tensor<70x130xf32> -> tensor<100x130xf32>
  return %c : tensor<100x130xf32>
}

//--- acc_ref.mlir
func.func @main(%a: tensor<100x70xf32>, %b: tensor<70x130xf32>, %c0: tensor<100x130xf32>) -> tensor<100x130xf32> {
  %i0 = arith.constant 0 : index
  %i1 = arith.constant 1 : index
  %m = arith.constant 100 : index
  %n = arith.constant 130 : index
  %k = arith.constant 70 : index
  %c = scf.for %i = %i0 to %m step %i1 iter_args(%ci = %c0) -> tensor<100x130xf32> {
    %row = scf.for %j = %i0 to %n step %i1 iter_args(%cj = %ci) -> tensor<100x130xf32> {
      %init = tensor.extract %cj[%i, %j] : tensor<100x130xf32>
      %sum = scf.for %l = %i0 to %k step %i1 iter_args(%acc = %init) -> f32 {
        %x = tensor.extract %a[%i, %l] : tensor<100x70xf32>
        %y = tensor.extract %b[%l, %j] : tensor<70x130xf32>
        %p = arith.mulf %x, %y : f32
        %s = arith.addf %acc, %p : f32
        scf.yield %s : f32
      }
      %next = tensor.insert %sum into %cj[%i, %j] : tensor<100x130xf32>
      scf.yield %next : tensor<100x130xf32>
    }
    scf.yield %row : tensor<100x130xf32>
  }
  return %c : tensor<100x130xf32>
}

//--- loop.mlir
// C <- S C three times, 40 x 70 x 40: the loop carries B.
func.func @main(%s: tensor<40x40xf32>, %c0: tensor<40x70xf32>) -> tensor<40x70xf32> {
  %i0 = arith.constant 0 : index
  %i1 = arith.constant 1 : index
  %i3 = arith.constant 3 : index
  %c = scf.for %t = %i0 to %i3 step %i1 iter_args(%b = %c0) -> tensor<40x70xf32> {
    %next = ovl.einsum "mk,kn->mn" %s, %b : tensor<40x40xf32>, tensor<40x70xf32> -> tensor<40x70xf32>
    scf.yield %next : tensor<40x70xf32>
  }
  return %c : tensor<40x70xf32>
}

//--- loop_ref.mlir
func.func @main(%s: tensor<40x40xf32>, %c0: tensor<40x70xf32>) -> tensor<40x70xf32> {
  %i0 = arith.constant 0 : index
  %i1 = arith.constant 1 : index
  %i3 = arith.constant 3 : index
  %m = arith.constant 40 : index
  %n = arith.constant 70 : index
  %zero = arith.constant 0.0 : f32
  %c = scf.for %t = %i0 to %i3 step %i1 iter_args(%b = %c0) -> tensor<40x70xf32> {
    %init = tensor.empty() : tensor<40x70xf32>
    %next = scf.for %i = %i0 to %m step %i1 iter_args(%ci = %init) -> tensor<40x70xf32> {
      %row = scf.for %j = %i0 to %n step %i1 iter_args(%cj = %ci) -> tensor<40x70xf32> {
        %sum = scf.for %l = %i0 to %m step %i1 iter_args(%acc = %zero) -> f32 {
          %x = tensor.extract %s[%i, %l] : tensor<40x40xf32>
          %y = tensor.extract %b[%l, %j] : tensor<40x70xf32>
          %p = arith.mulf %x, %y : f32
          %r = arith.addf %acc, %p : f32
          scf.yield %r : f32
        }
        %ins = tensor.insert %sum into %cj[%i, %j] : tensor<40x70xf32>
        scf.yield %ins : tensor<40x70xf32>
      }
      scf.yield %row : tensor<40x70xf32>
    }
    scf.yield %next : tensor<40x70xf32>
  }
  return %c : tensor<40x70xf32>
}

//--- bf16.mlir
// bf16 x bf16 -> f32, 70 x 130 x 90 with B transposed (n, k): tiled,
// packed and vectorized as f32, widened in the packing.
func.func @main(%a: tensor<70x90xbf16>, %b: tensor<130x90xbf16>) -> tensor<70x130xf32> {
  %c = ovl.einsum "mk,nk->mn" %a, %b : tensor<70x90xbf16>, tensor<130x90xbf16> -> tensor<70x130xf32>
  return %c : tensor<70x130xf32>
}

//--- bf16_ref.mlir
func.func @main(%a: tensor<70x90xbf16>, %b: tensor<130x90xbf16>) -> tensor<70x130xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = arith.constant 70 : index
  %n = arith.constant 130 : index
  %k = arith.constant 90 : index
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<70x130xf32>
  %c = scf.for %i = %c0 to %m step %c1 iter_args(%ci = %init) -> tensor<70x130xf32> {
    %row = scf.for %j = %c0 to %n step %c1 iter_args(%cj = %ci) -> tensor<70x130xf32> {
      %sum = scf.for %l = %c0 to %k step %c1 iter_args(%acc = %zero) -> f32 {
        %x = tensor.extract %a[%i, %l] : tensor<70x90xbf16>
        %y = tensor.extract %b[%j, %l] : tensor<130x90xbf16>
        %xf = arith.extf %x : bf16 to f32
        %yf = arith.extf %y : bf16 to f32
        %p = arith.mulf %xf, %yf : f32
        %s = arith.addf %acc, %p : f32
        scf.yield %s : f32
      }
      %next = tensor.insert %sum into %cj[%i, %j] : tensor<70x130xf32>
      scf.yield %next : tensor<70x130xf32>
    }
    scf.yield %row : tensor<70x130xf32>
  }
  return %c : tensor<70x130xf32>
}

//--- f16.mlir
// f16 x f16 -> f32, 50 x 40 x 300 with B transposed (n, k): tiled,
// packed and vectorized as f32, widened in the packing.
func.func @main(%a: tensor<50x300xf16>, %b: tensor<40x300xf16>) -> tensor<50x40xf32> {
  %c = ovl.einsum "mk,nk->mn" %a, %b : tensor<50x300xf16>, tensor<40x300xf16> -> tensor<50x40xf32>
  return %c : tensor<50x40xf32>
}

//--- f16_ref.mlir
func.func @main(%a: tensor<50x300xf16>, %b: tensor<40x300xf16>) -> tensor<50x40xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = arith.constant 50 : index
  %n = arith.constant 40 : index
  %k = arith.constant 300 : index
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<50x40xf32>
  %c = scf.for %i = %c0 to %m step %c1 iter_args(%ci = %init) -> tensor<50x40xf32> {
    %row = scf.for %j = %c0 to %n step %c1 iter_args(%cj = %ci) -> tensor<50x40xf32> {
      %sum = scf.for %l = %c0 to %k step %c1 iter_args(%acc = %zero) -> f32 {
        %x = tensor.extract %a[%i, %l] : tensor<50x300xf16>
        %y = tensor.extract %b[%j, %l] : tensor<40x300xf16>
        %xf = arith.extf %x : f16 to f32
        %yf = arith.extf %y : f16 to f32
        %p = arith.mulf %xf, %yf : f32
        %s = arith.addf %acc, %p : f32
        scf.yield %s : f32
      }
      %next = tensor.insert %sum into %cj[%i, %j] : tensor<50x40xf32>
      scf.yield %next : tensor<50x40xf32>
    }
    scf.yield %row : tensor<50x40xf32>
  }
  return %c : tensor<50x40xf32>
}
