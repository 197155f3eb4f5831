"""Plots of simulated runs (matplotlib, Agg backend: no display needed)."""

import json
import os


def _pyplot():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _load_trace(trace_or_report):
    data = trace_or_report
    if isinstance(data, (str, os.PathLike)):
        with open(data) as f:
            data = json.load(f)
    if isinstance(data, dict) and "trace" in data:
        data = data["trace"]
    if isinstance(data, dict) and "traceEvents" in data:
        return data["traceEvents"]
    if isinstance(data, list):
        return data
    raise ValueError("plot_timeline needs an overlap-sim --trace JSON (a "
                     "path or a dict), or a report of overlap.trace(); a "
                     "report of overlap.simulate() has no timeline")


def plot_timeline(trace_or_report, path, title=None, max_devices=16):
    """Draws the timeline of a simulated run: for each device (up to
    `max_devices`), its compute ops and its waits on communication, from
    an `overlap-sim --trace` JSON (path or dict) or a report of
    `overlap.trace()`. Writes the image to `path` (PNG by extension)."""
    events = _load_trace(trace_or_report)
    names = {}
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "process_name":
            names[e["pid"]] = e.get("args", {}).get("name", str(e["pid"]))
    devices = sorted(pid for pid, n in names.items() if n.startswith("device"))
    devices = devices[:max_devices]
    row = {pid: i for i, pid in enumerate(devices)}
    compute, wait = {}, {}
    end = 0.0
    for e in events:
        if e.get("ph") != "X" or e.get("pid") not in row:
            continue
        bar = (e["ts"], e.get("dur", 0.0))
        end = max(end, bar[0] + bar[1])
        if e.get("cat") == "compute":
            compute.setdefault(e["pid"], []).append(bar)
        elif e.get("cat") == "wait":
            wait.setdefault(e["pid"], []).append(bar)
    # Trace times are microseconds; pick a readable unit.
    scale, unit = (1e-3, "ms") if end > 1e4 else (1.0, "us")
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(12, 1.0 + 0.45 * max(len(devices), 1)))
    for pid in devices:
        y = row[pid]
        ax.broken_barh([(t * scale, d * scale) for t, d in compute.get(pid, [])],
                       (y - 0.4, 0.4), facecolors="tab:blue",
                       edgecolors="white", linewidth=0.3)
        ax.broken_barh([(t * scale, d * scale) for t, d in wait.get(pid, [])],
                       (y, 0.4), facecolors="tab:red")
    ax.set_yticks(range(len(devices)))
    ax.set_yticklabels([names[p] for p in devices])
    ax.invert_yaxis()
    ax.set_xlabel("time (%s)" % unit)
    ax.set_xlim(0, max(end * scale, 1e-12))
    from matplotlib.patches import Patch
    ax.legend(handles=[Patch(color="tab:blue", label="compute"),
                       Patch(color="tab:red", label="wait")],
              loc="lower right", bbox_to_anchor=(1.0, 1.0), ncol=2,
              frameon=False)
    ax.set_title(title or "simulated timeline", loc="left")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def _step(value):
    if isinstance(value, dict):
        return float(value["step_time_s"])
    return float(value)


def plot_speedup(results, path, title=None):
    """Bar chart of speedups. `results`: {name: (baseline, overlapped)} or a
    list of (name, baseline, overlapped), each time a step time in seconds
    or a simulator report (its step_time_s). Writes `path`; returns the
    speedups {name: baseline / overlapped}."""
    if isinstance(results, dict):
        rows = [(name, b, o) for name, (b, o) in results.items()]
    else:
        rows = [tuple(r) for r in results]
    speedups = {name: _step(b) / _step(o) for name, b, o in rows}
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(max(4, 1.2 * len(rows) + 2), 4))
    names = list(speedups)
    bars = ax.bar(names, [speedups[n] for n in names], color="tab:green")
    for bar, n in zip(bars, names):
        ax.annotate("%.2fx" % speedups[n], (bar.get_x() + bar.get_width() / 2,
                                            bar.get_height()),
                    ha="center", va="bottom")
    ax.axhline(1.0, color="gray", linewidth=0.8)
    ax.set_ylabel("speedup (baseline / overlapped step time)")
    ax.set_title(title or "speedup of the overlapped programs")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return speedups
