// RUN: not overlap-opt %s --pass-pipeline="builtin.module(func.func(ovl-decompose-collective-einsum{unroll=3}))" 2>&1 | FileCheck %s

// An unroll factor other than 1 or 2 is an error, not a silent default.

// CHECK: error: ovl-decompose-collective-einsum: unroll must be 1 or 2, got 3
func.func @f() {
  return
}
