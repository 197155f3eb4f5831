#!/usr/bin/env python3
"""The command-line mutation fuzzer: runs overlap-opt, overlap-sim and
overlap-run as users do, on the seed corpus, with flags and values drawn
from each tool's own --help and mutated to the values that break parsers
(empty, huge, negative, NaN, a path that never ends), and reports every run
that does not end the way the tools promise.

A run is fine when it exits 0, 1 or 2 (overlap-run also 70) and says why
when it fails. A finding: a signal, a sanitizer report, any other status,
a failure with nothing on stderr, or no end within --timeout seconds.
Findings are deduplicated by stack signature (triage.py); each distinct one
is written to FINDINGS/cmdline-<hash>.sh, a script that replays it.

Usage: cmdline.py --bin DIR --seeds DIR --findings DIR
                  [--seconds N | --runs N] [--seed N] [--timeout S]
Exit status 1 when there is a finding, 2 on a usage error.
"""
import argparse
import hashlib
import os
import pathlib
import random
import re
import shlex
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import triage  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
TOOLS = ("overlap-opt", "overlap-sim", "overlap-run")
# overlap-run compiles each program (seconds under the sanitizers): fewer.
WEIGHTS = (5, 4, 1)
FINE = {"overlap-opt": {0, 1, 2}, "overlap-sim": {0, 1, 2},
        "overlap-run": {0, 1, 2, 70}}
# MLIR's generic flags worth mixing into overlap-opt's command lines. Not
# --mlir-very-unsafe-disable-verifier-on-parsing: passes may assume
# verified input, and a pass's assertion on a program the verifier refuses
# is what the flag's name warns of (runs 8-10 found two).
OPT_EXTRA = ["--canonicalize", "--cse", "--split-input-file",
             "--mlir-print-ir-after-all", "--verify-each=false",
             "--pass-pipeline=", "--mlir-timing"]


def interesting_values(scratch):
    """Values that break number, list, path and enum parsers."""
    never_ends = scratch / "fifo"
    if not never_ends.exists():
        os.mkfifo(never_ends)
    hardware = scratch / "hw.json"
    hardware.write_text((ROOT / "test/Dialect/Ovl/Inputs/slow-chip.json")
                        .read_text())
    return ["", "0", "1", "2", "-1", "3", "8", "65536", "65537",
            "2147483648", "4294967296", "9223372036854775807",
            "9223372036854775808", "18446744073709551616", "1e308", "1e-308",
            "nan", "inf", "-inf", "0.5", "0x10", "1,2", "0,0", "-1,0",
            ",", "1,,2", "abc", "'", "{", "}", "\"", "=", "a=b",
            "tpu-v4", "tpu-v5e", "h100-nvlink", "64x64x64", "0x4", "2x2x1",
            "1x1", "1048576x2", "all", "0-7", "7-0", "native", "haswell",
            "always", "never", "cost", "auto", "bottom-up", "top-down",
            "threads", "mpi", "/dev/zero", "/dev/null",
            # Missing, and inside the scratch folder: a flag that writes
            # (-o) must not create it anywhere else.
            str(scratch / "missing" / "file"),
            str(never_ends), str(scratch), str(hardware), "-", "--help"]


def flags_of(tool_path):
    """(flag, takes_value) of the tool's own flags, from its --help: the
    "<tool> options" section, and for overlap-opt the passes of overlap
    with each option as `--pass=option=value`."""
    text = subprocess.run([tool_path, "--help"], capture_output=True,
                          text=True, timeout=60).stdout
    name = pathlib.Path(tool_path).name
    flags = []
    if name == "overlap-opt":
        current = None
        for line in text.splitlines():
            pass_match = re.match(r"^      --([\w-]+)", line)
            option = re.match(r"^        --([\w-]+)(=<)?", line)
            if pass_match:
                current = pass_match.group(1)
                if not re.match(r"(convert-)?ovl", current):
                    current = None
                    continue
                flags.append((f"--{current}", False))
            elif option and current:
                flags.append((f"--{current}={option.group(1)}=", True))
            elif not line.startswith("    "):
                current = None
        flags += [(f, f.endswith("=")) for f in OPT_EXTRA]
        flags += [("--quiet", False), ("--progress", False),
                  ("--progress-every=", True), ("-o", True)]
        return flags
    section = text.split(f"{name} options:", 1)[-1]
    for line in section.splitlines():
        match = re.match(r"^  (--?[\w-]+)(=<| <)?", line)
        if match:
            flags.append((match.group(1) + ("=" if match.group(2) else ""),
                          bool(match.group(2))))
    return flags


