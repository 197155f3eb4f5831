// RUN: not overlap-opt %s --pass-pipeline="builtin.module(func.func(ovl-decompose-collective-einsum{unroll=3}))" 2>&1 | FileCheck %s --check-prefix=UNROLL
// RUN: not overlap-opt %s --pass-pipeline="builtin.module(func.func(ovl-decompose-collective-einsum{bidirectional=maybe}))" 2>&1 | FileCheck %s --check-prefix=DIRECTION

// An unroll factor other than 1, 2 or auto, and a direction other than
// false, true, split or auto, are errors, not silent defaults.

// UNROLL: overlap-opt: error: pass 'ovl-decompose-collective-einsum': option 'unroll' has no value '3' (valid: 1, 2, auto)
// DIRECTION: overlap-opt: error: pass 'ovl-decompose-collective-einsum': option 'bidirectional' has no value 'maybe' (valid: false, true, split, auto)
func.func @f() {
  return
}
