"""Ahead-of-time C beside TFLite Micro: RAM, latency, flash and compile time
of every trained model of ../shared/models, in one run.

Per model (or --models DIR; --only NAME to pick some):

- RAM: the plan's workspace bytes and its lower bound with the inputs and
  outputs outside the pool (the default) and inside it (io_in_pool); our
  total = workspace + I/O bytes outside the pool + the .data/.bss of the
  generated code and the crt (from `size -A` on their objects). Beside it,
  TFLite Micro's arena for the same model, read from its recording
  allocator (`print_allocations()`, captured at the file-descriptor level):
  "head" (the activation plan, I/O included), "tail" (persistent data) and
  the total; and the published figures of microTVM and ST Edge AI Core.
- Latency on the host: the generated C built with the system compiler at
  -O2 and timed by a small C driver (DRIVER_C, clock_gettime around batches
  of tvmgen_<name>_run), the same code through ctypes (and a ctypes call of
  it that returns at its first argument check, which is the ctypes
  overhead), the host executor on the same module, TFLite Micro and LiteRT
  (default kernels and reference kernels), one thread each, on the same
  fixed-seed input; --rounds interleaved rounds of about --seconds a
  runtime; each figure is the median over rounds of the median per call.
- Flash: `size` of the linked driver, the generated code's and the crt's
  sections (objects compiled as build_library does), and, when
  arm-none-eabi-gcc is installed, the same objects for a Cortex-M4 at -Os.
- Compile time: load_model + codegen.compile + export, median of --compiles.

Writes bench_aot.json (every sample) and bench_aot.md (the tables).
"""
from __future__ import annotations

import argparse
import ctypes
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence

import numpy as np

import tvmnode as tn
from tvmnode import codegen, frontend

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))
from aot_util import HostModel  # noqa: E402
from bench_models import DEFAULT_MODELS, MODELS, per_call, runners  # noqa: E402

# Published workspace / RAM figures (bytes) for the same MLPerf Tiny models.
PUBLISHED: Dict[str, Dict[str, Any]] = {
    "kws_ref_model.tflite": {"who": "microTVM", "native": 146448, "cmsis_nn": 17232},
    "pretrainedResnet_quant.tflite": {"who": "microTVM", "native": 247392, "cmsis_nn": 66112},
    "ad01_int8.tflite": {"who": "microTVM", "native": 2688, "cmsis_nn": 1160},
    "str_ww_ref_model.tflite": {"who": "ST Edge AI Core", "total_io_in_activations": 10116},
}

ARM_CC = "arm-none-eabi-gcc"
ARM_FLAGS = ("-std=c11", "-ffreestanding", "-Os", "-mcpu=cortex-m4", "-mthumb",
             "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16", "-ffunction-sections", "-fdata-sections")
HOST_FLAGS = ("-std=c99", "-O2")  # what build_library compiles the archive with

