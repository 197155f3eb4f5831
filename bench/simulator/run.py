#!/usr/bin/python3
"""How fast overlap-sim is, and how its cost grows with devices and ops.

Simulates transformer layers of the GPT ladder's largest model (1024B,
bench/gpt-ladder/gen.py) decomposed and asynchronous (what a compiler's
decision loop would ask about), on TPU v4, while
  - the data axis grows: 256 to 2048 devices at one layer, and
  - the layers grow: 1 to 4 layers on all 2048 devices,
and prints, per run, the devices, the program's simulated events, the
wall-clock time of the whole overlap-sim process (parse, flatten, simulate)
and the events per second. Each time is the best of --repeat runs.

Usage: run.py [--repeat N]   (OVERLAP_BIN: directory of the tools,
                              default build/bin of this repository)
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "python"))
from overlap import Error as OverlapError, tool_path  # noqa: E402
GEN = os.path.join(ROOT, "bench", "gpt-ladder", "gen.py")


def tool(name):
    try:
        return tool_path(name)
    except OverlapError as error:
        sys.exit("run.py: %s" % error)


def run(cmd, **kwargs):
    return subprocess.run(cmd, check=True, capture_output=True, text=True,
                          **kwargs).stdout


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    opt, sim = tool("overlap-opt"), tool("overlap-sim")
    cases = [(data, 1) for data in (32, 64, 128, 256)]
    cases += [(256, layers) for layers in (2, 4)]
    print("| devices | layers | ops in program | events | wall s | M events/s |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as work:
        for data, layers in cases:
            mesh = "1,%d,8" % data
            source = os.path.join(work, "layer.mlir")
            program = os.path.join(work, "async.mlir")
            run([sys.executable, GEN, "--config", "1024B", "--mesh", mesh,
                 "--layers", str(layers), "--out", source])
            topology = run([sys.executable, GEN, "--config", "1024B",
                            "--mesh", mesh, "--print-topology"]).strip()
            run([opt, source, "--ovl-decompose-collective-einsum=gate=always",
                 "--ovl-async-collectives", "-o", program])
            ops = sum(1 for line in open(program) if " = " in line)
            best, report = None, None
            for _ in range(args.repeat):
                start = time.perf_counter()
                report = json.loads(run([sim, program, "--hardware", "tpu-v4",
                                         "--topology", topology, "--json"]))
                elapsed = time.perf_counter() - start
                best = elapsed if best is None else min(best, elapsed)
            print("| %d | %d | %d | %d | %.2f | %.1f |" %
                  (report["num_devices"], layers, ops, report["events"], best,
                   report["events"] / best / 1e6))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
