#!/usr/bin/python3
"""Deterministic generator of the gate sweep's SPMD programs.

Case `i` of seed `s` is a function of (s, i) alone: `case(s, i)` returns a
dict with the program text (one einsum with one or two decomposition
candidates: an all_gather of an operand and/or a reduce_scatter of the
result), the machine (hardware, topology, device assignment), the loop
options (unroll, bidirectional) and labels for the breakdowns.

The dimensions the sweep is stratified over (kind, hardware, group size,
grid rank, placement, wrap-around, dtype, unroll, bidirectional, regime)
each cycle through their levels in an order shuffled per cycle, so that any
prefix of the case sequence covers every level of every dimension about
equally (the --fast subset is such a prefix).

Only valid combinations are produced: shapes divide by the group sizes,
topologies have the hardware's rank and room for the grid, assignments are
injective and in range. Everything else (what the tools make of them) is
the sweep's to measure.

  gen.py --seed S --index I [--out FILE]   prints case I's parameters and
                                            writes (or prints) its program
"""

import argparse
import json
import math
import os
import random
import sys

# ---------------------------------------------------------------------------
# Hardware: the built-in descriptions (docs/Hardware.md), used here only to
# aim the sizes at a regime, and the JSON descriptions the sweep writes.

BUILTIN = {
    "tpu-v4": dict(rank=3, f32=45.8e12, bf16=275e12, hbm=1.2e12, link=45e9,
                   links=6, hop=1e-6, launch=1e-6, unit=4, perdim=False),
    "tpu-v5e": dict(rank=2, f32=32.8e12, bf16=197e12, hbm=819e9, link=50e9,
                    links=4, hop=1e-6, launch=1e-6, unit=16, perdim=True),
    "tpu-v5p": dict(rank=3, f32=76.5e12, bf16=459e12, hbm=2.765e12,
                    link=100e9, links=6, hop=1e-6, launch=1e-6, unit=4,
                    perdim=False),
    "h100-nvlink": dict(rank=0, f32=67e12, bf16=989e12, hbm=3.35e12,
                        link=25e9, links=18, hop=2.5e-6, launch=5e-6, unit=0,
                        perdim=False),
}

# Hardware files (docs/Hardware.md, "Hardware files"), written to
# <results>/hw/<name>.json by write_hardware_files.
JSON_HARDWARE = {
    # TPU v4's interconnect with a tenth of its arithmetic and 2 us hops:
    # compute-bound where v4 is not, and latency weighs double.
    "json-slow-v4": {
        "name": "json-slow-v4",
        "peakFlops": {"f32": 4.58e12, "bf16": 27.5e12, "f16": 4.58e12,
                      "i8": 27.5e12},
        "hbmBandwidth": 1.2e12, "linkBandwidth": 45e9, "linksPerChip": 6,
        "hopLatency": 2e-6, "dmaSlots": 8, "collectiveLaunchOverhead": 1e-6,
        "interconnect": "torus", "torusRank": 3, "wrapAroundUnit": 4,
    },
    # A 2-D torus whose dimensions wrap on their own from 8 devices up,
    # with fast links, half-microsecond hops and four DMA slots.
    "json-torus2d": {
        "name": "json-torus2d",
        "peakFlops": {"f32": 50e12, "bf16": 400e12, "f16": 50e12,
                      "i8": 800e12},
        "hbmBandwidth": 1.6e12, "linkBandwidth": 100e9, "linksPerChip": 4,
        "hopLatency": 0.5e-6, "dmaSlots": 4,
        "collectiveLaunchOverhead": 2e-6, "interconnect": "torus",
        "torusRank": 2, "wrapAroundUnit": 8, "wrapAroundPerDimension": True,
    },
}


def json_params(desc):
    return dict(rank=desc["torusRank"], f32=desc["peakFlops"]["f32"],
                bf16=desc["peakFlops"]["bf16"], hbm=desc["hbmBandwidth"],
                link=desc["linkBandwidth"], links=desc["linksPerChip"],
                hop=desc["hopLatency"],
                launch=desc["collectiveLaunchOverhead"],
                unit=desc["wrapAroundUnit"],
                perdim=desc.get("wrapAroundPerDimension", False))


HARDWARE = dict(BUILTIN)
HARDWARE.update({k: json_params(v) for k, v in JSON_HARDWARE.items()})


def write_hardware_files(directory):
    """Writes the JSON descriptions; returns {name: path}."""
    os.makedirs(directory, exist_ok=True)
    paths = {}
    for name, desc in JSON_HARDWARE.items():
        path = os.path.join(directory, name + ".json")
        text = json.dumps(desc, indent=1) + "\n"
        if not os.path.exists(path) or open(path).read() != text:
            with open(path, "w") as f:
                f.write(text)
        paths[name] = path
    return paths


