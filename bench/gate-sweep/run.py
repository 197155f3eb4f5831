#!/usr/bin/python3
"""Measures the decomposition gate's decisions against the simulator.

Generates single- and two-candidate SPMD programs (gen.py: AllGather cases
1, 2, 3, Einsum-ReduceScatter, figure 3's two-candidate einsums; f32 and
bf16; groups of 2-16 on 1-, 2- and 3-D grids placed on the topology in many
ways; tpu-v4, tpu-v5e, tpu-v5p, h100-nvlink and two JSON descriptions; with
and without wrap-around; unroll 1|2; uni-|bidirectional; latency-, comm- and
compute-bound sizes) and for each:

  gate       ovl-decompose-collective-einsum{gate=cost remarks=true ...}:
             the decision and the predicted blocking and decomposed times
             (parse_remark)
  never      ovl-overlap-pipeline{gate=never ...}  | overlap-sim --json
  always     ovl-overlap-pipeline{gate=always ...} | overlap-sim --json
  cost       ovl-overlap-pipeline{gate=cost ...}   | overlap-sim --json
             (must equal never or always, whichever the gate chose)

all on the same machine (hardware, topology, device-assignment), unroll and
bidirectional. A two-candidate einsum is also run with each candidate
alone (the other carries ovl.no_decompose): the gate's full terms for both,
and the simulated time of decomposing either.

Wrong decisions: decomposed by the gate but simulated > 1% slower than
blocking; kept blocking although the decomposed program simulates > 5%
faster. Prediction error: |predicted - simulated| / simulated step time of
the blocking and of the decomposed program. Prints a summary, the failure
tables (worst 20, with the commands that reproduce each), breakdowns by
every swept dimension, and writes results/{table.md,results.json} (and the
programs under results/mlir/).

Usage: run.py [--count N] [--seed S] [--jobs J] [--fast] [--check]
              [--only ID,ID,...] [--async] [--results DIR]
  --async   async-collectives=true for the gate and every pipeline: the
            never program has every collective asynchronous
  --fast    the first 54 cases (every level of every dimension), < 60 s
  --check   exit 1 unless: no tool error, the cost pipeline matches the
            gate, 0 decomposed-slower, 0 kept-blocking-faster, median
            |error| <= 3%, p95 <= 10%
  OVERLAP_BIN: directory of overlap-opt and overlap-sim (default
  <repo>/build/bin)
"""

import argparse
import concurrent.futures
import json
import os
import re
import shlex
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "python"))
from overlap import Error as OverlapError, tool_path  # noqa: E402
sys.path.insert(0, HERE)
import gen  # noqa: E402

FAST_COUNT = 54
TIMEOUT = 600   # seconds per tool run
SLOWER = 1.01   # decomposed by the gate but slower than blocking by > 1%
FASTER = 0.95   # kept blocking but decomposed faster by > 5%
TARGET_MEDIAN = 0.03
TARGET_P95 = 0.10


def tool(name):
    try:
        return tool_path(name)
    except OverlapError as error:
        sys.exit("run.py: %s" % error)


# ---------------------------------------------------------------------------
# The remark parser: the one place that knows the remark's wording.

_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}
_T = r"(-?(?:[0-9]+(?:\.[0-9]*)?(?:e[-+]?[0-9]+)?|inf|nan)) (s|ms|us|ns)\b"


def _seconds(value, unit):
    return float(value) * _UNITS[unit]


def parse_remark(text):
    """The decision and the times (in seconds) of one gate remark, the text
    after "remark: ". Returns a dict with `decision` (decompose, keep,
    outvoted, never, undecomposable) and, where the remark gives them,
    comp, comm, loop_comp, ring, epilogue, gain, blocking (predicted
    blocking time, comp + comm) and decomposed (max(loop comp, ring) +
    epilogue). The new form's "predicted <T> blocking, <T> decomposed" wins
    over the terms when present."""
    out = {}
    if text.startswith("not decomposed:"):
        out["decision"] = "undecomposable"
    elif text.startswith("decomposing "):
        out["decision"] = "decompose"
    elif "gate=never" in text:
        out["decision"] = "never"
    elif "of the same einsum has the larger gain" in text:
        out["decision"] = "outvoted"
    else:
        out["decision"] = "keep"
    terms = {"comp": r"(?<!loop )\bcomp " + _T, "comm": r"\bcomm " + _T,
             "loop_comp": r"loop comp " + _T, "ring": r"\bring " + _T,
             "epilogue": r"epilogue " + _T, "gain": r"\bgain " + _T}
    for key, pattern in terms.items():
        m = re.search(pattern, text)
        if m:
            out[key] = _seconds(m.group(1), m.group(2))
    # "predicted 837 us blocking (compute 125 us), 1.02 ms decomposed
    # (compute 125 us)": each time may carry a parenthesis.
    paren = r"(?: \(([^)]*)\))?"
    # With async-collectives, "<T> asynchronous (compute <T>)" comes
    # between: the program every collective kept is asynchronous in, which
    # the never program is, so it stands for "blocking" here.
    m = re.search(r"predicted " + _T + r" blocking" + paren + r", (?:" + _T +
                  r" asynchronous" + paren + r", )?" + _T +
                  r" decomposed" + paren, text)
    if m:
        out["blocking"] = _seconds(m.group(1), m.group(2))
        if m.group(4):
            out["blocking_form"] = out["blocking"]
            out["blocking"] = _seconds(m.group(4), m.group(5))
        out["decomposed"] = _seconds(m.group(7), m.group(8))
        out["form"] = "predicted"
        for key, inner in (("blocking_compute", m.group(6) or m.group(3)),
                           ("decomposed_compute", m.group(9))):
            c = re.search(r"compute " + _T, inner or "")
            if c:
                out[key] = _seconds(c.group(1), c.group(2))
        if "comp" not in out and "blocking_compute" in out:
            out["comp"] = out["blocking_compute"]
        if "comm" not in out and "comp" in out:
            out["comm"] = out["blocking"] - out["comp"]
    elif all(k in out for k in ("comp", "comm", "loop_comp", "ring",
                                "epilogue")):
        out["blocking"] = out["comp"] + out["comm"]
        out["decomposed"] = max(out["loop_comp"], out["ring"]) + \
            out["epilogue"]
        out["form"] = "terms"
    if "gain" in text and "(" in text and out["decision"] == "outvoted":
        m = re.search(r"\(" + _T + r" vs " + _T + r"\)", text)
        if m:
            out["winner_gain"] = _seconds(m.group(1), m.group(2))
            out["gain"] = _seconds(m.group(3), m.group(4))
    return out


