// RUN: overlap-opt %s --ovl-lower-to-ici="topology=4x4x4" | FileCheck %s --check-prefix=WRAP

// Two axes of a 4x4 grid placed row-major on the 4x4x4 cube land on y and
// z. A gather over both splits its data in two parts that take the axes in
// opposite orders at once, so that y and z links both carry data in every
// round; each part's second ring moves the four blocks its first gathered.
shard.grid @grid(shape = 4x4)

// WRAP-LABEL: func.func @two_axes
// WRAP: algorithm = "2 parts: part 0 bidirectional-whole on axis 1 (N=4), part 0 bidirectional-whole on axis 0 (N=4), part 1 bidirectional-whole on axis 0 (N=4), part 1 bidirectional-whole on axis 1 (N=4)"
// WRAP-SAME: {axes = array<i16: 1>, bytes = 256 : i64, direction = "forward", {{[^}]*}}part = 0 : i64, {{[^}]*}}route = ["(0,0,0) z+"]
// WRAP-SAME: {axes = array<i16: 0>, bytes = 1024 : i64, direction = "forward", {{[^}]*}}part = 0 : i64, {{[^}]*}}route = ["(0,0,0) y+"]
// WRAP-SAME: {axes = array<i16: 0>, bytes = 256 : i64, direction = "forward", {{[^}]*}}part = 1 : i64, {{[^}]*}}route = ["(0,0,0) y+"]
// WRAP-SAME: {axes = array<i16: 1>, bytes = 1024 : i64, direction = "forward", {{[^}]*}}part = 1 : i64, {{[^}]*}}route = ["(0,0,0) z+"]
func.func @two_axes(%x: tensor<8x16xf32>) -> tensor<128x16xf32> {
  %0 = ovl.all_gather %x on @grid axes [1, 0] dim 0 : tensor<8x16xf32> -> tensor<128x16xf32>
  return %0 : tensor<128x16xf32>
}
