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
einsums produce bf16 (Pax's communication volume).

Softmax: max over keys (linalg.reduce), exp(scale*(x - max)) with the causal
mask (linalg.generic, keys t > s give 0), sum over keys (einsum
"bnst->bns"), normalisation after the PV einsum (divide [b,s,n,h] by the
sum), as flash attention does.

Training step. --step forward (the default) writes the forward program
@gpt_layers(input, weights...) -> output. --step train (TrainEmitter) writes
one training step of the N layers without its optimizer: no optimizer
update, the weights are not changed and their gradients are returned.
@gpt_layers_train(input, wq_0, wk_0, wv_0, wo_0, w1_0, w2_0, ..., target)
returns (loss, d input, d wq_0, d wk_0, d wv_0, d wo_0, d w1_0, d w2_0,
d wq_1, ...): the loss, a tensor<f32> equal on every device, then the
gradients (f32) of the input and of every layer's weights in argument
order, each shaped and sharded exactly as its argument.
  * forward: exactly the forward program's (the same ops and collectives,
    the same bf16 roundings, the same --partials; its text is the forward
    program's body);
  * loss L = 0.5 * sum over every global element of (out - target)^2, the
    target f32 and sharded like the output: each device sums its elements
    in f32 and an ovl.all_reduce over every grid axis gives the global L;
    its gradient is out - target;
  * backward, layer by layer in reverse, every einsum's gradient einsums
    (w.r.t. its activation operand and its weight) written as ovl.einsums:
    - residual adds pass the gradient to both summands (f32);
    - the backward of each forward reduce_scatter along model (output
      projection, second MLP einsum) is an all_gather along model of the
      gradient, rounded to bf16 first; it feeds the two gradient einsums of
      that einsum (adjacent, so that one decomposed loop can feed both);
    - MLP: w2's einsums, the ReLU mask (gradient where the pre-activation
      is > 0), w1's einsums;
    - attention: the output projection's einsums; the flash-style
      normalisation o = pv / denom (d pv = d o / denom, d denom = -sum_h
      d o * pv / denom^2, which flows to every key through the sum "bnst->
      bns"); the PV einsum's two gradients; the softmax: d scores =
      scale * exp(scale * (scores - max)) * (d probs + d denom) on the
      causal mask's keys, 0 elsewhere; the row max gets no gradient (the
      normalisation cancels any shift, as flash attention's backward
      assumes); the scores einsum's two gradients (d q, d k);
    - Q, K and V read the one gathered normalised activation, so its
      gradient is the sum of three einsums dQ.Wq + dK.Wk + dV.Wv, added
      with arith.addf in f32 and reduce-scattered along model to the
      activation's sharding (the backward of the forward's all_gather);
      likewise the MLP's gathered activation (one einsum, w1's);
    - layer norm: the forward all-reduces the local sums of x and x*x
      along model, so the backward computes each device's share of the two
      statistics' cotangents from local sums of g and g*x (f32 einsums)
      and all-reduces them along model, then
      dx = g * rs + d(sum x) + 2 x d(sum x*x); the clamp of the variance at
      0 passes no gradient;
    - weight gradients (f32) are partial sums over the device's batch, and
      the batch is sharded along data: each is reduce-scattered along data
      on the weight's d_model dim, back to the weight's own 2-D sharding
      (the backward of the forward's all_gather along data); with a
      replica axis > 1 (it splits the batch, not the weights) an
      all_reduce over it follows.
  * bf16 as a bf16 model would: every matmul einsum reads bf16 operands and
    accumulates in f32, so the gradients that feed einsums are rounded to
    bf16 first: the layer output's gradient before its all_gather (both
    blocks), the masked ReLU gradient, d pv, d scores, d q, d k, d v. The
    reductions that only sum f32 gradients (the layer norm's sums, the
    normalisation's sum over h) are f32 einsums. The gradient flowing along
    the residual stream, the partial sums of the gradient einsums and their
    reduce-scatters are f32 whatever --partials says (it sets the
    forward's two reduce-scatters only). Every returned gradient is f32.
  * rematerialisation, Pax's checkpoint policy of the ladder: --remat save
    (SAVE_CONTEXT_AND_OUT_PROJ, the default for 32B, 64B and tiny, and for
    sizes given as numbers) keeps the forward's values for the backward
    and reuses its gathered weights and activations: this program keeps
    every value the backward reads and recomputes nothing (a
    simplification: Pax's policy keeps only the named attention context
    and output projection and recomputes the rest). --remat nothing
    (SAVE_NOTHING, the default for 128B and up) keeps only each layer's
    input and recomputes the layer's forward just before its backward,
    from the input passed through an ovl.optimization_barrier with the
    gradient arriving at the layer (so that CSE does not merge the
    recomputation back into the forward, nor a scheduler run it early):
    the layer norms and their all_reduces, the activation and weight
    all_gathers (new collectives: the weights are gathered again), the
    attention block with its reduce_scatter (h1 is needed), the MLP up to
    the gather of w2 (the second MLP einsum, its reduce_scatter and the
    last residual add are not needed).
  With --partials bf16 the two einsums accumulate in bf16 (their result
  type), so that program's forward is not the unpartitioned layer's up to
  f32 rounding: the tests check its text against the forward program, and
  the f32-partials program against a NumPy model of the unpartitioned
  step (python/tests/test_gpt_train_step.py).

Usage (bench/gpt-ladder/gen.py runs the same command line):
  python3 -m overlap.models.gpt --config 512B [--layers 1] [--out FILE]
         [--mesh R,D,M] [--partials f32|bf16] [--scale tiny] [--seq S]
         [--batch B] [--step forward|train] [--remat save|nothing]
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

from . import positive_int, write_program

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
    return "tensor<" + "".join(str(s) + "x" for s in shape) + dtype + ">"


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

    def barrier(self, values, types, stem):
        """values through one ovl.optimization_barrier; returns its results."""
        r = self.fresh(stem)
        self.emit("%s:%d = ovl.optimization_barrier %s : %s"
                  % (r, len(values), ", ".join(values), ", ".join(types)))
        return ["%s#%d" % (r, i) for i in range(len(values))]

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
        self.ln_stats = red   # read by the training step's backward
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
        # Read by the training step's backward.
        self.attn_saved = {"scores": scores, "max": mx, "probs": p,
                           "denom": denom, "pv": o}
        return r

    def layer(self, x, w, index, keep=None, recompute=False):
        """One transformer layer on x [b, s, D/M] bf16; returns its output.

        The training step passes `keep`, a dict that receives the values
        its backward reads (the saved activations and gathered weights),
        and with `recompute` (remat nothing: the layer's forward again in
        its backward) the layer stops after the gather of w2: the second
        MLP einsum, its reduce_scatter and the last residual add are not
        needed by the backward, and None is returned."""
        if keep is None:
            keep = {}
        c = self.cfg
        b, s, dm, dn, hl, fl = self.b, self.s, self.dm, self.dn, self.hl, self.fl
        h = c.head_dim
        D = c.d_model
        act = [b, s, dm]
        self.emit("")
        if recompute:
            self.emit("// ---- layer %d backward: recompute the attention "
                      "block (remat nothing)" % index)
        else:
            self.emit("// ---- layer %d: attention block" % index)
        ln1 = self.layer_norm(x)
        keep.update(x=x, stats1=self.ln_stats)
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
        keep.update(xg=xg, attn=self.attn_saved, o=o,
                    **{n + "_full": wf for n, (wf, _) in
                       zip(("wq", "wk", "wv"), wfull)},
                    **{n: v for n, v in zip("qkv", qkv)})
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
        if recompute:
            self.emit("// ---- layer %d backward: recompute the MLP block "
                      "(remat nothing)" % index)
        else:
            self.emit("// ---- layer %d: MLP block" % index)
        ln2 = self.layer_norm(h1)
        keep.update(wo_full=wo, h1=h1, stats2=self.ln_stats)
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
        keep.update(xg2=xg2, w1_full=w1, hidden=hid, relu_bf=relu_bf,
                    w2_full=w2)
        if recompute:
            return None
        part2 = self.einsum("bsf,fd->bsd", [relu_bf, w2], [hid_shape, w2_shape],
                            "bf16", [b, s, D], self.partials, "mlp")
        y = self.fresh("mlp_out")
        self.emit("%s = ovl.reduce_scatter %s on @grid axes [%d] dim 2 : %s -> %s"
                  % (y, part2, self.model_axis, tensor([b, s, D], self.partials),
                     tensor(act, self.partials)))
        return self.residual(h1, y, self.partials)

    def weight_shapes(self):
        """Each weight's per-device shape, by name."""
        head = [self.dn, self.hl, self.cfg.head_dim]
        return {"wq": head, "wk": head, "wv": head, "wo": head,
                "w1": [self.dn, self.fl], "w2": [self.fl, self.dn]}

    def program(self, layers):
        c = self.cfg
        act = [self.b, self.s, self.dm]
        wshapes = self.weight_shapes()
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

    def weight_flops(self):
        """Per-device FLOPs of one layer's einsums with the weights in its
        forward: 2 x its share of the layer's parameters x the tokens it
        sees (the 2·params·tokens of model FLOPs; a training step's model
        FLOPs are three times this, 6·params·tokens)."""
        c = self.cfg
        tokens = self.b * self.s
        proj = 4 * 2 * tokens * c.d_model * self.hl * c.head_dim
        mlp = 2 * 2 * tokens * c.d_model * self.fl
        return proj + mlp

    def stats(self):
        """Per-device FLOPs of one layer (einsums, multiply-add = 2) and the
        largest tensor."""
        c = self.cfg
        b, s, D, hl, fl, h = (self.b, self.s, c.d_model, self.hl, self.fl,
                              c.head_dim)
        tokens = b * s
        core = 2 * 2 * b * hl * s * s * h
        largest = max(b * hl * s * s * 4,            # f32 scores
                      tokens * D * 4,                # f32 partial sums
                      tokens * fl * 4)               # f32 hidden
        return self.weight_flops() + core, largest

    def header(self, layers):
        return "\n".join(self.header_lines(layers))

    def header_lines(self, layers):
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
        return lines


REMAT = ("save", "nothing")


def default_remat(name):
    """Pax's rematerialisation policy of a config: SAVE_CONTEXT_AND_OUT_PROJ
    ("save") for 32B and 64B, SAVE_NOTHING ("nothing") for 128B and up;
    "save" for tiny and other sizes. "<name>-tiny" takes its config's."""
    base = name[:-5] if name.endswith("-tiny") else name
    return "nothing" if base in ("128B", "256B", "512B", "1024B") else "save"


WEIGHTS = ("wq", "wk", "wv", "wo", "w1", "w2")


class TrainEmitter(Emitter):
    """One training step of N layers (forward, loss, backward; no optimizer
    update): @gpt_layers_train, see the module docstring."""

    def __init__(self, cfg, partials, remat):
        if remat not in REMAT:
            raise ValueError("remat must be one of %s" % ", ".join(REMAT))
        Emitter.__init__(self, cfg, partials)
        self.remat = remat

    # -- building blocks ---------------------------------------------------

    def reduce_scatter(self, value, shape, dtype, axis, dim, stem):
        group = self.cfg.model if axis == self.model_axis else self.cfg.data
        out_shape = list(shape)
        out_shape[dim] //= group
        r = self.fresh(stem)
        self.emit("%s = ovl.reduce_scatter %s on @grid axes [%d] dim %d : "
                  "%s -> %s" % (r, value, axis, dim, tensor(shape, dtype),
                                tensor(out_shape, dtype)))
        return r

    def all_reduce(self, value, shape, axes, stem):
        r = self.fresh(stem)
        self.emit("%s = ovl.all_reduce %s on @grid axes [%s] : %s"
                  % (r, value, ", ".join(str(a) for a in axes),
                     tensor(shape, "f32")))
        return r

    def addf(self, a, b, shape, stem):
        r = self.fresh(stem)
        self.emit("%s = arith.addf %s, %s : %s" % (r, a, b,
                                                  tensor(shape, "f32")))
        return r

    def generic(self, stem, dims, ins, outs, body, iterators=None):
        """A linalg.generic over the loop dims `dims` ("b, s, d"); `ins`:
        (value, shape, dtype, map results), `outs`: (shape, dtype, map
        results); `body`: the region's lines. Returns the result, or the
        list of results when there are several outputs."""
        inits = [self.empty(shape, dtype) for shape, dtype, _ in outs]
        maps = ", ".join("affine_map<(%s) -> (%s)>" % (dims, m)
                         for m in [i[3] for i in ins] + [o[2] for o in outs])
        n = len(dims.split(","))
        iterators = iterators or ["parallel"] * n
        r = self.fresh(stem)
        results = r if len(outs) == 1 else "%s:%d" % (r, len(outs))
        self.emit("%s = linalg.generic {indexing_maps = [%s], "
                  "iterator_types = [%s]}"
                  % (results, maps, ", ".join('"%s"' % i for i in iterators)))
        self.emit("    ins(%s : %s) outs(%s : %s) {"
                  % (", ".join(i[0] for i in ins),
                     ", ".join(tensor(i[1], i[2]) for i in ins),
                     ", ".join(inits),
                     ", ".join(tensor(o[0], o[1]) for o in outs)))
        for line in body:
            self.emit("  " + line)
        types = [tensor(o[0], o[1]) for o in outs]
        self.emit("} -> %s" % (types[0] if len(outs) == 1
                               else "(%s)" % ", ".join(types)))
        if len(outs) == 1:
            return r
        return ["%s#%d" % (r, i) for i in range(len(outs))]

    def ln_statistics(self):
        """Body lines recomputing the forward's mean and 1/sqrt(var + eps)
        from the all-reduced sums %su, %sq (the same ops)."""
        return [
            "  %inv = arith.constant " + flt(1.0 / self.cfg.d_model) +
            " : f32",
            "  %eps = arith.constant " + flt(EPS) + " : f32",
            "  %zero = arith.constant 0.0 : f32",
            "  %mean = arith.mulf %su, %inv : f32",
            "  %ex2 = arith.mulf %sq, %inv : f32",
            "  %m2 = arith.mulf %mean, %mean : f32",
            "  %var0 = arith.subf %ex2, %m2 : f32",
            "  %var = arith.maximumf %var0, %zero : f32",
            "  %ve = arith.addf %var, %eps : f32",
            "  %rs = math.rsqrt %ve : f32",
        ]

    def weight_grad(self, part, shape, dim, stem):
        """A weight's gradient, a partial sum over the batch: reduce-scattered
        along data on the weight's d_model dim `dim` (the backward of the
        forward's gather), then all-reduced over the replica axis, which
        splits the batch further but not the weights."""
        r = self.reduce_scatter(part, shape, "f32", self.data_axis, dim, stem)
        if self.cfg.replica > 1:
            out = list(shape)
            out[dim] //= self.cfg.data
            r = self.all_reduce(r, out, [0], stem)
        return r

    # -- the loss and the backward -----------------------------------------

    def loss(self, out):
        """L = 0.5 * sum (out - t)^2 over every global element: local sum
        in f32, all-reduced over every grid axis. Returns (L, out - t)."""
        act = [self.b, self.s, self.dm]
        self.emit("")
        self.emit("// ---- loss: L = 0.5 * sum (out - target)^2, local sum "
                  "in f32, all-reduced")
        outf = self.extf(out, act)
        dy = self.fresh("dy")
        self.emit("%s = arith.subf %s, %%target : %s"
                  % (dy, outf, tensor(act, "f32")))
        zero = self.fresh("fzero")
        self.emit("%s = arith.constant 0.0 : f32" % zero)
        init = self.empty([], "f32")
        filled = self.fresh("fill")
        self.emit("%s = linalg.fill ins(%s : f32) outs(%s : tensor<f32>) "
                  "-> tensor<f32>" % (filled, zero, init))
        part = self.fresh("loss_part")
        self.emit("%s = linalg.generic {indexing_maps = ["
                  "affine_map<(b, s, d) -> (b, s, d)>, "
                  "affine_map<(b, s, d) -> ()>], iterator_types = "
                  '["reduction", "reduction", "reduction"]}' % part)
        self.emit("    ins(%s : %s) outs(%s : tensor<f32>) {"
                  % (dy, tensor(act, "f32"), filled))
        for line in ["^bb0(%d: f32, %acc: f32):",
                     "  %half = arith.constant 0.5 : f32",
                     "  %sq = arith.mulf %d, %d : f32",
                     "  %hsq = arith.mulf %sq, %half : f32",
                     "  %s = arith.addf %acc, %hsq : f32",
                     "  linalg.yield %s : f32"]:
            self.emit("  " + line)
        self.emit("} -> tensor<f32>")
        axes = list(range(self.axis_offset + 2))
        loss = self.all_reduce(part, [], axes, "loss")
        return loss, dy

    def layer_norm_backward(self, x, stats, g):
        """The backward of layer_norm: x [b, s, D/M] bf16 its input, stats
        the forward's all-reduced sums of x and x*x, g the f32 gradient of
        its output. The forward all-reduces the two sums along model, so the
        backward all-reduces their cotangents along model (each device
        computes its share from its own d_model slice). Returns the f32
        gradient of x."""
        b, s, dm = self.b, self.s, self.dm
        act, stat = [b, s, dm], [b, s]
        self.emit("// layer norm backward: local sums, the statistics' "
                  "cotangents all-reduced along model")
        xf = self.extf(x, act)
        gsum = self.einsum("bsd->bs", [g], [act], "f32", stat, "f32", "gsum")
        gxsum = self.einsum("bsd,bsd->bs", [g, xf], [act, act], "f32", stat,
                            "f32", "gxsum")
        body = ["^bb0(%a: f32, %bx: f32, %su: f32, %sq: f32, %o0: f32, "
                "%o1: f32):"] + self.ln_statistics() + [
            "  %mhalf = arith.constant -0.5 : f32",
            # the local sum of g * (x - mean): the cotangent of rs
            "  %ma = arith.mulf %mean, %a : f32",
            "  %grs = arith.subf %bx, %ma : f32",
            # d rs / d var = -0.5 rs^3; the clamp of var passes nothing
            "  %rs2 = arith.mulf %rs, %rs : f32",
            "  %rs3 = arith.mulf %rs2, %rs : f32",
            "  %drs = arith.mulf %rs3, %mhalf : f32",
            "  %gv0 = arith.mulf %grs, %drs : f32",
            "  %pos = arith.cmpf ogt, %var0, %zero : f32",
            "  %gvar = arith.select %pos, %gv0, %zero : f32",
            # mean: through x - mean and through var = E[x^2] - mean^2
            "  %ra = arith.mulf %rs, %a : f32",
            "  %mg = arith.mulf %mean, %gvar : f32",
            "  %mg2 = arith.addf %mg, %mg : f32",
            "  %gm0 = arith.addf %ra, %mg2 : f32",
            "  %gmean = arith.negf %gm0 : f32",
            # sums: mean = su / D, E[x^2] = sq / D
            "  %gsu = arith.mulf %gmean, %inv : f32",
            "  %gsq = arith.mulf %gvar, %inv : f32",
            "  linalg.yield %gsu, %gsq : f32, f32",
        ]
        part = self.generic("lnstat", "b, s",
                            [(gsum, stat, "f32", "b, s"),
                             (gxsum, stat, "f32", "b, s"),
                             (stats[0], stat, "f32", "b, s"),
                             (stats[1], stat, "f32", "b, s")],
                            [(stat, "f32", "b, s"), (stat, "f32", "b, s")],
                            body)
        red = [self.all_reduce(v, stat, [self.model_axis], "gstat")
               for v in part]
        body = ["^bb0(%xv: f32, %gv: f32, %su: f32, %sq: f32, %gsu: f32, "
                "%gsq: f32, %o: f32):"] + self.ln_statistics() + [
            "  %t0 = arith.mulf %gv, %rs : f32",
            "  %t1 = arith.addf %t0, %gsu : f32",
            "  %x1 = arith.mulf %xv, %gsq : f32",
            "  %x2 = arith.addf %x1, %x1 : f32",
            "  %dx = arith.addf %t1, %x2 : f32",
            "  linalg.yield %dx : f32",
        ]
        return self.generic("dln", "b, s, d",
                            [(xf, act, "f32", "b, s, d"),
                             (g, act, "f32", "b, s, d"),
                             (stats[0], stat, "f32", "b, s"),
                             (stats[1], stat, "f32", "b, s"),
                             (red[0], stat, "f32", "b, s"),
                             (red[1], stat, "f32", "b, s")],
                            [(act, "f32", "b, s, d")], body)

    def attention_backward(self, sv, d_o):
        """The backward of attention_core: d_o [b, s, n, h] f32, the
        gradient of its output; returns dq, dk, dv rounded to bf16."""
        b, s, n, h = self.b, self.s, self.hl, self.cfg.head_dim
        qkv, sc, red = [b, s, n, h], [b, n, s, s], [b, n, s]
        a = sv["attn"]
        self.emit("// normalisation backward: o = pv / denom")
        # sum_h d_o * pv: the cotangent of denom is -(that) / denom^2
        dsum = self.einsum("bsnh,bsnh->bns", [d_o, a["pv"]], [qkv, qkv],
                           "f32", red, "f32", "dsum")
        dpv = self.generic(
            "dpv", "b, s, n, h",
            [(d_o, qkv, "f32", "b, s, n, h"), (a["denom"], red, "f32",
                                                "b, n, s")],
            [(qkv, "bf16", "b, s, n, h")],
            ["^bb0(%x: f32, %l: f32, %o: bf16):",
             "  %y = arith.divf %x, %l : f32",
             "  %t = arith.truncf %y : f32 to bf16",
             "  linalg.yield %t : bf16"])
        self.emit("// PV einsum backward")
        dp = self.einsum("bsnh,btnh->bnst", [dpv, sv["v"]], [qkv, qkv], "bf16",
                         sc, "f32", "dp")
        dv = self.einsum("bnst,bsnh->btnh", [a["probs"], dpv], [sc, qkv],
                         "bf16", qkv, "f32", "dv")
        self.emit("// softmax backward: the denominator's sum, exp and the "
                  "causal mask (the max is a")
        self.emit("// shift the normalisation cancels: no gradient)")
        ds = self.generic(
            "dscores", "b, n, s, t",
            [(a["scores"], sc, "f32", "b, n, s, t"),
             (a["max"], red, "f32", "b, n, s"),
             (dp, sc, "f32", "b, n, s, t"),
             (dsum, red, "f32", "b, n, s"),
             (a["denom"], red, "f32", "b, n, s")],
            [(sc, "bf16", "b, n, s, t")],
            ["^bb0(%x: f32, %m: f32, %dp: f32, %ds: f32, %l: f32, %o: bf16):",
             "  %scale = arith.constant " + flt(1.0 / math.sqrt(h)) + " : f32",
             "  %zero = arith.constant 0.0 : f32",
             "  %qi = linalg.index 2 : index",
             "  %ki = linalg.index 3 : index",
             "  %d = arith.subf %x, %m : f32",
             "  %z = arith.mulf %d, %scale : f32",
             "  %e = math.exp %z : f32",
             "  %l2 = arith.mulf %l, %l : f32",
             "  %dd = arith.divf %ds, %l2 : f32",
             "  %dpt = arith.subf %dp, %dd : f32",
             "  %ge = arith.mulf %dpt, %e : f32",
             "  %gz = arith.mulf %ge, %scale : f32",
             "  %causal = arith.cmpi ule, %ki, %qi : index",
             "  %g = arith.select %causal, %gz, %zero : f32",
             "  %t = arith.truncf %g : f32 to bf16",
             "  linalg.yield %t : bf16"])
        self.emit("// scores einsum backward")
        dq = self.einsum("bnst,btnh->bsnh", [ds, sv["k"]], [sc, qkv], "bf16",
                         qkv, "f32", "dq")
        dk = self.einsum("bnst,bsnh->btnh", [ds, sv["q"]], [sc, qkv], "bf16",
                         qkv, "f32", "dk")
        return [self.truncf(v, qkv) for v in (dq, dk, dv)]

    def layer_backward(self, index, sv, g_out):
        """The backward of layer `index` from its saved (or recomputed)
        values `sv` and g_out, the f32 gradient of its output [b, s, D/M].
        Returns the gradient of its input (f32) and {weight: gradient}."""
        c = self.cfg
        b, s, dm, hl, fl, h, D = (self.b, self.s, self.dm, self.hl, self.fl,
                                  c.head_dim, c.d_model)
        act, full, hid = [b, s, dm], [b, s, D], [b, s, fl]
        qkv = [b, s, hl, h]
        wqkv = [D, hl, h]
        grads = {}
        self.emit("")
        self.emit("// ---- layer %d backward: MLP block" % index)
        self.emit("// out = h1 + y: y's gradient is g_out; the backward of "
                  "y's reduce_scatter is an")
        self.emit("// all_gather along model of the gradient, rounded to "
                  "bf16 for the einsums")
        gy = self.truncf(g_out, act)
        gy_full, _ = self.gather(gy, act, "bf16", self.model_axis, 2,
                                 "gy_full")
        drelu = self.einsum("bsd,fd->bsf", [gy_full, sv["w2_full"]],
                            [full, [fl, D]], "bf16", hid, "f32", "drelu")
        dw2 = self.einsum("bsf,bsd->fd", [sv["relu_bf"], gy_full],
                          [hid, full], "bf16", [fl, D], "f32", "dw2_part")
        self.emit("// weight gradients sum over the batch (on data): "
                  "reduce_scatter along data")
        grads["w2"] = self.weight_grad(dw2, [fl, D], 1, "dw2")
        self.emit("// ReLU backward: the gradient where the pre-activation "
                  "is > 0, rounded to bf16")
        zero = self.fresh("zero")
        self.emit("%s = arith.constant dense<0.0> : %s"
                  % (zero, tensor(hid, "f32")))
        pos = self.fresh("pos")
        self.emit("%s = arith.cmpf ogt, %s, %s : %s"
                  % (pos, sv["hidden"], zero, tensor(hid, "f32")))
        dh = self.fresh("dhidden")
        self.emit("%s = arith.select %s, %s, %s : %s, %s"
                  % (dh, pos, drelu, zero, tensor(hid, "i1"),
                     tensor(hid, "f32")))
        dh_bf = self.truncf(dh, hid)
        dw1 = self.einsum("bsd,bsf->df", [sv["xg2"], dh_bf], [full, hid],
                          "bf16", [D, fl], "f32", "dw1_part")
        grads["w1"] = self.weight_grad(dw1, [D, fl], 0, "dw1")
        self.emit("// the gathered activation's gradient sums over d_ff "
                  "(on model): reduce_scatter")
        self.emit("// along model, the backward of the forward's all_gather")
        dxg2 = self.einsum("bsf,df->bsd", [dh_bf, sv["w1_full"]], [hid,
                                                                  [D, fl]],
                           "bf16", full, "f32", "dxg")
        dln2 = self.reduce_scatter(dxg2, full, "f32", self.model_axis, 2,
                                   "dln")
        dres = self.layer_norm_backward(sv["h1"], sv["stats2"], dln2)
        self.emit("// residual: h1 feeds the layer norm and the output")
        g_h1 = self.addf(g_out, dres, act, "gh")

        self.emit("")
        self.emit("// ---- layer %d backward: attention block" % index)
        self.emit("// h1 = x + a: the backward of a's reduce_scatter, an "
                  "all_gather along model")
        ga = self.truncf(g_h1, act)
        ga_full, _ = self.gather(ga, act, "bf16", self.model_axis, 2,
                                 "ga_full")
        d_o = self.einsum("bsd,dnh->bsnh", [ga_full, sv["wo_full"]],
                          [full, wqkv], "bf16", qkv, "f32", "do")
        dwo = self.einsum("bsnh,bsd->dnh", [sv["o"], ga_full], [qkv, full],
                          "bf16", wqkv, "f32", "dwo_part")
        grads["wo"] = self.weight_grad(dwo, wqkv, 0, "dwo")
        dq, dk, dv = self.attention_backward(sv, d_o)
        self.emit("// Q, K, V read the one gathered activation: its gradient "
                  "is the sum of three")
        self.emit("// einsums (f32), reduce-scattered along model")
        parts = [self.einsum("bsnh,dnh->bsd", [dv_, sv[n + "_full"]],
                             [qkv, wqkv], "bf16", full, "f32", "dx" + n[1])
                 for dv_, n in zip((dq, dk, dv), ("wq", "wk", "wv"))]
        total = self.addf(self.addf(parts[0], parts[1], full, "dxqk"),
                          parts[2], full, "dxqkv")
        dln1 = self.reduce_scatter(total, full, "f32", self.model_axis, 2,
                                   "dln")
        for dv_, n in zip((dq, dk, dv), ("wq", "wk", "wv")):
            part = self.einsum("bsd,bsnh->dnh", [sv["xg"], dv_], [full, qkv],
                               "bf16", wqkv, "f32", "d%s_part" % n)
            grads[n] = self.weight_grad(part, wqkv, 0, "d" + n)
        dres = self.layer_norm_backward(sv["x"], sv["stats1"], dln1)
        self.emit("// residual: x feeds the layer norm and h1")
        gx = self.addf(g_h1, dres, act, "gx")
        return gx, grads

    def program(self, layers):
        c = self.cfg
        act = [self.b, self.s, self.dm]
        wshapes = self.weight_shapes()
        args = ["    %%input: %s,  // [b, s, D/model]" % tensor(act, "bf16")]
        weights = []
        results = [("tensor<f32>", "loss"),
                   (tensor(act, "f32"), "d input")]
        for l in range(layers):
            w = {}
            for name in WEIGHTS:
                arg = "%%%s_%d" % (name, l)
                w[name] = arg
                args.append("    %s: %s," % (arg, tensor(wshapes[name],
                                                         "bf16")))
                results.append((tensor(wshapes[name], "f32"),
                                "d %s_%d" % (name, l)))
            weights.append(w)
        args.append("    %%target: %s   // [b, s, D/model], like the output"
                    % tensor(act, "f32"))
        self.lines = []
        x = "%input"
        inputs, saved = [], []
        for l in range(layers):
            inputs.append(x)
            keep = {}
            x = self.layer(x, weights[l], l, keep=keep)
            saved.append(keep if self.remat == "save" else None)
        loss, g = self.loss(x)
        grads = [None] * layers
        for l in reversed(range(layers)):
            sv = saved[l]
            if sv is None:
                sv = {}
                # The layer's input and the gradient arriving at it pass
                # through a barrier: the recomputation reads neither the
                # forward's values (CSE would merge it into the forward)
                # nor only values the forward has (it would be scheduled
                # there, holding its activations through the step).
                self.emit("")
                self.emit("// ---- layer %d backward: the recomputation "
                          "starts when the gradient arrives" % l)
                x_r, g = self.barrier([inputs[l], g], [tensor(act, "bf16"),
                                                       tensor(act, "f32")],
                                      "remat")
                self.layer(x_r, weights[l], l, keep=sv, recompute=True)
            g, grads[l] = self.layer_backward(l, sv, g)
        values = [loss, g] + [grads[l][n] for l in range(layers)
                              for n in WEIGHTS]
        self.emit("")
        self.emit("return %s" % ", ".join(values))
        self.emit("    : %s" % ", ".join(t for t, _ in results))

        grid = [c.data, c.model]
        if c.replica > 1:
            grid = [c.replica] + grid
        out = []
        out.append(self.header(layers))
        out.append("shard.grid @grid(shape = %s)" % "x".join(map(str, grid)))
        out.append("")
        out.append("// Results: the loss (the same on every device), the "
                   "gradient of the input,")
        out.append("// then of each layer's wq, wk, wv, wo, w1, w2, each "
                   "shaped and sharded as its")
        out.append("// argument (f32).")
        out.append("func.func @gpt_layers_train(")
        out.extend(args)
        out.append("    ) -> (%s) {" % ", ".join(t for t, _ in results))
        out.extend(self.lines)
        out.append("}")
        return "\n".join(out) + "\n"

    def header(self, layers):
        lines = self.header_lines(layers)
        flops, _ = self.stats()
        extra = [
            "// Training step: forward, loss 0.5 * sum (out - target)^2, "
            "backward; no optimizer",
            "// update. Remat %s: %s" % (
                self.remat,
                "the backward reads the forward's activations and gathered "
                "weights." if self.remat == "save" else
                "each layer's backward recomputes its forward (gathers "
                "included)."),
            "// Gradient einsum FLOPs per device and layer: %.4g (twice "
            "the forward's)%s." % (2 * flops, "" if self.remat == "save" else
                                   ", plus the recomputed forward"),
        ]
        return "\n".join(lines[:-1] + extra + lines[-1:])


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


def _parser():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default="512B",
                        help="one of %s, or tiny" % ", ".join(LADDER))
    parser.add_argument("--layers", type=positive_int, default=1,
                        help="transformer layers in the program (default 1)")
    parser.add_argument("--out", help="output file (default: stdout)")
    parser.add_argument("--mesh", help="override the ICI mesh: R,DATA,MODEL")
    parser.add_argument("--scale", choices=["full", "tiny"], default="full",
                        help="tiny: shrink every dimension to run on the CPU")
    parser.add_argument("--seq", type=positive_int,
                        help="override the sequence length")
    parser.add_argument("--batch", type=positive_int,
                        help="override the global batch (sequences)")
    parser.add_argument("--partials", choices=["f32", "bf16"], default="f32",
                        help="element type of the reduce-scattered partial "
                             "sums (default f32)")
    parser.add_argument("--step", choices=["forward", "train"],
                        default="forward",
                        help="the forward program (@gpt_layers, the "
                             "default) or one training step without "
                             "optimizer update (@gpt_layers_train)")
    parser.add_argument("--remat", choices=REMAT,
                        help="train: save (the forward's activations and "
                             "gathered weights feed the backward) or nothing "
                             "(each layer's backward recomputes its forward); "
                             "default: the config's Pax policy, save for 32B, "
                             "64B and tiny, nothing for 128B and up")
    parser.add_argument("--print-topology", action="store_true",
                        help="print the torus extents to simulate on and exit")
    parser.add_argument("--list", action="store_true",
                        help="print the ladder and exit")
    return parser


def parse_args(argv=None):
    """The command line's arguments (`argv`: a list, default sys.argv)."""
    return _parser().parse_args(argv)


def make_config(name, args):
    """The Config of ladder config (or "tiny") `name` with the overrides of
    `args` (--mesh, --scale, --seq, --batch); exits with a message on a
    bad one."""
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
    if args.seq is not None:
        cfg.seq = args.seq
    if args.batch is not None:
        cfg.batch = args.batch
    cfg.check()
    return cfg


def emitter_for(name, args):
    """(emitter, config) of config `name` as `args` (parse_args) ask: the
    forward's Emitter or, with --step train, the TrainEmitter with the
    remat policy asked for or the config's."""
    cfg = make_config(name, args)
    if args.step == "train":
        remat = args.remat or default_remat(cfg.name)
        return TrainEmitter(cfg, args.partials, remat), cfg
    if args.remat:
        sys.exit("overlap.models.gpt: --remat needs --step train")
    return Emitter(cfg, args.partials), cfg


def main(argv=None):
    args = parse_args(argv)

    if args.list:
        for name, (layers, d, f, h, chips, mesh, batch) in LADDER.items():
            print("%-6s layers %3d d_model %5d d_ff %6d heads %3d chips %4d "
                  "mesh %s batch %d" % (name, layers, d, f, h, chips,
                                        list(mesh), batch))
        return

    if args.print_topology:
        cfg = make_config(args.config, args)
        topo = topology(cfg)
        if topo is None:
            sys.exit("overlap.models.gpt: no torus topology for mesh "
                     "[%d, %d, %d]"
                     % (cfg.replica, cfg.data, cfg.model))
        print(topo)
        return
    emitter, _ = emitter_for(args.config, args)
    write_program(emitter.program(args.layers), args.out)


if __name__ == "__main__":
    main()
