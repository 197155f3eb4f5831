"""Per-device programs of the paper's figure 2 and figure 3 MLPs at any size.

  python3 -m overlap.models.mlp 1d --devices N --batch B --model F
                                   --hidden H [--step STEP] [--out FILE]
  python3 -m overlap.models.mlp 2d --mesh MxN --batch B --model F
                                   --hidden H [--step STEP] [--out FILE]

(bench/schedule/mlp.py runs the same command line.)

Global sizes B (tokens), F (d_model), H (d_ff). bf16 weights and
activations, einsums accumulate in f32, the ReLU output is rounded back to
bf16 for the second einsum (as a bf16 model would). The shardings are those
of examples/mlp_1d.mlir (figure 2: batch sharded, each weight gathered
before its einsum) and examples/mlp_2d.mlir (figure 3: activation gathered
along x, weights along y, the output reduce-scattered along x).

--step forward (the default) writes the forward program, @mlp(x, w1, w2)
-> y. --step train (mlp_1d_train, mlp_2d_train) writes one training step
without its optimizer, @mlp_train(x, w1, w2, t) -> (loss, dx, dw1, dw2):

- the forward exactly as @mlp computes it (the same collectives, the same
  bf16 roundings);
- the loss L = 0.5 * sum over every global element of (y - t)^2, t the
  target sharded like y (f32): each device sums its own elements in f32 and
  an ovl.all_reduce over every grid axis gives each device the global L,
  a tensor<f32>;
- the backward pass as einsums: dy = y - t, dW2 = act^T dy, dAct = dy W2^T,
  dH = dAct where h > 0 (else 0; the ReLU's backward), dW1 = x^T dH,
  dX = dH W1^T. It reuses the forward's gathered weights (and, in 2d, the
  gathered x) rather than gathering them again. dAct comes before dW2 so
  that the two einsums of 2d's gathered dy are adjacent (nothing uses the
  first's result before the second), which lets
  ovl-decompose-collective-einsum feed both from one loop. Partial sums
  over a sharded contraction are reduce-scattered so that each device
  returns dx, dw1 and dw2 (f32) shaped and sharded exactly like its x, w1
  and w2:
  1d: the batch is sharded, so dW1 and dW2 are reduce-scattered over the
      ring (along h, the weights' sharded dim); dX needs no collective.
  2d: dy is all-gathered along x (the backward of y's reduce-scatter);
      dW1 and dW2 sum over the batch, sharded along y, and are
      reduce-scattered along y (along f); dX sums over h, sharded along x,
      and is reduce-scattered along x (along f), as y is.
- bf16 as a bf16 model would: every einsum reads bf16 operands and
  accumulates in f32, so dy and dH are rounded to bf16 before they feed
  einsums (dy after the loss, which reads it in f32; dH after the mask).
  The gradients returned are the einsums' f32 results.

There is no optimizer update: the weights are not changed, the gradients
are returned.
"""

import argparse
import sys

from . import positive_int, write_program


def divide(a, b, what):
    if a % b:
        sys.exit("overlap.models.mlp: %s = %d is not divisible by %d"
                 % (what, a, b))
    return a // b


def _forward_1d(bl, f, h, hl):
    return f"""  %w1_full = ovl.all_gather %w1 on @ring axes [0] dim 1
      : tensor<{f}x{hl}xbf16> -> tensor<{f}x{h}xbf16>
  %h = ovl.einsum "bf,fh->bh" %x, %w1_full
      : tensor<{bl}x{f}xbf16>, tensor<{f}x{h}xbf16> -> tensor<{bl}x{h}xf32>
  %zero = arith.constant dense<0.0> : tensor<{bl}x{h}xf32>
  %relu = arith.maximumf %h, %zero : tensor<{bl}x{h}xf32>
  %act = arith.truncf %relu : tensor<{bl}x{h}xf32> to tensor<{bl}x{h}xbf16>
  %w2_full = ovl.all_gather %w2 on @ring axes [0] dim 0
      : tensor<{hl}x{f}xbf16> -> tensor<{h}x{f}xbf16>
  %y = ovl.einsum "bh,hf->bf" %act, %w2_full
      : tensor<{bl}x{h}xbf16>, tensor<{h}x{f}xbf16> -> tensor<{bl}x{f}xf32>
"""


