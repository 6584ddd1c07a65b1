#!/usr/bin/env python3
"""run.py: build a Model Library Format archive into a wasm32 module with
clang and lld, and run it under node.

    python3 run.py ARCHIVE_DIR [--name NAME] INPUT [INPUT ...]
                   [--out DIR] [--check] [--save OUT.npz] [-v]

The archive is what `tvmnode compile MODEL -o DIR` exports. The module is
built freestanding: no libc and no WASI, only the archive's generated C and
crt sources, support.c (the few C library functions the crt calls) and a
small glue file written here from metadata.json. The glue owns every buffer
as a static array sized by the generated header's macros and exports
tn_wasm_* functions that tell node where each is, so run.mjs instantiates
the module with an empty import object. An INPUT is a .npy file (checked
against the model's shape and dtype) or raw bytes of the input's exact
size. Prints each output, the status and the .wasm's size; with --check,
also the codes the generated run returns for a NULL input and a misaligned
pool. Needs Python 3 and numpy; importable (build, run, Built) for tests.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from typing import Any, Dict, List, NamedTuple, Optional, Sequence

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SUPPORT = os.path.join(HERE, "support.c")
RUNNER = os.path.join(HERE, "run.mjs")
CFLAGS = ("--target=wasm32", "-std=c11", "-ffreestanding", "-nostdlib",
          "-fvisibility=hidden", "-ffp-contract=off",
          "-Wall", "-Wextra", "-Werror")
# --stack-first puts the stack below the data, so an overflow traps instead
# of silently writing over the statics.
LDFLAGS = ("-Wl,--no-entry", "-Wl,--gc-sections", "-Wl,--strip-all",
           "-Wl,--stack-first", "-Wl,-z,stack-size=65536")
GLUE_EXPORTS = ("tn_wasm_reset", "tn_wasm_run", "tn_wasm_num_inputs",
                "tn_wasm_num_outputs", "tn_wasm_input", "tn_wasm_input_size",
                "tn_wasm_output", "tn_wasm_output_size", "tn_wasm_inputs",
                "tn_wasm_workspace_pools", "tn_wasm_pool")

# What the generated run must return for run.mjs's --check cases
# (tvmnode/crt/status.h): TN_CRT_NULL_POINTER, TN_CRT_POOL_MISALIGNED.
EXPECTED_CHECKS = {"null_input": 9, "misaligned_pool": 8}


class Built(NamedTuple):
    wasm: str                     # path of the module
    size: int                     # its bytes
    name: str                     # the model's name
    info: Dict[str, Any]          # metadata.json's modules.<name>
    command: List[str]            # the clang command that built it


def tools(cc: str = "clang", node: str = "node") -> Optional[str]:
    """None when clang (with wasm32), wasm-ld and node are all here, else
    what is missing."""
    for exe in (cc, "wasm-ld", node):
        if shutil.which(exe) is None:
            return "%s not found" % exe
    try:
        out = subprocess.run([cc, "--print-targets"], capture_output=True,
                             text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError) as e:
        return "%s --print-targets failed: %s" % (cc, e)
    if "wasm32" not in out:
        return "%s has no wasm32 target" % cc
    return None


def load_info(archive: str, name: Optional[str] = None) -> Dict[str, Any]:
    with open(os.path.join(archive, "metadata.json")) as f:
        modules: Dict[str, Dict[str, Any]] = json.load(f)["modules"]
    if name is None:
        if len(modules) != 1:
            raise ValueError("%s holds %d models; give --name" % (archive, len(modules)))
        name = next(iter(modules))
    if name not in modules:
        raise ValueError("%s has no model %r (it has %s)" % (archive, name, sorted(modules)))
    return modules[name]


def _pools(info: Dict[str, Any]) -> List[Dict[str, Any]]:
    """The workspace pools the generated struct has (as the generator
    decides: those with bytes, and the first when io lives there)."""
    io_in_pool = bool(info["interface"]["io_in_pool"])
    ws = [p for p in info["memory"]["pools"] if p["kind"] == "workspace"]
    return [p for i, p in enumerate(ws) if p["size_bytes"] > 0 or (io_in_pool and i == 0)]


def glue(info: Dict[str, Any]) -> str:
    """The C glue for one model: static buffers, the generated structs
    pointing at them, and the tn_wasm_* exports run.mjs calls."""
    m = info["model_name"]
    M = m.upper()
    itf = info["interface"]
    if itf["devices"]:
        raise ValueError("model %r hands operators to devices %s: the wasm "
                         "harness has no device hooks" % (m, itf["devices"]))
    io_in_pool = bool(itf["io_in_pool"])
    const_pool = bool(itf["constants_in_pool"]) and any(
        p["kind"] == "constant" and p["size_bytes"] > 0 for p in info["memory"]["pools"])
    ins, outs, pools = info["inputs"], info["outputs"], _pools(info)
    L: List[str] = []
    add = L.append
    add("/* The wasm glue of model '%s', written by firmware/wasm/run.py: every"
        " buffer is a\n * static array, and the tn_wasm_* exports tell run.mjs"
        " where each one is. */" % m)
    add('#include <stdint.h>\n\n#include "tvmgen_%s.h"\n' % m)
    add('#define EXPORT __attribute__((visibility("default")))')
    add("#define ALIGNED __attribute__((aligned(TVMGEN_%s_ALIGNMENT)))\n" % M)
    for i, p in enumerate(pools):
        add("static uint8_t pool%d[TVMGEN_%s_%s_WORKSPACE_POOL_SIZE] ALIGNED;"
            % (i, M, p["name"].upper()))
    if const_pool:
        add("static uint8_t constants[TVMGEN_%s_CONSTANT_POOL_SIZE] ALIGNED;" % M)
    if not io_in_pool:
        for kind, ios in (("in", ins), ("out", outs)):
            for i, t in enumerate(ios):
                add("static uint8_t %s%d[TVMGEN_%s_%s_SIZE] ALIGNED;"
                    % (kind, i, M, t["name"].upper()))
    add("static struct tvmgen_%s_inputs inputs;" % m)
    add("static struct tvmgen_%s_outputs outputs;" % m)
    if pools:
        add("static struct tvmgen_%s_workspace_pools pools;" % m)
    if const_pool:
        add("static struct tvmgen_%s_constant_pools constant_pools;" % m)
    add("static uint8_t *input_buf[%d], *output_buf[%d];"
        % (max(len(ins), 1), max(len(outs), 1)))
    for kind, ios in (("input", ins), ("output", outs)):
        add("static const uint32_t %s_size[%d] = {%s};" % (
            kind, max(len(ios), 1),
            ", ".join("TVMGEN_%s_%s_SIZE" % (M, t["name"].upper()) for t in ios) or "0"))
    add("static uint8_t *const pool_buf[%d] = {%s};\n"
        % (max(len(pools), 1), ", ".join("pool%d" % i for i in range(len(pools))) or "0"))
    add("/* Points every struct at its buffers again (run.mjs overwrites them"
        " to test\n * the generated run's checks); copies the constant pool"
        " in. */")
    add("EXPORT void tn_wasm_reset(void) {")
    for i, p in enumerate(pools):
        add("  pools.%s = pool%d;" % (p["name"], i))
    if const_pool:
        add("  __builtin_memcpy(constants, TVMGEN_%s_CONSTANT_POOL_DATA, "
            "sizeof constants);" % M)
        add("  constant_pools.constants = constants;")
    if io_in_pool:
        add("  inputs = tvmgen_%s_map_inputs(&pools);" % m)
        add("  outputs = tvmgen_%s_map_outputs(&pools);" % m)
    else:
        for kind, st, ios in (("in", "inputs", ins), ("out", "outputs", outs)):
            for i, t in enumerate(ios):
                add("  %s.%s = %s%d;" % (st, t["name"], kind, i))
    for kind, st, ios in (("input", "inputs", ins), ("output", "outputs", outs)):
        for i, t in enumerate(ios):
            add("  %s_buf[%d] = (uint8_t *)%s.%s;" % (kind, i, st, t["name"]))
    add("}\n")
    args = [] if io_in_pool else ["&inputs", "&outputs"]
    args += ["&pools"] if pools else []
    args += ["&constant_pools"] if const_pool else []
    add("EXPORT int32_t tn_wasm_run(void) { return tvmgen_%s_run(%s); }"
        % (m, ", ".join(args)))
    add("EXPORT int32_t tn_wasm_num_inputs(void) { return %d; }" % len(ins))
    add("EXPORT int32_t tn_wasm_num_outputs(void) { return %d; }" % len(outs))
    for kind, n in (("input", len(ins)), ("output", len(outs)), ("pool", len(pools))):
        add("EXPORT void *tn_wasm_%s(int32_t i) { return i >= 0 && i < %d ? "
            "%s_buf[i] : 0; }" % (kind, n, kind))
        if kind != "pool":
            add("EXPORT uint32_t tn_wasm_%s_size(int32_t i) { return i >= 0 && i "
                "< %d ? %s_size[i] : 0; }" % (kind, n, kind))
    add("/* The structs themselves (0 when the model has none), for the error"
        " checks. */")
    add("EXPORT void *tn_wasm_inputs(void) { return %s; }"
        % ("0" if io_in_pool or not ins else "&inputs"))
    add("EXPORT void *tn_wasm_workspace_pools(void) { return %s; }"
        % ("&pools" if pools else "0"))
    return "\n".join(L) + "\n"


def build(archive: str, out_dir: str, name: Optional[str] = None,
          cc: str = "clang", opt: str = "-O2",
          extra_cflags: Sequence[str] = ()) -> Built:
    """Writes the glue into out_dir and links <name>.wasm there."""
    info = load_info(archive, name)
    m = info["model_name"]
    os.makedirs(out_dir, exist_ok=True)
    glue_c = os.path.join(out_dir, "%s_wasm_glue.c" % m)
    with open(glue_c, "w") as f:
        f.write(glue(info))
    srcs = []
    for d in (os.path.join(archive, "codegen", "host", "src"),
              os.path.join(archive, "runtime", "src")):
        srcs += sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".c"))
    wasm = os.path.join(out_dir, "%s.wasm" % m)
    exports = ["-Wl,--export=%s" % e for e in GLUE_EXPORTS + ("tvmgen_%s_run" % m,)]
    cmd = ([cc, opt] + list(CFLAGS) + list(extra_cflags)
           + ["-I" + os.path.join(archive, "codegen", "host", "include"),
              "-I" + os.path.join(archive, "runtime", "include")]
           + list(LDFLAGS) + exports + ["-o", wasm] + srcs + [SUPPORT, glue_c])
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError("wasm build of %r failed:\n%s\n%s"
                           % (m, " ".join(cmd), p.stderr[-4000:]))
    return Built(wasm, os.path.getsize(wasm), m, info, cmd)


def _as_bytes(x: Any, t: Dict[str, Any]) -> bytes:
    """One input as the model's raw bytes: an array (cast-checked) or bytes."""
    if isinstance(x, (bytes, bytearray)):
        data = bytes(x)
    else:
        a = np.asarray(x)
        if a.dtype != np.dtype(t["dtype"]) or a.size * a.itemsize != t["size_bytes"]:
            raise ValueError("input %s: %s %s given, the model takes %s %s"
                             % (t["name"], a.dtype, a.shape, t["dtype"], t["shape"]))
        data = np.ascontiguousarray(a).astype("<" + a.dtype.str[1:]).tobytes()
    if len(data) != t["size_bytes"]:
        raise ValueError("input %s: %d bytes given, the model takes %d"
                         % (t["name"], len(data), t["size_bytes"]))
    return data


