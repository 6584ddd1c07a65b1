"""The compiled models on the emulated Cortex-M4 and in wasm32, beside the
published figures of other tools on a real Cortex-M4.

Per bundled model (int8, and the float anomaly detector):

- Cortex-M4 (qemu mps2-an386, firmware/common and firmware/m4): the
  firmware's RAM (.data + .bss, which hold the pools and buffers, plus
  the stack one inference used, painted and scanned), its flash (.text + .rodata: code and
  constants) and the crt's code alone, and the instructions one inference
  executes (SysTick ticks x 40 under `-icount shift=0`), at -Os and -O2.
  Instructions are not cycles: qemu has no timing model, and a real M4
  spends more than one cycle on loads, multiplies and branches, so these
  counts are a lower bound on cycles, not a latency.
- The published latency of TFLite Micro, microTVM with CMSIS-NN and
  X-CUBE-AI on a real Cortex-M4 at 120 MHz (MLPerf Tiny v0.5-era results,
  as quoted by the project's issue), in ms and the same in cycles.
- wasm32 (firmware/wasm): the size of the .wasm.

Writes bench_device.json and bench_device.md to --out.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any, Dict, List, Optional

import numpy as np

from tvmnode import codegen, frontend

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
from bench_models import DEFAULT_MODELS  # noqa: E402

# (ms at 120 MHz): TFLite Micro, microTVM + CMSIS-NN, X-CUBE-AI
PUBLISHED = {"kws": (181.9, 99.8, 75.1), "vww": (600.6, 301.2, 230.5),
             "ic": (704.2, 389.6, 226.9), "ad": (10.05, 8.6, 7.6)}
MODELS = [("kws", "kws_ref_model.tflite"), ("ic", "pretrainedResnet_quant.tflite"),
          ("ad", "ad01_int8.tflite"), ("ww", "str_ww_ref_model.tflite"),
          ("ad_f32", "ad01_fp32.tflite")]


def load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, str(path))
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def input_for(info: Dict[str, Any]) -> np.ndarray:
    rng = np.random.default_rng(0)
    i = info["inputs"][0]
    if i["dtype"] == "int8":
        return rng.integers(-128, 128, i["shape"]).astype(np.int8)
    return rng.standard_normal(i["shape"]).astype(i["dtype"])


def bench(name: str, fname: str, models: Path, work: str, m4: Optional[ModuleType],
          wasm: Optional[ModuleType]) -> Optional[Dict[str, Any]]:
    path = models / fname
    if not path.exists():
        return None
    arch = codegen.compile(frontend.load_model(str(path)), name=name)
    d = arch.export(os.path.join(work, name))
    x = input_for(arch.info)
    inp = os.path.join(work, name + "_in.npy")
    np.save(inp, x)
    row: Dict[str, Any] = {"model": name, "file": fname,
                           "workspace": arch.workspace_bytes,
                           "constants": arch.info["memory"]["constants_in_flash_bytes"],
                           "macs": arch.info["macs"]}
    if m4 is not None and m4.toolchain_missing() is None:
        for opt in ("-Os", "-O2"):
            r = m4.build_and_run(d, name, [inp], os.path.join(work, "fw-%s%s" % (name, opt)),
                                 opt=opt, cache=os.path.join(work, "objs"))
            if not r.get("ok"):
                raise RuntimeError("%s %s: the firmware failed: %s" % (name, opt, r))
            size = r["size"]
            row["m4" + opt] = {
                "instructions": r["instructions"],
                "ram": size.get("data", 0) + size.get("bss", 0) + r["run_stack_bytes"],
                "stack": r["run_stack_bytes"], "data_bss": size.get("data", 0) + size.get("bss", 0),
                "flash": size.get("text", 0) + size.get("rodata", 0),
                "text": size.get("text", 0), "rodata": size.get("rodata", 0),
                "crt_text": r["crt_size"].get("text", 0)}
    if wasm is not None and wasm.tools() is None:
        row["wasm_bytes"] = wasm.build(d, os.path.join(work, "wasm-" + name), name).size
    return row


def tables(rows: List[Dict[str, Any]]) -> str:
    out = ["| model | RAM (data+bss+stack) | flash (text+rodata) | crt .text | "
           "instructions -Os | instructions -O2 | instr/MAC | .wasm |",
           "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        a, b = r.get("m4-Os"), r.get("m4-O2")
        out.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["model"], "{:,}".format(a["ram"]) if a else "-",
            "{:,}".format(a["flash"]) if a else "-", "{:,}".format(a["crt_text"]) if a else "-",
            "{:,}".format(a["instructions"]) if a else "-",
            "{:,}".format(b["instructions"]) if b else "-",
            "%.1f" % (b["instructions"] / r["macs"]) if b and r["macs"] else "-",
            "{:,}".format(r["wasm_bytes"]) if "wasm_bytes" in r else "-"))
    out += ["", "Published latency on a real Cortex-M4 at 120 MHz (ms, and cycles = ms x "
            "120,000), beside our instruction count (-O2; instructions are not cycles):", "",
            "| model | TFLite Micro | microTVM + CMSIS-NN | X-CUBE-AI | ours: instructions | "
            "ours ÷ X-CUBE-AI cycles |", "|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        pub = PUBLISHED.get(r["model"])
        b = r.get("m4-O2")
        if pub is None:
            continue
        cyc = [p * 120000 for p in pub]
        out.append("| %s | %.2f ms (%s) | %.2f ms (%s) | %.2f ms (%s) | %s | %s |" % (
            r["model"], pub[0], "{:,.0f}".format(cyc[0]), pub[1], "{:,.0f}".format(cyc[1]),
            pub[2], "{:,.0f}".format(cyc[2]),
            "{:,}".format(b["instructions"]) if b else "-",
            "%.2f" % (b["instructions"] / cyc[2]) if b else "-"))
    return "\n".join(out) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--models", default=str(DEFAULT_MODELS))
    args = ap.parse_args()
    m4 = load(ROOT / "firmware" / "common" / "run.py", "fw_common_run")
    wasm_path = ROOT / "firmware" / "wasm" / "run.py"
    wasm = load(wasm_path, "fw_wasm_run") if wasm_path.exists() else None
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for name, fname in MODELS:
            r = bench(name, fname, Path(args.models), work, m4, wasm)
            if r is not None:
                rows.append(r)
                print("%-8s done" % name, flush=True)
    md = tables(rows)
    print(md)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "bench_device.json"), "w") as f:
        json.dump(rows, f, indent=1)
    with open(os.path.join(args.out, "bench_device.md"), "w") as f:
        f.write(md)


if __name__ == "__main__":
    main()
