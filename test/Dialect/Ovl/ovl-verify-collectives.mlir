// ovl-verify-collectives: every device issues the same collectives in the
// same order, every token is awaited exactly once on every path, and no
// in-flight buffer is touched before its done. Each case below is refused
// with a located error; the programs at the end pass unchanged.
//
// RUN: overlap-opt %s --split-input-file --verify-diagnostics --ovl-verify-collectives

shard.grid @ring(shape = 4)

func.func @gather_on_one_device(%x: tensor<2x8xf32>) {
  %c0 = arith.constant 0 : index
  // expected-note @below {{it depends on the device's position (ovl.partition_id) here}}
  %id = ovl.partition_id on @ring axes [0] : index
  %first = arith.cmpi eq, %id, %c0 : index
  // expected-error @below {{the branches of this 'scf.if' communicate differently (then: 'ovl.all_gather}}
  scf.if %first {
    %g = ovl.all_gather %x on @ring axes [0] dim 0 : tensor<2x8xf32> -> tensor<8x8xf32>
  }
  return
}

// -----

shard.grid @ring(shape = 4)

func.func @branch_on_data(%x: tensor<2x8xf32>, %flag: tensor<i1>) -> tensor<2x8xf32> {
  // expected-note @below {{it depends on data, read here, which differs between devices}}
  %f = tensor.extract %flag[] : tensor<i1>
  // expected-error @below {{the branches of this 'scf.if' communicate differently}}
  %r = scf.if %f -> tensor<2x8xf32> {
    %a = ovl.all_reduce %x on @ring axes [0] : tensor<2x8xf32>
    scf.yield %a : tensor<2x8xf32>
  } else {
    %b = ovl.all_reduce %x on @ring axes [0] reduce max : tensor<2x8xf32>
    scf.yield %b : tensor<2x8xf32>
  }
  return %r : tensor<2x8xf32>
}

// -----

shard.grid @ring(shape = 4)