def run(built: Built, inputs: Sequence[Any], check: bool = False,
        node: str = "node", repeat: int = 1) -> Dict[str, Any]:
    """Runs the module under node. Returns run.mjs's JSON with "outputs"
    as numpy arrays of the model's shapes and dtypes (when it ran)."""
    ins = built.info["inputs"]
    if len(inputs) != len(ins):
        raise ValueError("model %r takes %d input(s), %d given"
                         % (built.name, len(ins), len(inputs)))
    with tempfile.TemporaryDirectory(prefix="tn_wasm_") as tmp:
        paths = []
        for i, (x, t) in enumerate(zip(inputs, ins)):
            paths.append(os.path.join(tmp, "in%d.bin" % i))
            with open(paths[-1], "wb") as f:
                f.write(_as_bytes(x, t))
        cmd = [node, RUNNER, built.wasm] + (["--check"] if check else []) + \
            ["--repeat", str(repeat)] + paths
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    lines = p.stdout.strip().splitlines()
    if not lines:
        raise RuntimeError("run.mjs printed nothing (exit %d): %s"
                           % (p.returncode, p.stderr[-2000:]))
    res: Dict[str, Any] = json.loads(lines[-1])
    if "outputs" in res:
        res["outputs"] = [
            np.frombuffer(bytes.fromhex(h), np.dtype(t["dtype"]).newbyteorder("<"))
            .astype(t["dtype"]).reshape(t["shape"])
            for h, t in zip(res["outputs"], built.info["outputs"])]
    return res


