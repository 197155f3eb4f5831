"""Training-step programs of overlap.models.gpt (--step train, TrainEmitter):
every device's loss and gradients against an independent NumPy model of the
unpartitioned step (itself checked against float64 directional
derivatives), the same programs through the overlap pipeline, and the
--step / --remat command line.

The CPU runtime runs with -O 0 (`overlap-run -O 0`): its outputs are
bit-identical to the default level's on these programs and it compiles
about five times faster.

ovl-overlap-pipeline with its default options prices every collective in
its block's window (async-collectives), which takes minutes on these
programs (about 30 s for one tiny layer, 110-480 s for two, on 2 cores):
the default run checks the pipeline with async_collectives=False (the
paper's gate: decomposed or blocking) and with gate="never" (every
collective asynchronous); OVERLAP_SLOW_TESTS=1 adds the default options
with the cost gate and gate="always", on one and two layers (about 15
minutes)."""

import hashlib
import os
import subprocess
import sys

import numpy as np
import pytest

import outputs
import overlap
from overlap.models import gpt

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") \
    else sys.executable
FAST = ("-O", "0")          # overlap-run's JIT level, see the docstring
# A transformed step against the original: the programs compute in bf16, and
# a decomposition that reorders an f32 sum (a loop both ways round) can flip
# a bf16 rounding (2^-8 relative) that later einsums carry on; overlap-run's
# default tolerance is an f32 program's. The NumPy comparison's tolerance.
AGAINST_ORIGINAL = FAST + ("--rtol", str(outputs.RTOL))
SLOW = bool(os.environ.get("OVERLAP_SLOW_TESTS"))

# (mesh [replica, data, model], layers, remat): the tiny config.
CASES = [
    ((1, 2, 2), 1, "save"),
    ((1, 2, 2), 2, "nothing"),
    ((1, 2, 4), 1, "nothing"),
    ((1, 2, 4), 2, "save"),
    ((2, 2, 2), 1, "save"),     # a replica axis: weight gradients all-reduced
]
IDS = ["%s-%dL-%s" % ("x".join(map(str, m)), l, r) for m, l, r in CASES]


def config(mesh):
    cfg = gpt.tiny("tiny", mesh, "?")
    cfg.check()
    return cfg


def program(case, partials="f32"):
    mesh, layers, remat = case
    return gpt.TrainEmitter(config(mesh), partials, remat).program(layers)


def names(layers):
    return ["loss", "dx"] + ["%s_%d" % (n, l) for l in range(layers)
                             for n in gpt.WEIGHTS]


def layout(cfg):
    """Per device (row-major over [replica, data, model], as overlap-run
    numbers them): the slices of the global activation [B, S, D] (input,
    output, target, dx) and of each global weight that it holds."""
    c = cfg
    R, N, M = c.replica, c.data, c.model
    b, dm = c.batch // (R * N), c.d_model // M
    dn, hl, fl = c.d_model // N, c.heads // M, c.d_ff // M
    out = []
    for r in range(R):
        for i in range(N):
            for j in range(M):
                bi = r * N + i       # batch shard over (replica, data)
                act = (slice(bi * b, (bi + 1) * b), slice(None),
                       slice(j * dm, (j + 1) * dm))
                dslice, hslice = slice(i * dn, (i + 1) * dn), \
                    slice(j * hl, (j + 1) * hl)
                fslice = slice(j * fl, (j + 1) * fl)
                w = {n: (dslice, hslice) for n in ("wq", "wk", "wv", "wo")}
                w["w1"] = (dslice, fslice)
                w["w2"] = (fslice, dslice)
                out.append((act, w))
    return out


def bf16(a):
    """Rounds float32 values to bf16 (kept as float32)."""
    return overlap.from_bf16(overlap.to_bf16(np.asarray(a, np.float32)))


