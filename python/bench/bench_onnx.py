"""ONNX models compiled by tvmnode beside onnxruntime on the CPU: latency,
RAM and agreement, in one process, in the same interleaved rounds.

Models are taken by name from a folder (--models, default
/work/conformance-onnx; /work/conformance-onnx-rr holds the reduce-range
versions, NAME_rr.onnx, which are found too): each float model of BASES and
its four quantized versions (QDQ and QOperator, u8 activations with s8
weights and s8 with per-channel s8 weights). A file that is absent, or that
the importer or the compiler refuses, is skipped with the reason printed.
Inputs are fixed as tools/survey_onnx_models.py fixes them (batch 1, seeded
uniform random data).

Per model:

- ours: the model compiled to C (codegen.compile), built into a shared
  library (codegen.build_library, -O2) and loaded as a runtime Module;
  `m.run(x)` (outputs copied out, as onnxruntime returns them) and the
  model's run alone, looped inside C (`m.benchmark`);
- onnxruntime: an InferenceSession on the CPU execution provider with one
  thread (intra_op_num_threads = inter_op_num_threads = 1) and its default
  graph optimizations; `sess.run(None, {name: x})`;
- the ratio ours ÷ onnxruntime (run(x) against sess.run);
- RAM: our planned workspace pool (the plan's bytes, inputs and outputs
  outside it) and the bytes of the inputs and outputs. onnxruntime's arena
  is not measured (it has no honest per-session figure from Python), so
  there is no column for it;
- agreement: our outputs against onnxruntime's, "exact" when equal, else
  the largest absolute difference and that over the reference output's
  range: against the session timed, and against a session with the graph
  optimizations off (ORT_DISABLE_ALL), which runs a QDQ model's float
  operators between its Quantize/DequantizeLinear pairs, the ONNX
  definition, where the optimized session runs fused integer kernels
  (MLAS) whose arithmetic can differ from it.

The machine these run on is shared, so the figures are process CPU time
(time.process_time_ns), which another process's load does not inflate the
way it inflates wall time; wall time (perf_counter_ns) is kept beside it in
the JSON. Both sides run on this one thread, so CPU time is their cost.
Each callable gets a batch size sized at the start to about --seconds / 5
of CPU time; a round times 5 batches of each model's each candidate and
keeps their median; the figures are medians over --rounds rounds.

Writes bench_onnx.json (every sample) and bench_onnx.md (the table) to --out.
Run with the binding of a build tree and the repository's crt, e.g.

    TVMNODE_SOURCE_DIR=$REPO PYTHONPATH=$BUILD/python/lib \
        $BUILD/python/venv/bin/python python/bench/bench_onnx.py --out DIR

(onnx and onnxruntime installed in that environment).
"""
from __future__ import annotations

import argparse
import datetime
import importlib
import json
import os
import platform
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

import numpy as np

from tvmnode import codegen, frontend
from tvmnode import runtime as rt

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent / "tools"))
survey: Any = importlib.import_module("survey_onnx_models")  # inputs as the survey makes them

DEFAULT_DIR = "/work/conformance-onnx"
BASES = ("st_yamnet_256_64x96_tl", "st_mobilenet_v2_128_0.5",
         "st_mobilenet_v2_0.35_128_tfs_chfirst", "pypi_oww_embedding_model",
         "pypi_oww_alexa_v0.1")
VARIANTS = ("", "_qdq_u8s8", "_qdq_s8s8pc", "_qop_u8s8", "_qop_s8s8pc")

# a batch: n inferences; returns nothing of interest
Batch = Callable[[int], Any]


def cpu_name() -> Dict[str, Any]:
    """The CPU's model name and the SIMD flags that matter to both sides'
    integer and float kernels, from /proc/cpuinfo."""
    name, flags = "", set()  # type: Tuple[str, Set[str]]
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                key, _, val = line.partition(":")
                if key.strip() == "model name" and not name:
                    name = val.strip()
                elif key.strip() == "flags" and not flags:
                    flags = set(val.split())
    except OSError:
        pass
    name = name or platform.processor() or platform.machine()
    wanted = ("avx2", "fma", "avx512f", "avx512_vnni", "avx_vnni")
    return {"model_name": name, "flags": {f: f in flags for f in wanted},
            "cores": os.cpu_count()}


def timed(batch: Batch, n: int) -> Tuple[float, float]:
    """(CPU µs, wall µs) per inference of one batch of n."""
    c0, w0 = time.process_time_ns(), time.perf_counter_ns()
    batch(n)
    c1, w1 = time.process_time_ns(), time.perf_counter_ns()
    return (c1 - c0) / n / 1e3, (w1 - w0) / n / 1e3


