#!/usr/bin/env python3
"""Execution-equivalence matrix of ovl-decompose-collective-einsum.

Generates small SPMD programs for every combination of
  {AllGather case 1 (also beside a free letter), 2, 3,
  Einsum-ReduceScatter} x {the operand holding the
  gathered/scattered dim: lhs, rhs} x {group size 2, 3, 4, 8} x {1-D grid,
  2-D grid decomposed along axis 0, along axis 1},
decomposes each with every option set {unroll 1, 2} x {uni-, bidirectional,
split} (split at group sizes 3 and 4, see split_tested; with gate=always: the cost model would keep such tiny pairs blocking;
split must be built where the pair has a free dim to halve: AllGather cases
1 beside a free letter, 2 and 3, ReduceScatter)
and makes the permutes and every collective left asynchronous
(ovl-async-collectives), checks that the collective was rewritten and that
nothing blocking is left, and runs the result against the
original program with `overlap-run --reference` (same random inputs, every
output of every device compared). Then it schedules the asynchronous
program (ovl-schedule, bottom-up and top-down in turn from one combination
to the next) and runs the scheduled program against the original too,
unless the schedule left the program as it was. A few bf16 programs and the
paper's MLPs (examples/) run too, gathers whose tensor has users after
its einsum (the loop assembles it for them) and reduce-scatters of a sum of
einsums. Exits non-zero listing every failing
combination.

Usage: matrix.py --overlap-opt BIN --overlap-run BIN --examples DIR --work DIR
       [--jobs N] [--quick]
  --quick   group sizes 2 and 4 only, one option set per program (each
            set in turn), every other scheduled program run (what the
            sanitizers' run of the suite takes: ASan makes each run slower)
"""

import argparse
import bisect
import concurrent.futures
import itertools
import os
import subprocess
import sys

# Sizes: the decomposed (sharded) dim has 2 rows per device; the others are
# small primes, or twice one where a split loop halves them, so that a
# misplaced slice shows.
SHARD = 2
B, F, H = 6, 5, 14

VARIANTS = [
    {"unroll": 1, "bidirectional": "false"},
    {"unroll": 2, "bidirectional": "false"},
    {"unroll": 1, "bidirectional": "true"},
    {"unroll": 2, "bidirectional": "true"},
    {"unroll": 1, "bidirectional": "split"},
    {"unroll": 2, "bidirectional": "split"},
]
# The programs whose pair has a free dim a split loop halves.
SPLITTABLE = ("case1s", "case2", "case3", "rs", "mlp_1d", "mlp_2d")
SUFFIX = {"false": "uni", "true": "bidi", "split": "split"}


def tensor(shape, dtype):
    return "tensor<" + "x".join(str(s) for s in shape) + "x" + dtype + ">"


def grid_decl(n, layout):
    """The grid, the decomposed axis and the total device count."""
    if layout == "1d":
        return "shard.grid @g(shape = %d)" % n, 0
    if layout == "2d-axis0":
        return "shard.grid @g(shape = %dx2)" % n, 0
    return "shard.grid @g(shape = 2x%d)" % n, 1