def remarks_by_line(stderr):
    """{line: parsed remark} of a tool's diagnostics."""
    found = {}
    for m in re.finditer(r"^[^\n:]*:(\d+):\d+: remark: (.*)$", stderr,
                         re.MULTILINE):
        found[int(m.group(1))] = dict(parse_remark(m.group(2)),
                                      text=m.group(2))
    return found


# ---------------------------------------------------------------------------
# Running one case.

class ToolError(Exception):
    def __init__(self, stage, cmd, rc, stderr):
        super().__init__(stage)
        self.stage, self.cmd, self.rc, self.stderr = stage, cmd, rc, stderr


def run(stage, cmd, log=None):
    if log is not None:
        log.append(" ".join(shlex.quote(a) for a in cmd))
    try:
        res = subprocess.run(cmd, capture_output=True, text=True,
                             timeout=TIMEOUT)
    except subprocess.TimeoutExpired as e:
        raise ToolError(stage, cmd, "timeout after %d s" % TIMEOUT,
                        e.stderr or "")
    if res.returncode:
        raise ToolError(stage, cmd, res.returncode, res.stderr)
    return res


def sim_report(stage, res):
    try:
        return json.loads(res.stdout)
    except ValueError:
        raise ToolError(stage, [], "bad JSON", res.stdout[-2000:])


def machine_options(c, hw_path):
    opts = ["hardware=" + hw_path]
    if c["topology"]:
        opts.append("topology=" + gen.topology_option(c))
    if c["assignment"]:
        opts.append("device-assignment=" + gen.assignment_option(c))
    return " ".join(opts)


def loop_options(c):
    return "unroll=%d bidirectional=%s" % (c["unroll"],
                                           str(c["bidirectional"]).lower())


def sim_flags(c, hw_path):
    flags = ["--hardware", hw_path]
    if c["topology"]:
        flags += ["--topology", gen.topology_option(c)]
    if c["assignment"]:
        flags += ["--device-assignment", gen.assignment_option(c)]
    return flags


# With --async the gate and every pipeline let the collectives not
# decomposed become asynchronous (the passes' default); without it they
# say async-collectives=false, the paper's gate.
ASYNC_COLLECTIVES = False
ASYNC_OPTION = " async-collectives=false"


def gate_cmd(opt, src, c, hw_path):
    return [opt, src, "-o", os.devnull,
            "--pass-pipeline=builtin.module(func.func("
            "ovl-decompose-collective-einsum{gate=cost remarks=true %s %s%s}))"
            % (machine_options(c, hw_path), loop_options(c), ASYNC_OPTION)]


def pipeline_cmd(opt, src, out, c, hw_path, gate):
    return [opt, src, "-o", out, "--ovl-overlap-pipeline=gate=%s %s %s%s"
            % (gate, machine_options(c, hw_path), loop_options(c),
               ASYNC_OPTION)]


def sim_cmd(sim, src, c, hw_path):
    return [sim, src] + sim_flags(c, hw_path) + ["--json"]


def compute_by_op(report):
    """Compute time per op name (ovl.einsum, linalg.fill, tensor.concat,
    arith.addf, ...) of a simulator report."""
    totals = {}
    for op in report.get("ops", []):  # compute_time_s: over all its runs
        name = op["label"].split()[0]
        totals[name] = totals.get(name, 0) + op["compute_time_s"]
    return totals


def blocking_collectives(report):
    """[(op name, exposed communication)] of the blocking collectives of a
    simulator report, in program order."""
    found = []
    for op in report.get("ops", []):
        m = re.match(r"ovl\.(all_gather|reduce_scatter|all_reduce) @ "
                     r".*:(\d+):\d+$", op["label"])
        if m:
            found.append((int(m.group(2)), m.group(1),
                          op["exposed_comm_time_s"]))
    return [(name, t) for _, name, t in sorted(found)]


