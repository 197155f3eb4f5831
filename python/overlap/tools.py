"""The parts of the package that drive overlap's command-line tools rather
than the C API: `run` (overlap-run, the CPU runtime: the JIT runner is not
in the C API) and `trace` (overlap-sim --trace, which the C API's
simulator entry point does not produce).

Tools are found in $OVERLAP_BIN, else in build/bin of this repository.
"""

import json
import numbers
import os
import re
import subprocess
import tempfile

from ._capi import REPO_ROOT, Error, topology_text


def _numpy():
    # Imported on use: `import overlap` (and overlap.models) needs no numpy.
    import numpy
    return numpy


def tool_path(name):
    """Path of the tool `name` (overlap-run, overlap-sim, overlap-opt)."""
    directory = os.environ.get("OVERLAP_BIN") or os.path.join(
        REPO_ROOT, "build", "bin")
    path = os.path.abspath(os.path.join(directory, name))
    if not os.path.exists(path):
        raise Error("%s not found in %s: build the project or set OVERLAP_BIN"
                    % (name, directory))
    return path


def _text(program):
    return program if isinstance(program, str) else str(program)


def _write_program(directory, name, program):
    path = os.path.join(directory, name)
    with open(path, "w") as f:
        f.write(_text(program))
    return path


def _grid_sizes(text):
    """The device counts of the module's grids, as overlap-run counts its
    devices (every grid's size; they must agree), read from the printed
    module, where every grid prints as `shard.grid @name(shape = AxB)`.
    None for a dynamic extent (overlap-run refuses it with the reason)."""
    from . import parse  # the package's default context
    sizes = {}
    for name, shape in re.findall(r"^\s*shard\.grid @(\S+)\(shape = ([^)]*)\)",
                                  parse(text).text, re.M):
        if "?" in shape:
            return None
        size = 1
        for extent in shape.split("x"):
            size *= int(extent)
        sizes[name] = size
    return sizes


def _check_device_count(text, inputs):
    """Refuses `inputs` whose number of device lists is not the program's
    device count: overlap-run would name the first missing temporary .npy
    file instead, or ignore the extra devices."""
    sizes = _grid_sizes(text)
    if sizes is None or len(set(sizes.values())) > 1:
        return  # overlap-run's own error says what is wrong with the grids
    expected = next(iter(sizes.values()), 1)
    if len(inputs) != expected:
        grids = ", ".join("@%s" % name for name in sizes) or "no grid"
        raise Error("run: the program runs on %d device%s (%s) but inputs "
                    "has %d device list%s; pass one list of arrays per device"
                    % (expected, "" if expected == 1 else "s", grids,
                       len(inputs), "" if len(inputs) == 1 else "s"))


def run(text, inputs=None, reference=None, entry=None, seed=None,
        timeout=None, rtol=None, atol=None, rtol_relative_to=None,
        extra_args=()):
    """Runs the program `text` on the CPU runtime with `overlap-run` (one
    thread per device) and returns its outputs: a list per device of numpy
    arrays.

    `inputs`: a list per device of the entry function's arguments as numpy
    arrays (bf16 as uint16 bit patterns, see `to_bf16`), one list for each
    device of the program's grid (another count raises `Error` naming
    both); None takes
    overlap-run's deterministic inputs of `seed` (default 0).
    `reference`: the text of a second program run on the same inputs; the
    outputs must match within the tolerance (`rtol`, `atol`, defaults by
    type; `rtol_relative_to` "tensor-scale", the default, or "element") or
    `Error` is raised. Each input array must have its argument's dtype, or
    another width of the same kind holding only values exact in it.
    `extra_args`: more overlap-run flags; it runs in a temporary directory,
    so a path among them must be absolute. Programs run before come from
    overlap-run's compile cache (docs/Runtime.md).
    """
    np = _numpy()
    if inputs is not None:
        _check_device_count(text, inputs)
    with tempfile.TemporaryDirectory(prefix="overlap-run-") as tmp:
        # Run from `tmp` with relative names: the programs' locations (which
        # the compiled code keeps for its error messages) are then the same
        # in every call, so that overlap-run's compile cache finds a text
        # run before.
        _write_program(tmp, "program.mlir", text)
        args = [tool_path("overlap-run"), "program.mlir"]
        outdir = os.path.join(tmp, "outputs")
        os.mkdir(outdir)
        args += ["--save-outputs", outdir, "--json"]
        if inputs is not None:
            indir = os.path.join(tmp, "inputs")
            os.mkdir(indir)
            for d, arrays in enumerate(inputs):
                for i, array in enumerate(arrays):
                    np.save(os.path.join(indir, "device%d_input%d.npy" % (d, i)),
                            np.ascontiguousarray(array))
            args += ["--inputs", indir]
        else:
            args += ["--seed", str(seed or 0)]
        if reference is not None:
            _write_program(tmp, "reference.mlir", reference)
            args += ["--reference", "reference.mlir"]
        if entry:
            args += ["--entry", entry]
        if timeout is not None:
            args += ["--timeout", str(timeout)]
        if rtol is not None:
            args += ["--rtol", str(rtol)]
        if atol is not None:
            args += ["--atol", str(atol)]
        if rtol_relative_to is not None:
            args += ["--rtol-relative-to", str(rtol_relative_to)]
        args += list(extra_args)
        proc = subprocess.run(args, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, cwd=tmp)
        if proc.returncode != 0:
            what = {1: "outputs differ from the reference"}.get(
                proc.returncode, "overlap-run failed (exit %d)"
                % proc.returncode)
            raise Error("%s:\n%s%s" % (what, proc.stderr, proc.stdout))
        outputs = []
        d = 0
        while os.path.exists(os.path.join(outdir, "device%d_output0.npy" % d)):
            device = []
            i = 0
            while True:
                path = os.path.join(outdir, "device%d_output%d.npy" % (d, i))
                if not os.path.exists(path):
                    break
                device.append(np.load(path))
                i += 1
            outputs.append(device)
            d += 1
        return outputs