# The latency driver: runs tvmgen_<name>_run on inputs read from files,
# writes the outputs, then times batches of calls of about 20 ms until
# SECONDS have passed (at least 5 batches) and prints the median ns per call.
DRIVER_C = r"""
#define _POSIX_C_SOURCE 199309L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "tvmgen_@NAME@.h"

@BUFFERS@

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static int file_io(const char *path, void *buf, size_t n, int write) {
  FILE *f = fopen(path, write ? "wb" : "rb");
  size_t got;
  if (!f) return -1;
  got = write ? fwrite(buf, 1, n, f) : fread(buf, 1, n, f);
  fclose(f);
  return got == n ? 0 : -1;
}

int main(int argc, char **argv) {
  const char *const *in_files = (const char *const *)argv + 2;
  const char *const *out_files = in_files + @NIN@;
  double seconds, t0, one, end, *samples;
  long batch, i;
  int n = 0, k, max_samples = 1 << 16;
  int32_t st;
  @STRUCTS@
  if (argc != 2 + @NIN@ + @NOUT@) {
    fprintf(stderr, "usage: %s SECONDS INPUT... OUTPUT...\n", argv[0]);
    return 2;
  }
  seconds = atof(argv[1]);
  for (k = 0; k < @NIN@; k++)
    if (file_io(in_files[k], in_ptr[k], in_size[k], 0)) { perror(in_files[k]); return 2; }
  st = tvmgen_@NAME@_run(@ARGS@);
  if (st != 0) { fprintf(stderr, "tvmgen_@NAME@_run returned %d\n", (int)st); return 1; }
  for (k = 0; k < @NOUT@; k++)
    if (file_io(out_files[k], out_ptr[k], out_size[k], 1)) { perror(out_files[k]); return 2; }
  t0 = now_ns();
  st |= tvmgen_@NAME@_run(@ARGS@);
  one = now_ns() - t0;
  batch = one > 0 ? (long)(2e7 / one) : 1;
  if (batch < 1) batch = 1;
  samples = malloc(sizeof *samples * (size_t)max_samples); /* heap: .bss holds only the buffers */
  if (!samples) return 2;
  end = now_ns() + seconds * 1e9;
  while ((now_ns() < end || n < 5) && n < max_samples) {
    t0 = now_ns();
    for (i = 0; i < batch; i++) st |= tvmgen_@NAME@_run(@ARGS@);
    samples[n++] = (now_ns() - t0) / (double)batch;
  }
  qsort(samples, (size_t)n, sizeof samples[0], cmp);
  printf("%.1f %d %ld\n", n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2,
         n, batch);
  free(samples);
  return st != 0;
}
"""


def median(xs: Sequence[float]) -> float:
    return statistics.median(xs)