def mlp_1d(n, b, f, h):
    bl, hl = divide(b, n, "batch"), divide(h, n, "hidden")
    return f"""// Figure 2 MLP, one device of a ring of {n}: B={b}, F={f}, H={h}.
shard.grid @ring(shape = {n})

func.func @mlp(%x: tensor<{bl}x{f}xbf16>, %w1: tensor<{f}x{hl}xbf16>,
               %w2: tensor<{hl}x{f}xbf16>) -> tensor<{bl}x{f}xf32> {{
{_forward_1d(bl, f, h, hl)}  return %y : tensor<{bl}x{f}xf32>
}}
"""


def _loss(y_shape, grid, axes):
    """dy = y - t and the global loss 0.5 * sum(dy^2), all-reduced over
    `axes` of `grid`."""
    t = f"tensor<{y_shape}xf32>"
    return f"""  // loss: L = 0.5 * sum (y - t)^2, local sum in f32, all-reduced
  %dy = arith.subf %y, %t : {t}
  %fzero = arith.constant 0.0 : f32
  %sum_init = tensor.empty() : tensor<f32>
  %sum_zero = linalg.fill ins(%fzero : f32) outs(%sum_init : tensor<f32>)
      -> tensor<f32>
  %loss_part = linalg.generic {{indexing_maps = [affine_map<(b, f) -> (b, f)>,
                                               affine_map<(b, f) -> ()>],
                               iterator_types = ["reduction", "reduction"]}}
      ins(%dy : {t}) outs(%sum_zero : tensor<f32>) {{
    ^bb0(%d: f32, %acc: f32):
      %half = arith.constant 0.5 : f32
      %sq = arith.mulf %d, %d : f32
      %hsq = arith.mulf %sq, %half : f32
      %s = arith.addf %acc, %hsq : f32
      linalg.yield %s : f32
  }} -> tensor<f32>
  %loss = ovl.all_reduce %loss_part on @{grid} axes [{axes}] : tensor<f32>
"""


def _relu_backward(shape):
    """dH = dAct where the pre-activation h > 0, else 0, rounded to bf16."""
    f32, i1 = f"tensor<{shape}xf32>", f"tensor<{shape}xi1>"
    return f"""  %pos = arith.cmpf ogt, %h, %zero : {f32}
  %dh = arith.select %pos, %dact, %zero : {i1}, {f32}
  %dh_bf = arith.truncf %dh : {f32} to tensor<{shape}xbf16>
"""


def mlp_1d_train(n, b, f, h):
    """The training step (forward, loss, backward; no optimizer update) of
    mlp_1d: @mlp_train(x, w1, w2, t) -> (loss, dx, dw1, dw2)."""
    bl, hl = divide(b, n, "batch"), divide(h, n, "hidden")
    return f"""// Figure 2 MLP training step (forward, loss, backward; no optimizer
// update), one device of a ring of {n}: B={b}, F={f}, H={h}.
shard.grid @ring(shape = {n})

func.func @mlp_train(%x: tensor<{bl}x{f}xbf16>, %w1: tensor<{f}x{hl}xbf16>,
                     %w2: tensor<{hl}x{f}xbf16>, %t: tensor<{bl}x{f}xf32>)
    -> (tensor<f32>, tensor<{bl}x{f}xf32>, tensor<{f}x{hl}xf32>,
        tensor<{hl}x{f}xf32>) {{
  // forward, as @mlp
{_forward_1d(bl, f, h, hl)}{_loss(f"{bl}x{f}", "ring", "0")}  // backward: the batch is sharded, so the weight gradients are partial
  // sums over it, reduce-scattered back to the weights' sharding
  %dy_bf = arith.truncf %dy : tensor<{bl}x{f}xf32> to tensor<{bl}x{f}xbf16>
  %dact = ovl.einsum "bf,hf->bh" %dy_bf, %w2_full
      : tensor<{bl}x{f}xbf16>, tensor<{h}x{f}xbf16> -> tensor<{bl}x{h}xf32>
  %dw2_part = ovl.einsum "bh,bf->hf" %act, %dy_bf
      : tensor<{bl}x{h}xbf16>, tensor<{bl}x{f}xbf16> -> tensor<{h}x{f}xf32>
  %dw2 = ovl.reduce_scatter %dw2_part on @ring axes [0] dim 0
      : tensor<{h}x{f}xf32> -> tensor<{hl}x{f}xf32>
{_relu_backward(f"{bl}x{h}")}  %dw1_part = ovl.einsum "bf,bh->fh" %x, %dh_bf
      : tensor<{bl}x{f}xbf16>, tensor<{bl}x{h}xbf16> -> tensor<{f}x{h}xf32>
  %dw1 = ovl.reduce_scatter %dw1_part on @ring axes [0] dim 1
      : tensor<{f}x{h}xf32> -> tensor<{f}x{hl}xf32>
  %dx = ovl.einsum "bh,fh->bf" %dh_bf, %w1_full
      : tensor<{bl}x{h}xbf16>, tensor<{f}x{h}xbf16> -> tensor<{bl}x{f}xf32>
  return %loss, %dx, %dw1, %dw2 : tensor<f32>, tensor<{bl}x{f}xf32>,
      tensor<{f}x{hl}xf32>, tensor<{hl}x{f}xf32>
}}
"""


