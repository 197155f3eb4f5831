import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # python/: import overlap
REPO = os.path.dirname(os.path.dirname(HERE))

import pytest  # noqa: E402


def example(name):
    with open(os.path.join(REPO, "examples", name)) as f:
        return f.read()


@pytest.fixture
def mlp_1d_text():
    return example("mlp_1d.mlir")


@pytest.fixture(scope="session")
def large_mlp():
    """The figure 2 MLP of bench/schedule (fig2) and its topology."""
    import overlap
    return overlap.mlp_1d(8, 65536, 8192, 32768), "2x2x2"