def run(cmd: Sequence[str]) -> str:
    proc = subprocess.run(list(cmd), capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError("%s failed (%d):\n%s" % (" ".join(cmd[:3]), proc.returncode,
                                                     proc.stderr[-2000:]))
    return proc.stdout


def flush_all() -> None:
    sys.stdout.flush()
    sys.stderr.flush()
    ctypes.CDLL(None).fflush(None)  # C stdio buffers


def capture_fds(fn: Callable[[], Any]) -> str:
    """What fn writes to file descriptors 1 and 2 (C++ code included)."""
    flush_all()
    saved = [os.dup(1), os.dup(2)]
    with tempfile.TemporaryFile() as tmp:
        try:
            os.dup2(tmp.fileno(), 1)
            os.dup2(tmp.fileno(), 2)
            fn()
        finally:
            flush_all()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for fd in saved:
                os.close(fd)
        tmp.seek(0)
        return tmp.read().decode(errors="replace")


def tflm_arena(path: Path, x: np.ndarray) -> Optional[Dict[str, Any]]:
    """TFLite Micro's arena use after one inference: head, tail and total
    bytes from its recording allocator, and the output; None when it cannot
    run the model."""
    from tflite_micro.python.tflite_micro import runtime as tflm

    try:
        micro = tflm.Interpreter.from_bytes(path.read_bytes())
        micro.set_input(x, 0)
        micro.invoke()
    except RuntimeError:
        return None
    text = capture_fds(micro.print_allocations)
    found = dict(re.findall(r"Arena allocation (total|head|tail) (\d+) bytes", text))
    if set(found) != {"total", "head", "tail"}:
        raise RuntimeError("print_allocations: unexpected output:\n" + text)
    out: Dict[str, Any] = {k: int(v) for k, v in found.items()}
    out["output"] = np.asarray(micro.get_output(0)).copy()
    return out


def sources(archive: str) -> Dict[str, List[str]]:
    """The archive's C files: the generated code and the crt."""
    gen = os.path.join(archive, "codegen", "host", "src")
    crt = []
    for root, _, names in os.walk(os.path.join(archive, "runtime", "src")):
        crt += [os.path.join(root, n) for n in sorted(names) if n.endswith(".c")]
    return {"generated": sorted(os.path.join(gen, f) for f in os.listdir(gen) if f.endswith(".c")),
            "crt": sorted(crt)}


def includes(archive: str) -> List[str]:
    return ["-I" + os.path.join(archive, "codegen", "host", "include"),
            "-I" + os.path.join(archive, "runtime", "include")]


def section_sizes(size_tool: str, objs: Sequence[str]) -> Dict[str, int]:
    """Bytes of code, read-only data, initialised and zeroed writable data
    over some objects, by section name (`size -A`). Read-only-after-
    relocation data (.data.rel.ro, from the pointers in the descriptor of a
    position-independent build) counts as read-only; unwind tables and
    non-allocated sections are left out."""
    out = {"text": 0, "rodata": 0, "data": 0, "bss": 0}
    for obj in objs:
        for line in run([size_tool, "-A", obj]).splitlines():
            parts = line.split()
            if len(parts) < 2 or not parts[0].startswith(".") or not parts[1].isdigit():
                continue
            name, n = parts[0], int(parts[1])
            if name.startswith(".text"):
                out["text"] += n
            elif name.startswith((".rodata", ".data.rel.ro")):
                out["rodata"] += n
            elif name.startswith(".data"):
                out["data"] += n
            elif name.startswith(".bss"):
                out["bss"] += n
    return out


def object_sizes(archive: str, workdir: str, cc: str, flags: Sequence[str],
                 size_tool: str) -> Dict[str, Dict[str, int]]:
    """Compile the generated code and the crt to objects; their sizes."""
    out = {}
    for part, srcs in sources(archive).items():
        objs = []
        for src in srcs:
            obj = os.path.join(workdir, "%s-%s-%s.o" % (os.path.basename(cc), part,
                                                       os.path.basename(src)[:-2]))
            run([cc, *flags, *includes(archive), "-c", src, "-o", obj])
            objs.append(obj)
        out[part] = section_sizes(size_tool, objs)
    return out


def build_driver(hm: HostModel, workdir: str) -> str:
    """The latency driver linked with the archive's sources at -O2."""
    name = hm.arch.name
    bufs: List[str] = []
    in_ptr: List[str] = []
    out_ptr: List[str] = []
    for kind, tensors, ptrs in (("in", hm.inputs, in_ptr), ("out", hm.outputs, out_ptr)):
        for k, t in enumerate(tensors):
            bufs.append("static uint8_t %s%d[%d] __attribute__((aligned(16)));"
                        % (kind, k, t["size_bytes"]))
            ptrs.append("%s%d" % (kind, k))
    for k, p in enumerate(hm.pools):
        bufs.append("static uint8_t ws%d[%d] __attribute__((aligned(%d)));"
                    % (k, p["size_bytes"], hm.align))
    bufs.append("static void *const in_ptr[] = {%s};" % ", ".join(in_ptr))
    bufs.append("static const size_t in_size[] = {%s};"
                % ", ".join(str(t["size_bytes"]) for t in hm.inputs))
    bufs.append("static void *const out_ptr[] = {%s};" % ", ".join(out_ptr))
    bufs.append("static const size_t out_size[] = {%s};"
                % ", ".join(str(t["size_bytes"]) for t in hm.outputs))
    structs = ["struct tvmgen_%s_inputs in = {%s};" % (name, ", ".join(in_ptr)),
               "struct tvmgen_%s_outputs out = {%s};" % (name, ", ".join(out_ptr))]
    args = ["&in", "&out"]
    if hm.pools:
        structs.append("struct tvmgen_%s_workspace_pools ws = {%s};"
                       % (name, ", ".join("ws%d" % k for k in range(len(hm.pools)))))
        args.append("&ws")
    text = (DRIVER_C.replace("@NAME@", name).replace("@BUFFERS@", "\n".join(bufs))
            .replace("@STRUCTS@", "\n  ".join(structs)).replace("@ARGS@", ", ".join(args))
            .replace("@NIN@", str(len(hm.inputs))).replace("@NOUT@", str(len(hm.outputs))))
    src = os.path.join(workdir, "driver_%s.c" % name)
    with open(src, "w") as f:
        f.write(text)
    exe = os.path.join(workdir, "driver_%s" % name)
    srcs = sources(hm.dir)
    run([os.environ.get("CC", "cc"), *HOST_FLAGS, *includes(hm.dir), src,
         *srcs["generated"], *srcs["crt"], "-o", exe, "-lm"])
    return exe


def berkeley_size(exe: str) -> Dict[str, int]:
    text, data, bss = run(["size", exe]).splitlines()[1].split()[:3]
    return {"text": int(text), "data": int(data), "bss": int(bss)}


class Driver:
    """The latency driver of one model, with its input files written."""

    def __init__(self, exe: str, hm: HostModel, xs: Sequence[np.ndarray], workdir: str) -> None:
        self.exe = exe
        self.ins = []
        for k, x in enumerate(xs):
            p = os.path.join(workdir, "%s.in%d" % (hm.arch.name, k))
            np.ascontiguousarray(x).tofile(p)
            self.ins.append(p)
        self.outs = [os.path.join(workdir, "%s.out%d" % (hm.arch.name, k))
                     for k in range(len(hm.outputs))]
        self.specs = hm.outputs

    def __call__(self, seconds: float) -> float:
        """Median seconds per call."""
        ns = run([self.exe, "%g" % seconds, *self.ins, *self.outs]).split()[0]
        return float(ns) * 1e-9

    def outputs(self) -> List[np.ndarray]:
        return [np.fromfile(p, dtype=o["dtype"]).reshape(o["shape"])
                for p, o in zip(self.outs, self.specs)]


def ctypes_calls(hm: HostModel, xs: Sequence[np.ndarray]) -> Dict[str, Callable[[], Any]]:
    """tvmgen_<name>_run through ctypes with prepared arguments, and the
    same call with a NULL input pointer (it returns at its first check)."""
    keep = [np.ascontiguousarray(x) for x in xs]
    outs = [np.zeros(o["shape"], o["dtype"]) for o in hm.outputs]
    pools = hm.new_pools()
    keep += outs + pools
    args = [ctypes.byref(hm.In(*[a.ctypes.data for a in keep[:len(xs)]])),
            ctypes.byref(hm.Out(*[o.ctypes.data for o in outs]))]
    null = [ctypes.byref(hm.In()), args[1]]
    if hm.pools:
        ws = ctypes.byref(hm.Ws(*[p.ctypes.data for p in pools]))
        args.append(ws)
        null.append(ws)
    fn = hm.run_fn

    def call() -> int:
        return fn(*args)

    def call_null() -> int:
        return fn(*null)

    call.keep = keep  # type: ignore[attr-defined]
    if call() != 0 or call_null() == 0:
        raise RuntimeError("tvmgen_%s_run: unexpected status" % hm.arch.name)
    return {"ctypes": call, "ctypes-null": call_null}


def make_input(info: Dict[str, Any]) -> np.ndarray:
    """The fixed-seed input bench_models.py uses."""
    rng = np.random.default_rng(0)
    if info["dtype"] == "int8":
        return rng.integers(-128, 128, info["shape"], dtype=np.int8)
    return rng.standard_normal(info["shape"]).astype(np.float32)


def compile_times(path: Path, name: str, n: int, workdir: str) -> Dict[str, List[float]]:
    """Seconds of each stage, n times after one untimed warm-up."""
    out: Dict[str, List[float]] = {"load_model": [], "compile": [], "export": [], "total": []}
    for k in range(n + 1):
        t0 = time.perf_counter()
        mod = frontend.load_model(str(path))
        t1 = time.perf_counter()
        arch = codegen.compile(mod, name=name)
        t2 = time.perf_counter()
        arch.export(os.path.join(workdir, "export%d" % k))
        t3 = time.perf_counter()
        shutil.rmtree(os.path.join(workdir, "export%d" % k))
        del mod, arch
        for key, v in (("load_model", t1 - t0), ("compile", t2 - t1), ("export", t3 - t2),
                       ("total", t3 - t0)):
            if k:
                out[key].append(v)
    return out


def ram_of(arch: codegen.Archive) -> Dict[str, int]:
    info = arch.info
    outside = 0 if info["interface"]["io_in_pool"] else sum(
        t["size_bytes"] for t in info["inputs"] + info["outputs"])
    return {"workspace": arch.workspace_bytes,
            "lower_bound": int(info["memory"]["workspace_lower_bound_bytes"]),
            "io_outside": outside}


def same(a: Sequence[np.ndarray], b: Sequence[np.ndarray]) -> bool:
    return len(a) == len(b) and all(np.array_equal(np.asarray(x), np.asarray(y))
                                    for x, y in zip(a, b))


def max_diff(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(np.asarray(a, np.float64) - np.asarray(b, np.float64))))