def batch_size(batch: Batch, seconds: float) -> int:
    """Inferences per batch for about seconds / 5 of CPU time."""
    batch(1)
    n = 1
    while True:
        cpu_us, _ = timed(batch, n)
        if cpu_us * n > seconds * 2e5 or n > 1 << 20:
            return max(1, int(n * seconds * 2e5 / max(cpu_us * n, 1.0)))
        n *= 2


def loop(fn: Callable[[], Any]) -> Batch:
    def batch(n: int) -> None:
        for _ in range(n):
            fn()
    return batch


def find(folder: Path, name: str) -> Optional[Path]:
    for cand in (name + ".onnx", name + "_rr.onnx"):
        if (folder / cand).is_file():
            return folder / cand
    return None


def compare(ref: List[np.ndarray], got: List[np.ndarray]) -> Dict[str, Any]:
    """Every output of ours against onnxruntime's: exact, or the largest
    absolute difference and that over the reference's range."""
    if len(ref) != len(got):
        return {"exact": False, "error": "%d outputs, onnxruntime %d" % (len(got), len(ref))}
    worst, rel, exact = 0.0, 0.0, True
    for r, g in zip(ref, got):
        r, g = np.asarray(r), np.asarray(g)
        if r.shape != g.shape:
            return {"exact": False, "error": "shape %s, onnxruntime %s"
                    % (list(g.shape), list(r.shape))}
        if np.array_equal(r, g):
            continue
        exact = False
        d = float(np.max(np.abs(g.astype(np.float64) - r.astype(np.float64))))
        span = float(r.max() - r.min()) if r.size else 0.0
        worst = max(worst, d)
        rel = max(rel, d / span if span > 0 else d)
    return {"exact": exact, "max_abs": worst, "rel": rel}


def agreement(c: Dict[str, Any]) -> str:
    if "error" in c:
        return c["error"]
    if c["exact"]:
        return "exact"
    return "max \\|Δ\\| %.3g (%.2g of range)" % (c["max_abs"], c["rel"])