def inputs(case, seed=0):
    """Per device: input and weights as bf16 bit patterns (argument order),
    the target as float32. Each device draws its own shards."""
    mesh, layers, _ = case
    cfg = config(mesh)
    c = cfg
    R, N, M = c.replica, c.data, c.model
    rng = np.random.default_rng(seed)
    D, F, H, h = c.d_model, c.d_ff, c.heads, c.head_dim
    # Global weights drawn once (a weight shard is replicated over the
    # replica axis), activations and targets per device.
    weights = []
    for _ in range(layers):
        w = {n: rng.standard_normal((D, H, h)) / np.sqrt(D)
             for n in ("wq", "wk", "wv", "wo")}
        w["w1"] = rng.standard_normal((D, F)) / np.sqrt(D)
        w["w2"] = rng.standard_normal((F, D)) / np.sqrt(F)
        weights.append(w)
    ins = []
    for act, ws in layout(cfg):
        shape = np.empty((c.batch, c.seq, D))[act].shape
        args = [overlap.to_bf16(rng.standard_normal(shape))]
        for w in weights:
            args += [overlap.to_bf16(w[n][ws[n]]) for n in gpt.WEIGHTS]
        args.append(rng.standard_normal(shape).astype(np.float32))
        ins.append(args)
    return ins


def assemble(case, ins):
    """The global input, weights (a list of dicts) and target, float32,
    from the devices' shards; replicated shards must agree."""
    mesh, layers, _ = case
    cfg = config(mesh)
    c = cfg
    gshape = (c.batch, c.seq, c.d_model)
    x, t = np.zeros(gshape, np.float32), np.zeros(gshape, np.float32)
    wshape = {n: (c.d_model, c.heads, c.head_dim)
              for n in ("wq", "wk", "wv", "wo")}
    wshape["w1"], wshape["w2"] = (c.d_model, c.d_ff), (c.d_ff, c.d_model)
    weights = [{n: np.full(wshape[n], np.nan, np.float32)
                for n in gpt.WEIGHTS} for _ in range(layers)]
    seen = np.zeros(gshape, bool)
    for (act, ws), args in zip(layout(cfg), ins):
        x[act] = overlap.from_bf16(args[0])
        t[act] = args[-1]
        seen[act] = True
        for l in range(layers):
            for k, n in enumerate(gpt.WEIGHTS):
                shard = overlap.from_bf16(args[1 + 6 * l + k])
                old = weights[l][n][ws[n]]
                assert np.isnan(old).all() or np.array_equal(old, shard)
                weights[l][n][ws[n]] = shard
    assert seen.all()
    assert not any(np.isnan(w[n]).any() for w in weights for n in w)
    return x, weights, t


# -- the NumPy model of the unpartitioned step --------------------------------

class Precision:
    """float32 with the program's bf16 roundings, or float64 without any
    (for the derivative check)."""

    def __init__(self, dtype, rnd):
        self.dtype, self.rnd = dtype, rnd


F32 = Precision(np.float32, bf16)
F64 = Precision(np.float64, lambda a: a)


def ln_forward(x, d_model, p):
    mean = x.sum(-1, keepdims=True) / d_model
    var = np.maximum((x * x).sum(-1, keepdims=True) / d_model - mean * mean,
                     0)
    rs = 1 / np.sqrt(var + gpt.EPS)
    xhat = (x - mean) * rs
    return p.rnd(xhat), (xhat, rs)


def ln_backward(g, cache):
    """The textbook layer-norm backward (the program writes it through its
    statistics' cotangents instead)."""
    xhat, rs = cache
    return rs * (g - g.mean(-1, keepdims=True)
                 - xhat * (g * xhat).mean(-1, keepdims=True))


