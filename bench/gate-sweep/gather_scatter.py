#!/usr/bin/python3
"""The gate's gather-scatter decisions against the simulator.

Takes the sweep's cases (gen.py) of an einsum with a gathered operand and a
reduce-scattered result on the same letter (figure 3's second einsum and
GPT's output projection, kind two-agrs) whose gather group is a multiple of
the scatter group, on every machine, size and placement gen.py sweeps, and
as many layer cases (layer_case: such a pair at GPT-like sizes on a grid
M x N, N = 4..16 devices gathering and M = 2 or 4 scattering, bf16 with
f32 partial sums, after an independent einsum of 0 to 4096 contraction,
on tpu-v4 and tpu-v5e), and runs each through `ovl-overlap-pipeline` (the defaults: unroll, bidirectional
and gather-scatter auto, collectives not decomposed asynchronous) three
ways, each simulated with overlap-sim on the same machine:

  auto      gate=cost: the gate chooses, the gather-scatter form among the
            reduce_scatter's variants
  without   gate=cost gather-scatter=false: the choice without that form
  forced    gate=always gather-scatter=true: the form built

A decision is wrong when auto simulates more than 1% slower than the
faster of without and forced (the form chosen where it loses, or passed
over where it wins). Prints how often the gate chose the form, the wrong
decisions with the commands that reproduce them, and how much the form
gains where it is chosen.

Usage: gather_scatter.py [--count N] [--seed S] [--jobs J] [--check]
  --count N  cases of each kind (default 48); --check: exit 1 on a wrong decision or a
             tool error
  OVERLAP_BIN: directory of overlap-opt and overlap-sim (default build/bin)
"""

import argparse
import concurrent.futures
import os
import random
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen  # noqa: E402
import run as sweep  # noqa: E402

VARIANTS = [("auto", "gate=cost"),
            ("without", "gate=cost gather-scatter=false"),
            ("forced", "gate=always gather-scatter=true")]


def qualifies(c):
    if c["kind"] != "two-agrs":
        return False
    gather, scatter = (cand["n"] for cand in c["candidates"])
    return gather % scatter == 0


