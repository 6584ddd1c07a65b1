"""The int8 models (--float: the float32 ones) compiled to C beside LiteRT
with XNNPACK, LiteRT's reference kernels, onnxruntime and TFLite Micro,
on process CPU time, with the crt of this tree and, optionally, of
another one (a base commit), in one run. (Files of the crt
that only this tree has are added to the base's copy: the compiler lists
them in every archive; the base's code does not call them. The base's
archive is compiled without PackDenseWeights, whose layout its kernels do
not read; with --base-pack dense, with it for the dense layers alone, for
a base whose kernels read the packed dense layout but not the packed 1x1
convolution; with --base-pack 1x1, with it for the dense and 1x1 layers
but not the larger windows; with --base-pack all, the new archive
itself, for a base that reads them all. --pack-windows compiles the new
archive with codegen.PACK_WINDOW_WEIGHTS holding "host", the opt-in
packing of the larger windows.)

For each int8 model of ../shared/models (or --models DIR; --only NAME to
pick some), and VWW and the large ResNet of mlcommons/tiny (not bundled:
x86_peers.py finds or fetches them, pinned commit and sha256, and says
how to supply them where it cannot): codegen.compile once; the archive exported and bench_aot.py's
latency driver built (the generated C and the crt at `cc -std=c99 -O2`)
with this tree's crt sources ("new") and with --base-src's ("base"), the
driver's clock switched to CLOCK_PROCESS_CPUTIME_ID. The peers, one
thread each, timed on time.process_time in this process: LiteRT with its
default kernels (XNNPACK) and with its reference kernels
(BUILTIN_REF), TFLite Micro (the int8 models it runs) and onnxruntime on
the model converted by tf2onnx (x86_peers.py: the converter in its own
cached environment, the session on the CPU provider with its default
optimizations; --no-onnxruntime leaves it out; where a conversion or a
session fails, the table says why for that model).
--isa LEVEL (repeatable: avx2, sse2, portable, ...) times each tree's
driver again with the crt's ISA forms capped at LEVEL
(tn_crt_isa_limit; "new@LEVEL", "base@LEVEL"), beside the uncapped runs
("new", "base": the CPU's best).
--rounds interleaved rounds of about --seconds each (every driver and
every peer in each round, in reversed order every other round); every
figure is the median over rounds of the median per call. The drivers'
outputs are compared with TFLite Micro's, which they should equal bit for
bit, and onnxruntime's with the new driver's (exact, or the largest
difference); a float model's with LiteRT's, within a tolerance (the largest difference
over the range of LiteRT's output, at most 1e-4: the sums run in another
order; the float KWS, a hybrid model with int8 weights that TFLite Micro
refuses, is about 1e-2 away with or without the float forms). Prints a
table; writes bench_x86.json (every sample) and bench_x86.md
(--float: bench_x86_float.json and .md).

The whole comparison of issue 30, uncapped and with the AVX2 forms
forced, is one command (the binding of a build tree on PYTHONPATH,
onnxruntime, tflite-micro and ai-edge-litert installed, as
python/run_bench.sh does):

    python python/bench/bench_x86.py --isa avx2 --out DIR
"""
from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Sequence, Tuple

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import bench_aot  # noqa: E402
import x86_peers  # noqa: E402
from bench_aot import Driver, HostModel, build_driver, make_input, tflm_arena  # noqa: E402
from bench_models import DEFAULT_MODELS, peer_runners  # noqa: E402

from tvmnode import codegen, frontend  # noqa: E402

MODELS = ["kws_ref_model.tflite", "pretrainedResnet_quant.tflite", "ad01_int8.tflite",
          "str_ww_ref_model.tflite", "vww_96_int8.tflite", "pretrainedResnet_large_int8.tflite"]
FLOAT_MODELS = ["kws_ref_model_float32.tflite", "pretrainedResnet.tflite", "ad01_fp32.tflite",
                "vww_96_float.tflite"]
# the peers' columns: key, header
PEERS = [("litert", "LiteRT XNNPACK"), ("litert-ref", "LiteRT ref"),
         ("onnxruntime", "onnxruntime"), ("tflite-micro", "TFLite Micro")]
FLOAT_TOLERANCE = 1e-4

