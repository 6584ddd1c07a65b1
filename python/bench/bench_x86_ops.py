"""Where a compiled int8 model's time goes, operator by operator, beside
onnxruntime's own per-node profile of its tf2onnx conversion: issue 30's
per-layer table for a model whose whole-model ratio misses a target.

Ours: the model compiled as bench_x86 compiles it (the host archive, the
crt of this tree, `cc -std=c99 -O2`), with each operator call of the
generated entry point timed on the thread's CPU clock
(CLOCK_THREAD_CPUTIME_ID, two reads a call: about 0.2 µs each, counted in
the operator's figure) over the latency driver's --seconds of runs; the
figure is the mean per run over every call. The whole-model median comes
from the same driver without the timers.

onnxruntime: one thread, its default optimizations, profiling on
(SessionOptions.enable_profiling); each node's kernel time is the median
of its "_kernel_time" events over the runs. The profiler costs each node
time of its own, so the sum of the nodes exceeds the unprofiled median
printed beside it; the nodes' shares are what to read.

The compute layers (convolutions, fully connected, ADD) are paired in the
order both run them; the rest of each side is summed. --isa caps our ISA
forms (tn_crt_isa_limit) as bench_x86 does. Prints a table; writes
bench_x86_ops.json and .md.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Tuple

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import x86_peers  # noqa: E402
from bench_aot import Driver, HostModel, build_driver, make_input  # noqa: E402
from bench_models import DEFAULT_MODELS  # noqa: E402
from bench_x86 import ISA_NAMES, cpu_name, cpu_per_call  # noqa: E402

from tvmnode import codegen, frontend  # noqa: E402

DEFAULT = ["kws_ref_model.tflite", "vww_96_int8.tflite",
           "pretrainedResnet_large_int8.tflite"]
# the compute layers: our operators and onnxruntime's nodes (the ADDs and
# the rest of each side are summed)
OURS_LAYERS = ("conv2d_s8", "dense_s8")
ORT_LAYERS = ("QLinearConv", "Conv", "ConvInteger", "FusedConv", "QLinearMatMul",
              "MatMulInteger", "MatMul", "Gemm", "QGemm")

CALL = re.compile(r"st = (tvmgen_\w+?_op(\d+)_(\w+))\(in, out, scratch\);")

TIMERS = r"""#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double tn_ops_ns[@N@];
static long tn_ops_calls[@N@];
static const char *const tn_ops_names[@N@] = {@NAMES@};
static double tn_ops_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}
static void tn_ops_dump(void) {
  for (int i = 0; i < @N@; i++)
    fprintf(stderr, "TNOP %d %s %.1f %ld\n", i, tn_ops_names[i], tn_ops_ns[i],
            tn_ops_calls[i]);
}
__attribute__((constructor)) static void tn_ops_init(void) { atexit(tn_ops_dump); }
"""


def instrument(archive: str) -> List[Tuple[int, str]]:
    """Time every operator call of the archive's entry point (the generated
    file that holds the calls); returns the operators, in call order, as
    (index, kind)."""
    gen = os.path.join(archive, "codegen", "host", "src")
    for f in sorted(os.listdir(gen)):
        path = os.path.join(gen, f)
        text = open(path).read()
        calls = CALL.findall(text)
        if not calls:
            continue
        ops = [(int(k), kind) for _, k, kind in calls]
        pos = {k: i for i, (k, _) in enumerate(ops)}

        def timed(m: "re.Match[str]") -> str:
            i = pos[int(m.group(2))]
            return ("{ const double t0_ = tn_ops_now(); %s tn_ops_ns[%d] += tn_ops_now() - t0_; "
                    "tn_ops_calls[%d]++; }" % (m.group(0), i, i))

        head = (TIMERS.replace("@N@", str(len(ops)))
                .replace("@NAMES@", ", ".join('"%s"' % kind for _, kind in ops)))
        with open(path, "w") as out:
            out.write(head + CALL.sub(timed, text))
        return ops
    raise ValueError("bench_x86_ops: no operator call in %s" % gen)


GEOM = re.compile(r"static const \w+ (tvmgen_\w+?_params(\d+)) = \{\s*\.g = \{(.*?)\}", re.S)
USES = re.compile(r"int32_t tvmgen_\w+?_op(\d+)_\w+\(const void \*const \*in, void \*out, "
                  r"void \*scratch\) \{\s*return [^;]*?&tvmgen_\w+?_params(\d+)\b")


def signature(h: int, w: int, c: int, kh: int, kw: int, cin: int, dw: bool,
              ih: int) -> str:
    """A convolution layer's label: window, output size, channels, stride."""
    s = round(ih / h) if h else 1
    return "%dx%d %dx%d %d->%d%s%s" % (kh, kw, h, w, cin, c, " dw" if dw else "",
                                      " s%d" % s if s > 1 else "")