def layer_case(seed, index):
    """A pair after independent work, at GPT-like sizes (see above)."""
    rng = random.Random("%s/layer/%d" % (seed, index))
    m = rng.choice([2, 4])
    n = rng.choice([x for x in (4, 8, 16) if x % m == 0 and m * x <= 64])
    b = rng.choice([1024, 2048, 4096])
    h = rng.choice([4096, 8192])
    f = rng.choice([8192, 16384])
    k = rng.choice([0, 1024, 4096])
    hw = rng.choice(["tpu-v4", "tpu-v5e"])
    topology = ("4x4x1" if m * n <= 16 else "4x4x4") if hw == "tpu-v4" \
        else ("4x4" if m * n <= 16 else "8x8")
    lines = ["shard.grid @grid(shape = %dx%d)" % (m, n)]
    args = ["%%x: tensor<%dx%dxbf16>" % (b, h),
            "%%w: tensor<%dx%dxbf16>" % (h, f // n)]
    out = "tensor<%dx%dxf32>" % (b, f // m)
    results, returned = [out], ["%y"]
    body = []
    if k:
        args += ["%%a: tensor<%dx%dxbf16>" % (b, k),
                 "%%c: tensor<%dx%dxbf16>" % (k, h)]
        body.append('  %%z = ovl.einsum "bk,kh->bh" %%a, %%c : '
                    'tensor<%dx%dxbf16>, tensor<%dx%dxbf16> -> '
                    'tensor<%dx%dxf32>' % (b, k, k, h, b, h))
        results.append("tensor<%dx%dxf32>" % (b, h))
        returned.append("%z")
    body += [
        "  %%wf = ovl.all_gather %%w on @grid axes [1] dim 1 : "
        "tensor<%dx%dxbf16> -> tensor<%dx%dxbf16>" % (h, f // n, h, f),
        '  %%p = ovl.einsum "bh,hf->bf" %%x, %%wf : tensor<%dx%dxbf16>, '
        "tensor<%dx%dxbf16> -> tensor<%dx%dxf32>" % (b, h, h, f, b, f),
        "  %%y = ovl.reduce_scatter %%p on @grid axes [0] dim 1 : "
        "tensor<%dx%dxf32> -> %s" % (b, f, out),
        "  return %s : %s" % (", ".join(returned), ", ".join(results))]
    lines.append("func.func @layer(%s) -> (%s) {" % (", ".join(args),
                                                     ", ".join(results)))
    lines += body + ["}", ""]
    return dict(id=10000 + index, hardware=hw, grid=[m, n],
                candidates=[dict(n=n), dict(n=m)], family="layer k=%d" % k,
                regime_target="b=%d h=%d f=%d" % (b, h, f), dtype="bf16",
                topology=[int(t) for t in topology.split("x")],
                assignment=None, program="\n".join(lines))


def evaluate(job):
    c, opt, sim, work, hw_dir = job
    hw_path, base, src = sweep.write_case(c, work, hw_dir)
    rec = dict(id=c["id"], hardware=c["hardware"], grid=c["grid"],
               groups=[cand["n"] for cand in c["candidates"]],
               family=c["family"], regime=c["regime_target"],
               dtype=c["dtype"], commands=[], sim={})
    try:
        for name, options in VARIANTS:
            out = "%s.%s.mlir" % (base, name)
            cmd = [opt, src, "-o", out, "--ovl-overlap-pipeline=%s %s" % (
                options, sweep.machine_options(c, hw_path))]
            sweep.run("pipeline-" + name, cmd, rec["commands"])
            if name == "auto":
                # Either collective alone leaves the other (blocking or a
                # start and a done); the form takes both.
                with open(out) as f:
                    text = f.read()
                rec["chosen"] = ("ovl.all_gather" not in text and
                                 "ovl.reduce_scatter" not in text)
            report = sweep.sim_report("sim-" + name, sweep.run(
                "sim-" + name, sweep.sim_cmd(sim, out, c, hw_path),
                rec["commands"]))
            rec["sim"][name] = report["step_time_s"]
    except sweep.ToolError as e:
        rec["error"] = "%s: %s" % (e.stage, e.stderr[-500:])
    return rec


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, default=48)
    parser.add_argument("--seed", default="1")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    opt, sim = sweep.tool("overlap-opt"), sweep.tool("overlap-sim")
    cases, index = [], 0
    while len(cases) < args.count and index < 100 * args.count:
        c = gen.case(args.seed, index)
        if qualifies(c):
            cases.append(c)
        index += 1
    cases += [layer_case(args.seed, i) for i in range(args.count)]
    with tempfile.TemporaryDirectory() as work:
        hw_dir = os.path.join(work, "hw")
        gen.write_hardware_files(hw_dir)
        jobs = [(c, opt, sim, work, hw_dir) for c in cases]
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            records = list(pool.map(evaluate, jobs))
    errors = [r for r in records if "error" in r]
    done = [r for r in records if "error" not in r]
    wrong, gains = [], []
    for r in done:
        s = r["sim"]
        best = min(s["without"], s["forced"])
        if s["auto"] > best * 1.01:
            wrong.append(r)
        if r["chosen"]:
            gains.append(s["without"] / s["auto"])
    print("gather-scatter sweep: %d cases (seed %s), %d tool errors"
          % (len(records), args.seed, len(errors)))
    def count(recs):
        return "%d (%d of the sweep's pairs, %d layer pairs)" % (
            len(recs), sum(r["id"] < 10000 for r in recs),
            sum(r["id"] >= 10000 for r in recs))
    print("chosen by the gate: %s" % count([r for r in done if r["chosen"]]))
    print("forced faster than without: %s" % count(
        [r for r in done if r["sim"]["forced"] < r["sim"]["without"]]))
    if gains:
        gains.sort()
        print("where chosen, without / auto: min %.3f, median %.3f, max %.3f"
              % (gains[0], gains[len(gains) // 2], gains[-1]))
    print("wrong decisions (auto > 1%% slower than the better of without "
          "and forced): %d" % len(wrong))
    for r in wrong + errors:
        what = r.get("error") or "auto %.4g s, without %.4g s, forced %.4g s" \
            % (r["sim"]["auto"], r["sim"]["without"], r["sim"]["forced"])
        print("  case %d (%s, grid %s, groups %s, %s %s): %s"
              % (r["id"], r["hardware"], r["grid"], r["groups"], r["family"],
                 r["regime"], what))
        for cmd in r["commands"][:1]:
            print("    " + cmd)
    if args.check and (wrong or errors):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
