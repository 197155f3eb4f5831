// The equivalence oracle cannot be fooled: infinities are compared exactly
// and kept out of a tensor's scale, 64-bit integers are compared as
// integers, one huge element does not hide the others' errors in the
// element-wise mode, and bad tolerances or repeat counts are refused.
//
// RUN: sh -c 'overlap-run %s --entry finite --reference %s --reference-entry with_inf; echo "exit status $?"' | FileCheck %s --check-prefix=INF-REF
// RUN: sh -c 'overlap-run %s --entry with_inf --reference %s --reference-entry with_inf; echo "exit status $?"' | FileCheck %s --check-prefix=INF-SAME
// RUN: sh -c 'overlap-run %s --entry with_inf --reference %s --reference-entry with_neg_inf; echo "exit status $?"' | FileCheck %s --check-prefix=INF-SIGN
// RUN: overlap-run %s --entry with_inf --reference %s --reference-entry with_inf --json | FileCheck %s --check-prefix=INF-JSON
// RUN: sh -c 'overlap-run %s --entry big_plus_one --reference %s --reference-entry big --json; echo "exit status $?"' | FileCheck %s --check-prefix=I64
// RUN: sh -c 'overlap-run %s --entry big_plus_one --reference %s --reference-entry big; echo "exit status $?"' | FileCheck %s --check-prefix=I64-TEXT
// RUN: overlap-run %s --entry huge_off --reference %s --reference-entry huge | FileCheck %s --check-prefix=SCALE
// RUN: sh -c 'overlap-run %s --entry huge_off --reference %s --reference-entry huge --rtol-relative-to=element --json; echo "exit status $?"' | FileCheck %s --check-prefix=ELEMENT
//
// RUN: sh -c 'overlap-run %s --entry finite --rtol -5 2>&1; echo "exit status $?"' | FileCheck %s --check-prefix=RTOL-NEG
// RUN: sh -c 'overlap-run %s --entry finite --rtol nan 2>&1; echo "exit status $?"' | FileCheck %s --check-prefix=RTOL-NAN
// RUN: sh -c 'overlap-run %s --entry finite --atol inf 2>&1; echo "exit status $?"' | FileCheck %s --check-prefix=ATOL-INF
// RUN: sh -c 'overlap-run %s --entry finite --repeat 0 2>&1; echo "exit status $?"' | FileCheck %s --check-prefix=REPEAT0
// RUN: sh -c 'overlap-run %s --entry finite --repeat -1 2>&1; echo "exit status $?"' | FileCheck %s --check-prefix=REPEATNEG

/// A reference holding an infinity used to make every element "equal"
/// (the scale max|e| was infinite); two identical outputs holding one used
/// to differ (inf - inf is NaN).
// INF-REF: reference {{.*}}: NOT EQUAL
// INF-REF: first difference: device 0 output 0 at [1]: 2 vs reference inf
// INF-REF: exit status 1
// INF-SAME: reference {{.*}}: equal
// INF-SAME: exit status 0
// INF-SIGN: reference {{.*}}: NOT EQUAL
// INF-SIGN: first difference: device 0 output 0 at [1]: inf vs reference -inf
// INF-SIGN: exit status 1
/// The report stays JSON: the error figures are over finite elements.
// INF-JSON: "max_abs_error": 0,
// INF-JSON: "rtol_relative_to": "tensor-scale"

/// 2^60 + 1 against 2^60 (equal as doubles).
// I64: "equal": false,
// I64: "actual": 1152921504606846977,
// I64: "expected": 1152921504606846976,
// I64: exit status 1
// I64-TEXT: first difference: device 0 output 0 at [0]: 1152921504606846977 vs reference 1152921504606846976

/// [1e30, 1e24, 1] against [1e30, 0, 1]: within 1e-5 of the tensor's
/// scale (1e30), not within 1e-5 of each element.
// SCALE: reference {{.*}}: equal ({{.*}}; rtol relative to tensor-scale)
// ELEMENT: "equal": false,
// ELEMENT: "position": [
// ELEMENT-NEXT: 1
// ELEMENT: "rtol_relative_to": "element"
// ELEMENT: exit status 1

// RTOL-NEG: overlap-run: error: --rtol must be between 0 and 1e+30, got -5
// RTOL-NEG: exit status 2
// RTOL-NAN: overlap-run: error: --rtol must be between 0 and 1e+30, got nan
// RTOL-NAN: exit status 2
// ATOL-INF: overlap-run: error: --atol must be between 0 and 1e+30, got inf
// ATOL-INF: exit status 2
// REPEAT0: overlap-run: error: --repeat must be an integer between 1 and 1000000, got 0
// REPEAT0: exit status 2
// REPEATNEG: overlap-run: error: --repeat must be an integer between 1 and 1000000, got -1
// REPEATNEG: exit status 2

shard.grid @one(shape = 1)

func.func @finite(%x: tensor<3xf32>) -> tensor<3xf32> {
  %c = arith.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  return %c : tensor<3xf32>
}
func.func @with_inf(%x: tensor<3xf32>) -> tensor<3xf32> {
  %c = arith.constant dense<[1.0, 0x7F800000, 3.0]> : tensor<3xf32>
  return %c : tensor<3xf32>
}
func.func @with_neg_inf(%x: tensor<3xf32>) -> tensor<3xf32> {
  %c = arith.constant dense<[1.0, 0xFF800000, 3.0]> : tensor<3xf32>
  return %c : tensor<3xf32>
}

func.func @big(%x: tensor<1xi64>) -> tensor<1xi64> {
  %c = arith.constant dense<1152921504606846976> : tensor<1xi64>
  return %c : tensor<1xi64>
}
func.func @big_plus_one(%x: tensor<1xi64>) -> tensor<1xi64> {
  %c = arith.constant dense<1152921504606846977> : tensor<1xi64>
  return %c : tensor<1xi64>
}

func.func @huge(%x: tensor<3xf32>) -> tensor<3xf32> {
  %c = arith.constant dense<[1.0e30, 0.0, 1.0]> : tensor<3xf32>
  return %c : tensor<3xf32>
}
func.func @huge_off(%x: tensor<3xf32>) -> tensor<3xf32> {
  %c = arith.constant dense<[1.0e30, 1.0e24, 1.0]> : tensor<3xf32>
  return %c : tensor<3xf32>
}
