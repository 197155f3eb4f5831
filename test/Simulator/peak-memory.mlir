// RUN: split-file %s %t
// RUN: overlap-sim %t/chain.mlir --json | FileCheck %s --check-prefix=CHAIN
// RUN: overlap-sim %t/loop.mlir --json | FileCheck %s --check-prefix=LOOP
// RUN: overlap-sim %t/barrier.mlir --json | FileCheck %s --check-prefix=BARRIER
// RUN: overlap-sim %t/splat.mlir --json | FileCheck %s --check-prefix=SPLAT
// RUN: overlap-sim %t/prefetch.mlir --json | FileCheck %s --check-prefix=PREFETCH
// RUN: overlap-sim %t/late.mlir --json | FileCheck %s --check-prefix=LATE
// RUN: overlap-sim %t/prefetch.mlir --hardware %t/small.json 2>&1 | FileCheck %s --check-prefix=WARN
// RUN: overlap-sim %t/prefetch.mlir --hardware %t/small.json --json 2>/dev/null | FileCheck %s --check-prefix=NOFIT
// RUN: overlap-sim %t/late.mlir --hardware %t/small.json --json 2>&1 | FileCheck %s --check-prefix=FITS --implicit-check-not=warning
// RUN: overlap-sim %t/chain.mlir | FileCheck %s --check-prefix=TEXT

// overlap-sim reports one device's peak live bytes (the model of
// Analysis/PeakMemory.h) and the chip's HBM, and warns when the program
// does not fit. The figures are counted by hand in the comments.

// TEXT: peak memory 12.288 KB per device of 34.360 GB HBM
// On a chip of 40000 bytes, the prefetching program does not fit; the one
// that gathers late does:
// WARN: overlap-sim: warning: @prefetch needs 45072 bytes per device at its peak, more than the 40000 bytes of HBM of small-chip
// WARN: peak memory 45.072 KB per device of 40.000 KB HBM (does not fit)
// NOFIT: "peak_memory_bytes": 45072,
// NOFIT-NEXT: "hbm_capacity_bytes": 40000,
// NOFIT-NEXT: "fits_in_memory": false,
// FITS: "fits_in_memory": true,

//--- chain.mlir
// The argument (4096 B) is live throughout; %b lives until %c is made:
// 4096 + 4096 + 4096 at %c.
// CHAIN: "peak_memory_bytes": 12288,
// CHAIN-NEXT: "hbm_capacity_bytes": 34359738368,
// CHAIN-NEXT: "fits_in_memory": true,
shard.grid @ring(shape = 4)
func.func @chain(%a: tensor<1024xf32>) -> tensor<1024xf32> {
  %b = ovl.einsum "i,i->i" %a, %a : tensor<1024xf32>, tensor<1024xf32> -> tensor<1024xf32>
  %c = ovl.einsum "i,i->i" %b, %b : tensor<1024xf32>, tensor<1024xf32> -> tensor<1024xf32>
  return %c : tensor<1024xf32>
}

//--- barrier.mlir
// An optimization barrier's result is its operand's buffer: the chain's
// 12288, not 4096 more for %a_r.
// BARRIER: "peak_memory_bytes": 12288,
shard.grid @ring(shape = 4)
func.func @barrier(%a: tensor<1024xf32>) -> tensor<1024xf32> {
  %a_r = ovl.optimization_barrier %a : tensor<1024xf32>
  %b = ovl.einsum "i,i->i" %a_r, %a_r : tensor<1024xf32>, tensor<1024xf32> -> tensor<1024xf32>
  %c = ovl.einsum "i,i->i" %b, %a : tensor<1024xf32>, tensor<1024xf32> -> tensor<1024xf32>
  return %c : tensor<1024xf32>
}

//--- splat.mlir
// A splat constant is no buffer: the chain's 12288, not 4096 more for
// %zero, read first and last.
// SPLAT: "peak_memory_bytes": 12288,
shard.grid @ring(shape = 4)
func.func @splat(%a: tensor<1024xf32>) -> tensor<1024xf32> {
  %zero = arith.constant dense<0.0> : tensor<1024xf32>
  %b = arith.maximumf %a, %zero : tensor<1024xf32>
  %c = ovl.einsum "i,i->i" %b, %b : tensor<1024xf32>, tensor<1024xf32> -> tensor<1024xf32>
  %d = arith.maximumf %c, %zero : tensor<1024xf32>
  return %d : tensor<1024xf32>
}

