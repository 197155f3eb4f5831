// RUN: overlap-opt %s --ovl-lower-to-ici="topology=4x4x4" | FileCheck %s --check-prefix=WRAP

// Two axes of a 4x4 grid placed row-major on the 4x4x4 cube land on y and
// z. A gather over both runs one ring per axis in the listed order, the
// second on the data the first gathered.
shard.grid @grid(shape = 4x4)

// WRAP-LABEL: func.func @two_axes
// WRAP: transfers = [{axis = 1 : i64, bytes = 256 : i64, direction = "forward", {{.*}}route = ["(0,0,0) z+"]
// WRAP-SAME: {axis = 0 : i64, bytes = 1024 : i64, direction = "forward", {{.*}}route = ["(0,0,0) y+"]
func.func @two_axes(%x: tensor<8x16xf32>) -> tensor<128x16xf32> {
  %0 = ovl.all_gather %x on @grid axes [1, 0] dim 0 : tensor<8x16xf32> -> tensor<128x16xf32>
  return %0 : tensor<128x16xf32>
}
