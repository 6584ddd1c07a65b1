"""Every operator case of test_op_codegen.py on the devices: the Cortex-M
boards of firmware/targets.txt under qemu (the M4 on mps2-an386, the M33
on mps2-an505, the M7 on mps2-an500, the M55 on mps3-an547) and wasm32
under node.

Each case of test_op_codegen.CASES (the whole table, whatever it holds
when this runs) is compiled to C under its own model name, so that all of
them link into one program per target. The host executor's outputs for
the case's inputs are stored beside the inputs as constant arrays, and
firmware/common/op_cases.c runs every case through the generic firmware
API (tvmnode/crt/model.h) over buffers it carves from one arena (outputs
filled with a marker and followed by guard bytes) and prints a line a
case. Each target is built and run once (module-scoped fixture: the crt's
sources compiled once, the generated sources of all the cases in a few
unity files, one link); each case is one test item per target that reads
its line.

Integer outputs must equal the host's byte for byte, and nothing may be
written past an output or into an input. float32 outputs may differ from
the host's by at most ULPS units in the last place, because the kernels
call the C library's math functions and each target has its own (the
host's is glibc's):
- Cortex-M, newlib: its expf (fdlibm's) is within an ulp of the true value
  and glibc's within half of one, and they were seen 1 ulp apart on a few
  elements of most cases that call it; sigmoid divides by 1 + expf and softmax
  divides one expf by a sum of them, which turns that ulp into at most 3
  (2 seen, in softmax). newlib's tanhf is the same fdlibm code as glibc's
  and agreed bit for bit. Allowed: 3.
- wasm32, no libc: firmware/wasm/support.c's expf returns glibc's results
  bit for bit, but its tanhf is correctly rounded and glibc's is not (up to
  2 ulps off the true value: about a third of the tanh cases' elements
  differ by an ulp, one by 2). Allowed: 2.
Everything else (+, -, *, /, sqrt, conversions, rounding) is IEEE and
compiled with -ffp-contract=off on every target, and the cases that call
no libm function are bit for bit. The summary test prints each target's
cases that are not.

The default Cortex-M target (the M4) builds with -Os, what
firmware/common/run.py builds by default, and the others with -O2, so both optimisation levels of
the crt run on a device.

Skipped (with the reason) for a target whose tools are missing:
arm-none-eabi-gcc with newlib and qemu-system-arm (Debian:
gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm) for the
Cortex-M boards, clang with the wasm32 target, wasm-ld and node for wasm32.
"""
from __future__ import annotations

import concurrent.futures
import filecmp
import importlib.machinery
import os
import re
import shutil
import subprocess
import types
from typing import Any, Dict, Iterator, List, NamedTuple, Optional, Sequence

import numpy as np
import pytest

from tvmnode import codegen, runtime

import test_op_codegen as opc
from exec_util import isa

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COMMON = os.path.join(ROOT, "firmware", "common")
WASM_DIR = os.path.join(ROOT, "firmware", "wasm")


def _load(path: str, name: str) -> Any:
    """A script outside any package (firmware/common/run.py,
    firmware/wasm/run.py) as a module."""
    mod = types.ModuleType(name)
    mod.__file__ = path
    importlib.machinery.SourceFileLoader(name, path).exec_module(mod)
    return mod


fw = _load(os.path.join(COMMON, "run.py"), "firmware_common_run_opdevice")
wasm = _load(os.path.join(WASM_DIR, "run.py"), "firmware_wasm_run_opdevice")

WASM = "wasm32"
CORTEX_M = list(fw.targets())
TARGETS = CORTEX_M + [WASM]
# The largest distance of a float32 output from the host's, in units in the
# last place (the module docstring says why there is one).
ULPS = {WASM: 2}
ULPS.update({t: 3 for t in CORTEX_M})
# Recurrent float operators run each step on the last one's results: the
# targets' expf/tanhf ulps compound over the steps and through the cell
# state's sums, where an element near zero ends many ulps off (nn.lstm:
# 32 seen on wasm32 and 4 on Cortex-M with one draw of the case's inputs;
# 68 on wasm32 with the next, an element of 3.4e-4 off by 8e-9, when two
# cases added before it shifted the shared random stream). Allowed for
# their cases instead. ELU's negative branch is expf(x) - 1 (math.c says
# why): a one-ulp difference between the targets' expf and the host's is
# one ulp of 1, which is 2^k ulps of a result 2^-k times smaller (8 seen on
# the M4 and M33 for an output of -0.12 when the shared random stream
# moved); 1024 holds for results down to about 1e-3 in size.
OP_ULPS = {"nn.lstm": 128, "nn.elu": 1024}


