// RUN: rm -rf %t && split-file %s %t
// RUN: not overlap-opt %t/hardware.mlir --pass-pipeline="builtin.module(func.func(ovl-schedule{algorithm=sideways}))" 2>&1 | FileCheck %t/hardware.mlir --check-prefix=ALGORITHM
// RUN: overlap-opt %t/hardware.mlir --verify-diagnostics --pass-pipeline="builtin.module(func.func(ovl-schedule{hardware=tpu-v9}))"
// RUN: overlap-opt %t/topology.mlir --verify-diagnostics --pass-pipeline="builtin.module(func.func(ovl-schedule{topology=1x1x1}))"
// RUN: overlap-opt %t/over-budget.mlir --allow-unregistered-dialect --verify-diagnostics --pass-pipeline="builtin.module(func.func(ovl-schedule{max-in-flight=1}))"
// RUN: overlap-opt %t/over-budget.mlir --allow-unregistered-dialect --verify-diagnostics --pass-pipeline="builtin.module(func.func(ovl-schedule{algorithm=top-down max-in-flight=1}))"

// What ovl-schedule reports. Options it cannot parse fail the pipeline; a
// machine it cannot build fails the pass with an error where the machine
// was needed; dependencies that force more transfers in flight than the
// budget get a warning on the op where the count first exceeds it, and the
// schedule goes on.

//--- hardware.mlir

// ALGORITHM: overlap-opt: error: pass 'ovl-schedule': option 'algorithm' has no value 'sideways' (valid: bottom-up, top-down)

shard.grid @ring(shape = 2)

// The hardware prices every op and sets the default budget: the function
// cannot be scheduled without it.
// expected-error @+1 {{ovl-schedule: unknown hardware 'tpu-v9' (built in: tpu-v4, tpu-v5e, tpu-v5p, h100-nvlink; or the path of a .json description)}}
func.func @unknown_hardware(%a: tensor<32x16xf32>, %b: tensor<32x16xf32>) -> tensor<32x16xf32> {
  %p, %t = ovl.collective_permute_start %a into %b on @ring axes [0] pairs [0 -> 1, 1 -> 0] : tensor<32x16xf32>
  %d = ovl.collective_permute_done %t keep(%a) into %p : tensor<32x16xf32>
  return %d : tensor<32x16xf32>
}

//--- topology.mlir

shard.grid @ring(shape = 2)

// A transfer is priced on the grid's placement: the topology must hold it.
func.func @topology_too_small(%a: tensor<32x16xf32>, %b: tensor<32x16xf32>) -> tensor<32x16xf32> {
  // expected-error @+1 {{cannot map grid @ring onto the machine: grid [2] has 2 devices but topology 1x1x1 torus without wrap-around has only 1}}
  %p, %t = ovl.collective_permute_start %a into %b on @ring axes [0] pairs [0 -> 1, 1 -> 0] : tensor<32x16xf32>
  %d = ovl.collective_permute_done %t keep(%a) into %p : tensor<32x16xf32>
  return %d : tensor<32x16xf32>
}

//--- over-budget.mlir

shard.grid @ring(shape = 2)

// Both starts must precede the unknown op, both dones follow it: two
// transfers are in flight whatever the order, one more than the budget.
func.func @over_budget(%a0: tensor<32x16xf32>, %a1: tensor<32x16xf32>, %b0: tensor<32x16xf32>, %b1: tensor<32x16xf32>) -> (tensor<32x16xf32>, tensor<32x16xf32>) {
  %p0, %t0 = ovl.collective_permute_start %a0 into %b0 on @ring axes [0] pairs [0 -> 1, 1 -> 0] : tensor<32x16xf32>
  // expected-warning @+1 {{ovl-schedule: 2 asynchronous transfers in flight here, more than max-in-flight = 1: the dependencies allow no order within the budget}}
  %p1, %t1 = ovl.collective_permute_start %a1 into %b1 on @ring axes [0] pairs [0 -> 1, 1 -> 0] : tensor<32x16xf32>
  "test.barrier"() : () -> ()
  %d0 = ovl.collective_permute_done %t0 keep(%a0) into %p0 : tensor<32x16xf32>
  %d1 = ovl.collective_permute_done %t1 keep(%a1) into %p1 : tensor<32x16xf32>
  return %d0, %d1 : tensor<32x16xf32>, tensor<32x16xf32>
}