def hardware_option(hw, hw_dir):
    """What the tools' hardware option gets for `hw`."""
    if hw in JSON_HARDWARE:
        return os.path.join(hw_dir, hw + ".json")
    return hw


# ---------------------------------------------------------------------------
# Topology helpers (the rules of docs/Hardware.md and docs/Simulator.md).

def prod(values):
    p = 1
    for v in values:
        p *= v
    return p


def unravel(index, shape):
    out = []
    for s in reversed(shape):
        out.append(index % s)
        index //= s
    return list(reversed(out))


def ravel(coords, shape):
    index = 0
    for c, s in zip(coords, shape):
        index = index * s + c
    return index


def wraps(hw, extents):
    """Per dimension: does it have wrap-around links?"""
    p = HARDWARE[hw]
    if p["rank"] == 0:
        return [True] * len(extents)
    unit = p["unit"]
    if unit == 0:
        return [True] * len(extents)
    if p["perdim"]:
        return [e % unit == 0 for e in extents]
    every = all(e % unit == 0 for e in extents)
    return [every] * len(extents)


def hops(hw, extents, a, b, w=None):
    """Dimension-ordered route length between physical devices a and b
    (`w`: the dims with wrap-around, default the hardware's rule)."""
    if HARDWARE[hw]["rank"] == 0:
        return 0 if a == b else 1
    ca, cb = unravel(a, extents), unravel(b, extents)
    w = w if w is not None else wraps(hw, extents)
    total = 0
    for d, e in enumerate(extents):
        delta = abs(ca[d] - cb[d])
        total += min(delta, e - delta) if w[d] and e > 2 else delta
    return total


def group_of(grid, axes, logical=0):
    """Logical devices of `logical`'s group along `axes`, by group index."""
    idx = unravel(logical, grid)
    members = []
    for g in range(prod(grid[a] for a in axes)):
        sub = unravel(g, [grid[a] for a in axes])
        m = list(idx)
        for a, v in zip(axes, sub):
            m[a] = v
        members.append(ravel(m, grid))
    return members


def mapping_labels(hw, grid, axes, extents, assignment, w=None):
    """How the group of logical device 0 along `axes` lands on the torus:
    spanned dims, whether they wrap (`w`: the dims with wrap-around, default
    the hardware's rule), the ring's longest hop."""
    if HARDWARE[hw]["rank"] == 0:
        return dict(spans="switch", wrap="switch", ring_hops=1)
    phys = [assignment[m] if assignment else m
            for m in group_of(grid, axes)]
    coords = [unravel(p, extents) for p in phys]
    spanned = [d for d in range(len(extents))
               if len(set(c[d] for c in coords)) > 1]
    w = w if w is not None else wraps(hw, extents)
    if spanned and all(w[d] for d in spanned):
        wrap = "wrap"
    elif any(w[d] for d in spanned):
        wrap = "mixed"
    else:
        wrap = "nowrap"
    n = len(phys)
    ring = max(hops(hw, extents, phys[i], phys[(i + 1) % n], w)
               for i in range(n))
    return dict(spans="%d-dim" % len(spanned), wrap=wrap, ring_hops=ring)


# ---------------------------------------------------------------------------
# Einsum templates. Letters carry a role that picks their size from a
# shape family; `gathers` lists (operand, dim) of all_gathered operands,
# `scatter` the scattered output dim; `knob` is the letter scaled to aim at
# a regime (in neither collective's shard).

