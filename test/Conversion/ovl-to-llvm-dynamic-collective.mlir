// RUN: not overlap-opt %s --ovl-to-llvm --mlir-print-ir-after-failure 2>&1 | FileCheck %s

// Class: a pipeline that fails halfway. One-Shot Bufferize refuses a
// collective of dynamic shape only after the passes before it rewrote the
// module (the einsum into linalg, its bf16 inputs widened), leaving IR no
// verifier accepts; ovl-to-llvm now refuses it first, the module as it was.

// CHECK: error: 'ovl.all_gather' op needs a static shape to bufferize, got 'tensor<?x8xbf16>'
// CHECK: IR Dump After OvlToLLVMPass Failed
// CHECK: ovl.einsum "bf,fh->bh"
// CHECK-NOT: linalg.generic

shard.grid @dyn(shape = ?x4)
shard.grid @ring(shape = 8)

func.func @mixed(%d: tensor<2x8xbf16>, %x: tensor<64x64xbf16>,
                 %w: tensor<64x256xbf16>)
    -> (tensor<?x8xbf16>, tensor<64x256xf32>) {
  %0 = ovl.all_gather %d on @dyn axes [0] dim 0
      : tensor<2x8xbf16> -> tensor<?x8xbf16>
  %h = ovl.einsum "bf,fh->bh" %x, %w
      : tensor<64x64xbf16>, tensor<64x256xbf16> -> tensor<64x256xf32>
  return %0, %h : tensor<?x8xbf16>, tensor<64x256xf32>
}
