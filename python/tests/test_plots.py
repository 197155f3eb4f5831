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
