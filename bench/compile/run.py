#!/usr/bin/env python3
"""How long ovl-overlap-pipeline takes, beside canonicalize,cse.

For each program, the CPU seconds (user + system, of the child process) of

  overlap-opt PROGRAM --ovl-overlap-pipeline -o /dev/null
  overlap-opt PROGRAM --canonicalize --cse -o /dev/null

with the pipeline's defaults (gate=cost on TPU v4, the topology the grid's
device count gives). The programs (bench/gpt-ladder/gen.py, --step train):

  tiny-L      the tiny GPT's training step (4 devices), L = 1, 2, 4 layers
  CONFIG      each ladder config's one-layer training step
  1024B-L     the 1024B training step as bench/simulator makes it (bf16
              partials, mesh 1,256,8: 2048 devices), L = 1 .. 142 layers

Prints a Markdown table and writes results.json (--results DIR).

Usage: run.py [--quick] [--only NAME[,NAME...]] [--baseline DIR]
              [--results DIR]
  --quick     tiny-1, tiny-2, 32B and 1024B-1, 1024B-2 only
  --only      these rows only (names as in the table)
  --baseline  also time the overlap-opt of DIR (another build's bin/) on
              each program, right before this one: the speed-up of a change,
              measured side by side
  OVERLAP_BIN  directory of the tools (default build/bin of this repository)
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "python"))
from overlap import Error as OverlapError, tool_path  # noqa: E402

GEN = os.path.join(ROOT, "bench", "gpt-ladder", "gen.py")
LADDER = ["32B", "64B", "128B", "256B", "512B", "1024B"]
MODEL_LAYERS = [1, 2, 4, 8, 16, 32, 142]


def programs(quick):
    """(name, generator arguments) of every row, in table order."""
    rows = [("tiny-%d" % layers, ["--config", "tiny", "--layers", str(layers)])
            for layers in ([1, 2] if quick else [1, 2, 4])]
    rows += [(config, ["--config", config])
             for config in (["32B"] if quick else LADDER)]
    rows += [("1024B-%d" % layers,
              ["--config", "1024B", "--partials", "bf16", "--mesh", "1,256,8",
               "--layers", str(layers)])
             for layers in ([1, 2] if quick else MODEL_LAYERS)]
    return rows


def cpu_seconds(command):
    """The CPU seconds of `command` (user + system), or an error."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    result = subprocess.run(command, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0:
        raise OverlapError("%s failed (%d): %s" % (
            " ".join(command), result.returncode, result.stderr.strip()))
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", default="")
    parser.add_argument("--baseline", default="")
    parser.add_argument("--results", default="")
    args = parser.parse_args()
    try:
        opt = tool_path("overlap-opt")
    except OverlapError as error:
        sys.exit("run.py: %s" % error)
    rows = programs(args.quick)
    if args.only:
        wanted = args.only.split(",")
        unknown = set(wanted) - {name for name, _ in programs(False)}
        if unknown:
            sys.exit("run.py: no row named %s" % ", ".join(sorted(unknown)))
        rows = [row for row in programs(False) if row[0] in wanted]
    baseline = None
    if args.baseline:
        baseline = os.path.join(args.baseline, "overlap-opt")
        if not os.access(baseline, os.X_OK):
            sys.exit("run.py: --baseline: no overlap-opt in %s" % args.baseline)
    results = []
    with tempfile.TemporaryDirectory() as work:
        print("| program | ops | pipeline CPU s | pipeline wall s "
              "| canonicalize,cse CPU s | ratio |"
              + (" baseline CPU s | speed-up |" if baseline else ""))
        print("|---|---|---|---|---|---|" + ("---|---|" if baseline else ""))
        for name, gen_args in rows:
            source = os.path.join(work, name + ".mlir")
            subprocess.run([sys.executable, GEN, "--step", "train", "--out",
                            source] + gen_args, check=True)
            with open(source) as f:
                ops = sum(1 for line in f if " = " in line)
            before = None
            if baseline:
                # No --quiet: a baseline may predate it (stderr is not a
                # terminal, so no progress is printed).
                before, _ = cpu_seconds(
                    [baseline, source, "--ovl-overlap-pipeline", "-o",
                     os.devnull])
            pipeline, wall = cpu_seconds(
                [opt, source, "--quiet", "--ovl-overlap-pipeline", "-o",
                 os.devnull])
            cleanup, _ = cpu_seconds(
                [opt, source, "--canonicalize", "--cse", "-o", os.devnull])
            results.append({"program": name, "ops": ops,
                            "pipeline_cpu_s": pipeline,
                            "pipeline_wall_s": wall,
                            "canonicalize_cse_cpu_s": cleanup,
                            "baseline_cpu_s": before})
            print("| %s | %d | %.2f | %.2f | %.2f | %.0fx |" % (
                name, ops, pipeline, wall, cleanup,
                pipeline / max(cleanup, 1e-3))
                + (" %.2f | %.2fx |" % (before, before / max(pipeline, 1e-3))
                   if baseline else ""), flush=True)
    if args.results:
        os.makedirs(args.results, exist_ok=True)
        with open(os.path.join(args.results, "results.json"), "w") as f:
            json.dump({"rows": results}, f, indent=1)


if __name__ == "__main__":
    main()
