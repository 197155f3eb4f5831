"""Checks an overlap-sim --trace file (a torus topology, the default
row-major placement).

  check_trace.py TRACE --devices LIST --topology AxBxC
      the processes are exactly those devices and "links", every link
      track is a link that leaves or enters one of them, and every link
      span names its sender and receiver (args src and dst, the name
      "transfer SRC -> DST")
  ... --same-as ALL.json   every traced device's spans and every link's
      spans equal, exactly, those of ALL (a trace of every device, played
      device by device), senders and receivers too, and the traced links are all of ALL's links that
      leave or enter the traced devices
  ... --max-spans N   at most N spans, the earliest: all of them before the
      cut that otherData reports, and its note says how many were left out
Prints what it compared; exits 1 on the first failed expectation.
"""

import argparse
import json
import re
import sys

DIMS = "xyz"


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def parse_list(text):
    devices = set()
    for item in text.split(","):
        lo, _, hi = item.partition("-")
        devices.update(range(int(lo), int(hi or lo) + 1))
    return sorted(devices)


def load(path):
    with open(path) as f:
        trace = json.load(f)
    procs, threads, spans = {}, {}, {}
    for e in trace["traceEvents"]:
        if e["ph"] == "M" and e["name"] == "process_name":
            procs[e["pid"]] = e["args"]["name"]
        elif e["ph"] == "M":
            threads[(e["pid"], e["tid"])] = e["args"]["name"]
        else:
            key = (e["pid"], e["tid"])
            args = e.get("args", {})
            if e["cat"] == "link" and e["name"] != "transfer %s -> %s" % (
                    args.get("src"), args.get("dst")):
                fail("link span %s does not name its sender and receiver"
                     % e)
            spans.setdefault(key, []).append(
                (e["ts"], e["dur"], e["cat"], e["name"], args.get("op"),
                 args.get("bytes")))
    return trace, procs, threads, spans


def link_ends(name, extents):
    """'(1,2,0) x+' -> (source, target) device numbers, row-major."""
    m = re.fullmatch(r"\(([\d,]+)\) ([xyz])([+-])", name)
    if not m:
        fail("link track %r is not a torus link" % name)
    coords = [int(c) for c in m.group(1).split(",")]
    dim = DIMS.index(m.group(2))
    target = list(coords)
    target[dim] = (coords[dim] + (1 if m.group(3) == "+" else -1)) % extents[dim]

    def number(c):
        n = 0
        for x, e in zip(c, extents):
            n = n * e + x
        return n
    return number(coords), number(target)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("trace")
    p.add_argument("--devices", required=True)
    p.add_argument("--topology", required=True)
    p.add_argument("--same-as")
    p.add_argument("--max-spans", type=int)
    a = p.parse_args()
    devices = parse_list(a.devices)
    extents = [int(e) for e in a.topology.split("x")]
    trace, procs, threads, spans = load(a.trace)
    links_pid = max(procs)
    want = {d: "device %d" % d for d in devices}
    want[links_pid] = "links"
    if procs != want:
        fail("processes %s, expected %s" % (procs, want))
    links = {tid: name for (pid, tid), name in threads.items()
             if pid == links_pid}
    for name in links.values():
        if not set(link_ends(name, extents)) & set(devices):
            fail("link %s touches none of the traced devices" % name)
    print("devices %s and %d of their links" % (a.devices, len(links)))

    if a.same_as:
        _, all_procs, all_threads, all_spans = load(a.same_as)
        for d in devices:
            mine = sorted(s for (pid, _), ss in spans.items() if pid == d
                          for s in ss)
            theirs = sorted(s for (pid, _), ss in all_spans.items()
                            if pid == d for s in ss)
            if not mine or mine != theirs:
                fail("device %d: %d spans, %d in %s" % (
                    d, len(mine), len(theirs), a.same_as))
        all_links = {tid: name for (pid, tid), name in all_threads.items()
                     if pid == links_pid and
                     set(link_ends(name, extents)) & set(devices)}
        if links != all_links:
            fail("links %s, expected %s" % (sorted(links.values()),
                                           sorted(all_links.values())))
        for tid in links:
            if sorted(spans[(links_pid, tid)]) != \
                    sorted(all_spans[(links_pid, tid)]):
                fail("link %s carries other spans than in %s" % (
                    links[tid], a.same_as))
        print("the same spans as %s" % a.same_as)

    if a.max_spans is not None:
        other = trace["otherData"]
        written = sum(len(ss) for ss in spans.values())
        if written > a.max_spans or written != other["spans_written"]:
            fail("%d spans written, otherData says %d, bound %d" % (
                written, other["spans_written"], a.max_spans))
        if not other["spans"] > written or "cut_us" not in other:
            fail("nothing was left out: %s" % other)
        if any(s[0] >= other["cut_us"] for ss in spans.values() for s in ss):
            fail("a span starts after the cut at %s us" % other["cut_us"])
        left = "%d of %d spans left out" % (other["spans"] - written,
                                            other["spans"])
        if left not in other["note"]:
            fail("the note %r does not say %r" % (other["note"], left))
        print("%d spans of %d, before %s us" % (written, other["spans"],
                                               other["cut_us"]))


main()
