"""Plots of simulated runs (matplotlib, Agg backend: no display needed)."""

import json
import os


def _pyplot():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _load_trace(trace_or_report):
    """(events, otherData) of a trace file, trace dict or trace() report."""
    data = trace_or_report
    if isinstance(data, (str, os.PathLike)):
        with open(data) as f:
            data = json.load(f)
    if isinstance(data, dict) and "trace" in data:
        data = data["trace"]
    if isinstance(data, dict) and "traceEvents" in data:
        return data["traceEvents"], data.get("otherData", {})
    if isinstance(data, list):
        return data, {}
    raise ValueError("plot_timeline needs an overlap-sim --trace JSON (a "
                     "path or a dict), or a report of overlap.trace(); a "
                     "report of overlap.simulate() has no timeline")


def _is_run(value):
    return (isinstance(value, (str, os.PathLike, list)) or
            (isinstance(value, dict) and
             ("trace" in value or "traceEvents" in value)))


# Colors of what a device does: its compute, its waits (exposed
# communication), and its communication in flight by kind.
_COLORS = {"compute": "#4c78a8", "wait": "#e45756", "permute": "#f58518",
           "collective": "#b279a2"}
_KINDS = ("permute", "collective")


def _short(label):
    """'ovl.einsum "bf,fh->bh" @ mlp.mlir:6:14' -> 'einsum "bf,fh->bh"'."""
    op = label.split(" @ ")[0]
    return op[4:] if op.startswith("ovl.") else op


class _Run:
    """What one trace shows of its devices: per device, its compute and
    wait spans and its communication in flight by lane."""

    def __init__(self, name, trace_or_report, max_devices):
        events, other = _load_trace(trace_or_report)
        self.name = name
        self.note = other.get("note", "")
        names = {}
        for e in events:
            if e.get("ph") == "M" and e.get("name") == "process_name":
                names[e["pid"]] = e.get("args", {}).get("name", str(e["pid"]))
        devices = sorted(pid for pid, n in names.items()
                         if n.startswith("device"))
        self.hidden = devices[max_devices:]
        self.devices = devices[:max_devices]
        self.names = names
        self.bars = {d: {"compute": [], "wait": []} for d in devices}
        self.comm = {d: [] for d in devices}  # (start, dur, lane, kind, label)
        self.lanes = {d: 1 for d in devices}
        self.end = 0.0
        for e in events:
            if e.get("ph") != "X" or e.get("pid") not in self.bars:
                continue
            start, dur = e["ts"], e.get("dur", 0.0)
            self.end = max(self.end, start + dur)
            cat, pid = e.get("cat"), e["pid"]
            if cat in ("compute", "wait"):
                self.bars[pid][cat].append((start, dur, e.get("name", "")))
            elif cat in _KINDS:
                lane = e.get("tid", 2) - 2
                self.comm[pid].append((start, dur, lane, cat,
                                       e.get("name", "")))
                self.lanes[pid] = max(self.lanes[pid], lane + 1)
        # The critical device, the one that finishes last, and where it
        # waited most.
        last = {d: max([s + t for s, t, _ in self.bars[d]["compute"] +
                        self.bars[d]["wait"]] or [0.0]) for d in devices}
        self.critical = max(devices, key=lambda d: (last[d], -d)) \
            if devices else None
        exposed = {}
        for _, dur, label in (self.bars[self.critical]["wait"]
                              if devices else []):
            exposed[label] = exposed.get(label, 0.0) + dur
        self.exposed = sorted(exposed.items(), key=lambda kv: -kv[1])


def _unit(end_us):
    """Trace times are microseconds: a readable unit for an axis to
    `end_us` (or a duration), as (scale from microseconds, name)."""
    if end_us >= 1e7:
        return 1e-6, "s"
    if end_us >= 1e3:
        return 1e-3, "ms"
    if end_us >= 1:
        return 1.0, "us"
    return 1e3, "ns"


def _format_duration(us):
    """A duration in microseconds in its own unit: "8.95 ms", "93.7 us"."""
    scale, unit = _unit(us)
    return "%.3g %s" % (us * scale, unit)


def _format_time(seconds_us, scale, unit):
    return "%.3g %s" % (seconds_us * scale, unit)


def _timeline_figure(runs, title, top_ops):
    """The figure of plot_timeline: one panel per run, one above the
    other, sharing the time axis."""
    plt = _pyplot()
    from matplotlib.patches import Patch
    end = max([r.end for r in runs] + [1e-9])
    scale, unit = _unit(end)
    rows = [2 * max(len(r.devices), 1) for r in runs]
    row_in = 0.3  # inches per track
    head_in, foot_in = 0.6, 0.45  # per panel: title and note; time axis
    width_in, left_in, right_in = 15.0, 1.0, 3.6
    title_in = 0.75  # the figure's title, the legend beneath it
    height_in = title_in + sum(head_in + foot_in + n * row_in for n in rows)
    fig = plt.figure(figsize=(width_in, height_in))
    axes = []
    top = height_in - title_in
    for run, n in zip(runs, rows):
        top -= head_in
        h = n * row_in
        ax = fig.add_axes([left_in / width_in, (top - h) / height_in,
                           1 - (left_in + right_in) / width_in, h / height_in],
                          sharex=axes[0] if axes else None)
        top -= h + foot_in
        axes.append(ax)
        _draw_run(ax, run, scale, unit, end,
                  (width_in - left_in - right_in), top_ops)
    axes[-1].set_xlabel("time (%s)" % unit)
    fig.legend(handles=[Patch(color=_COLORS["compute"], label="compute"),
                        Patch(color=_COLORS["wait"],
                              label="wait (exposed communication)"),
                        Patch(color=_COLORS["permute"],
                              label="permute in flight"),
                        Patch(color=_COLORS["collective"],
                              label="collective in flight")],
               loc="upper left", ncol=4, frameon=False, fontsize=9,
               bbox_to_anchor=(left_in / width_in - 0.01,
                               1.0 - 0.35 / height_in))
    fig.suptitle(title or "simulated timeline", x=left_in / width_in,
                 y=1.0 - 0.1 / height_in, ha="left", va="top", fontsize=12)
    return fig


