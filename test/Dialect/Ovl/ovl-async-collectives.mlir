// RUN: overlap-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(ovl-async-collectives))" | FileCheck %s
// RUN: overlap-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(ovl-async-collectives,cse,ovl-einsum-to-linalg,convert-elementwise-to-linalg),one-shot-bufferize{bufferize-function-boundaries allow-return-allocs-from-loops function-boundary-type-conversion=identity-layout-map})" | FileCheck %s --check-prefix=BUF

// Blocking permutes become start/done pairs around the work they overlap,
// and the ring loops that the decomposition unrolled by two double-buffer:
// after bufferization they allocate and copy nothing per step.

shard.grid @ring(shape = 8)

/// A gathered shard moves through an unrolled ring loop (the output of
/// ovl-decompose-collective-einsum{gate=always unroll=2}, trimmed).
// CHECK-LABEL: func.func @all_gather_loop
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<2x8xf32>, %[[W:[a-z0-9]+]]: tensor<8x4xf32>
// CHECK: %[[SPARE:.+]] = bufferization.alloc_tensor() : tensor<8x4xf32>
// CHECK: scf.for {{.*}} iter_args(%[[CUR:[a-z0-9]+]] = %[[W]], %{{[a-z0-9]+}} = %{{[a-z0-9]+}}, %[[SPAREARG:[a-z0-9]+]] = %[[SPARE]])
/// The first step receives into the spare buffer...
// CHECK:   %[[P1:.+]], %[[T1:.+]] = ovl.collective_permute_start %[[CUR]] into %[[SPAREARG]]
// CHECK:   ovl.einsum "bf,fh->bh" %[[X]], %[[CUR]]
// CHECK:   %[[N1:.+]] = ovl.collective_permute_done %[[T1]] keep(%[[CUR]]) into %[[P1]]
/// ... the second into the buffer the first one sent from.
// CHECK:   %[[P2:.+]], %[[T2:.+]] = ovl.collective_permute_start %[[N1]] into %[[CUR]]
// CHECK:   ovl.einsum "bf,fh->bh" %[[X]], %[[N1]]
// CHECK:   %[[N2:.+]] = ovl.collective_permute_done %[[T2]] keep(%[[N1]]) into %[[P2]]
// CHECK:   scf.yield %[[N2]], %{{.*}}, %[[N1]]
// CHECK-NOT: ovl.collective_permute {{.*}}pairs
// BUF-LABEL: func.func @all_gather_loop
// BUF: scf.for {{.*}} iter_args(%[[A:[a-z0-9]+]] = %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}} = %{{[a-z0-9_]+}}, %[[B:[a-z0-9]+]] = %{{[a-z0-9_]+}})
// BUF-NOT: memref.alloc() {{.*}} : memref<8x4xf32>
// BUF:   ovl.buffer.permute_start %[[A]] into %[[B]]
// BUF:   ovl.buffer.permute_done %{{.*}} keep(%[[A]]) into %[[B]]
// BUF:   ovl.buffer.permute_start %[[B]] into %[[A]]
// BUF:   ovl.buffer.permute_done %{{.*}} keep(%[[B]]) into %[[A]]
// BUF-NOT: memref.copy %{{.*}} : memref<8x4xf32>
// BUF:   scf.yield %[[A]], %{{.*}}, %[[B]]
func.func @all_gather_loop(%x: tensor<2x8xf32>, %w: tensor<8x4xf32>, %init: tensor<2x4xf32>, %n: index) -> tensor<2x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r:2 = scf.for %k = %c0 to %n step %c1 iter_args(%cur = %w, %acc = %init) -> (tensor<8x4xf32>, tensor<2x4xf32>) {
    %n1 = ovl.collective_permute %cur on @ring axes [0] pairs [0 -> 7, 1 -> 0, 2 -> 1, 3 -> 2, 4 -> 3, 5 -> 4, 6 -> 5, 7 -> 6] : tensor<8x4xf32>
    %y1 = ovl.einsum "bf,fh->bh" %x, %cur acc %acc : tensor<2x8xf32>, tensor<8x4xf32> -> tensor<2x4xf32>
    %n2 = ovl.collective_permute %n1 on @ring axes [0] pairs [0 -> 7, 1 -> 0, 2 -> 1, 3 -> 2, 4 -> 3, 5 -> 4, 6 -> 5, 7 -> 6] : tensor<8x4xf32>
    %y2 = ovl.einsum "bf,fh->bh" %x, %n1 acc %y1 : tensor<2x8xf32>, tensor<8x4xf32> -> tensor<2x4xf32>
    scf.yield %n2, %y2 : tensor<8x4xf32>, tensor<2x4xf32>
  }
  return %r#1 : tensor<2x4xf32>
}

