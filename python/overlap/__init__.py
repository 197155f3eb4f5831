"""overlap from Python: ctypes over libOverlapCAPI.so (parse, pass
pipelines, the simulator), the CPU runtime through the overlap-run tool,
program builders (over the generators of overlap.models) and plots. See
docs/Python.md. The library and numpy are loaded on first use: importing
the package (or overlap.models) needs neither a build nor numpy.

    import overlap
    text = overlap.mlp_1d(devices=8, batch=65536, model=8192, hidden=32768)
    base = overlap.simulate(text, "tpu-v4", "2x2x2")
    fast = overlap.simulate(overlap.overlap_pipeline(text, topology="2x2x2"),
                            "tpu-v4", "2x2x2")
    print(base["step_time_s"] / fast["step_time_s"])
"""

import threading

from ._capi import Context, Error, Module, library_path, pipeline_options
from .builders import mlp_1d, mlp_2d, transformer_block, transformer_topology
from .plots import plot_speedup, plot_timeline
from .tools import from_bf16, run, to_bf16, tool_path, trace

__all__ = [
    "Context", "Module", "Error", "library_path", "pipeline_options",
    "parse", "verify", "run_pipeline", "overlap_pipeline", "simulate",
    "run", "trace", "to_bf16", "from_bf16", "tool_path",
    "mlp_1d", "mlp_2d", "transformer_block", "transformer_topology",
    "plot_timeline", "plot_speedup",
]

_default = threading.local()


def default_context():
    """The calling thread's Context, created on first use."""
    ctx = getattr(_default, "context", None)
    if ctx is None:
        ctx = _default.context = Context()
    return ctx


def _text(program):
    return program.text if isinstance(program, Module) else program


def parse(text):
    """Parses and verifies `text` in the default context; returns a Module
    (its `.text` prints it). Raises Error with the diagnostics."""
    return default_context().parse(_text(text))


def verify(text):
    """Parses and verifies `text`; returns the module printed back (MLIR's
    canonical form). Raises Error with the diagnostics."""
    return parse(text).text


def run_pipeline(text, pipeline):
    """Runs a textual pass pipeline ("ovl-overlap-pipeline{gate=always},
    canonicalize", with or without builtin.module(...)) on `text`; returns
    the transformed text."""
    return default_context().run_pipeline(_text(text), pipeline)


def overlap_pipeline(text, **options):
    """Runs ovl-overlap-pipeline (docs/Pipeline.md) on `text` with keyword
    options (gate="always", unroll=2, hardware="tpu-v5p",
    topology="4x4x4", bidirectional=True, algorithm="top-down",
    max_in_flight=2); returns the transformed text."""
    return default_context().overlap_pipeline(_text(text), **options)


def simulate(text, hardware="tpu-v4", topology=None, entry=None,
             device_assignment=None, max_in_flight=0):
    """Simulates `text` on `hardware` laid out as `topology` ("AxBxC" or a
    tuple or list of ints such as (2, 2, 1); default near-cubic); returns the report of docs/Simulator.md as a dict
    (step_time_s, compute_time_s, exposed_comm_time_s, ..., peak_memory_bytes,
    fits_in_memory, ops)."""
    return default_context().simulate(_text(text), hardware, topology, entry,
                                      device_assignment, max_in_flight)