def _sizes_2d(m, n, b, f, h):
    bl = divide(b, n, "batch")
    fm, fn, hm = divide(f, m, "model/x"), divide(f, n, "model/y"), \
        divide(h, m, "hidden/x")
    return bl, fm, fn, hm


def _forward_2d(bl, f, fm, fn, hm):
    return f"""  %x_full = ovl.all_gather %x on @grid axes [0] dim 1
      : tensor<{bl}x{fm}xbf16> -> tensor<{bl}x{f}xbf16>
  %w1_full = ovl.all_gather %w1 on @grid axes [1] dim 0
      : tensor<{fn}x{hm}xbf16> -> tensor<{f}x{hm}xbf16>
  %h = ovl.einsum "bf,fh->bh" %x_full, %w1_full
      : tensor<{bl}x{f}xbf16>, tensor<{f}x{hm}xbf16> -> tensor<{bl}x{hm}xf32>
  %zero = arith.constant dense<0.0> : tensor<{bl}x{hm}xf32>
  %relu = arith.maximumf %h, %zero : tensor<{bl}x{hm}xf32>
  %act = arith.truncf %relu : tensor<{bl}x{hm}xf32> to tensor<{bl}x{hm}xbf16>
  %w2_full = ovl.all_gather %w2 on @grid axes [1] dim 1
      : tensor<{hm}x{fn}xbf16> -> tensor<{hm}x{f}xbf16>
  %partial = ovl.einsum "bh,hf->bf" %act, %w2_full
      : tensor<{bl}x{hm}xbf16>, tensor<{hm}x{f}xbf16> -> tensor<{bl}x{f}xf32>
  %y = ovl.reduce_scatter %partial on @grid axes [0] dim 1
      : tensor<{bl}x{f}xf32> -> tensor<{bl}x{fm}xf32>
"""


def mlp_2d(m, n, b, f, h):
    bl, fm, fn, hm = _sizes_2d(m, n, b, f, h)
    return f"""// Figure 3 MLP, one device of a {m}x{n} grid: B={b}, F={f}, H={h}.
shard.grid @grid(shape = {m}x{n})

func.func @mlp(%x: tensor<{bl}x{fm}xbf16>, %w1: tensor<{fn}x{hm}xbf16>,
               %w2: tensor<{hm}x{fn}xbf16>) -> tensor<{bl}x{fm}xf32> {{
{_forward_2d(bl, f, fm, fn, hm)}  return %y : tensor<{bl}x{fm}xf32>
}}
"""


