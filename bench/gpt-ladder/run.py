#!/usr/bin/python3
"""Simulated speedup of the decomposition on the GPT ladder (TPU v4).

For each config, generates one transformer layer with gen.py (its forward,
or with --step train its training step: forward, loss, backward with the
config's rematerialisation policy), makes the variants

  baseline               the generated program (blocking collectives)
  async-only             ovl-overlap-pipeline{OPTS gate=never}: nothing
                         decomposed, every collective asynchronous and
                         scheduled behind independent work
  pipeline               ovl-overlap-pipeline{OPTS}: the defaults, the gate
                         choosing each collective's form and each loop's
                         variant (unroll=auto bidirectional=auto), the
                         scheduler ordering the result
  unroll1 ... unroll2+split
                         ... {OPTS unroll=U bidirectional=B}: every loop
                         forced to one variant (U 1 or 2; B false, true or
                         split), the gate still choosing what to decompose

simulates each with `overlap-sim PROGRAM --hardware HW --topology T --json`,
prints a markdown table (step time, speedup over the baseline, FLOPS
utilization, the pipeline's step over the lower bound max(compute,
communication) and over the best forced variant's, peak memory per device
against the HBM; with --step train also the whole model's step, the layer's
scaled by the model's layer count, and model-FLOPS utilization, 6 x params
x tokens; next to the paper's 1.14x-1.38x and 72% for 500B on 1024 chips)
and writes results/table.md, results/results.json and results/speedup.png
(results/train/ with --step train).

Usage: run.py [--configs 32B,64B,...] [--step forward|train] [--layers N]
              [--jobs N] [--trace] [--results DIR] [-- extra gen.py arguments]

Environment (flags win):
  OVERLAP_BIN        directory of overlap-opt and overlap-sim
                     (default: build/bin of the repository holding this file)
  DECOMPOSE_OPTIONS  options given to every pipeline variant (default
                     none: the cost-model gate decides; e.g.
                     "gate=always" decomposes every candidate). The
                     pipeline gets hardware= and topology= as simulated,
                     unless given here
  HARDWARE           overlap-sim --hardware (default tpu-v4)
  TOPOLOGY           "auto" (default): the v4 slice whose innermost
                     dimension is the model axis (gen.py --print-topology);
                     "default": let overlap-sim choose; or AxBxC for all
  GEN_ARGS           extra gen.py arguments, e.g. "--partials bf16"
Runs with Debian's /usr/bin/python3 (NumPy and matplotlib).
"""

import argparse
import concurrent.futures
import json
import os
import shlex
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
GEN = os.path.join(HERE, "gen.py")
sys.path.insert(0, os.path.join(ROOT, "python"))
from overlap.models import gpt as gen  # noqa: E402

FORCED = [
    ("unroll1", "unroll=1 bidirectional=false"),
    ("unroll2", "unroll=2 bidirectional=false"),
    ("bidirectional", "unroll=1 bidirectional=true"),
    ("unroll2+bidirectional", "unroll=2 bidirectional=true"),
    ("split", "unroll=1 bidirectional=split"),
    ("unroll2+split", "unroll=2 bidirectional=split"),
]
VARIANTS = [
    ("baseline", None),
    ("async-only", "gate=never"),
    ("pipeline", ""),
] + FORCED
PAPER_SPEEDUP = (1.14, 1.38)
PAPER_UTILIZATION = {"512B": 0.72}  # the paper's "500B on 1024 chips"


class Failure(Exception):
    pass


def run(cmd):
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        raise Failure("command failed (exit %d): %s\n%s%s"
                      % (res.returncode, " ".join(shlex.quote(c) for c in cmd),
                         res.stdout, res.stderr))
    return res.stdout


def check_tools(bindir):
    opt = os.path.join(bindir, "overlap-opt")
    sim = os.path.join(bindir, "overlap-sim")
    for tool, target in ((opt, "overlap-opt"), (sim, "overlap-sim")):
        if not os.access(tool, os.X_OK):
            sys.exit("run.py: %s not found or not executable.\n"
                     "Build it (ninja -C build %s) or point OVERLAP_BIN at "
                     "the directory holding it." % (tool, target))
    return opt, sim


