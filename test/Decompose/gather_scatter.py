#!/usr/bin/env python3
"""Execution equivalence of the gather-scatter form.

Generates SPMD programs where an einsum reads an all_gather along one grid
axis (N devices) and its result is reduce-scattered along another (M
devices) on the gathered letter, for (M, N) in {(2, 2), (2, 4), (3, 6),
(4, 4), (2, 8)}, the gathered operand on either side, a 3-D einsum with
bf16 operands and f32 partial sums, and the two axes in either order (and
beside a third axis). Each is rewritten with
`ovl-decompose-collective-einsum{gather-scatter=true gate=always}`, made
asynchronous, and also run through the whole `ovl-overlap-pipeline` with the
same options; the pair must be gone (no all_gather or reduce_scatter left),
the middle rounds a loop where there are two or more, and every output of every device must equal the original's on the same
random inputs (`overlap-run --reference`). The form is built both ways:
one way round the gather's ring (bidirectional=false) and split, each half
of every shard going its own way (bidirectional=split). Exits non-zero listing every
failure. --quick keeps one program per kind of case (the sanitizer build
runs it: it looks for memory errors, not for new combinations).

Usage: gather_scatter.py --overlap-opt BIN --overlap-run BIN --work DIR
                         [--jobs N] [--quick]
"""

import argparse
import concurrent.futures
import os
import subprocess
import sys

B, S, H, W = 3, 2, 5, 2  # W: columns of the gathered letter per device


def tensor(shape, dtype):
    return "tensor<%sx%s>" % ("x".join(map(str, shape)), dtype)


def program(m, n, layout, operand, three_d, later=False):
    """layout: 'ba' (scatter axis first), 'ab', or 'xba' (a third axis);
    later: the gathered tensor is also returned (the rounds assemble it)."""
    shape = {"ba": [m, n], "ab": [n, m], "xba": [2, m, n]}[layout]
    a_axis = {"ba": 1, "ab": 0, "xba": 2}[layout]
    b_axis = {"ba": 0, "ab": 1, "xba": 1}[layout]
    in_type, out_type = ("bf16", "f32") if three_d else ("f32", "f32")
    act = [B, S, H] if three_d else [B, H]
    act_letters = "bsh" if three_d else "bh"
    out_letters = "bsf" if three_d else "bf"
    if operand == "rhs":
        w_letters, w_local, gdim = "hf", [H, W], 1
        w_full = [H, W * n]
        equation = "%s,%s->%s" % (act_letters, w_letters, out_letters)
    else:
        w_letters, w_local, gdim = "fh", [W, H], 0
        w_full = [W * n, H]
        equation = "%s,%s->%s" % (w_letters, act_letters, out_letters)
    full = act[:-1] + [W * n]
    result = act[:-1] + [W * n // m]
    inputs = ("%w_full, %x" if operand == "lhs" else "%x, %w_full")
    types = ((tensor(w_full, in_type) + ", " + tensor(act, in_type))
             if operand == "lhs" else
             (tensor(act, in_type) + ", " + tensor(w_full, in_type)))
    results = tensor(result, out_type)
    returned = "%y : " + results
    if later:
        results = "(%s, %s)" % (results, tensor(w_full, in_type))
        returned = "%%y, %%w_full : %s, %s" % (tensor(result, out_type),
                                             tensor(w_full, in_type))
    return "\n".join([
        "shard.grid @grid(shape = %s)" % "x".join(map(str, shape)),
        "func.func @main(%%x: %s, %%w: %s) -> %s {"
        % (tensor(act, in_type), tensor(w_local, in_type), results),
        "  %%w_full = ovl.all_gather %%w on @grid axes [%d] dim %d : %s -> %s"
        % (a_axis, gdim, tensor(w_local, in_type), tensor(w_full, in_type)),
        "  %%p = ovl.einsum \"%s\" %s : %s -> %s"
        % (equation, inputs, types, tensor(full, out_type)),
        "  %%y = ovl.reduce_scatter %%p on @grid axes [%d] dim %d : %s -> %s"
        % (b_axis, len(full) - 1, tensor(full, out_type),
           tensor(result, out_type)),
        "  return " + returned,
        "}", ""])


def run(command):
    done = subprocess.run(command, capture_output=True, text=True)
    return done.returncode, done.stdout + done.stderr


def check(args, name, text, loop):
    original = os.path.join(args.work, name + ".mlir")
    with open(original, "w") as f:
        f.write(text)
    options = "gather-scatter=true gate=always"
    for form, passes in [
            ("one-way", ["--ovl-decompose-collective-einsum=" + options +
                         " bidirectional=false", "--ovl-async-collectives"]),
            ("split", ["--ovl-decompose-collective-einsum=" + options +
                       " bidirectional=split", "--ovl-async-collectives"]),
            ("pipeline", ["--ovl-overlap-pipeline=" + options])]:
        out = os.path.join(args.work, "%s.%s.mlir" % (name, form))
        code, log = run([args.overlap_opt, original] + passes + ["-o", out])
        if code != 0:
            return "%s %s: overlap-opt failed: %s" % (name, form, log)
        with open(out) as f:
            rewritten = f.read()
        if "all_gather" in rewritten or "reduce_scatter" in rewritten:
            return "%s %s: the pair was not rewritten" % (name, form)
        if ("scf.for" in rewritten) != loop:
            return "%s %s: expected %s loop" % (name, form,
                                                "a" if loop else "no")
        # -O 0, as matrix.py runs: the rewrite is checked, not LLVM.
        code, log = run([args.overlap_run, out, "-O", "0", "--reference",
                         original, "--seed", "7"])
        if code != 0 or "equal" not in log:
            return "%s %s: differs from the original: %s" % (name, form, log)
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--overlap-opt", required=True)
    parser.add_argument("--overlap-run", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--quick", action="store_true",
                        help="one program per kind of case")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    cases = []
    grids = ([(2, 4), (3, 6)] if args.quick else
             [(2, 2), (2, 4), (3, 6), (4, 4), (2, 8), (4, 8), (4, 16)])
    for m, n in grids:
        for operand in ("rhs", "lhs"):
            cases.append((m, n, "ba", operand, False, False))
    cases += [(2, 4, "ab", "rhs", False, False),
              (2, 4, "xba", "lhs", False, False),
              (2, 4, "ba", "rhs", True, False),
              (3, 3, "ab", "lhs", True, False),
              (2, 4, "ba", "rhs", False, True),
              (4, 8, "ab", "lhs", True, True)]
    if args.quick:
        cases = [case for case in cases if case[:2] in grids]

    def one(case):
        m, n, layout, operand, three_d, later = case
        name = "m%d_n%d_%s_%s%s%s" % (m, n, layout, operand,
                                      "_3d" if three_d else "",
                                      "_later" if later else "")
        g = n // m
        # Rounds G..N-G but the last round become a loop when two or more.
        loop = min(n - g + 1, n - 1) - g >= 2
        return name, check(args, name,
                           program(m, n, layout, operand, three_d, later), loop)

    failures = []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for name, failure in pool.map(one, cases):
            print("%s: %s" % (name, "FAIL" if failure else "equal"), flush=True)
            if failure:
                failures.append(failure)
    for failure in failures:
        print("FAIL " + failure)
    print("gather-scatter: %d of %d programs equal to the original"
          % (len(cases) - len(failures), len(cases)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
