"""Training-step programs of overlap.models.mlp (mlp_1d_train, mlp_2d_train):
every device's loss and gradients against an independent NumPy model of the
unpartitioned step, the same programs through the overlap pipeline, and the
--step command line."""

import os
import subprocess
import sys

import numpy as np
import pytest

import outputs
import overlap
from overlap.models import mlp

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") \
    else sys.executable

# (strategy, grid, B, F, H): tiny sizes that divide.
CASES = [
    ("1d", (4,), 16, 8, 16),
    ("2d", (2, 2), 8, 8, 16),
    ("2d", (2, 4), 16, 16, 16),
]
IDS = ["1d-4", "2d-2x2", "2d-2x4"]
OUTPUTS = ["loss", "dx", "dw1", "dw2"]


def program(case):
    strategy, grid, b, f, h = case
    if strategy == "1d":
        return mlp.mlp_1d_train(grid[0], b, f, h)
    return mlp.mlp_2d_train(grid[0], grid[1], b, f, h)


def layout(case):
    """Per device (row-major over the grid, as overlap-run numbers them),
    the slices of the global x (and y, t, dx), w1 and w2 it holds."""
    strategy, grid, b, f, h = case
    out = []
    if strategy == "1d":
        (n,) = grid
        bl, hl = b // n, h // n
        for d in range(n):
            rows = slice(d * bl, (d + 1) * bl)
            hs = slice(d * hl, (d + 1) * hl)
            out.append(((rows, slice(None)), (slice(None), hs),
                        (hs, slice(None))))
        return out
    # 2d: axis 0 is x (size M), axis 1 is y (size N). x [B/N, F/M]: batch
    # along y, F along x; w1 [F/N, H/M] and w2 [H/M, F/N]: F along y, H
    # along x.
    m, n = grid
    bl, fm, fn, hm = b // n, f // m, f // n, h // m
    for i in range(m):
        for j in range(n):
            rows = slice(j * bl, (j + 1) * bl)
            fx = slice(i * fm, (i + 1) * fm)
            fy = slice(j * fn, (j + 1) * fn)
            hx = slice(i * hm, (i + 1) * hm)
            out.append(((rows, fx), (fy, hx), (hx, fy)))
    return out


def bf16(a):
    """Rounds float32 values to bf16 (kept as float32)."""
    return overlap.from_bf16(overlap.to_bf16(a))


def inputs(case, seed=0):
    """Per device: x, w1, w2 as bf16 bit patterns, t as float32."""
    strategy, grid, b, f, h = case
    rng = np.random.default_rng(seed)
    ins = []
    for xs, w1s, w2s in layout(case):
        xshape = np.empty((b, f))[xs].shape
        x = rng.standard_normal(xshape)
        w1 = rng.standard_normal(np.empty((f, h))[w1s].shape) / np.sqrt(f)
        w2 = rng.standard_normal(np.empty((h, f))[w2s].shape) / np.sqrt(h)
        t = rng.standard_normal(xshape).astype(np.float32)
        ins.append([overlap.to_bf16(x), overlap.to_bf16(w1),
                    overlap.to_bf16(w2), t])
    return ins


def assemble(case, ins):
    """The global x, w1, w2, t (float32) from the devices' shards."""
    strategy, grid, b, f, h = case
    x, t = np.zeros((b, f), np.float32), np.zeros((b, f), np.float32)
    w1, w2 = np.zeros((f, h), np.float32), np.zeros((h, f), np.float32)
    seen = [np.zeros(a.shape, bool) for a in (x, w1, w2)]
    for (xs, w1s, w2s), (dx, dw1, dw2, dt) in zip(layout(case), ins):
        x[xs], w1[w1s], w2[w2s] = (overlap.from_bf16(dx),
                                   overlap.from_bf16(dw1),
                                   overlap.from_bf16(dw2))
        t[xs] = dt
        for s, sl in zip(seen, (xs, w1s, w2s)):
            s[sl] = True
    # Replicated shards (a weight held by several devices) must agree.
    for (xs, w1s, w2s), (dx, dw1, dw2, _) in zip(layout(case), ins):
        assert np.array_equal(w1[w1s], overlap.from_bf16(dw1))
        assert np.array_equal(w2[w2s], overlap.from_bf16(dw2))
        assert np.array_equal(x[xs], overlap.from_bf16(dx))
    assert all(s.all() for s in seen)
    return x, w1, w2, t


def numpy_step(x, w1, w2, t, relu_mask=True):
    """The unpartitioned step in float32 with the program's bf16 roundings:
    (loss, dx, dw1, dw2), global."""
    h = x @ w1
    act = bf16(np.maximum(h, 0))
    y = act @ w2
    dy = y - t
    loss = np.float32(0.5) * np.sum(dy * dy, dtype=np.float32)
    dy_b = bf16(dy)
    dact = dy_b @ w2.T
    dh = bf16(np.where(h > 0, dact, 0) if relu_mask else dact)
    dw2 = act.T @ dy_b
    dw1 = x.T @ dh
    dx = dh @ w1.T
    return loss, dx, dw1, dw2


