// RUN: overlap-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(ovl-schedule{max-in-flight=1}))" | FileCheck %s --check-prefixes=CHECK,BU1,ONE
// RUN: overlap-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(ovl-schedule{max-in-flight=2}))" | FileCheck %s --check-prefixes=CHECK,BU2,WIDE
// RUN: overlap-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(ovl-schedule{max-in-flight=5}))" | FileCheck %s --check-prefixes=CHECK,BU5,WIDE
// RUN: overlap-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(ovl-schedule{algorithm=top-down max-in-flight=1}))" | FileCheck %s --check-prefixes=CHECK,TD1,ONE
// RUN: overlap-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(ovl-schedule{algorithm=top-down max-in-flight=2}))" | FileCheck %s --check-prefixes=CHECK,TD2,WIDE
// RUN: overlap-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(ovl-schedule{algorithm=top-down max-in-flight=5}))" | FileCheck %s --check-prefixes=CHECK,TD5,WIDE
//
// The in-flight count along each scheduled function, against the budget:
// RUN: overlap-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(ovl-schedule{max-in-flight=1}))" | %python %S/Inputs/in_flight.py | FileCheck %s --check-prefix=PEAK1
// RUN: overlap-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(ovl-schedule{algorithm=top-down max-in-flight=1}))" | %python %S/Inputs/in_flight.py | FileCheck %s --check-prefix=PEAK1
// RUN: overlap-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(ovl-schedule{max-in-flight=2}))" | %python %S/Inputs/in_flight.py | FileCheck %s --check-prefix=PEAK2
// RUN: overlap-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(ovl-schedule{algorithm=top-down max-in-flight=2}))" | %python %S/Inputs/in_flight.py | FileCheck %s --check-prefix=PEAK2
// RUN: overlap-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(ovl-schedule{max-in-flight=5}))" | %python %S/Inputs/in_flight.py | FileCheck %s --check-prefix=PEAK5
// RUN: overlap-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(ovl-schedule{algorithm=top-down max-in-flight=5}))" | %python %S/Inputs/in_flight.py | FileCheck %s --check-prefix=PEAK5

// The budget of asynchronous transfers in flight (`max-in-flight`), on TPU
// v4, where these tiny einsums take nanoseconds and each transfer
// microseconds: both schedulers keep as many transfers in flight as the
// budget allows, and never more. Prefixes BU<n> and TD<n> check bottom-up
// and top-down with a budget of n, ONE both with a budget of 1, WIDE both
// with 2 or 5, PEAK<n> the most transfers in flight, counted along the
// output by Inputs/in_flight.py.

/// Six independent transfers, each feeding one einsum. With a budget of 1 a
/// done comes before the next start; with 2 and 5 that many starts go
/// ahead. Bottom-up piles the einsums under the last transfer it can keep
/// open; top-down issues each start as early as a slot frees.

// PEAK1: @six_transfers: max in flight 1
// PEAK2: @six_transfers: max in flight 2
// PEAK5: @six_transfers: max in flight 5

