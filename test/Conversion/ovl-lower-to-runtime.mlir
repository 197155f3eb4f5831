// RUN: overlap-opt %s --ovl-lower-to-runtime --split-input-file --verify-diagnostics | FileCheck %s --implicit-check-not=ovl.

// Bufferized collectives become calls of the ovlrt runtime with a constant
// config array and a location string; tokens become i64 request handles.
// Each call is in an alloca_scope: the descriptors its unranked operands
// put on the stack go when it returns, not when the function does (a loop
// of collectives used to grow the stack by one set per iteration).

shard.grid @torus(shape = 2x4)

// CHECK-NOT: shard.grid
// CHECK-DAG: func.func private @ovlrt_all_gather_f32(memref<*xf32>, memref<*xf32>, memref<?xi64>, memref<?xi8>) attributes {llvm.emit_c_interface}
// CHECK-DAG: func.func private @ovlrt_reduce_scatter_bf16(memref<*xbf16>, memref<*xbf16>, memref<?xi64>, memref<?xi8>) attributes {llvm.emit_c_interface}
// CHECK-DAG: func.func private @ovlrt_all_reduce_i32(memref<*xi32>, memref<*xi32>, memref<?xi64>, memref<?xi8>) attributes {llvm.emit_c_interface}
// CHECK-DAG: func.func private @ovlrt_permute_f16(
// CHECK-DAG: func.func private @ovlrt_partition_id(memref<?xi64>) -> i64 attributes {llvm.emit_c_interface}
/// config = [rank, shape..., #axes, axes..., dim, reduction, #pairs, pairs...]
// CHECK-DAG: memref.global "private" constant @[[GATHER:__ovl_config_[0-9]+]] : memref<8xi64> = dense<[2, 2, 4, 1, 0, 0, 0, 0]>
// CHECK-DAG: memref.global "private" constant @[[SCATTER:__ovl_config_[0-9]+]] : memref<9xi64> = dense<[2, 2, 4, 2, 1, 0, 1, 0, 0]>
// CHECK-DAG: memref.global "private" constant @[[REDUCE:__ovl_config_[0-9]+]] : memref<8xi64> = dense<[2, 2, 4, 1, 1, -1, 3, 0]>
// CHECK-DAG: memref.global "private" constant @[[PERMUTE:__ovl_config_[0-9]+]] : memref<12xi64> = dense<[2, 2, 4, 1, 0, -1, 0, 2, 0, 1, 1, 0]>
// CHECK-DAG: memref.global "private" constant @[[ID:__ovl_config_[0-9]+]] : memref<9xi64> = dense<[2, 2, 4, 2, 1, 0, -1, 0, 0]>
// CHECK-LABEL: func.func @blocking
// CHECK-SAME: (%[[X:[a-z0-9]+]]: memref<2x8xf32>, %[[G:[a-z0-9]+]]: memref<4x8xf32>
// CHECK: memref.alloca_scope {
// CHECK-NEXT: %[[CFG:.+]] = memref.get_global @[[GATHER]] : memref<8xi64>
// CHECK: %[[CFGV:.+]] = memref.cast %[[CFG]] : memref<8xi64> to memref<?xi64>
// CHECK: %[[WHERE:.+]] = memref.get_global @__ovl_where_{{[0-9]+}}
// CHECK: %[[WHEREV:.+]] = memref.cast %[[WHERE]] : memref<{{[0-9]+}}xi8> to memref<?xi8>
// CHECK: %[[IN:.+]] = memref.cast %[[X]] : memref<2x8xf32> to memref<*xf32>
// CHECK: %[[OUT:.+]] = memref.cast %[[G]] : memref<4x8xf32> to memref<*xf32>
// CHECK: call @ovlrt_all_gather_f32(%[[IN]], %[[OUT]], %[[CFGV]], %[[WHEREV]])
// CHECK-NEXT: }
// CHECK: memref.get_global @[[SCATTER]]
// CHECK: call @ovlrt_reduce_scatter_bf16
// CHECK: memref.get_global @[[REDUCE]]
// CHECK: call @ovlrt_all_reduce_i32
// CHECK: memref.get_global @[[PERMUTE]]
// CHECK: call @ovlrt_permute_f16
// CHECK: memref.get_global @[[ID]]
// CHECK: %[[PID:.+]] = call @ovlrt_partition_id
// CHECK: arith.index_cast %[[PID]] : i64 to index
func.func @blocking(%x: memref<2x8xf32>, %g: memref<4x8xf32>, %b: memref<8x8xbf16>, %s: memref<8x1xbf16>,
                    %i: memref<4xi32>, %j: memref<4xi32>, %h: memref<3xf16>, %k: memref<3xf16>) -> index {
  ovl.buffer.all_gather %x into %g on @torus axes [0] dim 0 : memref<2x8xf32>, memref<4x8xf32>
  ovl.buffer.reduce_scatter %b into %s on @torus axes [1, 0] dim 1 : memref<8x8xbf16>, memref<8x1xbf16>
  ovl.buffer.all_reduce %i into %j on @torus axes [1] reduce min : memref<4xi32>, memref<4xi32>
  ovl.buffer.permute %h into %k on @torus axes [0] pairs [0 -> 1, 1 -> 0] : memref<3xf16>, memref<3xf16>
  %id = ovl.partition_id on @torus axes [1, 0] : index
  return %id : index
}

// -----

shard.grid @ring(shape = 4)

