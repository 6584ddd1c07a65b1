"""The trained MLPerf Tiny models: import time, and the host executor's
latency per inference beside TFLite Micro and LiteRT, in one process, on the
same inputs, single-threaded.

For each model of ../shared/models (or --models DIR): the import
(frontend.from_tflite + FuseOps + the executor's lowering) timed --imports
times; then ROUNDS interleaved rounds in which each runtime runs the same
fixed-seed input repeatedly for about --seconds; the table reports each
runtime's median over rounds of its median per-inference time, and the
ratio of ours to each peer (below 1: we are faster). LiteRT runs with its
default kernels (XNNPACK) and with its reference kernels; TFLite Micro has
one set. Writes bench_models.json (every sample) and bench_models.md.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

import numpy as np

import tvmnode as tn
from tvmnode import frontend, transform

HERE = Path(__file__).resolve().parent
DEFAULT_MODELS = HERE.parents[1].parent / "shared" / "models"
MODELS = ["kws_ref_model.tflite", "kws_ref_model_float32.tflite",
          "pretrainedResnet_quant.tflite", "pretrainedResnet.tflite", "ad01_int8.tflite",
          "ad01_fp32.tflite", "str_ww_ref_model.tflite"]


def per_call(fn: Callable[[], Any], seconds: float) -> float:
    """Median seconds per call over batches filling `seconds`."""
    fn()
    t0 = time.perf_counter()
    fn()
    one = max(time.perf_counter() - t0, 1e-7)
    batch = max(1, int(0.02 / one))
    samples: List[float] = []
    end = time.perf_counter() + seconds
    while time.perf_counter() < end or len(samples) < 5:
        t0 = time.perf_counter()
        for _ in range(batch):
            fn()
        samples.append((time.perf_counter() - t0) / batch)
    return statistics.median(samples)


def runners(path: Path, x: np.ndarray) -> Dict[str, Callable[[], Any]]:
    mod = frontend.from_tflite(path)
    ex = tn.runtime.Executor(transform.FuseOps()(mod))
    out: Dict[str, Callable[[], Any]] = {"tvmnode": lambda: ex(x)}
    out.update(peer_runners(path, x))
    return out


def peer_runners(path: Path, x: np.ndarray,
                 skipped: Optional[Dict[str, str]] = None) -> Dict[str, Callable[[], Any]]:
    """The peers' calls on input x, one thread each: TFLite Micro when it
    runs the model (why not, in skipped), LiteRT with its default kernels
    (XNNPACK) and with its reference kernels."""
    from ai_edge_litert import interpreter as litert
    from tflite_micro.python.tflite_micro import runtime as tflm

    out: Dict[str, Callable[[], Any]] = {}
    try:
        micro = tflm.Interpreter.from_bytes(path.read_bytes())
        micro.set_input(x, 0)
        micro.invoke()
        out["tflite-micro"] = micro.invoke
    except RuntimeError as e:  # hybrid layers: TFLite Micro cannot run them
        if skipped is not None:
            skipped["tflite-micro"] = "TFLite Micro: %s" % (str(e).splitlines() or [""])[0][:160]
    for name, kind in (("litert", None), ("litert-ref", "BUILTIN_REF")):
        kw: Dict[str, Any] = {"model_path": str(path), "num_threads": 1}
        if kind:
            kw["experimental_op_resolver_type"] = getattr(litert.OpResolverType, kind)
        it = litert.Interpreter(**kw)
        it.allocate_tensors()
        it.set_tensor(it.get_input_details()[0]["index"], x)
        out[name] = it.invoke
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default=os.environ.get("TVMNODE_MODELS", str(DEFAULT_MODELS)))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=0.3)
    ap.add_argument("--imports", type=int, default=5)
    ap.add_argument("--out", default=".")
    args = ap.parse_args()
    mdir = Path(args.models)
    results: Dict[str, Any] = {"machine": platform.processor() or platform.machine(),
                               "python": platform.python_version(), "models": {}}
    for name in MODELS:
        path = mdir / name
        if not path.exists():
            continue
        imports = []
        for _ in range(args.imports):
            t0 = time.perf_counter()
            mod = frontend.from_tflite(path)
            tn.runtime.Executor(transform.FuseOps()(mod))
            imports.append(time.perf_counter() - t0)
        info = frontend.model_io(mod)["inputs"][0]
        rng = np.random.default_rng(0)
        x = (rng.integers(-128, 128, info["shape"], dtype=np.int8) if info["dtype"] == "int8"
             else rng.standard_normal(info["shape"]).astype(np.float32))
        rs = runners(path, x)
        samples: Dict[str, List[float]] = {k: [] for k in rs}
        for _ in range(args.rounds):
            for k, fn in rs.items():
                samples[k].append(per_call(fn, args.seconds))
        med = {k: statistics.median(v) for k, v in samples.items()}
        results["models"][name] = {"import_s": imports, "latency_s": samples, "median_s": med}
        del mod, rs
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "bench_models.json").write_text(json.dumps(results, indent=1))
    peers = ["tflite-micro", "litert", "litert-ref"]
    lines = ["| model | import ms | tvmnode µs | tflite-micro µs | LiteRT µs | LiteRT ref µs "
             "| ÷ tflite-micro | ÷ LiteRT | ÷ LiteRT ref |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, r in results["models"].items():
        m = r["median_s"]
        cells = ["%.1f" % (1e3 * statistics.median(r["import_s"])), "%.1f" % (1e6 * m["tvmnode"])]
        cells += ["%.1f" % (1e6 * m[p]) if p in m else "—" for p in peers]
        cells += ["%.3f" % (m["tvmnode"] / m[p]) if p in m else "—" for p in peers]
        lines.append("| %s | %s |" % (name, " | ".join(cells)))
    table = "\n".join(lines)
    (out / "bench_models.md").write_text(table + "\n")
    print(table)


if __name__ == "__main__":
    main()