def write_case(c, work, hw_dir):
    """Writes case `c`'s program under `work`; returns the tools' hardware
    option for it, the case's file stem and the program's path."""
    hw_path = gen.hardware_option(c["hardware"], hw_dir)
    base = os.path.join(work, "%04d" % c["id"])
    src = base + ".mlir"
    with open(src, "w") as f:
        f.write(c["program"])
    return hw_path, base, src


def evaluate(job):
    """All tool runs of one case; returns the case's record."""
    c, opt, sim, work, hw_dir = job
    hw_path, base, src = write_case(c, work, hw_dir)
    rec = {k: v for k, v in c.items() if k not in ("program", "variants")}
    rec["file"] = src
    log = rec["commands"] = []

    def run_logged(stage, cmd):
        return run(stage, cmd, log)

    try:
        res = run_logged("gate", gate_cmd(opt, src, c, hw_path))
        rec["remarks"] = [remarks_by_line(res.stderr).get(cand["line"])
                          for cand in c["candidates"]]
        # Each candidate alone (two-candidate einsums): its full terms.
        alone = []
        for k, text in enumerate(c["variants"]):
            vsrc = "%s.only%d.mlir" % (base, k)
            with open(vsrc, "w") as f:
                f.write(text)
            res = run_logged("gate-only%d" % k,
                             gate_cmd(opt, vsrc, c, hw_path))
            alone.append(dict(src=vsrc, remark=remarks_by_line(
                res.stderr).get(c["candidates"][k]["line"])))
        rec["alone"] = alone
        runs = [(gate, src, gate, "%s.%s.mlir" % (base, gate))
                for gate in ("never", "always", "cost")]
        runs += [("only%d" % k, a["src"], "always",
                  "%s.only%d.always.mlir" % (base, k))
                 for k, a in enumerate(alone)]
        sims = {}
        for name, program, gate, out in runs:
            run_logged("pipeline-" + name,
                       pipeline_cmd(opt, program, out, c, hw_path, gate))
            sims[name] = sim_report("sim-" + name, run_logged(
                "sim-" + name, sim_cmd(sim, out, c, hw_path)))
        rec["sim"] = {k: {f: v[f] for f in (
            "step_time_s", "compute_time_s", "comm_time_s",
            "exposed_comm_time_s", "topology", "num_devices")}
            for k, v in sims.items()}
        for k, v in sims.items():
            rec["sim"][k]["compute_by_op"] = compute_by_op(v)
        rec["sim"]["never"]["collectives"] = blocking_collectives(
            sims["never"])
    except ToolError as e:
        rec["error"] = dict(stage=e.stage, rc=e.rc,
                            cmd=" ".join(shlex.quote(a) for a in e.cmd),
                            stderr=e.stderr[-2000:])
    return rec


# ---------------------------------------------------------------------------
# Analysis of one record.

def parse_topology(text):
    """(extents, wrapping dims) of overlap-sim's topology description, or
    None for a switch."""
    if "switch" in text:
        return None
    m = re.match(r"([0-9x]+) torus(.*)", text)
    extents = [int(v) for v in m.group(1).split("x")]
    rest = m.group(2)
    if not rest:
        w = [True] * len(extents)
    elif "without" in rest:
        w = [False] * len(extents)
    else:
        names = re.search(r"on (.*) only", rest).group(1).split(", ")
        index = {"x": 0, "y": 1, "z": 2}
        on = {index.get(n, None) if n in index else int(n[1:])
              for n in names}
        w = [d in on for d in range(len(extents))]
    return extents, w


def regime_of(rec):
    """latency (the collective's latency terms exceed its bandwidth term),
    else compute or comm, whichever takes longer in the simulated blocking
    program."""
    p = gen.HARDWARE[rec["hardware"]]
    cand = rec["candidates"][0]
    n = cand["n"]
    shard = rec["shards"][0]
    bw = p["link"] * p["links"] if p["rank"] == 0 else 2 * p["link"]
    if (n - 1) * p["hop"] + p["launch"] > (n - 1) * shard / bw:
        return "latency"
    never = rec["sim"]["never"]
    return "compute" if never["compute_time_s"] >= never["comm_time_s"] \
        else "comm"


TERMS = ("comp", "comm", "loop_comp", "ring", "epilogue", "blocking",
         "decomposed", "blocking_compute", "decomposed_compute")


