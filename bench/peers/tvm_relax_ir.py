#!/usr/bin/env python3
"""tvm_relax_ir.py: bench_ir's peer, the same graphs in Apache TVM's Relax IR.

Run by bench/run.py (suite "ir") with PYTHONPATH at the pip --target
install of apache-tvm it makes (pinned there, with the apache-tvm-ffi it
works with); by hand:

  PYTHONPATH=build-bench/bench/peers/apache-tvm-0.27.0.post1 \
      python3 bench/peers/tvm_relax_ir.py [synthetic|models]

"models" is the MLPerf Tiny "ad" autoencoder alone (rows *_ad); the other
models are not ported. It prints the JSON lines of bench_util.h, with
bench_ir's row names where the operation is comparable:

  build_<g>             the graph built with relax.BlockBuilder in a dataflow
                        block, constants made from fresh random values (Relax
                        infers each binding's type as it is emitted, as our
                        builders do)
  infer_type_typed_<g>  relax.transform.Normalize() on the built module: a
                        re-check of an already normal, typed module
  fold_constant_<g>     relax.transform.FoldConstant() on the module after an
                        untimed LegalizeOps, with its PrimFuncs marked so that
                        the pass's cache of compiled kernels works (see
                        fold_input below)
  fold_constant_stock_<g>  FoldConstant as a user calls it, on the high-level
                        module (no row of ours: see fold_input)
  fuse_ops_<g>          relax.transform.FuseOps() alone, after an untimed
                        LegalizeOps + AnnotateTIROpPattern, which it needs
  astext_<g>            mod.script(show_meta=True): TVMScript, constants
                        included, as ours prints with show_meta
  parse_<g>             tvm.script.from_source() on that text
  nodes_<g>, nodes_relax_<g>, peak_rss_mb   figures, not times

Not measured, having no counterpart: infer_type_<g> (Relax cannot hold an
untyped graph: types are inferred at construction), simplify_expr_<g> and
the *_bytes_per_node_<g> heap figures (glibc mallinfo of a C process).

Per node: every time is divided by the node count OUR side gives the same
graph (nodes_<g>: operator calls + constants + distinct operators + the
parameter + the function, which is what bench_ir's post-order visit
counts), not by Relax's own count, so a ratio of two rows is the ratio of
the times the two systems take on the same graph. Relax's own graph is
larger (a variable per binding, shape expressions in the types):
nodes_relax_<g> is its count of distinct expressions under "main", by
relax.analysis.post_order_visit, for reference.

Timing is bench_util.h's (calibrated ~20 ms samples, 9 of them, 5 when a
sample takes over a quarter second, the median), but for the slow rows: a
run of over 5 s is timed three times, and a row at a size where one run
takes over a minute is skipped with a note on stderr (see bench_graph).

The graphs follow models/mlperf_tiny.c op for op. Our nn.dense(y,
transpose(W)) becomes matmul(y, permute_dims(W)): the same two calls, a
transpose of a constant that FoldConstant can fold, then the product
(Relax's own relax.op.linear expands to exactly these). Values are
numpy's, not our xorshift's: the shapes and structure match, the numbers
do not.
"""
import argparse
import gc
import json
import math
import os
import resource
import signal
import sys
import time

import numpy as np
import tvm
from tvm import relax
from tvm.relax import op as R

SAMPLES = 9
# A row whose single run would take longer than this is skipped at that
# size: see row() in bench_graph.
LIMIT_S = 60.0
# A row whose single run takes longer than this is timed by that run and
# two more, the median of three (bench_util.h would take seven runs).
LONG_S = 5.0
SIZES = {"synth_1k": 1000, "synth_10k": 10000, "synth_100k": 100000}


def note(msg):
    print(f"tvm_relax_ir: {msg}", file=sys.stderr, flush=True)


def emit(row):
    print(json.dumps(row), flush=True)


class TooSlow(Exception):
    pass