def elements(text):
    """The most elements of any tensor or memref type in `text`."""
    most = 0
    for shape in re.findall(r"(?:tensor|memref)<((?:\d+x)+)", text):
        count = 1
        for extent in shape.rstrip("x").split("x"):
            count *= int(extent)
        most = max(most, count)
    return most


def runnable(seeds):
    """The seeds overlap-run executes in well under the timeout: a run
    computes for real, and an 8192x4096 einsum on 8 devices takes minutes
    on two cores without any bug."""
    return [s for s in seeds if elements(s.read_text(errors="replace"))
            <= 1 << 16]


# Values most flags take: half the values are drawn from these, so that
# runs get past the flags' checks into the work.
GOOD = ["0", "1", "2", "8", "true", "false", "tpu-v4", "h100-nvlink",
        "2x2x1", "4x1x1", "always", "cost", "never", "auto", "top-down"]

# Values that are valid and take long for a reason: a million steps, or a
# FIFO no one reads or writes, waited for as by cat where a program is read
# or an output written.
SLOW = {"--repeat=": {"65536", "65537", "2147483648", "4294967296"}}
SLOW.update({flag: {"fifo"} for flag in
             ("--reference=", "-o", "--trace=", "--save-outputs=",
              "--ready-file=", "--cache-dir=")})


def command(rng, tool, flags, values, seeds):
    """One command line: an input (a seed, or a value such as a FIFO) and
    one to four flags with values, half of them plausible."""
    values = GOOD if rng.random() < 0.5 else values
    args = [tool]
    chosen = rng.sample(flags, min(len(flags), rng.randint(1, 4)))
    for flag, takes_value in chosen:
        if not takes_value:
            args.append(flag if rng.random() < 0.9 else flag + "=" +
                        rng.choice(values))
        elif flag.endswith("="):
            args.append(flag + rng.choice(
                [v for v in values if v not in SLOW.get(flag, ()) and
                 pathlib.Path(v).name not in SLOW.get(flag, ())]))
        else:
            args += [flag, rng.choice(
                [v for v in values if pathlib.Path(v).name
                 not in SLOW.get(flag, ())])]
    if tool.endswith("overlap-run") and not any(
            a.startswith("--repeat") for a in args):
        args.append("-O")
        args.append("0")
    # Not the FIFO: a program read from a pipe is waited for, as by cat.
    args.append(str(rng.choice(seeds)) if rng.random() < 0.9
                else rng.choice([v for v in values if "fifo" not in v]))
    if tool.endswith("overlap-opt") and "-o" not in args:
        args += ["-o", "/dev/null"]
    return args


def run(args, timeout, scratch):
    """Runs `args` in a scratch folder: what a flag writes (--trace=abc,
    --save-outputs=3, the compile cache) lands there."""
    cwd = scratch / "cwd"
    cwd.mkdir(exist_ok=True)
    env = dict(os.environ, OVERLAP_CACHE_DIR=str(scratch / "cache"))
    try:
        done = subprocess.run(args, capture_output=True, timeout=timeout,
                              stdin=subprocess.DEVNULL, env=env, cwd=cwd)
    except subprocess.TimeoutExpired:
        return None, f"timed out after {timeout} s"
    return done.returncode, done.stderr.decode(errors="replace")


def verdict(tool, status, stderr):
    """What is wrong with the run, or None."""
    if status is None:
        return "timeout"
    if "Sanitizer" in stderr or "runtime error:" in stderr:
        return "sanitizer report"
    if status < 0:
        return f"signal {-status}"
    if status not in FINE[tool]:
        return f"exit status {status}"
    if status != 0 and not stderr.strip():
        return "failed without a message"
    return None