TEMPLATES = {
    # AllGather case 1: the gathered letter is free in the gathered operand.
    "ag1-rhs": dict(kind="ag1", eq="bf,fh->bh", gathers=[(1, 1)], knob="b",
                    roles=dict(b="tok", f="model", h="ff")),
    "ag1-lhs": dict(kind="ag1", eq="bf,fh->bh", gathers=[(0, 0)], knob="h",
                    roles=dict(b="tok", f="model", h="ff")),
    "ag1-3d": dict(kind="ag1", eq="bsd,df->bsf", gathers=[(1, 1)], knob="s",
                   roles=dict(b="batch", s="seq", d="model", f="ff")),
    # case 2: contracting.
    "ag2-rhs": dict(kind="ag2", eq="bh,hf->bf", gathers=[(1, 0)], knob="b",
                    roles=dict(b="tok", h="ff", f="model")),
    "ag2-act": dict(kind="ag2", eq="bsd,df->bsf", gathers=[(0, 2)], knob="f",
                    roles=dict(b="batch", s="seq", d="model", f="ff")),
    "ag2-heads": dict(kind="ag2", eq="bsd,dnh->bsnh", gathers=[(1, 0)],
                      knob="s", roles=dict(b="batch", s="seq", d="model",
                                           n="heads", h="hdim")),
    # case 3: batch.
    "ag3-lhs": dict(kind="ag3", eq="ebd,edf->ebf", gathers=[(0, 0)],
                    knob="f", roles=dict(e="experts", b="tok", d="model",
                                         f="ff")),
    "ag3-rhs": dict(kind="ag3", eq="bsf,bfh->bsh", gathers=[(1, 0)],
                    knob="s", roles=dict(b="experts", s="tok", f="model",
                                         h="ff")),
    # Einsum-ReduceScatter: the scattered letter free in one operand, or
    # batch.
    "rs-rhs": dict(kind="rs", eq="bf,fh->bh", scatter=1, knob="f",
                   roles=dict(b="tok", f="ff", h="model")),
    "rs-lhs": dict(kind="rs", eq="bf,fh->bh", scatter=0, knob="f",
                   roles=dict(b="tok", f="ff", h="model")),
    "rs-mlp": dict(kind="rs", eq="bsf,fd->bsd", scatter=2, knob="f",
                   roles=dict(b="batch", s="seq", f="ff", d="model")),
    "rs-proj": dict(kind="rs", eq="bsnh,dnh->bsd", scatter=2, knob="n",
                    roles=dict(b="batch", s="seq", n="heads", h="hdim",
                               d="model")),
    "rs-batch": dict(kind="rs", eq="ebd,edf->ebf", scatter=0, knob="d",
                     roles=dict(e="experts", b="tok", d="model", f="ff")),
    # Two candidates on one einsum (figure 3).
    "two-ag-fig3": dict(kind="two-ag", eq="bf,fh->bh",
                        gathers=[(0, 1), (1, 0)], knob="h",
                        roles=dict(b="tok", f="model", h="ff")),
    "two-ag-gpt": dict(kind="two-ag", eq="bsd,df->bsf",
                       gathers=[(0, 2), (1, 0)], knob="f",
                       roles=dict(b="batch", s="seq", d="model", f="ff")),
    "two-agrs-fig3": dict(kind="two-agrs", eq="bh,hf->bf",
                          gathers=[(1, 1)], scatter=1, knob="h",
                          roles=dict(b="tok", h="ff", f="model")),
    "two-agrs-gpt": dict(kind="two-agrs", eq="bsf,fd->bsd",
                         gathers=[(1, 1)], scatter=2, knob="f",
                         roles=dict(b="batch", s="seq", f="ff", d="model")),
}

KIND_TEMPLATES = {}
for _name, _t in TEMPLATES.items():
    KIND_TEMPLATES.setdefault(_t["kind"], []).append(_name)

# Shape families: global sizes per role. "book" is the JAX scaling book's
# collective matmul (B=1024, D=2048, F=8192); gpt-* are layers of the GPT
# ladder (python/overlap/models/gpt.py) per model shard; "small" and "tiny"
# are small and latency-bound shapes.
FAMILIES = {
    "book": dict(tok=1024, batch=1, seq=1024, model=2048, ff=8192,
                 heads=16, hdim=128, experts=8),
    "gpt-32B": dict(tok=32768, batch=32, seq=1024, model=8192, ff=8192,
                    heads=16, hdim=128, experts=4),
    "gpt-512B": dict(tok=65536, batch=64, seq=1024, model=20480, ff=5120,
                     heads=10, hdim=128, experts=4),
    "small": dict(tok=256, batch=4, seq=64, model=512, ff=1024, heads=4,
                  hdim=64, experts=4),
    "tiny": dict(tok=8, batch=2, seq=4, model=16, ff=32, heads=2, hdim=8,
                 experts=2),
}

# ---------------------------------------------------------------------------
# Stratified levels.

DIMENSIONS = [
    ("kind", ["ag1", "ag2", "ag3", "rs", "two-ag", "two-agrs"]),
    ("hardware", ["tpu-v4", "tpu-v5e", "tpu-v5p", "h100-nvlink",
                  "json-slow-v4", "json-torus2d"]),
    ("n", [2, 3, 4, 5, 6, 8, 12, 16]),
    ("grid_rank", [1, 2, 3]),
    ("mode", ["default", "exact", "fold", "mismatch", "explicit"]),
    ("want_wrap", [True, False]),
    ("dtype", ["f32", "bf16"]),
    ("unroll", [1, 2]),
    ("bidirectional", [False, True]),
    ("regime", ["latency", "natural", "comm", "balanced", "compute"]),
]