def expected(case, ins, **kw):
    """Every device's (loss, dx, dw1, dw2) shards of the NumPy step."""
    loss, dx, dw1, dw2 = numpy_step(*assemble(case, ins), **kw)
    return [[loss, dx[xs], dw1[w1s], dw2[w2s]]
            for xs, w1s, w2s in layout(case)]


def mismatches(got, want):
    """The outputs (device:name) that differ beyond RTOL (outputs.py)."""
    return outputs.mismatches(got, want, OUTPUTS)


@pytest.fixture(scope="module", params=CASES, ids=IDS)
def case_run(request):
    """(case, program text, inputs, outputs of the CPU runtime)."""
    case = request.param
    text = program(case)
    ins = inputs(case)
    return case, text, ins, overlap.run(text, ins)


def test_train_step_equals_numpy(case_run):
    case, text, ins, out = case_run
    devices = int(np.prod(case[1]))
    assert len(out) == devices and all(len(d) == 4 for d in out)
    want = expected(case, ins)
    for d in range(devices):
        for name, g, w, arg in zip(OUTPUTS, out[d], want[d],
                                   [None] + ins[d][:3]):
            assert g.dtype == np.float32, name
            assert g.shape == (() if arg is None else arg.shape), name
    assert mismatches(out, want) == []
    # The loss is the same global scalar on every device, and close.
    losses = [float(d[0]) for d in out]
    assert len(set(losses)) == 1
    np.testing.assert_allclose(losses[0], float(want[0][0]), rtol=1e-4)


def test_train_step_comparison_can_fail(case_run):
    """The tolerance catches a wrong sharding, a missing ReLU mask and a
    missing reduction."""
    case, text, ins, out = case_run
    want = expected(case, ins)
    # Two devices' expected gradient shards swapped: every gradient of
    # both devices mismatches.
    swapped = [list(d) for d in want]
    swapped[0][1:], swapped[1][1:] = want[1][1:], want[0][1:]
    bad = mismatches(out, swapped)
    for d in (0, 1):
        for name in ("dx", "dw1", "dw2"):
            assert "%d:%s" % (d, name) in bad
    # No ReLU mask in the backward: dw1 and dx are wrong everywhere.
    bad = mismatches(out, expected(case, ins, relu_mask=False))
    for d in range(len(out)):
        assert "%d:dw1" % d in bad and "%d:dx" % d in bad
    # A weight gradient summed over the device's own batch rows only (the
    # reduce-scatter's sum left out): wrong.
    x, w1, w2, t = assemble(case, ins)
    h = x @ w1
    dh = bf16(np.where(h > 0, bf16(bf16(np.maximum(h, 0)) @ w2 - t) @ w2.T,
                       0))
    local = []
    for (xs, w1s, w2s), w in zip(layout(case), want):
        rows = xs[0]
        dw1 = x[rows].T @ dh[rows]
        local.append([w[0], w[1], dw1[w1s], w[3]])
    bad = mismatches(out, local)
    assert all("%d:dw1" % d in bad for d in range(len(out)))


@pytest.mark.parametrize("gate", ["cost", "always"])
def test_train_step_through_pipeline(case_run, gate):
    """ovl-overlap-pipeline (default gate and gate=always) leaves the step's
    results unchanged: overlap-run compares every output of every device
    with the original program's (f32 default tolerance), and both with the
    NumPy model."""
    case, text, ins, _ = case_run
    fast = overlap.overlap_pipeline(text, gate=gate)
    overlap.parse(fast)
    if gate == "always":
        # Something was decomposed into ring permutes.
        assert "ovl.collective_permute_start" in fast
    out = overlap.run(fast, ins, reference=text)
    assert mismatches(out, expected(case, ins)) == []