def layer_forward(x, w, cfg, partials, p):
    """One layer on global tensors, rounding where the program does, and
    what its backward reads."""
    f, r = p.dtype, p.rnd
    S = cfg.seq

    def e(eq, *a):
        return np.einsum(eq, *a, dtype=f)

    c = {}
    ln1, c["ln1"] = ln_forward(x, cfg.d_model, p)
    q, k, v = (r(e("bsd,dnh->bsnh", ln1, w[n])) for n in ("wq", "wk", "wv"))
    scale = 1 / np.sqrt(f(cfg.head_dim))
    scores = e("bsnh,btnh->bnst", q, k)
    ex = np.exp((scores - scores.max(-1, keepdims=True)) * scale)
    mask = np.tril(np.ones((S, S), dtype=bool))
    probs = r(np.where(mask, ex, 0))
    den = probs.sum(-1)[..., None]                     # [b, n, s, 1]
    pv = e("bnst,btnh->bsnh", probs, v)
    den_s = den.transpose(0, 2, 1, 3)                  # [b, s, n, 1]
    o = r(pv / den_s)
    a = e("bsnh,dnh->bsd", o, w["wo"])
    if partials == "bf16":
        a = r(a)
    h1 = r(x + a)
    ln2, c["ln2"] = ln_forward(h1, cfg.d_model, p)
    hid = e("bsd,df->bsf", ln2, w["w1"])
    act = r(np.maximum(hid, 0))
    y = e("bsf,fd->bsd", act, w["w2"])
    if partials == "bf16":
        y = r(y)
    c.update(ln1v=ln1, q=q, k=k, v=v, ex=ex, mask=mask, probs=probs, den=den,
             den_s=den_s, pv=pv, o=o, ln2v=ln2, hid=hid, act=act, scale=scale)
    return r(h1 + y), c


def layer_backward(g, c, w, p, relu_mask=True, causal_mask=True,
                   denom_term=True, ln_mean_terms=True):
    """The hand-written backward of layer_forward (rounding to bf16 where
    the program does); the flags drop one term each, for the tests that
    show the comparisons can fail. Returns (d input, {weight: grad})."""
    f, r = p.dtype, p.rnd

    def e(eq, *a):
        return np.einsum(eq, *a, dtype=f)

    def ln_bwd(g, cache):
        return ln_backward(g, cache) if ln_mean_terms else g * cache[1]

    grads = {}
    gy = r(g)
    grads["w2"] = e("bsf,bsd->fd", c["act"], gy)
    dact = e("bsd,fd->bsf", gy, w["w2"])
    dh = r(np.where(c["hid"] > 0, dact, 0) if relu_mask else dact)
    grads["w1"] = e("bsd,bsf->df", c["ln2v"], dh)
    gh1 = g + ln_bwd(e("bsf,df->bsd", dh, w["w1"]), c["ln2"])
    ga = r(gh1)
    grads["wo"] = e("bsnh,bsd->dnh", c["o"], ga)
    d_o = e("bsd,dnh->bsnh", ga, w["wo"])
    # Flash attention's form: delta = sum_h d_o * (pv / denom).
    delta = (d_o * (c["pv"] / c["den_s"])).sum(-1)     # [b, s, n]
    delta = delta.transpose(0, 2, 1)[..., None]        # [b, n, s, 1]
    dpv = r(d_o / c["den_s"])
    dprobs = e("bsnh,btnh->bnst", dpv, c["v"])
    dv = r(e("bnst,bsnh->btnh", c["probs"], dpv))
    if denom_term:
        dprobs = dprobs - delta / c["den"]
    dz = c["ex"] * c["scale"] * dprobs
    ds = r(np.where(c["mask"], dz, 0) if causal_mask else dz)
    dq = r(e("bnst,btnh->bsnh", ds, c["k"]))
    dk = r(e("bnst,bsnh->btnh", ds, c["q"]))
    dln1 = 0
    for n, d in (("wq", dq), ("wk", dk), ("wv", dv)):
        grads[n] = e("bsd,bsnh->dnh", c["ln1v"], d)
        dln1 = dln1 + e("bsnh,dnh->bsd", d, w[n])
    return gh1 + ln_bwd(dln1, c["ln1"]), grads


def numpy_step(x, weights, t, cfg, partials="f32", p=F32, **kw):
    """The unpartitioned step: (loss, dx, [{weight: grad} per layer])."""
    f = p.dtype
    x, t = x.astype(f), t.astype(f)
    weights = [{n: a.astype(f) for n, a in w.items()} for w in weights]
    caches, h = [], x
    for w in weights:
        h, c = layer_forward(h, w, cfg, partials, p)
        caches.append(c)
    dy = h - t
    loss = f(0.5) * np.sum(dy * dy, dtype=f)
    g, grads = dy, [None] * len(weights)
    for l in reversed(range(len(weights))):
        g, grads[l] = layer_backward(g, caches[l], weights[l], p, **kw)
    return loss, g, grads