def setup(path: Path, work: str) -> Dict[str, Any]:
    """Import, compile, build and load one model, open its onnxruntime
    session, run both once on the same input; the candidates to time."""
    import onnx
    import onnxruntime as ort

    name = path.stem
    proto = onnx.load(str(path))
    ins = survey.model_inputs(proto, name)
    arrays = survey.make_inputs(proto, name)
    xs = [arrays[n] for n, _, _ in ins]
    t0 = time.perf_counter()
    mod = frontend.from_onnx(str(path), shape={n: shp for n, _, shp in ins})
    cname = re.sub(r"\W", "_", name).lower()
    arch = codegen.compile(mod, cname)
    archive = os.path.join(work, cname)
    arch.export(archive)
    m = rt.load_module(codegen.build_library(archive, archive + ".so"))
    compile_s = time.perf_counter() - t0
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
    feeds = {n: arrays[n] for n, _, _ in ins}
    ref = sess.run(None, feeds)
    # the ONNX definition: onnxruntime with its graph optimizations off
    # runs the float operators between the QDQ pairs, not fused kernels
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    plain = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
    ref_plain = plain.run(None, feeds)
    del plain
    got = m.run(*xs)
    info = arch.info
    io_bytes = sum(t["size_bytes"] for t in info["inputs"] + info["outputs"])
    # run() above set the inputs; benchmark() reruns the model on them
    cands: Dict[str, Batch] = {
        "ours run(x)": loop(lambda: m.run(*xs)),
        "ours in C": lambda n: m.benchmark(n, 1),
        "onnxruntime": loop(lambda: sess.run(None, feeds)),
    }
    return {"module": m, "session": sess, "candidates": cands,
            "inputs": [[n, dt, shp] for n, dt, shp in ins],
            "workspace_bytes": int(m.workspace_bytes),
            "workspace_lower_bound": int(info["memory"]["workspace_lower_bound_bytes"]),
            "io_bytes": int(io_bytes), "compile_s": round(compile_s, 2),
            "quantized": any(n.op_type in ("QuantizeLinear", "QLinearConv", "QLinearMatMul")
                             for n in proto.graph.node),
            "agreement": compare(ref, got), "agreement_unoptimized": compare(ref_plain, got)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--models", default=DEFAULT_DIR, help="folder of .onnx files")
    ap.add_argument("--only", nargs="*", help="model names (without .onnx) to keep")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=0.5,
                    help="CPU seconds per candidate per round (5 batches)")
    args = ap.parse_args()
    import onnxruntime as ort

    folder = Path(args.models)
    cpu = cpu_name()
    print("CPU: %s; %s" % (cpu["model_name"], ", ".join(
        "%s %s" % (k, "yes" if v else "no") for k, v in cpu["flags"].items())), flush=True)
    models: Dict[str, Dict[str, Any]] = {}
    skipped: Dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="bench-onnx-") as work:
        for base in BASES:
            for var in VARIANTS:
                name = base + var
                if args.only and name not in args.only:
                    continue
                path = find(folder, name)
                if path is None:
                    skipped[name] = "no %s.onnx in %s" % (name, folder)
                    print("skip %s: %s" % (name, skipped[name]), flush=True)
                    continue
                try:
                    models[name] = setup(path, work)
                except Exception as e:  # import, compile or session failure
                    msg = "%s: %s" % (type(e).__name__, str(e).splitlines()[0][:200])
                    skipped[name] = msg
                    print("skip %s: %s" % (name, msg), flush=True)
                    continue
                d = models[name]
                d["file"] = path.name
                d["batch"] = {k: batch_size(b, args.seconds)
                              for k, b in d["candidates"].items()}
                print("%s: compiled in %.1f s, %s (unoptimized: %s), batches %s" % (
                    name, d["compile_s"], agreement(d["agreement"]),
                    agreement(d["agreement_unoptimized"]), d["batch"]), flush=True)
        samples: Dict[str, Dict[str, Dict[str, List[float]]]] = {}
        for r in range(args.rounds):
            t0 = time.perf_counter()
            for name, d in models.items():
                for label, batch in d["candidates"].items():
                    runs = [timed(batch, d["batch"][label]) for _ in range(5)]
                    s = samples.setdefault(name, {}).setdefault(label, {"cpu_us": [],
                                                                         "wall_us": []})
                    s["cpu_us"].append(statistics.median(c for c, _ in runs))
                    s["wall_us"].append(statistics.median(w for _, w in runs))
            print("round %d: %.1f s" % (r + 1, time.perf_counter() - t0), flush=True)
    med = {name: {label: {k: statistics.median(v) for k, v in s.items()}
                  for label, s in c.items()} for name, c in samples.items()}
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    flags = ", ".join(k for k, v in cpu["flags"].items() if v) or "none of them"
    head = [
        "ONNX models: tvmnode (compiled to C, -O2, host Module) beside onnxruntime %s "
        "(CPU provider, 1 thread, default graph optimizations); models from %s."
        % (ort.__version__, folder),
        "",
        "CPU: %s (%d logical cores, shared); of avx2, fma, avx512f, avx512_vnni, "
        "avx_vnni it has: %s. %s." % (cpu["model_name"], cpu["cores"] or 0, flags, date),
        "",
        "µs per inference, process CPU time, median over %d rounds of the median of 5 "
        "batches (about %.2g CPU s per candidate per round). \"in C\" is the model's run "
        "looped inside C (m.benchmark); ÷ ORT is run(x) over sess.run. Workspace: our "
        "planned pool (inputs and outputs outside it, their bytes beside it). Agreement: "
        "our outputs against the timed onnxruntime session's on the same input, and "
        "against onnxruntime with its graph optimizations off (the QDQ models' ONNX "
        "definition: float operators between Quantize/DequantizeLinear, not fused kernels)."
        % (args.rounds, args.seconds),
        "",
        "| model | ours run(x) | ours in C | onnxruntime | ÷ ORT | workspace B | I/O B "
        "| agreement | agreement, ORT unoptimized |",
        "|---|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    rows = []
    for name, d in models.items():
        c = med[name]
        ours, inside, peer = (c[k]["cpu_us"] for k in ("ours run(x)", "ours in C",
                                                       "onnxruntime"))
        rows.append("| %s | %.0f | %.0f | %.0f | %.2f | %d | %d | %s | %s |" % (
            name, ours, inside, peer, ours / peer, d["workspace_bytes"], d["io_bytes"],
            agreement(d["agreement"]), agreement(d["agreement_unoptimized"])))
    tail = [""] + ["Skipped: " + "; ".join("%s (%s)" % kv for kv in skipped.items())
                   if skipped else "Skipped: none."]
    md = "\n".join(head + rows + tail) + "\n"
    print(md)
    os.makedirs(args.out, exist_ok=True)
    keep = ("file", "inputs", "workspace_bytes", "workspace_lower_bound", "io_bytes",
            "compile_s", "quantized", "agreement", "agreement_unoptimized", "batch")
    with open(os.path.join(args.out, "bench_onnx.json"), "w", encoding="utf-8") as f:
        json.dump({"cpu": cpu, "date": date, "onnxruntime": ort.__version__,
                   "python": platform.python_version(), "rounds": args.rounds,
                   "seconds": args.seconds, "folder": str(folder),
                   "models": {n: {k: d[k] for k in keep} for n, d in models.items()},
                   "skipped": skipped, "samples": samples, "median": med}, f, indent=1)
    with open(os.path.join(args.out, "bench_onnx.md"), "w", encoding="utf-8") as f:
        f.write(md)


if __name__ == "__main__":
    main()
