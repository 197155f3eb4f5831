// RUN: overlap-opt %s --split-input-file --verify-diagnostics

// Every verifier diagnostic of the ovl ops, one case per split.

shard.grid @ring(shape = 4)
func.func @unknown_grid(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{'ovl.all_gather' op grid @nope does not name a 'shard.grid' operation}}
  %0 = ovl.all_gather %x on @nope axes [0] dim 0 : tensor<2x8xf32> -> tensor<8x8xf32>
  return
}

// -----

func.func @not_a_grid(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{grid @not_a_grid does not name a 'shard.grid' operation}}
  %0 = ovl.all_reduce %x on @not_a_grid axes [0] : tensor<2x8xf32>
  return
}

// -----

shard.grid @torus(shape = 2x4)
func.func @axis_out_of_range(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{grid axis 2 is out of range for grid @torus of rank 2; expected an axis in [0, 2)}}
  %0 = ovl.all_gather %x on @torus axes [2] dim 0 : tensor<2x8xf32> -> tensor<8x8xf32>
  return
}

// -----

shard.grid @torus(shape = 2x4)
func.func @axis_repeated(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{grid axis 1 is listed twice; the axes must be distinct}}
  %0 = ovl.reduce_scatter %x on @torus axes [1, 1] dim 1 : tensor<2x8xf32> -> tensor<2x1xf32>
  return
}

// -----

shard.grid @torus(shape = 2x4)
func.func @axis_negative(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{grid axis -1 is negative; axes index the grid's dimensions}}
  %0 = ovl.collective_permute %x on @torus axes [-1] pairs [0 -> 1, 1 -> 0] : tensor<2x8xf32>
  return
}

// -----

shard.grid @torus(shape = 2x4)
func.func @partition_id_axis(%x: tensor<2x8xf32>) -> index {
  // expected-error @+1 {{'ovl.partition_id' op grid axis 3 is out of range for grid @torus of rank 2}}
  %0 = ovl.partition_id on @torus axes [3] : index
  return %0 : index
}

// -----

func.func @partition_id_grid() -> index {
  // expected-error @+1 {{'ovl.partition_id' op grid @g does not name a 'shard.grid' operation}}
  %0 = ovl.partition_id on @g axes [0] : index
  return %0 : index
}

// -----

//===----------------------------------------------------------------------===//
// all_gather
//===----------------------------------------------------------------------===//

shard.grid @ring(shape = 4)
func.func @gather_factor(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{result dim 0 has size 6; expected 8 (input size 2 gathered from 4 devices)}}
  %0 = ovl.all_gather %x on @ring axes [0] dim 0 : tensor<2x8xf32> -> tensor<6x8xf32>
  return
}

// -----

shard.grid @torus(shape = 2x4)
func.func @gather_factor_subgroup(%x: tensor<2x8xf32>) {
  // Axes [0, 1] span all 8 devices.
  // expected-error @+1 {{result dim 1 has size 32; expected 64 (input size 8 gathered from 8 devices)}}
  %0 = ovl.all_gather %x on @torus axes [0, 1] dim 1 : tensor<2x8xf32> -> tensor<2x32xf32>
  return
}

// -----

shard.grid @ring(shape = 4)
func.func @gather_dim_range(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{gather dim 2 is out of range for an input of rank 2}}
  %0 = ovl.all_gather %x on @ring axes [0] dim 2 : tensor<2x8xf32> -> tensor<2x8xf32>
  return
}

// -----

shard.grid @ring(shape = 4)
func.func @gather_rank(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{result rank 3 differs from the input rank 2}}
  %0 = ovl.all_gather %x on @ring axes [0] dim 0 : tensor<2x8xf32> -> tensor<8x8x1xf32>
  return
}

// -----

shard.grid @ring(shape = 4)
func.func @gather_element_type(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{result element type 'f16' differs from the input element type 'f32'}}
  %0 = ovl.all_gather %x on @ring axes [0] dim 0 : tensor<2x8xf32> -> tensor<8x8xf16>
  return
}