def case_ulps(target_ulps: int, i: int) -> int:
    """The tolerance of case i on a target allowing `target_ulps`."""
    return max(target_ulps, OP_ULPS.get(opc.CASES[i][1], 0))
# Optimisation: the wasm runner's default; the default Cortex-M target
# with the firmware runner's default (-Os), the others with -O2.
OPT = {WASM: "-O2"}
OPT.update({t: "-Os" if t == fw.DEFAULT_TARGET else "-O2" for t in CORTEX_M})
# Generated sources per unity file: few enough compiler runs, and enough
# files to keep both cores of a small machine busy.
UNITY_FILES = 4
TIMEOUT = 300.0

CASE_IDS = [c[0] for c in opc.CASES]


# --- the cases, compiled once ---------------------------------------------

class Prepared(NamedTuple):
    dir: str
    names: List[Optional[str]]   # per case: its model name, None if it did not compile
    errors: Dict[int, str]       # why a case did not compile
    crt: str                     # the archives' runtime/ folders, merged
    include: str                 # every generated header
    unity: List[str]             # the generated sources, a few per file
    inputs: List[List[bytes]]
    expected: List[List[bytes]]
    dtypes: List[List[str]]      # of the outputs


def _c_bytes(name: str, data: bytes) -> str:
    body = ",".join("0x%02x" % b for b in data) or "0"
    return "static const uint8_t %s[%d] = {%s};\n" % (name, max(len(data), 1), body)


def _merge(src: str, dst: str) -> None:
    """Copy the tree src into dst; a file already there must be the same."""
    for root, _, files in os.walk(src):
        out = os.path.join(dst, os.path.relpath(root, src))
        os.makedirs(out, exist_ok=True)
        for f in files:
            a, b = os.path.join(root, f), os.path.join(out, f)
            if not os.path.exists(b):
                shutil.copyfile(a, b)
            elif not filecmp.cmp(a, b, shallow=False):
                raise AssertionError("two archives carry different %s" % b)


