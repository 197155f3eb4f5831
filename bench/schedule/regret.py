#!/usr/bin/python3
"""How far ovl-schedule's orders are from the best order of each block.

Draws random small blocks (at most 10 ops: einsums of varied cost,
collective_permute_start/done pairs on a 1-D or 2-D grid, data dependencies
between them), deterministic from --seed. For every block it simulates
EVERY order of its ops that respects their SSA dependencies (overlap-sim
--all-functions on one module holding each order as a function), and the
order each scheduler (ovl-schedule{algorithm=bottom-up|top-down}, on the
same machine) makes of the block as drawn (the input order). Reports per
algorithm:

  slower   blocks where the scheduled order simulates slower than the input
           order (the target is none)
  within   blocks within 2% of the best order (the target is at least 95%;
           --within and --fraction change both)
  ratio    scheduled / best step time: median and worst

Blocks with more than --max-orders orders are redrawn (same seed, next
attempt), so the enumeration stays small; the blocks' ops only have SSA
dependencies (no accumulators, a fresh receive buffer per transfer), so the
scheduler may choose any of the orders enumerated.

The scheduled order is read back from the ops' locations and its time
checked against the enumeration's for that order (the two simulations must
agree), so the harness cannot report an order it did not simulate.

Usage: regret.py [--blocks N] [--seed S] [--max-orders M] [--check]
                 [--bin DIR] [--out DIR] [--quiet] [--show BLOCK]
  --bin (or OVERLAP_BIN): directory of overlap-opt and overlap-sim
  (default build/bin). --check exits 1 when a target is missed. --show
  prints one block's input, best and scheduled orders. Writes
  OUT/regret.json (per block) and OUT/regret.md (summary), OUT defaulting
  to bench/schedule/results.
"""

import argparse
import json
import os
import random
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# name: (grid shape, topology). The 2x4 grid on 1x2x4 and 4x4x4 is the
# issue's machine; the ring of 4 has wrap-around (a 4x4x4 cube), the ring of
# 8 on 2x2x2 routes a shift over several hops that share links.
MACHINES = {
    "2x4@1x2x4": ((2, 4), "1x2x4"),
    "2x4@4x4x4": ((2, 4), "4x4x4"),
    "4@4x4x4": ((4,), "4x4x4"),
    "8@2x2x2": ((8,), "2x2x2"),
}
ALGORITHMS = ("bottom-up", "top-down")
HARDWARE = "tpu-v4"
ROWS = (256, 512, 1024)
WIDTHS = (1024, 2048, 4096, 8192)
# Targets of issue 12 (--within, --fraction).
WITHIN = 0.02
WITHIN_FRACTION = 0.95
# Two simulations of one order agree exactly; this only absorbs printing.
SAME = 1e-9
CHUNK = 200


def tool(bindir, name):
    path = os.path.join(bindir, name)
    if not os.access(path, os.X_OK):
        sys.exit("regret.py: %s not found; build first or pass --bin" % path)
    return path


def run(cmd, stdin=None):
    res = subprocess.run(cmd, input=stdin, capture_output=True, text=True)
    if res.returncode != 0:
        sys.exit("regret.py: %s failed (%d):\n%s" %
                 (" ".join(cmd[:3]), res.returncode, res.stderr[-3000:]))
    return res.stdout


class Block:
    """One drawn block: ops in input order, each with the text of its line,
    the SSA values it defines and uses, and the function's signature."""

    def __init__(self, name, machine, rows):
        self.name = name
        self.machine = machine
        self.rows = rows
        self.args = []      # (name, type)
        self.ops = []       # dict(kind, text, defs, uses)
        self.weights = {}   # (in, out) -> arg name

    def ttype(self, width):
        return "tensor<%dx%dxbf16>" % (self.rows, width)

    def arg(self, prefix, type_):
        name = "%%%s%d" % (prefix, len(self.args))
        self.args.append((name, type_))
        return name

    def weight(self, cin, cout):
        if (cin, cout) not in self.weights:
            self.weights[(cin, cout)] = self.arg(
                "w", "tensor<%dx%dxbf16>" % (cin, cout))
        return self.weights[(cin, cout)]

    def preds(self):
        """For each op, the ops whose results it uses."""
        defined = {}
        for i, op in enumerate(self.ops):
            for d in op["defs"]:
                defined[d] = i
        return [sorted({defined[u] for u in op["uses"] if u in defined})
                for op in self.ops]

    def function(self, fname, order):
        used = {u for op in self.ops for u in op["uses"]}
        results = [(d, t) for op in self.ops for d, t in op["results"]
                   if d not in used]
        lines = ["func.func @%s(%s) -> (%s) {" % (
            fname, ", ".join("%s: %s" % a for a in self.args),
            ", ".join(t for _, t in results))]
        # The location names the op, so that a scheduled order reads back.
        lines += ['  %s loc("op%d")' % (self.ops[i]["text"], i) for i in order]
        lines.append("  return %s : %s" % (", ".join(d for d, _ in results),
                                          ", ".join(t for _, t in results)))
        lines.append("}")
        return "\n".join(lines)


