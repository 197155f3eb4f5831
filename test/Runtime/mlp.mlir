// RUN: overlap-run %overlap_src_root/examples/mlp_1d.mlir --reference %overlap_src_root/examples/mlp_1d_reference.mlir --seed 1 | FileCheck %s --check-prefix=MLP1D
// RUN: overlap-run %overlap_src_root/examples/mlp_2d.mlir --reference %overlap_src_root/examples/mlp_2d_reference.mlir --seed 2 | FileCheck %s --check-prefix=MLP2D

// The paper's figure 2 and figure 3 MLPs (examples/) on the CPU runtime,
// against references that build every gathered tensor with an all_reduce of
// zero-padded shards and every scattered one with an all_reduce and a slice:
// other collectives of the runtime, the same mathematics.

// MLP1D: examples/mlp_1d.mlir: @mlp on 4 devices (threads)
// MLP1D: reference {{.*}}mlp_1d_reference.mlir: equal
// MLP2D: examples/mlp_2d.mlir: @mlp on 8 devices (threads)
// MLP2D: reference {{.*}}mlp_2d_reference.mlir: equal