def analyse(rec):
    """Adds the decision, predictions, errors and labels to a record that
    ran; returns the record."""
    topo = parse_topology(rec["sim"]["never"]["topology"])
    if topo:
        extents, w = topo
        rec.update(gen.mapping_labels(rec["hardware"], rec["grid"],
                                      rec["axes"][0], extents,
                                      rec["assignment"], w))
    else:
        rec.update(spans="switch", wrap="switch", ring_hops=1)
    rec["topology_text"] = rec["sim"]["never"]["topology"]
    rec["regime"] = regime_of(rec)
    rec["rank_spans"] = "%d-D grid, %s" % (rec["grid_rank"], rec["spans"])
    h = rec["ring_hops"]
    rec["ring_hop_class"] = "switch" if rec["spans"] == "switch" else (
        "1" if h <= 1 else "2" if h == 2 else "3-4" if h <= 4 else "5+")
    unpriced = sum(v for k, v in rec["sim"]["always"][
        "compute_by_op"].items() if k in UNPRICED_OPS)
    rec["unpriced_share"] = unpriced / rec["sim"]["always"]["step_time_s"]
    remarks = rec["remarks"]
    problems = []
    for k, r in enumerate(remarks):
        if r is None:
            problems.append("no remark for candidate %d" % k)
        elif r["decision"] == "undecomposable":
            problems.append("candidate %d not decomposable: %s"
                            % (k, r["text"]))
    if problems:
        rec["problem"] = "; ".join(problems)
        return rec
    decided = [r["decision"] == "decompose" for r in remarks]
    rec["decision"] = "decompose" if any(decided) else "keep"
    never = rec["sim"]["never"]["step_time_s"]
    always = rec["sim"]["always"]["step_time_s"]
    cost = rec["sim"]["cost"]["step_time_s"]
    rec["sim_blocking"], rec["sim_decomposed"], rec["sim_cost"] = \
        never, always, cost
    chosen = always if rec["decision"] == "decompose" else never
    rec["consistent"] = abs(cost - chosen) <= 1e-9 * max(chosen, 1e-12)
    # With --async, gate=always makes every collective it keeps
    # asynchronous unpriced, gate=cost only where that is not slower: the
    # cost program may beat always's, never lose to it.
    if ASYNC_COLLECTIVES and rec["decision"] == "decompose":
        rec["consistent"] = cost <= chosen * (1 + 1e-9)
    rec["sim_speedup"] = never / always
    if len(remarks) == 1:
        r = remarks[0]
        if "blocking" not in r:
            rec["problem"] = "remark without times: " + r["text"]
            return rec
        rec["pred_blocking"] = r["blocking"]
        rec["pred_decomposed"] = r["decomposed"]
        rec["winner"] = 0
        rec["terms"] = {k: r.get(k) for k in TERMS}
    else:
        full = [a["remark"] for a in rec["alone"]]
        if any(f is None or "blocking" not in f for f in full):
            rec["problem"] = "candidate alone without times"
            return rec
        comm = [f["blocking"] - f["comp"] if "comp" in f else f.get("comm")
                for f in full]
        if None in comm:
            rec["problem"] = "candidate alone without its comm term"
            return rec
        gains = [f["blocking"] - f["decomposed"] for f in full]
        # The gate's pick: the one it decomposed, else the larger gain
        # (what gate=always decomposes).
        if any(decided):
            winner = decided.index(True)
        else:
            winner = 0 if gains[0] >= gains[1] else 1
        rec["winner"] = winner
        other = 1 - winner
        # The gate's "predicted" times already count the einsum's other
        # collective (it prices the pair with it); the older terms did not.
        extra = [0.0 if f.get("form") == "predicted" else c
                 for f, c in zip(full, comm)]
        rec["pred_blocking"] = full[winner]["blocking"] + extra[other]
        rec["pred_decomposed"] = full[winner]["decomposed"] + extra[other]
        rec["terms"] = {k: full[winner].get(k) for k in TERMS}
        rec["terms"]["comm_other"] = comm[other]
        rec["terms"]["comm"] = (rec["terms"]["comm"] or 0) + comm[other]
        per = []
        for k in range(2):
            t = rec["sim"]["only%d" % k]["step_time_s"]
            pred = full[k]["decomposed"] + extra[1 - k]
            per.append(dict(pred=pred, sim=t, gain=gains[k],
                            err=abs(pred - t) / t))
        rec["per_candidate"] = per
        best = 0 if per[0]["sim"] <= per[1]["sim"] else 1
        rec["best_alone"] = best
        rec["wrong_pick"] = best != winner and \
            per[winner]["sim"] > SLOWER * per[best]["sim"]
    rec["err_blocking"] = abs(rec["pred_blocking"] - never) / never
    rec["err_decomposed"] = abs(rec["pred_decomposed"] - always) / always
    rec["pred_speedup"] = rec["pred_blocking"] / rec["pred_decomposed"]
    if rec["decision"] == "decompose" and always > SLOWER * never:
        rec["wrong"] = "decomposed-slower"
    elif rec["decision"] == "keep" and always < FASTER * never:
        rec["wrong"] = "kept-faster"
    else:
        rec["wrong"] = None
    rec["mechanism"] = mechanism(rec)
    return rec


def other_error(rec):
    """Predicted minus simulated time of the blocking collective of the
    candidate the gate did not pick (two-candidate einsums; 0 otherwise):
    it is in both programs, so it is taken out before attributing a wrong
    decision."""
    if len(rec["candidates"]) == 1:
        return 0.0
    other = rec["candidates"][1 - rec["winner"]]
    index = [c["op"] for c in rec["candidates"]][:1 - rec["winner"]].count(
        other["op"])
    same = [t for name, t in rec["sim"]["never"]["collectives"]
            if name == other["op"]]
    if index >= len(same):
        return 0.0
    return rec["terms"]["comm_other"] - same[index]