def level(seed, dim, levels, index):
    """Level of dimension `dim` for case `index`: each cycle of len(levels)
    cases is a permutation of the levels, shuffled per cycle."""
    cycle, pos = divmod(index, len(levels))
    order = list(levels)
    random.Random("%s/%s/%d" % (seed, dim, cycle)).shuffle(order)
    return order[pos]


# ---------------------------------------------------------------------------
# Sizes.

def dtype_bytes(dtype):
    return 2 if dtype == "bf16" else 4


def parse_eq(eq):
    ins, out = eq.split("->")
    return ins.split(","), out


def einsum_time(hw, sizes, eq, in_dtype, out_dtype):
    p = HARDWARE[hw]
    ins, out = parse_eq(eq)
    letters = set("".join(ins) + out)
    flops = 2 * prod(sizes[l] for l in letters)
    nbytes = sum(prod(sizes[l] for l in o) for o in ins) * \
        dtype_bytes(in_dtype) + prod(sizes[l] for l in out) * \
        dtype_bytes(out_dtype)
    return max(flops / p[in_dtype], nbytes / p["hbm"])


def collective_time(hw, shard_bytes, n):
    """A bidirectional ring on wrapped links (or a switch): rough, only to
    aim the sizes."""
    p = HARDWARE[hw]
    bw = p["link"] * p["links"] if p["rank"] == 0 else 2 * p["link"]
    return p["launch"] + (n - 1) * (p["hop"] + shard_bytes / bw)


def round_multiple(value, multiple):
    return max(multiple, int(round(value / multiple)) * multiple)


# ---------------------------------------------------------------------------
# Grids and machines.

def refine_layout(grid, fold_axis=None, factors=None):
    """digits[axis]: the axis' row-major digits (one, or `factors` for the
    folded axis); the natural layout puts every digit on its own dim."""
    digits = [[s] for s in grid]
    if fold_axis is not None:
        digits[fold_axis] = list(factors)
    natural = [[(a, k)] for a in range(len(grid))
               for k in range(len(digits[a]))]
    return digits, natural


def fit_rank(layout, rank):
    """Merges leading dims (in order) or pads with extent-1 dims so that the
    layout has `rank` dims."""
    layout = [list(d) for d in layout]
    while len(layout) > rank:
        layout[0:2] = [layout[0] + layout[1]]
    while len(layout) < rank:
        layout.insert(0, [])
    return layout


def realize(grid, digits, layout, transform=None):
    """Topology extents and the assignment of a layout (None when it is the
    row-major placement)."""
    extents = [prod(digits[a][k] for a, k in dim) for dim in layout]
    assignment = []
    for logical in range(prod(grid)):
        idx = unravel(logical, grid)
        dv = [unravel(idx[a], digits[a]) for a in range(len(grid))]
        coords = [ravel([dv[a][k] for a, k in dim],
                        [digits[a][k] for a, k in dim]) for dim in layout]
        if transform:
            coords = transform(coords)
        assignment.append(coords)
    return extents, assignment


def to_linear(extents, coord_list):
    return [ravel(c, extents) for c in coord_list]