def mlp_2d_train(m, n, b, f, h):
    """The training step (forward, loss, backward; no optimizer update) of
    mlp_2d: @mlp_train(x, w1, w2, t) -> (loss, dx, dw1, dw2)."""
    bl, fm, fn, hm = _sizes_2d(m, n, b, f, h)
    return f"""// Figure 3 MLP training step (forward, loss, backward; no optimizer
// update), one device of a {m}x{n} grid: B={b}, F={f}, H={h}.
shard.grid @grid(shape = {m}x{n})

func.func @mlp_train(%x: tensor<{bl}x{fm}xbf16>, %w1: tensor<{fn}x{hm}xbf16>,
                     %w2: tensor<{hm}x{fn}xbf16>, %t: tensor<{bl}x{fm}xf32>)
    -> (tensor<f32>, tensor<{bl}x{fm}xf32>, tensor<{fn}x{hm}xf32>,
        tensor<{hm}x{fn}xf32>) {{
  // forward, as @mlp
{_forward_2d(bl, f, fm, fn, hm)}{_loss(f"{bl}x{fm}", "grid", "0, 1")}  // backward: dy gathered along x (the backward of y's reduce-scatter);
  // dW1, dW2 sum over the batch, sharded along y: reduce-scattered along y;
  // dX sums over h, sharded along x: reduce-scattered along x
  %dy_bf = arith.truncf %dy : tensor<{bl}x{fm}xf32> to tensor<{bl}x{fm}xbf16>
  %dy_full = ovl.all_gather %dy_bf on @grid axes [0] dim 1
      : tensor<{bl}x{fm}xbf16> -> tensor<{bl}x{f}xbf16>
  %dact = ovl.einsum "bf,hf->bh" %dy_full, %w2_full
      : tensor<{bl}x{f}xbf16>, tensor<{hm}x{f}xbf16> -> tensor<{bl}x{hm}xf32>
  %dw2_part = ovl.einsum "bh,bf->hf" %act, %dy_full
      : tensor<{bl}x{hm}xbf16>, tensor<{bl}x{f}xbf16> -> tensor<{hm}x{f}xf32>
  %dw2 = ovl.reduce_scatter %dw2_part on @grid axes [1] dim 1
      : tensor<{hm}x{f}xf32> -> tensor<{hm}x{fn}xf32>
{_relu_backward(f"{bl}x{hm}")}  %dw1_part = ovl.einsum "bf,bh->fh" %x_full, %dh_bf
      : tensor<{bl}x{f}xbf16>, tensor<{bl}x{hm}xbf16> -> tensor<{f}x{hm}xf32>
  %dw1 = ovl.reduce_scatter %dw1_part on @grid axes [1] dim 0
      : tensor<{f}x{hm}xf32> -> tensor<{fn}x{hm}xf32>
  %dx_part = ovl.einsum "bh,fh->bf" %dh_bf, %w1_full
      : tensor<{bl}x{hm}xbf16>, tensor<{f}x{hm}xbf16> -> tensor<{bl}x{f}xf32>
  %dx = ovl.reduce_scatter %dx_part on @grid axes [0] dim 1
      : tensor<{bl}x{f}xf32> -> tensor<{bl}x{fm}xf32>
  return %loss, %dx, %dw1, %dw2 : tensor<f32>, tensor<{bl}x{fm}xf32>,
      tensor<{fn}x{hm}xf32>, tensor<{hm}x{fn}xf32>
}}
"""


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("strategy", choices=["1d", "2d"])
    parser.add_argument("--devices", type=positive_int, default=8)
    parser.add_argument("--mesh", default="4x8", help="MxN for 2d")
    parser.add_argument("--batch", type=positive_int, required=True)
    parser.add_argument("--model", type=positive_int, required=True)
    parser.add_argument("--hidden", type=positive_int, required=True)
    parser.add_argument("--step", choices=["forward", "train"],
                        default="forward",
                        help="the forward program (@mlp, the default) or "
                        "a training step without optimizer (@mlp_train)")
    parser.add_argument("--out")
    args = parser.parse_args(argv)
    train = args.step == "train"
    if args.strategy == "1d":
        text = (mlp_1d_train if train else mlp_1d)(
            args.devices, args.batch, args.model, args.hidden)
    else:
        m, n = (int(v) for v in args.mesh.split("x"))
        text = (mlp_2d_train if train else mlp_2d)(
            m, n, args.batch, args.model, args.hidden)
    write_program(text, args.out)


if __name__ == "__main__":
    main()