def mechanism(rec):
    """What moved the gate's gain most away from the simulated one: the
    blocking program's collective or einsum, or the decomposed program
    (split into ops the gate does not price at all, and otherwise by the
    side of max(loop comp, ring) it thought bound the loop). For two
    candidates the other candidate's blocking collective, in both
    programs, is taken out first."""
    t = rec["terms"]
    never = rec["sim"]["never"]
    e_other = other_error(rec)
    e_blk = rec["pred_blocking"] - rec["sim_blocking"] - e_other
    e_dec = rec["pred_decomposed"] - rec["sim_decomposed"] - e_other
    # pred gain - sim gain = e_blk - e_dec: the two contributions.
    delta = e_blk - e_dec
    parts = [("blocking", e_blk), ("decomposed", -e_dec)]
    agreeing = [p for p in parts if p[1] * delta > 0] or parts
    where, _ = max(agreeing, key=lambda p: abs(p[1]))
    if where == "blocking":
        # t["comm"] includes the other candidate's, like comm_time_s.
        e_comm = (t["comm"] or 0) - never["comm_time_s"] - e_other
        e_comp = (t["comp"] or 0) - never["compute_time_s"]
        what = "collective" if abs(e_comm) >= abs(e_comp) else "einsum"
        return "blocking %s %s" % (what, "underpriced" if e_blk < 0
                                   else "overpriced")
    by_op = rec["sim"]["always"]["compute_by_op"]
    extra = sum(v for k, v in by_op.items() if k in UNPRICED_OPS)
    if e_dec < 0 and extra >= 0.5 * -e_dec:
        ops = sorted(k for k, v in by_op.items()
                     if k in UNPRICED_OPS and v > 0)
        return "decomposed underpriced: loop work the gate omits (%s)" \
            % ", ".join(ops)
    if t.get("loop_comp") is not None and t.get("ring") is not None:
        side = "loop comp" if t["loop_comp"] >= t["ring"] else "ring"
    else:  # the predicted form: compute against the rest
        dc = t.get("decomposed_compute") or 0
        side = "loop comp" if dc >= rec["terms"]["decomposed"] - dc \
            else "ring"
    if e_dec > 0 and len(rec["candidates"]) == 2 and side == "ring":
        # The scheduler starts the loop's permutes before the other
        # candidate's blocking collective; the gate adds the two.
        return "decomposed overpriced: loop transfers overlap the other " \
            "candidate's blocking collective"
    return "decomposed %s (%s-bound)" % (
        "underpriced" if e_dec < 0 else "overpriced", side)


# Ops a rewrite adds besides einsums and permutes, which the simulator
# prices as a pass over their data (the gate's terms before it priced the
# built loop left them out): zero fills, the bidirectional rounds' operand
# concatenation, copies.
UNPRICED_OPS = ("linalg.fill", "tensor.concat", "linalg.copy",
                "tensor.pad", "linalg.generic")


# ---------------------------------------------------------------------------
# Statistics and tables.

