"""Generates the per-device SPMD program of GPT transformer layers of the
benchmark ladder (32B .. 1024B, see bench/gpt-ladder/README.md) with the
paper's 2-D partitioning strategy (its figure 3, examples/mlp_2d.mlir
generalised to a whole transformer layer).

Workload. The ladder is Google's public Pax configurations LmCloudSpmd32B ..
LmCloudSpmd1024B (google/paxml, paxml/tasks/lm/params/lm_cloud.py), the
stand-in for the paper's table 2, which is not public: head dim 128, d_ff =
4 d_model, sequence 1024, bf16, ReLU MLP without gating, pre-layer-norm.

Grid. The ICI mesh [replica, data, model] becomes `shard.grid @grid(shape =
data x model)`; a replica axis of 1 is dropped (one > 1 stays as a leading
grid axis and only splits the batch further: the forward pass communicates
nothing along it). Grid axis `data` plays the paper's y (size N) and axis
`model` its x (size M); the row-major device order puts `model` on the
fastest-varying (innermost) physical dimension (see --print-topology).

2-D strategy (figure 3; Pax's sharding annotations for these configs):
  * activations between blocks: [b, s, D/M], batch on `data`, d_model on
    `model`, b = global batch / (replica * data), s = 1024;
  * every weight is 2-D sharded: its d_model dim on `data`, its other model
    dim (d_ff, or heads for the attention weights [D, heads, 128]) on
    `model`;
  * before each einsum the activation is all-gathered along `model` (its
    d_model) and the weight along `data` (its d_model): the first einsum of
    each block has two gather candidates (section 5.5's choice);
  * the block's last einsum (output projection "bsnh,dnh->bsd", second MLP
    einsum "bsf,fd->bsd") contracts the model-sharded dim, leaving partial
    sums over `model`; a reduce_scatter along `model` on d_model sums them
    and returns the output to the input's sharding [b, s, D/M];
  * the attention core runs on the local heads (heads/M) with no
    communication: scores "bsnh,btnh->bnst", causal mask and softmax, then
    "bnst,btnh->bsnh"; Q, K and V share the one gathered input.
  * layer norm on [b, s, D/M] sums x and x*x locally (einsums) and
    all-reduces the two [b, s] sums along `model` (not decomposable,
    small); no learned scale/bias (elementwise, no communication).
  * residual adds in f32, layer output in bf16 (the input's type), so layers
    chain.

Precision: bf16 operands, every einsum accumulates in f32 (bf16 x bf16 ->
f32). The partial sums of the two reduce-scattered einsums are therefore f32
and the reduce_scatter moves f32: twice the bytes of Pax, where the einsum
output and the reduce-scatter are bf16. `--partials bf16` makes those two
einsums produce bf16 (Pax's communication volume). Forward pass only.

Softmax: max over keys (linalg.reduce), exp(scale*(x - max)) with the causal
mask (linalg.generic, keys t > s give 0), sum over keys (einsum
"bnst->bns"), normalisation after the PV einsum (divide [b,s,n,h] by the
sum), as flash attention does.

Usage (bench/gpt-ladder/gen.py runs the same command line):
  python3 -m overlap.models.gpt --config 512B [--layers 1] [--out FILE]
         [--mesh R,D,M] [--partials f32|bf16] [--scale tiny] [--seq S]
         [--batch B]
  python3 -m overlap.models.gpt --config 512B --print-topology
                                          # torus extents for overlap-sim
  python3 -m overlap.models.gpt --list    # the ladder

--scale tiny shrinks every dimension so that the program runs on the CPU
(`overlap-run`, one thread per device): the mesh [1, 2, 2] unless --mesh
gives one, head dim 4, heads = 2*lcm(data, model), d_model = 4*heads,
d_ff = 4*d_model, s = 8, b = 2 sequences per device. `--config tiny` is the
same as --scale tiny.
"""

import argparse
import math
import sys

from . import write_program

