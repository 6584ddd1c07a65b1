#!/usr/bin/env python3
"""compare_commits.py: two builds of tvmnode (a base commit and a new one)
measured in the same run, interleaved, on process CPU time.

    python3 bench/compare_commits.py \
        --base-src ../bench-base --base-build ../bench-base/build-bench \
        --new-src . --new-build build-bench [--only kws_ref_model.tflite ...] \
        [--rounds 5] [--seconds 0.3] [--no-kernels] [--out DIR]

Each build tree must be configured with CFLAGS="-O2 -g" (as `./dev bench`
does) and built, and its Python extension built into BUILD/python/lib
(python/tools/env.sh does that; run_bench.sh sources it). The interpreter
running this script needs numpy; it runs one worker process per tree (this
same file, `--worker`) with that tree's PYTHONPATH, TVMNODE_BUILD_DIR and
TVMNODE_SOURCE_DIR, so each side loads its own library and copies its own
crt sources into its archives.

Per model of --models (default ../shared/models), on each side:

- executor: `frontend.from_tflite` + FuseOps, run by `runtime.Executor`
  from Python on a fixed-seed input (bench_models.py's setup); CPU seconds
  per inference (time.process_time over batches of about 20 ms, median of
  the batches of one round) and `Executor.stats()` (arena bytes, its lower
  bound, kernel scratch, steps);
- AOT: `codegen.compile` and bench_aot.py's latency driver (the generated C
  and the crt at `cc -std=c99 -O2`), timed on CLOCK_PROCESS_CPUTIME_ID in
  place of CLOCK_MONOTONIC; the workspace pool bytes; .text/.rodata of the
  generated code and of the crt objects (bench_aot.object_sizes, host and,
  when arm-none-eabi-gcc is installed, Cortex-M4 -Os), and `size` of the
  linked driver;
- instruction counts under callgrind (--ir-runs, on when valgrind is
  installed): the driver's tvmgen_<model>_run, and with --executor-ir-runs
  the executor called from Python (collected inside exec_run only);
- the outputs of the executor and of the driver on both sides are compared
  (they should be equal bit for bit).

Besides: bench/bench_exec.c of each tree (the executor on the random-weight
models, and the crt kernels on layer shapes), compiled against that tree's
libtvmnode with its clock switched to CLOCK_PROCESS_CPUTIME_ID; and the
.text of each tree's libtvmnode.so. bench_exec's rows are also counted
under callgrind (each row's body run --ir-runs times after a warm-up, with
a force-included stand-in for bench_util.h).

Rounds alternate the order (base, new / new, base, ...). Each figure is the
median over rounds; ratio = new / base (above 1: new is slower or bigger).
Writes compare_commits.json (every sample) and compare_commits.md.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

HERE = Path(__file__).resolve().parent
DEFAULT_MODELS = HERE.parents[1] / "shared" / "models"
MODELS = ["kws_ref_model.tflite", "ad01_int8.tflite", "ad01_fp32.tflite",
          "pretrainedResnet_quant.tflite", "str_ww_ref_model.tflite",
          "kws_ref_model_float32.tflite", "pretrainedResnet.tflite"]

# Force-included before bench_exec.c: its harness reads CLOCK_MONOTONIC.
CPU_CLOCK_H = """#define _POSIX_C_SOURCE 200809L
#include <time.h>
#undef CLOCK_MONOTONIC
#define CLOCK_MONOTONIC CLOCK_PROCESS_CPUTIME_ID
"""


# Force-included before bench_exec.c for instruction counts: stands in for
# bench_util.h (same guard), so each row runs its body once to warm up, then
# IR_RUNS times between a reset and a dump of callgrind's counters.
IR_HARNESS_H = r"""#ifndef TVMNODE_BENCH_UTIL_H_
#define TVMNODE_BENCH_UTIL_H_
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <valgrind/callgrind.h>
typedef void (*bench_fn)(int64_t iters, void *ctx);
#define BENCH_KEEP(x) __asm__ __volatile__("" : : "g"(x) : "memory")
static inline double bench_run(const char *group, const char *name, bench_fn fn,
                               void *ctx, int64_t unit) {
  long runs = atol(getenv("IR_RUNS") ? getenv("IR_RUNS") : "3");
  (void)group, (void)unit;
  fn(1, ctx);
  CALLGRIND_ZERO_STATS;
  fn(runs, ctx);
  CALLGRIND_DUMP_STATS_AT(name);
  printf("{\"name\": \"%s\", \"runs\": %ld}\n", name, runs);
  fflush(stdout);
  return 1e12; /* bench_exec's profiling loop then runs once */
}
static inline void bench_report(const char *group, const char *name,
                                double value, const char *unit) {
  (void)group, (void)name, (void)value, (void)unit;
}
#endif
"""

# The AOT driver for instruction counts: one warm-up call, then IR_RUNS calls
# between a reset and a dump of callgrind's counters.
IR_DRIVER_PATCH = r"""  if (getenv("IR_RUNS")) {
    long r, runs = atol(getenv("IR_RUNS"));
    CALLGRIND_ZERO_STATS;
    for (r = 0; r < runs; r++) st |= tvmgen_@NAME@_run(@ARGS@);
    CALLGRIND_DUMP_STATS_AT("aot");
    return st != 0;
  }