def draw_block(rng, name, machine):
    """A block of 4-10 ops with 1-3 transfers, drawn from `rng`."""
    shape, _ = MACHINES[machine]
    block = Block(name, machine, rng.choice(ROWS))
    n_ops = rng.randint(4, 10)
    transfers = rng.randint(1, min(3, (n_ops - 1) // 2))
    computes = n_ops - 2 * transfers
    # (name, width) of the data values available so far, newest last.
    values = [(block.arg("x", block.ttype(w)), w)
              for w in rng.sample(WIDTHS, rng.randint(1, 2))]
    kinds = ["c"] * computes + ["s"] * transfers
    rng.shuffle(kinds)
    # Each done goes at a random place after its start.
    sequence = list(kinds)
    for t in range(transfers):
        starts = [i for i, k in enumerate(sequence) if k == "s"]
        pos = rng.randint(starts[t] + 1, len(sequence))
        sequence.insert(pos, "d%d" % t)
    counter = [0]

    def fresh(prefix):
        counter[0] += 1
        return "%%%s%d" % (prefix, counter[0])

    def pick():
        # Recent values more often: chains as well as independent work.
        k = min(len(values) - 1, int(rng.expovariate(0.7)))
        return values[len(values) - 1 - k]

    open_transfers = []
    for k in sequence:
        if k == "c":
            src, width = pick()
            same = [v for v in values if v[1] == width and v[0] != src]
            if same and rng.random() < 0.25:
                other = rng.choice(same)[0]
                res = fresh("e")
                t = block.ttype(width)
                text = '%s = ovl.einsum "ij,ij->ij" %s, %s : %s, %s -> %s' % (
                    res, src, other, t, t, t)
                uses = [src, other]
                out_width = width
            else:
                out_width = rng.choice(WIDTHS)
                w = block.weight(width, out_width)
                res = fresh("e")
                text = '%s = ovl.einsum "ik,kj->ij" %s, %s : %s, %s -> %s' % (
                    res, src, w, block.ttype(width),
                    "tensor<%dx%dxbf16>" % (width, out_width),
                    block.ttype(out_width))
                uses = [src, w]
            block.ops.append(dict(kind="einsum", text=text, defs=[res],
                                  uses=uses,
                                  results=[(res, block.ttype(out_width))]))
            values.append((res, out_width))
        elif k == "s":
            src, width = pick()
            axis = rng.randrange(len(shape))
            n = shape[axis]
            shift = rng.choice((1, -1)) if n > 2 else 1
            pairs = ", ".join("%d -> %d" % (i, (i + shift) % n)
                              for i in range(n))
            buf = block.arg("r", block.ttype(width))
            p, t = fresh("p"), fresh("t")
            text = ("%s, %s = ovl.collective_permute_start %s into %s on @grid "
                    "axes [%d] pairs [%s] : %s" % (p, t, src, buf, axis,
                                                   pairs, block.ttype(width)))
            block.ops.append(dict(kind="start", text=text, defs=[p, t],
                                  uses=[src], results=[]))
            open_transfers.append((p, t, src, width))
        else:
            p, t, src, width = open_transfers[int(k[1:])]
            res = fresh("d")
            text = ("%s = ovl.collective_permute_done %s keep(%s) into %s : %s"
                    % (res, t, src, p, block.ttype(width)))
            block.ops.append(dict(kind="done", text=text, defs=[res],
                                  uses=[t, src, p],
                                  results=[(res, block.ttype(width))]))
            values.append((res, width))
    return block


def count_orders(preds):
    """Linear extensions of the dependency order (dynamic programming over
    the sets of placed ops)."""
    n = len(preds)
    need = [sum(1 << p for p in ps) for ps in preds]
    ways = [0] * (1 << n)
    ways[0] = 1
    for mask in range(1 << n):
        if not ways[mask]:
            continue
        for i in range(n):
            if not mask >> i & 1 and need[i] & mask == need[i]:
                ways[mask | 1 << i] += ways[mask]
    return ways[-1]


def orders(preds):
    n = len(preds)
    order, placed = [], [False] * n

    def rec():
        if len(order) == n:
            yield list(order)
            return
        for i in range(n):
            if not placed[i] and all(placed[p] for p in preds[i]):
                placed[i] = True
                order.append(i)
                yield from rec()
                order.pop()
                placed[i] = False
    yield from rec()


def module(blocks_functions, shape):
    grid = "x".join(map(str, shape))
    return "shard.grid @grid(shape = %s)\n\n%s\n" % (
        grid, "\n\n".join(blocks_functions))


def simulate(bindir, functions, shape, topology):
    """The step time of each function, by name. overlap-sim resolves the
    grid once per function in a symbol table of the whole module, so the
    functions go in modules of CHUNK."""
    times = {}
    for i in range(0, len(functions), CHUNK):
        out = run([tool(bindir, "overlap-sim"), "-", "--all-functions",
                   "--json", "--hardware", HARDWARE, "--topology", topology],
                  stdin=module(functions[i:i + CHUNK], shape))
        times.update((r["function"], r["report"]["step_time_s"])
                     for r in json.loads(out))
    return times


def split_functions(text):
    """The functions of a printed module, each as text."""
    funcs, current, indent = [], None, ""
    for line in text.splitlines():
        if line.lstrip().startswith("func.func @"):
            current, indent = [], line[:len(line) - len(line.lstrip())]
        if current is not None:
            current.append(line)
            if line.startswith(indent + "}"):
                funcs.append("\n".join(current))
                current = None
    return funcs


def schedule(bindir, text, algorithm, topology):
    return run([tool(bindir, "overlap-opt"), "-", "--mlir-print-debuginfo",
                "--mlir-print-local-scope", "--pass-pipeline",
                "builtin.module(func.func(ovl-schedule{algorithm=%s "
                "hardware=%s topology=%s}))" % (algorithm, HARDWARE, topology)],
               stdin=text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--blocks", type=int, default=200)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--max-orders", type=int, default=5040)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--within", type=float, default=WITHIN,
                    help="how far from the best order counts as near it")
    ap.add_argument("--fraction", type=float, default=WITHIN_FRACTION,
                    help="the fraction of blocks that must be near the best")
    ap.add_argument("--bin", default=os.environ.get(
        "OVERLAP_BIN", os.path.join(ROOT, "build", "bin")))
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument("--machines", default=",".join(MACHINES),
                    help="the machines whose blocks to run, of %s (the "
                    "blocks drawn are the same; the others are skipped)"
                    % ", ".join(MACHINES))
    ap.add_argument("--show", metavar="BLOCK",
                    help="print the orders of one block (e.g. b7)")
    args = ap.parse_args()

    started = time.monotonic()
    names = list(MACHINES)
    chosen = args.machines.split(",")
    for name in chosen:
        if name not in MACHINES:
            print("regret.py: unknown machine '%s'; the machines are %s"
                  % (name, ", ".join(MACHINES)), file=sys.stderr)
            sys.exit(2)
    blocks = []
    for b in range(args.blocks):
        machine = names[b % len(names)]
        if machine not in chosen:
            continue
        for attempt in range(1000):
            rng = random.Random("%d:%d:%d" % (args.seed, b, attempt))
            block = draw_block(rng, "b%d" % b, machine)
            if count_orders(block.preds()) <= args.max_orders:
                break
        else:
            sys.exit("regret.py: no block %d with at most %d orders"
                     % (b, args.max_orders))
        blocks.append(block)

    results = []
    for machine in names:
        shape, topology = MACHINES[machine]
        mine = [b for b in blocks if b.machine == machine]
        if not mine:
            continue
        all_orders, funcs = {}, []
        for b in mine:
            all_orders[b.name] = list(orders(b.preds()))
            for k, order in enumerate(all_orders[b.name]):
                funcs.append(b.function("%s_o%d" % (b.name, k), order))
        times = simulate(args.bin, funcs, shape, topology)
        inputs = module([b.function(b.name, range(len(b.ops))) for b in mine],
                        shape)
        sched, sched_orders = {}, {}
        for a in ALGORITHMS:
            funcs = split_functions(schedule(args.bin, inputs, a, topology))
            sched[a] = simulate(args.bin, funcs, shape, topology)
            for f in funcs:
                name = re.match(r"\s*func.func @(\w+)", f).group(1)
                sched_orders[a, name] = [
                    int(k) for k in re.findall(r'loc\("op(\d+)"\)', f)]
        for b in mine:
            order_times = [times["%s_o%d" % (b.name, k)]
                           for k in range(len(all_orders[b.name]))]
            identity = all_orders[b.name].index(list(range(len(b.ops))))
            row = dict(block=b.name, machine=machine, ops=len(b.ops),
                       rows=b.rows, orders=len(order_times),
                       best_s=min(order_times), worst_s=max(order_times),
                       input_s=order_times[identity])
            best = min(range(len(order_times)), key=order_times.__getitem__)
            row["best_order"] = all_orders[b.name][best]
            for a in ALGORITHMS:
                order = sched_orders[a, b.name]
                if order not in all_orders[b.name]:
                    sys.exit("regret.py: %s's order of %s, %s, is not one of "
                             "its orders" % (a, b.name, order))
                enumerated = order_times[all_orders[b.name].index(order)]
                if abs(sched[a][b.name] - enumerated) > SAME * enumerated:
                    sys.exit("regret.py: %s's order of %s takes %g s, %g s "
                             "in the enumeration" % (a, b.name,
                                                     sched[a][b.name],
                                                     enumerated))
                row[a + "_s"] = sched[a][b.name]
                row[a + "_order"] = order
            results.append(row)
            if b.name == args.show:
                show(b, row)

    summary = summarize(results, args.within)
    report = format_summary(summary, results, args,
                            time.monotonic() - started)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "regret.json"), "w") as f:
        json.dump(dict(seed=args.seed, blocks=args.blocks,
                       max_orders=args.max_orders, summary=summary,
                       results=results), f, indent=1)
    with open(os.path.join(args.out, "regret.md"), "w") as f:
        f.write(report + "\n")
    if not args.quiet:
        print(report)
    failures = [a for a in ALGORITHMS
                if summary[a]["slower"] or
                summary[a]["within_fraction"] < args.fraction]
    for a in failures:
        print("FAIL: %s: %d blocks slower than the input order, %.1f%% "
              "within %g%% of the best (target: none slower, >= %g%%)"
              % (a, summary[a]["slower"], 100 * summary[a]["within_fraction"],
                 100 * args.within, 100 * args.fraction))
    if args.check and failures:
        return 1
    if args.check:
        print("PASS")
    return 0


