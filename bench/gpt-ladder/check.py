#!/usr/bin/python3
"""Correctness check of gen.py's programs at tiny sizes, on the CPU runtime.

For each mesh (default [1,2,2], [1,2,4], [1,4,2], [2,2,2]):
  1. generates the tiny program (gen.py --scale tiny) with --layers layers;
  2. runs it with overlap-run on random inputs and compares every device's
     output with a NumPy model of the *unpartitioned* transformer layers
     (global x and weights assembled from the shards, the same bf16
     roundings): this proves the 2-D strategy computes the layer;
  3. decomposes it with each variant (plain, unroll=2, bidirectional,
     both) plus ovl-async-collectives, checks that something was
     decomposed, and runs it against the original with
     `overlap-run --reference` (every output of every device).

Usage: check.py [--mesh R,D,M ...] [--layers N] [--partials f32|bf16]
                [--decompose-options OPTS] [--work DIR] [--keep]
The decomposition runs with gate=always: the cost-model gate would rightly
leave programs this small alone.
Tools from $OVERLAP_BIN (default: build/bin of the repository holding this
script). Needs NumPy: run with Debian's /usr/bin/python3.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "python"))
from overlap.models import gpt as gen  # noqa: E402

VARIANTS = {
    "decomposed": "",
    "unroll2": "unroll=2",
    "bidirectional": "bidirectional=true",
    "unroll2-bidirectional": "unroll=2 bidirectional=true",
}


def bf16_round(a):
    """Rounds float32 values to bf16 (nearest even), returned as float32."""
    a = np.asarray(a, dtype=np.float32)
    u = a.view(np.uint32).astype(np.uint64)
    u = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16
    return u.astype(np.uint32).view(np.float32)


def to_bits(a):
    return (bf16_round(a).view(np.uint32) >> 16).astype(np.uint16)


def from_bits(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def layer_norm(x, d_model):
    mean = x.sum(-1, keepdims=True) / d_model
    var = np.maximum((x * x).sum(-1, keepdims=True) / d_model - mean * mean, 0)
    return bf16_round((x - mean) / np.sqrt(var + gen.EPS))


def reference_layer(x, w, cfg, partials):
    """One layer on global tensors, rounding where the program does."""
    f32 = np.float32
    ln = layer_norm(x, cfg.d_model)
    q, k, v = (bf16_round(np.einsum("bsd,dnh->bsnh", ln, w[n], dtype=f32))
               for n in ("wq", "wk", "wv"))
    scores = np.einsum("bsnh,btnh->bnst", q, k, dtype=f32)
    m = scores.max(-1, keepdims=True)
    s = cfg.seq
    mask = np.tril(np.ones((s, s), dtype=bool))
    p = np.where(mask, np.exp((scores - m) / np.sqrt(f32(cfg.head_dim))), 0)
    p = bf16_round(p)
    denom = p.sum(-1)                                   # [b, n, s]
    o = np.einsum("bnst,btnh->bsnh", p, v, dtype=f32)
    o = bf16_round(o / denom.transpose(0, 2, 1)[..., None])
    a = np.einsum("bsnh,dnh->bsd", o, w["wo"], dtype=f32)
    if partials == "bf16":
        a = bf16_round(a)
    h1 = bf16_round(x + a)
    ln2 = layer_norm(h1, cfg.d_model)
    hid = bf16_round(np.maximum(np.einsum("bsd,df->bsf", ln2, w["w1"],
                                          dtype=f32), 0))
    y = np.einsum("bsf,fd->bsd", hid, w["w2"], dtype=f32)
    if partials == "bf16":
        y = bf16_round(y)
    return bf16_round(h1 + y)


def shard_inputs(cfg, layers, rng):
    """Global tensors and each device's shards, in argument order."""
    c = cfg
    D, F, H, h = c.d_model, c.d_ff, c.heads, c.head_dim
    x = bf16_round(rng.standard_normal((c.batch, c.seq, D)))
    weights = []
    for _ in range(layers):
        w = {}
        for n in ("wq", "wk", "wv", "wo"):
            w[n] = bf16_round(rng.standard_normal((D, H, h)) / np.sqrt(D))
        w["w1"] = bf16_round(rng.standard_normal((D, F)) / np.sqrt(D))
        w["w2"] = bf16_round(rng.standard_normal((F, D)) / np.sqrt(F))
        weights.append(w)
    R, N, M = c.replica, c.data, c.model
    b, dm, dn, hl, fl = (c.batch // (R * N), D // M, D // N, H // M, F // M)
    devices = []
    for r in range(R):
        for i in range(N):
            for j in range(M):
                bi = r * N + i       # batch shard over (replica, data)
                args = [x[bi * b:(bi + 1) * b, :, j * dm:(j + 1) * dm]]
                for w in weights:
                    for n in ("wq", "wk", "wv", "wo"):
                        args.append(w[n][i * dn:(i + 1) * dn,
                                         j * hl:(j + 1) * hl])
                    args.append(w["w1"][i * dn:(i + 1) * dn,
                                        j * fl:(j + 1) * fl])
                    args.append(w["w2"][j * fl:(j + 1) * fl,
                                        i * dn:(i + 1) * dn])
                devices.append(((bi, j), args))
    return x, weights, devices, (b, dm)


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True)


