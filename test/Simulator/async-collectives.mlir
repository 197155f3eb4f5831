// RUN: overlap-sim %s --json | FileCheck %s --check-prefix=BLOCKING
// RUN: overlap-opt %s --pass-pipeline="builtin.module(func.func(ovl-async-collectives{kinds=all_gather}))" | overlap-sim - --json | FileCheck %s --check-prefix=ASYNC
// RUN: overlap-opt %s --pass-pipeline="builtin.module(func.func(ovl-async-collectives{kinds=all_gather}))" | overlap-sim - | FileCheck %s --check-prefix=LABEL

// A weight all_gather that does not feed the einsum beside it: blocking, the
// device waits for the whole gather, then computes (step = compute + comm,
// all of the gather exposed). Asynchronous, the gather's rounds move while
// the einsum computes, and the step is the lower bound max(compute, comm):
// the gather outlasts the einsum, so what is left of it is waited for at
// the done.

// BLOCKING: "step_time_s": [[STEP:.+]],
// BLOCKING: "comm_time_s": [[COMM:.+]],
// BLOCKING-NEXT: "exposed_comm_time_s": [[COMM]],

// ASYNC: "step_time_s": [[STEP:.+]],
// ASYNC: "lower_bound_s": [[STEP]],

// LABEL: ovl.collective_done @ {{[^ ]+}} 1 0.000 s {{[1-9][0-9.]*}} us

shard.grid @ring(shape = 4)
func.func @layer(%x: tensor<256x1024xf32>, %y: tensor<1024x1024xf32>, %w: tensor<64x1024xf32>) -> (tensor<256x1024xf32>, tensor<256x1024xf32>) {
  %g = ovl.all_gather %w on @ring axes [0] dim 0 : tensor<64x1024xf32> -> tensor<256x1024xf32>
  %n = ovl.einsum "bf,fh->bh" %x, %y : tensor<256x1024xf32>, tensor<1024x1024xf32> -> tensor<256x1024xf32>
  return %g, %n : tensor<256x1024xf32>, tensor<256x1024xf32>
}