# the driver timed on the process's CPU clock; it caps the crt's ISA forms
# at the level TN_BENCH_ISA names (a number, tn_crt_isa_limit), where the
# crt has the cap (weak: a base tree's crt may not)
bench_aot.DRIVER_C = bench_aot.DRIVER_C.replace(
    "CLOCK_MONOTONIC", "CLOCK_PROCESS_CPUTIME_ID").replace(
    "int main(int argc, char **argv) {",
    "extern int tn_crt_isa_limit(int) __attribute__((weak));\n"
    "int main(int argc, char **argv) {").replace(
    "  seconds = atof(argv[1]);\n",
    "  seconds = atof(argv[1]);\n"
    "  if (getenv(\"TN_BENCH_ISA\") && tn_crt_isa_limit)\n"
    "    tn_crt_isa_limit(atoi(getenv(\"TN_BENCH_ISA\")));\n", 1)
assert "TN_BENCH_ISA" in bench_aot.DRIVER_C

ISA_NAMES = {"portable": 0, "sse2": 1, "sse41": 2, "avx2": 3, "avx512": 4, "avx512bw": 4,
             "vnni": 5, "avx512vnni": 5,
             # TN_CRT_ISA_AVX2_VNNI: AVX2 with the AVX-VNNI flag (0x100); a
             # base crt without it reads AVX2 alone (see below)
             "avxvnni": 0x103}


class IsaDriver:
    """A latency driver run with the crt's ISA forms capped at `level`."""

    def __init__(self, d: Driver, level: int) -> None:
        self.d, self.level = d, level

    def __call__(self, seconds: float) -> float:
        old = os.environ.get("TN_BENCH_ISA")
        os.environ["TN_BENCH_ISA"] = str(self.level)
        try:
            return self.d(seconds)
        finally:
            if old is None:
                del os.environ["TN_BENCH_ISA"]
            else:
                os.environ["TN_BENCH_ISA"] = old

    def outputs(self) -> List[np.ndarray]:
        return self.d.outputs()


def cpu_per_call(fn: Callable[[], Any], seconds: float) -> float:
    """Median CPU seconds per call over batches of about 20 ms."""
    fn()
    t0 = time.process_time()
    fn()
    one = max(time.process_time() - t0, 1e-6)
    batch = max(1, int(0.02 / one))
    samples: List[float] = []
    end = time.process_time() + seconds
    while time.process_time() < end or len(samples) < 5:
        t0 = time.process_time()
        for _ in range(batch):
            fn()
        samples.append((time.process_time() - t0) / batch)
    return statistics.median(samples)


def cpu_info() -> Dict[str, str]:
    """The first CPU's model name and flags, from /proc/cpuinfo."""
    out: Dict[str, str] = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, val = line.partition(":")
                if key.strip() in ("model name", "flags"):
                    out.setdefault(key.strip(), val.strip())
    except OSError:
        pass
    return out


def cpu_name() -> str:
    return cpu_info().get("model name") or platform.processor() or platform.machine()


def cpu_flags(wanted: Sequence[str] = ("avx2", "avx512f", "avx512bw", "avx512_vnni",
                                       "avx_vnni")) -> Dict[str, bool]:
    """Which of the SIMD flags that choose the forms (ours and the peers')
    the CPU has."""
    have = set(cpu_info().get("flags", "").split())
    return {f: f in have for f in wanted}


def driver_for(arch: codegen.Archive, src: str, x: np.ndarray, workdir: str) -> Driver:
    """The latency driver of arch with the crt of the source tree src."""
    old = os.environ.get("TVMNODE_SOURCE_DIR")
    os.environ["TVMNODE_SOURCE_DIR"] = src
    try:
        os.makedirs(workdir, exist_ok=True)
        hm = HostModel(arch, workdir, cflags=("-O2",))
        exe = build_driver(hm, workdir)
    finally:
        if old is None:
            del os.environ["TVMNODE_SOURCE_DIR"]
        else:
            os.environ["TVMNODE_SOURCE_DIR"] = old
    d = Driver(exe, hm, [x], workdir)
    d(0.0)
    return d


