// Transfers that share links, as overlap-sim plays them: each transfer of a
// permute streams at the link bandwidth divided by the transfers on its
// most loaded link, so two over the same links take as long together as
// one after the other, and the one that is waited for first arrives sooner
// alone. TPU v4, a ring of four chips on the 4x4x4 cube (wrap-around): a
// shift by +1 and one by -1 use different links. Each transfer here (2 MB)
// takes 46.6 us alone, the einsums 15.6 us (by 1024x2048) and 62.5 us (by
// 1024x8192). Both schedulers give the same orders (CHECK), and they are no
// slower on overlap-sim than the input (each faster, 159.7 us before).
//
// RUN: overlap-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(ovl-schedule{topology=4x4x4}))" | FileCheck %s
// RUN: overlap-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(ovl-schedule{algorithm=top-down topology=4x4x4}))" | FileCheck %s
//
// RUN: split-file %s %t
// RUN: overlap-sim %t/feeding.mlir --topology 4x4x4 --json | tee %t/feeding.json | FileCheck %s --check-prefix=REPORT
// RUN: overlap-opt %t/feeding.mlir --pass-pipeline="builtin.module(func.func(ovl-schedule{topology=4x4x4}))" | overlap-sim - --topology 4x4x4 --json | %python %S/Inputs/no_slower.py - %t/feeding.json
// RUN: overlap-opt %t/feeding.mlir --pass-pipeline="builtin.module(func.func(ovl-schedule{algorithm=top-down topology=4x4x4}))" | overlap-sim - --topology 4x4x4 --json | %python %S/Inputs/no_slower.py - %t/feeding.json
// RUN: overlap-sim %t/same-way.mlir --topology 4x4x4 --json | tee %t/same-way.json | FileCheck %s --check-prefix=REPORT
// RUN: overlap-opt %t/same-way.mlir --pass-pipeline="builtin.module(func.func(ovl-schedule{topology=4x4x4}))" | overlap-sim - --topology 4x4x4 --json | %python %S/Inputs/no_slower.py - %t/same-way.json
// RUN: overlap-opt %t/same-way.mlir --pass-pipeline="builtin.module(func.func(ovl-schedule{algorithm=top-down topology=4x4x4}))" | overlap-sim - --topology 4x4x4 --json | %python %S/Inputs/no_slower.py - %t/same-way.json

// REPORT: "step_time_s":

//--- feeding.mlir
/// Two transfers the same way round, only %y's feeding an einsum. %y's goes
/// first, alone, hidden in part by the einsum on %x, and the long einsum on
/// what arrived hides %x's: 111.1 us. Started together they would share the
/// links and %y's would arrive only with %x's (157.7 us).

// CHECK-LABEL: func.func @feeding_first
// CHECK-SAME: (%[[X:[^:]+]]: tensor<1024x1024xbf16>, %[[Y:[^:]+]]: tensor<1024x1024xbf16>,
// CHECK: ovl.collective_permute_start %[[Y]]
// CHECK-NEXT: ovl.einsum "ik,kj->ij" %[[X]]
// CHECK-NEXT: %[[DY:[^ ]+]] = ovl.collective_permute_done %{{.+}} keep(%[[Y]])
// CHECK-NEXT: ovl.collective_permute_start %[[X]]
// CHECK-NEXT: ovl.einsum "ik,kj->ij" %[[DY]]
// CHECK-NEXT: ovl.collective_permute_done %{{.+}} keep(%[[X]])
shard.grid @ring(shape = 4)

func.func @feeding_first(%x: tensor<1024x1024xbf16>, %y: tensor<1024x1024xbf16>, %w: tensor<1024x2048xbf16>, %v: tensor<1024x8192xbf16>, %ra: tensor<1024x1024xbf16>, %rb: tensor<1024x1024xbf16>) -> (tensor<1024x1024xbf16>, tensor<1024x2048xbf16>, tensor<1024x8192xbf16>) {
  %pa, %ta = ovl.collective_permute_start %x into %ra on @ring axes [0] pairs [0 -> 1, 1 -> 2, 2 -> 3, 3 -> 0] : tensor<1024x1024xbf16>
  %e = ovl.einsum "ik,kj->ij" %x, %w : tensor<1024x1024xbf16>, tensor<1024x2048xbf16> -> tensor<1024x2048xbf16>
  %da = ovl.collective_permute_done %ta keep(%x) into %pa : tensor<1024x1024xbf16>
  %pb, %tb = ovl.collective_permute_start %y into %rb on @ring axes [0] pairs [0 -> 1, 1 -> 2, 2 -> 3, 3 -> 0] : tensor<1024x1024xbf16>
  %db = ovl.collective_permute_done %tb keep(%y) into %pb : tensor<1024x1024xbf16>
  %f = ovl.einsum "ik,kj->ij" %db, %v : tensor<1024x1024xbf16>, tensor<1024x8192xbf16> -> tensor<1024x8192xbf16>
  return %da, %e, %f : tensor<1024x1024xbf16>, tensor<1024x2048xbf16>, tensor<1024x8192xbf16>
}

