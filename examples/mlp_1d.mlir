// The two-layer MLP of figure 2 of the paper, as the program one device of a
// 1-D ring of N = 4 devices runs (global sizes B = 16, F = 32, H = 64).
//
// Activations stay sharded along the batch ([B/N, F] and [B/N, H]); each
// weight is sharded too and an all_gather rebuilds it right before the
// einsum that needs it. The first gather is along a free dim of the weight
// (the paper's AllGather case 1), the second along the contracting dim
// (case 2).

shard.grid @ring(shape = 4)

func.func @mlp(%x: tensor<4x32xf32>,     // [B/N, F]
               %w1: tensor<32x16xf32>,   // [F, H/N]
               %w2: tensor<16x32xf32>)   // [H/N, F]
    -> tensor<4x32xf32> {                // [B/N, F]
  %w1_full = ovl.all_gather %w1 on @ring axes [0] dim 1
      : tensor<32x16xf32> -> tensor<32x64xf32>
  %h = ovl.einsum "bf,fh->bh" %x, %w1_full
      : tensor<4x32xf32>, tensor<32x64xf32> -> tensor<4x64xf32>
  %zero = arith.constant dense<0.0> : tensor<4x64xf32>
  %relu = arith.maximumf %h, %zero : tensor<4x64xf32>
  %w2_full = ovl.all_gather %w2 on @ring axes [0] dim 0
      : tensor<16x32xf32> -> tensor<64x32xf32>
  %y = ovl.einsum "bh,hf->bf" %relu, %w2_full
      : tensor<4x64xf32>, tensor<64x32xf32> -> tensor<4x32xf32>
  return %y : tensor<4x32xf32>
}
