#!/usr/bin/env python3
"""bench_python.py: the Python binding's benchmarks, beside its peers, in one
process and one run.

Every row is timed with timeit in samples of about 20 ms each; the
implementations of a row are sampled in interleaved rounds (ours, tvm-ffi,
ctypes, floor, ours, ...) so that the machine's slow and fast moments fall
on all of them, and each reports the median of its samples, in ns per
operation (the timeit loop and the global-name load are included for every
implementation alike). Peers:

  tvm-ffi   apache-tvm-ffi from PyPI (version printed), its own testing.*
            functions and testing objects
  ctypes    a C function of the same arity from cnop.c through ctypes
  floor     a CPython builtin of the same arity (what any C call from
            Python costs at least)

Usage: bench_python.py --out DIR [--samples N] [--quick]
"""
from __future__ import annotations

import argparse
import ctypes
import json
import operator
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import timeit
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

import tvmnode as tn
from tvmnode import ir
from tvmnode.ir import op

HERE = os.path.dirname(os.path.abspath(__file__))

try:
    import tvm_ffi  # type: ignore[import-not-found]
    import tvm_ffi.testing  # type: ignore[import-not-found]
except ImportError as e:  # pragma: no cover
    print("tvm-ffi is not available (%s): its columns stay empty" % e, file=sys.stderr)
    tvm_ffi = None


def build_cnop(out_dir: str) -> ctypes.CDLL:
    so = os.path.join(out_dir, "libcnop.so")
    cc = os.environ.get("CC", "cc")
    subprocess.run([cc, "-O2", "-shared", "-fPIC", "-o", so, os.path.join(HERE, "cnop.c")],
                   check=True)
    lib = ctypes.CDLL(so)
    lib.nop0.argtypes, lib.nop0.restype = [], None
    lib.nop1.argtypes, lib.nop1.restype = [ctypes.c_int64], None
    lib.nop3.argtypes, lib.nop3.restype = [ctypes.c_int64] * 3, None
    lib.nop3p.argtypes, lib.nop3p.restype = [ctypes.c_void_p] * 3, None
    return lib


def synthetic(n_nodes: int) -> Tuple[ir.Expr, int]:
    """The benchmark graph of models/mlperf_tiny.c's synthetic:N, built
    until it has `n_nodes` distinct nodes: residual elementwise blocks over
    1x64 values, a dense layer every fourth block, constant products."""
    rng = np.random.default_rng(1)

    def vec(lo: float, hi: float) -> ir.Constant:
        return ir.const(rng.uniform(lo, hi, 64).astype("float32"))

    x: ir.Expr = ir.var("input", shape=(1, 64))
    k = 0
    while True:
        c = op.multiply(vec(-1, 1), vec(0.5, 1.5))
        y = op.nn.relu(op.add(x, c))
        y = op.multiply(y, vec(0.5, 1.0))
        if k % 4 == 3:
            w = ir.const(rng.uniform(-0.1, 0.1, (64, 64)).astype("float32"))
            y = op.nn.dense(y, op.transpose(w, axes=[1, 0]), units=64)
        x = op.add(y, x)
        k += 1
        if k % 8 == 0:
            v = ir.ExprVisitor()
            v.visit(x)
            if v.memo_size() >= n_nodes:
                return x, v.memo_size()


class Identity(ir.ExprMutator):
    """Overrides visit_call and changes nothing."""

    def visit_call(self, call: Any) -> Any:
        return super().visit_call(call)


class SwapMultiply(ir.ExprMutator):
    """multiply(a, const) -> multiply(const, a): every multiply changes, so
    every node downstream is rebuilt (and re-typed) by the C builders."""

    def visit_call(self, call: Any) -> Any:
        new = super().visit_call(call)
        if new.op.name == "multiply" and isinstance(new.args[1], ir.Constant) \
                and not isinstance(new.args[0], ir.Constant):
            return op.multiply(new.args[1], new.args[0])
        return new


class Row:
    def __init__(self, name: str, unit_per: int = 1) -> None:
        self.name = name
        self.impls: Dict[str, Tuple[str, Dict[str, Any]]] = {}
        self.samples: Dict[str, List[float]] = {}
        self.unit_per = unit_per  # operations per statement

    def add(self, impl: str, stmt: str, env: Dict[str, Any]) -> None:
        self.impls[impl] = (stmt, env)
        self.samples[impl] = []


def calibrate(stmt: str, env: Dict[str, Any], target: float) -> int:
    t = timeit.Timer(stmt, globals=env)
    n = 1
    while True:
        dt = t.timeit(n)
        if dt >= target / 4 or n >= 1 << 24:
            return max(1, int(n * target / max(dt, 1e-9)))
        n *= 4