def test_train_step_through_overlap_opt(tmp_path):
    """The same through the overlap-opt command line, 2x4 grid."""
    case = CASES[2]
    text = program(case)
    path = tmp_path / "train.mlir"
    path.write_text(text)
    ins = inputs(case, seed=1)
    for option in ["--ovl-overlap-pipeline",
                   "--ovl-overlap-pipeline=gate=always"]:
        proc = subprocess.run([overlap.tool_path("overlap-opt"), str(path),
                               option], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
        assert proc.returncode == 0, proc.stderr
        out = overlap.run(proc.stdout, ins, reference=text)
        assert mismatches(out, expected(case, ins)) == []


# The forward programs as they were before --step existed.
FORWARD_1D = """// Figure 2 MLP, one device of a ring of 4: B=16, F=32, H=64.
shard.grid @ring(shape = 4)

func.func @mlp(%x: tensor<4x32xbf16>, %w1: tensor<32x16xbf16>,
               %w2: tensor<16x32xbf16>) -> tensor<4x32xf32> {
  %w1_full = ovl.all_gather %w1 on @ring axes [0] dim 1
      : tensor<32x16xbf16> -> tensor<32x64xbf16>
  %h = ovl.einsum "bf,fh->bh" %x, %w1_full
      : tensor<4x32xbf16>, tensor<32x64xbf16> -> tensor<4x64xf32>
  %zero = arith.constant dense<0.0> : tensor<4x64xf32>
  %relu = arith.maximumf %h, %zero : tensor<4x64xf32>
  %act = arith.truncf %relu : tensor<4x64xf32> to tensor<4x64xbf16>
  %w2_full = ovl.all_gather %w2 on @ring axes [0] dim 0
      : tensor<16x32xbf16> -> tensor<64x32xbf16>
  %y = ovl.einsum "bh,hf->bf" %act, %w2_full
      : tensor<4x64xbf16>, tensor<64x32xbf16> -> tensor<4x32xf32>
  return %y : tensor<4x32xf32>
}
"""
FORWARD_2D = """// Figure 3 MLP, one device of a 2x4 grid: B=16, F=32, H=64.
shard.grid @grid(shape = 2x4)

func.func @mlp(%x: tensor<4x16xbf16>, %w1: tensor<8x32xbf16>,
               %w2: tensor<32x8xbf16>) -> tensor<4x16xf32> {
  %x_full = ovl.all_gather %x on @grid axes [0] dim 1
      : tensor<4x16xbf16> -> tensor<4x32xbf16>
  %w1_full = ovl.all_gather %w1 on @grid axes [1] dim 0
      : tensor<8x32xbf16> -> tensor<32x32xbf16>
  %h = ovl.einsum "bf,fh->bh" %x_full, %w1_full
      : tensor<4x32xbf16>, tensor<32x32xbf16> -> tensor<4x32xf32>
  %zero = arith.constant dense<0.0> : tensor<4x32xf32>
  %relu = arith.maximumf %h, %zero : tensor<4x32xf32>
  %act = arith.truncf %relu : tensor<4x32xf32> to tensor<4x32xbf16>
  %w2_full = ovl.all_gather %w2 on @grid axes [1] dim 1
      : tensor<32x8xbf16> -> tensor<32x32xbf16>
  %partial = ovl.einsum "bh,hf->bf" %act, %w2_full
      : tensor<4x32xbf16>, tensor<32x32xbf16> -> tensor<4x32xf32>
  %y = ovl.reduce_scatter %partial on @grid axes [0] dim 1
      : tensor<4x32xf32> -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}
"""
MLP_1D = ["1d", "--devices", "4", "--batch", "16", "--model", "32",
          "--hidden", "64"]
MLP_2D = ["2d", "--mesh", "2x4", "--batch", "16", "--model", "32",
          "--hidden", "64"]


def test_step_forward_unchanged(capsys):
    for args, golden in [(MLP_1D, FORWARD_1D), (MLP_2D, FORWARD_2D)]:
        mlp.main(args)
        assert capsys.readouterr().out == golden
        mlp.main(args + ["--step", "forward"])
        assert capsys.readouterr().out == golden
    assert mlp.mlp_1d(4, 16, 32, 64) == FORWARD_1D
    assert mlp.mlp_2d(2, 4, 16, 32, 64) == FORWARD_2D


def test_step_train_command_line(tmp_path):
    out = str(tmp_path / "train1d.mlir")
    mlp.main(MLP_1D + ["--step", "train", "--out", out])
    with open(out) as f:
        text = f.read()
    assert "func.func @mlp_train(" in text
    assert text == mlp.mlp_1d_train(4, 16, 32, 64)
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "python"))
    proc = subprocess.run([PYTHON, "-m", "overlap.models.mlp"] + MLP_2D +
                          ["--step", "train"], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, env=env,
                          cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    assert "func.func @mlp_train(" in proc.stdout
    assert proc.stdout == mlp.mlp_2d_train(2, 4, 16, 32, 64)
    overlap.parse(proc.stdout)
    with pytest.raises(SystemExit):
        mlp.main(MLP_1D + ["--step", "backward"])


def test_train_sizes_must_divide():
    with pytest.raises(SystemExit) as e:
        mlp.mlp_1d_train(3, 16, 8, 16)
    assert "batch = 16 is not divisible by 3" in str(e.value.code)
    with pytest.raises(SystemExit) as e:
        mlp.mlp_2d_train(2, 4, 16, 6, 16)
    assert "model/y = 6 is not divisible by 4" in str(e.value.code)
