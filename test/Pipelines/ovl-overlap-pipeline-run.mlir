// The pipeline keeps the program's meaning: the paper's MLPs (toy sizes,
// every candidate decomposed) run equal to the originals on the CPU
// runtime for both schedulers, unrolled and bidirectional.
//
// RUN: overlap-opt %overlap_src_root/examples/mlp_1d.mlir -o %t.1d.mlir --ovl-overlap-pipeline="gate=always unroll=2"
// RUN: overlap-run %t.1d.mlir --reference %overlap_src_root/examples/mlp_1d.mlir | FileCheck %s
// RUN: overlap-opt %overlap_src_root/examples/mlp_2d.mlir -o %t.2d.mlir --ovl-overlap-pipeline="gate=always bidirectional=true algorithm=top-down max-in-flight=1"
// RUN: overlap-run %t.2d.mlir --reference %overlap_src_root/examples/mlp_2d.mlir | FileCheck %s
// CHECK: reference {{.*}}: equal
