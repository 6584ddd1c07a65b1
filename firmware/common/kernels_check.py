#!/usr/bin/env python3
"""kernels_check.py: build kernels_check.c with the crt's int8 kernels into
firmware for a Cortex-M target of firmware/targets.txt (the M4 on qemu's
mps2-an386 by default), run it under qemu and report as JSON.

The firmware (see kernels_check.c) runs random convolution and dense
geometries through the kernels as the core compiles them (their Cortex-M DSP
forms, runtime/crt/src/kernels/arm_dsp/) and through a plain C reference in
the same image, and compares every output byte. The crt sources come from
the source tree (runtime/crt), not from an exported archive, so a kernel
change is checked without exporting a model. The build is run.py's (same
flags, linker script and libraries):

    python3 firmware/common/kernels_check.py --opt=-O2 --cases 600 --seed 1
    python3 firmware/common/kernels_check.py --target m33

Exit code 0 when the firmware reports no mismatch; the JSON has `failures`,
`cases` (per entry point), `instructions` (the kernels' and the
reference's), the `mismatches` lines and `ok`. Standard library only;
python/tests/test_firmware_device.py imports it and calls check().
"""
from __future__ import annotations

import argparse
import importlib.machinery
import json
import os
import re
import sys
import types
from typing import Any, Dict, List, Optional, Sequence

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CRT = os.path.join(ROOT, "runtime", "crt")


def _load_run() -> Any:
    """run.py, the model runner beside this file, for its build helpers."""
    path = os.path.join(HERE, "run.py")
    mod = types.ModuleType("firmware_common_run")
    mod.__file__ = path
    importlib.machinery.SourceFileLoader(mod.__name__, path).exec_module(mod)
    return mod


fw = _load_run()
FirmwareError = fw.FirmwareError
toolchain_missing = fw.toolchain_missing


def build(workdir: str, *, opt: str = "-O2", cases: int = 600, seed: int = 1,
          cache: Optional[str] = None, extra_flags: Sequence[str] = (),
          target: str = fw.DEFAULT_TARGET, crt: str = CRT) -> str:
    """Compile and link the firmware in workdir; returns the ELF's path.
    extra_flags: more flags for kernels_check.c and the harness
    (-DKC_BREAK_REFERENCE=1, say); crt: the crt folder whose kernels are
    checked (the tree's runtime/crt, or a copy with a kernel changed)."""
    return fw.build_program(
        ["kernels_check.c"], workdir, target=target, opt=opt, crt=crt, cache=cache,
        flags=["-DKC_CASES=%d" % cases, "-DKC_SEED=%d" % seed] + list(extra_flags),
        elf_name="kernels_check.elf")


def parse(text: str) -> Dict[str, Any]:
    """The firmware's lines (kernels_check.c's header comment) as a dict."""
    res: Dict[str, Any] = {"mismatches": [], "cases": {}}
    for line in text.splitlines():
        words = line.split()
        if not words:
            continue
        if words[0] in ("mismatch", "case"):
            res["mismatches"].append(line.strip())
        elif words[0] == "cases":
            res["cases"] = {words[i]: int(words[i + 1]) for i in range(0, len(words) - 1, 2)}
        elif words[0] == "instructions":
            m = re.match(r"instructions kernels (\d+) reference (\d+)", line.strip())
            if m:
                res["instructions"] = {"kernels": int(m.group(1)),
                                       "reference": int(m.group(2))}
            m = re.match(r"instructions conv_no_scratch (\d+) conv_scratch (\d+)", line.strip())
            if m:
                res["conv_instructions"] = {"no_scratch": int(m.group(1)),
                                            "scratch": int(m.group(2))}
        elif words[0] == "failures":
            res["failures"] = int(words[1])
        elif words[0] == "fault":
            res["fault"] = line.strip()
        elif words[0] == "done":
            res["done"] = int(words[1])
    return res


def run_elf(elf: str, timeout: float = 600.0,
            target: str = fw.DEFAULT_TARGET) -> Dict[str, Any]:
    """Run the firmware under qemu: the parsed report with the exit code and
    `ok`."""
    code, text = fw.run_program(elf, target, timeout)
    res = parse(text)
    if "done" not in res:
        raise FirmwareError("qemu exited with %d before the firmware finished\n%s"
                            % (code, text[-2000:]))
    res.update({"exit_code": code, "elf": elf, "target": target})
    res["ok"] = code == 0 and res.get("failures") == 0
    return res


def check(workdir: str, *, opt: str = "-O2", cases: int = 600, seed: int = 1,
          cache: Optional[str] = None, timeout: float = 600.0,
          target: str = fw.DEFAULT_TARGET) -> Dict[str, Any]:
    """build(), then run_elf()."""
    res = run_elf(build(workdir, opt=opt, cases=cases, seed=seed, cache=cache,
                        target=target), timeout, target)
    res.update({"opt": opt, "seed": seed})
    return res


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--target", default=fw.DEFAULT_TARGET,
                    help="a target of firmware/targets.txt (default %s)" % fw.DEFAULT_TARGET)
    ap.add_argument("--opt", default="-O2", help="optimization flag (default -O2)")
    ap.add_argument("--cases", type=int, default=600)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workdir", default=None, help="build folder (default: a temporary one)")
    ap.add_argument("--cache", default=None, help="a folder to reuse compiled objects from")
    ap.add_argument("--timeout", type=float, default=600.0)
    args = ap.parse_args(argv)
    missing = toolchain_missing()
    if missing:
        print(json.dumps({"ok": False, "error": missing}))
        return 2
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        try:
            res = check(args.workdir or tmp, opt=args.opt, cases=args.cases, seed=args.seed,
                        cache=args.cache, timeout=args.timeout, target=args.target)
        except FirmwareError as e:
            print(json.dumps({"ok": False, "error": str(e)}, indent=1))
            return 1
    if not args.workdir:
        res.pop("elf")  # in the temporary folder, gone by now
    print(json.dumps(res, indent=1))
    return 0 if res["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
