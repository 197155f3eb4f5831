// RUN: overlap-opt %s --pass-pipeline="builtin.module(func.func(ovl-decompose-collective-einsum{unroll=auto bidirectional=auto remarks=true}))" 2>&1 | FileCheck %s
// RUN: overlap-opt %s --pass-pipeline="builtin.module(func.func(ovl-decompose-collective-einsum{unroll=2 bidirectional=auto remarks=true}))" -o /dev/null 2>&1 | FileCheck %s --check-prefix=FORCED
// RUN: overlap-opt %s --pass-pipeline="builtin.module(func.func(ovl-decompose-collective-einsum{remarks=true}))" 2>&1 | FileCheck %s
// RUN: overlap-opt %s --ovl-overlap-pipeline="remarks=true" 2>&1 | FileCheck %s --check-prefix=PIPELINE

// unroll=auto bidirectional=auto: the gate prices the four loops of each
// candidate and builds the fastest. The figure 2 MLP on a ring of 8: alone
// (its partner asynchronous) the first gather's fastest loop goes both ways
// round; priced again once the second gather is a loop too, the simplest
// loop (unroll 1, one way) is as fast as any and is built, for both.

// CHECK: remark: decomposing all_gather along axis 0 (N=8) into a ring loop (case 1, gathered dim free (rhs), unroll 1, unidirectional): predicted {{.*}} decomposed {{.*}} (unroll 1, unidirectional; {{.*}} (unroll 1, bidirectional; {{.*}} (unroll 2, unidirectional; {{.*}} (unroll 2, bidirectional; {{.*}}; its loops beside the others: {{.*}} decomposed 36.0 ms (unroll 1, unidirectional;
// CHECK: remark: decomposing all_gather along axis 0 (N=8) into a ring loop (case 2, gathered dim contracting (rhs), unroll 1, unidirectional): {{.*}}; beside the loops chosen: {{.*}}; its loops beside the others: {{.*}} decomposed 36.0 ms (unroll 1, unidirectional;
// Auto is the default, of the pass and of the pipeline.
// PIPELINE: remark: decomposing all_gather along axis 0 (N=8) into a ring loop {{.*}} decomposed {{.*}} (unroll 1, unidirectional; {{.*}} (unroll 1, bidirectional; {{.*}} (unroll 2, unidirectional; {{.*}} (unroll 2, bidirectional;
// PIPELINE: remark: decomposing all_gather along axis 0 (N=8) into a ring loop
// PIPELINE-COUNT-2: scf.for

// Then the block's loops are priced together: as chosen, all forced to each
// variant, and the gate's decision made again with each variant only; here
// as chosen is as fast as any.
// CHECK: remark: loops priced together: 36.0 ms as chosen one by one, 36.0 ms (the loops chosen, all unroll 1, unidirectional), 36.0 ms (the gate's choice with unroll 1, unidirectional loops only), 39.3 ms (the loops chosen, all unroll 1, bidirectional), 39.3 ms (the gate's choice with unroll 1, bidirectional loops only), 36.0 ms (the loops chosen, all unroll 2, unidirectional), {{.*}}; built as chosen
// CHECK-LABEL: func.func @mlp
// CHECK-COUNT-2: scf.for
// CHECK-NOT: tensor.concat
// CHECK-NOT: ovl.all_gather

// A forced value still forces: with unroll=2 only the two unroll-2 loops
// are priced.
// FORCED: into a ring loop (case 1, gathered dim free (rhs), unroll 2, {{.*}}: predicted {{.*}} decomposed {{[^;]*}} (unroll 2, unidirectional; compute {{[^)]*}}), {{[^ ]+}} ms (unroll 2, bidirectional; compute {{[^)]*}}), gain
// FORCED-NOT: unroll 1,

shard.grid @ring(shape = 8)

func.func @mlp(%x: tensor<8192x8192xbf16>, %w1: tensor<8192x4096xbf16>,
               %w2: tensor<4096x8192xbf16>) -> tensor<8192x8192xf32> {
  %w1_full = ovl.all_gather %w1 on @ring axes [0] dim 1
      : tensor<8192x4096xbf16> -> tensor<8192x32768xbf16>
  %h = ovl.einsum "bf,fh->bh" %x, %w1_full
      : tensor<8192x8192xbf16>, tensor<8192x32768xbf16> -> tensor<8192x32768xf32>
  %zero = arith.constant dense<0.0> : tensor<8192x32768xf32>
  %relu = arith.maximumf %h, %zero : tensor<8192x32768xf32>
  %act = arith.truncf %relu : tensor<8192x32768xf32> to tensor<8192x32768xbf16>
  %w2_full = ovl.all_gather %w2 on @ring axes [0] dim 0
      : tensor<4096x8192xbf16> -> tensor<32768x8192xbf16>
  %y = ovl.einsum "bh,hf->bf" %act, %w2_full
      : tensor<8192x32768xbf16>, tensor<32768x8192xbf16> -> tensor<8192x8192xf32>
  return %y : tensor<8192x8192xf32>
}