def _prepare(workdir: str) -> Prepared:
    """Compile and export every case, run it on the host executor, and
    gather the archives' sources for a single program."""
    names: List[Optional[str]] = []
    errors: Dict[int, str] = {}
    inputs: List[List[bytes]] = []
    expected: List[List[bytes]] = []
    dtypes: List[List[str]] = []
    crt = os.path.join(workdir, "crt")
    include = os.path.join(workdir, "include")
    os.makedirs(include)
    sources: List[str] = []
    for i, (cid, _, xs, build) in enumerate(opc.CASES):
        name = "oc%d" % i
        try:
            arch = codegen.compile(opc.module_of(xs, build), name)
            archive = arch.export(os.path.join(workdir, "archives", name))
            outs = runtime.Executor(arch.module)(*xs)
            outs = outs if isinstance(outs, tuple) else (outs,)
            if any(np.asarray(o).dtype.kind == "f" for o in outs):
                # a float case's reference: the host's portable kernels,
                # whose bits the devices' C reproduces (the x86 float forms
                # fuse multiply-adds: exec_util.isa)
                del outs
                with isa("portable"):
                    outs = runtime.Executor(arch.module)(*xs)
                outs = outs if isinstance(outs, tuple) else (outs,)
            arrays = [np.ascontiguousarray(np.asarray(o)) for o in outs]
            del arch, outs
        except Exception as e:  # the case's own test reports it
            errors[i] = "%s: %s" % (type(e).__name__, e)
            names.append(None)
            inputs.append([])
            expected.append([])
            dtypes.append([])
            continue
        names.append(name)
        inputs.append([np.ascontiguousarray(x).tobytes() for x in xs])
        expected.append([a.tobytes() for a in arrays])
        dtypes.append([str(a.dtype) for a in arrays])
        _merge(os.path.join(archive, "runtime"), crt)
        gen = os.path.join(archive, "codegen", "host")
        for h in os.listdir(os.path.join(gen, "include")):
            shutil.copyfile(os.path.join(gen, "include", h), os.path.join(include, h))
        sources += sorted(os.path.join(gen, "src", f) for f in os.listdir(os.path.join(gen, "src"))
                          if f.endswith(".c"))
    unity = []
    per = -(-len(sources) // UNITY_FILES) if sources else 1
    for k in range(0, len(sources), per):
        path = os.path.join(workdir, "cases_%d.c" % (k // per))
        with open(path, "w") as f:
            f.write("/* generated sources of several cases, compiled as one */\n")
            f.writelines('#include "%s"\n' % s for s in sources[k:k + per])
        unity.append(path)
    return Prepared(workdir, names, errors, crt, include, unity, inputs, expected, dtypes)


def _table(p: Prepared, ulps: int, path: str,
           expected: Optional[List[List[bytes]]] = None) -> str:
    """The case table of op_cases.h, with the cases' bytes (expected: other
    expected outputs than the host's)."""
    expected = p.expected if expected is None else expected
    out = ["/* the cases of test_op_device.py (generated) */\n",
           '#include "op_cases.h"\n']
    out += ['#include "tvmgen_%s.h"\n' % n for n in p.names if n]
    rows, arena = [], 64
    for i, name in enumerate(p.names):
        if not name:
            continue
        for kind, data in (("in", p.inputs[i]), ("want", expected[i])):
            for j, d in enumerate(data):
                out.append(_c_bytes("oc_%s_%d_%d" % (kind, i, j), d))
                arena += len(d) + 64  # alignment and guard bytes
            out.append("static const uint8_t *const oc_%s_%d[] = {%s};\n" % (
                kind, i, ", ".join("oc_%s_%d_%d" % (kind, i, j) for j in range(len(data)))
                or "0"))
        cid = CASE_IDS[i].replace("\\", "\\\\").replace('"', '\\"')
        rows.append('  {"%s", &tvmgen_%s_model, oc_in_%d, oc_want_%d, %du},\n'
                    % (cid, name, i, i, case_ulps(ulps, i)))
    out.append("const OcCase oc_cases[] = {\n%s};\n" % ("".join(rows) or "  {0, 0, 0, 0, 0},\n"))
    out.append("const int32_t oc_num_cases = %d;\n" % len(rows))
    # the largest case's inputs, outputs and pools fit: size them all
    out.append("uint8_t oc_arena[%d] __attribute__((aligned(64)));\n" % arena)
    out.append("const uint32_t oc_arena_size = %du;\n" % arena)
    with open(path, "w") as f:
        f.write("".join(out))
    return path


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Prepared]:
    yield _prepare(str(tmp_path_factory.mktemp("op-cases")))


# --- building and running, once per target --------------------------------

class Ran(NamedTuple):
    lines: Dict[int, str]   # the case's line, by its index in CASES
    text: str               # everything the program printed
    status: str             # how the program ended
    prepared: Prepared
    objects: List[str]      # wasm32: the objects, the table's last


CASE_LINE = re.compile(r"^case (\d+) (\S+) (PASS|FAIL)\b.*$")


def _parse(text: str, p: Prepared, status: str, objects: Sequence[str] = ()) -> Ran:
    """Lines by case index (the table holds only the cases that compiled,
    in order)."""
    index = [i for i, n in enumerate(p.names) if n]
    lines: Dict[int, str] = {}
    for ln in text.splitlines():
        m = CASE_LINE.match(ln)
        if m and int(m.group(1)) < len(index):
            i = index[int(m.group(1))]
            assert m.group(2) == CASE_IDS[i], ln
            lines[i] = ln
    return Ran(lines, text, status, p, list(objects))


def _cortex_m_missing() -> Optional[str]:
    missing = fw.toolchain_missing()
    if missing is None and not os.path.exists(subprocess.run(
            ["arm-none-eabi-gcc"] + fw.ARCH_FLAGS + ["-print-file-name=libc.a"],
            capture_output=True, text=True).stdout.strip()):
        missing = "newlib for arm-none-eabi is not installed (libnewlib-arm-none-eabi)"
    return missing


def _run_cortex_m(p: Prepared, target: str, workdir: str) -> Ran:
    table = _table(p, ULPS[target], os.path.join(workdir, "table.c"))
    elf = fw.build_program(["op_cases.c", "op_cases_semihost.c"] + p.unity + [table],
                           workdir, target=target, opt=OPT[target], crt=p.crt,
                           include_dirs=[p.include], elf_name="op_cases.elf")
    try:
        code, text = fw.run_program(elf, target, timeout=TIMEOUT)
    except fw.FirmwareError as e:  # a hang: the cases before it still report
        return _parse(str(e), p, str(e).splitlines()[0])
    return _parse(text, p, "exit code %d" % code)


def _wasm_compile(src: str, obj: str, includes: Sequence[str]) -> str:
    cmd = (["clang", OPT[WASM]] + list(wasm.CFLAGS) + ["-I" + d for d in includes]
           + ["-c", src, "-o", obj])
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError("%s\n%s" % (" ".join(cmd), proc.stderr[-4000:]))
    return obj


def _wasm_link_and_run(p: Prepared, objs: Sequence[str], workdir: str) -> Ran:
    out = os.path.join(workdir, "op_cases.wasm")
    cmd = ["clang", "--target=wasm32", "-nostdlib"] + list(wasm.LDFLAGS) + ["-o", out] + list(objs)
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError("%s\n%s" % (" ".join(cmd), proc.stderr[-4000:]))
    try:
        run = subprocess.run(["node", os.path.join(COMMON, "op_cases.mjs"), out],
                             capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired as e:
        got = e.stdout or b""
        text = got.decode(errors="replace") if isinstance(got, bytes) else got
        return _parse(text, p, "node: no exit after %s s" % TIMEOUT, objs)
    return _parse(run.stdout + run.stderr, p, "exit code %d" % run.returncode, objs)


WASM_INCLUDES = ("include", "crt/include", "crt/src")


def _run_wasm(p: Prepared, workdir: str) -> Ran:
    table = _table(p, ULPS[WASM], os.path.join(workdir, "table.c"))
    crt_src = os.path.join(p.crt, "src")
    srcs = sorted(os.path.join(crt_src, f) for f in os.listdir(crt_src) if f.endswith(".c"))
    srcs += p.unity + [os.path.join(COMMON, "op_cases.c"), os.path.join(COMMON, "op_cases_wasm.c"),
                       wasm.SUPPORT, table]
    includes = [os.path.join(p.dir, d) for d in WASM_INCLUDES] + [COMMON]
    objdir = os.path.join(workdir, "obj")
    os.makedirs(objdir)
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        objs = list(pool.map(lambda ks: _wasm_compile(
            ks[1], os.path.join(objdir, "%d.o" % ks[0]), includes), enumerate(srcs)))
    return _wasm_link_and_run(p, objs, workdir)


@pytest.fixture(scope="module")
def device(prepared: Prepared, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The program of each target, built and run on first use."""
    done: Dict[str, Any] = {}

    def get(target: str) -> Ran:
        if target not in done:
            workdir = str(tmp_path_factory.mktemp("op-device-" + target))
            missing = wasm.tools() if target == WASM else _cortex_m_missing()
            try:
                done[target] = missing or (_run_wasm(prepared, workdir) if target == WASM
                                           else _run_cortex_m(prepared, target, workdir))
            except Exception as e:  # built once: every case reports the failure
                done[target] = e
        if isinstance(done[target], str):
            pytest.skip("%s: %s" % (target, done[target]))
        if isinstance(done[target], Exception):
            pytest.fail("%s: the program did not build: %s" % (target, done[target]))
        ran: Ran = done[target]
        return ran
    yield get


@pytest.mark.parametrize("cid", CASE_IDS)
@pytest.mark.parametrize("target", TARGETS)
def test_case_on_device(target: str, cid: str, device: Any) -> None:
    ran = device(target)
    i = CASE_IDS.index(cid)
    if i in ran.prepared.errors:
        pytest.fail("%s did not compile: %s" % (cid, ran.prepared.errors[i]))
    line = ran.lines.get(i)
    assert line is not None, "%s: no line for %s (the program ended: %s)\n%s" % (
        target, cid, ran.status, ran.text[-3000:])
    assert " PASS " in line, "%s: %s" % (target, line)
    maxulp = int(re.search(r"maxulp=(\d+)", line).group(1))  # type: ignore[union-attr]
    assert maxulp <= case_ulps(ULPS[target], i), line


@pytest.mark.parametrize("target", TARGETS)
def test_program_ends_with_its_summary(target: str, device: Any, capsys: Any) -> None:
    """The program got through every case and says how many failed; prints
    the cases whose float outputs were not bit for bit."""
    ran = device(target)
    inexact = {CASE_IDS[i]: int(m.group(1)) for i, ln in sorted(ran.lines.items())
               for m in [re.search(r"maxulp=(\d+)", ln)] if m and m.group(1) != "0"}
    with capsys.disabled():
        print("\n%s: %d cases, %d failed, float32 ULPs off the host: %s" % (
            target, len(ran.lines), sum(1 for ln in ran.lines.values() if " FAIL " in ln),
            inexact or "none"), end="")
    n = sum(1 for x in ran.prepared.names if x)
    failed = sum(1 for ln in ran.lines.values() if " FAIL " in ln)
    assert len(ran.lines) == n, ran.text[-3000:]
    assert "cases %d failed %d" % (n, failed) in ran.text, ran.text[-3000:]
    assert ran.status == "exit code %d" % (1 if failed else 0), ran.status


def test_a_wrong_result_is_reported(device: Any, tmp_path: Any) -> None:
    """The wasm32 program again, with a table that expects a byte changed in
    the first integer case and a float 1 ulp beyond the tolerance in the
    first float32 case: both fail, at the element changed, and every case
    that passed before and was not changed still passes."""
    ran = device(WASM)
    p = ran.prepared
    expected = [list(e) for e in p.expected]
    changed: Dict[int, str] = {}
    for i, dts in enumerate(p.dtypes):
        kind = "float" if dts and dts[0] == "float32" else "int"
        if not dts or kind in changed.values() or len(p.expected[i][0]) < 8:
            continue
        want = np.frombuffer(p.expected[i][0], np.uint8).copy()
        if kind == "int":
            want[5] ^= 0x10
        else:  # the second element, ULPS + 1 further from zero
            bits = want.view(np.int32)
            bits[1] += ULPS[WASM] + 1
        expected[i][0] = want.tobytes()
        changed[i] = kind
    assert sorted(changed.values()) == ["float", "int"]
    table = _table(p, ULPS[WASM], str(tmp_path / "table.c"), expected)
    includes = [os.path.join(p.dir, d) for d in WASM_INCLUDES] + [COMMON]
    objs = ran.objects[:-1] + [_wasm_compile(table, str(tmp_path / "table.o"), includes)]
    bad = _wasm_link_and_run(p, objs, str(tmp_path))
    for i, kind in changed.items():
        line = bad.lines[i]
        m = re.search(r" FAIL output=0 index=(\d+) .*mismatches=(\d+) maxulp=(\d+)$", line)
        assert m is not None, line
        if kind == "int":
            assert int(m.group(1)) == 5 // np.dtype(p.dtypes[i][0]).itemsize, line
            assert int(m.group(2)) == 1, line
        else:
            assert int(m.group(1)) == 1 and int(m.group(3)) == ULPS[WASM] + 1, line
    assert bad.status == "exit code 1"
    for i, line in ran.lines.items():
        if i not in changed and " PASS " in line:
            assert " PASS " in bad.lines[i], bad.lines[i]
    assert "failed %d" % sum(1 for ln in bad.lines.values() if " FAIL " in ln) in bad.text