def our_layers(archive: str) -> Dict[int, str]:
    """Operator index -> the label of its convolution (signature), from the
    geometry the generated code passes it."""
    gen = os.path.join(archive, "codegen", "host", "src")
    text = "".join(open(os.path.join(gen, f)).read() for f in sorted(os.listdir(gen))
                   if f.endswith(".c"))
    geo: Dict[int, Dict[str, int]] = {}
    for _, k, body in GEOM.findall(text):
        geo[int(k)] = {m.group(1): int(m.group(2))
                       for m in re.finditer(r"\.(\w+) = (-?\d+),", body)}
    out: Dict[int, str] = {}
    for op, k in USES.findall(text):
        g = geo.get(int(k))
        if g and "out_c" in g:
            out[int(op)] = signature(g["out_h"], g["out_w"], g["out_c"], g["k_h"], g["k_w"],
                                     g["in_c"], g["groups"] > 1, g["in_h"])
    return out


def ort_layer(args: Dict[str, Any]) -> str:
    """An onnxruntime convolution node's label from its shapes, "" for
    another node. A Conv lists its weight (OIHW; NCHW data). A QLinearConv
    of the NHWC layout onnxruntime makes on x86 does not (it packed the
    weight at load): its window reads "?x?", its output channels come
    from its per-channel scale or its bias, and depthwise is not told."""
    try:
        ins = [list(d.values())[0] for d in args.get("input_type_shape", [])]
        out = list(args["output_type_shape"][0].values())[0]
    except (KeyError, IndexError, AttributeError):
        return ""
    op = args.get("op_name")
    if len(out) != 4 or not ins or len(ins[0]) != 4:
        return ""
    x = ins[0]
    if op == "QLinearConv" and (len(ins) < 4 or len(ins[3]) != 4):
        m = next((v[0] for v in (ins[3:4] + ins[8:9]) if len(v) == 1), None)
        if m is None or out[3] != m:
            return ""
        return "?x?" + signature(out[1], out[2], m, 0, 0, x[3], False, x[1])[3:]
    wi = 3 if op == "QLinearConv" else 1
    if len(ins) <= wi or len(ins[wi]) != 4:
        return ""
    m, cg, kh, kw = ins[wi]
    return signature(out[2], out[3], m, kh, kw, x[1], cg == 1 and x[1] == m and m > 1, x[2])


def same_layer(ours_label: str, ort_label: str) -> bool:
    """Whether an onnxruntime label names our layer (a window of "?x?"
    matches any, and then depthwise is not told)."""
    if ort_label.startswith("?x? "):
        return ours_label.split(" ", 1)[-1].replace(" dw", "") == ort_label[4:]
    return ours_label == ort_label


