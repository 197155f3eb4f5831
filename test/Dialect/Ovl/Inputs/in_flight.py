#!/usr/bin/env python3
"""Prints, for every function of an ovl program, the most asynchronous
permutes in flight at once, counted along the text: +1 at each
ovl.collective_permute_start, -1 at each ovl.collective_permute_done. In a
function whose loops carry no token, that is the peak of the schedule (a
loop body counts once: the outer transfers in flight around it plus its
own). Used by the ovl-schedule tests to check the budget.

Usage: overlap-opt ... | in_flight.py
"""

import re
import sys

current = None
count = peak = 0
for line in sys.stdin:
    match = re.search(r"func\.func (?:private )?@([\w$.]+)", line)
    if match:
        if current:
            print("@%s: max in flight %d" % (current, peak))
        current, count, peak = match.group(1), 0, 0
    if "ovl.collective_permute_start" in line:
        count += 1
        peak = max(peak, count)
    elif "ovl.collective_permute_done" in line:
        count -= 1
if current:
    print("@%s: max in flight %d" % (current, peak))
