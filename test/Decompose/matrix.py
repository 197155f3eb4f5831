#!/usr/bin/env python3
"""Execution-equivalence matrix of ovl-decompose-collective-einsum.

Generates small SPMD programs for every combination of
  {AllGather case 1, 2, 3, Einsum-ReduceScatter} x {the operand holding the
  gathered/scattered dim: lhs, rhs} x {group size 2, 3, 4, 8} x {1-D grid,
  2-D grid decomposed along axis 0, along axis 1},
decomposes each with every option set {unroll 1, 2} x {uni-, bidirectional}
(with gate=always: the cost model would keep such tiny pairs blocking)
and makes the permutes asynchronous (ovl-async-collectives), checks that the
collective was rewritten, and runs the result against the
original program with `overlap-run --reference` (same random inputs, every
output of every device compared). A few bf16 programs and the paper's MLPs
(examples/) run too. Exits non-zero listing every failing combination.

Usage: matrix.py --overlap-opt BIN --overlap-run BIN --examples DIR --work DIR
       [--jobs N] [--quick]
"""

import argparse
import concurrent.futures
import itertools
import os
import subprocess
import sys

# Sizes: the decomposed (sharded) dim has 2 rows per device; the others are
# small primes so that a misplaced slice shows.
SHARD = 2
B, F, H = 3, 5, 7

VARIANTS = [
    {"unroll": 1, "bidirectional": "false"},
    {"unroll": 2, "bidirectional": "false"},
    {"unroll": 1, "bidirectional": "true"},
    {"unroll": 2, "bidirectional": "true"},
]


def tensor(shape, dtype):
    return "tensor<" + "x".join(str(s) for s in shape) + "x" + dtype + ">"


def grid_decl(n, layout):
    """The grid, the decomposed axis and the total device count."""
    if layout == "1d":
        return "shard.grid @g(shape = %d)" % n, 0
    if layout == "2d-axis0":
        return "shard.grid @g(shape = %dx2)" % n, 0
    return "shard.grid @g(shape = 2x%d)" % n, 1


def gather_program(case, operand, n, layout, dtype, acc_type):
    """An all_gather feeding an einsum, with the gathered letter of `case`
    in operand `operand`."""
    grid, axis = grid_decl(n, layout)
    full = SHARD * n
    # Equations and which dim of which operand is gathered.
    if case == "case1":  # free in the gathered operand
        eq = "bf,fh->bh"
        shapes = [[full, F], [F, H]] if operand == "lhs" else [[B, F], [F, full]]
        dim = 0 if operand == "lhs" else 1
    elif case == "case2":  # contracting
        eq = "bf,fh->bh"
        shapes = [[B, full], [full, H]]
        dim = 1 if operand == "lhs" else 0
    else:  # case3: batch
        eq = "bsf,bfh->bsh"
        shapes = [[full, B, F], [full, F, H]]
        dim = 0
    gathered = 0 if operand == "lhs" else 1
    shard_shape = list(shapes[gathered])
    shard_shape[dim] = SHARD
    if eq == "bf,fh->bh":
        out_shape = [shapes[0][0], shapes[1][1]]
    else:
        out_shape = [shapes[0][0], shapes[0][1], shapes[1][2]]
    args = []
    for i, shape in enumerate(shapes):
        args.append(tensor(shard_shape if i == gathered else shape, dtype))
    full_t = tensor(shapes[gathered], dtype)
    ins = ["%%a%d" % i for i in range(2)]
    ins[gathered] = "%full"
    lines = [
        grid,
        "func.func @main(%%a0: %s, %%a1: %s) -> %s {" % (args[0], args[1],
                                                        tensor(out_shape, acc_type)),
        "  %%full = ovl.all_gather %%a%d on @g axes [%d] dim %d : %s -> %s"
        % (gathered, axis, dim, args[gathered], full_t),
        "  %%y = ovl.einsum \"%s\" %s, %s : %s, %s -> %s"
        % (eq, ins[0], ins[1],
           full_t if gathered == 0 else args[0],
           full_t if gathered == 1 else args[1], tensor(out_shape, acc_type)),
        "  return %%y : %s" % tensor(out_shape, acc_type),
        "}",
    ]
    return "\n".join(lines) + "\n", "ovl.all_gather"