def bench_model(path: Path, args: argparse.Namespace, workdir: str) -> Dict[str, Any]:
    name = path.stem.lower()
    res: Dict[str, Any] = {"model_bytes": path.stat().st_size}
    res["compile_s"] = compile_times(path, name, args.compiles, workdir)

    # RAM: both interface variants, and TFLite Micro's arena
    arch = codegen.compile(frontend.load_model(str(path)), name=name)
    pooled = codegen.compile(frontend.load_model(str(path)), name=name, io_in_pool=True)
    ram = {"default": ram_of(arch), "io_in_pool": ram_of(pooled)}
    res["macs"] = int(arch.info["macs"])
    res["constants_bytes"] = int(arch.info["memory"]["constants_in_flash_bytes"])
    del pooled
    x = make_input(arch.info["inputs"][0])
    arena = tflm_arena(path, x)
    micro_out = arena.pop("output") if arena else None
    res["tflite_micro_arena"] = arena

    # the archive as a shared library (ctypes) and as the driver program
    hm = HostModel(arch, workdir, cflags=("-O2",))
    exe = build_driver(hm, workdir)
    driver = Driver(exe, hm, [x], workdir)
    driver(0.0)
    ex = tn.runtime.Executor(arch.module)
    want = ex(x)
    want = [np.asarray(o) for o in (want if isinstance(want, tuple) else (want,))]
    res["matches_executor"] = {"driver": same(driver.outputs(), want),
                               "ctypes": same(hm.run(x), want)}
    if micro_out is not None:  # int8: equal bit for bit; float32: within rounding
        res["vs_tflite_micro"] = {"equal": same([micro_out], want[:1]),
                                  "max_abs_diff": max_diff(micro_out, want[0])}

    # flash
    objdir = os.path.join(workdir, "obj_" + name)
    os.makedirs(objdir, exist_ok=True)
    flash: Dict[str, Any] = {"driver_exe": berkeley_size(exe),
                             "host": object_sizes(hm.dir, objdir, os.environ.get("CC", "cc"),
                                                  HOST_FLAGS, "size")}
    if shutil.which(ARM_CC) and shutil.which("arm-none-eabi-size"):
        flash["cortex_m4"] = object_sizes(hm.dir, objdir, ARM_CC, ARM_FLAGS,
                                          "arm-none-eabi-size")
    res["flash"] = flash
    host = flash["host"]
    writable = sum(host[p]["data"] + host[p]["bss"] for p in ("generated", "crt"))
    for v in ram.values():
        v["writable_data"] = writable
        v["total"] = v["workspace"] + v["io_outside"] + writable
    res["ram"] = ram

    # latency, interleaved rounds
    rs: Dict[str, Callable[[], Any]] = {"executor": lambda: ex(x)}
    rs.update(ctypes_calls(hm, [x]))
    peers = runners(path, x)
    del peers["tvmnode"]  # bench_models' executor, after FuseOps only
    rs.update(peers)
    samples: Dict[str, List[float]] = {k: [] for k in ["aot"] + list(rs)}
    for _ in range(args.rounds):
        samples["aot"].append(driver(args.seconds))
        for k, fn in rs.items():
            samples[k].append(per_call(fn, args.seconds))
    res["latency_s"] = samples
    res["median_s"] = {k: median(v) for k, v in samples.items()}
    del rs, peers, ex, hm, arch
    return res