def factor_pairs(n):
    return [(a, n // a) for a in range(2, n) if n % a == 0 and n // a > 1]


def machine_options(rng, hw, grid, axes, mode):
    """Candidate (topology extents or None, assignment or None, placement
    label) for the grid; `axes` are the first candidate's axes."""
    rank = HARDWARE[hw]["rank"]
    devices = prod(grid)
    out = []
    if rank == 0:
        if mode == "default":
            return [(None, None, "default")]
        if mode == "exact":
            return [([devices], None, "exact")]
        if mode == "explicit":
            total = devices * rng.choice([1, 2])
            perm = rng.sample(range(total), devices)
            return [([total], perm, "scramble")]
        return [([devices * 2], None, "subset")]
    if mode == "default":
        return [(None, None, "default")]
    digits, natural = refine_layout(grid)
    exact = fit_rank(natural, rank)
    if mode == "exact":
        out.append(realize(grid, digits, exact) + ("exact",))
    elif mode == "fold":
        axis = axes[0]
        for pair in factor_pairs(grid[axis]):
            d2, nat2 = refine_layout(grid, axis, pair)
            out.append(realize(grid, d2, fit_rank(nat2, rank)) + ("fold",))
        if grid[axis] in (8, 12, 16) and rank == 3 and len(grid) == 1:
            for tri in ([2, 2, 2], [2, 2, 3], [2, 2, 4], [2, 4, 2],
                        [4, 2, 2], [3, 2, 2]):
                if prod(tri) == grid[axis]:
                    d3, nat3 = refine_layout(grid, axis, tri)
                    out.append(realize(grid, d3, fit_rank(nat3, rank))
                               + ("fold",))
    elif mode == "mismatch":
        # Row-major on extents that are not a refinement of the grid,
        # possibly larger than the grid (it takes the first devices).
        choices = [1, 2, 3, 4, 6, 8, 16]
        for dims in _shapes(rank, choices):
            total = prod(dims)
            if total < devices or total > max(4 * devices, 64) or \
                    total > 512:
                continue
            if _is_refinement(grid, dims):
                continue
            out.append((list(dims), [list(unravel(l, dims))
                                     for l in range(devices)], "mismatch"))
    else:  # explicit device-assignment lists
        extents, coords = realize(grid, digits, exact)
        # Scrambled: a random injective placement on the exact topology or
        # on one twice as large.
        big = list(extents)
        big[0] *= rng.choice([1, 2])
        perm = rng.sample(range(prod(big)), devices)
        out.append((big, [unravel(p, big) for p in perm], "scramble"))
        if len(grid) >= 2:
            # Transposed: the axes on the torus dims in reverse order.
            rev = fit_rank(list(reversed(natural)), rank)
            out.append(realize(grid, digits, rev) + ("transpose",))
        # Strided: the collective's axis on a dim of extent stride * N,
        # every stride-th device.
        axis = axes[0]
        for stride in (2, 4):
            if grid[axis] * stride > 32:
                continue
            lay = fit_rank(natural, rank)
            dim = next(i for i, d in enumerate(lay) if (axis, 0) in d)
            if len(lay[dim]) != 1:
                continue
            ext, crd = realize(grid, digits, lay)
            ext = list(ext)
            ext[dim] *= stride
            crd = [list(c) for c in crd]
            for c in crd:
                c[dim] *= stride
            out.append((ext, crd, "strided"))
        # Snake: the axis folded on two dims, in boustrophedon order.
        for p, q in factor_pairs(grid[axis]):
            d2, nat2 = refine_layout(grid, axis, (p, q))
            lay = fit_rank(nat2, rank)
            try:
                r = next(i for i, d in enumerate(lay) if d == [(axis, 0)])
                c = next(i for i, d in enumerate(lay) if d == [(axis, 1)])
            except StopIteration:
                continue

            def snake(coords, r=r, c=c, q=q):
                coords = list(coords)
                if coords[r] % 2:
                    coords[c] = q - 1 - coords[c]
                return coords

            ext, crd = realize(grid, d2, lay, snake)
            out.append((ext, crd, "snake"))
    result = []
    for ext, crd, label in out:
        if crd is None:
            result.append((ext, None, label))
            continue
        linear = to_linear(ext, crd) if crd and isinstance(crd[0], list) \
            else crd
        if linear == list(range(devices)):
            linear = None
        result.append((ext, linear, label))
    return result


def _shapes(rank, choices):
    if rank == 0:
        yield ()
        return
    for c in choices:
        for rest in _shapes(rank - 1, choices):
            yield (c,) + rest


def _is_refinement(grid, dims):
    """Do the extents (ignoring 1s) split the grid's axes into whole
    digits, in order (row-major placement = exact or fold)?"""
    dims = [d for d in dims if d > 1]
    g = [s for s in grid if s > 1]
    i = 0
    for s in g:
        acc = 1
        while acc < s and i < len(dims):
            acc *= dims[i]
            i += 1
        if acc != s:
            return False
    return i == len(dims)


def wrapped_options(hw, grid, axis):
    """Placements of axis `axis` on torus dims that wrap around: a whole
    line (extent N), a line of stride 2 or 4 (every other device), or, where
    every dim must wrap, a 4x4 fold of 16 devices; the other axes fill the
    remaining dims row-major (their extents made to wrap too where the
    hardware wraps all dims or none)."""
    p = HARDWARE[hw]
    rank, unit = p["rank"], p["unit"]
    if rank == 0 or unit == 0:
        return []
    n = grid[axis]
    others = [i for i in range(len(grid)) if i != axis]
    rest = prod(grid[i] for i in others)
    rings = []
    if n % unit == 0:
        rings.append(([n], lambda g: [g], "wrap-line"))
    for stride in (2, 4):
        if (n * stride) % unit == 0 and n * stride <= 32:
            rings.append(([n * stride], lambda g, s=stride: [g * s],
                          "wrap-strided"))
    if not p["perdim"] and unit == 4 and n == 16:
        rings.append(([4, 4], lambda g: [g // 4, g % 4], "wrap-fold"))
    out = []
    for ring_ext, fn, label in rings:
        k = rank - len(ring_ext)
        if k < 0:
            continue
        if p["perdim"]:
            fills = [[rest]] if k == 1 else ([[1, rest]] if k == 2 else [])
            if k == 0 and rest == 1:
                fills = [[]]
        else:
            multiples = [unit * m for m in (1, 2, 4) if unit * m <= 16]
            fills = [list(f) for f in _shapes(k, multiples)
                     if prod(f) >= rest]
            fills.sort(key=prod)
            fills = fills[:2]
        for fill in fills:
            for ring_last in (True, False):
                ext = fill + ring_ext if ring_last else ring_ext + fill
                if prod(ext) > 512:
                    continue
                coords = []
                for logical in range(prod(grid)):
                    idx = unravel(logical, grid)
                    o = ravel([idx[i] for i in others],
                              [grid[i] for i in others])
                    oc = unravel(o, fill) if fill else []
                    rc = fn(idx[axis])
                    coords.append(oc + rc if ring_last else rc + oc)
                out.append((ext, coords, label))
    return out


def pick_machine(rng, hw, grid, axes, mode, want_wrap):
    options = machine_options(rng, hw, grid, axes, mode)
    if want_wrap and mode in ("exact", "fold", "explicit"):
        for ext, crd, label in wrapped_options(hw, grid, axes[0]):
            linear = to_linear(ext, crd)
            options.append((ext, None if linear == list(
                range(prod(grid))) else linear, label))
    if not options:  # e.g. fold of a prime group: fall back to exact
        options = machine_options(rng, hw, grid, axes, "exact")
    labelled = []
    for ext, assign, label in options:
        if ext is not None and HARDWARE[hw]["rank"] > 0:
            w = mapping_labels(hw, grid, axes, ext, assign)["wrap"]
            labelled.append((w == "wrap", ext, assign, label))
        else:
            labelled.append((False, ext, assign, label))
    preferred = [o for o in labelled if o[0] == want_wrap] or labelled
    # A placement kind first, then one of its options, so that kinds with
    # many variants do not crowd out the others.
    kind = rng.choice(sorted(set(o[3] for o in preferred)))
    _, ext, assign, label = rng.choice([o for o in preferred
                                        if o[3] == kind])
    return ext, assign, label


def grid_for(rng, hw, n, rank, kind, mode, want_wrap):
    """Grid shape and the axes of the candidates."""
    two = kind.startswith("two")
    if two:
        rank = max(rank, 2)
    others = []
    for _ in range(rank - 1):
        others.append(rng.choice([2, 2, 3, 4]))
    # Wrap-around on TPU v4/v5p needs whole 4x4x4 cubes: with an exact
    # layout the other axes must be 4 (or 8) too.
    p = HARDWARE[hw]
    if want_wrap and mode == "exact" and p["rank"] == 3 and p["unit"] == 4 \
            and n % 4 == 0 and rank == 3:
        others = [4, 4]
    if want_wrap and mode == "exact" and p["perdim"] and rank >= 2 \
            and rng.random() < 0.5:
        others[0] = p["unit"]
    axis = rng.randrange(rank)
    grid = list(others)
    grid.insert(axis, n)
    while prod(grid) > 256:
        j = max((i for i in range(rank) if i != axis), key=lambda i: grid[i])
        grid[j] = 2
    axes = [[axis]]
    if two:
        other = rng.choice([i for i in range(rank) if i != axis])
        axes.append([other])
    elif rank >= 2 and rng.random() < 0.2 and n >= 4 and \
            factor_pairs(n):
        # One collective over two grid axes whose sizes multiply to n.
        a, b = rng.choice(factor_pairs(n))
        other = rng.choice([i for i in range(rank) if i != axis])
        grid[axis], grid[other] = a, b
        axes = [[axis, other] if rng.random() < 0.5 else [other, axis]]
    return grid, axes


def tensor(shape, dtype):
    return "tensor<" + "x".join(str(s) for s in shape) + "x" + dtype + ">"


def group_size(grid, axes):
    return prod(grid[a] for a in axes)


def build_sizes(rng, t, family, regime, hw, groups, dtype, out_dtype):
    """Letter sizes (the einsum's, i.e. local but gathered) for template t."""
    fam = FAMILIES[family]
    ins, out = parse_eq(t["eq"])
    sizes = {}
    jitter = [0.5, 1, 1, 2] if family != "tiny" else [1, 2]
    for letter, role in t["roles"].items():
        sizes[letter] = max(1, int(fam[role] * rng.choice(jitter)))
    # The decomposed letters divide by their group sizes.
    split = {}
    for (operand, dim), g in zip(t.get("gathers", []), groups):
        letter = ins[operand][dim]
        split[letter] = split.get(letter, 1) * g // math.gcd(split.get(
            letter, 1), g)
    if "scatter" in t:
        letter = out[t["scatter"]]
        g = groups[-1]
        split[letter] = split.get(letter, 1) * g // math.gcd(split.get(
            letter, 1), g)
    small_roles = ("batch", "experts", "heads")
    for letter, g in split.items():
        q = 1 if family == "tiny" or t["roles"][letter] in small_roles else 8
        sizes[letter] = round_multiple(sizes[letter], g * q)
    fit_memory(t, sizes, split, dtype, out_dtype)
    if regime in ("comm", "balanced", "compute"):
        lo, hi = {"comm": (0.12, 0.5), "balanced": (0.7, 2.5),
                  "compute": (2.5, 10.0)}[regime]
        target = math.exp(rng.uniform(math.log(lo), math.log(hi)))
        knob = t["knob"]
        best = None
        for e in range(0, 44):
            v = max(1, round_multiple(2 ** (e / 2), 8 if e > 6 else 1))
            trial = dict(sizes)
            trial[knob] = v
            r = comp_comm_ratio(hw, t, trial, groups, dtype, out_dtype)
            score = abs(math.log(r / target))
            if best is None or score < best[0]:
                best = (score, v)
        sizes[t["knob"]] = best[1]
        fit_memory(t, sizes, split, dtype, out_dtype, keep=knob)
    return sizes


MAX_TENSOR_BYTES = 2 << 30


def fit_memory(t, sizes, split, dtype, out_dtype, keep=None):
    """Halves the largest free letter (not split, not `keep`) while a tensor
    of the einsum exceeds MAX_TENSOR_BYTES, then the knob itself."""
    ins, out = parse_eq(t["eq"])

    def largest():
        tensors = [(prod(sizes[l] for l in o) * dtype_bytes(dtype), o)
                   for o in ins]
        tensors.append((prod(sizes[l] for l in out) * dtype_bytes(out_dtype),
                        out))
        return max(tensors)

    while True:
        nbytes, letters = largest()
        if nbytes <= MAX_TENSOR_BYTES:
            return
        free = [l for l in letters if l not in split and l != keep
                and sizes[l] > 1]
        if not free:
            free = [l for l in letters if l not in split and sizes[l] > 1]
        if not free:
            return
        l = max(free, key=lambda x: sizes[x])
        sizes[l] = max(1, sizes[l] // 2)


def shard_bytes_of(t, sizes, groups, dtype, out_dtype):
    ins, out = parse_eq(t["eq"])
    shards = []
    for (operand, dim), g in zip(t.get("gathers", []), groups):
        shards.append((prod(sizes[l] for l in ins[operand]) // g
                       * dtype_bytes(dtype), g))
    if "scatter" in t:
        g = groups[-1]
        shards.append((prod(sizes[l] for l in out) // g
                       * dtype_bytes(out_dtype), g))
    return shards


def comp_comm_ratio(hw, t, sizes, groups, dtype, out_dtype):
    comp = einsum_time(hw, sizes, t["eq"], dtype, out_dtype)
    comm = sum(collective_time(hw, s, g)
               for s, g in shard_bytes_of(t, sizes, groups, dtype, out_dtype))
    return comp / comm


def program(t, sizes, grid, axes_list, dtype, out_dtype, no_decompose=()):
    """The program text and the line of each candidate's collective, in
    candidate order (gathers first, then the scatter)."""
    ins, out = parse_eq(t["eq"])
    shapes = [[sizes[l] for l in o] for o in ins]
    out_shape = [sizes[l] for l in out]
    lines = ["// gate-sweep case: %s" % t["eq"],
             "shard.grid @grid(shape = %s)" % "x".join(map(str, grid)), ""]
    gathers = t.get("gathers", [])
    args = []
    operand_values = []
    local_shapes = []
    for i, shape in enumerate(shapes):
        local = list(shape)
        for c, (operand, dim) in enumerate(gathers):
            if operand == i:
                local[dim] //= group_size(grid, axes_list[c])
        local_shapes.append(local)
        args.append("%%in%d: %s" % (i, tensor(local, dtype)))
        operand_values.append("%%in%d" % i)
    result_shape = list(out_shape)
    scatter = t.get("scatter")
    result_dtype = out_dtype
    if scatter is not None:
        result_shape[scatter] //= group_size(grid, axes_list[-1])
    lines.append("func.func @case(%s) -> %s {" % (
        ", ".join(args), tensor(result_shape, result_dtype)))
    cand_lines = []
    for c, (operand, dim) in enumerate(gathers):
        attr = " {ovl.no_decompose}" if c in no_decompose else ""
        cand_lines.append(len(lines) + 1)
        lines.append("  %%g%d = ovl.all_gather %%in%d on @grid axes [%s] "
                     "dim %d%s : %s -> %s" % (
                         c, operand, ", ".join(map(str, axes_list[c])), dim,
                         attr, tensor(local_shapes[operand], dtype),
                         tensor(shapes[operand], dtype)))
        operand_values[operand] = "%%g%d" % c
    lines.append('  %%y = ovl.einsum "%s" %s : %s -> %s' % (
        t["eq"], ", ".join(operand_values),
        ", ".join(tensor(s, dtype) for s in shapes),
        tensor(out_shape, out_dtype)))
    value = "%y"
    if scatter is not None:
        c = len(gathers)
        attr = " {ovl.no_decompose}" if c in no_decompose else ""
        cand_lines.append(len(lines) + 1)
        lines.append("  %%r = ovl.reduce_scatter %%y on @grid axes [%s] "
                     "dim %d%s : %s -> %s" % (
                         ", ".join(map(str, axes_list[-1])), scatter, attr,
                         tensor(out_shape, out_dtype),
                         tensor(result_shape, result_dtype)))
        value = "%r"
    lines.append("  return %s : %s" % (value, tensor(result_shape,
                                                      result_dtype)))
    lines.append("}")
    return "\n".join(lines) + "\n", cand_lines


def case(seed, index):
    """Case `index` of the sweep of `seed` (see the module docstring)."""
    lv = {dim: level(seed, dim, levels, index) for dim, levels in DIMENSIONS}
    rng = random.Random("%s/case/%d" % (seed, index))
    kind, hw, n = lv["kind"], lv["hardware"], lv["n"]
    tname = rng.choice(KIND_TEMPLATES[kind])
    t = TEMPLATES[tname]
    grid, axes = grid_for(rng, hw, n, lv["grid_rank"], kind, lv["mode"],
                          lv["want_wrap"])
    topology, assignment, placement = pick_machine(
        rng, hw, grid, axes[0], lv["mode"], lv["want_wrap"])
    dtype = lv["dtype"]
    if dtype == "f32":
        out_dtype = "f32"
    elif "scatter" in t:
        out_dtype = rng.choice(["f32", "bf16"])
    else:
        out_dtype = "f32"
    regime = lv["regime"]
    if regime == "latency":
        family = "tiny"
    else:
        family = rng.choice(["book", "gpt-32B", "gpt-512B", "small"]
                            if regime == "natural" else
                            ["book", "gpt-32B", "gpt-512B", "small", "book"])
    groups = [group_size(grid, a) for a in axes]
    sizes = build_sizes(rng, t, family, regime, hw, groups, dtype, out_dtype)
    text, cand_lines = program(t, sizes, grid, axes, dtype, out_dtype)
    variants = []
    if len(cand_lines) == 2:
        for keep in range(2):
            vtext, _ = program(t, sizes, grid, axes, dtype, out_dtype,
                               no_decompose=(1 - keep,))
            variants.append(vtext)
    candidates = []
    for c in range(len(cand_lines)):
        is_gather = c < len(t.get("gathers", []))
        candidates.append(dict(
            op="all_gather" if is_gather else "reduce_scatter",
            axes=axes[c], n=groups[c], line=cand_lines[c]))
    labels = dict(mapping_labels(hw, grid, axes[0], topology,
                                 assignment)) if topology else {}
    return dict(
        id=index, seed=seed, kind=kind, template=tname, eq=t["eq"],
        hardware=hw, n=n, grid=grid, grid_rank=len(grid), axes=axes,
        mode=lv["mode"], placement=placement, want_wrap=lv["want_wrap"],
        topology=topology, assignment=assignment, dtype=dtype,
        out_dtype=out_dtype, unroll=lv["unroll"],
        bidirectional=lv["bidirectional"], regime_target=regime,
        family=family, sizes=sizes, candidates=candidates, program=text,
        variants=variants, predicted_labels=labels,
        shards=[s for s, _ in shard_bytes_of(t, sizes, groups, dtype,
                                             out_dtype)])


def topology_option(c):
    return "x".join(map(str, c["topology"])) if c["topology"] else ""


def assignment_option(c):
    return ",".join(map(str, c["assignment"])) if c["assignment"] else ""


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", default="1")
    parser.add_argument("--index", type=int, required=True)
    parser.add_argument("--out")
    args = parser.parse_args(argv)
    c = case(args.seed, args.index)
    meta = {k: v for k, v in c.items() if k not in ("program", "variants")}
    sys.stderr.write(json.dumps(meta) + "\n")
    if args.out:
        with open(args.out, "w") as f:
            f.write(c["program"])
    else:
        sys.stdout.write(c["program"])


if __name__ == "__main__":
    main()