def scatter_program(operand, n, layout, dtype):
    """An einsum whose result is reduce-scattered along a dim whose letter
    is free in operand `operand`."""
    grid, axis = grid_decl(n, layout)
    full = SHARD * n
    if operand == "lhs":
        x, w, out, dim = [full, F], [F, H], [full, H], 0
    else:
        x, w, out, dim = [B, F], [F, full], [B, full], 1
    part = list(out)
    part[dim] = SHARD
    lines = [
        grid,
        "func.func @main(%%x: %s, %%w: %s) -> %s {" % (tensor(x, dtype),
                                                    tensor(w, dtype),
                                                    tensor(part, dtype)),
        "  %%y = ovl.einsum \"bf,fh->bh\" %%x, %%w : %s, %s -> %s"
        % (tensor(x, dtype), tensor(w, dtype), tensor(out, dtype)),
        "  %%r = ovl.reduce_scatter %%y on @g axes [%d] dim %d : %s -> %s"
        % (axis, dim, tensor(out, dtype), tensor(part, dtype)),
        "  return %%r : %s" % tensor(part, dtype),
        "}",
    ]
    return "\n".join(lines) + "\n", "ovl.reduce_scatter"


def run_one(job, args):
    name, source, collective, variant = job
    base = os.path.join(args.work, name)
    original = base + ".mlir"
    # gate=always: the programs are tiny, the cost model would keep them.
    options = "gate=always unroll=%d bidirectional=%s" % (
        variant["unroll"], variant["bidirectional"])
    decomposed = base + ".u%d.%s.mlir" % (variant["unroll"],
                                          "bidi" if variant["bidirectional"] == "true" else "uni")
    pipeline = ("builtin.module(func.func(ovl-decompose-collective-einsum{%s},"
                "ovl-async-collectives))" % options)
    opt = subprocess.run([args.overlap_opt, original, "--pass-pipeline=" + pipeline,
                          "-o", decomposed], capture_output=True, text=True)
    label = "%s [%s]" % (name, options)
    if opt.returncode != 0:
        return label, "overlap-opt failed:\n" + opt.stderr
    with open(decomposed) as f:
        text = f.read()
    if collective and collective + " " in text:
        return label, "the collective was not decomposed"
    if "ovl.collective_permute " in text:
        return label, "a blocking permute was left"
    run = subprocess.run([args.overlap_run, decomposed, "--reference", original,
                          "--seed", "5", "--timeout", "60"],
                         capture_output=True, text=True)
    if run.returncode != 0 or ": equal" not in run.stdout:
        return label, "not equal to the original:\n" + run.stdout + run.stderr
    return label, None


def build_jobs(args):
    jobs = []
    sizes = [2, 4] if args.quick else [2, 3, 4, 8]
    for case, operand, n, layout in itertools.product(
            ["case1", "case2", "case3", "rs"], ["lhs", "rhs"], sizes,
            ["1d", "2d-axis0", "2d-axis1"]):
        name = "%s_%s_n%d_%s" % (case, operand, n, layout)
        if case == "rs":
            source, collective = scatter_program(operand, n, layout, "f32")
        else:
            source, collective = gather_program(case, operand, n, layout, "f32", "f32")
        for variant in VARIANTS:
            jobs.append((name, source, collective, variant))
    # bf16 samples: bf16 products accumulated in f32, and a bf16 scatter.
    for case, operand in [("case1", "rhs"), ("case2", "lhs"), ("case3", "rhs")]:
        source, collective = gather_program(case, operand, 4, "1d", "bf16", "f32")
        for variant in VARIANTS:
            jobs.append(("%s_%s_bf16" % (case, operand), source, collective, variant))
    source, collective = scatter_program("rhs", 3, "1d", "bf16")
    for variant in VARIANTS:
        jobs.append(("rs_rhs_bf16", source, collective, variant))
    # The paper's MLPs end to end.
    for example in ["mlp_1d", "mlp_2d"]:
        with open(os.path.join(args.examples, example + ".mlir")) as f:
            source = f.read()
        for variant in VARIANTS:
            jobs.append((example, source, None, variant))
    return jobs


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--overlap-opt", required=True)
    parser.add_argument("--overlap-run", required=True)
    parser.add_argument("--examples", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--quick", action="store_true",
                        help="only group sizes 2 and 4")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    jobs = build_jobs(args)
    # Each program once, before the variants of it run in parallel.
    for name, source, _, _ in jobs:
        with open(os.path.join(args.work, name + ".mlir"), "w") as f:
            f.write(source)
    failures = []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for label, error in pool.map(lambda job: run_one(job, args), jobs):
            if error:
                failures.append((label, error))
    print("decomposition matrix: %d of %d combinations equal to the original"
          % (len(jobs) - len(failures), len(jobs)))
    for label, error in failures:
        print("FAIL %s: %s" % (label, error))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
