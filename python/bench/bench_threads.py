"""The host executor's threads option: each int8 model of ../shared/models
(or --models DIR; --only NAME to pick some; --float for the float32 ones),
and VWW and the large ResNet of mlcommons/tiny where x86_peers.py finds
them (the models folder or its cache; not fetched here: --fetch does),
through the passes of a host archive (codegen's pipeline, weights packed),
run by an executor with 1 thread and with each --threads N (default 2), in
one process.

--rounds interleaved rounds (the thread counts in reversed order every
other round) of about --seconds each. Per round and count: the wall time
of each call (time.perf_counter_ns around it, the Python call included:
the same for every count), its median and its least, and the process CPU
time per call (time.process_time_ns around the round's calls: every
thread's time). Figures are medians over rounds, and the least wall time
of any call (what the threads give when no other process holds a core);
the table gives each count's figures and their ratios to one thread's
(wall < 1: faster; CPU > 1: the threads' extra work, spinning included). Outputs of every count are checked against one thread's (int8:
the same bytes). Writes bench_threads.json and bench_threads.md to --out.
The machine's CPU name, core count and load average are printed: on a
shared machine with more busy processes than cores, the second thread
often waits, and wall times say more about the machine than the code.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Dict, List

import numpy as np

import tvmnode as tn
from tvmnode import codegen, frontend

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_compile import cpu_name  # noqa: E402
import x86_peers  # noqa: E402

DEFAULT_MODELS = HERE.parents[2] / "shared" / "models"
INT8 = ["kws_ref_model.tflite", "pretrainedResnet_quant.tflite", "ad01_int8.tflite",
        "str_ww_ref_model.tflite", "vww_96_int8.tflite", "pretrainedResnet_large_int8.tflite"]
FLOAT = ["kws_ref_model_float32.tflite", "pretrainedResnet.tflite", "ad01_fp32.tflite",
         "vww_96_float.tflite"]


def one_round(ex: Any, x: np.ndarray, seconds: float) -> Dict[str, float]:
    """Calls for about `seconds`: the median and least wall ns of a call,
    and the process CPU ns per call."""
    walls: List[int] = []
    clock = time.perf_counter_ns
    c0, t_end = time.process_time_ns(), clock() + int(seconds * 1e9)
    while True:
        t0 = clock()
        ex(x)
        t1 = clock()
        walls.append(t1 - t0)
        if t1 > t_end:
            break
    cpu = (time.process_time_ns() - c0) / len(walls)
    return {"wall_ns": statistics.median(walls), "min_ns": min(walls), "cpu_ns": cpu,
            "runs": len(walls)}


class _ModuleRunner:
    """A runtime Module of a host archive's library, called like an
    executor (x -> its first output), its threads and cut calls as
    stats()."""

    def __init__(self, so: str, threads: int) -> None:
        self.m = tn.runtime.load_module(so, threads=threads)
        self.inputs = self.m.inputs

    def __call__(self, x: np.ndarray) -> Any:
        return self.m.run(x, copy=False)[0]

    def stats(self) -> Dict[str, int]:
        return {"macs": self.m.macs, "split_steps": self.m.split_calls}


def module_runners(path: Path, counts: List[int], out: Path) -> Dict[int, Any]:
    """--module: the model compiled for "host" into a library (-O2), one
    Module per count; and count 0, the same model compiled without the
    calls through the parallel hook (what the code was before threads),
    run with one thread."""
    import tempfile

    tmp = tempfile.mkdtemp(prefix="bench-threads-", dir=str(out))
    mod = frontend.from_tflite(path)
    runners: Dict[int, Any] = {}
    for whole in (False, True):
        saved = codegen.PARALLEL_TARGETS
        if whole:
            codegen.PARALLEL_TARGETS = ()
        try:
            arch = codegen.compile(mod, name="m")
        finally:
            codegen.PARALLEL_TARGETS = saved
        sub = os.path.join(tmp, "whole" if whole else "split")
        so = codegen.build_library(arch.export(sub), sub + ".so")
        for n in ([0] if whole else counts):
            runners[n] = _ModuleRunner(so, max(n, 1))
    return runners


def bench_model(path: Path, counts: List[int], args: argparse.Namespace) -> Dict[str, Any]:
    if args.module:
        exs = module_runners(path, counts, Path(args.out))
        counts = [0] + counts
    else:
        mod = codegen._pipeline(frontend.from_tflite(path), "host")
        exs = {n: tn.runtime.Executor(mod, threads=n) for n in counts}
    info = exs[1].inputs[0]
    rng = np.random.default_rng(0)
    if info["dtype"] == "int8":
        x = rng.integers(-128, 128, info["shape"], dtype=np.int8)
    else:
        x = rng.standard_normal(info["shape"]).astype(np.float32)
    want = np.array(exs[1](x), copy=True)
    same = {}
    for n, ex in exs.items():
        got = np.array(ex(x), copy=True)
        same[n] = bool(np.array_equal(got, want)) if info["dtype"] == "int8" else \
            float(np.max(np.abs(got.astype(np.float64) - want)))
    samples: Dict[int, List[Dict[str, float]]] = {n: [] for n in counts}
    for r in range(args.rounds):
        order = counts if r % 2 == 0 else counts[::-1]
        for n in order:
            samples[n].append(one_round(exs[n], x, args.seconds))
    med = {n: {k: statistics.median(s[k] for s in samples[n]) for k in ("wall_ns", "cpu_ns")}
           for n in counts}
    for n in counts:
        med[n]["min_ns"] = min(s["min_ns"] for s in samples[n])
    for ex in exs.values():
        ex(x)  # split_steps: the calls a run cuts (Modules count per run)
    return {"model": path.name, "counts": counts, "macs": exs[1].stats()["macs"],
            "split_steps": {n: exs[n].stats()["split_steps"] for n in counts},
            "same_as_one_thread": same, "median": med, "samples": samples}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default=os.environ.get("TVMNODE_MODELS", str(DEFAULT_MODELS)))
    ap.add_argument("--only", action="append", default=[])
    ap.add_argument("--float", action="store_true", help="the float32 models")
    ap.add_argument("--threads", type=int, action="append", default=[],
                    help="thread counts beside 1 (repeatable; default 2)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=0.3)
    ap.add_argument("--out", default=".")
    ap.add_argument("--module", action="store_true",
                    help="compiled host Modules (a library per model) instead of the "
                         "executor; beside them count 0: the archive without the calls "
                         "through the parallel hook, one thread")
    ap.add_argument("--fetch", action="store_true",
                    help="fetch VWW and the large ResNet when they are not found")
    args = ap.parse_args()
    counts = [1] + sorted(set(args.threads or [2]) - {1})
    names = FLOAT if args.float else INT8
    if args.only:
        names = [n for n in names if any(o in n for o in args.only)]
    paths = []
    for n in names:
        path, why = x86_peers.find_model(n, Path(args.models), fetch=args.fetch)
        if path is None:
            print("left out: %s" % why)
        else:
            paths.append(path)
    load0 = os.getloadavg()[0]
    results = [bench_model(p, counts, args) for p in paths]
    load = "load average %.1f before, %.1f after" % (load0, os.getloadavg()[0])
    print("CPU: %s, %d cores online; ISA forms: %s; %s" % (cpu_name(), os.cpu_count() or 0,
                                                            tn.runtime.isa(), load))
    if args.module:
        counts = [0] + counts  # 0: the archive without split calls
    others = [n for n in counts if n != 1]
    lines = ["| model | MACs | steps cut | " +
             " | ".join("%d thr wall us | least | CPU us" % n for n in counts) +
             " | " + " | ".join("wall %d/1 | least | CPU" % n for n in others) + " |",
             "|---|---:|---:|" + "---:|" * (3 * len(counts) + 3 * len(others))]
    for r in results:
        m = r["median"]
        one = m[1]
        cells = ["%.1f | %.1f | %.1f" % (m[n]["wall_ns"] / 1e3, m[n]["min_ns"] / 1e3,
                                         m[n]["cpu_ns"] / 1e3) for n in counts]
        ratios = ["%.2f | %.2f | %.2f" % (m[n]["wall_ns"] / one["wall_ns"],
                                          m[n]["min_ns"] / one["min_ns"],
                                          m[n]["cpu_ns"] / one["cpu_ns"]) for n in others]
        cut = "/".join(str(r["split_steps"][n]) for n in counts if n > 1)
        lines.append("| %s | %d | %s | %s | %s |" % (r["model"], r["macs"], cut,
                                                    " | ".join(cells), " | ".join(ratios)))
        bad = [n for n, s in r["same_as_one_thread"].items() if s is False]
        if bad:
            lines.append("| %s: outputs differ from one thread's with %s threads |" % (r["model"], bad))
    table = "\n".join(lines)
    print(table)
    out = Path(args.out)
    stem = "bench_threads_float" if args.float else "bench_threads"
    if args.module:
        stem += "_module"
    (out / (stem + ".md")).write_text("CPU: %s, %d cores; %s\n\n%s\n" % (
        cpu_name(), os.cpu_count() or 0, load, table))
    (out / (stem + ".json")).write_text(json.dumps(
        {"cpu": cpu_name(), "cores": os.cpu_count(), "isa": tn.runtime.isa(), "load": load,
         "results": results}, indent=1, default=str))


if __name__ == "__main__":
    main()
