"""Exits 1 unless overlap-sim report A's step time is no more than B's (to
rounding): no_slower.py A.json B.json, either of them `-` for standard
input (a report piped straight from overlap-sim --json). Prints both."""

import json
import sys


def load(path):
    return json.load(sys.stdin if path == "-" else open(path))


a, b = (load(path)["step_time_s"] for path in sys.argv[1:3])
print("step time %.6g s vs %.6g s" % (a, b))
sys.exit(0 if a <= b * (1 + 1e-9) else 1)