# name: (layers, d_model, d_ff, heads, chips, mesh [r, data, model], batch)
LADDER = {
    "32B": (40, 8192, 32768, 64, 64, (1, 16, 4), 512),
    "64B": (51, 10240, 40960, 80, 128, (1, 16, 8), 512),
    "128B": (71, 12288, 49152, 96, 256, (1, 64, 4), 1024),
    "256B": (80, 16384, 65536, 128, 512, (1, 64, 8), 2048),
    "512B": (102, 20480, 81920, 160, 1024, (1, 64, 16), 4096),
    "1024B": (142, 24576, 98304, 192, 2048, (1, 256, 8), 4096),
}
HEAD_DIM = 128
SEQ = 1024
EPS = 1e-6


class Config:
    def __init__(self, name, d_model, d_ff, heads, head_dim, mesh, batch, seq,
                 model_layers):
        self.name = name
        self.d_model, self.d_ff = d_model, d_ff
        self.heads, self.head_dim = heads, head_dim
        self.replica, self.data, self.model = mesh
        self.batch, self.seq = batch, seq
        self.model_layers = model_layers

    @property
    def chips(self):
        return self.replica * self.data * self.model

    def check(self):
        """Every sharded dim must divide evenly: tensors are static."""
        errors = []

        def need(value, divisor, what):
            if value % divisor:
                errors.append("%s = %d is not divisible by %d"
                              % (what, value, divisor))

        if self.heads * self.head_dim != self.d_model:
            errors.append("heads * head_dim = %d != d_model = %d"
                          % (self.heads * self.head_dim, self.d_model))
        need(self.batch, self.replica * self.data, "global batch")
        need(self.d_model, self.data, "d_model (weights, on data)")
        need(self.d_model, self.model, "d_model (activations, on model)")
        need(self.d_ff, self.model, "d_ff (on model)")
        need(self.heads, self.model, "heads (on model)")
        if errors:
            sys.exit("overlap.models.gpt: config %s on mesh [%d, %d, %d]: "
                     "%s"
                     % (self.name, self.replica, self.data, self.model,
                        "; ".join(errors)))


