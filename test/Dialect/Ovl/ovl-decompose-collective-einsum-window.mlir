// RUN: overlap-opt %s --pass-pipeline="builtin.module(func.func(ovl-decompose-collective-einsum{gate=cost async-collectives=false remarks=true}))" -o /dev/null 2>&1 | FileCheck %s

// The windows the gate prices, seen in its predictions. A gather whose
// tensor a later einsum also reads (a forward gather read again by the
// backward's weight gradient) is not a candidate of that einsum: the
// weight gradient's reduce_scatter is priced in a window around itself
// (its blocking time alone, 2.04 us), not one stretched back over the
// whole step to the gather (7.05 us: the gather's 5.04 us with it). And
// where compute is too small to cover a collective's latency (shapes this
// small), each side of a window stops at 48 ops instead of taking the
// whole function: the gather's window computes its einsum and 48 of the
// 60 additions after it (31.8 ns), not all of them and the weight
// gradient (40.5 ns).

// CHECK: remark: not decomposing all_gather along axis 1 (N=4): predicted 5.04 us blocking (compute 31.8 ns)
// CHECK: remark: not decomposing reduce_scatter along axis 0 (N=2): predicted 2.04 us blocking

shard.grid @grid(shape = 2x4)

func.func @step(%x: tensor<8x4xf32>, %w: tensor<16x8xf32>, %dy: tensor<8x8xf32>)
    -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %g = ovl.all_gather %x on @grid axes [1] dim 1 : tensor<8x4xf32> -> tensor<8x16xf32>
  %y = ovl.einsum "bf,fh->bh" %g, %w : tensor<8x16xf32>, tensor<16x8xf32> -> tensor<8x8xf32>
  %a0 = arith.addf %y, %dy : tensor<8x8xf32>
  %a1 = arith.addf %a0, %dy : tensor<8x8xf32>
  %a2 = arith.addf %a1, %dy : tensor<8x8xf32>
  %a3 = arith.addf %a2, %dy : tensor<8x8xf32>
  %a4 = arith.addf %a3, %dy : tensor<8x8xf32>
  %a5 = arith.addf %a4, %dy : tensor<8x8xf32>
  %a6 = arith.addf %a5, %dy : tensor<8x8xf32>
  %a7 = arith.addf %a6, %dy : tensor<8x8xf32>
  %a8 = arith.addf %a7, %dy : tensor<8x8xf32>
  %a9 = arith.addf %a8, %dy : tensor<8x8xf32>
  %a10 = arith.addf %a9, %dy : tensor<8x8xf32>
  %a11 = arith.addf %a10, %dy : tensor<8x8xf32>
  %a12 = arith.addf %a11, %dy : tensor<8x8xf32>
  %a13 = arith.addf %a12, %dy : tensor<8x8xf32>
  %a14 = arith.addf %a13, %dy : tensor<8x8xf32>
  %a15 = arith.addf %a14, %dy : tensor<8x8xf32>
  %a16 = arith.addf %a15, %dy : tensor<8x8xf32>
  %a17 = arith.addf %a16, %dy : tensor<8x8xf32>
  %a18 = arith.addf %a17, %dy : tensor<8x8xf32>
  %a19 = arith.addf %a18, %dy : tensor<8x8xf32>
  %a20 = arith.addf %a19, %dy : tensor<8x8xf32>
  %a21 = arith.addf %a20, %dy : tensor<8x8xf32>
  %a22 = arith.addf %a21, %dy : tensor<8x8xf32>
  %a23 = arith.addf %a22, %dy : tensor<8x8xf32>
  %a24 = arith.addf %a23, %dy : tensor<8x8xf32>
  %a25 = arith.addf %a24, %dy : tensor<8x8xf32>
  %a26 = arith.addf %a25, %dy : tensor<8x8xf32>
  %a27 = arith.addf %a26, %dy : tensor<8x8xf32>
  %a28 = arith.addf %a27, %dy : tensor<8x8xf32>
  %a29 = arith.addf %a28, %dy : tensor<8x8xf32>
  %a30 = arith.addf %a29, %dy : tensor<8x8xf32>
  %a31 = arith.addf %a30, %dy : tensor<8x8xf32>
  %a32 = arith.addf %a31, %dy : tensor<8x8xf32>
  %a33 = arith.addf %a32, %dy : tensor<8x8xf32>
  %a34 = arith.addf %a33, %dy : tensor<8x8xf32>
  %a35 = arith.addf %a34, %dy : tensor<8x8xf32>
  %a36 = arith.addf %a35, %dy : tensor<8x8xf32>
  %a37 = arith.addf %a36, %dy : tensor<8x8xf32>
  %a38 = arith.addf %a37, %dy : tensor<8x8xf32>
  %a39 = arith.addf %a38, %dy : tensor<8x8xf32>
  %a40 = arith.addf %a39, %dy : tensor<8x8xf32>
  %a41 = arith.addf %a40, %dy : tensor<8x8xf32>
  %a42 = arith.addf %a41, %dy : tensor<8x8xf32>
  %a43 = arith.addf %a42, %dy : tensor<8x8xf32>
  %a44 = arith.addf %a43, %dy : tensor<8x8xf32>
  %a45 = arith.addf %a44, %dy : tensor<8x8xf32>
  %a46 = arith.addf %a45, %dy : tensor<8x8xf32>
  %a47 = arith.addf %a46, %dy : tensor<8x8xf32>
  %a48 = arith.addf %a47, %dy : tensor<8x8xf32>
  %a49 = arith.addf %a48, %dy : tensor<8x8xf32>
  %a50 = arith.addf %a49, %dy : tensor<8x8xf32>
  %a51 = arith.addf %a50, %dy : tensor<8x8xf32>
  %a52 = arith.addf %a51, %dy : tensor<8x8xf32>
  %a53 = arith.addf %a52, %dy : tensor<8x8xf32>
  %a54 = arith.addf %a53, %dy : tensor<8x8xf32>
  %a55 = arith.addf %a54, %dy : tensor<8x8xf32>
  %a56 = arith.addf %a55, %dy : tensor<8x8xf32>
  %a57 = arith.addf %a56, %dy : tensor<8x8xf32>
  %a58 = arith.addf %a57, %dy : tensor<8x8xf32>
  %a59 = arith.addf %a58, %dy : tensor<8x8xf32>
  %dw = ovl.einsum "bf,bh->fh" %g, %a59 : tensor<8x16xf32>, tensor<8x8xf32> -> tensor<16x8xf32>
  %r = ovl.reduce_scatter %dw on @grid axes [0] dim 0 : tensor<16x8xf32> -> tensor<8x8xf32>
  return %y, %r : tensor<8x8xf32>, tensor<8x8xf32>
}
