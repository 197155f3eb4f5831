// The two-layer MLP of figure 3 of the paper, as the program one device of a
// 2-D grid [M, N] = [2, 4] runs; axis 0 is the paper's x (size M), axis 1
// its y (size N). Global sizes B = 16, F = 32, H = 64.
//
// The batch stays sharded along y. Before each einsum the activation is
// gathered along x and the weight along y (two gathers feed the first
// einsum, the case where section 5.5 picks one to decompose). The second
// einsum leaves partial sums over x, which a sub-group reduce_scatter along
// x reduces while re-sharding the output exactly like the input.

shard.grid @grid(shape = 2x4)

func.func @mlp(%x: tensor<4x16xf32>,     // [B/N, F/M]
               %w1: tensor<8x32xf32>,    // [F/N, H/M]
               %w2: tensor<32x8xf32>)    // [H/M, F/N]
    -> tensor<4x16xf32> {                // [B/N, F/M]
  %x_full = ovl.all_gather %x on @grid axes [0] dim 1
      : tensor<4x16xf32> -> tensor<4x32xf32>
  %w1_full = ovl.all_gather %w1 on @grid axes [1] dim 0
      : tensor<8x32xf32> -> tensor<32x32xf32>
  %h = ovl.einsum "bf,fh->bh" %x_full, %w1_full
      : tensor<4x32xf32>, tensor<32x32xf32> -> tensor<4x32xf32>
  %zero = arith.constant dense<0.0> : tensor<4x32xf32>
  %relu = arith.maximumf %h, %zero : tensor<4x32xf32>
  %w2_full = ovl.all_gather %w2 on @grid axes [1] dim 1
      : tensor<32x8xf32> -> tensor<32x32xf32>
  %partial = ovl.einsum "bh,hf->bf" %relu, %w2_full
      : tensor<4x32xf32>, tensor<32x32xf32> -> tensor<4x32xf32>
  %y = ovl.reduce_scatter %partial on @grid axes [0] dim 1
      : tensor<4x32xf32> -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}
