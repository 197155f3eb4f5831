// RUN: overlap-opt %s --split-input-file --verify-diagnostics --ovl-lower-to-ici="topology=1x1x2"
// RUN: not overlap-opt %s --ovl-lower-to-ici="hardware=no-such-chip" 2>&1 | FileCheck %s --check-prefix=HW
// RUN: not overlap-opt %s --ovl-lower-to-ici="topology=1x1x4 device-assignment=0,1,1,2" 2>&1 | FileCheck %s --check-prefix=ASSIGN
// RUN: not overlap-opt %s --ovl-lower-to-ici="topology=1x1x4 device=4" 2>&1 | FileCheck %s --check-prefix=DEVICE
// RUN: not overlap-opt %s --ovl-lower-to-ici="topology=4x4" 2>&1 | FileCheck %s --check-prefix=RANK

// HW: unknown hardware 'no-such-chip' (built in: tpu-v4, tpu-v5e, tpu-v5p, h100-nvlink
// ASSIGN: error: cannot map grid ring onto the machine: device assignment entry 2 is physical device 1, already taken by entry 1
// DEVICE: error: device 4 is not on grid ring of 4 devices
// RANK: error: cannot map grid ring onto the machine: {{.*}}4x4

shard.grid @ring(shape = 4)

func.func @too_small(%x: tensor<8x16xf32>) -> tensor<32x16xf32> {
  // expected-error @below {{cannot map grid ring onto the machine: grid [4] has 4 devices but topology 1x1x2 torus without wrap-around has only 2}}
  %0 = ovl.all_gather %x on @ring axes [0] dim 0 : tensor<8x16xf32> -> tensor<32x16xf32>
  return %0 : tensor<32x16xf32>
}

// -----

// A dynamic grid has no machine: its size was multiplied as -2^63 (UBSan;
// found by the fuzzer).
shard.grid @dyn(shape = ?x4)

func.func @dynamic_grid(%x: tensor<2x8xbf16>) -> tensor<?x8xbf16> {
  // expected-error @below {{cannot map grid dyn onto the machine: grid shape [?, 4] is dynamic; a machine needs every extent}}
  %0 = ovl.all_gather %x on @dyn axes [0] dim 0 : tensor<2x8xbf16> -> tensor<?x8xbf16>
  return %0 : tensor<?x8xbf16>
}