def ours(arch: codegen.Archive, x: np.ndarray, seconds: float, level: int, workdir: str
         ) -> Dict[str, Any]:
    pdir, tdir = os.path.join(workdir, "plain"), os.path.join(workdir, "timed")
    hp = HostModel(arch, pdir, cflags=("-O2",))
    plain = Driver(build_driver(hp, pdir), hp, [x], pdir)
    hm = HostModel(arch, tdir, cflags=("-O2",))
    ops = instrument(hm.dir)
    labels = our_layers(hm.dir)
    exe = build_driver(hm, tdir)
    timed = Driver(exe, hm, [x], tdir)
    env = dict(os.environ, TN_BENCH_ISA=str(level))
    whole = []
    for _ in range(3):
        whole.append(float(subprocess.run([plain.exe, "%g" % seconds, *plain.ins, *plain.outs],
                                          capture_output=True, text=True, check=True,
                                          env=env).stdout.split()[0]) * 1e-3)
    proc = subprocess.run([exe, "%g" % seconds, *timed.ins, *timed.outs],
                          capture_output=True, text=True, check=True, env=env)
    per: List[Dict[str, Any]] = []
    for line in proc.stderr.splitlines():
        f = line.split()
        if len(f) == 5 and f[0] == "TNOP":
            k = ops[len(per)][0]
            per.append({"op": f[2], "layer": labels.get(k, ""),
                        "us": float(f[3]) / max(int(f[4]), 1) * 1e-3})
    if len(per) != len(ops):
        raise RuntimeError("bench_x86_ops: %d operator times for %d operators"
                           % (len(per), len(ops)))
    return {"whole_us": statistics.median(whole), "ops": per,
            "macs": int(arch.info["macs"])}


def ort(path: Path, x: np.ndarray, runs: int, workdir: str) -> Dict[str, Any]:
    import onnxruntime as rt

    onnx_path, why = x86_peers.to_onnx(path)
    if onnx_path is None:
        return {"skipped": why}
    r = x86_peers.OrtRunner(onnx_path, x)
    whole = [cpu_per_call(r, 0.05) for _ in range(5)]
    so = rt.SessionOptions()
    so.intra_op_num_threads = so.inter_op_num_threads = 1
    so.enable_profiling = True
    so.profile_file_prefix = os.path.join(workdir, "ort")
    sess = rt.InferenceSession(str(onnx_path), so, providers=["CPUExecutionProvider"])
    name = sess.get_inputs()[0].name
    xin = r.x
    for _ in range(runs):
        sess.run(None, {name: xin})
    events = json.load(open(sess.end_profiling()))
    order: List[Tuple[str, str]] = []
    durs: Dict[Tuple[str, str], List[float]] = {}
    shapes: Dict[Tuple[str, str], str] = {}
    for e in events:
        if e.get("cat") != "Node" or not e.get("name", "").endswith("_kernel_time"):
            continue
        key = (e["name"][:-len("_kernel_time")], e.get("args", {}).get("op_name", "?"))
        if key not in durs:
            durs[key] = []
            order.append(key)
            shapes[key] = ort_layer(e.get("args", {}))
        durs[key].append(float(e["dur"]))
    nodes = [{"op": op, "node": n, "layer": shapes[(n, op)],
              "us": statistics.median(durs[(n, op)])} for n, op in order]
    return {"whole_us": statistics.median(whole) * 1e6, "ops": nodes, "version": rt.__version__}