def expected(case, ins, **kw):
    """Every device's outputs (loss, dx, then each layer's weight
    gradients) sliced from the NumPy step."""
    mesh, layers, _ = case
    cfg = config(mesh)
    x, weights, t = assemble(case, ins)
    loss, dx, grads = numpy_step(x, weights, t, cfg, **kw)
    return [[loss, dx[act]] + [grads[l][n][ws[n]] for l in range(layers)
                               for n in gpt.WEIGHTS]
            for act, ws in layout(cfg)]


def mismatches(case, got, want):
    """The outputs (device:name) that differ beyond RTOL (outputs.py)."""
    return outputs.mismatches(got, want, names(case[1]))


@pytest.fixture(scope="module", params=CASES, ids=IDS)
def case_run(request):
    """(case, program text, inputs, outputs of the CPU runtime)."""
    case = request.param
    text = program(case)
    ins = inputs(case)
    return case, text, ins, overlap.run(text, ins, extra_args=FAST)


# -- the NumPy model is right -------------------------------------------------

def directional_errors(case, **kw):
    """For the input and each weight: the relative difference between the
    NumPy backward's gradient along a random direction and the central
    difference of the NumPy loss, both in float64 without roundings."""
    mesh, layers, _ = case
    cfg = config(mesh)
    x, weights, t = assemble(case, inputs(case, seed=5))
    x, t = x.astype(np.float64), t.astype(np.float64)
    weights = [{n: a.astype(np.float64) for n, a in w.items()}
               for w in weights]
    _, dx, grads = numpy_step(x, weights, t, cfg, p=F64, **kw)
    rng = np.random.default_rng(7)
    eps = 1e-5
    errors = {}
    params = [("dx", x, dx)] + [("%s_%d" % (n, l), weights[l][n],
                                 grads[l][n])
                                for l in range(layers) for n in gpt.WEIGHTS]
    for name, value, grad in params:
        u = rng.standard_normal(value.shape)
        analytic = float(np.sum(grad * u))
        loss = []
        for sign in (1, -1):
            value += sign * eps * u
            loss.append(numpy_step(x, weights, t, cfg, p=F64)[0])
            value -= sign * eps * u
        numeric = (loss[0] - loss[1]) / (2 * eps)
        errors[name] = abs(analytic - numeric) / max(abs(numeric), 1e-12)
    return errors


def test_numpy_backward_matches_directional_derivatives():
    """The NumPy backward (without roundings, float64) is the derivative
    of the NumPy loss along a random direction of the input and of every
    weight of both layers: the reference is right, not only consistent
    with the program."""
    errors = directional_errors(((1, 2, 2), 2, "save"))
    assert len(errors) == 13
    assert max(errors.values()) < 1e-6, errors


def test_directional_derivative_check_can_fail():
    """A backward without the causal mask, without the softmax
    denominator's term or without the layer norm's mean terms is caught."""
    case = ((1, 2, 2), 2, "save")
    for kw, hit in [({"causal_mask": False}, ("wq_0", "wk_1", "dx")),
                    ({"denom_term": False}, ("wq_0", "wk_1", "dx")),
                    ({"ln_mean_terms": False}, ("w1_0", "wq_1", "dx"))]:
        errors = directional_errors(case, **kw)
        for name in hit:
            assert errors[name] > 1e-2, (kw, name, errors[name])


# -- the program computes the step --------------------------------------------

def test_train_step_equals_numpy(case_run):
    case, text, ins, out = case_run
    mesh, layers, _ = case
    devices = int(np.prod(mesh))
    assert len(out) == devices
    assert all(len(d) == 2 + 6 * layers for d in out)
    want = expected(case, ins)
    for d in range(devices):
        # loss: a scalar; every gradient shaped as its argument, f32
        assert out[d][0].shape == () and out[d][0].dtype == np.float32
        for g, arg in zip(out[d][1:], ins[d][:-1]):
            assert g.dtype == np.float32 and g.shape == arg.shape
    assert mismatches(case, out, want) == []
    # The loss is the same global scalar on every device, and close.
    losses = [float(d[0]) for d in out]
    assert len(set(losses)) == 1
    np.testing.assert_allclose(losses[0], float(want[0][0]), rtol=1e-4)