/// A token carried around a loop becomes an i64 iteration argument.
// CHECK-LABEL: func.func @token_in_loop
// CHECK: %[[T0:.+]] = memref.alloca_scope -> (i64) {
// CHECK:   %[[C0:.+]] = func.call @ovlrt_permute_start_f32({{.*}}) : ({{.*}}) -> i64
// CHECK:   memref.alloca_scope.return %[[C0]] : i64
// CHECK: %[[R:.+]] = scf.for {{.*}} iter_args(%[[T:.+]] = %[[T0]]) -> (i64)
// CHECK:   call @ovlrt_permute_done(%[[T]], %{{.*}}) : (i64, memref<?xi8>) -> ()
// CHECK:   %[[T1:.+]] = memref.alloca_scope -> (i64) {
// CHECK:     func.call @ovlrt_permute_start_f32({{.*}}) : ({{.*}}) -> i64
// CHECK:   scf.yield %[[T1]] : i64
// CHECK: call @ovlrt_permute_done(%[[R]], %{{.*}})
func.func @token_in_loop(%a: memref<4xf32>, %b: memref<4xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %t0 = ovl.buffer.permute_start %a into %b on @ring axes [0] pairs [0 -> 3, 1 -> 0, 2 -> 1, 3 -> 2] : memref<4xf32>, memref<4xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%t = %t0) -> (!ovl.token) {
    ovl.buffer.permute_done %t keep(%a) into %b : memref<4xf32>, memref<4xf32>
    %t1 = ovl.buffer.permute_start %a into %b on @ring axes [0] pairs [0 -> 3, 1 -> 0, 2 -> 1, 3 -> 2] : memref<4xf32>, memref<4xf32>
    scf.yield %t1 : !ovl.token
  }
  ovl.buffer.permute_done %r keep(%a) into %b : memref<4xf32>, memref<4xf32>
  return
}

// -----

shard.grid @torus(shape = 2x4)

/// The asynchronous all_gather, reduce_scatter and all_reduce: each start
/// is a call of its type's entry point returning the request, each done a
/// call of ovlrt_collective_done with it.
// CHECK-LABEL: func.func @async_collectives
// CHECK: %[[G:.+]] = memref.alloca_scope -> (i64)
// CHECK: call @ovlrt_all_gather_start_f32({{.*}}) : (memref<*xf32>, memref<*xf32>, memref<?xi64>, memref<?xi8>) -> i64
// CHECK: %[[S:.+]] = memref.alloca_scope -> (i64)
// CHECK: call @ovlrt_reduce_scatter_start_bf16({{.*}}) : (memref<*xbf16>, memref<*xbf16>, memref<?xi64>, memref<?xi8>) -> i64
// CHECK: %[[R:.+]] = memref.alloca_scope -> (i64)
// CHECK: call @ovlrt_all_reduce_start_i32({{.*}}) : (memref<*xi32>, memref<*xi32>, memref<?xi64>, memref<?xi8>) -> i64
// CHECK: call @ovlrt_collective_done(%[[S]], %{{.*}}) : (i64, memref<?xi8>) -> ()
// CHECK: call @ovlrt_collective_done(%[[G]], %{{.*}})
// CHECK: call @ovlrt_collective_done(%[[R]], %{{.*}})
func.func @async_collectives(%x: memref<2x8xf32>, %g: memref<4x8xf32>, %b: memref<8x8xbf16>, %s: memref<8x1xbf16>, %i: memref<4xi32>, %j: memref<4xi32>) {
  %tg = ovl.buffer.all_gather_start %x into %g on @torus axes [0] dim 0 : memref<2x8xf32>, memref<4x8xf32>
  %ts = ovl.buffer.reduce_scatter_start %b into %s on @torus axes [1, 0] dim 1 : memref<8x8xbf16>, memref<8x1xbf16>
  %tr = ovl.buffer.all_reduce_start %i into %j on @torus axes [1] reduce min : memref<4xi32>, memref<4xi32>
  ovl.buffer.collective_done %ts keep(%b) into %s : memref<8x8xbf16>, memref<8x1xbf16>
  ovl.buffer.collective_done %tg keep(%x) into %g : memref<2x8xf32>, memref<4x8xf32>
  ovl.buffer.collective_done %tr keep(%i) into %j : memref<4xi32>, memref<4xi32>
  return
}

// -----

shard.grid @ring(shape = 4)

/// The location string names the op's source position.
// CHECK: memref.global "private" constant @__ovl_where_0 : memref<17xi8> = dense<[112, 114, 111, 103, 114, 97, 109, 46, 109, 108, 105, 114, 58, 55, 58, 51, 0]>
func.func @location(%x: memref<2xf32>, %y: memref<8xf32>) {
  ovl.buffer.all_gather %x into %y on @ring axes [0] dim 0 : memref<2xf32>, memref<8xf32> loc("program.mlir":7:3)
  return
}

// -----

shard.grid @ring(shape = 4)

func.func @still_on_tensors(%x: tensor<2xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'ovl.all_gather' op is still on tensors; run one-shot-bufferize (after ovl-einsum-to-linalg) before ovl-lower-to-runtime}}
  %0 = ovl.all_gather %x on @ring axes [0] dim 0 : tensor<2xf32> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

shard.grid @ring(shape = 4)

func.func @unsupported_type(%x: memref<2xi1>, %y: memref<8xi1>) {
  // expected-error @+1 {{element type 'i1' has no runtime implementation; expected f32, f64, f16, bf16, i8, i16, i32 or i64}}
  ovl.buffer.all_gather %x into %y on @ring axes [0] dim 0 : memref<2xi1>, memref<8xi1>
  return
}

// -----

shard.grid @ring(shape = ?)

func.func @dynamic_grid(%x: memref<2xf32>, %y: memref<2xf32>) {
  // expected-error @+1 {{the runtime needs a static grid shape}}
  ovl.buffer.all_reduce %x into %y on @ring axes [0] : memref<2xf32>, memref<2xf32>
  return
}