//--- loop.mlir
// The accumulator (4096 B) is one buffer through the loop (init, iteration
// argument, yield, result); the body's product (4096 B) is new on each
// iteration; the argument (4096 B): 12288, not one buffer per iteration.
// LOOP: "peak_memory_bytes": 12288,
shard.grid @ring(shape = 4)
func.func @loop(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %init = tensor.empty() : tensor<1024xf32>
  %r = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %init) -> (tensor<1024xf32>) {
    %p = ovl.einsum "i,i->i" %x, %x : tensor<1024xf32>, tensor<1024xf32> -> tensor<1024xf32>
    %s = ovl.einsum "i,i->i" %p, %x acc %acc : tensor<1024xf32>, tensor<1024xf32> -> tensor<1024xf32>
    scf.yield %s : tensor<1024xf32>
  }
  return %r : tensor<1024xf32>
}

//--- prefetch.mlir
// A weight gathered early (a prefetch): its 16384-byte buffer is live while
// the 16384-byte %h is made and reduced. Arguments 4096 + 4096 + 16, buffer
// 16384, %h 16384, %s 4096: 45072 at %s.
// PREFETCH: "peak_memory_bytes": 45072,
shard.grid @ring(shape = 4)
func.func @prefetch(%x: tensor<1024xf32>, %w: tensor<1024xf32>, %v: tensor<4xf32>) -> tensor<1024xf32> {
  %buf = bufferization.alloc_tensor() : tensor<4096xf32>
  %p, %t = ovl.all_gather_start %w into %buf on @ring axes [0] dim 0 : tensor<1024xf32> -> tensor<4096xf32>
  %h = ovl.einsum "i,j->ij" %x, %v : tensor<1024xf32>, tensor<4xf32> -> tensor<1024x4xf32>
  %s = ovl.einsum "ij->i" %h : tensor<1024x4xf32> -> tensor<1024xf32>
  %g = ovl.collective_done %t keep(%w : tensor<1024xf32>) into %p : tensor<4096xf32>
  %slice = tensor.extract_slice %g[0] [1024] [1] : tensor<4096xf32> to tensor<1024xf32>
  %y = ovl.einsum "i,i->i" %slice, %s : tensor<1024xf32>, tensor<1024xf32> -> tensor<1024xf32>
  return %y : tensor<1024xf32>
}

//--- late.mlir
// The same program gathering when the weight is needed: %h (16384 B) has
// died at %s before the gathered buffer (16384 B) exists. Arguments 8208,
// %s 4096, the gathered buffer 16384, %y 4096: 32784 at %y.
// LATE: "peak_memory_bytes": 32784,
shard.grid @ring(shape = 4)
func.func @late(%x: tensor<1024xf32>, %w: tensor<1024xf32>, %v: tensor<4xf32>) -> tensor<1024xf32> {
  %h = ovl.einsum "i,j->ij" %x, %v : tensor<1024xf32>, tensor<4xf32> -> tensor<1024x4xf32>
  %s = ovl.einsum "ij->i" %h : tensor<1024x4xf32> -> tensor<1024xf32>
  %g = ovl.all_gather %w on @ring axes [0] dim 0 : tensor<1024xf32> -> tensor<4096xf32>
  %slice = tensor.extract_slice %g[0] [1024] [1] : tensor<4096xf32> to tensor<1024xf32>
  %y = ovl.einsum "i,i->i" %slice, %s : tensor<1024xf32>, tensor<1024xf32> -> tensor<1024xf32>
  return %y : tensor<1024xf32>
}

//--- small.json
{
  "name": "small-chip",
  "peakFlops": {"f32": 1e12, "bf16": 4e12, "f16": 2e12, "i8": 8e12},
  "hbmCapacity": 40000,
  "hbmBandwidth": 5e11,
  "linkBandwidth": 2.5e10,
  "linksPerChip": 4,
  "hopLatency": 1.5e-6,
  "dmaSlots": 16,
  "collectiveLaunchOverhead": 3e-6,
  "interconnect": "torus",
  "torusRank": 2,
  "wrapAroundUnit": 8
}

