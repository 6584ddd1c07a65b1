"""The int8 models' instructions per inference on an emulated AVX2 CPU,
ours beside LiteRT with XNNPACK, both choosing their own forms.

bench_x86.py's AVX2 column caps our crt at its AVX2 forms
(tn_crt_isa_limit), but XNNPACK has no such cap: on an AVX-512 VNNI host
it always runs its VNNI kernels, so that column compares AVX2 with
AVX-512 VNNI. Here both run on qemu's user-mode emulator as a Haswell
(`qemu-x86_64 -cpu Haswell`: AVX2 and FMA, no AVX-512, no VNNI), where
each library reads CPUID and picks its AVX2 forms itself, and a TCG
plugin (insn_count_plugin.c) counts the instructions each process runs.

For each int8 model (bench_x86.py's list; VWW and the large ResNet where
x86_peers.py finds them): the archive compiled as bench_x86.py compiles
it, bench_aot.py's driver built from it (the generated C and this tree's
crt at -O2, as bench_x86.py builds it) and run under the emulator: one
call (its outputs written), then N calls counted; LiteRT (default
kernels, so XNNPACK, one thread) run the same way in a Python process
after two calls (XNNPACK packs its weights in the first). Only the N
calls are counted: each process marks them with a system call that does
not exist (insn_count_plugin.c), so start-up and warm-up stay out.
LiteRT's figure includes the Python loop and pybind11's call of
`invoke` (ours a C loop); the "floor" counts that cost the same way, a
loop of N calls of what `invoke` does in Python (`_ensure_safe`) and of
one pybind11 call (`NumSubgraphs`), and the last ratio takes it off
XNNPACK's figure.

The counts are deterministic (the machine's load does not enter them)
but they are instructions, not time: a 256-bit vpmaddwd and a scalar add
count one each, and nothing here says how they would run on a real AVX2
core. Every output of ours is checked against TFLite Micro's (run
natively), byte for byte; XNNPACK's largest difference from it is
reported (XNNPACK rounds once where TFLite rounds twice).

    python python/bench/bench_x86_emulated.py --out DIR [--only NAME] [-n N]

Needs qemu-user (Debian: qemu-user, 7.2 or later for AVX2 in TCG), a C
compiler, and the binding of a build tree with ai-edge-litert and
tflite-micro installed, as bench_x86.py does. Writes
bench_x86_emulated.json and .md.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Sequence

import numpy as np

HERE = Path(__file__).resolve().parent
CPU = "Haswell"
MARK = 0x7ff0  # insn_count_plugin.c's mark: syscall(MARK, 1) ... syscall(MARK, 0)


def patch_driver() -> None:
    """bench_aot's driver with "=N" in place of SECONDS: N more calls after
    the first, between the plugin's marks and untimed, and the crt's ISA
    level on stderr."""
    import bench_aot

    first_timed = "  t0 = now_ns();\n  st |= tvmgen_@NAME@_run(@ARGS@);\n  one = now_ns() - t0;\n"
    assert first_timed in bench_aot.DRIVER_C
    bench_aot.DRIVER_C = bench_aot.DRIVER_C.replace(
        "int main(int argc, char **argv) {",
        "extern int tn_crt_isa(void) __attribute__((weak));\n"
        "extern long syscall(long number, ...);\n"
        "int main(int argc, char **argv) {", 1).replace(
        first_timed,
        "  if (argv[1][0] == '=') {\n"
        "    syscall(%dL, 1L);\n"
        "    for (i = atol(argv[1] + 1); i > 0; i--) st |= tvmgen_@NAME@_run(@ARGS@);\n"
        "    syscall(%dL, 0L);\n"
        "    if (tn_crt_isa) fprintf(stderr, \"isa %%d\\n\", tn_crt_isa());\n"
        "    return st != 0;\n"
        "  }\n" % (MARK, MARK) + first_timed, 1)


def plugin(workdir: str) -> str:
    """insn_count_plugin.c built into workdir."""
    so = os.path.join(workdir, "insn_count_plugin.so")
    cc = os.environ.get("CC", "cc")
    subprocess.run([cc, "-O2", "-shared", "-fPIC", "-o", so, str(HERE / "insn_count_plugin.c")],
                   check=True)
    return so


def counted(cmd: Sequence[str], n: int, so: str, workdir: str) -> Dict[str, Any]:
    """Runs cmd (which makes n calls between the marks) on the emulated CPU
    with the plugin: instructions a call, the process's total, and its
    stderr."""
    out = os.path.join(workdir, "count.txt")
    if os.path.exists(out):
        os.remove(out)
    proc = subprocess.run(["qemu-x86_64", "-cpu", CPU, "-plugin",
                           "%s,out=%s,mark=%d" % (so, out, MARK), *cmd],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError("%s on qemu-x86_64 -cpu %s failed (%d):\n%s"
                           % (" ".join(cmd[:3]), CPU, proc.returncode, proc.stderr[-2000:]))
    with open(out) as f:
        counts = {k: int(v) for k, v in (line.split() for line in f)}
    if counts["window"] == 0:
        raise RuntimeError("%s: no instructions between the marks" % " ".join(cmd[:3]))
    return {"per_call": counts["window"] / n, "total": counts["total"], "stderr": proc.stderr}


def child(args: argparse.Namespace) -> None:
    """In the emulated process: LiteRT on the model, two calls, then
    args.n more (--floor: args.n of the same Python path without the work)."""
    import ctypes

    from ai_edge_litert import interpreter as litert

    libc = ctypes.CDLL(None)
    it = litert.Interpreter(model_path=args.child, num_threads=1)
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], np.load(args.input))
    it.invoke()
    it.invoke()
    def floor() -> None:  # invoke's Python wrapper and one pybind11 call
        it._ensure_safe()
        it._interpreter.NumSubgraphs()

    fn = floor if args.floor else it.invoke
    libc.syscall(MARK, 1)
    for _ in range(args.n):
        fn()
    libc.syscall(MARK, 0)
    np.save(args.output, it.get_tensor(it.get_output_details()[0]["index"]))


def bench_model(path: Path, n: int, so: str, workdir: str) -> Dict[str, Any]:
    from bench_aot import Driver, HostModel, build_driver, make_input, tflm_arena

    from tvmnode import codegen, frontend

    name = path.stem.lower()
    wd = os.path.join(workdir, name)
    os.makedirs(wd, exist_ok=True)
    arch = codegen.compile(frontend.load_model(str(path)), name=name)
    x = make_input(arch.info["inputs"][0])
    micro = tflm_arena(path, x)
    hm = HostModel(arch, wd, cflags=("-O2",))
    d = Driver(build_driver(hm, wd), hm, [x], wd)
    res: Dict[str, Any] = {"macs": int(arch.info["macs"])}
    ours = counted([d.exe, "=%d" % n, *d.ins, *d.outs], n, so, wd)
    isa = [ln.split()[1] for ln in ours.pop("stderr").splitlines() if ln.startswith("isa ")]
    res["ours"] = ours
    res["ours_isa"] = int(isa[0]) if isa else None
    got = d.outputs()[0]
    res["ours_equal_to_tflite_micro"] = (bool(np.array_equal(got, micro["output"]))
                                         if micro else None)
    xin = os.path.join(wd, "x.npy")
    np.save(xin, x)
    yout = os.path.join(wd, "y.npy")

    def litert_cmd(floor: bool) -> List[str]:
        return [sys.executable, str(Path(__file__).resolve()), "--child", str(path),
                "--input", xin, "--output", yout, "-n", str(n)] + (["--floor"] if floor else [])

    xnn = counted(litert_cmd(False), n, so, wd)
    xnn.pop("stderr")
    res["xnnpack"] = xnn
    y = np.load(yout)
    if micro is not None:
        res["xnnpack_max_diff_from_tflite_micro"] = int(np.abs(
            y.astype(np.int32) - micro["output"].astype(np.int32)).max())
    floor = counted(litert_cmd(True), n, so, wd)
    floor.pop("stderr")
    res["python_call_floor"] = floor["per_call"]
    return res


def table(results: Dict[str, Any]) -> str:
    rows = ["| model | MMAC | ours (instructions) | XNNPACK (instructions) | ours ÷ XNNPACK "
            "| floor | ours ÷ (XNNPACK − floor) | ours = TFLM | XNNPACK − TFLM (max) |",
            "|---|---:|---:|---:|---:|---:|---:|:-:|---:|"]
    for name, r in results["models"].items():
        o, x, f = r["ours"]["per_call"], r["xnnpack"]["per_call"], r["python_call_floor"]
        rows.append("| %s | %.2f | %s | %s | %.2f | %s | %.2f | %s | %s |" % (
            name, r["macs"] / 1e6, format(round(o), ","), format(round(x), ","), o / x,
            format(round(f), ","), o / (x - f),
            {True: "yes", False: "NO", None: "–"}[r["ours_equal_to_tflite_micro"]],
            r.get("xnnpack_max_diff_from_tflite_micro", "–")))
    isas = sorted({str(r["ours_isa"]) for r in results["models"].values()})
    rows.append("")
    rows.append("qemu-x86_64 -cpu %s, %d calls counted a side; our crt's ISA level there: %s "
                "(3 = AVX2). floor: LiteRT's Python path to invoke without the work."
                % (CPU, results["n"], ", ".join(isas)))
    return "\n".join(rows)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default=os.environ.get("TVMNODE_MODELS"),
                    help="the models' directory (default: bench_models.py's)")
    ap.add_argument("--only", action="append", default=[])
    ap.add_argument("-n", type=int, default=10, help="calls counted (after the warm-up)")
    ap.add_argument("--out", default=".")
    ap.add_argument("--keep", default=None, help="build in this directory and keep it")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--input", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--output", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--floor", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args)
        return
    sys.path.insert(0, str(HERE))
    import bench_x86  # its driver: the TN_BENCH_ISA cap
    import x86_peers
    from bench_models import DEFAULT_MODELS

    patch_driver()
    if shutil.which("qemu-x86_64") is None:
        sys.exit("bench_x86_emulated: no qemu-x86_64 (Debian: apt-get install qemu-user)")
    results: Dict[str, Any] = {"cpu": CPU, "n": args.n, "host_cpu": bench_x86.cpu_name(),
                               "models": {}, "skipped": {}}
    with tempfile.TemporaryDirectory(prefix="bench_x86_emulated") as tmp:
        workdir = args.keep or tmp
        os.makedirs(workdir, exist_ok=True)
        so = plugin(workdir)
        names: List[str] = args.only or bench_x86.MODELS
        for name in names:
            found, why = x86_peers.find_model(name, Path(args.models or DEFAULT_MODELS))
            if found is None:
                print("bench_x86_emulated: skipped %s" % why, file=sys.stderr, flush=True)
                results["skipped"][name] = why
                continue
            print("%s ..." % name, file=sys.stderr, flush=True)
            results["models"][name] = bench_model(found, args.n, so, workdir)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "bench_x86_emulated.json").write_text(json.dumps(results, indent=1))
    text = table(results)
    (out / "bench_x86_emulated.md").write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
