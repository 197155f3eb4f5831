// The guard: ovl-schedule never returns an order its cost model prices
// slower than the block's input order; it keeps the input order instead
// (counted by the pass statistic kept-input, in builds with statistics). On
// TPU v4, a ring of four chips on the 4x4x4 cube; overlap-sim agrees that the
// kept order is the faster.
//
// RUN: split-file %s %t
// RUN: overlap-opt %t/small-first.mlir --pass-pipeline="builtin.module(func.func(ovl-schedule{algorithm=top-down topology=4x4x4}))" | FileCheck %t/small-first.mlir --check-prefixes=CHECK,TD
// RUN: overlap-opt %t/small-first.mlir --pass-pipeline="builtin.module(func.func(ovl-schedule{topology=4x4x4}))" | FileCheck %t/small-first.mlir --check-prefixes=CHECK,BU
//
// RUN: overlap-opt %t/small-first.mlir --pass-pipeline="builtin.module(func.func(ovl-schedule{algorithm=top-down topology=4x4x4}))" | overlap-sim - --topology 4x4x4 --json | tee %t/kept.json | FileCheck %s --check-prefix=REPORT
// RUN: overlap-sim %t/big-first.mlir --topology 4x4x4 --json | tee %t/big-first.json | %python %S/Inputs/no_slower.py %t/kept.json -
// RUN: not %python %S/Inputs/no_slower.py %t/big-first.json %t/kept.json
// REPORT: "step_time_s":

//--- small-first.mlir
/// Two transfers over the same links and an einsum that only the small one's
/// data feeds. Top-down starts the big transfer first (the longer chain
/// after it) and the small one once the big one has arrived, so that they
/// do not share the links: the einsum hides part of the big transfer and the
/// small one runs exposed, 423.4 us (the order of big-first.mlir). The input
/// order lets the einsum hide the small transfer and then the big one
/// follows: 421.4 us. Top-down keeps the input order; bottom-up finds an
/// order as fast.

// CHECK-LABEL: func.func @small_first
// CHECK-SAME: (%[[SMALL:[^:]+]]: tensor<1024x1024xbf16>, %[[W:[^:]+]]: tensor<1024x4096xbf16>, %[[BIG:[^:]+]]: tensor<1024x8192xbf16>,
// TD: ovl.collective_permute_start %[[SMALL]]
// TD-NEXT: ovl.einsum "ik,kj->ij" %[[SMALL]], %[[W]]
// TD-NEXT: ovl.collective_permute_start %[[BIG]]
// TD-NEXT: ovl.collective_permute_done %{{.+}} keep(%[[BIG]])
// TD-NEXT: ovl.collective_permute_done %{{.+}} keep(%[[SMALL]])
// BU: ovl.collective_permute_start %[[BIG]]
// BU-NEXT: ovl.collective_permute_start %[[SMALL]]
// BU-NEXT: ovl.einsum "ik,kj->ij" %[[SMALL]], %[[W]]
// BU-NEXT: ovl.collective_permute_done %{{.+}} keep(%[[BIG]])
// BU-NEXT: ovl.collective_permute_done %{{.+}} keep(%[[SMALL]])
shard.grid @ring(shape = 4)

func.func @small_first(%small: tensor<1024x1024xbf16>, %w: tensor<1024x4096xbf16>, %big: tensor<1024x8192xbf16>, %rs: tensor<1024x1024xbf16>, %rb: tensor<1024x8192xbf16>) -> (tensor<1024x4096xbf16>, tensor<1024x8192xbf16>, tensor<1024x1024xbf16>) {
  %ps, %ts = ovl.collective_permute_start %small into %rs on @ring axes [0] pairs [0 -> 1, 1 -> 2, 2 -> 3, 3 -> 0] : tensor<1024x1024xbf16>
  %e = ovl.einsum "ik,kj->ij" %small, %w : tensor<1024x1024xbf16>, tensor<1024x4096xbf16> -> tensor<1024x4096xbf16>
  %pb, %tb = ovl.collective_permute_start %big into %rb on @ring axes [0] pairs [0 -> 1, 1 -> 2, 2 -> 3, 3 -> 0] : tensor<1024x8192xbf16>
  %db = ovl.collective_permute_done %tb keep(%big) into %pb : tensor<1024x8192xbf16>
  %ds = ovl.collective_permute_done %ts keep(%small) into %ps : tensor<1024x1024xbf16>
  return %e, %db, %ds : tensor<1024x4096xbf16>, tensor<1024x8192xbf16>, tensor<1024x1024xbf16>
}

//--- big-first.mlir
shard.grid @ring(shape = 4)

func.func @big_first(%small: tensor<1024x1024xbf16>, %w: tensor<1024x4096xbf16>, %big: tensor<1024x8192xbf16>, %rs: tensor<1024x1024xbf16>, %rb: tensor<1024x8192xbf16>) -> (tensor<1024x4096xbf16>, tensor<1024x8192xbf16>, tensor<1024x1024xbf16>) {
  %pb, %tb = ovl.collective_permute_start %big into %rb on @ring axes [0] pairs [0 -> 1, 1 -> 2, 2 -> 3, 3 -> 0] : tensor<1024x8192xbf16>
  %e = ovl.einsum "ik,kj->ij" %small, %w : tensor<1024x1024xbf16>, tensor<1024x4096xbf16> -> tensor<1024x4096xbf16>
  %db = ovl.collective_permute_done %tb keep(%big) into %pb : tensor<1024x8192xbf16>
  %ps, %ts = ovl.collective_permute_start %small into %rs on @ring axes [0] pairs [0 -> 1, 1 -> 2, 2 -> 3, 3 -> 0] : tensor<1024x1024xbf16>
  %ds = ovl.collective_permute_done %ts keep(%small) into %ps : tensor<1024x1024xbf16>
  return %e, %db, %ds : tensor<1024x4096xbf16>, tensor<1024x8192xbf16>, tensor<1024x1024xbf16>
}
