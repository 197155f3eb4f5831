// Collectives over several grid axes placed on several torus dimensions run
// one ring per dimension; the simulated time equals the closed form
// sum_i ring(S * n_1 * ... * n_{i-1}, dim i) that ovl-lower-to-ici prints.
// A 4x4x4 grid on the 4x4x4 TPU v4 cube (3-D, wrap-around), and a 16x16 grid
// on a TPU v5e 16x16 slice (2-D, wrap-around), and an 8x8 grid on an 8x8
// v5e slice (no wrap-around: extents must be multiples of 16).
//
// RUN: split-file %s %t
// RUN: overlap-opt %t/cube.mlir --ovl-lower-to-ici="topology=4x4x4" -o %t.v4.ici
// RUN: overlap-sim %t/cube.mlir --entry gather3d --topology 4x4x4 --json > %t.1.json
// RUN: %python %S/Inputs/check_report.py %t.1.json --estimate step_time_s %t.v4.ici gather3d --equals num_devices 64
// RUN: overlap-sim %t/cube.mlir --entry scatter3d --topology 4x4x4 --json > %t.2.json
// RUN: %python %S/Inputs/check_report.py %t.2.json --estimate step_time_s %t.v4.ici scatter3d
// RUN: overlap-sim %t/cube.mlir --entry reduce3d --topology 4x4x4 --unidirectional-collectives --json > %t.3.json
// RUN: overlap-opt %t/cube.mlir --ovl-lower-to-ici="topology=4x4x4 unidirectional=true" -o %t.v4uni.ici
// RUN: %python %S/Inputs/check_report.py %t.3.json --estimate step_time_s %t.v4uni.ici reduce3d
//
// RUN: overlap-opt %t/v5e.mlir --ovl-lower-to-ici="hardware=tpu-v5e topology=16x16" -o %t.v5e.ici
// RUN: overlap-sim %t/v5e.mlir --hardware tpu-v5e --topology 16x16 --json > %t.4.json
// RUN: %python %S/Inputs/check_report.py %t.4.json --estimate step_time_s %t.v5e.ici gather2d --equals num_devices 256
// RUN: overlap-opt %t/v5e-line.mlir --ovl-lower-to-ici="hardware=tpu-v5e topology=8x8 unidirectional=true" -o %t.v5eline.ici
// RUN: overlap-sim %t/v5e-line.mlir --hardware tpu-v5e --topology 8x8 --unidirectional-collectives --json > %t.5.json
// RUN: %python %S/Inputs/check_report.py %t.5.json --estimate step_time_s %t.v5eline.ici gather2d

//--- cube.mlir
shard.grid @cube(shape = 4x4x4)

func.func @gather3d(%x: tensor<256x1024xbf16>) -> tensor<16384x1024xbf16> {
  %0 = ovl.all_gather %x on @cube axes [0, 1, 2] dim 0 : tensor<256x1024xbf16> -> tensor<16384x1024xbf16>
  return %0 : tensor<16384x1024xbf16>
}

func.func @scatter3d(%y: tensor<16384x1024xbf16>) -> tensor<256x1024xbf16> {
  %0 = ovl.reduce_scatter %y on @cube axes [2, 1, 0] dim 0 : tensor<16384x1024xbf16> -> tensor<256x1024xbf16>
  return %0 : tensor<256x1024xbf16>
}

func.func @reduce3d(%y: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  %0 = ovl.all_reduce %y on @cube axes [0, 1, 2] : tensor<1024x1024xf32>
  return %0 : tensor<1024x1024xf32>
}

//--- v5e.mlir
shard.grid @grid(shape = 16x16)
func.func @gather2d(%x: tensor<64x1024xbf16>) -> tensor<16384x1024xbf16> {
  %0 = ovl.all_gather %x on @grid axes [1, 0] dim 0 : tensor<64x1024xbf16> -> tensor<16384x1024xbf16>
  return %0 : tensor<16384x1024xbf16>
}

//--- v5e-line.mlir
// Both rings close by walking back along their line.
shard.grid @grid(shape = 8x8)
func.func @gather2d(%x: tensor<64x1024xbf16>) -> tensor<4096x1024xbf16> {
  %0 = ovl.all_gather %x on @grid axes [1, 0] dim 0 : tensor<64x1024xbf16> -> tensor<4096x1024xbf16>
  return %0 : tensor<4096x1024xbf16>
}
