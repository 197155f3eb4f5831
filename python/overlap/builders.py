"""Program builders: the per-device SPMD programs of the paper's MLPs and of
GPT transformer layers, as MLIR text.

The generators are overlap.models.mlp (figures 2 and 3) and
overlap.models.gpt (the GPT ladder); the benchmarks' bench/schedule/mlp.py
and bench/gpt-ladder/gen.py are command-line shims of the same modules.
This module adds argument checking (ValueError instead of an exit) and
config lookup. The models are imported on first use, so that
`python3 -m overlap.models.gpt` does not find its module already imported
by the package.
"""


def _mlp():
    from .models import mlp
    return mlp


def _gen():
    from .models import gpt
    return gpt


def _checked(fn, *args):
    """The generators exit on sizes that do not divide: turn that into a
    ValueError."""
    try:
        return fn(*args)
    except SystemExit as e:
        raise ValueError(str(e.code)) from None


def _mesh2(mesh):
    if isinstance(mesh, str):
        mesh = tuple(int(v) for v in mesh.lower().split("x"))
    mesh = tuple(mesh)
    if len(mesh) != 2:
        raise ValueError("mesh must be MxN or (M, N), got %r" % (mesh,))
    return mesh


def _step(step, forward, train):
    if step not in ("forward", "train"):
        raise ValueError("step must be 'forward' or 'train', got %r" % (step,))
    return forward if step == "forward" else train


def mlp_1d(devices, batch, model, hidden, step="forward"):
    """Figure 2 MLP (1-D strategy: batch sharded, each weight all-gathered
    before its einsum) on a ring of `devices`, global sizes B=`batch`,
    F=`model`, H=`hidden`; bf16 with f32 accumulation. `step="train"`: the
    training step @mlp_train (forward, loss, backward; no optimizer)."""
    mlp = _mlp()
    return _checked(_step(step, mlp.mlp_1d, mlp.mlp_1d_train), devices, batch,
                    model, hidden)


def mlp_2d(mesh, batch, model, hidden, step="forward"):
    """Figure 3 MLP (2-D strategy) on a grid `mesh` = (M, N) or "MxN";
    `step` as for mlp_1d."""
    m, n = _mesh2(mesh)
    mlp = _mlp()
    return _checked(_step(step, mlp.mlp_2d, mlp.mlp_2d_train), m, n, batch,
                    model, hidden)


LADDER_NAMES = ("32B", "64B", "128B", "256B", "512B", "1024B")


def _config(config, mesh, seq, batch):
    gen = _gen()
    if isinstance(config, str):
        if config == "tiny":
            cfg = gen.tiny("tiny", tuple(mesh or (1, 2, 2)), "?")
        elif config.endswith("-tiny") and config[:-5] in gen.LADDER:
            base = gen.LADDER[config[:-5]]
            cfg = gen.tiny(config, tuple(mesh or (1, 2, 2)), base[0])
        elif config in gen.LADDER:
            layers, d, f, h, _, base_mesh, base_batch = gen.LADDER[config]
            cfg = gen.Config(config, d, f, h, gen.HEAD_DIM,
                             tuple(mesh or base_mesh), base_batch, gen.SEQ,
                             layers)
        else:
            raise ValueError("unknown config %r (one of %s, tiny)"
                             % (config, ", ".join(gen.LADDER)))
    else:
        sizes = dict(config)
        d_model = sizes["d_model"]
        if "head_dim" in sizes:
            head_dim = sizes["head_dim"]
        elif "heads" in sizes:
            head_dim = d_model // sizes["heads"]
        else:
            head_dim = gen.HEAD_DIM
        cfg = gen.Config(sizes.get("name", "custom"), d_model,
                         sizes.get("d_ff", 4 * d_model),
                         sizes.get("heads", d_model // head_dim), head_dim,
                         tuple(mesh or sizes.get("mesh", (1, 1, 1))),
                         sizes["batch"], sizes.get("seq", gen.SEQ), "?")
    if len((cfg.replica, cfg.data, cfg.model)) != 3:
        raise ValueError("mesh must be (replica, data, model)")
    if seq:
        cfg.seq = seq
    if batch:
        cfg.batch = batch
    _checked(cfg.check)
    return cfg


def transformer_block(config="tiny", mesh=None, layers=1, partials="f32",
                      seq=None, batch=None, step="forward", remat=None):
    """GPT transformer layer(s) with the paper's 2-D strategy
    (overlap.models.gpt).

    `config`: a ladder name ("32B" .. "1024B"), "tiny" / "<name>-tiny" (CPU
    sizes), or a dict of sizes {d_model, batch (global sequences), d_ff
    (default 4 d_model), heads (default d_model/head_dim), head_dim (default d_model/heads,
    else 128),
    seq (1024)}. `mesh`: (replica, data, model), default the config's own
    ((1, 2, 2) for tiny). `partials`: "f32" or "bf16" reduce-scattered
    partial sums. `step="train"`: one training step without optimizer
    update, @gpt_layers_train (forward, loss, backward), with `remat`
    "save" or "nothing" (default: the config's Pax policy,
    gpt.default_remat)."""
    if partials not in ("f32", "bf16"):
        raise ValueError("partials must be f32 or bf16")
    if layers < 1:
        raise ValueError("layers must be at least 1")
    gen = _gen()
    if step not in ("forward", "train"):
        raise ValueError("step must be 'forward' or 'train', got %r" % (step,))
    if remat is not None and (step != "train" or remat not in gen.REMAT):
        raise ValueError("remat must be None, or 'save' or 'nothing' with "
                         "step='train', got %r" % (remat,))
    cfg = _config(config, mesh, seq, batch)
    if step == "train":
        return gen.TrainEmitter(cfg, partials,
                                remat or gen.default_remat(cfg.name)
                                ).program(layers)
    return gen.Emitter(cfg, partials).program(layers)


def transformer_topology(config="tiny", mesh=None):
    """The TPU v4 torus extents `python3 -m overlap.models.gpt
    --print-topology` suggests for a ladder config (the model axis
    innermost), or None."""
    return _gen().topology(_config(config, mesh, None, None))
