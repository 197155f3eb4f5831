// Every blocking collective alone: the simulated step time equals the cost
// model's closed form, which ovl-lower-to-ici prints as `estimate_s`, on a
// 4x4x4 TPU v4 cube (wrap-around), a 1x1x4 line (none) and an H100 switch.
// One exception: a bidirectional ring on a line, whose closing edges start
// sending (n - 2) hops later than the others and so share the links for
// part of a step only; the closed form, which assumes they share them all
// the time, is an upper bound there.
//
// RUN: overlap-opt %s --ovl-lower-to-ici="topology=4x4x4" -o %t.cube.ici
// RUN: overlap-opt %s --ovl-lower-to-ici="topology=1x1x4" -o %t.line.ici
// RUN: overlap-opt %s --ovl-lower-to-ici="hardware=h100-nvlink" -o %t.switch.ici
// RUN: overlap-opt %s --ovl-lower-to-ici="topology=4x4x4 unidirectional=true" -o %t.uni.ici
// RUN: overlap-sim %s --entry gather --topology 4x4x4 --json > %t.1.json
// RUN: %python %S/Inputs/check_report.py %t.1.json --estimate step_time_s %t.cube.ici gather
// RUN: overlap-sim %s --entry gather --topology 1x1x4 --json > %t.2.json
// RUN: %python %S/Inputs/check_report.py %t.2.json --below-estimate step_time_s %t.line.ici gather
// RUN: overlap-opt %s --ovl-lower-to-ici="topology=1x1x4 unidirectional=true" -o %t.lineuni.ici
// RUN: overlap-sim %s --entry gather --topology 1x1x4 --unidirectional-collectives --json > %t.2u.json
// RUN: %python %S/Inputs/check_report.py %t.2u.json --estimate step_time_s %t.lineuni.ici gather
// RUN: overlap-sim %s --entry gather --hardware h100-nvlink --json > %t.3.json
// RUN: %python %S/Inputs/check_report.py %t.3.json --estimate step_time_s %t.switch.ici gather
// RUN: overlap-sim %s --entry gather --topology 4x4x4 --unidirectional-collectives --json > %t.4.json
// RUN: %python %S/Inputs/check_report.py %t.4.json --estimate step_time_s %t.uni.ici gather
// RUN: overlap-sim %s --entry scatter --topology 4x4x4 --json > %t.5.json
// RUN: %python %S/Inputs/check_report.py %t.5.json --estimate step_time_s %t.cube.ici scatter
// RUN: overlap-sim %s --entry reduce --topology 1x1x4 --unidirectional-collectives --json > %t.6.json
// RUN: %python %S/Inputs/check_report.py %t.6.json --estimate step_time_s %t.lineuni.ici reduce
// RUN: overlap-sim %s --entry permute --topology 4x4x4 --json > %t.7.json
// RUN: %python %S/Inputs/check_report.py %t.7.json --estimate step_time_s %t.cube.ici permute
//
// Nothing computes: all of the step is exposed communication.
// RUN: %python %S/Inputs/check_report.py %t.1.json --equals compute_time_s 0 --equals overlap_fraction 0

shard.grid @ring(shape = 4)

func.func @gather(%x: tensor<1024x1024xbf16>) -> tensor<4096x1024xbf16> {
  %0 = ovl.all_gather %x on @ring axes [0] dim 0 : tensor<1024x1024xbf16> -> tensor<4096x1024xbf16>
  return %0 : tensor<4096x1024xbf16>
}

func.func @scatter(%y: tensor<4096x1024xf32>) -> tensor<1024x1024xf32> {
  %0 = ovl.reduce_scatter %y on @ring axes [0] dim 0 : tensor<4096x1024xf32> -> tensor<1024x1024xf32>
  return %0 : tensor<1024x1024xf32>
}

func.func @reduce(%y: tensor<4096x1024xf32>) -> tensor<4096x1024xf32> {
  %0 = ovl.all_reduce %y on @ring axes [0] : tensor<4096x1024xf32>
  return %0 : tensor<4096x1024xf32>
}

func.func @permute(%x: tensor<1024x1024xbf16>) -> tensor<1024x1024xbf16> {
  %0 = ovl.collective_permute %x on @ring axes [0] pairs [0 -> 1, 1 -> 2, 2 -> 3, 3 -> 0] : tensor<1024x1024xbf16>
  return %0 : tensor<1024x1024xbf16>
}
