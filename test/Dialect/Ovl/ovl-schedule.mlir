// RUN: overlap-opt %s --split-input-file --allow-unregistered-dialect --pass-pipeline="builtin.module(func.func(ovl-schedule{hardware=%S/Inputs/schedule-chip.json}))" | FileCheck %s --check-prefixes=CHECK,BU
// RUN: overlap-opt %s --split-input-file --allow-unregistered-dialect --pass-pipeline="builtin.module(func.func(ovl-schedule{algorithm=top-down hardware=%S/Inputs/schedule-chip.json}))" | FileCheck %s --check-prefixes=CHECK,TD
// RUN: overlap-opt %s --split-input-file --allow-unregistered-dialect --pass-pipeline="builtin.module(func.func(ovl-schedule{hardware=%S/Inputs/schedule-latency-chip.json}))" | FileCheck %s --check-prefix=SLOTS
// RUN: overlap-opt %s --split-input-file --allow-unregistered-dialect --pass-pipeline="builtin.module(func.func(ovl-schedule{algorithm=top-down hardware=%S/Inputs/schedule-latency-chip.json}))" | FileCheck %s --check-prefix=SLOTS

// ovl-schedule on tiny blocks, each run by both schedulers: CHECK lines hold
// for both, BU for bottom-up (the default), TD for top-down. The machine is
// Inputs/schedule-chip.json, whose round numbers make the costs easy to
// follow: an einsum of 4x32 by 32x16 takes 4.1 us, a 32x16xf32 transfer to
// the neighbour 2.56 us, so one einsum hides one transfer. Its transfers
// are all bandwidth: two over the same links take as long together as one
// after the other. SLOTS checks Inputs/schedule-latency-chip.json, whose
// transfers take as long but are all latency, so that they overlap.

/// The einsum that does not need the transfer moves between the start and
/// the done, which lands right before its first user.

// CHECK-LABEL: func.func @hide_behind_einsum
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4x32xf32>, %[[W:[^:]+]]: tensor<32x16xf32>, %[[A:[^:]+]]: tensor<32x16xf32>)
// CHECK: ovl.collective_permute_start %[[A]]
// CHECK-NEXT: %[[FREE:[^ ]+]] = ovl.einsum "bf,fh->bh" %[[X]], %[[W]]
// CHECK-NEXT: %[[D:[^ ]+]] = ovl.collective_permute_done
// CHECK-NEXT: %[[USE:[^ ]+]] = ovl.einsum "bf,fh->bh" %[[X]], %[[D]]
// CHECK-NEXT: return %[[USE]], %[[FREE]]
shard.grid @ring(shape = 2)

func.func @hide_behind_einsum(%x: tensor<4x32xf32>, %w: tensor<32x16xf32>, %a: tensor<32x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %buf = bufferization.alloc_tensor() : tensor<32x16xf32>
  %p, %t = ovl.collective_permute_start %a into %buf on @ring axes [0] pairs [0 -> 1, 1 -> 0] : tensor<32x16xf32>
  %d = ovl.collective_permute_done %t keep(%a) into %p : tensor<32x16xf32>
  %use = ovl.einsum "bf,fh->bh" %x, %d : tensor<4x32xf32>, tensor<32x16xf32> -> tensor<4x16xf32>
  %free = ovl.einsum "bf,fh->bh" %x, %w : tensor<4x32xf32>, tensor<32x16xf32> -> tensor<4x16xf32>
  return %use, %free : tensor<4x16xf32>, tensor<4x16xf32>
}

// -----

/// A done the input places early sinks to right before its first user, so
/// that the independent einsums hide the transfer. Bottom-up starts the
/// transfer no earlier than it needs (one einsum covers it on this chip);
/// top-down as early as it can.

