import numpy as np
import pytest

import overlap

SHAPES = [(4, 32), (32, 16), (16, 32)]  # x [B/N, F], w1 [F, H/N], w2 [H/N, F]


def inputs(seed=0):
    rng = np.random.default_rng(seed)
    return [[rng.standard_normal(s).astype(np.float32) for s in SHAPES]
            for _ in range(4)]


def numpy_mlp(ins):
    w1 = np.concatenate([d[1] for d in ins], axis=1)
    w2 = np.concatenate([d[2] for d in ins], axis=0)
    return [np.maximum(d[0] @ w1, 0) @ w2 for d in ins]


def test_run_equals_numpy(mlp_1d_text):
    ins = inputs()
    out = overlap.run(mlp_1d_text, ins)
    assert len(out) == 4 and all(len(d) == 1 for d in out)
    for got, want in zip(out, numpy_mlp(ins)):
        assert got[0].dtype == np.float32 and got[0].shape == (4, 32)
        np.testing.assert_allclose(got[0], want, rtol=1e-4, atol=1e-4)


def test_run_overlapped_with_reference(mlp_1d_text):
    ins = inputs(1)
    fast = overlap.overlap_pipeline(mlp_1d_text, gate="always")
    out = overlap.run(fast, ins, reference=mlp_1d_text)
    for got, want in zip(out, numpy_mlp(ins)):
        np.testing.assert_allclose(got[0], want, rtol=1e-4, atol=1e-4)


def test_run_reference_mismatch(mlp_1d_text):
    wrong = mlp_1d_text.replace("arith.maximumf", "arith.minimumf")
    with pytest.raises(overlap.Error, match="differ"):
        overlap.run(wrong, inputs(2), reference=mlp_1d_text)


def test_bf16_roundtrip():
    x = np.array([1.0, -2.5, 3.140625, 0.0], dtype=np.float32)
    bits = overlap.to_bf16(x)
    assert bits.dtype == np.uint16
    np.testing.assert_array_equal(overlap.from_bf16(bits), x)
