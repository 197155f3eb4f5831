// RUN: rm -rf %t && split-file %s %t
// RUN: overlap-opt %t/hardware.mlir --verify-diagnostics --pass-pipeline="builtin.module(func.func(ovl-decompose-collective-einsum{hardware=tpu-v9}))"
// RUN: overlap-opt %t/topology.mlir --verify-diagnostics --pass-pipeline="builtin.module(func.func(ovl-decompose-collective-einsum{topology=2x2x2}))"
// RUN: overlap-opt %t/topology-spec.mlir --verify-diagnostics --pass-pipeline="builtin.module(func.func(ovl-decompose-collective-einsum{topology=4x4}))"
// RUN: overlap-opt %t/assignment.mlir --split-input-file --verify-diagnostics --pass-pipeline="builtin.module(func.func(ovl-decompose-collective-einsum{device-assignment=0,1,2,2}))"
// RUN: overlap-opt %t/never.mlir --pass-pipeline="builtin.module(func.func(ovl-decompose-collective-einsum{hardware=tpu-v9 gate=never}))" | FileCheck %t/never.mlir

// The gate needs a machine for each grid: the hardware, a topology with
// room for the grid and a placement of its devices. When one cannot be
// built, the pass fails with an error on the collective it was building it
// for, rather than deciding on made-up numbers.

//--- hardware.mlir

shard.grid @ring(shape = 4)

func.func @unknown_hardware(%x: tensor<2x8xf32>, %w: tensor<8x4xf32>) -> tensor<2x16xf32> {
  // expected-error @+1 {{cannot map grid @ring onto the machine: unknown hardware 'tpu-v9' (built in: tpu-v4, tpu-v5e, tpu-v5p, h100-nvlink; or the path of a .json description)}}
  %g = ovl.all_gather %w on @ring axes [0] dim 1 : tensor<8x4xf32> -> tensor<8x16xf32>
  %y = ovl.einsum "bf,fh->bh" %x, %g : tensor<2x8xf32>, tensor<8x16xf32> -> tensor<2x16xf32>
  return %y : tensor<2x16xf32>
}

//--- topology.mlir

shard.grid @grid(shape = 4x4)

func.func @topology_too_small(%x: tensor<3x5xf32>, %w: tensor<5x8xf32>) -> tensor<3x2xf32> {
  %y = ovl.einsum "bf,fh->bh" %x, %w : tensor<3x5xf32>, tensor<5x8xf32> -> tensor<3x8xf32>
  // expected-error @+1 {{cannot map grid @grid onto the machine: grid [4, 4] has 16 devices but topology 2x2x2 torus without wrap-around has only 8}}
  %r = ovl.reduce_scatter %y on @grid axes [1] dim 1 : tensor<3x8xf32> -> tensor<3x2xf32>
  return %r : tensor<3x2xf32>
}

//--- topology-spec.mlir

shard.grid @ring(shape = 4)

func.func @topology_of_wrong_rank(%x: tensor<2x8xf32>, %w: tensor<8x4xf32>) -> tensor<2x16xf32> {
  // expected-error @+1 {{cannot map grid @ring onto the machine: topology '4x4' has 2 dimensions but tpu-v4 has a 3-D torus}}
  %g = ovl.all_gather %w on @ring axes [0] dim 1 : tensor<8x4xf32> -> tensor<8x16xf32>
  %y = ovl.einsum "bf,fh->bh" %x, %g : tensor<2x8xf32>, tensor<8x16xf32> -> tensor<2x16xf32>
  return %y : tensor<2x16xf32>
}

//--- assignment.mlir

shard.grid @ring(shape = 4)

func.func @assignment_not_injective(%x: tensor<2x8xf32>, %w: tensor<8x4xf32>) -> tensor<2x16xf32> {
  // expected-error @+1 {{cannot map grid @ring onto the machine: device assignment entry 3 is physical device 2, already taken by entry 2}}
  %g = ovl.all_gather %w on @ring axes [0] dim 1 : tensor<8x4xf32> -> tensor<8x16xf32>
  %y = ovl.einsum "bf,fh->bh" %x, %g : tensor<2x8xf32>, tensor<8x16xf32> -> tensor<2x16xf32>
  return %y : tensor<2x16xf32>
}

// -----

shard.grid @grid(shape = 2x4)

func.func @assignment_of_wrong_length(%x: tensor<2x8xf32>, %w: tensor<8x4xf32>) -> tensor<2x16xf32> {
  // expected-error @+1 {{cannot map grid @grid onto the machine: device assignment lists 4 physical devices but grid [2, 4] has 8}}
  %g = ovl.all_gather %w on @grid axes [1] dim 1 : tensor<8x4xf32> -> tensor<8x16xf32>
  %y = ovl.einsum "bf,fh->bh" %x, %g : tensor<2x8xf32>, tensor<8x16xf32> -> tensor<2x16xf32>
  return %y : tensor<2x16xf32>
}

//--- never.mlir

// gate=never estimates nothing, so it builds no machine and an unknown
// hardware name does not matter.

shard.grid @ring(shape = 4)

// CHECK-LABEL: func.func @never
// CHECK: ovl.all_gather
// CHECK-NOT: ovl.collective_permute
func.func @never(%x: tensor<2x8xf32>, %w: tensor<8x4xf32>) -> tensor<2x16xf32> {
  %g = ovl.all_gather %w on @ring axes [0] dim 1 : tensor<8x4xf32> -> tensor<8x16xf32>
  %y = ovl.einsum "bf,fh->bh" %x, %g : tensor<2x8xf32>, tensor<8x16xf32> -> tensor<2x16xf32>
  return %y : tensor<2x16xf32>
}