def check_mesh(mesh, args, tools, work):
    failures = []
    name = "tiny-%dx%dx%d" % mesh
    cfg = gen.tiny("tiny", mesh, "?")
    cfg.check()
    prog = os.path.join(work, name + ".mlir")
    text = gen.Emitter(cfg, args.partials).program(args.layers)
    with open(prog, "w") as f:
        f.write(text)

    # 2. Against the unpartitioned NumPy model.
    rng = np.random.default_rng(sum(mesh) * 7 + args.layers)
    x, weights, devices, (b, dm) = shard_inputs(cfg, args.layers, rng)
    inputs = os.path.join(work, name + ".inputs")
    outputs = os.path.join(work, name + ".outputs")
    os.makedirs(inputs, exist_ok=True)
    os.makedirs(outputs, exist_ok=True)
    for d, (_, tensors) in enumerate(devices):
        for a, t in enumerate(tensors):
            np.save(os.path.join(inputs, "device%d_input%d.npy" % (d, a)),
                    to_bits(np.ascontiguousarray(t)))
    res = run([tools["run"], prog, "--inputs", inputs, "--save-outputs",
               outputs])
    if res.returncode != 0:
        return ["%s: overlap-run failed:\n%s%s" % (name, res.stdout,
                                                  res.stderr)]
    want = x
    for w in weights:
        want = reference_layer(want, w, cfg, args.partials)
    worst = 0.0
    scale = float(np.abs(want).max())
    for d, ((bi, j), _) in enumerate(devices):
        got = from_bits(np.load(os.path.join(outputs,
                                             "device%d_output0.npy" % d)))
        exp = want[bi * b:(bi + 1) * b, :, j * dm:(j + 1) * dm]
        worst = max(worst, float(np.abs(got - exp).max()))
    # bf16 keeps 8 bits: a few roundings that go the other way under a
    # different summation order stay within a couple of percent of the
    # largest output.
    tol = 3e-2 * scale
    status = "ok" if worst <= tol else "MISMATCH"
    print("%s: %d devices, %d layer(s): vs NumPy model max abs error %.3g "
          "(tolerance %.3g) %s" % (name, cfg.chips, args.layers, worst, tol,
                                   status))
    if worst > tol:
        failures.append("%s: output differs from the NumPy model by %.3g"
                        % (name, worst))

    # 3. Decomposed variants against the original.
    for variant, options in VARIANTS.items():
        opts = " ".join(o for o in (args.decompose_options, options) if o)
        pipeline = ("builtin.module(func.func(ovl-decompose-collective-einsum"
                    "{%s},ovl-async-collectives))" % opts)
        out = os.path.join(work, "%s.%s.mlir" % (name, variant))
        res = run([tools["opt"], prog, "--pass-pipeline=" + pipeline, "-o",
                   out])
        label = "%s [%s]" % (name, opts or "default options")
        if res.returncode != 0:
            failures.append("%s: overlap-opt failed:\n%s" % (label,
                                                             res.stderr))
            continue
        with open(out) as f:
            dec = f.read()
        permutes = dec.count("ovl.collective_permute_start")
        if permutes == 0:
            failures.append("%s: nothing was decomposed" % label)
            continue
        res = run([tools["run"], out, "--reference", prog, "--seed", "11"])
        ok = res.returncode == 0 and ": equal" in res.stdout
        line = [l.strip() for l in res.stdout.splitlines() if "reference" in l]
        print("  %-24s %3d permute starts: %s" % (variant, permutes,
                                                  line[0] if line else
                                                  "FAILED"))
        if not ok:
            failures.append("%s: not equal to the original:\n%s%s"
                            % (label, res.stdout, res.stderr))
    return failures


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mesh", action="append",
                        help="R,DATA,MODEL (repeatable)")
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--partials", choices=["f32", "bf16"], default="f32")
    parser.add_argument("--decompose-options", default="gate=always",
                        help="extra options of the decomposition pass "
                             "(default: 'gate=always'; the cost-model gate "
                             "would leave these tiny programs alone)")
    parser.add_argument("--work", help="directory for the programs "
                                       "(default: a temporary one)")
    parser.add_argument("--keep", action="store_true",
                        help="keep the temporary directory")
    args = parser.parse_args()

    bindir = os.environ.get("OVERLAP_BIN", os.path.join(ROOT, "build", "bin"))
    tools = {"opt": os.path.join(bindir, "overlap-opt"),
             "run": os.path.join(bindir, "overlap-run")}
    for tool in tools.values():
        if not os.access(tool, os.X_OK):
            sys.exit("check.py: %s not found (set OVERLAP_BIN)" % tool)
    meshes = args.mesh or ["1,2,2", "1,2,4", "1,4,2", "2,2,2"]
    work = args.work or tempfile.mkdtemp(prefix="gpt-ladder-check.")
    os.makedirs(work, exist_ok=True)
    failures = []
    for m in meshes:
        mesh = tuple(int(v) for v in m.split(","))
        failures += check_mesh(mesh, args, tools, work)
    if not args.work and not args.keep:
        shutil.rmtree(work)
    if failures:
        print("\n%d failure(s):" % len(failures))
        for f in failures:
            print(" - " + f)
        sys.exit(1)
    print("all equal")


if __name__ == "__main__":
    main()
