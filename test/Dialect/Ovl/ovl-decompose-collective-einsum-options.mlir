// RUN: not overlap-opt %s --pass-pipeline="builtin.module(func.func(ovl-decompose-collective-einsum{unroll=3}))" 2>&1 | FileCheck %s --check-prefix=UNROLL
// RUN: not overlap-opt %s --pass-pipeline="builtin.module(func.func(ovl-decompose-collective-einsum{bidirectional=maybe}))" 2>&1 | FileCheck %s --check-prefix=DIRECTION

// An unroll factor other than 1, 2 or auto, and a direction other than
// false, true or auto, are errors, not silent defaults.

// UNROLL: for the --unroll option: Cannot find option named '3'
// DIRECTION: for the --bidirectional option: Cannot find option named 'maybe'
func.func @f() {
  return
}