def simulate(job):
    (config, variant, options, program, opt, sim, hardware, topology,
     decompose_options, trace) = job
    if options is None:
        target = program
    else:
        opts = " ".join(o for o in (decompose_options, options) if o)
        # The gate prices candidates on a machine: give it the one the
        # simulator uses, unless the options name one already.
        if "hardware=" not in opts:
            opts += " hardware=" + hardware
        if topology and "topology=" not in opts:
            opts += " topology=" + topology
        target = "%s.%s.mlir" % (os.path.splitext(program)[0], variant)
        run([opt, program, "-o", target, "--ovl-overlap-pipeline=" + opts])
    cmd = [sim, target, "--hardware", hardware, "--json"]
    if topology:
        cmd += ["--topology", topology]
    if trace:
        cmd += ["--trace", os.path.splitext(target)[0] + ".trace.json"]
    out = run(cmd)
    try:
        report = json.loads(out)
    except ValueError as err:
        raise Failure("overlap-sim printed no JSON for %s (%s):\n%s"
                      % (target, err, out[:2000]))
    missing = [k for k in ("step_time_s", "utilization", "num_devices")
               if k not in report]
    if missing:
        raise Failure("overlap-sim JSON for %s lacks %s" % (target, missing))
    return config, variant, report


def pct(x):
    return "%.0f%%" % (100 * x)


def peak(variants):
    """The largest peak live bytes per device over the variants (overlap-sim's
    peak_memory_bytes), in GiB, against the hardware's HBM."""
    peaks = [r.get("peak_memory_bytes") for r in variants.values()]
    if None in peaks:
        return "?"
    capacity = next(iter(variants.values())).get("hbm_capacity_bytes")
    text = "%.2f" % (max(peaks) / 2**30)
    if capacity:
        text += " (%.0f)" % (capacity / 2**30)
        if max(peaks) > capacity:
            text += " does not fit"
    return text


def best_forced(variants):
    """The fastest forced variant: (name, report)."""
    return min(((n, variants[n]) for n, _ in FORCED),
               key=lambda item: item[1]["step_time_s"])


def model_utilization(report, meta):
    """Model FLOPS utilization: the step's model FLOPs per device
    (2·params·tokens a forward, 6·params·tokens a training step, no
    recomputation) over the step time at the peak rate overlap-sim's
    utilization is relative to."""
    peak = report["flops"] / (report["utilization"] * report["step_time_s"])
    return meta["model_flops"] / (report["step_time_s"] * peak)


def table(configs, results, meta, train):
    names = [v for v, _ in VARIANTS[1:]]
    head = (["config", "chips", "grid", "topology"] +
            (["remat"] if train else []) +
            ["baseline ms/layer", "baseline util"] +
            ["%s ms (speedup, util)" % n for n in names] +
            ["pipeline step / lower bound", "pipeline / best forced",
             "pipeline / async-only"] +
            (["model step s (baseline → pipeline)", "model-FLOPS util",
              "hardware-FLOPS util"] if train else []) +
            ["peak GiB/device (of HBM)", "paper speedup", "paper util"])
    lines = ["| " + " | ".join(head) + " |",
             "|" + "---|" * len(head)]
    for c in configs:
        base = results[c]["baseline"]
        pipe = results[c]["pipeline"]
        row = [c, str(base["num_devices"]), meta[c]["grid"],
               meta[c]["topology"] or base.get("topology", "?")]
        if train:
            row.append(meta[c]["remat"])
        row += ["%.2f" % (1e3 * base["step_time_s"]), pct(base["utilization"])]
        for n in names:
            r = results[c][n]
            row.append("%.2f (%.2fx, %s)" % (1e3 * r["step_time_s"],
                                             base["step_time_s"]
                                             / r["step_time_s"],
                                             pct(r["utilization"])))
        row.append("%.3f" % (pipe["step_time_s"] / pipe["lower_bound_s"]))
        name, best = best_forced(results[c])
        row.append("%.3f (%s)" % (pipe["step_time_s"] / best["step_time_s"],
                                  name))
        row.append("%.3f" % (pipe["step_time_s"]
                             / results[c]["async-only"]["step_time_s"]))
        if train:
            layers = meta[c]["model_layers"] / meta[c]["layers"]
            row.append("%.2f → %.2f" % (layers * base["step_time_s"],
                                        layers * pipe["step_time_s"]))
            row.append(pct(model_utilization(pipe, meta[c])))
            row.append(pct(pipe["utilization"]))
        row.append(peak(results[c]))
        row.append("%.2fx-%.2fx" % PAPER_SPEEDUP)
        row.append(pct(PAPER_UTILIZATION[c]) + " (500B, 1024 chips)"
                   if c in PAPER_UTILIZATION else "")
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"


