import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # python/: import overlap
REPO = os.path.dirname(os.path.dirname(HERE))

import pytest  # noqa: E402

# overlap-run's compile cache (docs/Runtime.md): the build's, not the
# user's home.
os.environ.setdefault("OVERLAP_CACHE_DIR", os.path.join(os.path.dirname(
    os.path.abspath(os.environ.get("OVERLAP_BIN")
                    or os.path.join(REPO, "build", "bin"))), "compile-cache"))


# Under the sanitizers (scripts/sanitize.sh; CMake sets OVERLAP_SANITIZED)
# every case takes about ten times its plain time, and the sanitizers look
# for memory errors, not for new combinations: the training steps go
# through the pipeline on one grid per gate and generator, not on each.
SKIPPED_WHEN_SANITIZED = [
    "test_train_step.py::test_train_step_through_pipeline[1d-4-always]",
    "test_train_step.py::test_train_step_through_pipeline[2d-2x2-cost]",
    "test_train_step.py::test_train_step_through_pipeline[2d-2x4-cost]",
    "test_train_step.py::test_train_step_through_pipeline[2d-2x4-always]",
    "test_train_step.py::test_train_step_through_overlap_opt",
    "test_gpt_train_step.py::test_train_step_through_pipeline[1x2x2-1L-save-cost]",
    "test_gpt_train_step.py::test_train_step_through_pipeline[1x2x2-1L-save-always]",
    "test_gpt_train_step.py::test_train_step_through_pipeline[1x2x4-2L-save-always]",
]


def pytest_collection_modifyitems(config, items):
    if not os.environ.get("OVERLAP_SANITIZED"):
        return
    ids = {item.nodeid.split("/")[-1]: item for item in items}
    files = {name.split("::")[0] for name in ids}
    # A renamed case would otherwise quietly run again.
    missing = [name for name in SKIPPED_WHEN_SANITIZED
               if name.split("::")[0] in files and name not in ids]
    if missing:
        raise pytest.UsageError("conftest.py skips cases that do not exist: "
                                + ", ".join(missing))
    for name in SKIPPED_WHEN_SANITIZED:
        if name in ids:
            ids[name].add_marker(pytest.mark.skip(
                reason="sanitizer build: one grid per gate (conftest.py)"))


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