// CHECK-LABEL: func.func @six_transfers
// CHECK-SAME: (%[[X:[^:]+]]: tensor<1x32xf32>, %[[A0:[^:]+]]: tensor<32x16xf32>, %[[A1:[^:]+]]: tensor<32x16xf32>, %[[A2:[^:]+]]: tensor<32x16xf32>, %[[A3:[^:]+]]: tensor<32x16xf32>, %[[A4:[^:]+]]: tensor<32x16xf32>, %[[A5:[^:]+]]: tensor<32x16xf32>,
// BU1: ovl.collective_permute_start %[[A0]] into
// BU1-NEXT: %[[D0:[^ ]+]] = ovl.collective_permute_done %{{.+}} keep(%[[A0]])
// BU1-NEXT: ovl.collective_permute_start %[[A1]] into
// BU1-NEXT: %[[D1:[^ ]+]] = ovl.collective_permute_done %{{.+}} keep(%[[A1]])
// BU1-NEXT: ovl.collective_permute_start %[[A2]] into
// BU1-NEXT: %[[D2:[^ ]+]] = ovl.collective_permute_done %{{.+}} keep(%[[A2]])
// BU1-NEXT: ovl.collective_permute_start %[[A3]] into
// BU1-NEXT: %[[D3:[^ ]+]] = ovl.collective_permute_done %{{.+}} keep(%[[A3]])
// BU1-NEXT: ovl.collective_permute_start %[[A4]] into
// BU1-NEXT: %[[D4:[^ ]+]] = ovl.collective_permute_done %{{.+}} keep(%[[A4]])
// BU1-NEXT: ovl.collective_permute_start %[[A5]] into
// BU1-NEXT: ovl.einsum "bf,fh->bh" %[[X]], %[[D0]]
// BU1-NEXT: ovl.einsum "bf,fh->bh" %[[X]], %[[D1]]
// BU1-NEXT: ovl.einsum "bf,fh->bh" %[[X]], %[[D2]]
// BU1-NEXT: ovl.einsum "bf,fh->bh" %[[X]], %[[D3]]
// BU1-NEXT: ovl.einsum "bf,fh->bh" %[[X]], %[[D4]]
// BU1-NEXT: %[[D5:[^ ]+]] = ovl.collective_permute_done %{{.+}} keep(%[[A5]])
// BU1-NEXT: ovl.einsum "bf,fh->bh" %[[X]], %[[D5]]
//
// BU2: ovl.collective_permute_start %[[A0]] into
// BU2-NEXT: ovl.collective_permute_start %[[A1]] into
// BU2-NEXT: %[[D0:[^ ]+]] = ovl.collective_permute_done %{{.+}} keep(%[[A0]])
// BU2-NEXT: ovl.collective_permute_start %[[A2]] into
// BU2-NEXT: %[[D1:[^ ]+]] = ovl.collective_permute_done %{{.+}} keep(%[[A1]])
// BU2-NEXT: ovl.collective_permute_start %[[A3]] into
// BU2-NEXT: %[[D2:[^ ]+]] = ovl.collective_permute_done %{{.+}} keep(%[[A2]])
// BU2-NEXT: ovl.collective_permute_start %[[A4]] into
// BU2-NEXT: %[[D3:[^ ]+]] = ovl.collective_permute_done %{{.+}} keep(%[[A3]])
// BU2-NEXT: ovl.collective_permute_start %[[A5]] into
// BU2-NEXT: ovl.einsum "bf,fh->bh" %[[X]], %[[D0]]
// BU2-NEXT: ovl.einsum "bf,fh->bh" %[[X]], %[[D1]]
// BU2-NEXT: ovl.einsum "bf,fh->bh" %[[X]], %[[D2]]
// BU2-NEXT: ovl.einsum "bf,fh->bh" %[[X]], %[[D3]]
// BU2-NEXT: %[[D4:[^ ]+]] = ovl.collective_permute_done %{{.+}} keep(%[[A4]])
// BU2-NEXT: ovl.einsum "bf,fh->bh" %[[X]], %[[D4]]
// BU2-NEXT: %[[D5:[^ ]+]] = ovl.collective_permute_done %{{.+}} keep(%[[A5]])
// BU2-NEXT: ovl.einsum "bf,fh->bh" %[[X]], %[[D5]]
//
// BU5: ovl.collective_permute_start %[[A0]] into
// BU5-NEXT: ovl.collective_permute_start %[[A1]] into
// BU5-NEXT: ovl.collective_permute_start %[[A2]] into
// BU5-NEXT: ovl.collective_permute_start %[[A3]] into
// BU5-NEXT: ovl.collective_permute_start %[[A4]] into
// BU5-NEXT: %[[D0:[^ ]+]] = ovl.collective_permute_done %{{.+}} keep(%[[A0]])
// BU5-NEXT: ovl.collective_permute_start %[[A5]] into
// BU5-NEXT: ovl.einsum "bf,fh->bh" %[[X]], %[[D0]]
// BU5-NEXT: %[[D1:[^ ]+]] = ovl.collective_permute_done %{{.+}} keep(%[[A1]])
// BU5-NEXT: ovl.einsum "bf,fh->bh" %[[X]], %[[D1]]
// BU5-NEXT: %[[D2:[^ ]+]] = ovl.collective_permute_done %{{.+}} keep(%[[A2]])
// BU5-NEXT: ovl.einsum "bf,fh->bh" %[[X]], %[[D2]]
// BU5-NEXT: %[[D3:[^ ]+]] = ovl.collective_permute_done %{{.+}} keep(%[[A3]])
// BU5-NEXT: ovl.einsum "bf,fh->bh" %[[X]], %[[D3]]
// BU5-NEXT: %[[D4:[^ ]+]] = ovl.collective_permute_done %{{.+}} keep(%[[A4]])
// BU5-NEXT: ovl.einsum "bf,fh->bh" %[[X]], %[[D4]]
// BU5-NEXT: %[[D5:[^ ]+]] = ovl.collective_permute_done %{{.+}} keep(%[[A5]])
// BU5-NEXT: ovl.einsum "bf,fh->bh" %[[X]], %[[D5]]
//
// TD1: ovl.collective_permute_start %[[A0]] into
// TD1-NEXT: %[[D0:[^ ]+]] = ovl.collective_permute_done %{{.+}} keep(%[[A0]])
// TD1-NEXT: ovl.collective_permute_start %[[A1]] into
// TD1-NEXT: ovl.einsum "bf,fh->bh" %[[X]], %[[D0]]
// TD1-NEXT: %[[D1:[^ ]+]] = ovl.collective_permute_done %{{.+}} keep(%[[A1]])
// TD1-NEXT: ovl.collective_permute_start %[[A2]] into
// TD1-NEXT: ovl.einsum "bf,fh->bh" %[[X]], %[[D1]]
// TD1-NEXT: %[[D2:[^ ]+]] = ovl.collective_permute_done %{{.+}} keep(%[[A2]])
// TD1-NEXT: ovl.collective_permute_start %[[A3]] into
// TD1-NEXT: ovl.einsum "bf,fh->bh" %[[X]], %[[D2]]
// TD1-NEXT: %[[D3:[^ ]+]] = ovl.collective_permute_done %{{.+}} keep(%[[A3]])
// TD1-NEXT: ovl.collective_permute_start %[[A4]] into
// TD1-NEXT: ovl.einsum "bf,fh->bh" %[[X]], %[[D3]]
// TD1-NEXT: %[[D4:[^ ]+]] = ovl.collective_permute_done %{{.+}} keep(%[[A4]])
// TD1-NEXT: ovl.collective_permute_start %[[A5]] into
// TD1-NEXT: ovl.einsum "bf,fh->bh" %[[X]], %[[D4]]
// TD1-NEXT: %[[D5:[^ ]+]] = ovl.collective_permute_done %{{.+}} keep(%[[A5]])
// TD1-NEXT: ovl.einsum "bf,fh->bh" %[[X]], %[[D5]]
//
// TD2: ovl.collective_permute_start %[[A0]] into
// TD2-NEXT: ovl.collective_permute_start %[[A1]] into
// TD2-NEXT: %[[D0:[^ ]+]] = ovl.collective_permute_done %{{.+}} keep(%[[A0]])
// TD2-NEXT: ovl.collective_permute_start %[[A2]] into
// TD2-NEXT: %[[D1:[^ ]+]] = ovl.collective_permute_done %{{.+}} keep(%[[A1]])
// TD2-NEXT: ovl.collective_permute_start %[[A3]] into
// TD2-NEXT: ovl.einsum "bf,fh->bh" %[[X]], %[[D0]]
// TD2-NEXT: ovl.einsum "bf,fh->bh" %[[X]], %[[D1]]
// TD2-NEXT: %[[D2:[^ ]+]] = ovl.collective_permute_done %{{.+}} keep(%[[A2]])
// TD2-NEXT: ovl.collective_permute_start %[[A4]] into
// TD2-NEXT: %[[D3:[^ ]+]] = ovl.collective_permute_done %{{.+}} keep(%[[A3]])
// TD2-NEXT: ovl.collective_permute_start %[[A5]] into
// TD2-NEXT: ovl.einsum "bf,fh->bh" %[[X]], %[[D2]]
// TD2-NEXT: ovl.einsum "bf,fh->bh" %[[X]], %[[D3]]
// TD2-NEXT: %[[D4:[^ ]+]] = ovl.collective_permute_done %{{.+}} keep(%[[A4]])
// TD2-NEXT: ovl.einsum "bf,fh->bh" %[[X]], %[[D4]]
// TD2-NEXT: %[[D5:[^ ]+]] = ovl.collective_permute_done %{{.+}} keep(%[[A5]])
// TD2-NEXT: ovl.einsum "bf,fh->bh" %[[X]], %[[D5]]
//
// TD5: ovl.collective_permute_start %[[A0]] into
// TD5-NEXT: ovl.collective_permute_start %[[A1]] into
// TD5-NEXT: ovl.collective_permute_start %[[A2]] into
// TD5-NEXT: ovl.collective_permute_start %[[A3]] into
// TD5-NEXT: ovl.collective_permute_start %[[A4]] into
// TD5-NEXT: %[[D0:[^ ]+]] = ovl.collective_permute_done %{{.+}} keep(%[[A0]])
// TD5-NEXT: ovl.collective_permute_start %[[A5]] into
// TD5-NEXT: ovl.einsum "bf,fh->bh" %[[X]], %[[D0]]
// TD5-NEXT: %[[D1:[^ ]+]] = ovl.collective_permute_done %{{.+}} keep(%[[A1]])
// TD5-NEXT: ovl.einsum "bf,fh->bh" %[[X]], %[[D1]]
// TD5-NEXT: %[[D2:[^ ]+]] = ovl.collective_permute_done %{{.+}} keep(%[[A2]])
// TD5-NEXT: ovl.einsum "bf,fh->bh" %[[X]], %[[D2]]
// TD5-NEXT: %[[D3:[^ ]+]] = ovl.collective_permute_done %{{.+}} keep(%[[A3]])
// TD5-NEXT: ovl.einsum "bf,fh->bh" %[[X]], %[[D3]]
// TD5-NEXT: %[[D4:[^ ]+]] = ovl.collective_permute_done %{{.+}} keep(%[[A4]])
// TD5-NEXT: ovl.einsum "bf,fh->bh" %[[X]], %[[D4]]
// TD5-NEXT: %[[D5:[^ ]+]] = ovl.collective_permute_done %{{.+}} keep(%[[A5]])
// TD5-NEXT: ovl.einsum "bf,fh->bh" %[[X]], %[[D5]]
//