def _trace_devices(devices):
    """--trace-devices of `devices`: "all", a list such as "0,2,5-7", or
    ints."""
    if isinstance(devices, str):
        return devices
    if isinstance(devices, (list, tuple, range)) and devices and all(
            isinstance(d, numbers.Integral) and not isinstance(d, bool)
            for d in devices):
        return ",".join(str(int(d)) for d in devices)
    raise TypeError("devices must be \"all\", a string like \"0,2,5-7\" or "
                    "a non-empty list of ints; got %r" % (devices,))


def trace(text, hardware="tpu-v4", topology=None, entry=None, devices=None,
          max_events=None):
    """Simulates `text` with `overlap-sim --json --trace` and returns the
    report (as `simulate` does) with the Chrome/Perfetto trace under
    report["trace"], for `plot_timeline`. `devices` (--trace-devices):
    the devices the trace shows, "all", "0,2,5-7" or a list of ints
    (default 0-7); `max_events` (--trace-max-events): its bound on spans
    (default 200000, 0 for none). report["trace"]["otherData"]["note"]
    says what the trace left out."""
    with tempfile.TemporaryDirectory(prefix="overlap-sim-") as tmp:
        program = _write_program(tmp, "program.mlir", text)
        trace_path = os.path.join(tmp, "trace.json")
        args = [tool_path("overlap-sim"), program, "--json", "--trace",
                trace_path]
        if hardware:
            args += ["--hardware", hardware]
        topology = topology_text(topology)
        if topology:
            args += ["--topology", topology]
        if entry:
            args += ["--entry", entry]
        if devices is not None:
            args += ["--trace-devices=" + _trace_devices(devices)]
        if max_events is not None:
            args += ["--trace-max-events=%d" % max_events]
        proc = subprocess.run(args, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
        if proc.returncode != 0:
            raise Error("overlap-sim failed (exit %d):\n%s"
                        % (proc.returncode, proc.stderr))
        report = json.loads(proc.stdout)
        with open(trace_path) as f:
            report["trace"] = json.load(f)
        return report


def to_bf16(array):
    """float array -> bf16 bit patterns (uint16), rounding to nearest even,
    the form overlap-run reads and writes for bf16 tensors."""
    np = _numpy()
    bits = np.asarray(array, dtype=np.float32).view(np.uint32)
    rounded = bits + 0x7FFF + ((bits >> 16) & 1)
    return (rounded >> 16).astype(np.uint16)


def from_bf16(bits):
    """bf16 bit patterns (uint16) -> float32 array. Integers that fit in 16
    bits are bit patterns too; anything else (a float array, which the
    conversion would reinterpret into garbage) raises TypeError or
    ValueError."""
    np = _numpy()
    patterns = np.asarray(bits)
    if patterns.dtype.kind not in "ui":
        raise TypeError("from_bf16: bit patterns are unsigned 16-bit "
                        "integers, not %s (to_bf16 makes them from floats)"
                        % patterns.dtype)
    if patterns.size and (patterns.min() < 0 or patterns.max() > 0xFFFF):
        raise ValueError("from_bf16: a bit pattern is out of range "
                         "[0, 65535]")
    return (patterns.astype(np.uint32) << 16).view(np.float32)