def finding_signature(args, stderr, problem):
    """The stack's signature; a run with no stack (a timeout, a silent
    failure, an odd status) is named by the tool and its flags."""
    if problem.startswith("sanitizer"):
        return triage.signature(stderr)
    if problem.startswith("signal"):
        return f"{problem} | {triage.top_frames(stderr)}"
    flags = sorted({a.split("=")[0] for a in args[1:] if a.startswith("-")})
    return f"{problem} | {pathlib.Path(args[0]).name} {' '.join(flags)}"


def write_finding(findings, args, stderr, sig):
    """FINDINGS/cmdline-<hash>.sh replays the first run of each signature;
    its .log holds what the tool printed."""
    key = hashlib.sha1(sig.encode()).hexdigest()[:12]
    script = findings / f"cmdline-{key}.sh"
    if not script.exists():
        script.write_text("#!/bin/sh\n# " + sig + "\n" + shlex.join(args) +
                          "\n")
        (findings / f"cmdline-{key}.log").write_text(stderr)
    return key


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin", required=True, type=pathlib.Path)
    parser.add_argument("--seeds", required=True, type=pathlib.Path)
    parser.add_argument("--findings", required=True, type=pathlib.Path)
    parser.add_argument("--seconds", type=float, default=0)
    parser.add_argument("--runs", type=int, default=0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=300)
    args = parser.parse_args(argv)
    if (args.seconds <= 0) == (args.runs <= 0):
        parser.error("give --seconds or --runs, a positive number")
    # The tools run in a scratch folder: every path absolute.
    args.bin, args.seeds = args.bin.resolve(), args.seeds.resolve()
    args.findings = args.findings.resolve()
    seeds = sorted(p for p in args.seeds.iterdir() if p.is_file())
    if not seeds:
        parser.error(f"no seeds in {args.seeds}")
    small = runnable(seeds)
    args.findings.mkdir(parents=True, exist_ok=True)
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as scratch:
        scratch = pathlib.Path(scratch)
        values = interesting_values(scratch)
        flags = {t: flags_of(args.bin / t) for t in TOOLS}
        found, known, runs, start = {}, {}, 0, time.monotonic()
        statuses = {}
        while (runs < args.runs if args.runs
               else time.monotonic() - start < args.seconds):
            tool = rng.choices(TOOLS, WEIGHTS)[0]
            line = command(rng, str(args.bin / tool), flags[tool], values,
                           small if tool == "overlap-run" else seeds)
            status, stderr = run(line, args.timeout, scratch)
            runs += 1
            statuses[status] = statuses.get(status, 0) + 1
            problem = verdict(tool, status, stderr)
            upstream = problem and triage.known_upstream(stderr)
            if upstream:
                if upstream not in known:
                    print(f"cmdline: known upstream crash: {upstream}",
                          flush=True)
                known[upstream] = known.get(upstream, 0) + 1
            elif problem:
                sig = finding_signature(line, stderr, problem)
                key = write_finding(args.findings, line, stderr, sig)
                if sig not in found:
                    print(f"cmdline: new finding {key} ({problem}, "
                          f"{triage.owner(stderr, ROOT)}): {sig}", flush=True)
                found.setdefault(sig, [key, 0])[1] += 1
            if runs % 100 == 0:
                print(f"cmdline: {runs} runs, {len(found)} distinct "
                      f"finding(s), {time.monotonic() - start:.0f} s",
                      flush=True)
    summary = ", ".join(f"{k}: {v}" for k, v in sorted(
        statuses.items(), key=lambda kv: str(kv[0])))
    print(f"cmdline: {runs} runs in {time.monotonic() - start:.0f} s "
          f"(exit statuses {summary}); {len(found)} distinct finding(s)")
    for what, count in sorted(known.items()):
        print(f"cmdline: known upstream x{count}: {what}")
    for sig, (key, count) in sorted(found.items()):
        print(f"cmdline: {key} x{count}: {sig}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