def base_tree(base: str, new: str, workdir: str) -> str:
    """A copy of base's crt with the files only new has (sources of forms
    that base's code never calls, which the compiler of this tree lists
    in every archive) added from new."""
    dst = os.path.join(workdir, "base-src")
    crt = os.path.join(dst, "runtime", "crt")
    if not os.path.isdir(crt):
        shutil.copytree(os.path.join(base, "runtime", "crt"), crt)
        new_crt = os.path.join(new, "runtime", "crt")
        for root, _, files in os.walk(new_crt):
            for f in files:
                rel = os.path.relpath(os.path.join(root, f), new_crt)
                if not os.path.exists(os.path.join(crt, rel)):
                    os.makedirs(os.path.dirname(os.path.join(crt, rel)), exist_ok=True)
                    shutil.copy(os.path.join(new_crt, rel), os.path.join(crt, rel))
    return dst


def compiled_for_base(path: Path, name: str, pack: str = "none") -> codegen.Archive:
    """The model compiled as for a base tree whose kernels read [N, K]
    dense weights only (pack "none": PackDenseWeights off,
    codegen.PACK_DENSE_WEIGHTS empty while it compiles), or packed dense
    weights but no packed convolution ("dense": codegen.PACK_CONV_WEIGHTS
    empty), or packed dense and 1x1 layers but no larger window ("1x1":
    codegen.PACK_WINDOW_WEIGHTS empty); a field left 0 is not written, so
    the generated C compiles against the base's headers."""
    saved = (codegen.PACK_DENSE_WEIGHTS, codegen.PACK_CONV_WEIGHTS,
             codegen.PACK_WINDOW_WEIGHTS, codegen.PARALLEL_TARGETS)
    # nor calls through the crt's parallel hook (one thread is timed, and
    # the hook costs nothing there; a base without it could not compile them)
    codegen.PARALLEL_TARGETS = ()
    codegen.PACK_WINDOW_WEIGHTS = ()
    if pack != "1x1":
        codegen.PACK_CONV_WEIGHTS = ()
    if pack == "none":
        codegen.PACK_DENSE_WEIGHTS = {}
    try:
        return codegen.compile(frontend.load_model(str(path)), name=name)
    finally:
        (codegen.PACK_DENSE_WEIGHTS, codegen.PACK_CONV_WEIGHTS,
         codegen.PACK_WINDOW_WEIGHTS, codegen.PARALLEL_TARGETS) = saved


def peers(path: Path, x: np.ndarray, ours: np.ndarray, use_ort: bool
          ) -> Tuple[Dict[str, Callable[[], Any]], Dict[str, Any]]:
    """The peers' calls on input x (bench_models.peer_runners, and
    onnxruntime unless use_ort is false), and what the table says of those
    that could not run (`skipped`) and of onnxruntime's output
    (`onnxruntime`)."""
    notes: Dict[str, Any] = {"skipped": {}}
    calls = peer_runners(path, x, notes["skipped"])
    if use_ort:
        r, info = x86_peers.onnxruntime_column(path, x, ours)
        if r is None:
            notes["skipped"]["onnxruntime"] = info["skipped"]
        else:
            calls["onnxruntime"] = r
            notes["onnxruntime"] = info
    return calls, notes


