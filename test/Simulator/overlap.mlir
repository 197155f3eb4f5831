// The paper's effect on the simulator: an einsum after an all_gather of its
// weight, on a ring of four TPU v4 chips (z links of a 4x4x4 cube), with
// compute (4.0 ms) above communication. Blocking, the gather (about 1.1 ms)
// adds to the einsum; decomposed into a loop of partial einsums and
// asynchronous permutes, the transfers hide behind the partial einsums and
// the step takes the compute time plus the permute launch.
//
// RUN: overlap-sim %s --topology 4x4x4 --json > %t.base.json
// RUN: overlap-opt %s --ovl-decompose-collective-einsum="gate=always" --ovl-async-collectives -o %t.async.mlir
// RUN: overlap-sim %t.async.mlir --topology 4x4x4 --json --trace %t.trace.json > %t.async.json
// RUN: %python %S/Inputs/check_report.py %t.async.json --less step_time_s %t.base.json --between overlap_fraction 0.99 1 --between step_time_s 3.998e-3 4.01e-3 --between utilization 0.99 1
// RUN: %python %S/Inputs/check_report.py %t.base.json --equals flops 1099511627776 --between step_time_s 5.0e-3 5.2e-3 --between overlap_fraction 0 0
// RUN: %python %S/Inputs/check_report.py %t.async.json --equals flops 1099511627776
//
// Without the asynchronous form every permute blocks: no faster than the
// blocking gather.
// RUN: overlap-opt %s --ovl-decompose-collective-einsum="gate=always" -o %t.sync.mlir
// RUN: overlap-sim %t.sync.mlir --topology 4x4x4 --json > %t.sync.json
// RUN: %python %S/Inputs/check_report.py %t.async.json --less step_time_s %t.sync.json
//
// The trace has a compute and a wait track per device and one per link.
// RUN: %python -c "import json,sys; t=json.load(open(sys.argv[1])); n={e['args']['name'] for e in t['traceEvents'] if e.get('ph')=='M'}; sys.exit(0 if {'device 0','compute','links'} <= n else 1)" %t.trace.json
//
// The text report names the einsum's loop steps.
// RUN: overlap-sim %t.async.mlir --topology 4x4x4 | FileCheck %s
// CHECK: step time
// CHECK: ovl.einsum "bf,fh->bh" @ {{.*}}.mlir:{{[0-9]+}}:{{[0-9]+}}

shard.grid @ring(shape = 4)

func.func @layer(%x: tensor<8192x4096xbf16>, %w: tensor<4096x4096xbf16>)
    -> tensor<8192x16384xf32> {
  %w_full = ovl.all_gather %w on @ring axes [0] dim 1
      : tensor<4096x4096xbf16> -> tensor<4096x16384xbf16>
  %y = ovl.einsum "bf,fh->bh" %x, %w_full
      : tensor<8192x4096xbf16>, tensor<4096x16384xbf16> -> tensor<8192x16384xf32>
  return %y : tensor<8192x16384xf32>
}
