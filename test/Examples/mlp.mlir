// RUN: overlap-opt %overlap_src_root/examples/mlp_1d.mlir | FileCheck %s --check-prefix=MLP1D
// RUN: overlap-opt %overlap_src_root/examples/mlp_2d.mlir | FileCheck %s --check-prefix=MLP2D
// RUN: overlap-opt %overlap_src_root/examples/mlp_1d.mlir --mlir-print-op-generic | overlap-opt | FileCheck %s --check-prefix=MLP1D
// RUN: overlap-opt %overlap_src_root/examples/mlp_2d.mlir --mlir-print-op-generic | overlap-opt | FileCheck %s --check-prefix=MLP2D

// The paper's figure 2 and figure 3 MLPs in examples/ parse, verify and print.

// MLP1D: shard.grid @ring(shape = 4)
// MLP1D-LABEL: func.func @mlp
// MLP1D: %[[W1:.+]] = ovl.all_gather %{{.*}} on @ring axes [0] dim 1 : tensor<32x16xf32> -> tensor<32x64xf32>
// MLP1D: %[[H:.+]] = ovl.einsum "bf,fh->bh" %{{.*}}, %[[W1]]
// MLP1D: %[[RELU:.+]] = arith.maximumf %[[H]]
// MLP1D: %[[W2:.+]] = ovl.all_gather %{{.*}} on @ring axes [0] dim 0 : tensor<16x32xf32> -> tensor<64x32xf32>
// MLP1D: ovl.einsum "bh,hf->bf" %[[RELU]], %[[W2]]

// MLP2D: shard.grid @grid(shape = 2x4)
// MLP2D-LABEL: func.func @mlp
// MLP2D: %[[X:.+]] = ovl.all_gather %{{.*}} on @grid axes [0] dim 1
// MLP2D: %[[W1:.+]] = ovl.all_gather %{{.*}} on @grid axes [1] dim 0
// MLP2D: ovl.einsum "bf,fh->bh" %[[X]], %[[W1]]
// MLP2D: %[[P:.+]] = ovl.einsum "bh,hf->bf"
// MLP2D: ovl.reduce_scatter %[[P]] on @grid axes [0] dim 1 : tensor<4x32xf32> -> tensor<4x16xf32>