# ---- tables ----------------------------------------------------------------------------------

def fmt_int(n: Optional[int]) -> str:
    return "—" if n is None else "{:,}".format(n)


def ratio(a: Optional[float], b: Optional[float], digits: int = 3) -> str:
    return "—" if a is None or not b else "%.*f" % (digits, a / b)


def tables(results: Dict[str, Any]) -> str:
    ms = results["models"]
    out = ["RAM of ours (bytes): the workspace pool and its lower bound (the largest sum of "
           "the buffers alive at one step), with the inputs and outputs outside the pool "
           "(the default) and inside it; total = workspace + I/O outside the pool + .data/.bss "
           "of the generated code and the crt.", "",
           "| model | workspace | lower bound | I/O outside | .data+.bss | total "
           "| workspace, I/O in pool | lower bound, I/O in pool |",
           "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name, r in ms.items():
        d, p = r["ram"]["default"], r["ram"]["io_in_pool"]
        out.append("| %s | %s |" % (name, " | ".join(fmt_int(v) for v in (
            d["workspace"], d["lower_bound"], d["io_outside"], d["writable_data"], d["total"],
            p["workspace"], p["lower_bound"]))))
    out += ["", "Beside TFLite Micro's arena in the same run (head: activations, I/O included; "
            "tail: persistent data) and published figures.", "",
            "| model | ours workspace | ours total | TFLM head | TFLM tail | TFLM total "
            "| ÷ TFLM head | total ÷ TFLM total | total, I/O in pool ÷ TFLM total | published "
            "| ÷ published |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|"]
    for name, r in ms.items():
        d, p, a = r["ram"]["default"], r["ram"]["io_in_pool"], r["tflite_micro_arena"]
        pub = PUBLISHED.get(name)
        if pub is None:
            pcell, pratio = "—", "—"
        elif "cmsis_nn" in pub:
            pcell = "microTVM %s / with CMSIS-NN %s" % (fmt_int(pub["native"]),
                                                       fmt_int(pub["cmsis_nn"]))
            pratio = "%s / %s" % (ratio(d["workspace"], pub["native"]),
                                  ratio(d["workspace"], pub["cmsis_nn"]))
        else:
            pcell = "ST Edge AI Core %s (I/O in activations)" % fmt_int(
                pub["total_io_in_activations"])
            pratio = "%s (I/O in pool)" % ratio(p["total"], pub["total_io_in_activations"])
        out.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            name, fmt_int(d["workspace"]), fmt_int(d["total"]),
            fmt_int(a and a["head"]), fmt_int(a and a["tail"]), fmt_int(a and a["total"]),
            ratio(d["workspace"], a and a["head"]), ratio(d["total"], a and a["total"]),
            ratio(p["total"], a and a["total"]), pcell, pratio))

    peers = ["tflite-micro", "litert", "litert-ref"]
    out += ["", "Latency (µs per inference, median over rounds; ÷: ours (the C driver) ÷ peer).",
            "", "| model | ours (C driver) | ours via ctypes | ctypes call overhead | executor "
            "| TFLM | LiteRT | LiteRT ref | ÷ TFLM | ÷ LiteRT | ÷ LiteRT ref | ÷ executor |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, r in ms.items():
        m = r["median_s"]
        us = lambda k: "%.1f" % (1e6 * m[k]) if k in m else "—"  # noqa: E731
        cells = [us("aot"), us("ctypes"), "%.2f" % (1e6 * m["ctypes-null"]), us("executor")]
        cells += [us(k) for k in peers]
        cells += [ratio(m["aot"], m.get(k)) for k in peers + ["executor"]]
        out.append("| %s | %s |" % (name, " | ".join(cells)))

    arm = any("cortex_m4" in r["flash"] for r in ms.values())
    out += ["", "Flash (bytes). Host: x86-64 objects, `cc %s`; driver: `size` of the linked "
            "program; weights: the constants as metadata.json counts them (part of the generated "
            ".rodata). Cortex-M4: `%s %s`, objects only." % (
                " ".join(HOST_FLAGS), ARM_CC, " ".join(ARM_FLAGS)), "",
            "| model | driver text / data / bss | weights | generated .text | generated .rodata "
            "| crt .text | crt .rodata | data+bss |"
            + (" M4 generated .text | M4 generated .rodata | M4 crt .text | M4 crt .rodata "
               "| M4 data+bss |" if arm else ""),
            "|---|---:|---:|---:|---:|---:|---:|---:|" + ("---:|" * 5 if arm else "")]
    for name, r in ms.items():
        f = r["flash"]
        e, g, c = f["driver_exe"], f["host"]["generated"], f["host"]["crt"]
        cells = ["%s / %s / %s" % (fmt_int(e["text"]), fmt_int(e["data"]), fmt_int(e["bss"])),
                 fmt_int(r["constants_bytes"]), fmt_int(g["text"]), fmt_int(g["rodata"]),
                 fmt_int(c["text"]), fmt_int(c["rodata"]),
                 fmt_int(g["data"] + g["bss"] + c["data"] + c["bss"])]
        if arm:
            mg, mc = f["cortex_m4"]["generated"], f["cortex_m4"]["crt"]
            cells += [fmt_int(mg["text"]), fmt_int(mg["rodata"]), fmt_int(mc["text"]),
                      fmt_int(mc["rodata"]),
                      fmt_int(mg["data"] + mg["bss"] + mc["data"] + mc["bss"])]
        out.append("| %s | %s |" % (name, " | ".join(cells)))

    out += ["", "Compile time (ms, median): load_model, codegen.compile (passes, planning, C "
            "emission), export (writing the archive).", "",
            "| model | load_model | compile | export | total |", "|---|---:|---:|---:|---:|"]
    for name, r in ms.items():
        c = r["compile_s"]
        out.append("| %s | %s |" % (name, " | ".join(
            "%.1f" % (1e3 * median(c[k])) for k in ("load_model", "compile", "export", "total"))))
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default=os.environ.get("TVMNODE_MODELS", str(DEFAULT_MODELS)))
    ap.add_argument("--only", action="append", default=[],
                    help="a model file name (repeatable); default: all of them")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=0.3)
    ap.add_argument("--compiles", type=int, default=5)
    ap.add_argument("--out", default=".")
    ap.add_argument("--keep", default=None, help="build in this directory and keep it")
    args = ap.parse_args()
    mdir = Path(args.models)
    cc = os.environ.get("CC", "cc")
    results: Dict[str, Any] = {
        "machine": platform.processor() or platform.machine(),
        "python": platform.python_version(),
        "cc": run([cc, "--version"]).splitlines()[0],
        "arm_cc": (run([ARM_CC, "--version"]).splitlines()[0] if shutil.which(ARM_CC) else None),
        "host_flags": list(HOST_FLAGS), "arm_flags": list(ARM_FLAGS),
        "rounds": args.rounds, "seconds": args.seconds, "published": PUBLISHED, "models": {}}
    names = args.only or MODELS
    with tempfile.TemporaryDirectory(prefix="bench_aot") as tmp:
        workdir = args.keep or tmp
        os.makedirs(workdir, exist_ok=True)
        for name in names:
            path = mdir / name
            if not path.exists():
                continue
            print("%s ..." % name, file=sys.stderr, flush=True)
            results["models"][name] = bench_model(path, args, workdir)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "bench_aot.json").write_text(json.dumps(results, indent=1))
    text = tables(results)
    (out / "bench_aot.md").write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
