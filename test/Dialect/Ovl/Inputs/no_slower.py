"""Exits 1 unless overlap-sim report A.json's step time is no more than
B.json's (to rounding): no_slower.py A.json B.json. Prints both."""

import json
import sys

a, b = (json.load(open(path))["step_time_s"] for path in sys.argv[1:3])
print("step time %.6g s vs %.6g s" % (a, b))
sys.exit(0 if a <= b * (1 + 1e-9) else 1)
