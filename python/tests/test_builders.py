import pytest

import overlap


def test_mlp_1d():
    text = overlap.mlp_1d(devices=4, batch=16, model=32, hidden=64)
    assert "shard.grid @ring(shape = 4)" in text
    assert "tensor<4x32xbf16>" in text
    overlap.parse(text)


def test_mlp_2d():
    text = overlap.mlp_2d("2x4", batch=16, model=32, hidden=64)
    assert "shape = 2x4" in text
    overlap.parse(text)
    assert overlap.mlp_2d((2, 4), 16, 32, 64) == text


def test_mlp_bad_sizes():
    with pytest.raises(ValueError, match="divisible"):
        overlap.mlp_1d(3, 16, 32, 64)


def test_transformer_block_tiny():
    text = overlap.transformer_block("tiny", layers=2)
    assert "func.func @gpt_layers" in text
    overlap.parse(text)


def test_transformer_block_ladder():
    text = overlap.transformer_block("32B", partials="bf16")
    overlap.parse(text)
    assert overlap.transformer_topology("32B") == "4x4x4"


def test_transformer_block_sizes():
    text = overlap.transformer_block(
        dict(d_model=256, heads=4, batch=8, seq=64), mesh=(1, 2, 2))
    overlap.parse(text)
    with pytest.raises(ValueError):
        overlap.transformer_block(dict(d_model=256, heads=3, batch=8),
                                  mesh=(1, 2, 2))


def test_mlp_train_step():
    from overlap.models import mlp
    assert overlap.mlp_1d(4, 16, 8, 16, step="train") == \
        mlp.mlp_1d_train(4, 16, 8, 16)
    assert overlap.mlp_2d("2x4", 16, 16, 16, step="train") == \
        mlp.mlp_2d_train(2, 4, 16, 16, 16)
    assert overlap.mlp_1d(4, 16, 8, 16, step="forward") == \
        overlap.mlp_1d(4, 16, 8, 16)
    with pytest.raises(ValueError, match="step must be"):
        overlap.mlp_1d(4, 16, 8, 16, step="backward")
    with pytest.raises(ValueError):
        overlap.mlp_2d("2x3", 16, 16, 16, step="train")
