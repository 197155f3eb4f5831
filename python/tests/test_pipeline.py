import pytest

import overlap


def test_run_pipeline(mlp_1d_text):
    out = overlap.run_pipeline(mlp_1d_text, "ovl-einsum-to-linalg")
    assert "ovl.einsum" not in out and "linalg.generic" in out
    out = overlap.run_pipeline(mlp_1d_text,
                               "func.func(ovl-decompose-collective-einsum{gate=always})")
    # Decomposed into ring permutes (a loop, or unrolled where the fastest
    # variant for a ring of 4 goes both ways round).
    assert "ovl.all_gather" not in out and "ovl.collective_permute" in out
    out = overlap.run_pipeline(
        mlp_1d_text, "builtin.module(ovl-overlap-pipeline{gate=always})")
    assert "ovl.collective_permute_start" in out


def test_run_pipeline_upstream_transforms(mlp_1d_text):
    # MLIR's general transforms are registered next to overlap's: cse
    # merges the two identical partition ids the decomposition leaves.
    decomposed = overlap.run_pipeline(
        mlp_1d_text, "func.func(ovl-decompose-collective-einsum{gate=always})")
    assert decomposed.count("ovl.partition_id") == 2
    out = overlap.run_pipeline(decomposed, "canonicalize,cse")
    assert out.count("ovl.partition_id") == 1


def test_run_pipeline_error(mlp_1d_text):
    with pytest.raises(overlap.Error, match="does not refer to a registered pass"):
        overlap.run_pipeline(mlp_1d_text, "no-such-pass")


def test_overlap_pipeline_decomposes_1d_mlp(mlp_1d_text):
    out = overlap.overlap_pipeline(mlp_1d_text, gate="always")
    assert "ovl.all_gather" not in out
    assert "ovl.collective_permute_start" in out
    assert "scf.for" in out or out.count("ovl.einsum") > 2
    overlap.parse(out)  # the result parses back


def test_overlap_pipeline_never_keeps_gathers(mlp_1d_text):
    out = overlap.overlap_pipeline(mlp_1d_text, gate="never")
    assert "ovl.all_gather" in out


def test_overlap_pipeline_bad_option(mlp_1d_text):
    with pytest.raises(overlap.Error, match="gate=sideways"):
        overlap.overlap_pipeline(mlp_1d_text, gate="sideways")


def test_pipeline_options():
    assert overlap.pipeline_options(
        dict(gate="always", max_in_flight=2, bidirectional=True)) == \
        "gate=always max-in-flight=2 bidirectional=true"


def test_overlap_pipeline_split_loop(mlp_1d_text):
    # The second gather (w2 [H/N, F], h contracted, f free) is halved along
    # f: 16x16 halves go round the ring both ways, and the result's halves
    # are concatenated.
    out = overlap.overlap_pipeline(mlp_1d_text, gate="always",
                                   bidirectional="split")
    sends = [line for line in out.splitlines()
             if "collective_permute_start" in line and "tensor<16x16xf32>" in line]
    assert any("pairs [0 -> 1, 1 -> 2" in line for line in sends)
    assert any("pairs [0 -> 3, 1 -> 0" in line for line in sends)
    assert "(tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x32xf32>" in out
    with pytest.raises(overlap.Error, match="bidirectional"):
        overlap.overlap_pipeline(mlp_1d_text, bidirectional="halves")