def gather_program(case, operand, n, layout, dtype, acc_type):
    """An all_gather feeding an einsum, with the gathered letter of `case`
    in operand `operand`."""
    grid, axis = grid_decl(n, layout)
    full = SHARD * n
    # Equations and which dim of which operand is gathered.
    if case == "case1":  # free in the gathered operand
        eq = "bf,fh->bh"
        shapes = [[full, F], [F, H]] if operand == "lhs" else [[B, F], [F, full]]
        dim = 0 if operand == "lhs" else 1
    elif case == "case2":  # contracting
        eq = "bf,fh->bh"
        shapes = [[B, full], [full, H]]
        dim = 1 if operand == "lhs" else 0
    elif case == "case1s":  # free, beside a free letter a split loop halves
        if operand == "lhs":
            eq, shapes = "sbf,fh->sbh", [[B, full, F], [F, H]]
        else:
            eq, shapes = "fh,sbf->sbh", [[F, H], [B, full, F]]
        dim = 1
    else:  # case3: batch
        eq = "bsf,bfh->bsh"
        shapes = [[full, B, F], [full, F, H]]
        dim = 0
    gathered = 0 if operand == "lhs" else 1
    shard_shape = list(shapes[gathered])
    shard_shape[dim] = SHARD
    if eq == "bf,fh->bh":
        out_shape = [shapes[0][0], shapes[1][1]]
    elif case == "case1s":
        out_shape = [B, full, H]
    else:
        out_shape = [shapes[0][0], shapes[0][1], shapes[1][2]]
    args = []
    for i, shape in enumerate(shapes):
        args.append(tensor(shard_shape if i == gathered else shape, dtype))
    full_t = tensor(shapes[gathered], dtype)
    ins = ["%%a%d" % i for i in range(2)]
    ins[gathered] = "%full"
    lines = [
        grid,
        "func.func @main(%%a0: %s, %%a1: %s) -> %s {" % (args[0], args[1],
                                                        tensor(out_shape, acc_type)),
        "  %%full = ovl.all_gather %%a%d on @g axes [%d] dim %d : %s -> %s"
        % (gathered, axis, dim, args[gathered], full_t),
        "  %%y = ovl.einsum \"%s\" %s, %s : %s, %s -> %s"
        % (eq, ins[0], ins[1],
           full_t if gathered == 0 else args[0],
           full_t if gathered == 1 else args[1], tensor(out_shape, acc_type)),
        "  return %%y : %s" % tensor(out_shape, acc_type),
        "}",
    ]
    return "\n".join(lines) + "\n", "ovl.all_gather"


def later_program(case, n, layout):
    """An all_gather whose tensor also has users after its einsum (a later
    einsum reading the first one's result, as a backward pass does, and the
    return): the loop computes the first einsum and assembles the gathered
    tensor for the others. f32."""
    grid, axis = grid_decl(n, layout)
    full = SHARD * n
    if case == "case1":  # the gathered w's h is free
        shard, gdim, other = [F, SHARD], 1, [B, F]
        first = ("bf,fh->bh", "%a0", "%full", [B, full])
        later = ("bh,fh->bf", [B, F])
    elif case == "case1s":  # b free beside s, which a split loop halves
        shard, gdim, other = [B, SHARD, F], 1, [F, H]
        first = ("sbf,fh->sbh", "%full", "%a0", [B, full, H])
        later = ("sbh,sbf->fh", [F, H])
    else:  # case2: the gathered x's f is contracted; b is halved
        shard, gdim, other = [B, SHARD], 1, [full, H]
        first = ("bf,fh->bh", "%full", "%a0", [B, H])
        later = ("bh,bf->fh", [full, H])
    gathered = list(shard)
    gathered[gdim] = full
    eq, lhs, rhs, out = first
    types = {"%full": tensor(gathered, "f32"), "%a0": tensor(other, "f32")}
    later_eq, later_out = later
    results = [tensor(out, "f32"), tensor(later_out, "f32"),
               tensor(gathered, "f32")]
    lines = [
        grid,
        "func.func @main(%%a0: %s, %%a1: %s) -> (%s) {"
        % (tensor(other, "f32"), tensor(shard, "f32"), ", ".join(results)),
        "  %%full = ovl.all_gather %%a1 on @g axes [%d] dim %d : %s -> %s"
        % (axis, gdim, tensor(shard, "f32"), types["%full"]),
        "  %%y = ovl.einsum \"%s\" %s, %s : %s, %s -> %s"
        % (eq, lhs, rhs, types[lhs], types[rhs], results[0]),
        "  %%z = ovl.einsum \"%s\" %%y, %%full : %s, %s -> %s"
        % (later_eq, results[0], types["%full"], results[1]),
        "  return %%y, %%z, %%full : %s" % ", ".join(results),
        "}",
    ]
    return "\n".join(lines) + "\n", "ovl.all_gather"


