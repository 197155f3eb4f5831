// RUN: overlap-opt %s --split-input-file --verify-diagnostics

// Every constraint of the asynchronous all_gather, reduce_scatter,
// all_reduce and their done has a located diagnostic.

shard.grid @ring(shape = 4)
func.func @gather_factor(%x: tensor<2xf32>, %b: tensor<6xf32>) -> tensor<6xf32> {
  // expected-error @+1 {{'ovl.all_gather_start' op result dim 0 has size 6; expected 8 (input size 2 gathered from 4 devices)}}
  %p, %t = ovl.all_gather_start %x into %b on @ring axes [0] dim 0 : tensor<2xf32> -> tensor<6xf32>
  %r = ovl.collective_done %t keep(%x : tensor<2xf32>) into %p : tensor<6xf32>
  return %r : tensor<6xf32>
}

// -----

shard.grid @ring(shape = 4)
func.func @gather_dim(%x: tensor<2xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'ovl.all_gather_start' op gather dim 1 is out of range}}
  %p, %t = ovl.all_gather_start %x into %b on @ring axes [0] dim 1 : tensor<2xf32> -> tensor<8xf32>
  %r = ovl.collective_done %t keep(%x : tensor<2xf32>) into %p : tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

shard.grid @ring(shape = 4)
func.func @scatter_factor(%x: tensor<6xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'ovl.reduce_scatter_start' op input dim 0 of size 6 is not divisible by the group size 4}}
  %p, %t = ovl.reduce_scatter_start %x into %b on @ring axes [0] dim 0 : tensor<6xf32> -> tensor<2xf32>
  %r = ovl.collective_done %t keep(%x : tensor<6xf32>) into %p : tensor<2xf32>
  return %r : tensor<2xf32>
}

// -----

shard.grid @ring(shape = 4)
func.func @reduce_types(%x: tensor<4xf32>, %b: tensor<4xf16>) -> tensor<4xf16> {
  // expected-error @+1 {{'ovl.all_reduce_start' op failed to verify that all of {input, dest} have same type}}
  %p, %t = ovl.all_reduce_start %x into %b on @ring axes [0] : tensor<4xf32> -> tensor<4xf16>
  %r = ovl.collective_done %t keep(%x : tensor<4xf32>) into %p : tensor<4xf16>
  return %r : tensor<4xf16>
}

// -----

shard.grid @ring(shape = 4)
func.func @axis(%x: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'ovl.all_reduce_start' op grid axis 1 is out of range for grid @ring of rank 1}}
  %p, %t = ovl.all_reduce_start %x into %b on @ring axes [1] : tensor<4xf32> -> tensor<4xf32>
  %r = ovl.collective_done %t keep(%x : tensor<4xf32>) into %p : tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

shard.grid @ring(shape = 4)
func.func @dropped(%x: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{token must have exactly one use, the matching 'ovl.collective_done' or a region terminator that carries it on, but has 0}}
  %p, %t = ovl.all_reduce_start %x into %b on @ring axes [0] : tensor<4xf32> -> tensor<4xf32>
  return %x : tensor<4xf32>
}

// -----

shard.grid @ring(shape = 4)
func.func @done_in_branch(%x: tensor<4xf32>, %b: tensor<4xf32>, %c: i1) -> tensor<4xf32> {
  // expected-error @+1 {{token is used inside a region of 'scf.if'}}
  %p, %t = ovl.all_reduce_start %x into %b on @ring axes [0] : tensor<4xf32> -> tensor<4xf32>
  %r = scf.if %c -> tensor<4xf32> {
    %d = ovl.collective_done %t keep(%x : tensor<4xf32>) into %p : tensor<4xf32>
    scf.yield %d : tensor<4xf32>
  } else {
    scf.yield %x : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

shard.grid @ring(shape = 4)
func.func @wrong_done(%x: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %p, %t = ovl.all_reduce_start %x into %b on @ring axes [0] : tensor<4xf32> -> tensor<4xf32>
  // expected-error @+1 {{token must come from an 'ovl.collective_permute_start', directly or through a region's arguments and results, but comes from 'ovl.all_reduce_start'; its done is 'ovl.collective_done'}}
  %r = ovl.collective_permute_done %t keep(%x) into %p : tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

shard.grid @ring(shape = 4)
func.func @wrong_done_permute(%x: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %p, %t = ovl.collective_permute_start %x into %b on @ring axes [0] pairs [0 -> 1, 1 -> 2, 2 -> 3, 3 -> 0] : tensor<4xf32>
  // expected-error @+1 {{token must come from an 'ovl.all_gather_start', 'ovl.reduce_scatter_start' or 'ovl.all_reduce_start', directly or through a region's arguments and results, but comes from 'ovl.collective_permute_start'; its done is 'ovl.collective_permute_done'}}
  %r = ovl.collective_done %t keep(%x : tensor<4xf32>) into %p : tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

shard.grid @ring(shape = 4)
func.func @wrong_pending(%x: tensor<2xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
  %p, %t = ovl.all_gather_start %x into %b on @ring axes [0] dim 0 : tensor<2xf32> -> tensor<8xf32>
  // expected-error @+1 {{pending operand must be the pending result of the start that produced the token}}
  %r = ovl.collective_done %t keep(%x : tensor<2xf32>) into %b : tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

shard.grid @ring(shape = 4)
func.func @wrong_keep(%x: tensor<2xf32>, %y: tensor<2xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
  %p, %t = ovl.all_gather_start %x into %b on @ring axes [0] dim 0 : tensor<2xf32> -> tensor<8xf32>
  // expected-error @+1 {{keep operand must be the input of the start that produced the token}}
  %r = ovl.collective_done %t keep(%y : tensor<2xf32>) into %p : tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

func.func @done_types(%t: !ovl.token, %x: tensor<2xf32>, %b: tensor<8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'ovl.collective_done' op failed to verify that all of {pending, result} have same type}}
  %r = "ovl.collective_done"(%t, %x, %b) : (!ovl.token, tensor<2xf32>, tensor<8xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @done_elsewhere(%t: !ovl.token, %x: tensor<2xf32>, %b: tensor<8xf32>, %c: i1) -> tensor<8xf32> {
  %r = scf.if %c -> tensor<8xf32> {
    // expected-error @+1 {{token is defined in another block}}
    %d = ovl.collective_done %t keep(%x : tensor<2xf32>) into %b : tensor<8xf32>
    scf.yield %d : tensor<8xf32>
  } else {
    scf.yield %b : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}
