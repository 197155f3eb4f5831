#!/usr/bin/python3
"""The paper's figures 14, 15 and 16 on the simulator, and the scheduler's
distance from the lower bound.

Programs: the figure 2 MLP (1-D strategy) and the figure 3 MLP (2-D
strategy) at sizes where compute exceeds the decomposed loops'
communication (overlap.models.mlp, python/overlap/models/mlp.py), their
training steps (fig2-train, fig3-train: forward, loss, backward), and
transformer layers of the GPT ladder (overlap.models.gpt, bf16 partial
sums). Each runs through

  baseline      the program as written (blocking collectives)
  async-only    ovl-overlap-pipeline{gate=never}: no decomposition, every
                collective asynchronous and scheduled behind independent
                work
  unscheduled   ovl-decompose-collective-einsum{unroll=1
                bidirectional=false} + ovl-async-collectives, no scheduler
                (the order the rewrite emits)
  blocking-kept ovl-overlap-pipeline{async-collectives=false unroll=1
                bidirectional=false}: the paper's gate, the collectives it
                keeps blocking
  auto          ovl-overlap-pipeline{unroll=auto bidirectional=auto} (the
                defaults): the gate prices the loops of each candidate
                (unroll 1|2 x bidirectional false|true|split) and builds
                the fastest
  pipeline      ovl-overlap-pipeline{unroll, bidirectional, algorithm}
                for unroll 1|2, bidirectional false|true|split,
                bottom-up|top-down
                (the collectives the gate keeps asynchronous where that is
                not slower, the default)

on TPU v4 (overlap-sim), with the cost-model gate deciding on the same
machine. Prints, per program and variant, the step time, the speedup over
the baseline, the exposed communication and step time / lower bound, where
the lower bound is max(compute, communication) of that same program; then
the three comparisons of the paper (figure 14: unroll off/on, figure 15:
bidirectional off/on, figure 16: bottom-up vs top-down) with the gains of
decomposition over async-only and of the asynchronous kept collectives
over blocking ones; also each program's peak memory per device and the
compile time of its variant (overlap-opt's run); and writes
results/table.md, results/results.json and results/figures.png.

Usage: run.py [--programs fig2,fig3,gpt-32B,gpt-512B] [--jobs N]
  OVERLAP_BIN: directory of overlap-opt and overlap-sim (default build/bin)
"""

import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "python"))
from overlap import Error as OverlapError, tool_path  # noqa: E402
from overlap.models import gpt, mlp  # noqa: E402

# name: (generator module, its command-line arguments, topology)
PROGRAMS = {
    "fig2": (mlp, ["1d", "--devices", "8", "--batch", "65536", "--model",
                   "8192", "--hidden", "32768"], "2x2x2"),
    "fig3": (mlp, ["2d", "--mesh", "4x16", "--batch", "131072", "--model",
                   "8192", "--hidden", "32768"], "4x4x4"),
    "fig2-train": (mlp, ["1d", "--devices", "8", "--batch", "65536",
                         "--model", "8192", "--hidden", "32768", "--step",
                         "train"], "2x2x2"),
    "fig3-train": (mlp, ["2d", "--mesh", "4x16", "--batch", "131072",
                         "--model", "8192", "--hidden", "32768", "--step",
                         "train"], "4x4x4"),
    "gpt-32B": (gpt, ["--config", "32B", "--partials", "bf16"], "4x4x4"),
    "gpt-512B": (gpt, ["--config", "512B", "--partials", "bf16"], "8x8x16"),
    "gpt-32B-x2": (gpt, ["--config", "32B", "--partials", "bf16",
                         "--layers", "2"], "4x4x4"),
    "gpt-32B-x4": (gpt, ["--config", "32B", "--partials", "bf16",
                         "--layers", "4"], "4x4x4"),
    "gpt-512B-x2": (gpt, ["--config", "512B", "--partials", "bf16",
                          "--layers", "2"], "8x8x16"),
    "gpt-512B-x4": (gpt, ["--config", "512B", "--partials", "bf16",
                          "--layers", "4"], "8x8x16"),
}
DIRECTIONS = ("false", "true", "split")
PIPELINES = [(u, b, a) for a in ("bottom-up", "top-down")
             for u in (1, 2) for b in DIRECTIONS]


def tool(name):
    try:
        return tool_path(name)
    except OverlapError as error:
        sys.exit("run.py: %s" % error)


def run(cmd):
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode:
        sys.exit("run.py: failed (%d): %s\n%s" % (res.returncode,
                                                 " ".join(cmd), res.stderr))
    return res.stdout


def variant_name(unroll, direction, algorithm):
    suffix = {"false": "", "true": "+bidi", "split": "+split"}[direction]
    return "unroll%d%s/%s" % (unroll, suffix, algorithm)