def run_rows(rows: List[Row], samples: int, target: float) -> None:
    numbers = {}
    for r in rows:
        for impl, (stmt, env) in r.impls.items():
            timeit.Timer(stmt, globals=env).timeit(min(1000, calibrate(stmt, env, target)))
            numbers[(r.name, impl)] = calibrate(stmt, env, target)
    for s in range(samples):
        for r in rows:
            for impl, (stmt, env) in r.impls.items():
                n = numbers[(r.name, impl)]
                dt = timeit.Timer(stmt, globals=env).timeit(n)
                r.samples[impl].append(dt / n / r.unit_per * 1e9)
        print("  round %d/%d" % (s + 1, samples), file=sys.stderr)


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--samples", type=int, default=15)
    p.add_argument("--quick", action="store_true", help="short samples (a smoke test)")
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    target = 0.002 if args.quick else 0.02
    lib = build_cnop(args.out)

    nop = tn.get_global_func("testing.nop")
    call = tn.get_global_func("testing.call")
    a, b, c = (np.zeros(16, dtype="float32") for _ in range(3))
    x = ir.var("x", shape=(1, 8))
    relu = op.nn.relu(x)
    tgi = ir.TupleGetItem(ir.Tuple([x, x]), 1)

    class Slots:
        __slots__ = ("v",)

        def __init__(self) -> None:
            self.v = 1

    def py_cb(v: int) -> int:
        return v

    env: Dict[str, Any] = dict(nop=nop, call=call, a=a, b=b, c=c, relu=relu, x=x, tgi=tgi,
                               lib=lib, slots=Slots(), cb=py_cb, abs=abs, pow=pow,
                               clear={}.clear, operator_call=operator.call if hasattr(
                                   operator, "call") else None)
    cb_c = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64)(py_cb)
    lib.call_cb.argtypes = [ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64), ctypes.c_int64]
    lib.call_cb.restype = ctypes.c_int64
    env["cb_c"] = cb_c
    env["ap, bp, cp"] = None
    env["ap"], env["bp"], env["cp"] = a.ctypes.data, b.ctypes.data, c.ctypes.data
    if tvm_ffi is not None:
        env["tnop"] = tvm_ffi.get_global_func("testing.nop")
        env["tapply"] = tvm_ffi.get_global_func("testing.apply")
        env["tobj"] = tvm_ffi.testing.create_object(
            "testing.TestObjectBase", v_i64=1, v_f64=2.0, v_str="a string")

    rows: List[Row] = []

    def row(name: str, ours: str, tvm: Optional[str], ct: Optional[str], floor: Optional[str]) -> None:
        r = Row(name)
        r.add("tvmnode", ours, env)
        if tvm and tvm_ffi is not None:
            r.add("tvm-ffi", tvm, env)
        if ct:
            r.add("ctypes", ct, env)
        if floor:
            r.add("floor", floor, env)
        rows.append(r)

    row("nop_0_args", "nop()", "tnop()", "lib.nop0()", "clear()")
    row("nop_1_int", "nop(1)", "tnop(1)", "lib.nop1(1)", "abs(1)")
    row("nop_3_int", "nop(1, 2, 3)", "tnop(1, 2, 3)", "lib.nop3(1, 2, 3)", "pow(1, 2, 3)")
    row("nop_3_numpy_dlpack", "nop(a, b, c)", "tnop(a, b, c)", "lib.nop3p(ap, bp, cp)", None)
    row("field_read_obj", "relu.op", None, None, "slots.v")
    row("field_read_int", "tgi.index", "tobj.v_i64", None, "slots.v")
    row("field_read_str", "x.name_hint", "tobj.v_str", None, "slots.v")
    row("callback_from_c", "call(cb, 1)", "tapply(cb, 1)", "lib.call_cb(cb_c, 1)",
        "operator_call(cb, 1)" if env["operator_call"] else None)
    print("timing call rows (%d samples)..." % args.samples, file=sys.stderr)
    run_rows(rows, args.samples, target)

    # the mutator over a 10k-node graph
    graph, nodes = synthetic(10000)
    menv: Dict[str, Any] = dict(graph=graph, Identity=Identity, SwapMultiply=SwapMultiply,
                                Default=ir.ExprMutator)
    mrows = []
    for name, stmt in (("mutator_10k_identity_override", "Identity().visit(graph)"),
                       ("mutator_10k_rewrite", "SwapMultiply().visit(graph)"),
                       ("mutator_10k_no_override", "Default().visit(graph)")):
        r = Row(name, unit_per=nodes)
        r.add("tvmnode", stmt, menv)
        mrows.append(r)
    print("timing mutator rows on %d nodes..." % nodes, file=sys.stderr)
    run_rows(mrows, max(5, args.samples // 2), 0.05 if not args.quick else 0.01)
    rows += mrows

    results: Dict[str, Any] = {
        "python": sys.version.split()[0], "platform": platform.platform(),
        "machine": platform.machine(), "tvmnode_library": tn._ffi.library_version(),
        "tvm_ffi": getattr(tvm_ffi, "__version__", None), "samples": args.samples,
        "unit": "ns per operation (mutator rows: ns per node)", "graph_nodes": nodes,
        "rows": {},
    }
    lines = ["| benchmark | tvmnode | tvm-ffi | ctypes | floor | tvmnode / tvm-ffi |",
             "|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        med = {k: statistics.median(v) for k, v in r.samples.items()}
        results["rows"][r.name] = {"median": med, "samples": r.samples}
        ratio = med["tvmnode"] / med["tvm-ffi"] if "tvm-ffi" in med else None
        results["rows"][r.name]["ratio_tvm_ffi"] = ratio

        def cell(k: str) -> str:
            return "%.1f" % med[k] if k in med else "–"

        lines.append("| %s | %s | %s | %s | %s | %s |" % (
            r.name, cell("tvmnode"), cell("tvm-ffi"), cell("ctypes"), cell("floor"),
            "%.2f×" % ratio if ratio else "–"))
    mut = results["rows"]["mutator_10k_rewrite"]["median"]["tvmnode"] * nodes / 1e6
    lines.append("")
    lines.append("mutator graph: %d nodes; rewrite pass %.2f ms per run" % (nodes, mut))
    table = "\n".join(lines)
    print(table)
    with open(os.path.join(args.out, "bench_python.json"), "w") as f:
        json.dump(results, f, indent=1)
    with open(os.path.join(args.out, "bench_python.md"), "w") as f:
        f.write(table + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