def show(block, row):
    """Prints a block's input, best and scheduled orders with their times."""
    print("%s on %s, %d orders, best %.3f us, worst %.3f us" % (
        block.name, block.machine, row["orders"], 1e6 * row["best_s"],
        1e6 * row["worst_s"]))
    for what in ("input", "best") + ALGORITHMS:
        order = (list(range(len(block.ops))) if what == "input" else
                 row[what + "_order"])
        time = row["input_s"] if what == "input" else (
            row["best_s"] if what == "best" else row[what + "_s"])
        print("-- %s: %.3f us" % (what, 1e6 * time))
        for i in order:
            print("  [%d] %s" % (i, block.ops[i]["text"]))
    print()


def summarize(results, within):
    summary = {}
    for a in ALGORITHMS + ("input",):
        key = a + "_s"
        ratios = [r[key] / r["best_s"] for r in results]
        near = sum(x <= 1 + within for x in ratios)
        summary[a] = dict(
            slower=sum(r[key] > r["input_s"] * (1 + SAME) for r in results),
            faster=sum(r[key] < r["input_s"] * (1 - SAME) for r in results),
            within=near, within_fraction=near / max(1, len(ratios)),
            median_ratio=statistics.median(ratios) if ratios else 1.0,
            worst_ratio=max(ratios) if ratios else 1.0)
    return summary


