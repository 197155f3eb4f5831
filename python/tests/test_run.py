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


def test_run_reuses_the_compile_cache(mlp_1d_text, tmp_path, monkeypatch):
    # Every call writes the program to a new temporary folder; the compiled
    # code keeps the program's locations, so the same text must be at the
    # same path for the second call to take the first's object from
    # overlap-run's compile cache rather than store a second one.
    monkeypatch.setenv("OVERLAP_CACHE_DIR", str(tmp_path))
    ins = inputs()
    first = overlap.run(mlp_1d_text, ins)
    entries = sorted(tmp_path.glob("*.ovlobj"))
    assert len(entries) == 1
    second = overlap.run(mlp_1d_text, ins)
    assert sorted(tmp_path.glob("*.ovlobj")) == entries
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a[0], b[0])


def test_run_reference_mismatch(mlp_1d_text):
    wrong = mlp_1d_text.replace("arith.maximumf", "arith.minimumf")
    with pytest.raises(overlap.Error, match="differ"):
        overlap.run(wrong, inputs(2), reference=mlp_1d_text)


ONE_OUTPUT = """
shard.grid @one(shape = 1)
func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
  return %x : tensor<3xf32>
}
"""


def test_run_rtol_relative_to_element():
    # [1e30, 1e24, 1] against [1e30, 0, 1]: equal relative to the tensor's
    # scale, not element by element.
    reference = ONE_OUTPUT.replace(
        "return %x", "%z = arith.constant dense<[1.0e30, 0.0, 1.0]> : "
        "tensor<3xf32>\n  return %z")
    ins = [[np.array([1e30, 1e24, 1.0], np.float32)]]
    overlap.run(ONE_OUTPUT, ins, reference=reference)
    with pytest.raises(overlap.Error, match="differ"):
        overlap.run(ONE_OUTPUT, ins, reference=reference,
                    rtol_relative_to="element")


def test_run_refuses_inexact_inputs():
    # float64 0.1 is not a float32: refused, not rounded.
    with pytest.raises(overlap.Error, match="not exact in f32"):
        overlap.run(ONE_OUTPUT, [[np.array([0.5, 0.1, 1.0])]])
    out = overlap.run(ONE_OUTPUT, [[np.array([0.5, 0.25, 1.0])]])
    np.testing.assert_array_equal(out[0][0], [0.5, 0.25, 1.0])


def test_bf16_roundtrip():
    x = np.array([1.0, -2.5, 3.140625, 0.0], dtype=np.float32)
    bits = overlap.to_bf16(x)
    assert bits.dtype == np.uint16
    np.testing.assert_array_equal(overlap.from_bf16(bits), x)
    # Integers that fit in 16 bits are bit patterns too.
    np.testing.assert_array_equal(overlap.from_bf16([0x3F80]), [1.0])


@pytest.mark.parametrize("bits, error", [
    (np.array([1.0], dtype=np.float32), TypeError),
    ([1.5], TypeError),
    ([70000], ValueError),
    ([-1], ValueError),
])
def test_from_bf16_refuses_what_is_no_bit_pattern(bits, error):
    # Class: a reinterpreting conversion given the wrong dtype; a float32
    # 1.0 came back as 9.18e-41.
    with pytest.raises(error, match="from_bf16"):
        overlap.from_bf16(bits)


@pytest.mark.parametrize("devices", [3, 5])
def test_run_names_a_wrong_device_count(mlp_1d_text, devices):
    # Too few used to fail on a missing temporary .npy file, too many ran
    # silently on the first four.
    ins = inputs()
    ins = (ins + ins)[:devices]
    with pytest.raises(overlap.Error,
                       match=r"runs on 4 devices \(@ring\) but inputs has "
                             r"%d device lists" % devices):
        overlap.run(mlp_1d_text, ins)