def simulate(job):
    name, variant, source, topology, opt, sim, work = job
    target = source
    begin = time.monotonic()
    machine = "hardware=tpu-v4 topology=%s" % topology
    if variant == "async-only":
        target = os.path.join(work, "%s.async.mlir" % name)
        run([opt, source, "-o", target,
             "--ovl-overlap-pipeline=%s gate=never" % machine])
    elif variant == "unscheduled":
        target = os.path.join(work, "%s.unscheduled.mlir" % name)
        run([opt, source, "-o", target, "--pass-pipeline=builtin.module("
             "func.func(ovl-decompose-collective-einsum{%s unroll=1 "
             "bidirectional=false},ovl-async-collectives))" % machine])
    elif variant == "auto":
        target = os.path.join(work, "%s.auto.mlir" % name)
        run([opt, source, "-o", target,
             "--ovl-overlap-pipeline=%s unroll=auto bidirectional=auto"
             % machine])
    elif variant == "blocking-kept":
        target = os.path.join(work, "%s.blocking-kept.mlir" % name)
        run([opt, source, "-o", target,
             "--ovl-overlap-pipeline=%s async-collectives=false unroll=1 "
             "bidirectional=false" % machine])
    elif variant != "baseline":
        unroll, bidi, algorithm = variant
        target = os.path.join(work, "%s.%d.%s.%s.mlir"
                              % (name, unroll, bidi, algorithm))
        run([opt, source, "-o", target,
             "--ovl-overlap-pipeline=%s unroll=%d bidirectional=%s "
             "algorithm=%s" % (machine, unroll, bidi, algorithm)])
        variant = variant_name(*variant)
    compile_s = time.monotonic() - begin
    report = json.loads(run([sim, target, "--hardware", "tpu-v4",
                             "--topology", topology, "--json"]))
    report["compile_s"] = compile_s
    print("  %s %s: %.2f ms, compiled in %.1f s" % (
        name, variant, 1e3 * report["step_time_s"], compile_s), flush=True)
    return name, variant, report


def row(name, variant, report, base):
    lb = report["lower_bound_s"]
    peak = report.get("peak_memory_bytes")
    return "| %s | %s | %.2f | %.2fx | %.2f | %.3f | %s | %.1f |" % (
        name, variant, 1e3 * report["step_time_s"],
        base["step_time_s"] / report["step_time_s"],
        1e3 * report["exposed_comm_time_s"], report["step_time_s"] / lb,
        "%.2f" % (peak / 2**30) if peak is not None else "-",
        report["compile_s"])


def comparisons(names, results):
    lines = ["| program | figure 14: unroll 1 -> 2 | figure 15: "
             "unidirectional -> bidirectional (the better of true and "
             "split) | figure 16: top-down -> "
             "bottom-up | decomposition over async-only | asynchronous "
             "kept over blocking kept | auto over the best forced loop |",
             "|---|---|---|---|---|---|---|"]
    for n in names:
        r = {v: results[n][v]["step_time_s"] for v in results[n]}
        best = min(r[variant_name(u, b, "bottom-up")]
                   for u in (1, 2) for b in DIRECTIONS)
        lines.append("| %s | %.2fx | %.2fx | %.2fx | %.2fx | %.2fx | %.2fx |" % (
            n, r["unroll1/bottom-up"] / r["unroll2/bottom-up"],
            r["unroll1/bottom-up"] / min(r["unroll1+bidi/bottom-up"],
                                         r["unroll1+split/bottom-up"]),
            r["unroll1/top-down"] / r["unroll1/bottom-up"],
            r["async-only"] / r["unroll1/bottom-up"],
            r["blocking-kept"] / r["unroll1/bottom-up"], best / r["auto"]))
    return "\n".join(lines) + "\n"


def plot(names, results, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    variants = ["async-only", "blocking-kept", "auto"] + [
        variant_name(*p) for p in PIPELINES]
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(12, 7), sharex=True)
    x = np.arange(len(names))
    width = 0.8 / len(variants)
    for i, v in enumerate(variants):
        offset = (i - (len(variants) - 1) / 2) * width
        ax1.bar(x + offset, [results[n]["baseline"]["step_time_s"]
                             / results[n][v]["step_time_s"] for n in names],
                width, label=v)
        ax2.bar(x + offset, [results[n][v]["step_time_s"]
                             / results[n][v]["lower_bound_s"]
                             for n in names], width, label=v)
    ax1.axhline(1, color="black", linewidth=0.8)
    ax1.set_ylabel("speedup over blocking")
    ax1.legend(fontsize=7, ncol=3)
    ax2.axhline(1.05, color="red", linewidth=0.8, label="target 1.05")
    ax2.set_ylabel("step time / lower bound")
    ax2.set_xticks(x, names)
    fig.suptitle("Simulated on TPU v4 (overlap-sim)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--programs", default=",".join(PROGRAMS))
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--results", default=os.path.join(HERE, "results"))
    args = parser.parse_args()
    opt, sim = tool("overlap-opt"), tool("overlap-sim")
    names = [n for n in args.programs.split(",") if n]
    work = os.path.join(args.results, "mlir")
    os.makedirs(work, exist_ok=True)
    jobs = []
    for name in names:
        if name not in PROGRAMS:
            sys.exit("run.py: unknown program %s" % name)
        generator, gen_args, topology = PROGRAMS[name]
        source = os.path.join(work, name + ".mlir")
        generator.main(gen_args + ["--out", source])
        for variant in ["baseline", "async-only", "unscheduled",
                        "blocking-kept", "auto"] + PIPELINES:
            jobs.append((name, variant, source, topology, opt, sim, work))
    results = {n: {} for n in names}
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for name, variant, report in pool.map(simulate, jobs):
            results[name][variant] = report
    lines = ["| program | variant | step ms | speedup | exposed comm ms | "
             "step / lower bound | peak GiB | compile s |",
             "|---|---|---|---|---|---|---|---|"]
    for n in names:
        base = results[n]["baseline"]
        for v in results[n]:
            lines.append(row(n, v, results[n][v], base))
    text = "\n".join(lines) + "\n\n" + comparisons(names, results)
    print(text)
    with open(os.path.join(args.results, "table.md"), "w") as f:
        f.write(text)
    with open(os.path.join(args.results, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    plot(names, results, os.path.join(args.results, "figures.png"))
    print("wrote %s/{table.md,results.json,figures.png}" % args.results)


if __name__ == "__main__":
    main()
