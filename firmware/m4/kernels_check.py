#!/usr/bin/env python3
"""kernels_check.py: build kernels_check.c with the crt's int8 kernels into
Cortex-M4 firmware, run it on qemu's mps2-an386 and report as JSON.

The firmware (see kernels_check.c) runs random convolution and dense
geometries through the kernels as the M4 compiles them (their Cortex-M DSP
forms) and through a plain C reference in the same image, and compares every
output byte. The crt sources come from the source tree (runtime/crt), not
from an exported archive, so a kernel change is checked without exporting a
model. The build is run.py's (same flags, linker script and libraries):

    python3 firmware/m4/kernels_check.py --opt=-O2 --cases 600 --seed 1

Exit code 0 when the firmware reports no mismatch; the JSON has `failures`,
`cases` (per entry point), `instructions` (the kernels' and the
reference's), the `mismatches` lines and `ok`. Standard library only;
python/tests/test_firmware_m4.py imports it and calls check().
"""
from __future__ import annotations

import argparse
import importlib.machinery
import json
import os
import re
import subprocess
import sys
import types
from typing import Any, Dict, List, Optional, Sequence

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CRT = os.path.join(ROOT, "runtime", "crt")
HARNESS = ["kernels_check.c", "startup.c", "semihost.c", "measure.c"]


def _load_run() -> Any:
    """run.py, the model runner beside this file, for its build helpers."""
    path = os.path.join(HERE, "run.py")
    mod = types.ModuleType("firmware_m4_run")
    mod.__file__ = path
    importlib.machinery.SourceFileLoader(mod.__name__, path).exec_module(mod)
    return mod


fw = _load_run()
FirmwareError = fw.FirmwareError
toolchain_missing = fw.toolchain_missing


def build(workdir: str, *, opt: str = "-O2", cases: int = 600, seed: int = 1,
          cache: Optional[str] = None, extra_flags: Sequence[str] = ()) -> str:
    """Compile and link the firmware in workdir; returns the ELF's path.
    extra_flags: more flags for kernels_check.c and the harness
    (-DKC_BREAK_REFERENCE=1, say)."""
    flags = fw.ARCH_FLAGS + [opt] + fw.COMMON_FLAGS
    inc = [os.path.join(CRT, "include"), os.path.join(CRT, "src")]
    crt_objs = fw._compile_all(fw._c_files(os.path.join(CRT, "src")), flags, inc,
                               os.path.join(workdir, "obj", "crt"), cache)
    harness_objs = fw._compile_all(
        [os.path.join(HERE, s) for s in HARNESS],
        flags + ["-DKC_CASES=%d" % cases, "-DKC_SEED=%d" % seed] + list(extra_flags),
        [HERE] + inc,
        os.path.join(workdir, "obj", "harness"), None)
    elf = os.path.join(workdir, "kernels_check.elf")
    fw._run([fw.GCC] + flags + ["-nostdlib", "-T", fw.LINKER_SCRIPT, "-Wl,--gc-sections",
                                "-Wl,--defsym=FW_STACK_SIZE=%d" % fw.DEFAULT_STACK,
                                "-o", elf] + harness_objs + crt_objs
            + ["-Wl,--start-group", "-lm", "-lc", "-lgcc", "-Wl,--end-group"],
            "linking kernels_check.elf")
    return elf


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
        elif words[0] == "failures":
            res["failures"] = int(words[1])
        elif words[0] == "fault":
            res["fault"] = line.strip()
        elif words[0] == "done":
            res["done"] = int(words[1])
    return res


def run_elf(elf: str, timeout: float = 600.0) -> Dict[str, Any]:
    """Run the firmware under qemu: the parsed report with the exit code and
    `ok`."""
    try:
        p = subprocess.run(fw.qemu_command(elf), stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                           timeout=timeout)
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode(errors="replace")
        raise FirmwareError("qemu: no exit after %s s\n%s" % (timeout, out[-2000:])) from None
    text = p.stdout.decode(errors="replace")
    res = parse(text)
    if "done" not in res:
        raise FirmwareError("qemu exited with %d before the firmware finished\n%s"
                            % (p.returncode, text[-2000:]))
    res.update({"exit_code": p.returncode, "elf": elf})
    res["ok"] = p.returncode == 0 and res.get("failures") == 0
    return res


def check(workdir: str, *, opt: str = "-O2", cases: int = 600, seed: int = 1,
          cache: Optional[str] = None, timeout: float = 600.0) -> Dict[str, Any]:
    """build(), then run_elf()."""
    res = run_elf(build(workdir, opt=opt, cases=cases, seed=seed, cache=cache), timeout)
    res.update({"opt": opt, "seed": seed})
    return res


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
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
                        cache=args.cache, timeout=args.timeout)
        except FirmwareError as e:
            print(json.dumps({"ok": False, "error": str(e)}, indent=1))
            return 1
    if not args.workdir:
        res.pop("elf")  # in the temporary folder, gone by now
    print(json.dumps(res, indent=1))
    return 0 if res["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
