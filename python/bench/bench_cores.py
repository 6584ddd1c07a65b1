"""Instructions per inference of the compiled models on every Cortex-M core
of the target table (firmware/targets.txt: the M4, M33, M7 and M55 on
their qemu boards), beside the M4's.

Each model is compiled once with `--target cortex-m` (the layout every
core with the DSP extension takes) and built into firmware for each core
with firmware/common/run.py, with that core's flags (its row), at -O2
unless --opt says otherwise; each firmware runs one input from a fixed
seed. A row gives, per core: the instructions of one inference (SysTick
ticks under `-icount shift=0` times the row's instructions a tick: exact
to within a tick, and the same from run to run, so one run is the
figure), their ratio to the M4's, the flash (.text + .rodata) and the RAM
(.data + .bss + the stack the inference used), and whether the outputs
are the host executor's (int8: byte for byte; float32: the largest
distance in units in the last place, 0 when bit for bit).

Instructions are not cycles: qemu has no timing model, and the cores
differ most where this count cannot see (the M7 issues up to two
instructions a cycle; the M55's vector instructions run in beats). The
cycle estimate of run.py --cycles prices with the Cortex-M4's table and is
not applied to the M7 and the M55 (firmware/common/cycles.py says why).

The bundled models, and VWW when its file is given (--vww, default the
mlcommons/tiny snapshot under ../tflm-sources that bench/peers/tflm_m4.py
uses; skipped when absent). Writes bench_cores.json and bench_cores.md to
--out.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any, Dict, List, Sequence

import numpy as np

from tvmnode import codegen, frontend, runtime

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
from bench_device import load  # noqa: E402  (a script outside any package, as a module)
from bench_models import DEFAULT_MODELS  # noqa: E402

MODELS = [("kws", "kws_ref_model.tflite"), ("ic", "pretrainedResnet_quant.tflite"),
          ("ad", "ad01_int8.tflite"), ("ww", "str_ww_ref_model.tflite"),
          ("kws_f32", "kws_ref_model_float32.tflite"), ("ic_f32", "pretrainedResnet.tflite"),
          ("ad_f32", "ad01_fp32.tflite")]
VWW = ROOT.parent / "tflm-sources" / "mlcommons-tiny" / "benchmark" / "training" / \
    "visual_wake_words" / "trained_models" / "vww_96_int8.tflite"


def input_for(spec: Dict[str, Any]) -> np.ndarray:
    rng = np.random.default_rng(0)
    dtype = np.dtype(spec["dtype"])
    if dtype.kind in "iu":
        i = np.iinfo(dtype)
        return rng.integers(i.min, i.max, spec["shape"], endpoint=True).astype(dtype)
    return rng.standard_normal(spec["shape"]).astype(dtype)


def ulps(got: np.ndarray, want: np.ndarray) -> int:
    """The largest distance between float32 arrays in units in the last
    place (the same signs assumed, as the outputs have them), or -1 when a
    sign differs."""
    if np.any(np.signbit(got) != np.signbit(want)):
        return -1
    return int(np.abs(got.view(np.int32).astype(np.int64) - want.view(np.int32)).max())


def bench(fw: ModuleType, name: str, path: Path, work: str, targets: Sequence[str],
          opt: str) -> Dict[str, Any]:
    mod = frontend.load_model(str(path))
    arch = codegen.compile(mod, name=name, target="cortex-m")
    archive = arch.export(os.path.join(work, name))
    info = arch.info
    xs = [input_for(s) for s in info["inputs"]]
    files = []
    for s, x in zip(info["inputs"], xs):
        files.append(os.path.join(work, "%s_%s.npy" % (name, s["name"])))
        np.save(files[-1], x)
    outs = runtime.Executor(codegen.compile(mod, name=name).module)(*xs)
    outs = outs if isinstance(outs, tuple) else (outs,)
    ref = [np.array(o, copy=True) for o in outs]
    del arch, outs, mod
    row: Dict[str, Any] = {"model": name, "file": path.name, "macs": int(info["macs"]),
                           "opt": opt, "cores": {}}
    for t in targets:
        r = fw.build_and_run(archive, name, files, os.path.join(work, "fw-%s-%s" % (name, t)),
                             opt=opt, target=t, cache=os.path.join(work, "objs"), timeout=600)
        if not r.get("ok"):
            raise RuntimeError("%s on %s: the firmware failed: %s" % (name, t, r.get("log")))
        got = [np.array(r["outputs"][s["name"]]["values"], dtype=s["dtype"]).reshape(s["shape"])
               for s in info["outputs"]]
        if all(np.array_equal(g.view(np.uint8), w.view(np.uint8)) for g, w in zip(got, ref)):
            same = "yes"
        elif all(g.dtype == np.float32 for g in got):
            far = max(ulps(g, w) for g, w in zip(got, ref))
            same = "%d ulp" % far if far >= 0 else "**no** (signs)"
        else:
            same = "**no**"
        size = r["size"]
        row["cores"][t] = {
            "cpu": fw.get_target(t).cpu, "instructions": r["instructions"],
            "systick_ticks": r["systick_ticks"],
            "flash": size.get("text", 0) + size.get("rodata", 0),
            "ram": size.get("data", 0) + size.get("bss", 0) + r["run_stack_bytes"],
            "run_stack": r["run_stack_bytes"], "host_outputs": same}
        print("%-8s %-4s %12s instructions" % (name, t, "{:,}".format(r["instructions"])),
              flush=True)
    return row


def table(rows: List[Dict[str, Any]], targets: Sequence[str]) -> str:
    base = targets[0]
    others = list(targets[1:])
    head = ["model", "%s instructions" % base] + [
        "%s instructions (÷ %s)" % (t, base) for t in others] + ["outputs = host's"]
    out = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 2) + "---|"]
    for r in rows:
        c = r["cores"]
        cells = [r["model"], "{:,}".format(c[base]["instructions"])]
        for t in others:
            cells.append("{:,} ({:.3f})".format(c[t]["instructions"],
                                                c[t]["instructions"] / c[base]["instructions"]))
        marks = [c[t]["host_outputs"] for t in targets]
        cells.append(marks[0] if len(set(marks)) == 1 else ", ".join(
            "%s %s" % (t, m) for t, m in zip(targets, marks)))
        out.append("| " + " | ".join(cells) + " |")
    out += ["", "| model | " + " | ".join("%s flash / RAM" % t for t in targets) + " |",
            "|---|" + "---:|" * len(targets)]
    for r in rows:
        c = r["cores"]
        out.append("| %s | %s |" % (r["model"], " | ".join(
            "{:,} / {:,}".format(c[t]["flash"], c[t]["ram"]) for t in targets)))
    return "\n".join(out) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--models", default=str(DEFAULT_MODELS))
    ap.add_argument("--vww", default=str(VWW), help="vww_96_int8.tflite (skipped when absent)")
    ap.add_argument("--opt", default="-O2")
    ap.add_argument("--targets", default=None,
                    help="comma-separated rows of firmware/targets.txt (default: all, the "
                         "first one the base of the ratios)")
    ap.add_argument("--only", default=None, help="comma-separated model names")
    args = ap.parse_args()
    fw = load(ROOT / "firmware" / "common" / "run.py", "fw_common_run_cores")
    missing = fw.toolchain_missing()
    if missing:
        print("bench_cores: skipped: %s" % missing)
        return
    targets = args.targets.split(",") if args.targets else list(fw.targets())
    models = [(n, Path(args.models) / f) for n, f in MODELS] + [("vww", Path(args.vww))]
    if args.only:
        models = [(n, p) for n, p in models if n in args.only.split(",")]
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for name, path in models:
            if not path.exists():
                print("bench_cores: %s skipped (no %s)" % (name, path), flush=True)
                continue
            rows.append(bench(fw, name, path, work, targets, args.opt))
    md = table(rows, targets) if rows else "no model found\n"
    print(md)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "bench_cores.json"), "w") as f:
        json.dump({"opt": args.opt, "targets": targets, "models": rows}, f, indent=1)
    with open(os.path.join(args.out, "bench_cores.md"), "w") as f:
        f.write(md)


if __name__ == "__main__":
    main()