def pair(o: Dict[str, Any], p: Dict[str, Any]) -> List[Tuple[str, float, str, float]]:
    """Our compute layers in order, each beside onnxruntime's first
    unpaired node of the same label (its convolutions by shape; a dense
    layer beside the next matrix product); onnxruntime's unpaired ones
    after them; then the rest of each side summed."""
    a = [d for d in o["ops"] if d["op"] in OURS_LAYERS]
    b = [d for d in p.get("ops", []) if d["op"] in ORT_LAYERS]
    used = [False] * len(b)
    rows: List[Tuple[str, float, str, float]] = []
    for d in a:
        j = next((i for i, e in enumerate(b) if not used[i] and (
            same_layer(d["layer"], e.get("layer", "")) if d.get("layer")
            else not e.get("layer"))), None)
        name = "%s %s" % (d["op"], d.get("layer", "")) if d.get("layer") else d["op"]
        if j is None:
            rows.append((name, d["us"], "—", float("nan")))
        else:
            used[j] = True
            rows.append((name, d["us"], b[j]["op"], b[j]["us"]))
    for i, e in enumerate(b):
        if not used[i]:
            rows.append(("—", float("nan"), "%s %s" % (e["op"], e.get("layer", "")), e["us"]))
    rest_a = sum(d["us"] for d in o["ops"] if d["op"] not in OURS_LAYERS)
    rest_b = sum(d["us"] for d in p.get("ops", []) if d["op"] not in ORT_LAYERS)
    rows.append(("the rest", rest_a, "the rest", rest_b))
    return rows


def table(name: str, o: Dict[str, Any], p: Dict[str, Any]) -> str:
    lines = ["### %s" % name, "",
             "ours: %.1f µs a run (median, no timers); operators timed: %.1f µs. "
             "onnxruntime: %s." % (
                 o["whole_us"], sum(d["us"] for d in o["ops"]),
                 p["skipped"] if "skipped" in p else
                 "%.1f µs a run (median, no profiler); nodes profiled: %.1f µs" % (
                     p["whole_us"], sum(d["us"] for d in p["ops"]))), "",
             "| # | ours | µs | share | onnxruntime | µs (profiled) | share |",
             "|---:|---|---:|---:|---|---:|---:|"]
    ta = sum(d["us"] for d in o["ops"]) or 1.0
    tb = sum(d["us"] for d in p.get("ops", [])) or 1.0
    for i, (ka, ua, kb, ub) in enumerate(pair(o, p)):
        fa = "—" if ua != ua else "%.1f" % ua
        fb = "—" if ub != ub else "%.1f" % ub
        sa = "" if ua != ua else "%.0f %%" % (100 * ua / ta)
        sb = "" if ub != ub else "%.0f %%" % (100 * ub / tb)
        lines.append("| %s | %s | %s | %s | %s | %s | %s |" % (
            i + 1 if ka != "the rest" else "", ka, fa, sa, kb, fb, sb))
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default=os.environ.get("TVMNODE_MODELS", str(DEFAULT_MODELS)))
    ap.add_argument("--only", action="append", default=[],
                    help="a model file name (default: %s)" % ", ".join(DEFAULT))
    ap.add_argument("--seconds", type=float, default=1.0)
    ap.add_argument("--runs", type=int, default=500, help="onnxruntime's profiled runs")
    ap.add_argument("--isa", choices=sorted(ISA_NAMES), default="vnni")
    ap.add_argument("--out", default=".")
    args = ap.parse_args()
    results: Dict[str, Any] = {"cpu": cpu_name(), "models": {}}
    parts = ["Per operator, one thread; %s; our ISA forms capped at %s." % (
        results["cpu"], args.isa)]
    for name in args.only or DEFAULT:
        path, why = x86_peers.find_model(name, Path(args.models))
        if path is None:
            parts.append("- %s: skipped: %s" % (name, why))
            continue
        with tempfile.TemporaryDirectory(prefix="bench_x86_ops") as tmp:
            arch = codegen.compile(frontend.load_model(str(path)), name=path.stem.lower())
            x = make_input(arch.info["inputs"][0])
            o = ours(arch, x, args.seconds, ISA_NAMES[args.isa], tmp)
            p = ort(path, x, args.runs, tmp)
        results["models"][name] = {"ours": o, "onnxruntime": p}
        parts.append(table(name, o, p))
    text = "\n\n".join(parts) + "\n"
    print(text)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "bench_x86_ops.json"), "w") as f:
        json.dump(results, f, indent=1)
    with open(os.path.join(args.out, "bench_x86_ops.md"), "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