def bench_run(name, fn, unit):
    """bench_util.h's bench_run: calibrate to ~20 ms a sample, take 9
    samples (5 when one sample takes a quarter second; see LONG_S too),
    print the median ns per node. fn(iters) runs the operation iters times.
    Returns the seconds one operation took."""
    iters = 1
    while True:
        t0 = time.perf_counter_ns()
        fn(iters)
        dt = time.perf_counter_ns() - t0
        if iters == 1 and dt > LIMIT_S * 1e9:
            raise TooSlow(f"{name}: one run took {dt / 1e9:.0f} s")
        if dt > 2e7 or iters > 1 << 40:
            break
        iters *= 10 if dt < 2e6 else 2
    if iters == 1 and dt > LONG_S * 1e9:
        samples = [dt / unit]
        nsamples = 3
    else:
        samples = []
        t0 = time.perf_counter_ns()
        fn(iters)
        nsamples = 5 if time.perf_counter_ns() - t0 > 2.5e8 else SAMPLES
    while len(samples) < nsamples:
        t0 = time.perf_counter_ns()
        fn(iters)
        samples.append((time.perf_counter_ns() - t0) / (iters * unit))
    samples.sort()
    med = samples[nsamples // 2]
    emit({"group": "ir", "name": name, "ns_per_op": round(med, 3),
          "min": round(samples[0], 3), "max": round(samples[-1], 3),
          "iters": iters})
    return med * unit / 1e9


def report(name, value, unit):
    emit({"group": "ir", "name": name, "value": round(value, 3), "unit": unit})


# ---- the graphs ------------------------------------------------------------


def const(rng, shape, lo, hi):
    return relax.const(rng.uniform(lo, hi, shape).astype("float32"))


def synthetic(n):
    """models/mlperf_tiny.c's synthetic(): residual blocks of elementwise
    calls, a dense layer every fourth block, until n operator calls."""
    rng = np.random.default_rng(0)
    bb = relax.BlockBuilder()
    x = inp = relax.Var("input", relax.TensorType((1, 64), "float32"))
    calls, k = 0, 0
    with bb.function("main", [inp]):
        with bb.dataflow():
            while calls < n:
                c = bb.emit(R.multiply(const(rng, 64, -1, 1),
                                       const(rng, 64, 0.5, 1.5)))
                y = bb.emit(R.nn.relu(bb.emit(R.add(x, c))))
                y = bb.emit(R.multiply(y, const(rng, 64, 0.5, 1.0)))
                calls += 4
                if k % 4 == 3:
                    w = bb.emit(R.permute_dims(const(rng, (64, 64), -0.1, 0.1)))
                    y = bb.emit(R.matmul(y, w))
                    calls += 2
                x = bb.emit(R.add(y, x))
                calls += 1
                k += 1
            out = bb.emit_output(x)
        bb.emit_func_output(out)
    return bb.finalize()


def ad():
    """The MLPerf Tiny anomaly-detection autoencoder, float32: dense layers
    640-128-128-128-128-8-128-128-128-128-640, bias and ReLU (none after the
    last). Weights are stored [out, in] so that permute_dims + matmul is
    our transpose + nn.dense; the bias add is our nn.bias_add."""
    dims = [640, 128, 128, 128, 128, 8, 128, 128, 128, 128, 640]
    rng = np.random.default_rng(0)
    bb = relax.BlockBuilder()
    x = inp = relax.Var("input", relax.TensorType((1, 640), "float32"))
    with bb.function("main", [inp]):
        with bb.dataflow():
            for i, (m, n) in enumerate(zip(dims, dims[1:])):
                r = 1.0 / m
                w = bb.emit(R.permute_dims(const(rng, (n, m), -r, r)))
                x = bb.emit(R.add(bb.emit(R.matmul(x, w)),
                                  const(rng, n, -0.1, 0.1)))
                if i + 2 < len(dims):
                    x = bb.emit(R.nn.relu(x))
            out = bb.emit_output(x)
        bb.emit_func_output(out)
    return bb.finalize()


def node_counts(mod):
    """(our count, Relax's count) for mod's main: see the file comment."""
    seen, calls, consts, ops = set(), 0, set(), set()

    def visit(e):
        nonlocal calls
        if e in seen:  # visited once per use; objects hash by address
            return
        seen.add(e)
        if isinstance(e, tvm.ir.Call) and isinstance(e.op, tvm.ir.Op):
            calls += 1
            ops.add(e.op.name)
            # the tensor constants (not the integers inside shapes)
            consts.update(a for a in e.args if isinstance(a, tvm.ir.Constant))

    fn = mod["main"]
    relax.analysis.post_order_visit(fn, visit)
    return calls + len(consts) + len(ops) + len(fn.params) + 1, len(seen)


# ---- preparing pass inputs (untimed) ----------------------------------------


def fold_input(mod):
    """The module FoldConstant is timed on, and what it takes to get there.

    FoldConstant evaluates a call_tir on constants by compiling its PrimFunc
    with LLVM; on high-level calls it first legalizes each one itself. Its
    cache of compiled PrimFuncs (keyed by structural equality) never hits in
    this release: it stores each function after giving it the global symbol
    "tir_function" but looks it up without, so every folded call is compiled
    anew, about 65 ms each here (1 s per 15 foldable calls): the stock pass
    on synth_1k takes some 15 s, on synth_10k minutes (the
    fold_constant_stock rows). For the main rows the input is legalized and
    its PrimFuncs carry that symbol already, untimed, so the pass compiles
    each distinct PrimFunc once (two here, one a multiply and one a
    transpose), as its cache intends; the time is its walk, the two
    compilations and the evaluations."""
    legal = relax.transform.LegalizeOps()(mod)
    funcs = {}
    for gv, f in legal.functions.items():
        if not isinstance(f, relax.Function):
            f = f.with_attr("global_symbol", "tir_function")
        funcs[gv] = f
    return tvm.IRModule(funcs, attrs=legal.attrs)


def fuse_input(mod):
    """FuseOps groups call_tir bindings by the pattern
    AnnotateTIROpPattern gives their PrimFuncs."""
    return relax.transform.AnnotateTIROpPattern()(
        relax.transform.LegalizeOps()(mod))


# ---- the benchmark ----------------------------------------------------------


def repeat(op):
    def fn(iters):
        for _ in range(iters):
            op()
    return fn


def finishes(op, limit):
    """Whether one op() finishes within limit seconds, tried in a forked
    child (killed when the time is up: a pass deep in C++ cannot be stopped
    otherwise). A child that fails counts as finishing: the caller will run
    op itself and see the error."""
    pid = os.fork()
    if pid == 0:
        try:
            op()
        finally:
            os._exit(0)
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if os.waitpid(pid, os.WNOHANG)[0]:
            return True
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return False


def predict(runs, n):
    """Seconds one run on n nodes would take, from the (nodes, seconds) of
    the smaller graphs: linear, or as steep as the last two sizes grew."""
    (n1, t1) = runs[-1]
    growth = 1.0
    if len(runs) > 1:
        (n0, t0) = runs[-2]
        growth = max(1.0, math.log(t1 / t0) / math.log(n1 / n0))
    return t1 * (n / n1) ** growth


def bench_graph(build, label, prev):
    """Every row for one graph. prev maps a row's stem to the (nodes,
    seconds per run) on the smaller graphs before, to skip rows whose run
    would exceed LIMIT_S."""
    mod = build()
    n, relax_n = node_counts(mod)

    def row(stem, setup):
        # setup() prepares the row's input, untimed, and returns the
        # operation; it is not called for a row skipped by prediction.
        # Skipped: a row predicted to take over twice the limit, and one
        # predicted over a quarter of it that does not finish within it
        # when tried (growth is often worse than the smaller sizes show).
        # A row run anyway whose first run exceeds the limit is dropped.
        name = f"{stem}_{label}"
        runs = prev.setdefault(stem, [])
        guess = predict(runs, n) if runs else 0.0
        if guess > 2 * LIMIT_S:
            note(f"{name} skipped: one run would take about {guess:.0f} s")
            runs.append((n, guess))
            return
        op = setup()
        if guess > LIMIT_S / 4 and not finishes(op, LIMIT_S):
            note(f"{name} skipped: one run takes over {LIMIT_S:.0f} s")
            runs.append((n, max(guess, 2 * LIMIT_S)))
            return
        gc.collect()
        try:
            runs.append((n, bench_run(name, repeat(op), n)))
        except TooSlow as e:
            note(f"{e}; skipped")
            runs.append((n, 2 * LIMIT_S))

    def run_on(make_pass, make_input):
        def setup():
            p, m = make_pass(), make_input(mod)
            return lambda: p(m)
        return setup

    def parse():
        text = mod.script(show_meta=True)
        return lambda: tvm.script.from_source(text)

    row("build", lambda: build)
    row("infer_type_typed", run_on(relax.transform.Normalize, lambda m: m))
    row("fold_constant", run_on(relax.transform.FoldConstant, fold_input))
    row("fold_constant_stock", run_on(relax.transform.FoldConstant, lambda m: m))
    row("fuse_ops", run_on(relax.transform.FuseOps, fuse_input))
    row("astext", lambda: lambda: mod.script(show_meta=True))
    row("parse", parse)
    report(f"nodes_{label}", n, "nodes")
    report(f"nodes_relax_{label}", relax_n, "nodes")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", nargs="?", choices=["synthetic", "models"],
                    help="only the synthetic graphs, or only the models "
                         "(of which only ad is ported); both by default")
    ap.add_argument("--sizes", default=",".join(SIZES),
                    help="synthetic graphs to run (default: %(default)s)")
    args = ap.parse_args()
    note(f"apache-tvm {tvm.__version__}")
    if args.what in (None, "synthetic"):
        prev = {}
        for label in args.sizes.split(","):
            bench_graph(lambda: synthetic(SIZES[label]), label, prev)
    if args.what in (None, "models"):
        bench_graph(ad, "ad", {})
    # ru_maxrss is in KiB on Linux; this includes the interpreter and
    # libtvm, which ours has no counterpart of.
    report("peak_rss_mb", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
           / 1024.0, "MB")


if __name__ == "__main__":
    main()
