// An op of an unregistered dialect has no dialect: ovl-lower-to-runtime
// leaves it alone (it asserted on isa<OvlDialect>(nullptr)).
//
// RUN: overlap-opt %s --allow-unregistered-dialect --ovl-lower-to-runtime | FileCheck %s

// CHECK-LABEL: func.func @f
// CHECK: "foo.bar"
func.func @f(%x: memref<4xf32>) -> memref<4xf32> {
  %y = "foo.bar"(%x) : (memref<4xf32>) -> memref<4xf32>
  return %y : memref<4xf32>
}