def bench_model(path: Path, args: argparse.Namespace, workdir: str) -> Dict[str, Any]:
    from ai_edge_litert import interpreter as litert

    name = path.stem.lower()
    saved = codegen.PACK_WINDOW_WEIGHTS
    if args.pack_windows:
        codegen.PACK_WINDOW_WEIGHTS = ("host",)
    try:
        arch = codegen.compile(frontend.load_model(str(path)), name=name)
    finally:
        codegen.PACK_WINDOW_WEIGHTS = saved
    x = make_input(arch.info["inputs"][0])
    is_float = x.dtype == np.float32
    arena = None if is_float else tflm_arena(path, x)
    micro = arena.pop("output") if arena else None
    sides = {"new": args.new_src}
    archs = {"new": arch}
    if args.base_src:
        sides["base"] = base_tree(args.base_src, args.new_src, workdir)
        archs["base"] = (archs["new"] if args.base_pack == "all"
                         else compiled_for_base(path, name, args.base_pack))
    built = {k: driver_for(archs[k], src, x, os.path.join(workdir, k))
             for k, src in sides.items()}
    drivers: Dict[str, Any] = dict(built)
    for isa in args.isa:  # each tree's crt again, capped at each --isa
        for k in built:
            # a crt older than the AVX-VNNI cap takes 0x103 as no cap: the
            # base is capped at its AVX2 forms there
            level = ISA_NAMES[isa] & (0xff if k == "base" else -1)
            drivers[k + "@" + isa] = IsaDriver(built[k], level)
    res: Dict[str, Any] = {"macs": int(arch.info["macs"])}
    if micro is not None:
        res["equal_to_tflite_micro"] = {}
        for k, d in drivers.items():
            d(0.0)
            res["equal_to_tflite_micro"][k] = bool(np.array_equal(d.outputs()[0], micro))
    if is_float:  # largest difference from LiteRT over its output's range
        it = litert.Interpreter(model_path=str(path), num_threads=1)
        it.allocate_tensors()
        it.set_tensor(it.get_input_details()[0]["index"], x)
        it.invoke()
        ref = it.get_tensor(it.get_output_details()[0]["index"]).astype(np.float64)
        span = max(float(ref.max() - ref.min()), 1e-30)
        res["error_vs_litert"] = {}
        for k, d in drivers.items():
            d(0.0)
            res["error_vs_litert"][k] = float(np.abs(d.outputs()[0] - ref).max()) / span
    built["new"](0.0)
    calls, notes = peers(path, x, built["new"].outputs()[0], not args.no_onnxruntime)
    res.update(notes)
    samples: Dict[str, List[float]] = {k: [] for k in list(drivers) + list(calls)}
    for r in range(args.rounds):
        order = list(drivers) + list(calls)
        for k in (order if r % 2 == 0 else reversed(order)):
            if k in drivers:
                samples[k].append(drivers[k](args.seconds))
            else:
                samples[k].append(cpu_per_call(calls[k], args.seconds))
    res["cpu_s"] = samples
    res["median_s"] = {k: statistics.median(v) for k, v in samples.items()}
    return res


def table(results: Dict[str, Any]) -> str:
    models = results["models"]
    peer_keys = [k for k, _ in PEERS if any(k in r["median_s"] for r in models.values())]
    sides: List[str] = []
    for r in models.values():
        sides += [k for k in r["median_s"] if k not in sides and k not in dict(PEERS)]
    ratio_peers = [k for k in ("litert", "onnxruntime") if k in peer_keys]
    extra = [k for k in ("litert-ref", "tflite-micro") if k in peer_keys]
    head = dict(PEERS)
    short = {"litert": "XNNPACK", "onnxruntime": "ORT", "litert-ref": "LiteRT ref",
             "tflite-micro": "TFLM"}
    cols = (["%s µs" % k for k in sides] + ["%s µs" % head[k] for k in peer_keys] +
            ["%s ÷ %s" % (k, short[p]) for k in sides for p in ratio_peers] +
            ["new ÷ %s" % short[p] for p in extra] +
            (["new ÷ base"] if "base" in sides else []))
    flags = results.get("cpu_flags", {})
    rows = ["Process CPU time per inference, one thread, median of %d rounds; %s (%s); "
            "ratio = ours ÷ the peer; new@LEVEL: the new crt with its ISA forms capped at "
            "LEVEL (tn_crt_isa_limit; base@LEVEL the base's), new: uncapped; the peers "
            "choose their own forms at run time."
            % (results["rounds"], results["cpu"],
               ", ".join("%s %s" % (f, "yes" if v else "no") for f, v in flags.items())
               or "flags unknown"), "",
            "| model | MACs | " + " | ".join(cols) +
            " | = TFLM (float: largest difference / range of LiteRT's output) "
            "| onnxruntime's output against ours |",
            "|---|---:|" + "---:|" * len(cols) + "---|---|"]
    notes: List[str] = []

    def us(m: Dict[str, float], k: str) -> str:
        return "%.1f" % (m[k] * 1e6) if k in m else "—"

    def ratio(m: Dict[str, float], a: str, b: str) -> str:
        return "%.2f" % (m[a] / m[b]) if a in m and b in m else "—"

    for name, r in models.items():
        m = r["median_s"]
        eq = r.get("equal_to_tflite_micro", {})
        err = r.get("error_vs_litert", {})
        cells = ([us(m, k) for k in sides] + [us(m, k) for k in peer_keys] +
                 [ratio(m, k, p) for k in sides for p in ratio_peers] +
                 [ratio(m, "new", p) for p in extra] +
                 ([ratio(m, "new", "base")] if "base" in sides else []))
        ort = r.get("onnxruntime")
        rows.append("| %s | %s | %s | %s | %s |" % (
            name, "{:,}".format(r["macs"]), " | ".join(cells),
            ", ".join("%s %s" % (k, "yes" if v else "NO") for k, v in eq.items()) or
            ", ".join("%s %.1e%s" % (k, v, "" if v <= FLOAT_TOLERANCE else " TOO FAR")
                      for k, v in err.items()) or "—",
            x86_peers.agreement(ort["agreement"]) if ort else "—"))
        notes += ["%s, %s: %s" % (name, k, why) for k, why in r.get("skipped", {}).items()]
    notes += ["%s: skipped: %s" % (name, why) for name, why in results.get("skipped", {}).items()]
    versions = results.get("versions", {})
    if versions:
        notes.append("Versions: " + ", ".join("%s %s" % kv for kv in versions.items()))
    return "\n".join(rows + ([""] + ["- " + n for n in notes] if notes else []))