def percentile(values, q):
    if not values:
        return float("nan")
    v = sorted(values)
    pos = (len(v) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def stats(values):
    return dict(n=len(values), median=percentile(values, 0.5),
                p95=percentile(values, 0.95),
                max=max(values) if values else float("nan"))


def fmt_time(seconds):
    if seconds is None:
        return "-"
    a = abs(seconds)
    if a >= 1:
        return "%.3g s" % seconds
    if a >= 1e-3:
        return "%.3g ms" % (seconds * 1e3)
    if a >= 1e-6:
        return "%.3g us" % (seconds * 1e6)
    return "%.3g ns" % (seconds * 1e9)


def pct(x):
    return "-" if x != x else "%.1f%%" % (100 * x)


def machine_short(rec):
    topo = gen.topology_option(rec) or "default"
    if rec["assignment"]:
        a = rec["assignment"]
        topo += " [%s%s]" % (",".join(map(str, a[:6])),
                             ",..." if len(a) > 6 else "")
    return topo


def case_cells(rec):
    axes = ";".join("[%s]" % ",".join(map(str, a)) for a in rec["axes"])
    return [str(rec["id"]), rec["template"], rec["hardware"],
            "%s %s" % ("x".join(map(str, rec["grid"])), axes),
            machine_short(rec), rec["placement"], rec.get("wrap", "-"),
            "%d%s" % (rec["unroll"], "b" if rec["bidirectional"] else "u"),
            rec["dtype"] + ("/" + rec["out_dtype"]
                            if rec["out_dtype"] != rec["dtype"] else ""),
            rec.get("regime", "-")]


CASE_HEADER = ["id", "template", "hardware", "grid axes", "topology "
               "[assignment]", "placement", "wrap", "unroll/dir", "dtype",
               "regime"]


def md_table(header, rows):
    lines = ["| " + " | ".join(header) + " |",
             "|" + "---|" * len(header)]
    for r in rows:
        lines.append("| " + " | ".join(r) + " |")
    return "\n".join(lines)


def reproduce(rec, seed):
    hw = gen.hardware_option(rec["hardware"], "$RESULTS/hw")
    mopts = ["hardware=" + hw]
    sflags = ["--hardware", hw]
    if rec["topology"]:
        mopts.append("topology=" + gen.topology_option(rec))
        sflags += ["--topology", gen.topology_option(rec)]
    if rec["assignment"]:
        mopts.append("device-assignment=" + gen.assignment_option(rec))
        sflags += ["--device-assignment", gen.assignment_option(rec)]
    f = "/tmp/gate-sweep-%d.mlir" % rec["id"]
    return ("bench/gate-sweep/gen.py --seed %s --index %d --out %s && "
            "overlap-opt %s --ovl-overlap-pipeline=\"gate=always %s %s\" | "
            "overlap-sim - %s --json" % (
                seed, rec["id"], f, f, " ".join(mopts), loop_options(rec),
                " ".join(sflags)))


def failure_table(title, recs, key, extra_header, extra, seed, limit=20):
    recs = sorted(recs, key=key, reverse=True)[:limit]
    if not recs:
        return "### %s: none\n" % title
    rows = [case_cells(r) + extra(r) for r in recs]
    text = "### %s (worst %d)\n\n%s\n\nReproduce (RESULTS: the results " \
        "directory, for the JSON hardware files):\n\n" % (
            title, len(recs), md_table(CASE_HEADER + extra_header, rows))
    text += "\n".join("    # %d\n    %s" % (r["id"], reproduce(r, seed))
                      for r in recs)
    return text + "\n"


TIME_HEADER = ["pred blk", "sim blk", "pred dec", "sim dec", "gate says",
               "sim says"]


def time_cells(r):
    return [fmt_time(r["pred_blocking"]), fmt_time(r["sim_blocking"]),
            fmt_time(r["pred_decomposed"]), fmt_time(r["sim_decomposed"]),
            "%.2fx" % r["pred_speedup"], "%.2fx" % r["sim_speedup"]]


def wrong_cells(r):
    return time_cells(r) + [r["mechanism"]]


def mechanism_counts(recs):
    counts = {}
    for r in recs:
        counts[r["mechanism"]] = counts.get(r["mechanism"], 0) + 1
    return ", ".join("%s %d" % (k, v) for k, v in sorted(
        counts.items(), key=lambda kv: -kv[1])) or "-"


BREAKDOWNS = ["hardware", "kind", "wrap", "unroll", "bidirectional",
              "grid_rank", "placement", "spans", "rank_spans",
              "ring_hop_class", "n", "dtype", "regime", "mode"]


def breakdown(name, recs):
    groups = {}
    for r in recs:
        groups.setdefault(str(r.get(name)), []).append(r)
    rows = []
    def order(k):
        m = re.match(r"\d+", k)
        return (0, int(m.group()), k) if m else (1, 0, k)

    for key in sorted(groups, key=order):
        g = groups[key]
        eb = [r["err_blocking"] for r in g]
        ed = [r["err_decomposed"] for r in g]
        rows.append([key, str(len(g)),
                     str(sum(r["decision"] == "decompose" for r in g)),
                     str(sum(r["wrong"] == "decomposed-slower" for r in g)),
                     str(sum(r["wrong"] == "kept-faster" for r in g)),
                     pct(percentile(eb, 0.5)), pct(percentile(eb, 0.95)),
                     pct(percentile(ed, 0.5)), pct(percentile(ed, 0.95)),
                     pct(percentile(eb + ed, 0.5)),
                     pct(percentile(eb + ed, 0.95))])
    return "### by %s\n\n%s\n" % (name, md_table(
        [name, "programs", "decomposed", "dec-slower", "kept-faster",
         "blk med", "blk p95", "dec med", "dec p95", "all med", "all p95"],
        rows))


def report(records, seed, elapsed):
    errors = [r for r in records if "error" in r]
    ran = [r for r in records if "error" not in r]
    problems = [r for r in ran if "problem" in r]
    good = [r for r in ran if "problem" not in r]
    cands = sum(len(r["candidates"]) for r in records)
    slower = [r for r in good if r["wrong"] == "decomposed-slower"]
    faster = [r for r in good if r["wrong"] == "kept-faster"]
    inconsistent = [r for r in good if not r["consistent"]]
    two = [r for r in good if len(r["candidates"]) == 2]
    picks = [r for r in two if r["wrong_pick"]]
    eb = [r["err_blocking"] for r in good]
    ed = [r["err_decomposed"] for r in good]
    sb, sd, sa = stats(eb), stats(ed), stats(eb + ed)
    per = [p["err"] for r in two for p in r["per_candidate"]]
    one = [r for r in good if len(r["candidates"]) == 1]
    s1b = stats([r["err_blocking"] for r in one])
    s1d = stats([r["err_decomposed"] for r in one])
    summary = dict(
        programs=len(records), candidates=cands, tool_errors=len(errors),
        problems=len(problems), analysed=len(good),
        decomposed=sum(r["decision"] == "decompose" for r in good),
        kept=sum(r["decision"] == "keep" for r in good),
        decomposed_slower=len(slower), kept_faster=len(faster),
        inconsistent=len(inconsistent), two_candidate=len(two),
        wrong_pick=len(picks), err_blocking=sb, err_decomposed=sd,
        err_all=sa, err_per_candidate=stats(per),
        err_single_blocking=s1b, err_single_decomposed=s1d,
        mechanisms={"decomposed-slower": mechanism_counts(slower),
                    "kept-faster": mechanism_counts(faster)},
        seconds=elapsed)
    lines = [
        "## Summary",
        "",
        "gate-sweep: %d programs, %d candidates, seed %s, %.0f s"
        % (len(records), cands, seed, elapsed),
        "tool errors: %d, unexpected remarks: %d, analysed: %d"
        % (len(errors), len(problems), len(good)),
        "decisions: %d decomposed, %d kept blocking"
        % (summary["decomposed"], summary["kept"]),
        "wrong decisions: %d decomposed-slower (> 1%%), %d kept-faster "
        "(> 5%%)" % (len(slower), len(faster)),
        "cost pipeline differs from the gate's choice: %d"
        % len(inconsistent),
        "two-candidate einsums: %d, gate picked the slower candidate "
        "(> 1%%): %d" % (len(two), len(picks)),
        "prediction error blocking:   median %s, p95 %s, max %s"
        % (pct(sb["median"]), pct(sb["p95"]), pct(sb["max"])),
        "prediction error decomposed: median %s, p95 %s, max %s"
        % (pct(sd["median"]), pct(sd["p95"]), pct(sd["max"])),
        "prediction error together:   median %s, p95 %s, max %s"
        % (pct(sa["median"]), pct(sa["p95"]), pct(sa["max"])),
        "single-candidate programs (%d): blocking median %s, p95 %s; "
        "decomposed median %s, p95 %s" % (
            len(one), pct(s1b["median"]), pct(s1b["p95"]),
            pct(s1d["median"]), pct(s1d["p95"])),
        "per candidate alone (two-candidate einsums): median %s, p95 %s"
        % (pct(summary["err_per_candidate"]["median"]),
           pct(summary["err_per_candidate"]["p95"])),
        "decomposed programs where the rewrite's extra ops (%s) take "
        ">= 5%% of the step: %d" % (", ".join(UNPRICED_OPS), sum(
            r["unpriced_share"] >= 0.05 for r in good)),
        "mechanisms, decomposed-slower: %s"
        % summary["mechanisms"]["decomposed-slower"],
        "mechanisms, kept-faster: %s" % summary["mechanisms"]["kept-faster"],
        ""]
    out = "\n".join(lines) + "\n"
    out += "## Failures\n\n"
    if errors:
        rows = [case_cells(r) + [r["error"]["stage"], str(r["error"]["rc"]),
                                 (r["error"]["stderr"].strip().splitlines()
                                  or [""])[0][:160].replace("|", "\\|")]
                for r in errors]
        out += "### Tool errors (%d)\n\n%s\n\n" % (len(errors), md_table(
            CASE_HEADER + ["stage", "rc", "stderr"], rows))
        out += "\n".join("    # %d\n    %s" % (r["id"], r["error"]["cmd"])
                         for r in errors[:5]) + "\n\n"
    else:
        out += "### Tool errors: none\n\n"
    if problems:
        rows = [case_cells(r) + [r["problem"][:200].replace("|", "\\|")]
                for r in problems]
        out += "### Unexpected remarks (%d)\n\n%s\n\n" % (
            len(problems), md_table(CASE_HEADER + ["problem"], rows))
    out += failure_table(
        "Decomposed by the gate, simulated > 1% slower", slower,
        lambda r: r["sim_decomposed"] / r["sim_blocking"],
        TIME_HEADER + ["mechanism"], wrong_cells, seed) + "\n"
    out += failure_table(
        "Kept blocking, decomposed simulates > 5% faster", faster,
        lambda r: r["sim_blocking"] / r["sim_decomposed"],
        TIME_HEADER + ["mechanism"], wrong_cells, seed) + "\n"
    if inconsistent:
        out += failure_table(
            "Cost pipeline's program is neither never's nor always'",
            inconsistent, lambda r: abs(r["sim_cost"] / r["sim_blocking"]),
            ["sim never", "sim always", "sim cost", "gate"],
            lambda r: [fmt_time(r["sim_blocking"]),
                       fmt_time(r["sim_decomposed"]),
                       fmt_time(r["sim_cost"]), r["decision"]], seed) + "\n"
    out += failure_table(
        "Worst blocking predictions", good, lambda r: r["err_blocking"],
        TIME_HEADER + ["err blk", "comp", "sim comp", "comm",
                       "sim comm"],
        lambda r: time_cells(r) + [
            pct(r["err_blocking"]), fmt_time(r["terms"]["comp"]),
            fmt_time(r["sim"]["never"]["compute_time_s"]),
            fmt_time(r["terms"]["comm"]),
            fmt_time(r["sim"]["never"]["comm_time_s"])], seed) + "\n"
    out += failure_table(
        "Worst decomposed predictions", good, lambda r: r["err_decomposed"],
        TIME_HEADER + ["err dec", "loop comp", "ring", "epilogue",
                       "sim comp", "sim comm", "sim exposed"],
        lambda r: time_cells(r) + [
            pct(r["err_decomposed"]), fmt_time(r["terms"]["loop_comp"]),
            fmt_time(r["terms"]["ring"]), fmt_time(r["terms"]["epilogue"]),
            fmt_time(r["sim"]["always"]["compute_time_s"]),
            fmt_time(r["sim"]["always"]["comm_time_s"]),
            fmt_time(r["sim"]["always"]["exposed_comm_time_s"])], seed) \
        + "\n"
    if two:
        out += failure_table(
            "Two-candidate einsums: gate's pick simulates slower than the "
            "other candidate", picks,
            lambda r: r["per_candidate"][r["winner"]]["sim"]
            / r["per_candidate"][r["best_alone"]]["sim"],
            ["picked", "pred gains 0/1", "sim alone 0/1", "sim blk"],
            lambda r: [str(r["winner"]), "%s / %s" % (
                fmt_time(r["per_candidate"][0]["gain"]),
                fmt_time(r["per_candidate"][1]["gain"])), "%s / %s" % (
                fmt_time(r["per_candidate"][0]["sim"]),
                fmt_time(r["per_candidate"][1]["sim"])),
                fmt_time(r["sim_blocking"])], seed) + "\n"
    out += "## Breakdowns\n\n(err: |predicted - simulated| / simulated, " \
        "blocking (blk) and decomposed (dec) programs)\n\n"
    for name in BREAKDOWNS:
        out += breakdown(name, good) + "\n"
    return summary, out


def check(summary):
    """The --check targets: [(description, met)]."""
    s = summary
    return [
        ("no tool error", s["tool_errors"] == 0 and s["problems"] == 0),
        ("cost pipeline equals the gate's choice", s["inconsistent"] == 0),
        ("0 decomposed-slower (> 1%)", s["decomposed_slower"] == 0),
        ("0 kept-blocking-faster (> 5%)", s["kept_faster"] == 0),
        ("median |error| <= 3%", s["err_all"]["median"] <= TARGET_MEDIAN),
        ("p95 |error| <= 10%", s["err_all"]["p95"] <= TARGET_P95),
    ]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, default=600)
    parser.add_argument("--seed", default="1")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--fast", action="store_true",
                        help="the first %d cases" % FAST_COUNT)
    parser.add_argument("--only", help="comma-separated case ids")
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--async", dest="async_collectives",
                        action="store_true",
                        help="async-collectives=true for the gate and "
                        "every pipeline")
    parser.add_argument("--results", default=os.path.join(HERE, "results"))
    args = parser.parse_args()
    global ASYNC_COLLECTIVES, ASYNC_OPTION
    ASYNC_COLLECTIVES = args.async_collectives
    ASYNC_OPTION = " async-collectives=%s" % (
        "true" if ASYNC_COLLECTIVES else "false")
    opt, sim = tool("overlap-opt"), tool("overlap-sim")
    count = FAST_COUNT if args.fast else args.count
    ids = [int(i) for i in args.only.split(",")] if args.only \
        else range(count)
    work = os.path.join(args.results, "mlir")
    os.makedirs(work, exist_ok=True)
    hw_dir = os.path.join(args.results, "hw")
    gen.write_hardware_files(hw_dir)
    start = time.time()
    cases = [gen.case(args.seed, i) for i in ids]
    jobs = [(c, opt, sim, work, hw_dir) for c in cases]
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        records = list(pool.map(evaluate, jobs))
    for r in records:
        if "error" not in r:
            try:
                analyse(r)
            except Exception as e:  # a harness bug: report, never drop
                r["problem"] = "analysis failed: %s: %s" % (
                    type(e).__name__, e)
    elapsed = time.time() - start
    summary, text = report(records, args.seed, elapsed)
    targets = check(summary)
    text += "## Targets\n\n" + "\n".join(
        "%s %s" % ("PASS" if met else "MISS", what)
        for what, met in targets) + "\n"
    if args.only:
        text += "\n## Cases\n"
        for r in records:
            text += "\n### case %d\n\n" % r["id"]
            for k in ("template", "hardware", "grid", "axes", "topology",
                      "assignment", "unroll", "bidirectional", "dtype",
                      "out_dtype", "sizes", "placement", "wrap", "regime",
                      "decision", "pred_blocking", "sim_blocking",
                      "pred_decomposed", "sim_decomposed", "terms",
                      "per_candidate", "wrong", "error", "problem"):
                if k in r:
                    text += "- %s: %s\n" % (k, json.dumps(r[k]))
            for rem in r.get("remarks") or []:
                text += "- remark: %s\n" % (rem or {}).get("text")
            for a in r.get("alone") or []:
                text += "- alone remark: %s\n" % (a["remark"] or {}).get(
                    "text")
            text += "- commands:\n" + "".join(
                "    %s\n" % c for c in r["commands"])
    print(text)
    with open(os.path.join(args.results, "table.md"), "w") as f:
        f.write("# Gate sweep: seed %s, %d programs\n\n" % (
            args.seed, len(records)) + text)
    with open(os.path.join(args.results, "results.json"), "w") as f:
        json.dump(dict(summary=summary, targets=[
            dict(target=w, met=m) for w, m in targets], cases=records), f,
            indent=1)
    print("wrote %s/{table.md,results.json}" % args.results)
    if args.check and not all(met for _, met in targets):
        sys.exit(1)


if __name__ == "__main__":
    main()
