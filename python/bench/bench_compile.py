"""Compile time against model size: chains and random DAGs of 1k to 1M
operators through `codegen.compile` (the standard pipeline, lowering,
scheduling, the memory plan and the C), each size in a fresh process.

Reports per case the process CPU time of the compile (the machines are
shared: CPU time is what the work costs), its wall time, the peak RSS and
the size of the C, then per shape the exponent k of a least-squares fit
time ~ N^k over the sizes from 16k up (1 is linear). Prints a table and
writes OUT/bench_compile.json and OUT/bench_compile.md.

    python bench_compile.py --out build-bench/bench [--sizes 1000,...] [--shapes chain,dag]

The graphs, float32 [1, 16] values throughout:
  chain  add(prev, x) and relu(prev) in turn: x, the input, lives to the
         end; every other value dies at its next step;
  dag    each add takes the previous value and one of the last 32 at
         random (seeded), relu in between: skip connections of every
         length up to 32, so up to 32 values are alive at once and the
         scheduler has real choices.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import platform
import resource
import subprocess
import sys
import time
from typing import Any, Dict, List

SIZES = [1000, 4000, 16000, 64000, 256000, 1000000]
SHAPES = ["chain", "dag"]
WINDOW = 32


def build(shape: str, n: int) -> Any:
    import random

    from tvmnode import ir
    from tvmnode.ir import op

    rng = random.Random(n)
    x = ir.var("x", shape=(1, 16), dtype="float32")
    vals: List[Any] = [x]
    y: Any = x
    for i in range(n):
        if i % 2:
            y = op.nn.relu(y)
        else:
            other = x if shape == "chain" else vals[rng.randrange(max(0, len(vals) - WINDOW),
                                                                   len(vals))]
            y = op.add(y, other)
        vals.append(y)
        if len(vals) > WINDOW + 1:
            vals.pop(0)
    return ir.IRModule.from_expr(ir.Function([x], y))


def one(shape: str, n: int) -> Dict[str, Any]:
    """Build and compile one graph in this process; its figures."""
    from tvmnode import codegen

    t0 = time.perf_counter()
    mod = build(shape, n)
    built = time.perf_counter() - t0
    c0, w0 = time.process_time(), time.perf_counter()
    arch = codegen.compile(mod, "m")
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    c_bytes = sum(len(v) for k, v in arch.files.items() if k.endswith((".c", ".h")))
    # after the clock: reading the metadata is not part of compiling
    return {"shape": shape, "operators": n, "build_s": built, "compile_cpu_s": cpu,
            "compile_wall_s": wall, "c_bytes": c_bytes,
            "workspace_bytes": arch.workspace_bytes, "max_rss_kb": rss}


def exponent(rows: List[Dict[str, Any]]) -> float:
    """k of log t = k log N + c, least squares, over N >= 16k."""
    pts = [(math.log(r["operators"]), math.log(r["compile_cpu_s"])) for r in rows
           if r["operators"] >= 16000 and r["compile_cpu_s"] > 0]
    if len(pts) < 2:
        return float("nan")
    mx = sum(p[0] for p in pts) / len(pts)
    my = sum(p[1] for p in pts) / len(pts)
    return (sum((p[0] - mx) * (p[1] - my) for p in pts)
            / sum((p[0] - mx) ** 2 for p in pts))


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=None, help="folder for the JSON and the table")
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    ap.add_argument("--shapes", default=",".join(SHAPES))
    ap.add_argument("--one", nargs=2, metavar=("SHAPE", "N"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one(args.one[0], int(args.one[1]))))
        return 0
    rows: List[Dict[str, Any]] = []
    print("%-6s %9s %10s %10s %9s %10s %12s" % ("graph", "operators", "cpu s", "wall s",
                                               "us/op", "peak MB", "C MB"))
    for shape in args.shapes.split(","):
        for n in (int(s) for s in args.sizes.split(",")):
            p = subprocess.run([sys.executable, os.path.abspath(__file__), "--one", shape,
                                str(n)], capture_output=True, text=True)
            if p.returncode != 0:
                print("%s %d failed:\n%s" % (shape, n, p.stderr[-2000:]), file=sys.stderr)
                return 1
            r = json.loads(p.stdout.strip().splitlines()[-1])
            rows.append(r)
            print("%-6s %9d %10.2f %10.2f %9.1f %10.0f %12.1f"
                  % (shape, n, r["compile_cpu_s"], r["compile_wall_s"],
                     1e6 * r["compile_cpu_s"] / n, r["max_rss_kb"] / 1024, r["c_bytes"] / 1e6),
                  flush=True)
    fits = {s: exponent([r for r in rows if r["shape"] == s]) for s in args.shapes.split(",")}
    for s, k in fits.items():
        print("%s: compile CPU time ~ N^%.2f (sizes >= 16k)" % (s, k))
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        doc = {"machine": {"cpu": cpu_name(), "python": platform.python_version()},
               "rows": rows, "exponent": fits}
        with open(os.path.join(args.out, "bench_compile.json"), "w") as f:
            json.dump(doc, f, indent=1)
        with open(os.path.join(args.out, "bench_compile.md"), "w") as f:
            f.write("| graph | operators | compile CPU s | µs/operator | peak RSS MB |\n"
                    "|---|---:|---:|---:|---:|\n")
            for r in rows:
                f.write("| %s | %d | %.2f | %.1f | %.0f |\n"
                        % (r["shape"], r["operators"], r["compile_cpu_s"],
                           1e6 * r["compile_cpu_s"] / r["operators"], r["max_rss_kb"] / 1024))
            for s, k in fits.items():
                f.write("\n%s: CPU time ~ N^%.2f\n" % (s, k))
    return 0


if __name__ == "__main__":
    sys.exit(main())
