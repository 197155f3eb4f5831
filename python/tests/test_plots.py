import os

import pytest

import overlap

PNG = b"\x89PNG\r\n\x1a\n"


def is_png(path):
    with open(path, "rb") as f:
        return f.read(8) == PNG


def test_plot_timeline(tmp_path, mlp_1d_text):
    fast = overlap.overlap_pipeline(mlp_1d_text, gate="always")
    report = overlap.trace(fast)
    path = str(tmp_path / "timeline.png")
    overlap.plot_timeline(report, path)
    assert is_png(path) and os.path.getsize(path) > 1000
    # also straight from the trace dict
    path2 = str(tmp_path / "timeline2.png")
    overlap.plot_timeline(report["trace"], path2)
    assert is_png(path2)


def test_plot_timeline_needs_trace(tmp_path, mlp_1d_text):
    with pytest.raises(ValueError):
        overlap.plot_timeline(overlap.simulate(mlp_1d_text),
                              str(tmp_path / "x.png"))


def test_plot_speedup(tmp_path, large_mlp):
    text, topology = large_mlp
    base = overlap.simulate(text, "tpu-v4", topology)
    fast = overlap.simulate(overlap.overlap_pipeline(text, topology=topology),
                            "tpu-v4", topology)
    path = str(tmp_path / "speedup.png")
    speedups = overlap.plot_speedup({"fig2": (base, fast), "flat": (1.0, 1.0)},
                                    path)
    assert speedups["fig2"] > 1.1 and speedups["flat"] == 1.0
    assert is_png(path)


@pytest.fixture(scope="module")
def before_after(large_mlp):
    """The tutorial's program: blocking all_gathers, then the decomposed
    loops of permutes."""
    text, topology = large_mlp
    fast = overlap.overlap_pipeline(text, topology=topology)
    return {"before": overlap.trace(text, "tpu-v4", topology),
            "after": overlap.trace(fast, "tpu-v4", topology)}


def test_plot_timeline_structure(before_after):
    from overlap import plots
    runs = [plots._Run(name, report, max_devices=8)
            for name, report in before_after.items()]
    fig = plots._timeline_figure(runs, "mlp", top_ops=3)
    before, after = fig.axes
    # One time axis: shared, and as long as the longer run.
    assert before.get_shared_x_axes().joined(before, after)
    assert before.get_xlim() == after.get_xlim()
    assert before.get_xlim()[1] == pytest.approx(
        max(r.end for r in runs) * plots._unit(max(r.end for r in runs))[0])
    # Per device a compute/wait track and an in-flight track.
    for ax in (before, after):
        labels = [t.get_text() for t in ax.get_yticklabels()]
        assert labels == [x for d in range(8)
                          for x in ("device %d" % d, "in flight")]

    def bars(ax, color):
        from matplotlib.colors import to_rgba
        return sum(len(c.get_paths()) for c in ax.collections
                   if len(c.get_facecolor()) and
                   tuple(c.get_facecolor()[0]) == to_rgba(plots._COLORS[color]))
    # Before: the gathers block, in flight as collectives and waited for;
    # after: permutes in flight.
    assert bars(before, "collective") == 8 * 2
    assert bars(before, "wait") > 0 and bars(before, "permute") == 0
    assert bars(after, "permute") > 0 and bars(after, "collective") == 0
    # Op labels on the bars wide enough, and the top exposed ops named.
    texts = [t.get_text() for t in before.texts]
    assert any(t.startswith("einsum") for t in texts)
    assert any(t.startswith("all_gather") for t in texts)
    exposed = [t for t in texts if t.startswith("most exposed on device")]
    assert len(exposed) == 1 and "all_gather" in exposed[0]
    assert before.get_title(loc="left").startswith("before: step")
    plots._pyplot().close(fig)


def test_plot_timeline_before_and_after(tmp_path, before_after):
    path = str(tmp_path / "before-after.png")
    assert overlap.plot_timeline(before_after, path) == path
    assert is_png(path)


def test_plot_timeline_refuses_a_dict_of_other_things(tmp_path):
    with pytest.raises(ValueError, match="maps names to traces"):
        overlap.plot_timeline({"before": 1.0}, str(tmp_path / "x.png"))


def test_plot_timeline_says_what_the_trace_left_out(tmp_path, large_mlp):
    # 8 devices traced (2x2x2): max_devices=2 shows two, and says so; the
    # trace's own note goes along.
    text, topology = large_mlp
    report = overlap.trace(text, "tpu-v4", topology, devices=[0, 1, 2])
    assert report["trace"]["otherData"]["traced_devices"] == "0-2"
    from overlap import plots
    run = plots._Run(None, report, max_devices=2)
    fig = plots._timeline_figure([run], None, top_ops=5)
    texts = " ".join(t.get_text() for t in fig.axes[0].texts)
    assert "devices 0-2 of 8" in texts
    assert "1 more devices in the trace (max_devices=2)" in texts
    plots._pyplot().close(fig)