def scatter_program(operand, n, layout, dtype):
    """An einsum whose result is reduce-scattered along a dim whose letter
    is free in operand `operand`."""
    grid, axis = grid_decl(n, layout)
    full = SHARD * n
    if operand == "lhs":
        x, w, out, dim = [full, F], [F, H], [full, H], 0
    else:
        x, w, out, dim = [B, F], [F, full], [B, full], 1
    part = list(out)
    part[dim] = SHARD
    lines = [
        grid,
        "func.func @main(%%x: %s, %%w: %s) -> %s {" % (tensor(x, dtype),
                                                    tensor(w, dtype),
                                                    tensor(part, dtype)),
        "  %%y = ovl.einsum \"bf,fh->bh\" %%x, %%w : %s, %s -> %s"
        % (tensor(x, dtype), tensor(w, dtype), tensor(out, dtype)),
        "  %%r = ovl.reduce_scatter %%y on @g axes [%d] dim %d : %s -> %s"
        % (axis, dim, tensor(out, dtype), tensor(part, dtype)),
        "  return %%r : %s" % tensor(part, dtype),
        "}",
    ]
    return "\n".join(lines) + "\n", "ovl.reduce_scatter"


def scatter_sum_program(operand, n, layout):
    """A reduce_scatter of a sum of three einsums of different equations
    (the gradient of an input several einsums read), scattered along a
    letter free in operand `operand` of each. f32."""
    grid, axis = grid_decl(n, layout)
    full = SHARD * n
    if operand == "lhs":  # the scattered b comes from each einsum's lhs
        terms = [("bf,fh->bh", [full, F], [F, H]),
                 ("bg,hg->bh", [full, 3], [H, 3]),
                 ("fb,fh->bh", [F, full], [F, H])]
        out, dim = [full, H], 0
    else:  # h from each rhs; b stays whole (B is even: split halves it)
        terms = [("bf,fh->bh", [B, F], [F, full]),
                 ("bg,hg->bh", [B, 3], [full, 3]),
                 ("fb,fh->bh", [F, B], [F, full])]
        out, dim = [B, full], 1
    part = list(out)
    part[dim] = SHARD
    args, lines = [], [grid]
    for i, (_, x, w) in enumerate(terms):
        args += ["%%x%d: %s" % (i, tensor(x, "f32")),
                 "%%w%d: %s" % (i, tensor(w, "f32"))]
    lines.append("func.func @main(%s) -> %s {"
                 % (", ".join(args), tensor(part, "f32")))
    for i, (eq, x, w) in enumerate(terms):
        lines.append("  %%e%d = ovl.einsum \"%s\" %%x%d, %%w%d : %s, %s -> %s"
                     % (i, eq, i, i, tensor(x, "f32"), tensor(w, "f32"),
                        tensor(out, "f32")))
    lines += [
        "  %%s0 = arith.addf %%e0, %%e1 : %s" % tensor(out, "f32"),
        "  %%s1 = arith.addf %%s0, %%e2 : %s" % tensor(out, "f32"),
        "  %%r = ovl.reduce_scatter %%s1 on @g axes [%d] dim %d : %s -> %s"
        % (axis, dim, tensor(out, "f32"), tensor(part, "f32")),
        "  return %%r : %s" % tensor(part, "f32"),
        "}",
    ]
    return "\n".join(lines) + "\n", "ovl.reduce_scatter"


def run_program(args, program, outputs, reference=None):
    """Runs `program` on the seeded inputs and saves every output of every
    device under `outputs`; with `reference`, also runs that program on the
    same inputs and compares. The error text, or None."""
    os.makedirs(outputs, exist_ok=True)
    # -O 0: the decomposition is what is checked, and LLVM's optimization
    # level does not change what it computes; -O 0 compiles in about half
    # the time of the default -O 3 (the runtime's own tests run -O 3 code).
    command = [args.overlap_run, program, "-O", "0", "--seed", "5",
               "--timeout", "60", "--save-outputs", outputs]
    if reference:
        command += ["--reference", reference]
    run = subprocess.run(command, capture_output=True, text=True)
    if run.returncode != 0 or (reference and ": equal" not in run.stdout):
        return run.stdout + run.stderr
    return None