func.func @trip_count_by_device(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-note @below {{ovl.partition_id}}
  %id = ovl.partition_id on @ring axes [0] : index
  // expected-error @below {{this 'scf.for' communicates and its trip count differs between devices}}
  %r = scf.for %i = %c0 to %id step %c1 iter_args(%v = %x) -> tensor<4xf32> {
    %n = ovl.collective_permute %v on @ring axes [0] pairs [0 -> 1, 1 -> 2, 2 -> 3, 3 -> 0] : tensor<4xf32>
    scf.yield %n : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

shard.grid @ring(shape = 4)

func.func @while_on_data(%x: tensor<4xf32>) -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  // expected-error @below {{this 'scf.while' communicates and how often it iterates differs between devices}}
  %r = scf.while (%v = %x) : (tensor<4xf32>) -> tensor<4xf32> {
    // expected-note @below {{it depends on data}}
    %e = tensor.extract %v[%c0] : tensor<4xf32>
    %more = arith.cmpf ogt, %e, %zero : f32
    scf.condition(%more) %v : tensor<4xf32>
  } do {
  ^bb0(%w: tensor<4xf32>):
    %s = ovl.all_reduce %w on @ring axes [0] : tensor<4xf32>
    scf.yield %s : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

shard.grid @ring(shape = 4)

func.func @cf_branch_by_device(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %c0 = arith.constant 0 : index
  // expected-note @below {{ovl.partition_id}}
  %id = ovl.partition_id on @ring axes [0] : index
  %first = arith.cmpi eq, %id, %c0 : index
  // expected-error @below {{this branch's condition differs between devices in a function that communicates}}
  cf.cond_br %first, ^reduce, ^skip
^reduce:
  %a = ovl.all_reduce %x on @ring axes [0] : tensor<2x8xf32>
  return %a : tensor<2x8xf32>
^skip:
  return %x : tensor<2x8xf32>
}

// -----

shard.grid @ring(shape = 4)

func.func private @rotate(%v: tensor<4xf32>, %times: index) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @below {{this 'scf.for' communicates and its trip count differs between devices}}
  %r = scf.for %i = %c0 to %times step %c1 iter_args(%w = %v) -> tensor<4xf32> {
    %n = ovl.collective_permute %w on @ring axes [0] pairs [0 -> 1, 1 -> 2, 2 -> 3, 3 -> 0] : tensor<4xf32>
    scf.yield %n : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

func.func @call_with_device_count(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-note @below {{ovl.partition_id}}
  %id = ovl.partition_id on @ring axes [0] : index
  %r = func.call @rotate(%x, %id) : (tensor<4xf32>, index) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

shard.grid @ring(shape = 4)

func.func private @reduce(%v: tensor<4xf32>) -> tensor<4xf32> {
  %r = ovl.all_reduce %v on @ring axes [0] : tensor<4xf32>
  return %r : tensor<4xf32>
}

func.func @call_on_some_devices(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c2 = arith.constant 2 : index
  // expected-note @below {{ovl.partition_id}}
  %id = ovl.partition_id on @ring axes [0] : index
  %low = arith.cmpi ult, %id, %c2 : index
  // expected-error @below {{(then: 'func.call}}
  %r = scf.if %low -> tensor<4xf32> {
    %a = func.call @reduce(%x) : (tensor<4xf32>) -> tensor<4xf32>
    scf.yield %a : tensor<4xf32>
  } else {
    scf.yield %x : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

shard.grid @ring(shape = 4)

func.func @carried_token_dropped(%a: tensor<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %buf = bufferization.alloc_tensor() : tensor<4xf32>
  %p0, %t0 = ovl.collective_permute_start %a into %buf on @ring axes [0] pairs [0 -> 1, 1 -> 2, 2 -> 3, 3 -> 0] : tensor<4xf32>
  // expected-error @below {{token #1 of 'scf.for' is never awaited}}
  %r:3 = scf.for %i = %c0 to %c4 step %c1 iter_args(%p = %p0, %t = %t0, %s = %a) -> (tensor<4xf32>, !ovl.token, tensor<4xf32>) {
    %d = ovl.collective_permute_done %t keep(%s) into %p : tensor<4xf32>
    %b = bufferization.alloc_tensor() : tensor<4xf32>
    %p1, %t1 = ovl.collective_permute_start %d into %b on @ring axes [0] pairs [0 -> 1, 1 -> 2, 2 -> 3, 3 -> 0] : tensor<4xf32>
    scf.yield %p1, %t1, %d : tensor<4xf32>, !ovl.token, tensor<4xf32>
  }
  return
}

// -----

shard.grid @ring(shape = 4)

func.func @carried_token_awaited_twice(%a: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %buf = bufferization.alloc_tensor() : tensor<4xf32>
  %p0, %t0 = ovl.collective_permute_start %a into %buf on @ring axes [0] pairs [0 -> 1, 1 -> 2, 2 -> 3, 3 -> 0] : tensor<4xf32>
  // expected-error @below {{token argument #2 of a block of 'scf.for' is awaited 2 times}}
  %r:3 = scf.for %i = %c0 to %c4 step %c1 iter_args(%p = %p0, %t = %t0, %s = %a) -> (tensor<4xf32>, !ovl.token, tensor<4xf32>) {
    // expected-note @below {{used here}}
    %d = ovl.collective_permute_done %t keep(%s) into %p : tensor<4xf32>
    // expected-note @below {{used here}}
    %e = ovl.collective_permute_done %t keep(%s) into %p : tensor<4xf32>
    %b = bufferization.alloc_tensor() : tensor<4xf32>
    %p1, %t1 = ovl.collective_permute_start %e into %b on @ring axes [0] pairs [0 -> 1, 1 -> 2, 2 -> 3, 3 -> 0] : tensor<4xf32>
    scf.yield %p1, %t1, %e : tensor<4xf32>, !ovl.token, tensor<4xf32>
  }
  %f = ovl.collective_permute_done %r#1 keep(%r#2) into %r#0 : tensor<4xf32>
  return %f : tensor<4xf32>
}

// -----

shard.grid @ring(shape = 4)

func.func @pending_read_early(%a: tensor<4xf32>) -> (f32, tensor<4xf32>) {
  %c0 = arith.constant 0 : index
  %buf = bufferization.alloc_tensor() : tensor<4xf32>
  // expected-note @below {{the transfer into it}}
  %p, %t = ovl.collective_permute_start %a into %buf on @ring axes [0] pairs [0 -> 1, 1 -> 2, 2 -> 3, 3 -> 0] : tensor<4xf32>
  // expected-error @below {{reads the receive buffer of an asynchronous permute before its done}}
  %early = tensor.extract %p[%c0] : tensor<4xf32>
  %d = ovl.collective_permute_done %t keep(%a) into %p : tensor<4xf32>
  return %early, %d : f32, tensor<4xf32>
}

// -----

shard.grid @ring(shape = 4)

func.func @buffer_receive_read_early(%in: memref<4xf32>, %out: memref<4xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  // expected-note @below {{the transfer}}
  %t = ovl.buffer.permute_start %in into %out on @ring axes [0] pairs [0 -> 1, 1 -> 2, 2 -> 3, 3 -> 0] : memref<4xf32>, memref<4xf32>
  // expected-error @below {{reads the receive buffer of an in-flight permute before its done}}
  %v = memref.load %out[%c0] : memref<4xf32>
  // expected-note @below {{its done}}
  ovl.buffer.permute_done %t keep(%in) into %out : memref<4xf32>, memref<4xf32>
  return %v : f32
}

// -----

shard.grid @ring(shape = 4)

func.func @buffer_send_overwritten(%in: memref<8xf32>, %out: memref<4xf32>, %v: f32) {
  %c0 = arith.constant 0 : index
  %half = memref.subview %in[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
  // expected-note @below {{the transfer}}
  %t = ovl.buffer.permute_start %half into %out on @ring axes [0] pairs [0 -> 1, 1 -> 2, 2 -> 3, 3 -> 0] : memref<4xf32, strided<[1]>>, memref<4xf32>
  // expected-error @below {{writes the send buffer of an in-flight permute before its done}}
  memref.store %v, %in[%c0] : memref<8xf32>
  // expected-note @below {{its done}}
  ovl.buffer.permute_done %t keep(%half) into %out : memref<4xf32, strided<[1]>>, memref<4xf32>
  return
}

// -----

// The send buffer the done keeps must be carried with the token: here the
// loop's start sends %e but the done keeps %a. The verifier sees only a
// start in the same block; canonicalize, inlining the one-trip loop, made
// the program one it refuses (found by the fuzzer).
shard.grid @ring(shape = 4)

func.func @keep_not_carried(%a: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %buf = bufferization.alloc_tensor() : tensor<4xf32>
  %p0, %t0 = ovl.collective_permute_start %a into %buf on @ring axes [0] pairs [0 -> 1, 1 -> 2, 2 -> 3, 3 -> 0] : tensor<4xf32>
  %r:2 = scf.for %i = %c0 to %c4 step %c1 iter_args(%p = %p0, %t = %t0) -> (tensor<4xf32>, !ovl.token) {
    // expected-error @below {{keep operand is not, on every path, the input of the start that produced the token}}
    %e = ovl.collective_permute_done %t keep(%a) into %p : tensor<4xf32>
    %b = bufferization.alloc_tensor() : tensor<4xf32>
    %p1, %t1 = ovl.collective_permute_start %e into %b on @ring axes [0] pairs [0 -> 1, 1 -> 2, 2 -> 3, 3 -> 0] : tensor<4xf32>
    scf.yield %p1, %t1 : tensor<4xf32>, !ovl.token
  }
  // expected-error @below {{keep operand is not, on every path}}
  %f = ovl.collective_permute_done %r#1 keep(%a) into %r#0 : tensor<4xf32>
  return %f : tensor<4xf32>
}

// -----

// The keep is carried beside the token and the pair each iteration yields
// is right, but the pair the loop starts with is not: the first iteration
// keeps %b while %a is sent, and so does the done after a loop of no
// iteration (%n = 0), which returns that pair. Both are refused, the done
// after the loop also on its own (its path through the loop's results
// checks the init values).
shard.grid @ring(shape = 4)

func.func @keep_wrong_before_zero_trips(%a: tensor<4xf32>, %b: tensor<4xf32>, %n: index) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %buf = bufferization.alloc_tensor() : tensor<4xf32>
  %p0, %t0 = ovl.collective_permute_start %a into %buf on @ring axes [0] pairs [0 -> 1, 1 -> 2, 2 -> 3, 3 -> 0] : tensor<4xf32>
  %r:3 = scf.for %i = %c0 to %n step %c1 iter_args(%p = %p0, %t = %t0, %k = %b) -> (tensor<4xf32>, !ovl.token, tensor<4xf32>) {
    // expected-error @below {{keep operand is not, on every path}}
    %e = ovl.collective_permute_done %t keep(%k) into %p : tensor<4xf32>
    %nb = bufferization.alloc_tensor() : tensor<4xf32>
    %p1, %t1 = ovl.collective_permute_start %e into %nb on @ring axes [0] pairs [0 -> 1, 1 -> 2, 2 -> 3, 3 -> 0] : tensor<4xf32>
    scf.yield %p1, %t1, %e : tensor<4xf32>, !ovl.token, tensor<4xf32>
  }
  // expected-error @below {{keep operand is not, on every path}}
  %f = ovl.collective_permute_done %r#1 keep(%r#2) into %r#0 : tensor<4xf32>
  return %f : tensor<4xf32>
}

// -----

shard.grid @ring(shape = 4)

func.func @pending_not_carried(%a: tensor<4xf32>, %q: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %buf = bufferization.alloc_tensor() : tensor<4xf32>
  %p0, %t0 = ovl.collective_permute_start %a into %buf on @ring axes [0] pairs [0 -> 1, 1 -> 2, 2 -> 3, 3 -> 0] : tensor<4xf32>
  %r:3 = scf.for %i = %c0 to %c4 step %c1 iter_args(%p = %q, %t = %t0, %s = %a) -> (tensor<4xf32>, !ovl.token, tensor<4xf32>) {
    // expected-error @below {{pending operand is not, on every path, the pending result of the start that produced the token}}
    %d = ovl.collective_permute_done %t keep(%s) into %p : tensor<4xf32>
    %b = bufferization.alloc_tensor() : tensor<4xf32>
    %p1, %t1 = ovl.collective_permute_start %d into %b on @ring axes [0] pairs [0 -> 1, 1 -> 2, 2 -> 3, 3 -> 0] : tensor<4xf32>
    scf.yield %p1, %t1, %d : tensor<4xf32>, !ovl.token, tensor<4xf32>
  }
  // expected-error @below {{pending operand is not, on every path}}
  %f = ovl.collective_permute_done %r#1 keep(%r#2) into %r#0 : tensor<4xf32>
  return %f : tensor<4xf32>
}

// -----

// What passes: control flow on the device's position with no
// communication under it, or branches that communicate alike (on different
// data); loops with the same trip count everywhere; the device's position
// used to pick data; tokens carried through a loop, awaited once.
shard.grid @ring(shape = 4)

func.func @fine(%x: tensor<8x8xf32>, %y: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %id = ovl.partition_id on @ring axes [0] : index
  %first = arith.cmpi eq, %id, %c0 : index
  %off = arith.muli %id, %c2 : index
  %slice = tensor.extract_slice %x[%off, 0] [2, 8] [1, 1] : tensor<8x8xf32> to tensor<2x8xf32>
  %scaled = scf.if %first -> tensor<8x8xf32> {
    %a = ovl.all_reduce %x on @ring axes [0] : tensor<8x8xf32>
    scf.yield %a : tensor<8x8xf32>
  } else {
    %b = ovl.all_reduce %y on @ring axes [0] : tensor<8x8xf32>
    scf.yield %b : tensor<8x8xf32>
  }
  %local = scf.if %first -> tensor<2x8xf32> {
    scf.yield %slice : tensor<2x8xf32>
  } else {
    %e = ovl.einsum "ij,jk->ik" %slice, %y : tensor<2x8xf32>, tensor<8x8xf32> -> tensor<2x8xf32>
    scf.yield %e : tensor<2x8xf32>
  }
  %g = ovl.all_gather %local on @ring axes [0] dim 0 : tensor<2x8xf32> -> tensor<8x8xf32>
  %buf = bufferization.alloc_tensor() : tensor<8x8xf32>
  %p0, %t0 = ovl.collective_permute_start %g into %buf on @ring axes [0] pairs [0 -> 1, 1 -> 2, 2 -> 3, 3 -> 0] : tensor<8x8xf32>
  %r:3 = scf.for %i = %c0 to %c3 step %c1 iter_args(%p = %p0, %t = %t0, %s = %g) -> (tensor<8x8xf32>, !ovl.token, tensor<8x8xf32>) {
    %d = ovl.collective_permute_done %t keep(%s) into %p : tensor<8x8xf32>
    %p1, %t1 = ovl.collective_permute_start %d into %s on @ring axes [0] pairs [0 -> 1, 1 -> 2, 2 -> 3, 3 -> 0] : tensor<8x8xf32>
    scf.yield %p1, %t1, %d : tensor<8x8xf32>, !ovl.token, tensor<8x8xf32>
  }
  %last = ovl.collective_permute_done %r#1 keep(%r#2) into %r#0 : tensor<8x8xf32>
  %sum = arith.addf %last, %scaled : tensor<8x8xf32>
  return %sum : tensor<8x8xf32>
}

// -----

// The asynchronous all_gather, reduce_scatter and all_reduce obey the same
// rules as permutes: the pending result is read only through the done, and
// in buffer form neither buffer is touched while the transfer is in flight.
shard.grid @ring(shape = 4)

func.func @gather_pending_read_early(%a: tensor<2xf32>) -> (f32, tensor<8xf32>) {
  %c0 = arith.constant 0 : index
  %buf = bufferization.alloc_tensor() : tensor<8xf32>
  // expected-note @below {{the transfer into it}}
  %p, %t = ovl.all_gather_start %a into %buf on @ring axes [0] dim 0 : tensor<2xf32> -> tensor<8xf32>
  // expected-error @below {{reads the receive buffer of an asynchronous collective before its done}}
  %early = tensor.extract %p[%c0] : tensor<8xf32>
  %d = ovl.collective_done %t keep(%a : tensor<2xf32>) into %p : tensor<8xf32>
  return %early, %d : f32, tensor<8xf32>
}

// -----

shard.grid @ring(shape = 4)

func.func @buffer_scatter_receive_read_early(%in: memref<8xf32>, %out: memref<2xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  // expected-note @below {{the transfer}}
  %t = ovl.buffer.reduce_scatter_start %in into %out on @ring axes [0] dim 0 : memref<8xf32>, memref<2xf32>
  // expected-error @below {{reads the receive buffer of an in-flight collective before its done}}
  %v = memref.load %out[%c0] : memref<2xf32>
  // expected-note @below {{its done}}
  ovl.buffer.collective_done %t keep(%in) into %out : memref<8xf32>, memref<2xf32>
  return %v : f32
}

// -----

shard.grid @ring(shape = 4)

func.func @buffer_reduce_send_overwritten(%in: memref<4xf32>, %out: memref<4xf32>, %v: f32) {
  %c0 = arith.constant 0 : index
  // expected-note @below {{the transfer}}
  %t = ovl.buffer.all_reduce_start %in into %out on @ring axes [0] : memref<4xf32>, memref<4xf32>
  // expected-error @below {{writes the send buffer of an in-flight collective before its done}}
  memref.store %v, %in[%c0] : memref<4xf32>
  // expected-note @below {{its done}}
  ovl.buffer.collective_done %t keep(%in) into %out : memref<4xf32>, memref<4xf32>
  return
}

// -----

shard.grid @ring(shape = 4)

func.func @gather_never_awaited(%a: tensor<2xf32>, %buf: tensor<8xf32>, %n: index) -> tensor<2xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %p, %t = ovl.all_gather_start %a into %buf on @ring axes [0] dim 0 : tensor<2xf32> -> tensor<8xf32>
  // expected-error @below {{token #1 of 'scf.for' is never awaited}}
  %lp, %lt = scf.for %i = %c0 to %n step %c1 iter_args(%ap = %p, %at = %t) -> (tensor<8xf32>, !ovl.token) {
    scf.yield %ap, %at : tensor<8xf32>, !ovl.token
  }
  return %a : tensor<2xf32>
}