// -----

shard.grid @ring(shape = 8)

/// Two partial-sum chains of a reduce-scatter (unroll=2): each chain's
/// transfer is in flight while the other chain's einsum runs, and the sums
/// travel through einsum accumulators in place.
// CHECK-LABEL: func.func @reduce_scatter_loop
// CHECK: scf.for {{.*}} iter_args(%[[A:[a-z0-9_]+]] = %{{.*}}, %[[B:[a-z0-9_]+]] = %{{.*}}, %[[SA:[a-z0-9_]+]] = %{{.*}}, %[[SB:[a-z0-9_]+]] = %{{.*}})
// CHECK:   %[[A1:.+]] = ovl.einsum {{.*}} acc %[[A]]
// CHECK:   %[[PA:.+]], %[[TA:.+]] = ovl.collective_permute_start %[[A1]] into %[[SA]]
// CHECK:   %[[B1:.+]] = ovl.einsum {{.*}} acc %[[B]]
// CHECK:   %[[PB:.+]], %[[TB:.+]] = ovl.collective_permute_start %[[B1]] into %[[SB]]
// CHECK:   %[[A2:.+]] = ovl.collective_permute_done %[[TA]] keep(%[[A1]]) into %[[PA]]
// CHECK:   %[[A3:.+]] = ovl.einsum {{.*}} acc %[[A2]]
// CHECK:   ovl.collective_permute_start %[[A3]] into %[[A1]]
// CHECK:   %[[B2:.+]] = ovl.collective_permute_done %[[TB]] keep(%[[B1]]) into %[[PB]]
// CHECK:   %[[B3:.+]] = ovl.einsum {{.*}} acc %[[B2]]
// CHECK:   ovl.collective_permute_start %[[B3]] into %[[B1]]
// CHECK:   scf.yield %{{.*}}, %{{.*}}, %[[A3]], %[[B3]]
// BUF-LABEL: func.func @reduce_scatter_loop
// BUF: scf.for
// BUF-NOT: memref.alloc() {{.*}} : memref<3x2xf32>
// BUF-NOT: memref.copy
// BUF: scf.yield
func.func @reduce_scatter_loop(%x: tensor<3x5xf32>, %w: tensor<5x2xf32>, %zero: tensor<3x2xf32>, %n: index) -> (tensor<3x2xf32>, tensor<3x2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r:2 = scf.for %k = %c0 to %n step %c1 iter_args(%a = %zero, %b = %zero) -> (tensor<3x2xf32>, tensor<3x2xf32>) {
    %a1 = ovl.einsum "bf,fh->bh" %x, %w acc %a : tensor<3x5xf32>, tensor<5x2xf32> -> tensor<3x2xf32>
    %a2 = ovl.collective_permute %a1 on @ring axes [0] pairs [0 -> 6, 1 -> 7, 2 -> 0, 3 -> 1, 4 -> 2, 5 -> 3, 6 -> 4, 7 -> 5] : tensor<3x2xf32>
    %b1 = ovl.einsum "bf,fh->bh" %x, %w acc %b : tensor<3x5xf32>, tensor<5x2xf32> -> tensor<3x2xf32>
    %b2 = ovl.collective_permute %b1 on @ring axes [0] pairs [0 -> 6, 1 -> 7, 2 -> 0, 3 -> 1, 4 -> 2, 5 -> 3, 6 -> 4, 7 -> 5] : tensor<3x2xf32>
    %a3 = ovl.einsum "bf,fh->bh" %x, %w acc %a2 : tensor<3x5xf32>, tensor<5x2xf32> -> tensor<3x2xf32>
    %a4 = ovl.collective_permute %a3 on @ring axes [0] pairs [0 -> 6, 1 -> 7, 2 -> 0, 3 -> 1, 4 -> 2, 5 -> 3, 6 -> 4, 7 -> 5] : tensor<3x2xf32>
    %b3 = ovl.einsum "bf,fh->bh" %x, %w acc %b2 : tensor<3x5xf32>, tensor<5x2xf32> -> tensor<3x2xf32>
    %b4 = ovl.collective_permute %b3 on @ring axes [0] pairs [0 -> 6, 1 -> 7, 2 -> 0, 3 -> 1, 4 -> 2, 5 -> 3, 6 -> 4, 7 -> 5] : tensor<3x2xf32>
    scf.yield %a4, %b4 : tensor<3x2xf32>, tensor<3x2xf32>
  }
  return %r#0, %r#1 : tensor<3x2xf32>, tensor<3x2xf32>
}