// -----

shard.grid @ring(shape = 4)
func.func @gather_other_dim(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{result dim 1 has size 4 but the input's has size 8; only the gather dim 0 may differ}}
  %0 = ovl.all_gather %x on @ring axes [0] dim 0 : tensor<2x8xf32> -> tensor<8x4xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// reduce_scatter
//===----------------------------------------------------------------------===//

shard.grid @ring(shape = 4)
func.func @scatter_divisible(%x: tensor<6x8xf32>) {
  // expected-error @+1 {{input dim 0 of size 6 is not divisible by the group size 4}}
  %0 = ovl.reduce_scatter %x on @ring axes [0] dim 0 : tensor<6x8xf32> -> tensor<1x8xf32>
  return
}

// -----

shard.grid @ring(shape = 4)
func.func @scatter_factor(%x: tensor<8x8xf32>) {
  // expected-error @+1 {{result dim 1 has size 4; expected 2 (input size 8 scattered over 4 devices)}}
  %0 = ovl.reduce_scatter %x on @ring axes [0] dim 1 : tensor<8x8xf32> -> tensor<8x4xf32>
  return
}

// -----

shard.grid @ring(shape = 4)
func.func @scatter_dim_range(%x: tensor<8x8xf32>) {
  // expected-error @+1 {{scatter dim 5 is out of range for an input of rank 2}}
  %0 = ovl.reduce_scatter %x on @ring axes [0] dim 5 : tensor<8x8xf32> -> tensor<8x8xf32>
  return
}

// -----

shard.grid @ring(shape = 4)
func.func @scatter_element_type(%x: tensor<8x8xf32>) {
  // expected-error @+1 {{result element type 'bf16' differs from the input element type 'f32'}}
  %0 = ovl.reduce_scatter %x on @ring axes [0] dim 0 : tensor<8x8xf32> -> tensor<2x8xbf16>
  return
}

// -----

shard.grid @ring(shape = 4)
func.func @scatter_unknown_reduction(%x: tensor<8x8xf32>) {
  // expected-error @+1 {{unknown reduction 'avg'; expected sum, prod, max or min}}
  %0 = ovl.reduce_scatter %x on @ring axes [0] dim 0 reduce avg : tensor<8x8xf32> -> tensor<2x8xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// all_reduce
//===----------------------------------------------------------------------===//

shard.grid @ring(shape = 4)
func.func @all_reduce_type(%x: tensor<8x8xf32>) {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = "ovl.all_reduce"(%x) <{grid = @ring, grid_axes = array<i16: 0>}> : (tensor<8x8xf32>) -> tensor<8x8xf16>
  return
}

// -----

//===----------------------------------------------------------------------===//
// collective_permute and its asynchronous pair
//===----------------------------------------------------------------------===//

shard.grid @ring(shape = 4)
func.func @permute_out_of_range(%x: tensor<2xf32>) {
  // expected-error @+1 {{pair 3 -> 4 is out of range for a group of 4 devices}}
  %0 = ovl.collective_permute %x on @ring axes [0] pairs [0 -> 1, 1 -> 2, 2 -> 3, 3 -> 4] : tensor<2xf32>
  return
}

// -----

shard.grid @ring(shape = 4)
func.func @permute_two_sources(%x: tensor<2xf32>) {
  // expected-error @+1 {{device 1 is the source of more than one pair}}
  %0 = ovl.collective_permute %x on @ring axes [0] pairs [0 -> 1, 1 -> 2, 1 -> 3, 3 -> 0] : tensor<2xf32>
  return
}

// -----

shard.grid @ring(shape = 4)
func.func @permute_two_targets(%x: tensor<2xf32>) {
  // expected-error @+1 {{device 0 is the target of more than one pair}}
  %0 = ovl.collective_permute %x on @ring axes [0] pairs [1 -> 0, 2 -> 0] : tensor<2xf32>
  return
}

// -----

shard.grid @ring(shape = 4)
func.func @permute_not_covering(%x: tensor<2xf32>) {
  // expected-error @+1 {{pairs cover 3 of the 4 devices of the group; expected a permutation of the whole group}}
  %0 = ovl.collective_permute %x on @ring axes [0] pairs [0 -> 1, 1 -> 2, 2 -> 0] : tensor<2xf32>
  return
}

// -----

shard.grid @ring(shape = 4)
func.func @permute_negative(%x: tensor<2xf32>) {
  // expected-error @+1 {{pair 0 -> -1 has a negative device index}}
  %0 = ovl.collective_permute %x on @ring axes [0] pairs [0 -> -1] : tensor<2xf32>
  return
}

// -----

shard.grid @ring(shape = 4)
func.func @permute_odd_pairs(%x: tensor<2xf32>) {
  // expected-error @+1 {{pairs must hold (source, target) pairs, but has 3 entries}}
  %0 = "ovl.collective_permute"(%x) <{grid = @ring, grid_axes = array<i16: 0>, pairs = array<i64: 0, 1, 1>}> : (tensor<2xf32>) -> tensor<2xf32>
  return
}

// -----

shard.grid @ring(shape = 4)
func.func @permute_malformed_pairs(%x: tensor<2xf32>) {
  // expected-error @+1 {{expected '->'}}
  %0 = ovl.collective_permute %x on @ring axes [0] pairs [0, 1] : tensor<2xf32>
  return
}

// -----

shard.grid @ring(shape = 2)
func.func @start_pairs(%x: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'ovl.collective_permute_start' op pairs cover 1 of the 2 devices of the group}}
  %p, %t = ovl.collective_permute_start %x into %b on @ring axes [0] pairs [0 -> 1] : tensor<2xf32>
  %r = ovl.collective_permute_done %t keep(%x) into %p : tensor<2xf32>
  return %r : tensor<2xf32>
}

// -----

shard.grid @ring(shape = 2)
func.func @start_without_done(%x: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{token must have exactly one use, the matching 'ovl.collective_permute_done' or a region terminator that carries it on, but has 0}}
  %p, %t = ovl.collective_permute_start %x into %b on @ring axes [0] pairs [0 -> 1, 1 -> 0] : tensor<2xf32>
  return %p : tensor<2xf32>
}