def _load_input(path: str) -> Any:
    if path.endswith(".npy"):
        return np.load(path)
    with open(path, "rb") as f:
        return f.read()


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("archive", help="the exported archive (a folder)")
    ap.add_argument("inputs", nargs="+", help="one .npy or raw file per input")
    ap.add_argument("--name", help="the model's name (default: the archive's only one)")
    ap.add_argument("--out", help="where the glue and the .wasm go (default: a temporary folder)")
    ap.add_argument("--opt", default="-O2", help="clang's optimisation flag (default -O2)")
    ap.add_argument("--check", action="store_true",
                    help="also check the error codes of a NULL input and a misaligned pool")
    ap.add_argument("--repeat", type=int, default=1, help="run N times, report the mean time")
    ap.add_argument("--save", help="write the outputs to this .npz")
    ap.add_argument("--cc", default="clang")
    ap.add_argument("--node", default="node")
    ap.add_argument("-v", "--verbose", action="store_true", help="print the clang command")
    a = ap.parse_args(argv)
    missing = tools(a.cc, a.node)
    if missing:
        print("run.py: %s" % missing, file=sys.stderr)
        return 2
    tmp = None if a.out else tempfile.mkdtemp(prefix="tn_wasm_")
    try:
        built = build(a.archive, a.out or str(tmp), a.name, a.cc, a.opt)
        if a.verbose:
            print(" ".join(built.command))
        res = run(built, [_load_input(p) for p in a.inputs], a.check, a.node, a.repeat)
    except (OSError, ValueError, RuntimeError) as e:
        print("run.py: %s" % e, file=sys.stderr)
        return 2
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    print("model %s: %s, %d bytes (memory %d bytes)" % (
        built.name, built.wasm if a.out else "%s.wasm" % built.name, built.size,
        res["memory_bytes"]))
    if "trap" in res:
        print("trap: %s" % res["trap"])
        return 1
    print("status %d, %.3f ms a run" % (res["status"], res["run_ms"]))
    for t, o in zip(built.info["outputs"], res.get("outputs", [])):
        print("%s %s %s: %s" % (t["name"], t["dtype"], list(o.shape),
                                np.array2string(o.reshape(-1), threshold=64)))
    if a.check:
        print("checks: %s" % json.dumps(res["checks"]))
    if a.save and "outputs" in res:
        np.savez(a.save, **{t["name"]: o for t, o in zip(built.info["outputs"], res["outputs"])})
    bad_checks = a.check and any(res["checks"][k] != v for k, v in EXPECTED_CHECKS.items()
                                 if k in res["checks"])
    return 0 if res["status"] == 0 and not bad_checks else 1


if __name__ == "__main__":
    sys.exit(main())