def test_train_step_comparison_can_fail(case_run):
    """The tolerance catches a wrong sharding and a missing term."""
    case, text, ins, out = case_run
    mesh, layers, _ = case
    want = expected(case, ins)
    # Devices 0 and 1 (the two model shards of one data row) with their
    # expected gradient shards swapped: every gradient of both mismatches.
    swapped = [list(d) for d in want]
    swapped[0][1:], swapped[1][1:] = want[1][1:], want[0][1:]
    bad = mismatches(case, out, swapped)
    for d in (0, 1):
        for name in names(layers)[1:]:
            assert "%d:%s" % (d, name) in bad
    # Terms of the backward left out: the gradients they reach are wrong
    # on every device.
    for kw, reached in [({"causal_mask": False}, ["wq_0", "wk_0", "dx"]),
                        ({"denom_term": False}, ["wq_0", "wk_0", "dx"]),
                        ({"relu_mask": False}, ["w1_0", "wq_0", "dx"]),
                        ({"ln_mean_terms": False}, ["wo_0", "wv_0", "dx"])]:
        bad = mismatches(case, out, expected(case, ins, **kw))
        for d in range(len(out)):
            for name in reached:
                assert "%d:%s" % (d, name) in bad, (kw, d, name)
    # A weight gradient summed over the device's own batch only (the
    # reduce_scatter's sum along data left out): the device's own part of
    # the sum differs from the total.
    mine = [list(d) for d in want]
    x, weights, t = assemble(case, ins)
    cfg = config(mesh)
    for d, (act, ws) in enumerate(layout(cfg)):
        rows = act[0]
        _, _, grads = numpy_step(x[rows], weights, t[rows], cfg)
        mine[d][2 + 5] = grads[0]["w2"][ws["w2"]]
    bad = mismatches(case, out, mine)
    assert all("%d:w2_0" % d in bad for d in range(len(out)))


def test_train_forward_is_the_forward_program():
    """The step's forward is the forward program's body, op for op (both
    partials, both remat policies, with a replica axis)."""
    for mesh in [(1, 2, 2), (2, 2, 2)]:
        cfg = config(mesh)
        for partials in ("f32", "bf16"):
            forward = gpt.Emitter(cfg, partials).program(2)
            body = forward.split(") -> ")[1].split("\n", 1)[1]
            body = body.split("  return ")[0]
            for remat in gpt.REMAT:
                train = gpt.TrainEmitter(cfg, partials, remat).program(2)
                start = train.index("func.func @gpt_layers_train(")
                assert train.index(body) > start
                assert train.index(body) < train.index("// ---- loss")


def test_remat_nothing_gathers_again():
    """remat nothing recomputes each layer's forward: the weights and the
    normalised activations are gathered again and the layer norm's and the
    attention output's collectives run again; save gathers only the
    gradients' collectives in its backward."""
    cfg = config((1, 2, 2))

    def count(text, what):
        return text.count(what)

    save = gpt.TrainEmitter(cfg, "f32", "save").program(2)
    nothing = gpt.TrainEmitter(cfg, "f32", "nothing").program(2)
    forward = gpt.Emitter(cfg, "f32").program(2)
    fwd_gathers = count(forward, "ovl.all_gather")            # 2 x 8
    assert fwd_gathers == 16
    # backward: 2 gradient gathers per layer (save); nothing adds the
    # layer's 8 gathers again
    assert count(save, "ovl.all_gather") == fwd_gathers + 2 * 2
    assert count(nothing, "ovl.all_gather") == fwd_gathers + 2 * 2 + 2 * 8
    for name in gpt.WEIGHTS:
        for l in range(2):
            arg = "%%%s_%d " % (name, l)
            assert count(save.split("// ---- loss")[1], arg) == 0
            assert count(nothing.split("// ---- loss")[1], arg) == 1
    # reduce_scatters: forward 2 per layer; backward 2 activation-gradient
    # and 6 weight-gradient ones per layer; nothing recomputes the
    # attention output's.
    assert count(save, "ovl.reduce_scatter") == 2 * (2 + 2 + 6)
    assert count(nothing, "ovl.reduce_scatter") == 2 * (2 + 2 + 6 + 1)


