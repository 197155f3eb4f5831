// RUN: overlap-opt %s --pass-pipeline="builtin.module(func.func(ovl-schedule{algorithm=top-down hardware=%S/Inputs/schedule-chip.json}))" | FileCheck %s --check-prefix=LARGE
// RUN: overlap-opt %s --pass-pipeline="builtin.module(func.func(ovl-schedule{algorithm=top-down memory-budget=5120 hardware=%S/Inputs/schedule-chip.json}))" | FileCheck %s --check-prefix=ONE
// RUN: overlap-opt %s --pass-pipeline="builtin.module(func.func(ovl-schedule{algorithm=top-down memory-budget=40960 hardware=%S/Inputs/schedule-chip.json}))" | FileCheck %s --check-prefix=LARGE
// RUN: overlap-opt %s --pass-pipeline="builtin.module(func.func(ovl-schedule{algorithm=top-down memory-budget=10240 hardware=%S/Inputs/schedule-chip.json}))" | FileCheck %s --check-prefix=ONE
// RUN: overlap-opt %s --pass-pipeline="builtin.module(func.func(ovl-schedule{memory-budget=1000 hardware=%S/Inputs/schedule-chip.json}))" 2>&1 >/dev/null | FileCheck %s --check-prefix=WARN
// RUN: not overlap-opt %s --pass-pipeline="builtin.module(func.func(ovl-schedule{memory-budget=-1 hardware=%S/Inputs/schedule-chip.json}))" 2>&1 | FileCheck %s --check-prefix=BAD

// The memory budget bounds the bytes that transfers in flight hold (each
// gather here holds its 4096-byte destination and its 1024-byte input:
// 5120 bytes). The top-down scheduler starts transfers as early as it may,
// so without a tight budget (Inputs/schedule-chip.json gives no HBM size:
// unlimited; 40960 bytes) it starts the second layer's weight gather
// during the first layer, before the first gather is done (after the first
// einsum: the two gathers share the ring's links, so starting both at the
// top would only delay the first); a budget that fits one gather keeps the
// second start until the first gather is done. So does 10240 bytes, which
// fits both: the two would hold their buffers, from the starts to the
// gathered weights' users, past the transfers' quarter of the budget
// (kHeldMemoryShare), and a weight's gather (a prefetch) then waits while
// another one is in flight or landed and not yet used. A single transfer
// larger than the budget is reported.

// LARGE-LABEL: func.func @two_layers
// LARGE: ovl.all_gather_start %arg2
// LARGE-NOT: ovl.collective_done
// LARGE: ovl.all_gather_start %arg3
// LARGE: ovl.collective_done

// ONE-LABEL: func.func @two_layers
// ONE: ovl.all_gather_start %arg2
// ONE-NOT: ovl.all_gather_start
// ONE: ovl.collective_done
// ONE: ovl.all_gather_start %arg3

// WARN: warning: ovl-schedule: 5120 bytes of transfer buffers in flight here, more than the memory budget of 1000: the dependencies allow no order within it

// BAD: ovl-schedule: memory-budget must be 0 or between 1e-30 and 1e+30, got -1

shard.grid @ring(shape = 4)
func.func @two_layers(%x: tensor<4x32xf32>, %m: tensor<32x32xf32>, %w1: tensor<8x32xf32>, %w2: tensor<8x32xf32>) -> tensor<4x32xf32> {
  %n1 = ovl.einsum "bf,fh->bh" %x, %m : tensor<4x32xf32>, tensor<32x32xf32> -> tensor<4x32xf32>
  %b1 = bufferization.alloc_tensor() : tensor<32x32xf32>
  %p1, %t1 = ovl.all_gather_start %w1 into %b1 on @ring axes [0] dim 0 : tensor<8x32xf32> -> tensor<32x32xf32>
  %g1 = ovl.collective_done %t1 keep(%w1 : tensor<8x32xf32>) into %p1 : tensor<32x32xf32>
  %y1 = ovl.einsum "bf,fh->bh" %n1, %g1 : tensor<4x32xf32>, tensor<32x32xf32> -> tensor<4x32xf32>
  %n2 = ovl.einsum "bf,fh->bh" %y1, %m : tensor<4x32xf32>, tensor<32x32xf32> -> tensor<4x32xf32>
  %b2 = bufferization.alloc_tensor() : tensor<32x32xf32>
  %p2, %t2 = ovl.all_gather_start %w2 into %b2 on @ring axes [0] dim 0 : tensor<8x32xf32> -> tensor<32x32xf32>
  %g2 = ovl.collective_done %t2 keep(%w2 : tensor<8x32xf32>) into %p2 : tensor<32x32xf32>
  %y2 = ovl.einsum "bf,fh->bh" %n2, %g2 : tensor<4x32xf32>, tensor<32x32xf32> -> tensor<4x32xf32>
  return %y2 : tensor<4x32xf32>
}