// -----

shard.grid @ring(shape = 2)
func.func @start_two_dones(%x: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{token must have exactly one use}}
  %p, %t = ovl.collective_permute_start %x into %b on @ring axes [0] pairs [0 -> 1, 1 -> 0] : tensor<2xf32>
  %r = ovl.collective_permute_done %t keep(%x) into %p : tensor<2xf32>
  %s = ovl.collective_permute_done %t keep(%x) into %p : tensor<2xf32>
  return %r : tensor<2xf32>
}

// -----

shard.grid @ring(shape = 2)
func.func @start_types(%x: tensor<2xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{failed to verify that all of {input, dest, pending} have same type}}
  %p, %t = "ovl.collective_permute_start"(%x, %b) <{grid = @ring, grid_axes = array<i16: 0>, pairs = array<i64: 0, 1, 1, 0>}> : (tensor<2xf32>, tensor<4xf32>) -> (tensor<2xf32>, !ovl.token)
  return
}

// -----

func.func @done_foreign_token(%x: tensor<2xf32>, %i: i64) -> tensor<2xf32> {
  %t = builtin.unrealized_conversion_cast %i : i64 to !ovl.token
  // expected-error @+1 {{token must come from an 'ovl.collective_permute_start', directly or through a region's arguments and results, but comes from 'builtin.unrealized_conversion_cast'}}
  %r = ovl.collective_permute_done %t keep(%x) into %x : tensor<2xf32>
  return %r : tensor<2xf32>
}

// -----