def versions(args: argparse.Namespace) -> Dict[str, str]:
    """The peers' package versions in this environment, and the converter's pins."""
    out: Dict[str, str] = {}
    for pkg in ("ai-edge-litert", "tflite-micro") + (() if args.no_onnxruntime
                                                      else ("onnxruntime",)):
        try:
            out[pkg] = importlib.metadata.version(pkg)
        except importlib.metadata.PackageNotFoundError:
            out[pkg] = "not installed"
    if not args.no_onnxruntime:
        out["converter"] = "%s, opset %d" % (" + ".join(x86_peers.CONVERTER), x86_peers.OPSET)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default=os.environ.get("TVMNODE_MODELS", str(DEFAULT_MODELS)))
    ap.add_argument("--only", action="append", default=[],
                    help="a model file name (repeatable); default: the int8 models")
    ap.add_argument("--float", action="store_true", help="the float32 models by default")
    ap.add_argument("--new-src", default=str(HERE.parents[1]))
    ap.add_argument("--base-src", default=None, help="a source tree to compare with")
    ap.add_argument("--base-pack", choices=["none", "dense", "1x1", "all"], default="none",
                    help="the weights the base's kernels read packed: none (before "
                         "PackDenseWeights), the dense layers' (before the 1x1 "
                         "convolutions' were), the dense and 1x1 layers' (before "
                         "the larger windows' were), or all (as this tree packs them)")
    ap.add_argument("--pack-windows", action="store_true",
                    help="the new archive with its larger windows' weights packed too "
                         "(codegen.PACK_WINDOW_WEIGHTS: the opt-in for AVX-512 VNNI hosts)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=0.3)
    ap.add_argument("--keep", default=None, help="build in this directory and keep it")
    ap.add_argument("--out", default=".")
    ap.add_argument("--isa", action="append", default=[], choices=sorted(ISA_NAMES),
                    help="also time the new crt with its ISA forms capped at this level "
                    "(repeatable; the uncapped run is always timed)")
    ap.add_argument("--no-onnxruntime", action="store_true",
                    help="leave out the onnxruntime column (no conversion, no install)")
    args = ap.parse_args()
    results: Dict[str, Any] = {"cpu": cpu_name(), "cpu_flags": cpu_flags(),
                               "rounds": args.rounds, "isa": args.isa,
                               "seconds": args.seconds, "versions": versions(args),
                               "models": {}, "skipped": {}}
    with tempfile.TemporaryDirectory(prefix="bench_x86") as tmp:
        workdir = args.keep or tmp
        for name in args.only or (FLOAT_MODELS if args.float else MODELS):
            found, why = x86_peers.find_model(name, Path(args.models))
            if found is None:
                print("bench_x86: skipped %s" % why, file=sys.stderr, flush=True)
                results["skipped"][name] = why
                continue
            path = found
            print("%s ..." % name, file=sys.stderr, flush=True)
            results["models"][name] = bench_model(path, args, workdir)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = "bench_x86_float" if args.float else "bench_x86"
    (out / (stem + ".json")).write_text(json.dumps(results, indent=1))
    text = table(results)
    (out / (stem + ".md")).write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
