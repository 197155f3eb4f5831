// RUN: split-file %s %t
// RUN: overlap-run %t/odd.mlir --reference %t/odd_ref.mlir --seed 21 | FileCheck %s
// RUN: overlap-run %t/batched.mlir --reference %t/batched_ref.mlir --seed 23 | FileCheck %s
// RUN: overlap-run %t/half.mlir --reference %t/half_ref.mlir --seed 25 | FileCheck %s
// RUN: overlap-run %t/odd.mlir --reference %t/odd_ref.mlir --seed 21 --target-cpu haswell | FileCheck %s
// RUN: overlap-run %t/batched.mlir --reference %t/batched_ref.mlir --seed 23 --target-cpu haswell | FileCheck %s
// RUN: overlap-run %t/half.mlir --reference %t/half_ref.mlir --seed 25 --target-cpu haswell | FileCheck %s
// RUN: overlap-run %t/odd.mlir --reference %t/odd_ref.mlir --seed 21 --target-cpu x86-64 | FileCheck %s
// RUN: overlap-run %t/batched.mlir --reference %t/batched_ref.mlir --seed 23 --target-cpu x86-64 | FileCheck %s
// RUN: overlap-run %t/half.mlir --reference %t/half_ref.mlir --seed 25 --target-cpu x86-64 | FileCheck %s

// bf16 (and f16) einsums into f32, whose inputs ovl-apply-contraction-schedule
// widens to f32 in the reads that pack them (see
// test/Pipelines/contraction-schedule-bf16.mlir), against references that
// extend each element with arith.extf and sum with scalar loops, which the
// schedule does not match. No size is a multiple of the register tiles
// (8 x 32, 6 x 16, 6 x 8) or of the cache blocks (powers of two): partial
// blocks and tiles read the narrow inputs with zero padding. Each program
// runs compiled for the host, for AVX2 (haswell) and for baseline x86-64.

// CHECK: reference {{.*}}: equal (max abs error

//--- odd.mlir
// 301 x 133 x 270.
func.func @main(%a: tensor<301x270xbf16>, %b: tensor<270x133xbf16>) -> tensor<301x133xf32> {
  %c = ovl.einsum "mk,kn->mn" %a, %b : tensor<301x270xbf16>, tensor<270x133xbf16> -> tensor<301x133xf32>
  return %c : tensor<301x133xf32>
}

//--- odd_ref.mlir
func.func @main(%a: tensor<301x270xbf16>, %b: tensor<270x133xbf16>) -> tensor<301x133xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = arith.constant 301 : index
  %n = arith.constant 133 : index
  %k = arith.constant 270 : index
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<301x133xf32>
  %c = scf.for %i = %c0 to %m step %c1 iter_args(%ci = %init) -> tensor<301x133xf32> {
    %row = scf.for %j = %c0 to %n step %c1 iter_args(%cj = %ci) -> tensor<301x133xf32> {
      %sum = scf.for %l = %c0 to %k step %c1 iter_args(%acc = %zero) -> f32 {
        %x = tensor.extract %a[%i, %l] : tensor<301x270xbf16>
        %y = tensor.extract %b[%l, %j] : tensor<270x133xbf16>
        %xf = arith.extf %x : bf16 to f32
        %yf = arith.extf %y : bf16 to f32
        %p = arith.mulf %xf, %yf : f32
        %s = arith.addf %acc, %p : f32
        scf.yield %s : f32
      }
      %next = tensor.insert %sum into %cj[%i, %j] : tensor<301x133xf32>
      scf.yield %next : tensor<301x133xf32>
    }
    scf.yield %row : tensor<301x133xf32>
  }
  return %c : tensor<301x133xf32>
}

//--- batched.mlir
// 3 x 100 x 70 x 259, B transposed (b, n, k).
func.func @main(%a: tensor<3x100x259xbf16>, %b: tensor<3x70x259xbf16>) -> tensor<3x100x70xf32> {
  %c = ovl.einsum "bsf,bhf->bsh" %a, %b : tensor<3x100x259xbf16>, tensor<3x70x259xbf16> -> tensor<3x100x70xf32>
  return %c : tensor<3x100x70xf32>
}

//--- batched_ref.mlir
func.func @main(%a: tensor<3x100x259xbf16>, %b: tensor<3x70x259xbf16>) -> tensor<3x100x70xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %nb = arith.constant 3 : index
  %m = arith.constant 100 : index
  %n = arith.constant 70 : index
  %k = arith.constant 259 : index
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<3x100x70xf32>
  %c = scf.for %q = %c0 to %nb step %c1 iter_args(%cq = %init) -> tensor<3x100x70xf32> {
    %batch = scf.for %i = %c0 to %m step %c1 iter_args(%ci = %cq) -> tensor<3x100x70xf32> {
      %row = scf.for %j = %c0 to %n step %c1 iter_args(%cj = %ci) -> tensor<3x100x70xf32> {
        %sum = scf.for %l = %c0 to %k step %c1 iter_args(%acc = %zero) -> f32 {
          %x = tensor.extract %a[%q, %i, %l] : tensor<3x100x259xbf16>
          %y = tensor.extract %b[%q, %j, %l] : tensor<3x70x259xbf16>
          %xf = arith.extf %x : bf16 to f32
          %yf = arith.extf %y : bf16 to f32
          %p = arith.mulf %xf, %yf : f32
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

//--- half.mlir
// f16 inputs, 37 x 45 x 53.
func.func @main(%a: tensor<37x53xf16>, %b: tensor<53x45xf16>) -> tensor<37x45xf32> {
  %c = ovl.einsum "mk,kn->mn" %a, %b : tensor<37x53xf16>, tensor<53x45xf16> -> tensor<37x45xf32>
  return %c : tensor<37x45xf32>
}

//--- half_ref.mlir
func.func @main(%a: tensor<37x53xf16>, %b: tensor<53x45xf16>) -> tensor<37x45xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = arith.constant 37 : index
  %n = arith.constant 45 : index
  %k = arith.constant 53 : index
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<37x45xf32>
  %c = scf.for %i = %c0 to %m step %c1 iter_args(%ci = %init) -> tensor<37x45xf32> {
    %row = scf.for %j = %c0 to %n step %c1 iter_args(%cj = %ci) -> tensor<37x45xf32> {
      %sum = scf.for %l = %c0 to %k step %c1 iter_args(%acc = %zero) -> f32 {
        %x = tensor.extract %a[%i, %l] : tensor<37x53xf16>
        %y = tensor.extract %b[%l, %j] : tensor<53x45xf16>
        %xf = arith.extf %x : f16 to f32
        %yf = arith.extf %y : f16 to f32
        %p = arith.mulf %xf, %yf : f32
        %s = arith.addf %acc, %p : f32
        scf.yield %s : f32
      }
      %next = tensor.insert %sum into %cj[%i, %j] : tensor<37x45xf32>
      scf.yield %next : tensor<37x45xf32>
    }
    scf.yield %row : tensor<37x45xf32>
  }
  return %c : tensor<37x45xf32>
}