def same_files(dir_a, dir_b):
    """Whether two output directories hold the same files, byte for byte."""
    names = sorted(os.listdir(dir_a))
    if not names or names != sorted(os.listdir(dir_b)):
        return False
    for name in names:
        with open(os.path.join(dir_a, name), "rb") as a, \
                open(os.path.join(dir_b, name), "rb") as b:
            if a.read() != b.read():
                return False
    return True


def decompose_pipeline(variant):
    """The pass pipeline that decomposes with `variant`'s options."""
    # gate=always: the programs are tiny, the cost model would keep them.
    options = "gate=always unroll=%d bidirectional=%s remarks=true" % (
        variant["unroll"], variant["bidirectional"])
    # Every collective the decomposition leaves becomes asynchronous too.
    return ("builtin.module(func.func(ovl-decompose-collective-einsum{%s},"
            "ovl-async-collectives{kinds=permute,all_gather,"
            "reduce_scatter,all_reduce}))" % options)


def opt_all(args, paths, pipeline, batch):
    """Runs `pipeline` on each file of `paths`, all in one overlap-opt
    (--split-input-file through `batch`: one process start instead of one
    per file). [(returncode, output, stderr lines of that file)]; when the
    batch fails, each file again alone, to name the one that fails."""
    chunks, first_lines = [], []
    line = 1
    for path in paths:
        with open(path) as f:
            chunk = f.read()
        first_lines.append(line)
        chunks.append(chunk)
        # The separator adds a line break and a line.
        line += chunk.count("\n") + 2
    with open(batch, "w") as f:
        f.write("\n// -----\n".join(chunks))
    flag = "--pass-pipeline=" + pipeline
    opt = subprocess.run([args.overlap_opt, batch, "--split-input-file", flag],
                         capture_output=True, text=True)
    outputs = opt.stdout.split("// -----\n")
    if opt.returncode == 0 and len(outputs) == len(paths):
        # Each diagnostic to the file whose lines it names.
        notes = [[] for _ in paths]
        for text in opt.stderr.splitlines():
            if text.startswith(batch + ":"):
                at = int(text[len(batch) + 1:].split(":")[0])
                notes[bisect.bisect_right(first_lines, at) - 1].append(text)
        return [(0, output, "\n".join(lines))
                for output, lines in zip(outputs, notes)]
    results = []
    for path in paths:
        opt = subprocess.run([args.overlap_opt, path, flag],
                             capture_output=True, text=True)
        results.append((opt.returncode, opt.stdout, opt.stderr))
    return results


def decompose_all(jobs, args, variant):
    """Phase 1: decomposes the programs of `jobs` (all with `variant`) in
    one overlap-opt. {decomposed path: (returncode, text, remarks)}."""
    batch = os.path.join(args.work, "decompose-u%d-%s.mlir" % (
        variant["unroll"], SUFFIX[variant["bidirectional"]]))
    results = opt_all(args, [job_files(job, args)[0] for job in jobs],
                      decompose_pipeline(variant), batch)
    return {job_files(job, args)[1]: result
            for job, result in zip(jobs, results)}


def check_and_run(job, args, decomposition):
    """Phase 2: checks the job's decomposed program and runs it against the
    original. (label, error or None)."""
    name, _, collective, variant, _ = job
    original, decomposed, label = job_files(job, args)
    returncode, text, remarks = decomposition
    if returncode != 0:
        return label, "overlap-opt failed:\n" + remarks
    if variant["bidirectional"] == "split" and name.startswith(SPLITTABLE) \
            and ", split)" not in remarks:
        return label, "no split loop was built:\n" + remarks
    with open(decomposed, "w") as f:
        f.write(text)
    if collective and collective + " " in text:
        return label, "the collective was not decomposed"
    if "ovl.collective_permute " in text:
        return label, "a blocking permute was left"
    for blocking in ("ovl.all_gather ", "ovl.reduce_scatter ", "ovl.all_reduce "):
        if blocking in text:
            return label, "a blocking %s was left" % blocking.strip()
    error = run_program(args, decomposed, decomposed + ".out", original)
    if error:
        return label, "not equal to the original:\n" + error
    return label, None


