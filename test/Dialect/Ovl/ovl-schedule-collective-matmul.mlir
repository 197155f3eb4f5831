// Issue 12's collective matmul: an AllGather-Einsum on a 2x4 grid of TPU
// v4 at the scaling-book sizes (B=1024, D=2048, F=8192, bf16): x sharded on
// B over the 4-device axis and gathered, the weight's F sharded over the
// other axis. Decomposed with unroll=2, its three permutes form a chain, each
// transfer (1 MB, 23 us) longer than the einsum on the shard before it
// (15.6 us). Bottom-up used to give the last transfer both einsums that
// could hide it, leaving the second one none: its done right after its
// start, 109.7 us on 1x2x4 where the unscheduled program takes 100.3 us.
// Now each start has an einsum before its done, with both schedulers, and
// the scheduled program is no slower on overlap-sim than the unscheduled
// one.
//
// RUN: overlap-opt %s --ovl-overlap-pipeline="gate=always unroll=2 topology=1x2x4 bidirectional=false" | FileCheck %s
// RUN: overlap-opt %s --ovl-overlap-pipeline="gate=always unroll=2 topology=4x4x4 bidirectional=false" | FileCheck %s
// RUN: overlap-opt %s --ovl-overlap-pipeline="gate=always unroll=2 topology=1x2x4 algorithm=top-down bidirectional=false" | FileCheck %s
// RUN: overlap-opt %s --ovl-overlap-pipeline="gate=always unroll=2 topology=4x4x4 algorithm=top-down bidirectional=false" | FileCheck %s
//
// The unscheduled program's report is kept (and checked to be one); each
// scheduled program's report goes straight into the comparison.
// RUN: overlap-opt %s --pass-pipeline="builtin.module(func.func(ovl-decompose-collective-einsum{gate=always unroll=2 topology=1x2x4 bidirectional=false},ovl-async-collectives))" | overlap-sim - --topology 1x2x4 --json | tee %t.async.json | FileCheck %s --check-prefix=REPORT
// RUN: overlap-opt %s --ovl-overlap-pipeline="gate=always unroll=2 topology=1x2x4 bidirectional=false" | overlap-sim - --topology 1x2x4 --json | %python %S/Inputs/no_slower.py - %t.async.json
// RUN: overlap-opt %s --ovl-overlap-pipeline="gate=always unroll=2 topology=1x2x4 algorithm=top-down bidirectional=false" | overlap-sim - --topology 1x2x4 --json | %python %S/Inputs/no_slower.py - %t.async.json
//
// RUN: overlap-opt %s --pass-pipeline="builtin.module(func.func(ovl-decompose-collective-einsum{gate=always unroll=2 topology=4x4x4 bidirectional=false},ovl-async-collectives))" | overlap-sim - --topology 4x4x4 --json | tee %t.async4.json | FileCheck %s --check-prefix=REPORT
// RUN: overlap-opt %s --ovl-overlap-pipeline="gate=always unroll=2 topology=4x4x4 bidirectional=false" | overlap-sim - --topology 4x4x4 --json | %python %S/Inputs/no_slower.py - %t.async4.json
// REPORT: "step_time_s":

// CHECK-LABEL: func.func @collective_matmul
// CHECK: %{{[^,]+}}, %[[T0:[^ ]+]] = ovl.collective_permute_start
// CHECK-NOT: ovl.collective_permute
// CHECK: ovl.einsum "bd,df->bf"
// CHECK-NOT: ovl.collective_permute
// CHECK: ovl.collective_permute_done %[[T0]]
// CHECK-NEXT: %{{[^,]+}}, %[[T1:[^ ]+]] = ovl.collective_permute_start
// CHECK-NOT: ovl.collective_permute
// CHECK: ovl.einsum "bd,df->bf"
// CHECK-NOT: ovl.collective_permute
// CHECK: ovl.collective_permute_done %[[T1]]
// CHECK-NOT: ovl.einsum
// CHECK: %{{[^,]+}}, %[[T2:[^ ]+]] = ovl.collective_permute_start
// CHECK-NOT: ovl.collective_permute
// CHECK: ovl.einsum "bd,df->bf"
// CHECK-NOT: ovl.collective_permute
// CHECK: ovl.collective_permute_done %[[T2]]
// CHECK-NOT: ovl.collective_permute
// CHECK: ovl.einsum "bd,df->bf"
// CHECK-NOT: ovl.collective_permute
// CHECK: return

shard.grid @grid(shape = 2x4)

func.func @collective_matmul(%x: tensor<256x2048xbf16>, %w: tensor<2048x4096xbf16>)
    -> tensor<1024x4096xf32> {
  %x_full = ovl.all_gather %x on @grid axes [1] dim 0
      : tensor<256x2048xbf16> -> tensor<1024x2048xbf16>
  %y = ovl.einsum "bd,df->bf" %x_full, %w
      : tensor<1024x2048xbf16>, tensor<2048x4096xbf16> -> tensor<1024x4096xf32>
  return %y : tensor<1024x4096xf32>
}