def _draw_run(ax, run, scale, unit, end, axis_in, top_ops):
    # A label goes on a bar when it fits: about 0.55 em per character.
    font = 7
    in_per_us = axis_in / end

    def fits(width_us, text):
        return width_us * in_per_us >= (len(text) * 0.55 + 1) * font / 72

    ticks, ticklabels = [], []
    for i, d in enumerate(run.devices):
        y = 2 * i
        ticks += [y, y + 1]
        ticklabels += [run.names[d], "in flight"]
        for cat in ("compute", "wait"):
            bars = run.bars[d][cat]
            ax.broken_barh([(s * scale, t * scale) for s, t, _ in bars],
                           (y - 0.4, 0.8), facecolors=_COLORS[cat],
                           edgecolors="white", linewidth=0.3)
            for s, t, label in bars:
                text = _fitting(t, label, fits)
                if text:
                    ax.text((s + t / 2) * scale, y, text, ha="center",
                            va="center", fontsize=font, color="white",
                            clip_on=True)
        lanes = run.lanes[d]
        lane_h = 0.8 / lanes
        for kind in _KINDS:
            spans = [c for c in run.comm[d] if c[3] == kind]
            for s, t, lane, _, label in spans:
                y0 = y + 0.6 + lane * lane_h
                ax.broken_barh([(s * scale, t * scale)], (y0, lane_h * 0.9),
                               facecolors=_COLORS[kind], edgecolors="white",
                               linewidth=0.3)
                text = _fitting(t, label, fits)
                if lane_h >= 0.35 and text:
                    ax.text((s + t / 2) * scale, y0 + lane_h * 0.45, text,
                            ha="center", va="center", fontsize=font - 1,
                            clip_on=True)
    ax.set_yticks(ticks)
    ax.set_yticklabels(ticklabels, fontsize=8)
    for i in range(1, len(run.devices)):
        ax.axhline(2 * i - 0.5, color="0.85", linewidth=0.6)
    ax.set_ylim(2 * max(len(run.devices), 1) - 0.5, -0.5)
    ax.set_xlim(0, end * scale)
    ax.grid(axis="x", color="0.9", linewidth=0.6)
    ax.set_axisbelow(True)
    step = "step %s" % _format_time(run.end, scale, unit)
    if run.critical is not None:
        step += ", %s exposed on %s" % (
            _format_time(sum(t for _, t in run.exposed), scale, unit),
            run.names[run.critical])
    ax.set_title("%s: %s" % (run.name, step) if run.name else step,
                 loc="left", fontsize=10, pad=14)
    notes = [run.note] if run.note else []
    if run.hidden:
        notes.append("%d more devices in the trace (max_devices=%d)"
                     % (len(run.hidden), len(run.devices)))
    if notes:
        ax.text(0, 1.01, "; ".join(notes), transform=ax.transAxes,
                fontsize=7, color="0.35", va="bottom")
    lines = ["most exposed on %s:" % run.names.get(run.critical, "-")]
    for label, dur in run.exposed[:top_ops]:
        lines.append("%9s  %s" % (_format_duration(dur), _wrap(label)))
    if not run.exposed:
        lines.append("  nothing: every transfer hidden")
    ax.text(1.01, 1.0, "\n".join(lines), transform=ax.transAxes,
            fontsize=7, va="top", ha="left", family="monospace")


def _fitting(width_us, label, fits):
    """The label of a bar `width_us` wide: the op with its einsum
    equation, or the op alone, or None when neither fits."""
    text = _short(label)
    if fits(width_us, text):
        return text
    op = text.split(" ")[0]
    return op if fits(width_us, op) else None


def _wrap(label, width=34):
    """A label's op and its location on lines of `width`."""
    op, _, loc = label.partition(" @ ")
    op = _short(op)
    if loc:
        loc = os.path.basename(loc)
    text = op + ("\n" + " " * 11 + "@ " + loc if loc else "")
    return text if len(op) <= width else op[:width - 1] + "~"


def plot_timeline(trace_or_report, path, title=None, max_devices=8,
                  top_ops=5):
    """Draws the timeline of a simulated run: for each device (up to
    `max_devices`) a track of its compute ops (labelled where they fit)
    and its waits on communication, and beneath it a track of its
    communication in flight (permutes it sends, collectives), one lane per
    transfer in flight at once; beside it the `top_ops` ops the critical
    device waited longest in.

    `trace_or_report`: an `overlap-sim --trace` JSON (path or dict) or a
    report of `overlap.trace()`, or a dict {name: one of those} of several
    runs (e.g. {"before": ..., "after": ...}), drawn one above the other on
    one time axis. Writes the image to `path` (PNG by extension); returns
    `path`."""
    if isinstance(trace_or_report, dict) and not _is_run(trace_or_report):
        if not trace_or_report or not all(
                _is_run(v) for v in trace_or_report.values()):
            raise ValueError("plot_timeline: a dict of runs maps names to "
                             "traces or trace() reports")
        runs = [_Run(str(name), value, max_devices)
                for name, value in trace_or_report.items()]
    else:
        runs = [_Run(None, trace_or_report, max_devices)]
    fig = _timeline_figure(runs, title, top_ops)
    fig.savefig(path, dpi=110)
    _pyplot().close(fig)
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