def schedule_all(jobs, args, algorithm):
    """Phase 3: schedules the decomposed programs of `jobs` with
    `algorithm`, in one overlap-opt. {decomposed path: ("ok", scheduled
    text) or ("error", stderr)}."""
    decomposed = [job_files(job, args)[1] for job in jobs]
    results = opt_all(args, decomposed,
                      "builtin.module(func.func(ovl-schedule{algorithm=%s}))"
                      % algorithm,
                      os.path.join(args.work, "schedule-%s.mlir" % algorithm))
    return {path: ("ok", output) if returncode == 0 else ("error", stderr)
            for path, (returncode, output, stderr) in zip(decomposed, results)}


def run_scheduled(job, args, scheduled_text):
    """Phase 4: runs the scheduled program, unless the schedule left the
    program as it was. Its outputs must be those of the unscheduled
    program, bit for bit (same ops on the same data in another order);
    if they are not, it is run against the original for the verdict.
    (label, error or None, whether it ran)."""
    original, decomposed, label = job_files(job, args)
    with open(decomposed) as f:
        if f.read().strip() == scheduled_text.strip():
            return label, None, False
    scheduled = decomposed[:-len(".mlir")] + "." + job[4] + ".mlir"
    with open(scheduled, "w") as f:
        f.write(scheduled_text)
    error = run_program(args, scheduled, scheduled + ".out")
    if error is None and not same_files(decomposed + ".out", scheduled + ".out"):
        error = run_program(args, scheduled, scheduled + ".ref.out", original)
    if error:
        return label, "scheduled, not equal to the original:\n" + error, True
    return label, None, True


def job_files(job, args):
    """The original and decomposed programs of a job, and its label."""
    name, _, _, variant, algorithm = job
    base = os.path.join(args.work, name)
    decomposed = base + ".u%d.%s.mlir" % (
        variant["unroll"], SUFFIX[variant["bidirectional"]])
    label = "%s [gate=always unroll=%d bidirectional=%s; ovl-schedule %s]" % (
        name, variant["unroll"], variant["bidirectional"], algorithm)
    return base + ".mlir", decomposed, label


def split_tested(variant, case, n):
    """Split loops run on the pairs with a dim to halve at an odd and an even
    group size, and once where there is none (the bidirectional loop is
    built instead): the other sizes would add minutes, not paths."""
    if variant["bidirectional"] != "split":
        return True
    return n in (3, 4) if case.startswith(SPLITTABLE) else n == 4