def test_remat_nothing_survives_cse():
    """The recomputation reads the layer's input through an
    ovl.optimization_barrier, so canonicalization and CSE (which the
    overlap pipeline runs) keep it: every einsum and elementwise op of the
    recomputed forward is still there. Without the barrier, CSE merges 4
    of this program's 92 einsums (the recomputed layer norm's) into the
    forward's."""
    text = gpt.TrainEmitter(config((1, 2, 2)), "f32", "nothing").program(2)
    assert text.count("ovl.optimization_barrier") == 2
    cleaned = overlap.run_pipeline(text, "builtin.module(canonicalize,cse)")
    for op in ("ovl.einsum", "arith.mulf", "arith.subf", "arith.addf"):
        assert cleaned.count(op) == text.count(op), op


# -- through the overlap pipeline ----------------------------------------------

# (case, gate) with async_collectives=False.
PIPELINE = [(CASES[0], "cost"), (CASES[0], "always"), (CASES[1], "always"),
            (CASES[3], "always")]


@pytest.mark.parametrize("case, gate", PIPELINE,
                         ids=["%s-%s" % (IDS[CASES.index(c)], g)
                              for c, g in PIPELINE])
def test_train_step_through_pipeline(case, gate):
    """ovl-overlap-pipeline with async_collectives=False (see the module
    docstring) leaves the step's results unchanged: overlap-run compares
    every output of every device with the original program's (at
    AGAINST_ORIGINAL's tolerance), and both with the NumPy model."""
    text = program(case)
    fast = overlap.overlap_pipeline(text, gate=gate, async_collectives=False)
    overlap.parse(fast)
    if gate == "always":
        # Something was decomposed into ring permutes.
        assert "ovl.collective_permute_start" in fast
    ins = inputs(case, seed=3)
    out = overlap.run(fast, ins, reference=text, extra_args=AGAINST_ORIGINAL)
    assert mismatches(case, out, expected(case, ins)) == []


def test_train_step_bf16_partials_through_pipeline():
    """--partials bf16 (its forward accumulates two einsums in bf16, see
    gpt.py): gate=always leaves the results unchanged."""
    case = CASES[1]
    text = program(case, partials="bf16")
    assert "-> tensor<2x8x16xbf16>\n  %attn_out" in text
    fast = overlap.overlap_pipeline(text, gate="always",
                                    async_collectives=False)
    assert "ovl.collective_permute_start" in fast
    out = overlap.run(fast, inputs(case, seed=4), reference=text,
                      extra_args=AGAINST_ORIGINAL)
    assert len(out) == 4


def default_pipeline(case, options):
    """overlap.overlap_pipeline(text, **options) with the pipeline's other
    options at their defaults (async-collectives on): results unchanged."""
    text = program(case)
    fast = overlap.overlap_pipeline(text, **options)
    overlap.parse(fast)
    assert "ovl.collective_permute_start" in fast
    ins = inputs(case, seed=3)
    out = overlap.run(fast, ins, reference=text, extra_args=AGAINST_ORIGINAL)
    assert mismatches(case, out, expected(case, ins)) == []


def test_train_step_through_async_only_pipeline():
    """overlap.overlap_pipeline(text, gate="never"): every collective
    asynchronous and scheduled, nothing decomposed, 2 layers (seconds: the
    gate prices nothing)."""
    text = program(CASES[1])
    fast = overlap.overlap_pipeline(text, gate="never")
    assert "ovl.all_gather_start" in fast and "ovl.reduce_scatter_start" in fast
    ins = inputs(CASES[1], seed=3)
    out = overlap.run(fast, ins, reference=text, extra_args=AGAINST_ORIGINAL)
    assert mismatches(CASES[1], out, expected(CASES[1], ins)) == []


@pytest.mark.skipif(not SLOW, reason="minutes: set OVERLAP_SLOW_TESTS=1")
@pytest.mark.parametrize("case, options", [
    (CASES[0], {"gate": "always"}), (CASES[0], {}), (CASES[1], {}),
    (CASES[1], {"gate": "always"})],
    ids=[IDS[0] + "-always", IDS[0] + "-cost", IDS[1] + "-cost",
         IDS[1] + "-always"])
