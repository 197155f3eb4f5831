// RUN: rm -rf %t && mkdir -p %t/saved %t/inputs
// RUN: overlap-run %s --entry main --seed 3 --save-outputs %t/saved --repeat 3 --json | FileCheck %s --check-prefix=JSON
// RUN: for d in 0 1; do cp %t/saved/device${d}_output0.npy %t/inputs/device${d}_input0.npy; done
// RUN: overlap-run %s --entry main --inputs %t/inputs --reference %s --reference-entry twice --print-outputs | FileCheck %s --check-prefix=NPY
// RUN: not overlap-run %s --entry main --inputs %t/missing 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not overlap-run %s --entry main --reference %s --reference-entry thrice -O0 | FileCheck %s --check-prefix=STRICT
// RUN: overlap-run %s --entry main --reference %s --reference-entry thrice --rtol 0 --atol 10 | FileCheck %s --check-prefix=LOOSE
// RUN: overlap-run %s --entry main --ready-file %t/ready | FileCheck %s --check-prefix=READY
// RUN: test -f %t/ready && test ! -s %t/ready
// RUN: not overlap-run %s --entry main --ready-file %t/missing/ready 2>&1 | FileCheck %s --check-prefix=READY-BAD

// overlap-run's interface: --json, --repeat, --save-outputs and --inputs
// (.npy files round-trip), --reference-entry, a clear error for a missing
// input file, -O0, --rtol/--atol overriding the default tolerance, and
// --ready-file (an empty file; a clear error where it cannot be written).

// JSON: "devices": 2,
// JSON: "entry": "main",
// JSON: "step_seconds": [
// JSON-NEXT: {{^ +[0-9.e+-]+,$}}
// JSON-NEXT: {{^ +[0-9.e+-]+,$}}
// JSON-NEXT: {{^ +[0-9.e+-]+$}}
// JSON-NEXT: ],
// JSON: "steps": 3,
// JSON: "transport": "threads"

/// The saved outputs of @main (2x the seeded input) read back as inputs:
/// @main doubles them again, and so does the reference @twice.
// NPY: device 0 output 0 (3xf32): [{{.+}}]
// NPY: reference {{.*}}tool.mlir: equal (max abs error 0.000000e+00, max rel error 0.000000e+00; rtol relative to tensor-scale)

/// 2x against 3x of inputs in [-1, 1): never within f32's default tolerance,
/// always within an absolute 10.
// STRICT: reference {{.*}}tool.mlir: NOT EQUAL
// LOOSE: reference {{.*}}tool.mlir: equal

// MISSING: overlap-run: error: cannot read {{.*}}missing{{/|\\}}device0_input0.npy

// READY: @main on 2 devices (threads)
// READY-BAD: overlap-run: error: cannot write {{.*}}missing{{/|\\}}ready: {{[Nn]}}o such file or directory

shard.grid @pair(shape = 2)
func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
  %y = arith.addf %x, %x : tensor<3xf32>
  return %y : tensor<3xf32>
}
func.func @twice(%x: tensor<3xf32>) -> tensor<3xf32> {
  %two = arith.constant dense<2.0> : tensor<3xf32>
  %y = arith.mulf %x, %two : tensor<3xf32>
  return %y : tensor<3xf32>
}
func.func @thrice(%x: tensor<3xf32>) -> tensor<3xf32> {
  %three = arith.constant dense<3.0> : tensor<3xf32>
  %y = arith.mulf %x, %three : tensor<3xf32>
  return %y : tensor<3xf32>
}