// -----

shard.grid @ring(shape = 2)

/// Outside loops the first permute of a chain receives into a new buffer;
/// each done waits until its result is needed (the first one until the
/// return, past the second pair), and an unused permute still completes,
/// right after its start.
// CHECK-LABEL: func.func @straight_line
// CHECK-SAME: (%[[X:[a-z0-9]+]]: tensor<4xf32>)
// CHECK: %[[E:.+]] = bufferization.alloc_tensor() : tensor<4xf32>
// CHECK: %[[P:.+]], %[[T:.+]] = ovl.collective_permute_start %[[X]] into %[[E]]
// CHECK: %[[P2:.+]], %[[T2:.+]] = ovl.collective_permute_start %[[X]] into %{{.*}}
// CHECK-NEXT: ovl.collective_permute_done %[[T2]]
// CHECK-NEXT: %[[D:.+]] = ovl.collective_permute_done %[[T]] keep(%[[X]]) into %[[P]]
// CHECK-NEXT: return %[[D]]
func.func @straight_line(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = ovl.collective_permute %x on @ring axes [0] pairs [0 -> 1, 1 -> 0] : tensor<4xf32>
  %unused = ovl.collective_permute %x on @ring axes [0] pairs [0 -> 1, 1 -> 0] : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

shard.grid @ring(shape = 4)

/// Two chains in one loop (the two directions of a bidirectional ring) get
/// two spare buffers. They stay distinct through CSE: sharing one would let
/// both transfers land in the same memory.
// CHECK-LABEL: func.func @two_chains
// CHECK-DAG: %[[S1:.+]] = bufferization.alloc_tensor() : tensor<4xf32>
// CHECK-DAG: %[[S2:.+]] = bufferization.alloc_tensor() : tensor<4xf32>
// CHECK: scf.for {{.*}} iter_args({{.*}}, %{{[a-z0-9_]+}} = %[[S1]], %{{[a-z0-9_]+}} = %[[S2]])
// BUF-LABEL: func.func @two_chains
// BUF: %[[B1:.+]] = memref.alloc() {{.*}} : memref<4xf32>
// BUF: %[[B2:.+]] = memref.alloc() {{.*}} : memref<4xf32>
// BUF: scf.for {{.*}} iter_args({{.*}}, %{{[a-z0-9_]+}} = %[[B1]], %{{[a-z0-9_]+}} = %[[B2]])
func.func @two_chains(%x: tensor<4xf32>, %n: index) -> (tensor<4xf32>, tensor<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r:2 = scf.for %k = %c0 to %n step %c1 iter_args(%l = %x, %r = %x) -> (tensor<4xf32>, tensor<4xf32>) {
    %l2 = ovl.collective_permute %l on @ring axes [0] pairs [0 -> 3, 1 -> 0, 2 -> 1, 3 -> 2] : tensor<4xf32>
    %r2 = ovl.collective_permute %r on @ring axes [0] pairs [0 -> 1, 1 -> 2, 2 -> 3, 3 -> 0] : tensor<4xf32>
    scf.yield %l2, %r2 : tensor<4xf32>, tensor<4xf32>
  }
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}