"""


# Run under callgrind collecting only inside exec_run (the C function behind
# runtime.ExecutorRun): the executor's instructions, its Python call left out.
EXEC_IR_PY = r"""
import sys
from pathlib import Path
import tvmnode as tn
from tvmnode import frontend, transform
sys.path.insert(0, sys.argv[3])
import bench_aot
mod = frontend.from_tflite(Path(sys.argv[1]))
ex = tn.runtime.Executor(transform.FuseOps()(mod))
x = bench_aot.make_input(frontend.model_io(mod)["inputs"][0])
for _ in range(int(sys.argv[2])):
    ex(x)
"""


def executor_ir(path: Path, runs: int, bench_dir: str, workdir: str) -> float:
    """Instructions per run of the executor inside exec_run."""
    os.makedirs(workdir, exist_ok=True)
    out = os.path.join(workdir, "exec.cg")
    sh(["valgrind", "--tool=callgrind", "--collect-atstart=no", "--toggle-collect=exec_run",
        "--callgrind-out-file=" + out, sys.executable, "-c", EXEC_IR_PY, str(path), str(runs),
        bench_dir])
    total = None
    with open(out) as fh:
        for line in fh:
            if line.startswith(("summary:", "totals:")):
                total = int(line.split()[1])
    if not total:
        raise RuntimeError("callgrind collected nothing inside exec_run")
    return total / runs


def callgrind(cmd: List[str], runs: int, workdir: str, env: Optional[Dict[str, str]] = None
              ) -> Dict[str, float]:
    """Instructions per body by dump name: cmd under callgrind, which dumps
    its counters after IR_RUNS runs of each body (client requests)."""
    os.makedirs(workdir, exist_ok=True)
    for f in os.listdir(workdir):
        os.unlink(os.path.join(workdir, f))
    e = dict(env or os.environ, IR_RUNS=str(runs))
    sh(["valgrind", "--tool=callgrind", "--collect-atstart=yes",
        "--callgrind-out-file=" + os.path.join(workdir, "cg.out"), *cmd], env=e)
    out = {}
    CLIENT = "desc: Trigger: Client Request: "
    dumps = [f for f in os.listdir(workdir) if f.rsplit(".", 1)[-1].isdigit()]
    for f in sorted(dumps, key=lambda f: int(f.rsplit(".", 1)[-1])):  # in dump order
        name, total = None, None
        with open(os.path.join(workdir, f)) as fh:
            for line in fh:
                if line.startswith(CLIENT):
                    name = line[len(CLIENT):].strip()
                elif line.startswith(("summary:", "totals:")):
                    total = int(line.split()[1])
        if name and total is not None:
            out[name] = total / runs
    return out


def sh(cmd: List[str], **kw: Any) -> str:
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        raise RuntimeError("%s failed (%d):\n%s" % (" ".join(cmd[:4]), p.returncode,
                                                     p.stderr[-3000:]))
    return p.stdout


# ---- the worker: one tree, in its own process ----------------------------------------------

def cpu_per_call(fn: Callable[[], Any], seconds: float) -> float:
    """Median CPU seconds per call over batches of about 20 ms of CPU time
    filling `seconds` of CPU time (at least 5 batches)."""
    clock = time.process_time
    fn()
    t0 = clock()
    fn()
    one = max(clock() - t0, 1e-7)
    batch = max(1, int(0.02 / one))
    samples: List[float] = []
    end = clock() + seconds
    while clock() < end or len(samples) < 5:
        t0 = clock()
        for _ in range(batch):
            fn()
        samples.append((clock() - t0) / batch)
    return statistics.median(samples)


def digest(arrays: Any) -> str:
    import numpy as np
    h = hashlib.sha256()
    for a in arrays:
        a = np.ascontiguousarray(np.asarray(a))
        h.update(str(a.dtype).encode() + str(a.shape).encode() + a.tobytes())
    return h.hexdigest()[:16]


def worker(args: argparse.Namespace) -> None:
    """Set every model up, report sizes, then answer timing requests read
    as JSON lines on stdin ({"op": "exec"|"aot", "model": M, "seconds": S})."""
    src = Path(args.src).resolve()
    sys.path.insert(0, str(src / "python" / "bench"))
    sys.path.insert(0, str(src / "python" / "tests"))
    import numpy as np  # noqa: F401
    import tvmnode as tn
    from tvmnode import codegen, frontend, transform
    from tvmnode._paths import _crt_dir
    import bench_aot
    from aot_util import HostModel

    # the driver's clock: process CPU time, not wall time
    bench_aot.DRIVER_C = bench_aot.DRIVER_C.replace("CLOCK_MONOTONIC",
                                                    "CLOCK_PROCESS_CPUTIME_ID")
    workdir = tempfile.mkdtemp(prefix="compare_%s_" % args.label)
    info: Dict[str, Any] = {"tvmnode_file": tn.__file__, "crt_dir": str(_crt_dir()),
                            "models": {}}
    runs: Dict[str, Dict[str, Any]] = {}
    arm = shutil.which(bench_aot.ARM_CC) and shutil.which("arm-none-eabi-size")
    for name in args.only:
        path = Path(args.models) / name
        stem = path.stem.lower()
        mod = frontend.from_tflite(path)
        ex = tn.runtime.Executor(transform.FuseOps()(mod))
        x = bench_aot.make_input(frontend.model_io(mod)["inputs"][0])
        got = ex(x)
        got = got if isinstance(got, tuple) else (got,)
        arch = codegen.compile(frontend.load_model(str(path)), name=stem)
        hm = HostModel(arch, workdir, cflags=("-O2",))
        exe = bench_aot.build_driver(hm, workdir)
        driver = bench_aot.Driver(exe, hm, [x], workdir)
        driver(0.0)
        ir_exe = None
        if args.ir_runs:
            text = bench_aot.DRIVER_C
            bench_aot.DRIVER_C = text.replace(
                "#include <time.h>\n", "#include <time.h>\n#include <valgrind/callgrind.h>\n"
            ).replace("  t0 = now_ns();\n  st |= tvmgen", IR_DRIVER_PATCH + "  t0 = now_ns();\n"
                      "  st |= tvmgen", 1)
            irdir = os.path.join(workdir, "ir")
            os.makedirs(irdir, exist_ok=True)
            ir_exe = bench_aot.build_driver(hm, irdir)
            bench_aot.DRIVER_C = text
        objdir = os.path.join(workdir, "obj_" + stem)
        os.makedirs(objdir, exist_ok=True)
        flash: Dict[str, Any] = {
            "driver_exe": bench_aot.berkeley_size(exe),
            "host": bench_aot.object_sizes(hm.dir, objdir, os.environ.get("CC", "cc"),
                                           bench_aot.HOST_FLAGS, "size")}
        if arm:
            flash["cortex_m4"] = bench_aot.object_sizes(hm.dir, objdir, bench_aot.ARM_CC,
                                                        bench_aot.ARM_FLAGS,
                                                        "arm-none-eabi-size")
        info["models"][name] = {
            "executor_stats": ex.stats(),
            "executor_out": digest(got),
            "aot_out": digest(driver.outputs()),
            "workspace_bytes": int(arch.workspace_bytes),
            "workspace_lower_bound": int(arch.info["memory"]["workspace_lower_bound_bytes"]),
            "macs": int(arch.info["macs"]),
            "flash": flash,
        }
        runs[name] = {"exec": (lambda ex=ex, x=x: ex(x)), "aot": driver,
                      "ir": ir_exe and [ir_exe, "0", *driver.ins, *driver.outs]}
        del arch, mod
    print(json.dumps(info), flush=True)
    for line in sys.stdin:
        req = json.loads(line)
        if req.get("op") == "quit":
            break
        r = runs[req["model"]]
        if req["op"] == "exec":
            s = cpu_per_call(r["exec"], req["seconds"])
        elif req["op"] == "exec_ir":
            s = executor_ir(Path(args.models) / req["model"], args.executor_ir_runs,
                            str(src / "python" / "bench"), os.path.join(workdir, "cgx"))
        elif req["op"] == "ir":
            s = callgrind(r["ir"], args.ir_runs, os.path.join(workdir, "cg"))["aot"]
        else:
            s = r["aot"](req["seconds"])
        print(json.dumps({"s": s}), flush=True)
    shutil.rmtree(workdir, ignore_errors=True)


# ---- the orchestrator ----------------------------------------------------------------------

class Side:
    def __init__(self, label: str, src: str, build: str, args: argparse.Namespace,
                 tmp: str) -> None:
        self.label, self.src, self.build = label, os.path.abspath(src), os.path.abspath(build)
        self.commit = sh(["git", "-C", self.src, "rev-parse", "HEAD"]).strip()
        lib = os.path.join(self.build, "libtvmnode", ".libs", "libtvmnode.so")
        self.lib_text = sum(int(p[1]) for p in (line.split() for line in
                                                sh(["size", "-A", lib]).splitlines())
                            if len(p) >= 2 and p[0].startswith(".text") and p[1].isdigit())
        self.env = dict(os.environ, TVMNODE_BUILD_DIR=self.build, TVMNODE_SOURCE_DIR=self.src,
                        PYTHONPATH=os.path.join(self.build, "python", "lib"))
        self.bench_exec = None if args.no_kernels else self.build_bench_exec(tmp)
        self.bench_exec_ir = (self.build_bench_exec(tmp, IR_HARNESS_H, "_ir")
                              if args.ir_runs and not args.no_kernels else None)
        self.proc: Optional[subprocess.Popen] = None
        self.info: Dict[str, Any] = {}
        self.args = args

    def build_bench_exec(self, tmp: str, header: str = CPU_CLOCK_H, tag: str = "") -> str:
        """bench/bench_exec.c of this tree, timed on process CPU time (or,
        with IR_HARNESS_H, counted by callgrind)."""
        hdr = os.path.join(tmp, "harness%s.h" % tag)
        with open(hdr, "w") as f:
            f.write(header)
        s, b = self.src, self.build
        glib = sh(["pkg-config", "--cflags", "--libs", "glib-2.0"]).split()
        exe = os.path.join(tmp, "bench_exec_%s%s" % (self.label, tag))
        sh([os.environ.get("CC", "cc"), "-std=gnu11", "-O2", "-g", "-include", hdr,
            "-I" + s + "/libtvmnode/include", "-I" + b, "-I" + s,
            "-I" + s + "/runtime/host/include", "-I" + s + "/runtime/crt/include",
            s + "/bench/bench_exec.c", s + "/models/mlperf_tiny.c", "-o", exe,
            "-L" + b + "/libtvmnode/.libs", "-ltvmnode",
            "-Wl,-rpath," + b + "/libtvmnode/.libs", *glib, "-lm", "-lpthread"])
        return exe

    def start(self) -> None:
        a = self.args
        cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", "--label", self.label,
               "--src", self.src, "--models", a.models, "--ir-runs", str(a.ir_runs),
               "--executor-ir-runs", str(a.executor_ir_runs)]
        for m in a.only:
            cmd += ["--only", m]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, env=self.env)
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("%s worker failed to start" % self.label)
        self.info = json.loads(line)

    def kernels_ir(self, tmp: str) -> Dict[str, float]:
        """Instructions per call of each bench_exec row, under callgrind."""
        return callgrind([self.bench_exec_ir], self.args.ir_runs,
                         os.path.join(tmp, "cg_" + self.label), self.env)

    def time(self, op: str, model: str, seconds: float) -> float:
        assert self.proc and self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(json.dumps({"op": op, "model": model, "seconds": seconds}) + "\n")
        self.proc.stdin.flush()
        return float(json.loads(self.proc.stdout.readline())["s"])

    def kernels(self) -> Dict[str, float]:
        """One run of bench_exec: ns per op (CPU time) by row."""
        out = {}
        for line in sh([self.bench_exec], env=self.env).splitlines():
            row = json.loads(line)
            if "ns_per_op" in row:
                out[row["name"]] = row["ns_per_op"]
        return out

    def stop(self) -> None:
        if self.proc:
            self.proc.stdin.write(json.dumps({"op": "quit"}) + "\n")
            self.proc.stdin.close()
            self.proc.wait()


def med(xs: List[float]) -> float:
    return statistics.median(xs)


def fmt(v: Optional[float], unit: str) -> str:
    if v is None:
        return "—"
    if unit == "B":
        return "{:,}".format(int(v))
    return "%.1f" % v if v >= 10 else "%.2f" % v


def table(res: Dict[str, Any]) -> str:
    rows: List[List[str]] = []

    def add(model: str, metric: str, b: Optional[float], n: Optional[float], unit: str) -> None:
        r = "—" if b in (None, 0) or n is None else "%.3f" % (n / b)
        rows.append([model, metric, fmt(b, unit), fmt(n, unit), r])

    add("libtvmnode.so", ".text B", res["base"]["lib_text"], res["new"]["lib_text"], "B")
    for name, m in res["models"].items():
        b, n = m["base"], m["new"]
        add(name, "executor µs (CPU)", 1e6 * med(b["exec_s"]), 1e6 * med(n["exec_s"]), "us")
        if "exec_ir" in b and "exec_ir" in n:
            add(name, "executor instructions per inference", b["exec_ir"], n["exec_ir"], "B")
        add(name, "executor arena B", b["executor_stats"]["arena_bytes"],
            n["executor_stats"]["arena_bytes"], "B")
        add(name, "executor scratch B", b["executor_stats"]["scratch_bytes"],
            n["executor_stats"]["scratch_bytes"], "B")
        add(name, "AOT µs (CPU)", 1e6 * med(b["aot_s"]), 1e6 * med(n["aot_s"]), "us")
        if "aot_ir" in b:
            add(name, "AOT instructions per inference", b["aot_ir"], n["aot_ir"], "B")
        add(name, "AOT workspace B", b["workspace_bytes"], n["workspace_bytes"], "B")
        for part in ("generated", "crt"):
            add(name, "x86 %s .text B" % part, b["flash"]["host"][part]["text"],
                n["flash"]["host"][part]["text"], "B")
        add(name, "x86 generated .rodata B", b["flash"]["host"]["generated"]["rodata"],
            n["flash"]["host"]["generated"]["rodata"], "B")
        add(name, "x86 driver program text B", b["flash"]["driver_exe"]["text"],
            n["flash"]["driver_exe"]["text"], "B")
        if "cortex_m4" in b["flash"] and "cortex_m4" in n["flash"]:
            for part in ("generated", "crt"):
                add(name, "M4 %s .text B" % part, b["flash"]["cortex_m4"][part]["text"],
                    n["flash"]["cortex_m4"][part]["text"], "B")
            add(name, "M4 generated .rodata B", b["flash"]["cortex_m4"]["generated"]["rodata"],
                n["flash"]["cortex_m4"]["generated"]["rodata"], "B")
        rows.append([name, "outputs equal (executor / AOT)",
                     "%s / %s" % (b["executor_out"] == n["executor_out"],
                                  b["aot_out"] == n["aot_out"]), "", ""])
    for k, v in res.get("kernels", {}).items():
        if v["base"] and v["new"]:
            add("bench_exec", k + " µs (CPU)", 1e-3 * med(v["base"]), 1e-3 * med(v["new"]),
                "us")
        if "base_ir" in v and "new_ir" in v:
            add("bench_exec", k + " instructions", v["base_ir"], v["new_ir"], "B")
    out = ["| model | metric | base | new | new ÷ base |", "|---|---|---:|---:|---:|"]
    out += ["| %s |" % " | ".join(r) for r in rows]
    return "\n".join(out)


def cpu_name() -> str:
    try:
        for line in sh(["lscpu"]).splitlines():
            if line.startswith("Model name:"):
                return line.split(":", 1)[1].strip()
    except (OSError, RuntimeError):
        pass
    return platform.processor() or platform.machine()


def cpu_flags() -> List[str]:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    have = set(line.split(":", 1)[1].split())
                    return sorted(f for f in have if f.startswith(("avx", "sse4", "fma", "amx")))
    except OSError:
        pass
    return []


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--label", default="")
    ap.add_argument("--src", default="")
    ap.add_argument("--base-src")
    ap.add_argument("--base-build")
    ap.add_argument("--new-src", default=str(HERE.parent))
    ap.add_argument("--new-build")
    ap.add_argument("--models", default=os.environ.get("TVMNODE_MODELS", str(DEFAULT_MODELS)))
    ap.add_argument("--only", action="append", default=[],
                    help="a model file name (repeatable); default: all of them")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=0.3,
                    help="CPU seconds per runtime per model per round")
    ap.add_argument("--no-kernels", action="store_true", help="skip bench/bench_exec")
    ap.add_argument("--ir-runs", type=int, default=3 if shutil.which("valgrind") else 0,
                    help="runs counted under callgrind per row (0: no instruction counts)")
    ap.add_argument("--executor-ir-runs", type=int, default=0,
                    help="also count the executor's instructions from Python under callgrind, "
                         "this many runs per model (slow: a Python process under valgrind "
                         "per model and side; 0: off)")
    ap.add_argument("--out", default=".")
    args = ap.parse_args()
    args.only = args.only or [m for m in MODELS if (Path(args.models) / m).exists()]
    if args.worker:
        worker(args)
        return
    if not (args.base_src and args.base_build and args.new_build):
        ap.error("--base-src, --base-build and --new-build are required")

    t_start = time.time()
    res: Dict[str, Any] = {
        "cpu": cpu_name(), "cpu_flags": cpu_flags(), "nproc": os.cpu_count(),
        "python": platform.python_version(), "rounds": args.rounds, "seconds": args.seconds,
        "clock": "process CPU time", "started": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                              time.gmtime()),
        "models": {}, "kernels": {}}
    with tempfile.TemporaryDirectory(prefix="compare_commits") as tmp:
        sides = [Side("base", args.base_src, args.base_build, args, tmp),
                 Side("new", args.new_src, args.new_build, args, tmp)]
        for s in sides:
            print("setting up %s (%s) ..." % (s.label, s.commit[:10]), file=sys.stderr,
                  flush=True)
            s.start()
            res[s.label] = {"commit": s.commit, "src": s.src, "build": s.build,
                            "lib_text": s.lib_text, "tvmnode_file": s.info["tvmnode_file"],
                            "crt_dir": s.info["crt_dir"]}
        for name in args.only:
            res["models"][name] = {s.label: dict(s.info["models"][name], exec_s=[], aot_s=[])
                                   for s in sides}
        try:
            if args.ir_runs:  # deterministic: once per side
                print("instruction counts (callgrind) ...", file=sys.stderr, flush=True)
                for name in args.only:
                    for s in sides:
                        res["models"][name][s.label]["aot_ir"] = s.time("ir", name, 0)
                        if args.executor_ir_runs:
                            res["models"][name][s.label]["exec_ir"] = s.time("exec_ir", name, 0)
                if not args.no_kernels:
                    for s in sides:
                        for k, v in s.kernels_ir(tmp).items():
                            res["kernels"].setdefault(k, {"base": [], "new": []})[
                                s.label + "_ir"] = v
            for r in range(args.rounds):
                order = sides if r % 2 == 0 else sides[::-1]
                print("round %d/%d (%s first)" % (r + 1, args.rounds, order[0].label),
                      file=sys.stderr, flush=True)
                for name in args.only:
                    for op in ("exec", "aot"):
                        for s in order:
                            res["models"][name][s.label][op + "_s"].append(
                                s.time(op, name, args.seconds))
                if not args.no_kernels:
                    for s in order:
                        for k, v in s.kernels().items():
                            res["kernels"].setdefault(k, {"base": [], "new": []})[
                                s.label].append(v)
        finally:
            for s in sides:
                s.stop()
    res["wall_s"] = time.time() - t_start
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "compare_commits.json").write_text(json.dumps(res, indent=1))
    head = ("base %s, new %s; %s (%s), %d rounds, medians of process CPU time; "
            "ratio = new ÷ base" % (res["base"]["commit"][:10], res["new"]["commit"][:10],
                                    res["cpu"], " ".join(res["cpu_flags"]), args.rounds))
    text = head + "\n\n" + table(res)
    (out / "compare_commits.md").write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