def plot(configs, results, meta, path, train):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    names = [v for v, _ in VARIANTS[1:]]
    colors = {"baseline": "0.55"}
    colors.update({n: "C%d" % i for i, n in enumerate(names)})
    x = np.arange(len(configs))
    width = 0.8 / len(names)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(13, 4.8))
    for i, n in enumerate(names):
        speed = [results[c]["baseline"]["step_time_s"]
                 / results[c][n]["step_time_s"] for c in configs]
        ax1.bar(x + (i - (len(names) - 1) / 2) * width, speed, width,
                label=n, color=colors[n])
    ax1.axhspan(*PAPER_SPEEDUP, color="grey", alpha=0.2,
                label="paper: %.2fx-%.2fx" % PAPER_SPEEDUP)
    ax1.axhline(1.0, color="black", linewidth=0.8)
    ax1.set_xticks(x, ["%s\n%d chips" % (c, results[c]["baseline"]
                                          ["num_devices"]) for c in configs])
    ax1.set_ylabel("speedup over blocking collectives")
    ax1.set_title("Simulated step time of one layer (%s)"
                  % ("training step" if train else "forward"))
    ax1.legend(fontsize=8, loc="lower right")

    variants = ["baseline"] + names
    width = 0.8 / len(variants)
    for i, n in enumerate(variants):
        util = [100 * results[c][n]["utilization"] for c in configs]
        ax2.bar(x + (i - (len(variants) - 1) / 2) * width, util, width,
                label=n, color=colors[n])
    for c, u in PAPER_UTILIZATION.items():
        if c in configs:
            j = configs.index(c)
            ax2.plot([j - 0.45, j + 0.45], [100 * u] * 2, color="red",
                     linewidth=2, label="paper: %d%% (500B)" % (100 * u))
    if train:
        ax2.plot(x, [100 * model_utilization(results[c]["pipeline"], meta[c])
                     for c in configs], "k_", markersize=18, mew=2,
                 label="pipeline, model FLOPs (6·params·tokens)")
    ax2.set_xticks(x, configs)
    ax2.set_ylabel("FLOPS utilization (%)")
    ax2.set_ylim(0, 125)
    ax2.set_yticks(range(0, 101, 20))
    ax2.set_title("Utilization of peak bf16 FLOP/s (bars: hardware FLOPs)"
                  if train else "Utilization of peak bf16 FLOP/s")
    ax2.legend(fontsize=7, ncol=3, loc="upper center")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--configs", default=",".join(gen.LADDER),
                        help="comma-separated (default: the whole ladder)")
    parser.add_argument("--layers", type=int, default=1)
    parser.add_argument("--step", choices=["forward", "train"],
                        default="forward",
                        help="one layer's forward (default) or its training "
                             "step (gen.py --step train)")
    parser.add_argument("--jobs", type=int, default=4)
    parser.add_argument("--results", default=os.path.join(HERE, "results"))
    parser.add_argument("--hardware", default=os.environ.get("HARDWARE",
                                                             "tpu-v4"))
    parser.add_argument("--topology", default=os.environ.get("TOPOLOGY",
                                                             "auto"))
    parser.add_argument("--decompose-options",
                        default=os.environ.get("DECOMPOSE_OPTIONS", ""))
    parser.add_argument("--trace", action="store_true",
                        help="also write a Chrome trace per simulation")
    parser.add_argument("gen_args", nargs="*",
                        help="extra gen.py arguments (after --)")
    args = parser.parse_args()

    bindir = os.environ.get("OVERLAP_BIN", os.path.join(ROOT, "build", "bin"))
    opt, sim = check_tools(bindir)
    gen_args = shlex.split(os.environ.get("GEN_ARGS", "")) + args.gen_args
    configs = [c for c in args.configs.split(",") if c]
    for c in configs:
        if c not in gen.LADDER:
            sys.exit("run.py: unknown config %s" % c)

    if args.step == "train":
        gen_args = ["--step", "train"] + gen_args
        if args.results == parser.get_default("results"):
            args.results = os.path.join(args.results, "train")
    gen_ns = gen.parse_args(gen_args)
    mlir_dir = os.path.join(args.results, "mlir")
    os.makedirs(mlir_dir, exist_ok=True)
    meta, jobs = {}, []
    for c in configs:
        program = os.path.join(mlir_dir, "%s.mlir" % c)
        try:
            run([sys.executable, GEN, "--config", c, "--layers",
                 str(args.layers), "--out", program] + gen_args)
            if args.topology == "auto":
                topology = run([sys.executable, GEN, "--config", c,
                                "--print-topology"] + gen_args).strip()
            elif args.topology == "default":
                topology = None
            else:
                topology = args.topology
        except Failure as err:
            sys.exit("run.py: %s" % err)
        emitter, cfg = gen.emitter_for(c, gen_ns)
        factor = 3 if args.step == "train" else 1
        meta[c] = {"grid": "%dx%d" % (cfg.data, cfg.model),
                   "topology": topology, "layers": args.layers,
                   "model_layers": cfg.model_layers,
                   "remat": getattr(emitter, "remat", None),
                   "model_flops": factor * args.layers
                   * emitter.weight_flops()}
        for variant, options in VARIANTS:
            jobs.append((c, variant, options, program, opt, sim,
                         args.hardware, topology, args.decompose_options,
                         args.trace))

    results = {c: {} for c in configs}
    failures = []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = [pool.submit(simulate, job) for job in jobs]
        for f in futures:
            try:
                c, variant, report = f.result()
                results[c][variant] = report
            except Failure as err:
                failures.append(str(err))
    if failures:
        for f in failures:
            print("run.py: " + f, file=sys.stderr)
        sys.exit(1)

    train = args.step == "train"
    text = table(configs, results, meta, train)
    what = ("%d transformer layer(s), %s" %
            (args.layers, "training step (forward, loss, backward with "
             "the config's remat policy; no optimizer update)" if train
             else "forward pass"))
    notes = ("\n%s: per-device programs from gen.py (Pax LmCloudSpmd "
             "ladder, 2-D strategy) simulated by overlap-sim on %s; "
             "decomposition options '%s'%s. Step times are per program; "
             "%sthe paper's figures are whole training steps of its own GPT "
             "models.\n"
             % (what, args.hardware, args.decompose_options,
                "; gen.py " + " ".join(gen_args) if gen_args else "",
                "the model's step is the program's times the model's layers "
                "over the program's (embeddings, the loss's vocabulary "
                "projection and the optimizer update left out); model FLOPS "
                "count 6 x params x tokens, hardware FLOPS every einsum "
                "simulated, the recomputed forward included; " if train
                else ""))
    print(text + notes)
    with open(os.path.join(args.results, "table.md"), "w") as f:
        f.write(text + notes)
    with open(os.path.join(args.results, "results.json"), "w") as f:
        json.dump({"hardware": args.hardware,
                   "decompose_options": args.decompose_options,
                   "gen_args": gen_args, "layers": args.layers,
                   "step": args.step,
                   "meta": meta, "results": results}, f, indent=1)
    plot(configs, results, meta, os.path.join(args.results, "speedup.png"),
         train)
    print("wrote %s/{table.md,results.json,speedup.png}" % args.results)


if __name__ == "__main__":
    main()
