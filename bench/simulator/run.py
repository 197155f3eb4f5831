#!/usr/bin/python3
"""How fast overlap-sim is, and how its cost grows with layers and devices.

Simulates the training step (forward, loss, backward: gen.py --step train
--partials bf16) of the GPT ladder's largest model, 1024B
(bench/gpt-ladder/gen.py), on TPU v4, through the overlap pipeline with
gate=never (every collective asynchronous and scheduled, none decomposed;
the gate's pricing takes minutes per layer of 1024B) and the top-down
scheduler (--algorithm; the default bottom-up one takes 22, 80 and 196 s
for 1, 4 and 8 layers, growing faster than the layers, hours for 142),
while
  - the layers grow on all 2048 devices (16x16x8): 1 to 16, and the whole
    model's 142;
  - the devices grow at 2 layers: the data axis 32 to 256 (256 to 2048
    devices, mesh 1,DATA,8);
and prints, per case, the program's ops, the devices overlap-sim played
(one per orbit of the torus translations that map the program onto itself,
its default), its events and wall-clock time (the whole process: parse,
build, simulate, peak memory; best of --repeat), and the same with
--brute-force (every device) where that takes at most --brute-max-layers
layers, with whether the two reports agree figure for figure (every field
but events, simulated_devices and symmetry). Then the phases of the
142-layer run (overlap-sim --mlir-timing).

Exits 1 if a symmetric report differs from its brute-force one.

Usage: run.py [--repeat N] [--brute-max-layers L] [--algorithm A]
              [--work DIR] [--quick]
  --work DIR   keep the generated programs there and reuse them (the
               top-down pipeline takes 90 s for the 142 layers)
  --quick      the small cases only (up to 4 layers, no 142)
  OVERLAP_BIN  directory of the tools (default build/bin of this repository)
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "test", "Simulator", "Inputs"))
from overlap import Error as OverlapError, tool_path  # noqa: E402
from check_report import report_differences  # noqa: E402
GEN = os.path.join(ROOT, "bench", "gpt-ladder", "gen.py")
MODEL_LAYERS = 142


def tool(name):
    try:
        return tool_path(name)
    except OverlapError as error:
        sys.exit("run.py: %s" % error)


def run(cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True)


def program_for(work, opt, algorithm, data, layers):
    """The pipeline's program of `layers` layers on mesh 1,data,8 and its
    topology; generated once per work directory."""
    mesh = "1,%d,8" % data
    gen = [sys.executable, GEN, "--config", "1024B", "--step", "train",
           "--partials", "bf16", "--mesh", mesh]
    topology = run(gen + ["--print-topology"]).stdout.strip()
    program = os.path.join(work, "1024B-train-%dx8-%dl-%s.mlir" %
                           (data, layers, algorithm))
    if not os.path.exists(program):
        source = program + ".source"
        run(gen + ["--layers", str(layers), "--out", source])
        start = time.perf_counter()
        run([opt, source, "-o", program + ".tmp",
             "--ovl-overlap-pipeline=hardware=tpu-v4 topology=%s gate=never "
             "algorithm=%s" % (topology, algorithm)])
        os.rename(program + ".tmp", program)
        print("(generated %s in %.0f s)" % (os.path.basename(program),
                                            time.perf_counter() - start),
              file=sys.stderr)
    return program, topology


def simulate(sim, program, topology, repeat, brute_force):
    """The report and the best wall-clock time of `repeat` runs."""
    cmd = [sim, program, "--hardware", "tpu-v4", "--topology", topology,
           "--json"] + (["--brute-force"] if brute_force else [])
    best, report = None, None
    for _ in range(repeat):
        start = time.perf_counter()
        report = json.loads(run(cmd).stdout)
        elapsed = time.perf_counter() - start
        best = elapsed if best is None else min(best, elapsed)
    return report, best


def phases(sim, program, topology):
    """Seconds per phase of one run, from --mlir-timing."""
    stderr = run([sim, program, "--hardware", "tpu-v4", "--topology",
                  topology, "--json", "--mlir-timing"]).stderr
    return [(name.strip(), float(seconds)) for seconds, name in
            re.findall(r"^\s+([0-9.]+) \(\s*[0-9.]+%\)\s+(.+)$", stderr,
                       re.M)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--brute-max-layers", type=int, default=16)
    parser.add_argument("--algorithm", default="top-down",
                        choices=("top-down", "bottom-up"))
    parser.add_argument("--work")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    opt, sim = tool("overlap-opt"), tool("overlap-sim")
    layer_counts = [1, 2, 4] if args.quick else [1, 2, 4, 8, 16, MODEL_LAYERS]
    cases = [(256, layers) for layers in layer_counts]
    cases += [(data, 2) for data in (32, 64, 128)]
    work = args.work or tempfile.mkdtemp(prefix="overlap-sim-bench-")
    os.makedirs(work, exist_ok=True)

    print("| devices | layers | ops | played | events | wall s | "
          "brute-force events | brute-force wall s | speed-up | same report |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    differing = []
    for data, layers in cases:
        program, topology = program_for(work, opt, args.algorithm, data,
                                        layers)
        ops = sum(1 for line in open(program) if " = " in line)
        fast, fast_s = simulate(sim, program, topology, args.repeat, False)
        row = [fast["num_devices"], layers, ops, fast["simulated_devices"],
               fast["events"], "%.2f" % fast_s]
        if layers <= args.brute_max_layers:
            brute, brute_s = simulate(sim, program, topology, 1, True)
            diff = report_differences(fast, brute)
            if diff:
                differing.append((program, diff))
            row += [brute["events"], "%.2f" % brute_s,
                    "%.0fx" % (brute_s / fast_s),
                    "yes" if not diff else "NO: " + ", ".join(diff)]
        else:
            row += ["-", "-", "-", "-"]
        print("| " + " | ".join(str(cell) for cell in row) + " |")
        sys.stdout.flush()

    if not args.quick:
        program, topology = program_for(work, opt, args.algorithm, 256,
                                        MODEL_LAYERS)
        print("\nPhases of the %d-layer run (s):\n" % MODEL_LAYERS)
        print("| phase | s |")
        print("|---|---|")
        for name, seconds in phases(sim, program, topology):
            print("| %s | %.2f |" % (name, seconds))
    for program, diff in differing:
        print("run.py: %s: the symmetric report differs from the brute-force "
              "one in %s" % (program, ", ".join(diff)), file=sys.stderr)
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