def build_jobs(args):
    """(name, source, collective, variant, algorithm) for every
    combination; the scheduler alternates from one to the next."""
    jobs = []
    sizes = [2, 4] if args.quick else [2, 3, 4, 8]
    for case, operand, n, layout in itertools.product(
            ["case1", "case1s", "case2", "case3", "rs"], ["lhs", "rhs"], sizes,
            ["1d", "2d-axis0", "2d-axis1"]):
        name = "%s_%s_n%d_%s" % (case, operand, n, layout)
        if case == "rs":
            source, collective = scatter_program(operand, n, layout, "f32")
        else:
            source, collective = gather_program(case, operand, n, layout, "f32", "f32")
        for variant in VARIANTS:
            if split_tested(variant, case, n):
                jobs.append((name, source, collective, variant))
    # Gathered tensors with later users, which the loop assembles for them.
    for case, n, layout in itertools.product(
            ["case1", "case1s", "case2"], [3, 4], ["1d", "2d-axis1"]):
        source, collective = later_program(case, n, layout)
        for variant in VARIANTS:
            if split_tested(variant, case, n):
                jobs.append(("%s_later_n%d_%s" % (case, n, layout), source,
                             collective, variant))
    # Reduce-scatters of a sum of einsums: one loop carries the whole sum.
    for operand, n, layout in itertools.product(
            ["lhs", "rhs"], [3, 4], ["1d", "2d-axis1"]):
        source, collective = scatter_sum_program(operand, n, layout)
        for variant in VARIANTS:
            if split_tested(variant, "rs", n):
                jobs.append(("rs_sum_%s_n%d_%s" % (operand, n, layout), source,
                             collective, variant))
    # bf16 samples: bf16 products accumulated in f32, and a bf16 scatter.
    for case, operand in [("case1", "rhs"), ("case2", "lhs"), ("case3", "rhs")]:
        source, collective = gather_program(case, operand, 4, "1d", "bf16", "f32")
        for variant in VARIANTS:
            jobs.append(("%s_%s_bf16" % (case, operand), source, collective, variant))
    source, collective = scatter_program("rhs", 3, "1d", "bf16")
    for variant in VARIANTS:
        jobs.append(("rs_rhs_bf16", source, collective, variant))
    # The paper's MLPs end to end.
    for example in ["mlp_1d", "mlp_2d"]:
        with open(os.path.join(args.examples, example + ".mlir")) as f:
            source = f.read()
        for variant in VARIANTS:
            jobs.append((example, source, None, variant))
    # Jobs come in runs of the option sets of one program: shifting by one
    # per run gives every option set both schedulers across the programs.
    algorithms = ["bottom-up", "top-down"]
    return [job + (algorithms[(i + i // len(VARIANTS)) % 2],)
            for i, job in enumerate(jobs)]


def one_option_set_each(jobs):
    """A sample of `jobs` for the sanitizers' run (lit's
    %quick_if_sanitized): each program with one option set of its run, the
    next set for the next program, so that each set still runs on programs
    of every kind."""
    runs = []
    for job in jobs:
        if not runs or (runs[-1][0][0], runs[-1][0][1]) != (job[0], job[1]):
            runs.append([])
        runs[-1].append(job)
    return [run[i % len(run)] for i, run in enumerate(runs)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--overlap-opt", required=True)
    parser.add_argument("--overlap-run", required=True)
    parser.add_argument("--examples", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--quick", action="store_true",
                        help="only group sizes 2 and 4, one option set per "
                        "program, every other scheduled program run")
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    jobs = build_jobs(args)
    if args.quick:
        jobs = one_option_set_each(jobs)
    # Each program once, before the variants of it run in parallel.
    for name, source, _, _, _ in jobs:
        with open(os.path.join(args.work, name + ".mlir"), "w") as f:
            f.write(source)
    failures = []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        decompositions = {}
        for result in pool.map(
                lambda variant: decompose_all(
                    [job for job in jobs if job[3] == variant], args, variant),
                [v for v in VARIANTS if any(job[3] == v for job in jobs)]):
            decompositions.update(result)
        results = list(pool.map(
            lambda job: check_and_run(job, args,
                                      decompositions[job_files(job, args)[1]]),
            jobs))
        passed = [job for job, (label, error) in zip(jobs, results) if not error]
        failures += [(label, error) for label, error in results if error]
        texts = {}
        for algorithm in ["bottom-up", "top-down"]:
            texts.update(schedule_all([job for job in passed if job[4] == algorithm],
                                      args, algorithm))
        work = []
        for job in passed:
            status, text = texts[job_files(job, args)[1]]
            if status != "ok":
                failures.append((job_files(job, args)[2],
                                 "ovl-schedule failed:\n" + text))
            else:
                work.append((job, text))
        if args.quick:
            # Every scheduled program stays scheduled (the schedulers run
            # under the sanitizers); every other one runs: the runs of the
            # others would take the runtime through the same paths again.
            # The algorithm alternates along `work`, so both still run.
            work = work[::2]
        scheduled = 0
        for label, error, ran in pool.map(
                lambda item: run_scheduled(item[0], args, item[1]), work):
            scheduled += ran
            if error:
                failures.append((label, error))
    print("decomposition matrix: %d of %d combinations equal to the original"
          % (len(jobs) - len(failures), len(jobs)))
    print("scheduled programs run: %d (the other schedules left the program "
          "as it was)" % scheduled)
    for label, error in failures:
        print("FAIL %s: %s" % (label, error))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
