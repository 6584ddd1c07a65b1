"""Per-call cost of a compiled model run from Python (tvmnode.runtime.Module)
beside LiteRT's Python interpreter, in one process, in the same rounds.

Two models:

- ad01_int8, the smallest bundled model (the anomaly detector): the whole
  call as an application makes it, with a new input each time and the
  output read back: ours `m.run(x)` (outputs copied out) and
  `m.run(x, copy=False)`; LiteRT's `set_tensor` + `invoke` + `get_tensor`,
  and `invoke` alone, with XNNPACK (its default) and with its reference
  kernels. Beside them, the model's run timed inside C (`m.benchmark`), so
  ours minus it is what the binding adds.
- a one-operator model (RELU on the anomaly detector's int8 input shape,
  1x640), built here as a .tflite flatbuffer and compiled by us: the
  kernels' share is a few hundred nanoseconds on both sides, so the
  per-call time is the binding's and the interpreter's own overhead.

Every figure is a median over `--rounds` interleaved rounds of batches
timed with perf_counter_ns for about `--seconds` each. Writes
bench_module.json (every sample) and bench_module.md to --out.
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Dict, List

import numpy as np

from tvmnode import codegen, frontend
from tvmnode import runtime as rt

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))  # tflite_build
from bench_models import DEFAULT_MODELS  # noqa: E402


def per_call_us(fn: Callable[[], Any], seconds: float) -> float:
    """Median µs per call of batches sized to ~seconds/5 each."""
    fn()
    n, t0 = 1, time.perf_counter_ns()
    while True:  # size a batch to about seconds / 5
        for _ in range(n):
            fn()
        dt = time.perf_counter_ns() - t0
        if dt > seconds * 2e8 or n > 1 << 22:
            break
        n *= 2
        t0 = time.perf_counter_ns()
    samples = []
    for _ in range(5):
        t0 = time.perf_counter_ns()
        for _ in range(n):
            fn()
        samples.append((time.perf_counter_ns() - t0) / n / 1e3)
    return statistics.median(samples)


def one_op_model() -> bytes:
    tb: Any = importlib.import_module("tflite_build")
    spec = dict(shape=(1, 640), dtype="int8", quant=(0.39, 89))
    return tb.single_op_model("RELU", [tb.TensorSpec(**spec)], [tb.TensorSpec(**spec)])


def ours(path: Path, name: str, work: str) -> rt.Module:
    archive = os.path.join(work, name)
    codegen.compile(frontend.from_tflite(str(path)), name).export(archive)
    return rt.load_module(codegen.build_library(archive, archive + ".so"))


def candidates(path: Path, name: str, work: str, x: np.ndarray) -> Dict[str, Callable[[], Any]]:
    from ai_edge_litert import interpreter as litert

    m = ours(path, name, work)
    assert np.array_equal(m.run(x)[0], m.run(x, copy=False)[0])
    out: Dict[str, Callable[[], Any]] = {
        "tvmnode run(x)": lambda: m.run(x),
        "tvmnode run(x, copy=False)": lambda: m.run(x, copy=False),
    }
    m.set_input(0, x)
    out["tvmnode: the model's run, timed in C"] = lambda: m.benchmark(1000, 1)["median_ms"] * 1e3
    for label, kind in (("LiteRT", None), ("LiteRT ref", "BUILTIN_REF")):
        kw: Dict[str, Any] = {"model_path": str(path), "num_threads": 1}
        if kind:
            kw["experimental_op_resolver_type"] = getattr(litert.OpResolverType, kind)
        it = litert.Interpreter(**kw)
        it.allocate_tensors()
        i, o = it.get_input_details()[0]["index"], it.get_output_details()[0]["index"]

        def call(it: Any = it, i: int = i, o: int = o) -> Any:
            it.set_tensor(i, x)
            it.invoke()
            return it.get_tensor(o)

        call()
        out[label + " set_tensor+invoke+get_tensor"] = call
        out[label + " invoke()"] = it.invoke
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--models", default=str(DEFAULT_MODELS))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=0.3)
    args = ap.parse_args()
    ad = next(Path(args.models).rglob("ad01_int8.tflite"))
    rng = np.random.default_rng(0)
    x = rng.integers(-128, 128, (1, 640)).astype(np.int8)
    samples: Dict[str, Dict[str, List[float]]] = {}
    with tempfile.TemporaryDirectory() as work:
        relu = Path(work) / "relu.tflite"
        relu.write_bytes(one_op_model())
        models = {"ad01_int8": candidates(ad, "ad", work, x),
                  "one-op RELU 1x640": candidates(relu, "relu", work, x)}
        for _ in range(args.rounds):
            for model, cands in models.items():
                for label, fn in cands.items():
                    if "timed in C" in label:
                        v = statistics.median(fn() for _ in range(5))
                    else:
                        v = per_call_us(fn, args.seconds)
                    samples.setdefault(model, {}).setdefault(label, []).append(v)
    med = {mo: {k: statistics.median(v) for k, v in c.items()} for mo, c in samples.items()}
    lines = ["| model | call | µs per call (median) |", "|---|---|---:|"]
    for mo, c in med.items():
        for k, v in c.items():
            lines.append("| %s | %s | %.2f |" % (mo, k, v))
    ratios = []
    for mo, c in med.items():
        py = c["tvmnode run(x)"]
        inside = c["tvmnode: the model's run, timed in C"]
        for peer in ("LiteRT", "LiteRT ref"):
            ratios.append("| %s | %s | %.2f | %.2f | %.2f |" % (
                mo, peer, py, c[peer + " set_tensor+invoke+get_tensor"],
                py / c[peer + " set_tensor+invoke+get_tensor"]))
        ratios.append("| %s | binding overhead: run(x) − the run in C | %.2f | | |"
                      % (mo, py - inside))
    md = "\n".join(lines + ["", "| model | peer | ours run(x) µs | peer's call µs | ÷ peer |",
                            "|---|---|---:|---:|---:|"] + ratios) + "\n"
    print(md)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "bench_module.json"), "w") as f:
        json.dump({"samples_us": samples, "median_us": med}, f, indent=1)
    with open(os.path.join(args.out, "bench_module.md"), "w") as f:
        f.write(md)


if __name__ == "__main__":
    main()