shard.grid @ring(shape = 2)
func.func @done_wrong_pending(%x: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {
  %p, %t = ovl.collective_permute_start %x into %b on @ring axes [0] pairs [0 -> 1, 1 -> 0] : tensor<2xf32>
  // expected-error @+1 {{pending operand must be the pending result of the start that produced the token}}
  %r = ovl.collective_permute_done %t keep(%x) into %b : tensor<2xf32>
  return %r : tensor<2xf32>
}

// -----

shard.grid @ring(shape = 2)
func.func @done_wrong_keep(%x: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {
  %p, %t = ovl.collective_permute_start %x into %b on @ring axes [0] pairs [0 -> 1, 1 -> 0] : tensor<2xf32>
  // expected-error @+1 {{keep operand must be the input of the start that produced the token}}
  %r = ovl.collective_permute_done %t keep(%b) into %p : tensor<2xf32>
  return %r : tensor<2xf32>
}

// -----

func.func @done_types(%t: !ovl.token, %x: tensor<2xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{failed to verify that all of {keep, pending, result} have same type}}
  %r = "ovl.collective_permute_done"(%t, %x, %b) : (!ovl.token, tensor<2xf32>, tensor<4xf32>) -> tensor<2xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// einsum
//===----------------------------------------------------------------------===//

func.func @einsum_no_arrow(%a: tensor<2x8xf32>, %b: tensor<8x4xf32>) {
  // expected-error @+1 {{einsum equation 'bf,fh' has no '->'; the output term must be explicit}}
  %0 = ovl.einsum "bf,fh" %a, %b : tensor<2x8xf32>, tensor<8x4xf32> -> tensor<2x4xf32>
  return
}

// -----

func.func @einsum_ellipsis(%a: tensor<2x8xf32>, %b: tensor<8x4xf32>) {
  // expected-error @+1 {{ellipsis at position 0 is not supported; name every dimension}}
  %0 = ovl.einsum "...f,fh->...h" %a, %b : tensor<2x8xf32>, tensor<8x4xf32> -> tensor<2x4xf32>
  return
}

// -----

func.func @einsum_bad_character(%a: tensor<2x8xf32>, %b: tensor<8x4xf32>) {
  // expected-error @+1 {{unexpected '_' at position 3 (expected a letter, ',' or '->')}}
  %0 = ovl.einsum "bf,_h->bh" %a, %b : tensor<2x8xf32>, tensor<8x4xf32> -> tensor<2x4xf32>
  return
}

// -----

func.func @einsum_diagonal(%a: tensor<8x8xf32>) {
  // expected-error @+1 {{index 'i' repeats in input #0 at position 1; diagonals and repeated output indices are not supported}}
  %0 = ovl.einsum "ii->i" %a : tensor<8x8xf32> -> tensor<8xf32>
  return
}

// -----

func.func @einsum_unknown_output_index(%a: tensor<2x8xf32>, %b: tensor<8x4xf32>) {
  // expected-error @+1 {{output index 'z' does not appear in any input}}
  %0 = ovl.einsum "bf,fh->bz" %a, %b : tensor<2x8xf32>, tensor<8x4xf32> -> tensor<2x4xf32>
  return
}

// -----

func.func @einsum_operand_count(%a: tensor<2x8xf32>, %b: tensor<8x4xf32>) {
  // expected-error @+1 {{equation 'bf,fh,hk->bk' has 3 input term(s) but the op has 2 input(s)}}
  %0 = ovl.einsum "bf,fh,hk->bk" %a, %b : tensor<2x8xf32>, tensor<8x4xf32> -> tensor<2x4xf32>
  return
}

// -----

func.func @einsum_rank(%a: tensor<2x8xf32>, %b: tensor<8x4xf32>) {
  // expected-error @+1 {{input #1 has rank 2 but its term 'fhk' has 3 indices}}
  %0 = ovl.einsum "bf,fhk->bh" %a, %b : tensor<2x8xf32>, tensor<8x4xf32> -> tensor<2x4xf32>
  return
}

// -----

func.func @einsum_index_size(%a: tensor<2x8xf32>, %b: tensor<16x4xf32>) {
  // expected-error @+1 {{index 'f' has size 8 in input #0 but size 16 in input #1}}
  %0 = ovl.einsum "bf,fh->bh" %a, %b : tensor<2x8xf32>, tensor<16x4xf32> -> tensor<2x4xf32>
  return
}

// -----

func.func @einsum_result_rank(%a: tensor<2x8xf32>, %b: tensor<8x4xf32>) {
  // expected-error @+1 {{result has rank 3 but the output term 'bh' has 2 indices}}
  %0 = ovl.einsum "bf,fh->bh" %a, %b : tensor<2x8xf32>, tensor<8x4xf32> -> tensor<2x4x1xf32>
  return
}

// -----

func.func @einsum_result_shape(%a: tensor<2x8xf32>, %b: tensor<8x4xf32>) {
  // expected-error @+1 {{result shape 4x2 does not match 'bh' = 2x4 from the inputs}}
  %0 = ovl.einsum "bf,fh->bh" %a, %b : tensor<2x8xf32>, tensor<8x4xf32> -> tensor<4x2xf32>
  return
}

// -----

func.func @einsum_input_types(%a: tensor<2x8xf32>, %b: tensor<8x4xbf16>) {
  // expected-error @+1 {{input #1 has element type 'bf16' but input #0 has 'f32'; all inputs must have the same element type}}
  %0 = ovl.einsum "bf,fh->bh" %a, %b : tensor<2x8xf32>, tensor<8x4xbf16> -> tensor<2x4xf32>
  return
}

// -----

func.func @einsum_narrowing_result(%a: tensor<2x8xf32>, %b: tensor<8x4xf32>) {
  // expected-error @+1 {{result element type 'bf16' cannot hold products of 'f32'; expected the same type or a wider one of the same kind}}
  %0 = ovl.einsum "bf,fh->bh" %a, %b : tensor<2x8xf32>, tensor<8x4xf32> -> tensor<2x4xbf16>
  return
}

// -----

func.func @einsum_int_to_float(%a: tensor<2x8xi8>, %b: tensor<8x4xi8>) {
  // expected-error @+1 {{result element type 'f32' cannot hold products of 'i8'}}
  %0 = ovl.einsum "bf,fh->bh" %a, %b : tensor<2x8xi8>, tensor<8x4xi8> -> tensor<2x4xf32>
  return
}

// -----

func.func @einsum_complex(%a: tensor<2x8xcomplex<f32>>, %b: tensor<8x4xcomplex<f32>>) {
  // expected-error @+1 {{input #0 has element type 'complex<f32>'; expected an integer or floating-point type}}
  %0 = ovl.einsum "bf,fh->bh" %a, %b : tensor<2x8xcomplex<f32>>, tensor<8x4xcomplex<f32>> -> tensor<2x4xcomplex<f32>>
  return
}

// -----

func.func @einsum_acc_type(%a: tensor<2x8xf32>, %b: tensor<8x4xf32>, %c: tensor<2x4xf16>) {
  // expected-error @+1 {{failed to verify that the accumulator has the result type}}
  %0 = "ovl.einsum"(%a, %b, %c) <{equation = "bf,fh->bh", operandSegmentSizes = array<i32: 2, 1>}> : (tensor<2x8xf32>, tensor<8x4xf32>, tensor<2x4xf16>) -> tensor<2x4xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// buffer forms
//===----------------------------------------------------------------------===//

shard.grid @ring(shape = 4)
func.func @buffer_gather_factor(%x: memref<2x8xf32>, %y: memref<4x8xf32>) {
  // expected-error @+1 {{'ovl.buffer.all_gather' op result dim 0 has size 4; expected 8 (input size 2 gathered from 4 devices)}}
  ovl.buffer.all_gather %x into %y on @ring axes [0] dim 0 : memref<2x8xf32>, memref<4x8xf32>
  return
}

// -----

shard.grid @ring(shape = 4)
func.func @buffer_scatter_divisible(%x: memref<6x8xf32>, %y: memref<1x8xf32>) {
  // expected-error @+1 {{'ovl.buffer.reduce_scatter' op input dim 0 of size 6 is not divisible by the group size 4}}
  ovl.buffer.reduce_scatter %x into %y on @ring axes [0] dim 0 : memref<6x8xf32>, memref<1x8xf32>
  return
}

// -----

shard.grid @ring(shape = 4)
func.func @buffer_all_reduce_shape(%x: memref<2x8xf32>, %y: memref<8x2xf32>) {
  // expected-error @+1 {{'ovl.buffer.all_reduce' op output 'memref<8x2xf32>' must have the shape and element type of the input 'memref<2x8xf32>'}}
  ovl.buffer.all_reduce %x into %y on @ring axes [0] : memref<2x8xf32>, memref<8x2xf32>
  return
}

// -----

shard.grid @ring(shape = 4)
func.func @buffer_permute_pairs(%x: memref<2xf32>, %y: memref<2xf32>) {
  // expected-error @+1 {{'ovl.buffer.permute' op pairs cover 2 of the 4 devices of the group}}
  ovl.buffer.permute %x into %y on @ring axes [0] pairs [0 -> 1, 1 -> 0] : memref<2xf32>, memref<2xf32>
  return
}

// -----

shard.grid @ring(shape = 4)
func.func @buffer_start_axis(%x: memref<2xf32>, %y: memref<2xf32>) {
  // expected-error @+1 {{'ovl.buffer.permute_start' op grid axis 1 is out of range for grid @ring of rank 1}}
  %t = ovl.buffer.permute_start %x into %y on @ring axes [1] pairs [0 -> 0] : memref<2xf32>, memref<2xf32>
  ovl.buffer.permute_done %t keep(%x) into %y : memref<2xf32>, memref<2xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// User integers that once became hash keys or overflowed (issue 13)
//===----------------------------------------------------------------------===//

/// 32767 is a reserved key of a DenseSet<int16_t>: it used to assert.
shard.grid @torus(shape = 2x4)
func.func @axis_reserved_key(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{grid axis 32767 is listed twice; the axes must be distinct}}
  %0 = ovl.reduce_scatter %x on @torus axes [32767, 32767] dim 1 : tensor<2x8xf32> -> tensor<2x1xf32>
  return
}

// -----

/// 2^63 - 1 and 2^63 - 2 are reserved keys of a DenseSet<int64_t>.
shard.grid @ring(shape = 4)
func.func @permute_reserved_keys(%x: tensor<2xf32>) {
  // expected-error @+1 {{device 9223372036854775807 is the source of more than one pair}}
  %0 = ovl.collective_permute %x on @ring axes [0] pairs [9223372036854775807 -> 9223372036854775806, 9223372036854775807 -> 0] : tensor<2xf32>
  return
}

// -----

shard.grid @ring(shape = 4)
func.func @permute_reserved_key_out_of_range(%x: tensor<2xf32>) {
  // expected-error @+1 {{pair 9223372036854775806 -> 9223372036854775807 is out of range for a group of 4 devices}}
  %0 = ovl.collective_permute %x on @ring axes [0] pairs [9223372036854775806 -> 9223372036854775807] : tensor<2xf32>
  return
}

// -----

/// The gathered size overflowed int64 (UBSan).
shard.grid @ring(shape = 4)
func.func @gather_factor_overflow(%x: tensor<4611686018427387904xi8>) {
  // expected-error @+1 {{gathering dim 0 of size 4611686018427387904 from 4 devices gives more than 2^63 elements}}
  %0 = ovl.all_gather %x on @ring axes [0] dim 0 : tensor<4611686018427387904xi8> -> tensor<4xi8>
  return
}

// -----

/// So did the group size.
shard.grid @huge(shape = 4294967296x4294967296)
func.func @group_overflow(%x: tensor<2xf32>) {
  // expected-error @+1 {{the group along grid @huge's axes has more than 2^63 devices}}
  %0 = ovl.all_reduce %x on @huge axes [0, 1] : tensor<2xf32>
  return
}

// -----

/// An empty grid axis made a group of 0 devices, and the reduce_scatter
/// verifier divided by it (UBSan; found by the fuzzer). overlap-opt refuses
/// the grid itself first (ovl-verify-input); the op verifier's own message
/// is tested by OvlOpsTest.VerifierRefusesAGroupOnAnEmptyGridAxis.
// expected-error @+1 {{grid axis 0 has size 0: every axis of a grid holds a device}}
shard.grid @empty(shape = 0x4)
func.func @empty_axis(%x: tensor<8x16xf32>) {
  %0 = ovl.reduce_scatter %x on @empty axes [1, 0] dim 0 : tensor<8x16xf32> -> tensor<128x16xf32>
  return
}

// -----

/// A done in one branch only: on the other path the transfer is never
/// waited for (the verifier used to accept it).
shard.grid @ring(shape = 2)
func.func @done_in_one_branch(%x: tensor<4xf32>, %c: i1) -> tensor<4xf32> {
  %buf = bufferization.alloc_tensor() : tensor<4xf32>
  // expected-error @+1 {{token is used inside a region of 'scf.if'; consume it in the start's block, or carry it through that op's operands and results}}
  %p, %t = ovl.collective_permute_start %x into %buf on @ring axes [0] pairs [0 -> 1, 1 -> 0] : tensor<4xf32>
  %r = scf.if %c -> tensor<4xf32> {
    %d = ovl.collective_permute_done %t keep(%x) into %p : tensor<4xf32>
    scf.yield %d : tensor<4xf32>
  } else {
    scf.yield %x : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

/// The same for a token carried into a loop's body.
shard.grid @ring(shape = 2)
func.func @carried_done_in_one_branch(%x: tensor<4xf32>, %c: i1) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %buf = bufferization.alloc_tensor() : tensor<4xf32>
  %p, %t = ovl.collective_permute_start %x into %buf on @ring axes [0] pairs [0 -> 1, 1 -> 0] : tensor<4xf32>
  %r:2 = scf.for %i = %c0 to %c1 step %c1 iter_args(%q = %p, %u = %t) -> (tensor<4xf32>, !ovl.token) {
    %y = scf.if %c -> tensor<4xf32> {
      // expected-error @+1 {{token is defined in another block: a done must be in the block of its token, so that it runs once on every path}}
      %d = ovl.collective_permute_done %u keep(%x) into %q : tensor<4xf32>
      scf.yield %d : tensor<4xf32>
    } else {
      scf.yield %x : tensor<4xf32>
    }
    scf.yield %q, %u : tensor<4xf32>, !ovl.token
  }
  %e = ovl.collective_permute_done %r#1 keep(%x) into %r#0 : tensor<4xf32>
  return %e : tensor<4xf32>
}

// -----

func.func @barrier_of_nothing() {
  // expected-error @+1 {{'ovl.optimization_barrier' op needs at least one operand}}
  "ovl.optimization_barrier"() : () -> ()
  return
}

// -----

func.func @barrier_result_types(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{'ovl.optimization_barrier' op result #0 has type 'tensor<2x4xf32>', its operand 'tensor<2x8xf32>'}}
  %0 = "ovl.optimization_barrier"(%x) : (tensor<2x8xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @barrier_result_count(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{'ovl.optimization_barrier' op has 1 operands but 2 results; each operand has its result}}
  %0:2 = "ovl.optimization_barrier"(%x) : (tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>)
  return
}
