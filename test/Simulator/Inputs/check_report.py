"""Checks an overlap-sim --json report against expectations.

  check_report.py REPORT.json --equals FIELD VALUE       (relative 1e-9)
  check_report.py REPORT.json --estimate FIELD ICI FUNC  FIELD equals the
      `estimate_s` that ovl-lower-to-ici printed for the collective of @FUNC
  check_report.py REPORT.json --below-estimate FIELD ICI FUNC  FIELD is at
      most that estimate (the closed form is an upper bound)
  check_report.py REPORT.json --less FIELD OTHER.json    FIELD < OTHER's
  check_report.py REPORT.json --between FIELD LO HI
  check_report.py REPORT.json --same-as OTHER.json   every figure equal,
      exactly (JSON prints doubles round-trip), but for how the two were
      simulated (SIMULATION_FIELDS): a symmetric run against --brute-force
Prints what it compared; exits 1 on the first failed expectation.
"""

import json
import math
import re
import sys


def close(a, b):
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-15)


# What differs between a run that played one device per orbit and the
# brute-force run of the same program: not figures of the program.
SIMULATION_FIELDS = ("events", "simulated_devices", "symmetry")


def report_differences(report, other):
    """The fields of two overlap-sim reports that differ, but for
    SIMULATION_FIELDS."""
    keys = (set(report) | set(other)) - set(SIMULATION_FIELDS)
    return sorted(k for k in keys if report.get(k) != other.get(k))


def estimate_of(ici_path, func):
    text = open(ici_path).read()
    start = text.index("func.func @%s(" % func)
    end = text.find("func.func @", start + 1)
    body = text[start:end if end >= 0 else len(text)]
    values = re.findall(r"estimate_s = ([-+0-9.eE]+) : f64", body)
    if len(values) != 1:
        sys.exit("@%s has %d estimates, expected one" % (func, len(values)))
    return float(values[0])


def main(argv):
    report = json.load(open(argv[1]))
    args = argv[2:]
    while args:
        kind, field = args[0], args[1]
        if kind != "--same-as":
            value = report[field]
        if kind == "--same-as":
            other, args = field, args[2:]
            field, expected = "every figure", "those of " + other
            value = report_differences(report, json.load(open(other)))
            ok = not value
        elif kind == "--equals":
            expected, args = float(args[2]), args[3:]
            ok = close(value, expected)
        elif kind == "--estimate":
            expected, args = estimate_of(args[2], args[3]), args[4:]
            ok = close(value, expected)
        elif kind == "--below-estimate":
            expected, args = estimate_of(args[2], args[3]), args[4:]
            ok = value <= expected * (1 + 1e-9)
        elif kind == "--less":
            expected, args = json.load(open(args[2]))[field], args[3:]
            ok = value < expected
        elif kind == "--between":
            lo, hi, args = float(args[2]), float(args[3]), args[4:]
            expected, ok = (lo, hi), lo <= value <= hi
        else:
            sys.exit("unknown check " + kind)
        print("%s %s %r vs %r: %s" % (kind, field, value, expected,
                                      "ok" if ok else "FAILED"))
        if not ok:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