shard.grid @ring(shape = 2)

func.func @six_transfers(%x: tensor<1x32xf32>, %a0: tensor<32x16xf32>, %a1: tensor<32x16xf32>, %a2: tensor<32x16xf32>, %a3: tensor<32x16xf32>, %a4: tensor<32x16xf32>, %a5: tensor<32x16xf32>, %b0: tensor<32x16xf32>, %b1: tensor<32x16xf32>, %b2: tensor<32x16xf32>, %b3: tensor<32x16xf32>, %b4: tensor<32x16xf32>, %b5: tensor<32x16xf32>) -> (tensor<1x16xf32>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<1x16xf32>) {
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

// -----

/// A loop whose body has a transfer of its own needs a slot while it runs.
/// With a budget of 1 the outer transfer cannot be in flight across the
/// loop: bottom-up puts the loop first, top-down the transfer. With 2 the
/// loop hides the outer transfer.

// PEAK1: @transfer_around_loop: max in flight 1
// PEAK2: @transfer_around_loop: max in flight 2
// PEAK5: @transfer_around_loop: max in flight 2

// CHECK-LABEL: func.func @transfer_around_loop
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4x32xf32>, %[[A:[^:]+]]: tensor<32x16xf32>,
// ONE: ovl.collective_permute_start %[[A]] into
// ONE-NOT: scf.for
// ONE: %[[D:[^ ]+]] = ovl.collective_permute_done %{{.+}} keep(%[[A]])
// ONE-NEXT: ovl.einsum "bf,fh->bh" %[[X]], %[[D]]
// BU1-NEXT: return
// TD1: scf.for
// WIDE: ovl.collective_permute_start %[[A]] into
// WIDE: scf.for
// WIDE: scf.yield
// WIDE-NEXT: }
// WIDE-NEXT: %[[D:[^ ]+]] = ovl.collective_permute_done %{{.+}} keep(%[[A]])
// WIDE-NEXT: ovl.einsum "bf,fh->bh" %[[X]], %[[D]]
shard.grid @ring(shape = 2)

func.func @transfer_around_loop(%x: tensor<4x32xf32>, %a: tensor<32x16xf32>, %s: tensor<32x16xf32>, %y0: tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %b = bufferization.alloc_tensor() : tensor<32x16xf32>
  %p, %t = ovl.collective_permute_start %a into %b on @ring axes [0] pairs [0 -> 1, 1 -> 0] : tensor<32x16xf32>
  %d = ovl.collective_permute_done %t keep(%a) into %p : tensor<32x16xf32>
  %u = ovl.einsum "bf,fh->bh" %x, %d : tensor<4x32xf32>, tensor<32x16xf32> -> tensor<4x16xf32>
  %spare = bufferization.alloc_tensor() : tensor<32x16xf32>
  %r:3 = scf.for %i = %c0 to %c4 step %c1 iter_args(%sh = %s, %acc = %y0, %buf = %spare) -> (tensor<32x16xf32>, tensor<4x16xf32>, tensor<32x16xf32>) {
    %lp, %lt = ovl.collective_permute_start %sh into %buf on @ring axes [0] pairs [0 -> 1, 1 -> 0] : tensor<32x16xf32>
    %e = ovl.einsum "bf,fh->bh" %x, %sh acc %acc : tensor<4x32xf32>, tensor<32x16xf32> -> tensor<4x16xf32>
    %n = ovl.collective_permute_done %lt keep(%sh) into %lp : tensor<32x16xf32>
    scf.yield %n, %e, %sh : tensor<32x16xf32>, tensor<4x16xf32>, tensor<32x16xf32>
  }
  return %u, %r#1 : tensor<4x16xf32>, tensor<4x16xf32>
}

// -----

/// A token the loop carries from one iteration to the next is in flight
/// when the body begins. With a budget of 1 nothing starts in the body
/// before the carried transfer's done; with 2 both schedulers start the
/// body's own transfer of %w before it, and top-down waits for the carried
/// transfer only after %w's (one einsum later), then starts the next
/// iteration's right away.

// PEAK1: @carried_token: max in flight 1
// PEAK2: @carried_token: max in flight 2
// PEAK5: @carried_token: max in flight 2

// CHECK-LABEL: func.func @carried_token
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4x32xf32>, %[[S:[^:]+]]: tensor<32x16xf32>, %[[W:[^:]+]]: tensor<32x16xf32>,
// CHECK: scf.for %{{.+}} iter_args(%[[TOK:[^ ]+]] = %{{[^,]+}}, %[[PEND:[^ ]+]] = %{{[^,]+}}, %[[SENT:[^ ]+]] = %{{[^,]+}},
// ONE-NOT: ovl.collective_permute_start
// ONE: %[[N:[^ ]+]] = ovl.collective_permute_done %[[TOK]] keep(%[[SENT]]) into %[[PEND]]
// ONE: ovl.collective_permute_start %[[W]] into
// ONE-NOT: ovl.collective_permute_start
// ONE: ovl.collective_permute_done %{{.+}} keep(%[[W]])
// ONE: ovl.collective_permute_start %[[N]] into %[[SENT]]
// ONE-NOT: ovl.collective_permute
// ONE: scf.yield
// BU2: ovl.collective_permute_start %[[W]] into
// BU2: ovl.collective_permute_done %[[TOK]] keep(%[[SENT]]) into %[[PEND]]
// BU5: ovl.collective_permute_start %[[W]] into
// BU5: ovl.collective_permute_done %[[TOK]] keep(%[[SENT]]) into %[[PEND]]
// TD2: ovl.collective_permute_start %[[W]] into
// TD2-NEXT: ovl.einsum
// TD2-NEXT: ovl.collective_permute_done %{{.+}} keep(%[[W]])
// TD2-NEXT: %[[N:[^ ]+]] = ovl.collective_permute_done %[[TOK]] keep(%[[SENT]]) into %[[PEND]]
// TD2-NEXT: ovl.collective_permute_start %[[N]] into %[[SENT]]
// TD5: ovl.collective_permute_start %[[W]] into
// TD5-NEXT: ovl.einsum
// TD5-NEXT: ovl.collective_permute_done %{{.+}} keep(%[[W]])
// TD5-NEXT: %[[N:[^ ]+]] = ovl.collective_permute_done %[[TOK]] keep(%[[SENT]]) into %[[PEND]]
// TD5-NEXT: ovl.collective_permute_start %[[N]] into %[[SENT]]
shard.grid @ring(shape = 2)

func.func @carried_token(%x: tensor<4x32xf32>, %s: tensor<32x16xf32>, %w: tensor<32x16xf32>, %y0: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %b = bufferization.alloc_tensor() : tensor<32x16xf32>
  %p0, %t0 = ovl.collective_permute_start %s into %b on @ring axes [0] pairs [0 -> 1, 1 -> 0] : tensor<32x16xf32>
  %r:4 = scf.for %i = %c0 to %c4 step %c1 iter_args(%tok = %t0, %pend = %p0, %sent = %s, %acc = %y0) -> (!ovl.token, tensor<32x16xf32>, tensor<32x16xf32>, tensor<4x16xf32>) {
    %wb = bufferization.alloc_tensor() : tensor<32x16xf32>
    %wp, %wt = ovl.collective_permute_start %w into %wb on @ring axes [0] pairs [0 -> 1, 1 -> 0] : tensor<32x16xf32>
    %e1 = ovl.einsum "bf,fh->bh" %x, %w acc %acc : tensor<4x32xf32>, tensor<32x16xf32> -> tensor<4x16xf32>
    %n = ovl.collective_permute_done %tok keep(%sent) into %pend : tensor<32x16xf32>
    %e2 = ovl.einsum "bf,fh->bh" %x, %n acc %e1 : tensor<4x32xf32>, tensor<32x16xf32> -> tensor<4x16xf32>
    %wd = ovl.collective_permute_done %wt keep(%w) into %wp : tensor<32x16xf32>
    %e3 = ovl.einsum "bf,fh->bh" %x, %wd acc %e2 : tensor<4x32xf32>, tensor<32x16xf32> -> tensor<4x16xf32>
    %np, %nt = ovl.collective_permute_start %n into %sent on @ring axes [0] pairs [0 -> 1, 1 -> 0] : tensor<32x16xf32>
    scf.yield %nt, %np, %n, %e3 : !ovl.token, tensor<32x16xf32>, tensor<32x16xf32>, tensor<4x16xf32>
  }
  %last = ovl.collective_permute_done %r#0 keep(%r#2) into %r#1 : tensor<32x16xf32>
  %f = ovl.einsum "bf,fh->bh" %x, %last acc %r#3 : tensor<4x32xf32>, tensor<32x16xf32> -> tensor<4x16xf32>
  return %f : tensor<4x16xf32>
}