// -----

//--- opposite.mlir
/// Two transfers opposite ways round share no link: both go before the
/// einsum, which hides them (62.5 us).

// CHECK-LABEL: func.func @opposite_ways
// CHECK-COUNT-2: ovl.collective_permute_start
// CHECK-NEXT: ovl.einsum
// CHECK-NEXT: ovl.collective_permute_done
// CHECK-NEXT: ovl.collective_permute_done
shard.grid @ring(shape = 4)

func.func @opposite_ways(%x: tensor<1024x1024xbf16>, %y: tensor<1024x1024xbf16>, %w: tensor<1024x8192xbf16>, %ra: tensor<1024x1024xbf16>, %rb: tensor<1024x1024xbf16>) -> (tensor<1024x1024xbf16>, tensor<1024x1024xbf16>, tensor<1024x8192xbf16>) {
  %pa, %ta = ovl.collective_permute_start %x into %ra on @ring axes [0] pairs [0 -> 1, 1 -> 2, 2 -> 3, 3 -> 0] : tensor<1024x1024xbf16>
  %da = ovl.collective_permute_done %ta keep(%x) into %pa : tensor<1024x1024xbf16>
  %pb, %tb = ovl.collective_permute_start %y into %rb on @ring axes [0] pairs [0 -> 3, 1 -> 0, 2 -> 1, 3 -> 2] : tensor<1024x1024xbf16>
  %db = ovl.collective_permute_done %tb keep(%y) into %pb : tensor<1024x1024xbf16>
  %e = ovl.einsum "ik,kj->ij" %x, %w : tensor<1024x1024xbf16>, tensor<1024x8192xbf16> -> tensor<1024x8192xbf16>
  return %da, %db, %e : tensor<1024x1024xbf16>, tensor<1024x1024xbf16>, tensor<1024x8192xbf16>
}

// -----

//--- same-way.mlir
/// The same way round, with only the einsum to hide them: together they
/// take 93 us of link time, longer than the einsum, so both go before it,
/// which hides as much of them as it can (95.2 us, bound by the links; one
/// after the other, the second would wait for the einsum: 111.1 us).

// CHECK-LABEL: func.func @same_way
// CHECK-COUNT-2: ovl.collective_permute_start
// CHECK-NEXT: ovl.einsum
// CHECK-NEXT: ovl.collective_permute_done
// CHECK-NEXT: ovl.collective_permute_done
shard.grid @ring(shape = 4)

func.func @same_way(%x: tensor<1024x1024xbf16>, %y: tensor<1024x1024xbf16>, %w: tensor<1024x8192xbf16>, %ra: tensor<1024x1024xbf16>, %rb: tensor<1024x1024xbf16>) -> (tensor<1024x1024xbf16>, tensor<1024x1024xbf16>, tensor<1024x8192xbf16>) {
  %pa, %ta = ovl.collective_permute_start %x into %ra on @ring axes [0] pairs [0 -> 1, 1 -> 2, 2 -> 3, 3 -> 0] : tensor<1024x1024xbf16>
  %da = ovl.collective_permute_done %ta keep(%x) into %pa : tensor<1024x1024xbf16>
  %pb, %tb = ovl.collective_permute_start %y into %rb on @ring axes [0] pairs [0 -> 1, 1 -> 2, 2 -> 3, 3 -> 0] : tensor<1024x1024xbf16>
  %db = ovl.collective_permute_done %tb keep(%y) into %pb : tensor<1024x1024xbf16>
  %e = ovl.einsum "ik,kj->ij" %x, %w : tensor<1024x1024xbf16>, tensor<1024x8192xbf16> -> tensor<1024x8192xbf16>
  return %da, %db, %e : tensor<1024x1024xbf16>, tensor<1024x1024xbf16>, tensor<1024x8192xbf16>
}
