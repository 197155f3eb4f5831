// RUN: overlap-opt %s --one-shot-bufferize="bufferize-function-boundaries allow-return-allocs-from-loops" --split-input-file --verify-diagnostics

// Bufferization refuses what would silently corrupt data in flight.

/// The pending tensor crosses the back edge into the other iteration
/// argument: bufferizing it would copy the destination at the yield, before
/// the transfer lands.
shard.grid @ring(shape = 4)
func.func @in_flight_swap(%x: tensor<4xf32>, %n: index) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %buf = tensor.empty() : tensor<4xf32>
  %p0, %t0 = ovl.collective_permute_start %x into %buf on @ring axes [0] pairs [0 -> 3, 1 -> 0, 2 -> 1, 3 -> 2] : tensor<4xf32>
  %r:3 = scf.for %i = %c0 to %n step %c1 iter_args(%cur = %x, %pend = %p0, %tok = %t0) -> (tensor<4xf32>, tensor<4xf32>, !ovl.token) {
    %next = ovl.collective_permute_done %tok keep(%cur) into %pend : tensor<4xf32>
    // expected-error @+1 {{pending result is carried across the loop's back edge into iteration argument #1, which does not bufferize to the same buffer}}
    %p, %t = ovl.collective_permute_start %next into %cur on @ring axes [0] pairs [0 -> 3, 1 -> 0, 2 -> 1, 3 -> 2] : tensor<4xf32>
    scf.yield %next, %p, %t : tensor<4xf32>, tensor<4xf32>, !ovl.token
  }
  %last = ovl.collective_permute_done %r#2 keep(%r#0) into %r#1 : tensor<4xf32>
  return %last : tensor<4xf32>
}
