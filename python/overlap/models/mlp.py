"""Per-device programs of the paper's figure 2 and figure 3 MLPs at any size.

  python3 -m overlap.models.mlp 1d --devices N --batch B --model F
                                   --hidden H [--out FILE]
  python3 -m overlap.models.mlp 2d --mesh MxN --batch B --model F
                                   --hidden H [--out FILE]

(bench/schedule/mlp.py runs the same command line.)

Global sizes B (tokens), F (d_model), H (d_ff). bf16 weights and
activations, einsums accumulate in f32, the ReLU output is rounded back to
bf16 for the second einsum (as a bf16 model would). The shardings are those
of examples/mlp_1d.mlir (figure 2: batch sharded, each weight gathered
before its einsum) and examples/mlp_2d.mlir (figure 3: activation gathered
along x, weights along y, the output reduce-scattered along x).
"""

import argparse
import sys

from . import write_program


def divide(a, b, what):
    if a % b:
        sys.exit("overlap.models.mlp: %s = %d is not divisible by %d"
                 % (what, a, b))
    return a // b


def mlp_1d(n, b, f, h):
    bl, hl = divide(b, n, "batch"), divide(h, n, "hidden")
    return f"""// Figure 2 MLP, one device of a ring of {n}: B={b}, F={f}, H={h}.
shard.grid @ring(shape = {n})

func.func @mlp(%x: tensor<{bl}x{f}xbf16>, %w1: tensor<{f}x{hl}xbf16>,
               %w2: tensor<{hl}x{f}xbf16>) -> tensor<{bl}x{f}xf32> {{
  %w1_full = ovl.all_gather %w1 on @ring axes [0] dim 1
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
  return %y : tensor<{bl}x{f}xf32>
}}
"""


def mlp_2d(m, n, b, f, h):
    bl = divide(b, n, "batch")
    fm, fn, hm = divide(f, m, "model/x"), divide(f, n, "model/y"), \
        divide(h, m, "hidden/x")
    return f"""// Figure 3 MLP, one device of a {m}x{n} grid: B={b}, F={f}, H={h}.
shard.grid @grid(shape = {m}x{n})

func.func @mlp(%x: tensor<{bl}x{fm}xbf16>, %w1: tensor<{fn}x{hm}xbf16>,
               %w2: tensor<{hm}x{fn}xbf16>) -> tensor<{bl}x{fm}xf32> {{
  %x_full = ovl.all_gather %x on @grid axes [0] dim 1
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
  return %y : tensor<{bl}x{fm}xf32>
}}
"""


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("strategy", choices=["1d", "2d"])
    parser.add_argument("--devices", type=int, default=8)
    parser.add_argument("--mesh", default="4x8", help="MxN for 2d")
    parser.add_argument("--batch", type=int, required=True)
    parser.add_argument("--model", type=int, required=True)
    parser.add_argument("--hidden", type=int, required=True)
    parser.add_argument("--out")
    args = parser.parse_args(argv)
    if args.strategy == "1d":
        text = mlp_1d(args.devices, args.batch, args.model, args.hidden)
    else:
        m, n = (int(v) for v in args.mesh.split("x"))
        text = mlp_2d(m, n, args.batch, args.model, args.hidden)
    write_program(text, args.out)


if __name__ == "__main__":
    main()
