// Scheduling a scheduled program changes nothing, with either scheduler:
// the paper's MLPs, decomposed (two steps per loop iteration, both
// directions round the ring) and made asynchronous, scheduled once and
// then again.
//
// RUN: overlap-opt %overlap_src_root/examples/mlp_1d.mlir --pass-pipeline="builtin.module(func.func(ovl-decompose-collective-einsum{async-collectives=false gate=always unroll=2 bidirectional=true},ovl-async-collectives))" -o %t.1d.mlir
// RUN: overlap-opt %overlap_src_root/examples/mlp_2d.mlir --pass-pipeline="builtin.module(func.func(ovl-decompose-collective-einsum{async-collectives=false gate=always unroll=2 bidirectional=false},ovl-async-collectives))" -o %t.2d.mlir
//
// RUN: overlap-opt %t.1d.mlir --pass-pipeline="builtin.module(func.func(ovl-schedule))" -o %t.1d.bu.once.mlir
// RUN: overlap-opt %t.1d.bu.once.mlir --pass-pipeline="builtin.module(func.func(ovl-schedule))" -o %t.1d.bu.twice.mlir
// RUN: diff %t.1d.bu.once.mlir %t.1d.bu.twice.mlir
// RUN: overlap-opt %t.1d.mlir --pass-pipeline="builtin.module(func.func(ovl-schedule{algorithm=top-down}))" -o %t.1d.td.once.mlir
// RUN: overlap-opt %t.1d.td.once.mlir --pass-pipeline="builtin.module(func.func(ovl-schedule{algorithm=top-down}))" -o %t.1d.td.twice.mlir
// RUN: diff %t.1d.td.once.mlir %t.1d.td.twice.mlir
//
// RUN: overlap-opt %t.2d.mlir --pass-pipeline="builtin.module(func.func(ovl-schedule))" -o %t.2d.bu.once.mlir
// RUN: overlap-opt %t.2d.bu.once.mlir --pass-pipeline="builtin.module(func.func(ovl-schedule))" -o %t.2d.bu.twice.mlir
// RUN: diff %t.2d.bu.once.mlir %t.2d.bu.twice.mlir
// RUN: overlap-opt %t.2d.mlir --pass-pipeline="builtin.module(func.func(ovl-schedule{algorithm=top-down}))" -o %t.2d.td.once.mlir
// RUN: overlap-opt %t.2d.td.once.mlir --pass-pipeline="builtin.module(func.func(ovl-schedule{algorithm=top-down}))" -o %t.2d.td.twice.mlir
// RUN: diff %t.2d.td.once.mlir %t.2d.td.twice.mlir
//
// The first scheduling did change the programs: in the figure 3 MLP the
// blocking all_gather of w2 moves behind the permute of x, which it hides
// (CHANGED), where the asynchronous pass left it after the permute's done
// (UNSCHEDULED).
// RUN: FileCheck %s --check-prefix=CHANGED --input-file=%t.2d.bu.once.mlir
// RUN: FileCheck %s --check-prefix=CHANGED --input-file=%t.2d.td.once.mlir
// RUN: FileCheck %s --check-prefix=UNSCHEDULED --input-file=%t.2d.mlir

// CHANGED-LABEL: func.func @mlp
// CHANGED-SAME: (%[[X:[^:]+]]: tensor<4x16xf32>, %{{[^:]+}}: tensor<8x32xf32>, %[[W2:[^:]+]]: tensor<32x8xf32>)
// CHANGED: ovl.collective_permute_start %[[X]]
// CHANGED-NOT: ovl.collective_permute_done
// CHANGED: ovl.all_gather %[[W2]]
// CHANGED: ovl.collective_permute_done %{{.+}} keep(%[[X]])

// UNSCHEDULED-LABEL: func.func @mlp
// UNSCHEDULED-SAME: (%[[X:[^:]+]]: tensor<4x16xf32>, %{{[^:]+}}: tensor<8x32xf32>, %[[W2:[^:]+]]: tensor<32x8xf32>)
// UNSCHEDULED: ovl.collective_permute_done %{{.+}} keep(%[[X]])
// UNSCHEDULED: ovl.all_gather %[[W2]]