// CHECK-LABEL: func.func @done_sinks_to_first_user
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4x32xf32>, %[[W:[^:]+]]: tensor<32x16xf32>, %[[A:[^:]+]]: tensor<32x16xf32>)
// BU: %[[F1:[^ ]+]] = ovl.einsum "bf,fh->bh" %[[X]], %[[W]] :
// BU-NEXT: ovl.collective_permute_start %[[A]]
// TD: ovl.collective_permute_start %[[A]]
// TD-NEXT: %[[F1:[^ ]+]] = ovl.einsum "bf,fh->bh" %[[X]], %[[W]] :
// CHECK-NEXT: %[[F2:[^ ]+]] = ovl.einsum "bf,fh->bh" %[[X]], %[[W]] acc %[[F1]]
// CHECK-NEXT: %[[D:[^ ]+]] = ovl.collective_permute_done
// CHECK-NEXT: %[[U1:[^ ]+]] = ovl.einsum "bf,fh->bh" %[[X]], %[[D]] :
// CHECK-NEXT: ovl.einsum "bf,fh->bh" %[[X]], %[[D]] acc %[[U1]]
shard.grid @ring(shape = 2)

func.func @done_sinks_to_first_user(%x: tensor<4x32xf32>, %w: tensor<32x16xf32>, %a: tensor<32x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>) {
  %buf = bufferization.alloc_tensor() : tensor<32x16xf32>
  %p, %t = ovl.collective_permute_start %a into %buf on @ring axes [0] pairs [0 -> 1, 1 -> 0] : tensor<32x16xf32>
  %d = ovl.collective_permute_done %t keep(%a) into %p : tensor<32x16xf32>
  %free1 = ovl.einsum "bf,fh->bh" %x, %w : tensor<4x32xf32>, tensor<32x16xf32> -> tensor<4x16xf32>
  %use1 = ovl.einsum "bf,fh->bh" %x, %d : tensor<4x32xf32>, tensor<32x16xf32> -> tensor<4x16xf32>
  %free2 = ovl.einsum "bf,fh->bh" %x, %w acc %free1 : tensor<4x32xf32>, tensor<32x16xf32> -> tensor<4x16xf32>
  %use2 = ovl.einsum "bf,fh->bh" %x, %d acc %use1 : tensor<4x32xf32>, tensor<32x16xf32> -> tensor<4x16xf32>
  return %use1, %free2, %use2 : tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>
}

// -----

/// Ops of other dialects are compute priced by the cost model (one pass
/// over their data for elementwise ops, linalg.matmul too): they hide the
/// transfer like einsums. The matmul alone covers it, so bottom-up starts
/// the transfer right above it.

// CHECK-LABEL: func.func @other_dialects
// BU: math.exp
// BU-NEXT: arith.mulf
// BU-NEXT: tensor.empty
// BU-NEXT: ovl.collective_permute_start
// BU-NEXT: linalg.matmul
// TD: ovl.collective_permute_start
// TD-NEXT: math.exp
// TD-NEXT: arith.mulf
// TD-NEXT: tensor.empty
// TD-NEXT: linalg.matmul
// CHECK-NEXT: %[[D:[^ ]+]] = ovl.collective_permute_done
// CHECK-NEXT: ovl.einsum "bf,fh->bh" %{{.+}}, %[[D]]
shard.grid @ring(shape = 2)