def test_train_step_through_default_pipeline(case, options):
    """overlap.overlap_pipeline(text) (the cost gate) and gate="always",
    with asynchronous kept collectives (the default): 0.5-8 minutes each,
    the gate pricing every collective with the simulator."""
    default_pipeline(case, options)


# -- command line and builder --------------------------------------------------

# sha256 of the forward programs written before --step existed.
FORWARD_SHA256 = {
    ("--config", "tiny", "--layers", "2"):
        "49da1d340033efd1fe6e465f06f330790328f0da5c2c0eed0175861f8de2c4cf",
    ("--config", "512B"):
        "91e225f74cc67be0af6be3690113d3b35c675e8f0f39731ad0c218398295d4ed",
    ("--config", "32B", "--partials", "bf16", "--layers", "2"):
        "a55dc2505ec57b6ff6c80ae4c610721bc3738c01ed68f97af9097d98e50803ac",
}


def sha256(text):
    return hashlib.sha256(text.encode()).hexdigest()


def test_step_forward_unchanged(capsys):
    for args, digest in FORWARD_SHA256.items():
        gpt.main(list(args))
        assert sha256(capsys.readouterr().out) == digest
        gpt.main(list(args) + ["--step", "forward"])
        assert sha256(capsys.readouterr().out) == digest
    assert sha256(overlap.transformer_block("tiny", layers=2)) == \
        FORWARD_SHA256[("--config", "tiny", "--layers", "2")]
    assert sha256(overlap.transformer_block("tiny", layers=2,
                                            step="forward")) == \
        FORWARD_SHA256[("--config", "tiny", "--layers", "2")]


def test_step_train_command_line(tmp_path):
    out = str(tmp_path / "train.mlir")
    gpt.main(["--config", "tiny", "--layers", "2", "--step", "train",
              "--out", out])
    with open(out) as f:
        text = f.read()
    assert "func.func @gpt_layers_train(" in text
    assert text == program(((1, 2, 2), 2, "save"))
    assert text == overlap.transformer_block("tiny", layers=2, step="train")
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "python"))
    proc = subprocess.run([PYTHON, "-m", "overlap.models.gpt", "--config",
                           "tiny", "--mesh", "1,2,4", "--step", "train",
                           "--remat", "nothing"], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, env=env,
                          cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == program(((1, 2, 4), 1, "nothing"))
    assert proc.stdout == overlap.transformer_block(
        "tiny", mesh=(1, 2, 4), step="train", remat="nothing")
    overlap.parse(proc.stdout)
    with pytest.raises(SystemExit):
        gpt.main(["--config", "tiny", "--step", "backward"])
    with pytest.raises(SystemExit) as e:
        gpt.main(["--config", "tiny", "--remat", "save"])
    assert "--remat needs --step train" in str(e.value.code)
    with pytest.raises(ValueError):
        overlap.transformer_block("tiny", step="backward")
    with pytest.raises(ValueError):
        overlap.transformer_block("tiny", remat="save")
    with pytest.raises(ValueError):
        overlap.transformer_block("tiny", step="train", remat="some")


def test_remat_default_by_config(capsys):
    """Pax's policies: SAVE_CONTEXT_AND_OUT_PROJ for 32B and 64B (and
    tiny), SAVE_NOTHING for 128B and up; the header says which."""
    for name, policy in [("32B", "save"), ("64B", "save"),
                         ("128B", "nothing"), ("256B", "nothing"),
                         ("512B", "nothing"), ("1024B", "nothing"),
                         ("tiny", "save"), ("128B-tiny", "nothing")]:
        assert gpt.default_remat(name) == policy
    for name, policy in [("64B", "save"), ("512B", "nothing")]:
        gpt.main(["--config", name, "--step", "train"])
        text = capsys.readouterr().out
        assert "// update. Remat %s:" % policy in text
        assert text == overlap.transformer_block(name, step="train")
        assert text == overlap.transformer_block(name, step="train",
                                                 remat=policy)
    gpt.main(["--config", "128B", "--scale", "tiny", "--step", "train"])
    assert "// update. Remat nothing:" in capsys.readouterr().out
    overlap.parse(overlap.transformer_block("512B", step="train",
                                            partials="bf16"))