def tiny(name, mesh, layers):
    """Dimensions small enough for the CPU runtime, divisible on `mesh`."""
    _, data, model = mesh
    heads = 2 * (data * model // math.gcd(data, model))
    d_model = 4 * heads
    return Config(name, d_model, 4 * d_model, heads, 4, mesh,
                  2 * mesh[0] * data, 8, layers)


def tensor(shape, dtype):
    return "tensor<" + "x".join(str(s) for s in shape) + "x" + dtype + ">"


def flt(value):
    return "%.9e" % value


class Emitter:
    def __init__(self, cfg, partials):
        self.cfg = cfg
        self.partials = partials
        self.lines = []
        self.count = 0
        # Grid axes: an optional leading replica axis, then data, then model.
        self.axis_offset = 1 if cfg.replica > 1 else 0
        self.data_axis = self.axis_offset
        self.model_axis = self.axis_offset + 1
        c = cfg
        self.b = c.batch // (c.replica * c.data)
        self.s = c.seq
        self.dm = c.d_model // c.model      # activation d_model shard
        self.dn = c.d_model // c.data       # weight d_model shard
        self.hl = c.heads // c.model        # local heads
        self.fl = c.d_ff // c.model         # local d_ff

    def fresh(self, stem):
        self.count += 1
        return "%%%s%d" % (stem, self.count)

    def emit(self, line):
        self.lines.append("  " + line if line else "")

    # -- building blocks ---------------------------------------------------

    def gather(self, value, vtype_shape, dtype, axis, dim, stem):
        group = self.cfg.model if axis == self.model_axis else self.cfg.data
        out_shape = list(vtype_shape)
        out_shape[dim] *= group
        r = self.fresh(stem)
        self.emit("%s = ovl.all_gather %s on @grid axes [%d] dim %d : %s -> %s"
                  % (r, value, axis, dim, tensor(vtype_shape, dtype),
                     tensor(out_shape, dtype)))
        return r, out_shape

    def einsum(self, eq, operands, shapes, in_dtype, out_shape, out_dtype,
               stem):
        r = self.fresh(stem)
        self.emit('%s = ovl.einsum "%s" %s : %s -> %s'
                  % (r, eq, ", ".join(operands),
                     ", ".join(tensor(s, in_dtype) for s in shapes),
                     tensor(out_shape, out_dtype)))
        return r

    def truncf(self, value, shape):
        r = self.fresh("t")
        self.emit("%s = arith.truncf %s : %s to %s"
                  % (r, value, tensor(shape, "f32"), tensor(shape, "bf16")))
        return r

    def extf(self, value, shape):
        r = self.fresh("f")
        self.emit("%s = arith.extf %s : %s to %s"
                  % (r, value, tensor(shape, "bf16"), tensor(shape, "f32")))
        return r

    def empty(self, shape, dtype):
        r = self.fresh("empty")
        self.emit("%s = tensor.empty() : %s" % (r, tensor(shape, dtype)))
        return r

    def layer_norm(self, x):
        """x: [b, s, D/M] bf16 -> normalised over the whole d_model, bf16."""
        b, s, dm = self.b, self.s, self.dm
        act = [b, s, dm]
        stat = [b, s]
        self.emit("// layer norm: local sums, all-reduced along model")
        total = self.einsum("bsd->bs", [x], [act], "bf16", stat, "f32", "sum")
        squares = self.einsum("bsd,bsd->bs", [x, x], [act, act], "bf16", stat,
                              "f32", "sumsq")
        red = []
        for v in (total, squares):
            r = self.fresh("stat")
            self.emit("%s = ovl.all_reduce %s on @grid axes [%d] : %s"
                      % (r, v, self.model_axis, tensor(stat, "f32")))
            red.append(r)
        out = self.empty(act, "bf16")
        r = self.fresh("ln")
        inv = flt(1.0 / self.cfg.d_model)
        self.emit("%s = linalg.generic {indexing_maps = [" % r +
                  "affine_map<(b, s, d) -> (b, s, d)>, "
                  "affine_map<(b, s, d) -> (b, s)>, "
                  "affine_map<(b, s, d) -> (b, s)>, "
                  "affine_map<(b, s, d) -> (b, s, d)>], "
                  'iterator_types = ["parallel", "parallel", "parallel"]}')
        self.emit("    ins(%s, %s, %s : %s, %s, %s) outs(%s : %s) {"
                  % (x, red[0], red[1], tensor(act, "bf16"),
                     tensor(stat, "f32"), tensor(stat, "f32"), out,
                     tensor(act, "bf16")))
        body = [
            "^bb0(%xv: bf16, %su: f32, %sq: f32, %o: bf16):",
            "  %inv = arith.constant " + inv + " : f32",
            "  %eps = arith.constant " + flt(EPS) + " : f32",
            "  %zero = arith.constant 0.0 : f32",
            "  %xf = arith.extf %xv : bf16 to f32",
            "  %mean = arith.mulf %su, %inv : f32",
            "  %ex2 = arith.mulf %sq, %inv : f32",
            "  %m2 = arith.mulf %mean, %mean : f32",
            "  %var0 = arith.subf %ex2, %m2 : f32",
            "  %var = arith.maximumf %var0, %zero : f32",
            "  %ve = arith.addf %var, %eps : f32",
            "  %rs = math.rsqrt %ve : f32",
            "  %c = arith.subf %xf, %mean : f32",
            "  %y = arith.mulf %c, %rs : f32",
            "  %t = arith.truncf %y : f32 to bf16",
            "  linalg.yield %t : bf16",
        ]
        for line in body:
            self.emit("  " + line)
        self.emit("} -> %s" % tensor(act, "bf16"))
        return r

    def residual(self, x, y, y_dtype):
        """x bf16 + y (f32 or bf16) in f32, result bf16."""
        act = [self.b, self.s, self.dm]
        xf = self.extf(x, act)
        yf = y if y_dtype == "f32" else self.extf(y, act)
        r = self.fresh("res")
        self.emit("%s = arith.addf %s, %s : %s" % (r, xf, yf,
                                                  tensor(act, "f32")))
        return self.truncf(r, act)

    def attention_core(self, q, k, v):
        """q, k, v: [b, s, n, h] bf16 on the local heads; returns [b, s, n, h]
        bf16."""
        b, s, n, h = self.b, self.s, self.hl, self.cfg.head_dim
        qkv = [b, s, n, h]
        sc_shape = [b, n, s, s]
        red_shape = [b, n, s]
        self.emit("// attention core on the local heads, no communication")
        scores = self.einsum("bsnh,btnh->bnst", [q, k], [qkv, qkv], "bf16",
                             sc_shape, "f32", "scores")
        ninf = self.fresh("ninf")
        self.emit("%s = arith.constant 0xFF800000 : f32" % ninf)
        init = self.empty(red_shape, "f32")
        filled = self.fresh("fill")
        self.emit("%s = linalg.fill ins(%s : f32) outs(%s : %s) -> %s"
                  % (filled, ninf, init, tensor(red_shape, "f32"),
                     tensor(red_shape, "f32")))
        mx = self.fresh("max")
        self.emit("%s = linalg.reduce ins(%s : %s) outs(%s : %s) dimensions = [3]"
                  % (mx, scores, tensor(sc_shape, "f32"), filled,
                     tensor(red_shape, "f32")))
        self.emit("    (%in: f32, %acc: f32) {")
        self.emit("      %m = arith.maximumf %in, %acc : f32")
        self.emit("      linalg.yield %m : f32")
        self.emit("    }")
        out = self.empty(sc_shape, "bf16")
        p = self.fresh("probs")
        self.emit("%s = linalg.generic {indexing_maps = [" % p +
                  "affine_map<(b, n, s, t) -> (b, n, s, t)>, "
                  "affine_map<(b, n, s, t) -> (b, n, s)>, "
                  "affine_map<(b, n, s, t) -> (b, n, s, t)>], "
                  'iterator_types = ["parallel", "parallel", "parallel", '
                  '"parallel"]}')
        self.emit("    ins(%s, %s : %s, %s) outs(%s : %s) {"
                  % (scores, mx, tensor(sc_shape, "f32"),
                     tensor(red_shape, "f32"), out, tensor(sc_shape, "bf16")))
        body = [
            "^bb0(%x: f32, %m: f32, %o: bf16):",
            "  %scale = arith.constant " + flt(1.0 / math.sqrt(h)) + " : f32",
            "  %zero = arith.constant 0.0 : f32",
            "  %qi = linalg.index 2 : index",
            "  %ki = linalg.index 3 : index",
            "  %d = arith.subf %x, %m : f32",
            "  %z = arith.mulf %d, %scale : f32",
            "  %e = math.exp %z : f32",
            "  %causal = arith.cmpi ule, %ki, %qi : index",
            "  %pv = arith.select %causal, %e, %zero : f32",
            "  %t = arith.truncf %pv : f32 to bf16",
            "  linalg.yield %t : bf16",
        ]
        for line in body:
            self.emit("  " + line)
        self.emit("} -> %s" % tensor(sc_shape, "bf16"))
        denom = self.einsum("bnst->bns", [p], [sc_shape], "bf16", red_shape,
                            "f32", "denom")
        o = self.einsum("bnst,btnh->bsnh", [p, v], [sc_shape, qkv], "bf16",
                        qkv, "f32", "pv")
        out = self.empty(qkv, "bf16")
        r = self.fresh("attn")
        self.emit("%s = linalg.generic {indexing_maps = [" % r +
                  "affine_map<(b, s, n, h) -> (b, s, n, h)>, "
                  "affine_map<(b, s, n, h) -> (b, n, s)>, "
                  "affine_map<(b, s, n, h) -> (b, s, n, h)>], "
                  'iterator_types = ["parallel", "parallel", "parallel", '
                  '"parallel"]}')
        self.emit("    ins(%s, %s : %s, %s) outs(%s : %s) {"
                  % (o, denom, tensor(qkv, "f32"), tensor(red_shape, "f32"),
                     out, tensor(qkv, "bf16")))
        for line in ["^bb0(%x: f32, %l: f32, %o: bf16):",
                     "  %y = arith.divf %x, %l : f32",
                     "  %t = arith.truncf %y : f32 to bf16",
                     "  linalg.yield %t : bf16"]:
            self.emit("  " + line)
        self.emit("} -> %s" % tensor(qkv, "bf16"))
        return r

    def layer(self, x, w, index):
        c = self.cfg
        b, s, dm, dn, hl, fl = self.b, self.s, self.dm, self.dn, self.hl, self.fl
        h = c.head_dim
        D = c.d_model
        act = [b, s, dm]
        self.emit("")
        self.emit("// ---- layer %d: attention block" % index)
        ln1 = self.layer_norm(x)
        self.emit("// gather the activation along model, each weight along data")
        xg, xg_shape = self.gather(ln1, act, "bf16", self.model_axis, 2, "xg")
        qkv_shape = [b, s, hl, h]
        # The three projections read the one gathered input; no other use of
        # their results comes between them, so that a decomposed gather of
        # the input can feed all three from one loop.
        wfull = [self.gather(w[name], [dn, hl, h], "bf16", self.data_axis, 0,
                             name + "_full") for name in ("wq", "wk", "wv")]
        r32 = [self.einsum("bsd,dnh->bsnh", [xg, wf], [xg_shape, wf_shape],
                           "bf16", qkv_shape, "f32", letter)
               for (wf, wf_shape), letter in zip(wfull, "qkv")]
        qkv = [self.truncf(r, qkv_shape) for r in r32]
        o = self.attention_core(*qkv)
        self.emit("// output projection: partial sums over model, reduce-scattered")
        wo, wo_shape = self.gather(w["wo"], [dn, hl, h], "bf16", self.data_axis,
                                   0, "wo_full")
        part = self.einsum("bsnh,dnh->bsd", [o, wo], [qkv_shape, wo_shape],
                           "bf16", [b, s, D], self.partials, "proj")
        a = self.fresh("attn_out")
        self.emit("%s = ovl.reduce_scatter %s on @grid axes [%d] dim 2 : %s -> %s"
                  % (a, part, self.model_axis, tensor([b, s, D], self.partials),
                     tensor(act, self.partials)))
        h1 = self.residual(x, a, self.partials)

        self.emit("")
        self.emit("// ---- layer %d: MLP block" % index)
        ln2 = self.layer_norm(h1)
        xg2, xg2_shape = self.gather(ln2, act, "bf16", self.model_axis, 2, "xg")
        w1, w1_shape = self.gather(w["w1"], [dn, fl], "bf16", self.data_axis, 0,
                                   "w1_full")
        hid_shape = [b, s, fl]
        hid = self.einsum("bsd,df->bsf", [xg2, w1], [xg2_shape, w1_shape],
                          "bf16", hid_shape, "f32", "hidden")
        zero = self.fresh("zero")
        self.emit("%s = arith.constant dense<0.0> : %s"
                  % (zero, tensor(hid_shape, "f32")))
        relu = self.fresh("relu")
        self.emit("%s = arith.maximumf %s, %s : %s"
                  % (relu, hid, zero, tensor(hid_shape, "f32")))
        relu_bf = self.truncf(relu, hid_shape)
        w2, w2_shape = self.gather(w["w2"], [fl, dn], "bf16", self.data_axis, 1,
                                   "w2_full")
        part2 = self.einsum("bsf,fd->bsd", [relu_bf, w2], [hid_shape, w2_shape],
                            "bf16", [b, s, D], self.partials, "mlp")
        y = self.fresh("mlp_out")
        self.emit("%s = ovl.reduce_scatter %s on @grid axes [%d] dim 2 : %s -> %s"
                  % (y, part2, self.model_axis, tensor([b, s, D], self.partials),
                     tensor(act, self.partials)))
        return self.residual(h1, y, self.partials)

    def program(self, layers):
        c = self.cfg
        act = [self.b, self.s, self.dm]
        wshapes = {
            "wq": [self.dn, self.hl, c.head_dim],
            "wk": [self.dn, self.hl, c.head_dim],
            "wv": [self.dn, self.hl, c.head_dim],
            "wo": [self.dn, self.hl, c.head_dim],
            "w1": [self.dn, self.fl],
            "w2": [self.fl, self.dn],
        }
        comments = {
            "wq": "[D/data, heads/model, head_dim]",
            "wk": "[D/data, heads/model, head_dim]",
            "wv": "[D/data, heads/model, head_dim]",
            "wo": "[D/data, heads/model, head_dim]",
            "w1": "[D/data, d_ff/model]",
            "w2": "[d_ff/model, D/data]",
        }
        args = ["    %%input: %s,  // [b, s, D/model]" % tensor(act, "bf16")]
        weights = []
        for l in range(layers):
            w = {}
            for name in ("wq", "wk", "wv", "wo", "w1", "w2"):
                arg = "%%%s_%d" % (name, l)
                w[name] = arg
                args.append("    %s: %s,  // %s" % (arg, tensor(wshapes[name],
                                                               "bf16"),
                                                   comments[name]))
            weights.append(w)
        args[-1] = args[-1].replace(",  //", "   //")
        x = "%input"
        self.lines = []
        for l in range(layers):
            x = self.layer(x, weights[l], l)
        self.emit("return %s : %s" % (x, tensor(act, "bf16")))

        grid = [c.data, c.model]
        if c.replica > 1:
            grid = [c.replica] + grid
        out = []
        out.append(self.header(layers))
        out.append("shard.grid @grid(shape = %s)" % "x".join(map(str, grid)))
        out.append("")
        out.append("func.func @gpt_layers(")
        out.extend(args)
        out.append("    ) -> %s {  // [b, s, D/model]" % tensor(act, "bf16"))
        out.extend(self.lines)
        out.append("}")
        return "\n".join(out) + "\n"

    def stats(self):
        """Per-device FLOPs of one layer (einsums, multiply-add = 2) and the
        largest tensor."""
        c = self.cfg
        b, s, dm, D, hl, fl, h = (self.b, self.s, self.dm, c.d_model, self.hl,
                                  self.fl, c.head_dim)
        tokens = b * s
        proj = 4 * 2 * tokens * D * hl * h
        core = 2 * 2 * b * hl * s * s * h
        mlp = 2 * 2 * tokens * D * fl
        largest = max(b * hl * s * s * 4,            # f32 scores
                      tokens * D * 4,                # f32 partial sums
                      tokens * fl * 4)               # f32 hidden
        return proj + core + mlp, largest

    def header(self, layers):
        c = self.cfg
        flops, largest = self.stats()
        grid = "%s x %s" % (c.data, c.model)
        if c.replica > 1:
            grid = "%d x %s" % (c.replica, grid)
        lines = [
            "// Generated by overlap.models.gpt; do not edit.",
            "// GPT config %s: d_model %d, d_ff %d, heads %d x %d, seq %d, "
            "global batch %d;" % (c.name, c.d_model, c.d_ff, c.heads,
                                 c.head_dim, c.seq, c.batch),
            "// %d of the model's %s layers; %d chips, ICI mesh [%d, %d, %d] "
            "-> grid %s (data x model)." % (layers, c.model_layers, c.chips,
                                            c.replica, c.data, c.model, grid),
            "// Paper figure 3 2-D strategy: activations [b, s, D/model], "
            "weights D on data and",
            "// heads/d_ff on model; gathers before each einsum, "
            "reduce_scatter along model after",
            "// each block. Per device: b = %d sequences, D/model = %d, "
            "D/data = %d," % (self.b, self.dm, self.dn),
            "// heads/model = %d, d_ff/model = %d; partial sums in %s." %
            (self.hl, self.fl, self.partials),
            "// Einsum FLOPs per device and layer: %.4g; largest tensor %.3g "
            "GB." % (flops, largest / 1e9),
            "",
        ]
        return "\n".join(lines)


def topology(cfg):
    """TPU v4 torus extents for the chips, ordered so that the row-major
    device order puts the `model` axis on the innermost physical
    dimension(s): e.g. [64, 16] on 1024 chips -> 8x8x16."""
    chips = cfg.chips
    model = cfg.model
    rest = chips // model
    if model >= 4 and model & (model - 1) == 0 and rest & (rest - 1) == 0:
        # Split the rest (replica x data) into two near-equal powers of two.
        e = int(math.log2(rest))
        return "%dx%dx%d" % (2 ** ((e + 1) // 2), 2 ** (e // 2), model)
    return None


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default="512B",
                        help="one of %s, or tiny" % ", ".join(LADDER))
    parser.add_argument("--layers", type=int, default=1,
                        help="transformer layers in the program (default 1)")
    parser.add_argument("--out", help="output file (default: stdout)")
    parser.add_argument("--mesh", help="override the ICI mesh: R,DATA,MODEL")
    parser.add_argument("--scale", choices=["full", "tiny"], default="full",
                        help="tiny: shrink every dimension to run on the CPU")
    parser.add_argument("--seq", type=int, help="override the sequence length")
    parser.add_argument("--batch", type=int,
                        help="override the global batch (sequences)")
    parser.add_argument("--partials", choices=["f32", "bf16"], default="f32",
                        help="element type of the reduce-scattered partial "
                             "sums (default f32)")
    parser.add_argument("--print-topology", action="store_true",
                        help="print the torus extents to simulate on and exit")
    parser.add_argument("--list", action="store_true",
                        help="print the ladder and exit")
    args = parser.parse_args(argv)

    if args.list:
        for name, (layers, d, f, h, chips, mesh, batch) in LADDER.items():
            print("%-6s layers %3d d_model %5d d_ff %6d heads %3d chips %4d "
                  "mesh %s batch %d" % (name, layers, d, f, h, chips,
                                        list(mesh), batch))
        return

    if args.layers < 1:
        sys.exit("overlap.models.gpt: --layers must be at least 1")
    name = args.config
    scale = args.scale
    if name == "tiny":
        mesh, model_layers = (1, 2, 2), "?"
        scale = "tiny"
        base = None
    elif name in LADDER:
        base = LADDER[name]
        model_layers, mesh = base[0], base[5]
    else:
        sys.exit("overlap.models.gpt: unknown config '%s' (one of %s, "
                 "tiny)"
                 % (name, ", ".join(LADDER)))
    if args.mesh:
        try:
            mesh = tuple(int(v) for v in args.mesh.split(","))
            if len(mesh) != 3 or min(mesh) < 1:
                raise ValueError
        except ValueError:
            sys.exit("overlap.models.gpt: --mesh takes three positive "
                     "integers R,DATA,MODEL")

    if scale == "tiny":
        if not args.mesh:
            mesh = (1, 2, 2)
        cfg = tiny("tiny" if name == "tiny" else name, mesh, model_layers)
        cfg.name = "tiny" if name == "tiny" else name + "-tiny"
    else:
        _, d, f, h, _, _, batch = base
        cfg = Config(name, d, f, h, HEAD_DIM, mesh, batch, SEQ, model_layers)
    if args.seq:
        cfg.seq = args.seq
    if args.batch:
        cfg.batch = args.batch
    cfg.check()

    if args.print_topology:
        topo = topology(cfg)
        if topo is None:
            sys.exit("overlap.models.gpt: no torus topology for mesh "
                     "[%d, %d, %d]"
                     % (cfg.replica, cfg.data, cfg.model))
        print(topo)
        return

    text = Emitter(cfg, args.partials).program(args.layers)
    write_program(text, args.out)


if __name__ == "__main__":
    main()