func.func @other_dialects(%x: tensor<4x32xf32>, %a: tensor<32x16xf32>, %m: tensor<64x64xf32>, %n: tensor<64x64xf32>) -> (tensor<4x16xf32>, tensor<64x64xf32>, tensor<64x64xf32>) {
  %buf = bufferization.alloc_tensor() : tensor<32x16xf32>
  %p, %t = ovl.collective_permute_start %a into %buf on @ring axes [0] pairs [0 -> 1, 1 -> 0] : tensor<32x16xf32>
  %d = ovl.collective_permute_done %t keep(%a) into %p : tensor<32x16xf32>
  %use = ovl.einsum "bf,fh->bh" %x, %d : tensor<4x32xf32>, tensor<32x16xf32> -> tensor<4x16xf32>
  %exp = math.exp %m : tensor<64x64xf32>
  %mul = arith.mulf %exp, %n : tensor<64x64xf32>
  %zero = tensor.empty() : tensor<64x64xf32>
  %mm = linalg.matmul ins(%m, %n : tensor<64x64xf32>, tensor<64x64xf32>) outs(%zero : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %use, %mul, %mm : tensor<4x16xf32>, tensor<64x64xf32>, tensor<64x64xf32>
}

// -----

/// An op with unknown effects (here an unregistered one) is a barrier:
/// neither the done before it nor the einsum after it crosses it.

// CHECK-LABEL: func.func @unknown_op_is_a_barrier
// CHECK: ovl.collective_permute_start
// CHECK-NEXT: ovl.collective_permute_done
// CHECK-NEXT: "test.opaque"
// CHECK-NEXT: ovl.einsum
// CHECK-NEXT: ovl.einsum
shard.grid @ring(shape = 2)

func.func @unknown_op_is_a_barrier(%x: tensor<4x32xf32>, %w: tensor<32x16xf32>, %a: tensor<32x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %buf = bufferization.alloc_tensor() : tensor<32x16xf32>
  %p, %t = ovl.collective_permute_start %a into %buf on @ring axes [0] pairs [0 -> 1, 1 -> 0] : tensor<32x16xf32>
  %d = ovl.collective_permute_done %t keep(%a) into %p : tensor<32x16xf32>
  %o = "test.opaque"(%x) : (tensor<4x32xf32>) -> tensor<4x32xf32>
  %use = ovl.einsum "bf,fh->bh" %o, %d : tensor<4x32xf32>, tensor<32x16xf32> -> tensor<4x16xf32>
  %free = ovl.einsum "bf,fh->bh" %x, %w : tensor<4x32xf32>, tensor<32x16xf32> -> tensor<4x16xf32>
  return %use, %free : tensor<4x16xf32>, tensor<4x16xf32>
}

// -----

/// Memory effects order ops: the load of %m stays before the store to %m
/// that follows it, although the load waits for the transfer and the store
/// does not.

// CHECK-LABEL: func.func @memory_order
// CHECK-SAME: (%{{[^:]+}}: tensor<4x32xf32>, %{{[^:]+}}: tensor<32x16xf32>, %[[M:[^:]+]]: memref<16xf32>, %[[V:[^:]+]]: f32)
// CHECK: ovl.collective_permute_done
// CHECK: memref.load %[[M]]
// CHECK-NEXT: memref.store %[[V]], %[[M]]
shard.grid @ring(shape = 2)

func.func @memory_order(%x: tensor<4x32xf32>, %a: tensor<32x16xf32>, %m: memref<16xf32>, %v: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %buf = bufferization.alloc_tensor() : tensor<32x16xf32>
  %p, %t = ovl.collective_permute_start %a into %buf on @ring axes [0] pairs [0 -> 1, 1 -> 0] : tensor<32x16xf32>
  %d = ovl.collective_permute_done %t keep(%a) into %p : tensor<32x16xf32>
  %e = tensor.extract %d[%c0, %c0] : tensor<32x16xf32>
  %i = arith.fptosi %e : f32 to i32
  %idx = arith.index_cast %i : i32 to index
  %r = memref.load %m[%idx] : memref<16xf32>
  memref.store %v, %m[%c0] : memref<16xf32>
  return %r : f32
}

// -----

/// Collectives are not ordered among themselves: a blocking all_reduce
/// moves between a start and its done (every device runs the same
/// schedule, so the transfers still pair up).

// CHECK-LABEL: func.func @collectives_not_ordered
// CHECK: ovl.collective_permute_start
// CHECK-NEXT: ovl.all_reduce
// CHECK-NEXT: ovl.collective_permute_done
shard.grid @ring(shape = 2)

func.func @collectives_not_ordered(%x: tensor<4x32xf32>, %a: tensor<32x16xf32>, %y: tensor<64x64xf32>) -> (tensor<4x16xf32>, tensor<64x64xf32>) {
  %buf = bufferization.alloc_tensor() : tensor<32x16xf32>
  %p, %t = ovl.collective_permute_start %a into %buf on @ring axes [0] pairs [0 -> 1, 1 -> 0] : tensor<32x16xf32>
  %d = ovl.collective_permute_done %t keep(%a) into %p : tensor<32x16xf32>
  %use = ovl.einsum "bf,fh->bh" %x, %d : tensor<4x32xf32>, tensor<32x16xf32> -> tensor<4x16xf32>
  %sum = ovl.all_reduce %y on @ring axes [0] : tensor<64x64xf32>
  return %use, %sum : tensor<4x16xf32>, tensor<64x64xf32>
}

// -----

/// The second start receives into %a, the first transfer's send buffer:
/// the readers of %a (the first done, the einsum on %a) stay before it, so
/// bufferization can still write in place. Otherwise top-down would start
/// it right after the first done, which it needs, and bottom-up right
/// above the einsum on %n, too short to hide it.

// CHECK-LABEL: func.func @in_place
// CHECK-SAME: (%[[X:[^:]+]]: tensor<1x32xf32>, %[[A:[^:]+]]: tensor<32x16xf32>, %[[SPARE:[^:]+]]: tensor<32x16xf32>)
// CHECK: ovl.collective_permute_start %[[A]] into %[[SPARE]]
// CHECK-NEXT: %[[N:[^ ]+]] = ovl.collective_permute_done %{{.+}} keep(%[[A]])
// CHECK-NEXT: ovl.einsum "fh,fh->fh" %[[A]], %[[N]]
// CHECK-NEXT: ovl.collective_permute_start %[[N]] into %[[A]]
// CHECK-NEXT: ovl.einsum "bf,fh->bh" %[[X]], %[[N]]
// CHECK-NEXT: ovl.collective_permute_done
shard.grid @ring(shape = 2)

func.func @in_place(%x: tensor<1x32xf32>, %a: tensor<32x16xf32>, %spare: tensor<32x16xf32>) -> (tensor<32x16xf32>, tensor<1x16xf32>, tensor<32x16xf32>) {
  %p1, %t1 = ovl.collective_permute_start %a into %spare on @ring axes [0] pairs [0 -> 1, 1 -> 0] : tensor<32x16xf32>
  %n = ovl.collective_permute_done %t1 keep(%a) into %p1 : tensor<32x16xf32>
  %e1 = ovl.einsum "fh,fh->fh" %a, %n : tensor<32x16xf32>, tensor<32x16xf32> -> tensor<32x16xf32>
  %p2, %t2 = ovl.collective_permute_start %n into %a on @ring axes [0] pairs [0 -> 1, 1 -> 0] : tensor<32x16xf32>
  %e2 = ovl.einsum "bf,fh->bh" %x, %n : tensor<1x32xf32>, tensor<32x16xf32> -> tensor<1x16xf32>
  %m = ovl.collective_permute_done %t2 keep(%n) into %p2 : tensor<32x16xf32>
  return %e1, %e2, %m : tensor<32x16xf32>, tensor<1x16xf32>, tensor<32x16xf32>
}

// -----

/// Memory: bottom-up starts each transfer as late as its cover allows (an
/// einsum here), so that its receive buffer is live no longer than needed;
/// top-down starts each as early as its operands, the budget and the links
/// allow: %a at the top, %b, over the same links, once %a's transfer has
/// arrived (one einsum later), as it would arrive no sooner started with it.

// CHECK-LABEL: func.func @start_not_earlier_than_needed
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4x32xf32>, %[[W:[^:]+]]: tensor<32x16xf32>, %[[A:[^:]+]]: tensor<32x16xf32>, %[[B:[^:]+]]: tensor<32x16xf32>,
// BU: %[[C1:[^ ]+]] = ovl.einsum "bf,fh->bh" %[[X]], %[[W]] :
// BU-NEXT: %[[C2:[^ ]+]] = ovl.einsum "bf,fh->bh" %[[X]], %[[W]] acc %[[C1]]
// BU-NEXT: ovl.collective_permute_start %[[A]]
// BU-NEXT: ovl.einsum "bf,fh->bh" %[[X]], %[[W]] acc %[[C2]]
// BU-NEXT: ovl.collective_permute_start %[[B]]
// BU-NEXT: ovl.collective_permute_done %{{.+}} keep(%[[A]])
// TD: ovl.collective_permute_start %[[A]]
// TD-NEXT: ovl.einsum "bf,fh->bh" %[[X]], %[[W]] :
// TD-NEXT: ovl.collective_permute_start %[[B]]
shard.grid @ring(shape = 2)

func.func @start_not_earlier_than_needed(%x: tensor<4x32xf32>, %w: tensor<32x16xf32>, %a: tensor<32x16xf32>, %b: tensor<32x16xf32>, %ra: tensor<32x16xf32>, %rb: tensor<32x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>) {
  %pa, %ta = ovl.collective_permute_start %a into %ra on @ring axes [0] pairs [0 -> 1, 1 -> 0] : tensor<32x16xf32>
  %da = ovl.collective_permute_done %ta keep(%a) into %pa : tensor<32x16xf32>
  %ua = ovl.einsum "bf,fh->bh" %x, %da : tensor<4x32xf32>, tensor<32x16xf32> -> tensor<4x16xf32>
  %c1 = ovl.einsum "bf,fh->bh" %x, %w : tensor<4x32xf32>, tensor<32x16xf32> -> tensor<4x16xf32>
  %c2 = ovl.einsum "bf,fh->bh" %x, %w acc %c1 : tensor<4x32xf32>, tensor<32x16xf32> -> tensor<4x16xf32>
  %c3 = ovl.einsum "bf,fh->bh" %x, %w acc %c2 : tensor<4x32xf32>, tensor<32x16xf32> -> tensor<4x16xf32>
  %pb, %tb = ovl.collective_permute_start %b into %rb on @ring axes [0] pairs [0 -> 1, 1 -> 0] : tensor<32x16xf32>
  %db = ovl.collective_permute_done %tb keep(%b) into %pb : tensor<32x16xf32>
  %ub = ovl.einsum "bf,fh->bh" %x, %db : tensor<4x32xf32>, tensor<32x16xf32> -> tensor<4x16xf32>
  return %ua, %c3, %ub : tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>
}

// -----

/// The blocks of scf.if and scf.for are scheduled too.

// CHECK-LABEL: func.func @nested_blocks
// CHECK: scf.if
// CHECK-NEXT: ovl.collective_permute_start
// CHECK-NEXT: ovl.einsum
// CHECK-NEXT: ovl.collective_permute_done
// CHECK: scf.for
// CHECK-NEXT: ovl.collective_permute_start
// CHECK-NEXT: ovl.einsum
// CHECK-NEXT: ovl.collective_permute_done
shard.grid @ring(shape = 2)

func.func @nested_blocks(%cond: i1, %x: tensor<4x32xf32>, %w: tensor<32x16xf32>, %a: tensor<32x16xf32>, %r: tensor<32x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %y = scf.if %cond -> tensor<4x16xf32> {
    %p, %t = ovl.collective_permute_start %a into %r on @ring axes [0] pairs [0 -> 1, 1 -> 0] : tensor<32x16xf32>
    %d = ovl.collective_permute_done %t keep(%a) into %p : tensor<32x16xf32>
    %use = ovl.einsum "bf,fh->bh" %x, %d : tensor<4x32xf32>, tensor<32x16xf32> -> tensor<4x16xf32>
    %free = ovl.einsum "bf,fh->bh" %x, %w : tensor<4x32xf32>, tensor<32x16xf32> -> tensor<4x16xf32>
    %sum = arith.addf %use, %free : tensor<4x16xf32>
    scf.yield %sum : tensor<4x16xf32>
  } else {
    %e = ovl.einsum "bf,fh->bh" %x, %w : tensor<4x32xf32>, tensor<32x16xf32> -> tensor<4x16xf32>
    scf.yield %e : tensor<4x16xf32>
  }
  %z = scf.for %i = %c0 to %c3 step %c1 iter_args(%acc = %y) -> tensor<4x16xf32> {
    %p, %t = ovl.collective_permute_start %a into %r on @ring axes [0] pairs [0 -> 1, 1 -> 0] : tensor<32x16xf32>
    %d = ovl.collective_permute_done %t keep(%a) into %p : tensor<32x16xf32>
    %use = ovl.einsum "bf,fh->bh" %x, %d acc %acc : tensor<4x32xf32>, tensor<32x16xf32> -> tensor<4x16xf32>
    %free = ovl.einsum "bf,fh->bh" %x, %w : tensor<4x32xf32>, tensor<32x16xf32> -> tensor<4x16xf32>
    %sum = arith.addf %use, %free : tensor<4x16xf32>
    scf.yield %sum : tensor<4x16xf32>
  }
  return %y, %z : tensor<4x16xf32>, tensor<4x16xf32>
}

// -----

/// Without max-in-flight the budget is the hardware's dmaSlots, 4 on
/// Inputs/schedule-latency-chip.json: four transfers go, then a done.
/// (Bandwidth-bound over one link, on schedule-chip.json, the transfers
/// would gain nothing from going together.)

// SLOTS-LABEL: func.func @budget_from_dma_slots
// SLOTS-COUNT-4: ovl.collective_permute_start
// SLOTS-NEXT: ovl.collective_permute_done
// SLOTS-NOT: ovl.collective_permute_done
// SLOTS: ovl.collective_permute_start
shard.grid @ring(shape = 2)

func.func @budget_from_dma_slots(%x: tensor<1x32xf32>, %a0: tensor<32x16xf32>, %a1: tensor<32x16xf32>, %a2: tensor<32x16xf32>, %a3: tensor<32x16xf32>, %a4: tensor<32x16xf32>, %a5: tensor<32x16xf32>, %b0: tensor<32x16xf32>, %b1: tensor<32x16xf32>, %b2: tensor<32x16xf32>, %b3: tensor<32x16xf32>, %b4: tensor<32x16xf32>, %b5: tensor<32x16xf32>) -> (tensor<1x16xf32>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<1x16xf32>) {
  %p0, %t0 = ovl.collective_permute_start %a0 into %b0 on @ring axes [0] pairs [0 -> 1, 1 -> 0] : tensor<32x16xf32>
  %d0 = ovl.collective_permute_done %t0 keep(%a0) into %p0 : tensor<32x16xf32>
  %e0 = ovl.einsum "bf,fh->bh" %x, %d0 : tensor<1x32xf32>, tensor<32x16xf32> -> tensor<1x16xf32>
  %p1, %t1 = ovl.collective_permute_start %a1 into %b1 on @ring axes [0] pairs [0 -> 1, 1 -> 0] : tensor<32x16xf32>
  %d1 = ovl.collective_permute_done %t1 keep(%a1) into %p1 : tensor<32x16xf32>
  %e1 = ovl.einsum "bf,fh->bh" %x, %d1 : tensor<1x32xf32>, tensor<32x16xf32> -> tensor<1x16xf32>
  %p2, %t2 = ovl.collective_permute_start %a2 into %b2 on @ring axes [0] pairs [0 -> 1, 1 -> 0] : tensor<32x16xf32>
  %d2 = ovl.collective_permute_done %t2 keep(%a2) into %p2 : tensor<32x16xf32>
  %e2 = ovl.einsum "bf,fh->bh" %x, %d2 : tensor<1x32xf32>, tensor<32x16xf32> -> tensor<1x16xf32>
  %p3, %t3 = ovl.collective_permute_start %a3 into %b3 on @ring axes [0] pairs [0 -> 1, 1 -> 0] : tensor<32x16xf32>
  %d3 = ovl.collective_permute_done %t3 keep(%a3) into %p3 : tensor<32x16xf32>
  %e3 = ovl.einsum "bf,fh->bh" %x, %d3 : tensor<1x32xf32>, tensor<32x16xf32> -> tensor<1x16xf32>
  %p4, %t4 = ovl.collective_permute_start %a4 into %b4 on @ring axes [0] pairs [0 -> 1, 1 -> 0] : tensor<32x16xf32>
  %d4 = ovl.collective_permute_done %t4 keep(%a4) into %p4 : tensor<32x16xf32>
  %e4 = ovl.einsum "bf,fh->bh" %x, %d4 : tensor<1x32xf32>, tensor<32x16xf32> -> tensor<1x16xf32>
  %p5, %t5 = ovl.collective_permute_start %a5 into %b5 on @ring axes [0] pairs [0 -> 1, 1 -> 0] : tensor<32x16xf32>
  %d5 = ovl.collective_permute_done %t5 keep(%a5) into %p5 : tensor<32x16xf32>
  %e5 = ovl.einsum "bf,fh->bh" %x, %d5 : tensor<1x32xf32>, tensor<32x16xf32> -> tensor<1x16xf32>
  return %e0, %e1, %e2, %e3, %e4, %e5 : tensor<1x16xf32>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<1x16xf32>
}