def host():
    """The CPU model, as lscpu's 'Model name' shows it."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


def format_summary(summary, results, args, seconds):
    n = len(results)
    orders = sorted(r["orders"] for r in results)
    lines = ["blocks: %d (seed %d), %d orders simulated (per block: median "
             "%d, max %d); %.1f s on %s, %d CPUs"
             % (n, args.seed, sum(orders),
                statistics.median(orders) if orders else 0,
                orders[-1] if orders else 0, seconds, host(),
                os.cpu_count() or 1),
             "",
             "| order | slower than input | faster than input | within %g%% "
             "of best | median / best | worst / best |" % (100 * args.within),
             "|---|---|---|---|---|---|"]
    for a in ALGORITHMS + ("input",):
        s = summary[a]
        lines.append("| %s | %d | %d | %d/%d (%.1f%%) | %.4f | %.4f |" % (
            a, s["slower"], s["faster"], s["within"], n,
            100 * s["within_fraction"], s["median_ratio"], s["worst_ratio"]))
    for a in ALGORITHMS:
        worst = sorted(results, key=lambda r: r[a + "_s"] / r["best_s"])[-3:]
        lines.append("")
        lines.append("%s, worst blocks: %s" % (a, ", ".join(
            "%s (%s, %.3f)" % (r["block"], r["machine"],
                               r[a + "_s"] / r["best_s"])
            for r in reversed(worst))))
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
