#!/usr/bin/env python3
"""run.py: build a compiled model into bare-metal Cortex-M firmware and run
it on the target's qemu board (the target table, firmware/targets.txt: the
Cortex-M4 on mps2-an386 by default, the Cortex-M33 on mps2-an505, ...).

Given an exported Model Library Format archive (a directory), the model's
name and its input files (.npy, or raw .bin bytes), this writes the model's
glue for the harness (fw_model.h: X-macro lists over the generated header's
size macros; fw_input.c: the input bytes as C arrays), compiles the harness
with the archive's generated C and crt sources using arm-none-eabi-gcc,
checks the link holds no allocator, runs the ELF under qemu with
-icount shift=0, and reports as JSON: the outputs, the status, the
instructions of one inference, the stack high-water mark, the sizes of the
firmware and of the crt alone, and "memory": the RAM the model needs, its
pools (the kernels' scratch planned inside them) + the inputs and outputs
outside the pools + the stack the run used (memory_report). With --bad-calls the firmware first makes
deliberately wrong calls and the report says which error codes came back.

Standard library only, so that it runs anywhere the toolchain does:

    python3 firmware/common/run.py out/kws_mlf kws input.npy
    python3 firmware/common/run.py --target m33 out/kws_mlf kws input.npy
    python3 firmware/common/run.py --cycles out/kws_mlf kws input.npy
    python3 firmware/common/run.py --target m55 --profile out/kws_mlf kws input.npy

--cycles also runs the firmware under a qemu plugin (cycles_plugin.c) and
estimates the inference's Cortex-M4 cycles from what it executed, per
instruction class and per operator function (cycles.py has the timing
table and what it leaves out). --profile counts the same per operator
and per function without pricing them, on any target (the M7 and the
M55, which the table does not describe, included).

--build-only --session builds the model behind the UART (session_uart.c,
the crt's device session) and prints where its ELF is, without running
it: what tvmnode-serve --device NAME=qemu-m4:ARCHIVE starts under qemu.

Other scripts import it and call build_and_run(); see README.md.
"""
from __future__ import annotations

import argparse
import ast
import concurrent.futures
import hashlib
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import threading
from fractions import Fraction
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
FIRMWARE = os.path.dirname(HERE)
TARGETS_FILE = os.path.join(FIRMWARE, "targets.txt")
HARNESS = ["main.c", "startup.c", "semihost.c", "measure.c"]
# What build(harness="session_uart.c") adds: the UART, and the crt's device
# session (its link and nanopb messages), which no model archive carries.
SESSION_HARNESS = ["uart.c"]
SESSION_CRT = ["frame.c", "crc32.c", "session.c", "session_nanopb.c", "tvmnode_session.pb.c"]
CRT_TREE = os.path.join(os.path.dirname(FIRMWARE), "runtime", "crt")
DEFAULT_TARGET = "m4"

GCC = "arm-none-eabi-gcc"
NM = "arm-none-eabi-nm"
SIZE = "arm-none-eabi-size"
QEMU = "qemu-system-arm"
CMAKE = "cmake"



class Target(NamedTuple):
    """One row of firmware/targets.txt (its header says what the columns
    mean)."""
    name: str
    folder: str
    machine: str
    cpu: str
    instructions_per_tick: Fraction
    linker_script: str
    flags: List[str]


def targets() -> Dict[str, Target]:
    """The target table, by name, in the file's order."""
    out: Dict[str, Target] = {}
    with open(TARGETS_FILE) as f:
        for line in f:
            words = line.split("#", 1)[0].split()
            if not words:
                continue
            if len(words) < 6:
                raise ValueError("%s: a row needs name, machine, cpu, ipt, ld and flags: %r"
                                 % (TARGETS_FILE, line))
            name, machine, cpu, ipt, ld = words[:5]
            if not re.fullmatch(r"[1-9]\d*(/[1-9]\d*)?", ipt):
                raise ValueError("%s: row %s: ipt is a whole number or a fraction N/D, not %r"
                                 % (TARGETS_FILE, name, ipt))
            folder = os.path.join(FIRMWARE, name)
            out[name] = Target(name, folder, machine, cpu, Fraction(ipt),
                               os.path.join(folder, ld), words[5:])
    return out


def get_target(name: str = DEFAULT_TARGET) -> Target:
    """One target of the table; FirmwareError names the others."""
    table = targets()
    if name not in table:
        raise FirmwareError("no target %r in %s (there are: %s)"
                            % (name, TARGETS_FILE, ", ".join(table)))
    return table[name]


# -std=c11 already turns FMA contraction off; it is spelled out because
# the float outputs are compared bit for bit with the host's.
COMMON_FLAGS = ["-std=c11", "-ffp-contract=off", "-ffunction-sections",
                "-fdata-sections", "-Wall", "-Wextra", "-Werror", "-g"]
ALLOCATORS = ("malloc", "free", "calloc", "realloc",
              "_malloc_r", "_free_r", "_calloc_r", "_realloc_r")
DEFAULT_STACK = 64 * 1024

# metadata dtype -> struct format character
DTYPES = {"int8": "b", "uint8": "B", "int16": "h", "uint16": "H",
          "int32": "i", "uint32": "I", "int64": "q", "uint64": "Q",
          "float32": "f", "float64": "d", "bool": "?"}
# .npy descr (without byte order) -> metadata dtype
NPY_DTYPES = {"i1": "int8", "u1": "uint8", "i2": "int16", "u2": "uint16",
              "i4": "int32", "u4": "uint32", "i8": "int64", "u8": "uint64",
              "f4": "float32", "f8": "float64", "b1": "bool"}


class FirmwareError(RuntimeError):
    """A step of building or running the firmware failed; the message says
    which and carries the tool's own output."""


# The default target's flags and linker script, for callers that predate
# the table.
ARCH_FLAGS = targets()[DEFAULT_TARGET].flags
LINKER_SCRIPT = targets()[DEFAULT_TARGET].linker_script


def toolchain_missing() -> Optional[str]:
    """None when every tool is on PATH, else a sentence naming what is not."""
    missing = [t for t in (GCC, NM, SIZE, QEMU) if shutil.which(t) is None]
    if not missing:
        return None
    return ("%s not installed (Debian: gcc-arm-none-eabi libnewlib-arm-none-eabi "
            "qemu-system-arm)" % ", ".join(missing))


# --- the archive ---------------------------------------------------------

def read_metadata(archive: str, name: str) -> Dict[str, Any]:
    with open(os.path.join(archive, "metadata.json")) as f:
        meta = json.load(f)
    modules = meta.get("modules", {})
    if name not in modules:
        raise FirmwareError("%s/metadata.json has no model %r (it has: %s)"
                            % (archive, name, ", ".join(sorted(modules))))
    info: Dict[str, Any] = modules[name]
    iface = info["interface"]
    if iface.get("devices"):
        raise FirmwareError("the harness defines no device hooks; compile without devices")
    if any(p["kind"] == "state" for p in info["memory"]["pools"]):
        raise FirmwareError("model %s keeps state between runs; the harness passes no "
                            "state pool" % name)
    return info


def read_input(path: str, spec: Dict[str, Any]) -> bytes:
    """The bytes of one input: a .npy file of the input's dtype and size, or
    a raw file of exactly size_bytes bytes."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] == b"\x93NUMPY":
        major = data[6]
        hlen_size = 2 if major == 1 else 4
        hlen = int.from_bytes(data[8:8 + hlen_size], "little")
        start = 8 + hlen_size
        header = ast.literal_eval(data[start:start + hlen].decode("latin-1"))
        descr = header["descr"]
        if not isinstance(descr, str) or descr[0] == ">" or header["fortran_order"]:
            raise FirmwareError("%s: only little-endian C-order .npy arrays are read" % path)
        dtype = NPY_DTYPES.get(descr.lstrip("<|="))
        if dtype != spec["dtype"]:
            raise FirmwareError("%s: dtype %s, but input %s is %s"
                                % (path, descr, spec["name"], spec["dtype"]))
        data = data[start + hlen:]
    if len(data) != spec["size_bytes"]:
        raise FirmwareError("%s: %d bytes, but input %s takes %d"
                            % (path, len(data), spec["name"], spec["size_bytes"]))
    return data


def workspace_pools(info: Dict[str, Any]) -> List[Dict[str, Any]]:
    """The workspace pools of the generated struct, as the generator
    decides: those with bytes, and the first one when the inputs and
    outputs live there (io_in_pool)."""
    io_in_pool = bool(info["interface"].get("io_in_pool"))
    ws = [p for p in info["memory"]["pools"] if p["kind"] == "workspace"]
    return [p for i, p in enumerate(ws) if p["size_bytes"] > 0 or (io_in_pool and i == 0)]


def model_header(name: str, info: Dict[str, Any]) -> str:
    """fw_model.h: what main.c needs to know of the model, in terms of the
    generated header's own macros."""
    up = "TVMGEN_%s" % name.upper()
    io_in_pool = bool(info["interface"].get("io_in_pool"))
    pools = workspace_pools(info)
    const = info["interface"].get("constants_in_pool") and any(
        p["kind"] == "constant" and p["size_bytes"] > 0 for p in info["memory"]["pools"])

    def xlist(macro: str, items: Sequence[Tuple[str, str]]) -> str:
        body = " ".join("X(%s, %s)" % it for it in items)
        return "#define %s(X) %s\n" % (macro, body)

    h = ["/* fw_model.h: model '%s' as firmware/common/main.c sees it; written by run.py. */\n"
         "#ifndef FW_MODEL_H_\n#define FW_MODEL_H_\n\n#include \"tvmgen_%s.h\"\n\n" % (name, name),
         "#define FW_MODEL_NAME \"%s\"\n" % name,
         "#define FW_RUN tvmgen_%s_run\n" % name,
         "#define FW_MODEL tvmgen_%s_model\n" % name,
         "#define FW_ALIGNMENT %s_ALIGNMENT\n" % up,
         "#define FW_INPUTS_STRUCT struct tvmgen_%s_inputs\n" % name,
         "#define FW_OUTPUTS_STRUCT struct tvmgen_%s_outputs\n" % name,
         xlist("FW_INPUTS", [(i["name"], "%s_%s_SIZE" % (up, i["name"].upper()))
                             for i in info["inputs"]]),
         xlist("FW_OUTPUTS", [(o["name"], "%s_%s_SIZE" % (up, o["name"].upper()))
                              for o in info["outputs"]])]
    if info["inputs"]:
        h.append("#define FW_FIRST_INPUT %s\n" % info["inputs"][0]["name"])
    h.append("#define FW_HAS_POOLS %d\n" % bool(pools))
    h.append("#define FW_IO_IN_POOL %d\n" % io_in_pool)
    if io_in_pool:
        h += ["#define FW_MAP_INPUTS tvmgen_%s_map_inputs\n" % name,
              "#define FW_MAP_OUTPUTS tvmgen_%s_map_outputs\n" % name]
    if info["interface"].get("workspace_section"):
        h.append("#define FW_POOL_SECTION %s_WORKSPACE_SECTION\n" % up)
    if pools:
        h += ["#define FW_POOLS_STRUCT struct tvmgen_%s_workspace_pools\n" % name,
              xlist("FW_POOLS", [(p["name"], "%s_%s_WORKSPACE_POOL_SIZE"
                                  % (up, p["name"].upper())) for p in pools]),
              "#define FW_FIRST_POOL %s\n" % pools[0]["name"]]
    h.append("#define FW_HAS_CONSTANT_POOL %d\n" % bool(const))
    if const:
        h += ["#define FW_CONSTANT_POOLS_STRUCT struct tvmgen_%s_constant_pools\n" % name,
              "#define FW_CONSTANT_POOL_SIZE %s_CONSTANT_POOL_SIZE\n" % up,
              "#define FW_CONSTANT_POOL_DATA %s_CONSTANT_POOL_DATA\n" % up]
    h.append("\n#endif /* FW_MODEL_H_ */\n")
    return "".join(h)


def input_source(name: str, info: Dict[str, Any], data: Sequence[bytes]) -> str:
    """fw_input.c: each input's bytes as a constant array (in flash)."""
    out = ["/* fw_input.c: the input of model '%s'; written by run.py. */\n"
           "#include <stdint.h>\n\n#include \"fw_model.h\"\n" % name]
    for spec, raw in zip(info["inputs"], data):
        out.append("\nextern const uint8_t fw_input_%s[%d];\nconst uint8_t fw_input_%s[%d] = {"
                   % (spec["name"], len(raw), spec["name"], len(raw)))
        for i in range(0, len(raw), 16):
            out.append("\n  " + " ".join("%d," % b for b in raw[i:i + 16]))
        out.append("\n};\n")
    return "".join(out)


# --- building ------------------------------------------------------------

def _run(cmd: Sequence[str], what: str, timeout: Optional[float] = None) -> str:
    try:
        p = subprocess.run(list(cmd), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           stdin=subprocess.DEVNULL, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode(errors="replace")
        raise FirmwareError("%s: no end after %s s\n%s" % (what, timeout, out[-2000:])) from None
    text = p.stdout.decode(errors="replace")
    if p.returncode != 0:
        raise FirmwareError("%s failed (exit %d): %s\n%s"
                            % (what, p.returncode, " ".join(cmd), text[-4000:]))
    return text


def _included_digest(src: str, cmd_flags: Sequence[str]) -> str:
    """A digest of the headers src includes, directly or not (the
    compiler's own -MM list, in its order; the toolchain's headers left
    out), each by its name and text: the same for a source of a copy of
    the crt whose changed header it does not include."""
    rule = _run([GCC] + list(cmd_flags) + ["-MM", src], "listing the headers of " + src)
    # "obj.o: src.c a.h \\\n b.h": the rule's prerequisites after the
    # source, blanks in names escaped by a backslash
    deps = re.findall(r"(?:\\.|[^\s\\])+", rule.replace("\\\n", " ").split(": ", 1)[-1])
    h = hashlib.sha256()
    for d in deps[1:]:
        path = d.replace("\\ ", " ")
        h.update(os.path.basename(path).encode() + b"\0")
        with open(path, "rb") as f:
            h.update(f.read() + b"\0")
    return h.hexdigest()


def _compile_all(sources: Sequence[str], flags: Sequence[str], include_dirs: Sequence[str],
                 objdir: str, cache: Optional[str]) -> List[str]:
    """Compile each source into objdir (in parallel). With a cache folder, an
    object is reused when the source, every header it includes (as the
    compiler lists them) and the flags are what they were."""
    os.makedirs(objdir, exist_ok=True)
    if cache:
        os.makedirs(cache, exist_ok=True)
    cmd_flags = list(flags) + ["-I" + d for d in include_dirs]

    # Objects are named by their path below the sources' common folder
    # (kernels/x86/conv_s8.c -> kernels__x86__conv_s8.o): an ISA form has
    # its portable file's name.
    top = os.path.commonpath([os.path.dirname(os.path.abspath(s)) for s in sources]) \
        if sources else ""

    def one(src: str) -> str:
        rel = os.path.relpath(os.path.abspath(src), top)
        base = os.path.splitext(rel)[0].replace(os.sep, "__")
        obj = os.path.join(objdir, base + ".o")
        cached = None
        if cache:
            with open(src, "rb") as f:
                key = hashlib.sha256(f.read() + b"\0" + _included_digest(src, cmd_flags).encode()
                                     + b"\0" + "\0".join(flags).encode()).hexdigest()
            cached = os.path.join(cache, "%s-%s.o" % (base, key[:24]))
            if os.path.exists(cached):
                shutil.copyfile(cached, obj)
                return obj
        _run([GCC] + cmd_flags + ["-c", src, "-o", obj], "compiling " + src)
        if cached:
            tmp = "%s.%d.%d.tmp" % (cached, os.getpid(), threading.get_ident())
            shutil.copyfile(obj, tmp)
            os.replace(tmp, cached)
        return obj

    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        return list(pool.map(one, sources))


def _c_files(folder: str) -> List[str]:
    out = []
    for root, _, names in os.walk(folder):
        out += [os.path.join(root, n) for n in names if n.endswith(".c")]
    return sorted(out)


def section_sizes(path: str) -> Dict[str, int]:
    """Bytes of .text, .rodata, .data and .bss (each with its
    -ffunction-sections/-fdata-sections pieces) in an ELF or object, as
    arm-none-eabi-size -A reports them."""
    sizes = {"text": 0, "rodata": 0, "data": 0, "bss": 0}
    for line in _run([SIZE, "-A", path], "arm-none-eabi-size").splitlines():
        parts = line.split()
        if len(parts) != 3 or not parts[1].isdigit():
            continue
        for key in sizes:
            if parts[0] == "." + key or parts[0].startswith("." + key + "."):
                sizes[key] += int(parts[1])
        if parts[0] == ".ARM.exidx":
            sizes["text"] += int(parts[1])
        if parts[0] == ".stack":
            sizes["stack"] = int(parts[1])
    return sizes


def allocators_in(elf: str) -> List[str]:
    """Allocator symbols (defined or undefined) in a linked ELF."""
    found = set()
    for line in _run([NM, elf], "arm-none-eabi-nm").splitlines():
        parts = line.split()
        if parts and parts[-1] in ALLOCATORS:
            found.add(parts[-1])
    return sorted(found)


def target_flags(t: Target, opt: str) -> List[str]:
    """Every flag a source of target t is compiled with."""
    return t.flags + [opt] + COMMON_FLAGS


def harness_defines(t: Target) -> List[str]:
    """What the harness's own sources learn of the board: a tick is
    FW_INSTRUCTIONS_PER_TICK / FW_INSTRUCTIONS_PER_TICK_DEN instructions."""
    ipt = t.instructions_per_tick
    return ["-DFW_INSTRUCTIONS_PER_TICK=%du" % ipt.numerator,
            "-DFW_INSTRUCTIONS_PER_TICK_DEN=%du" % ipt.denominator,
            "-DFW_TARGET=\"%s\"" % t.name]


def instructions(target: str, ticks: int) -> int:
    """The instructions `ticks` SysTick ticks stand for on a target, as the
    firmware computes them (measure.h: rounded down)."""
    ipt = get_target(target).instructions_per_tick
    return ticks * ipt.numerator // ipt.denominator


def link(t: Target, objects: Sequence[str], elf: str, stack_size: int = DEFAULT_STACK,
         opt: str = "-Os", map_file: Optional[str] = None) -> str:
    """Link objects into elf with the target's linker script, newlib's libm
    and libc and libgcc; returns elf."""
    cmd = [GCC] + target_flags(t, opt) + [
        "-nostdlib", "-L", HERE, "-T", t.linker_script, "-Wl,--gc-sections",
        "-Wl,--defsym=FW_STACK_SIZE=%d" % stack_size, "-o", elf]
    if map_file:
        cmd.append("-Wl,-Map=" + map_file)
    _run(cmd + list(objects) + ["-Wl,--start-group", "-lm", "-lc", "-lgcc",
                                "-Wl,--end-group"], "linking " + os.path.basename(elf))
    return elf


def write_glue(archive: str, name: str, inputs: Sequence[Optional[str]],
               workdir: str) -> Tuple[Dict[str, Any], str]:
    """fw_model.h and fw_input.c in workdir/gen; returns the model's
    metadata and that folder."""
    info = read_metadata(archive, name)
    if len(inputs) != len(info["inputs"]):
        raise FirmwareError("model %s takes %d inputs (%s), %d files given"
                            % (name, len(info["inputs"]),
                               ", ".join(i["name"] for i in info["inputs"]), len(inputs)))
    data = [bytes(spec["size_bytes"]) if path is None else read_input(path, spec)
            for spec, path in zip(info["inputs"], inputs)]
    gen = os.path.join(workdir, "gen")
    os.makedirs(gen, exist_ok=True)
    with open(os.path.join(gen, "fw_model.h"), "w") as f:
        f.write(model_header(name, info))
    with open(os.path.join(gen, "fw_input.c"), "w") as f:
        f.write(input_source(name, info, data))
    return info, gen


def cmake_build(archives: Sequence[Tuple[str, str]], workdir: str, *,
                gen: Optional[str] = None, main: str = "main.c", opt: str = "-Os",
                bad_calls: bool = False, stack_size: int = DEFAULT_STACK,
                target: str = DEFAULT_TARGET, defines: Sequence[str] = ()) -> str:
    """Configure and build firmware/common/CMakeLists.txt in workdir/cmake
    with the toolchain file firmware/cmake/arm-none-eabi.cmake: the harness
    source main, linking each archive (folder, model name) through the
    CMakeLists.txt it carries. defines: more -D settings of the project.
    Returns the ELF's path."""
    if shutil.which(CMAKE) is None:
        raise FirmwareError("cmake is not installed (Debian: apt-get install cmake)")
    build_dir = os.path.join(workdir, "cmake")
    cmd = [CMAKE, "-S", HERE, "-B", build_dir,
           "-DCMAKE_TOOLCHAIN_FILE=" + os.path.join(FIRMWARE, "cmake", "arm-none-eabi.cmake"),
           "-DFW_TARGET=" + target, "-DCMAKE_BUILD_TYPE=",
           "-DFW_ARCHIVES=" + ";".join(os.path.abspath(a) for a, _ in archives),
           "-DFW_MODELS=" + ";".join(n for _, n in archives),
           "-DFW_GEN=" + os.path.abspath(gen or os.path.join(workdir, "gen")),
           "-DFW_MAIN=" + main, "-DFW_OPT=" + opt, "-DFW_BAD_CALLS=%d" % bool(bad_calls),
           "-DFW_STACK_SIZE=%d" % stack_size] + ["-D" + d for d in defines]
    _run(cmd, "cmake (configure)")
    _run([CMAKE, "--build", build_dir, "-j", "2"], "cmake --build")
    return os.path.join(build_dir, "fw.elf")


def build_cmake(archive: str, name: str, inputs: Sequence[Optional[str]], workdir: str, *,
                opt: str = "-Os", bad_calls: bool = False, stack_size: int = DEFAULT_STACK,
                target: str = DEFAULT_TARGET,
                linker_script: Optional[str] = None,
                all_forms: bool = False) -> Dict[str, Any]:
    """build(), through CMake: the archive's CMakeLists.txt makes its
    targets, and firmware/common/CMakeLists.txt links them with the
    harness (cmake_build). Same result. linker_script: one instead of the
    target's (it may INCLUDE sections.ld); all_forms as build()'s (the
    archive's TVMNODE_CRT_CONV_S8_FORMS otherwise)."""
    t = get_target(target)
    archive = os.path.abspath(archive)
    info, gen = write_glue(archive, name, inputs, workdir)
    defines = ["FW_LD=" + os.path.abspath(linker_script)] if linker_script else []
    for key in ("conv_s8_forms", "dense_s8_forms"):
        forms = info["interface"].get(key)
        defines.append("TVMNODE_CRT_%s=%s" % (key.upper(),
                       "" if forms is None or all_forms else forms))
    elf = cmake_build([(archive, name)], workdir, gen=gen, opt=opt, bad_calls=bad_calls,
                      stack_size=stack_size, target=target, defines=defines)
    bad = allocators_in(elf)
    if bad:
        raise FirmwareError("the firmware links an allocator: %s" % ", ".join(bad))
    crt_objs = []
    for root, _, names in os.walk(os.path.join(workdir, "cmake", "models")):
        if os.sep + "tvmnode_crt_" in root:
            crt_objs += [os.path.join(root, n) for n in names if n.endswith(".obj")]
    crt_size = {"text": 0, "rodata": 0, "data": 0, "bss": 0}
    for obj in crt_objs:
        for k, v in section_sizes(obj).items():
            crt_size[k] += v
    return {"elf": elf, "info": info, "size": section_sizes(elf), "crt_size": crt_size,
            "crt_objects": len(crt_objs), "flags": target_flags(t, opt), "target": t.name}


def models_source(models: Sequence[Tuple[str, Dict[str, Any], Sequence[bytes]]]) -> str:
    """fw_models.c for multi.c: per model (name, metadata, input bytes) its
    input bytes, buffers, a run function over the one shared pool and an
    output printer; the shared pool, as large as the largest model's pool
    and aligned to the largest alignment. FirmwareError for a model the
    harness does not drive (more than one workspace pool, inputs and
    outputs in the pool, a constant pool, devices or state)."""
    out = ["/* fw_models.c: %s in one firmware, one workspace pool; written by run.py. */\n"
           "#include <stddef.h>\n#include <stdint.h>\n#include <string.h>\n\n"
           % ", ".join(n for n, _, _ in models)]
    for name, info, _ in models:
        out.append('#include "tvmgen_%s.h"\n' % name)
    sizes, aligns = [], []
    for name, info, _ in models:
        iface = info["interface"]
        pools = [p for p in info["memory"]["pools"] if p["kind"] != "workspace"
                 or p["size_bytes"] > 0]
        if (iface.get("io_in_pool") or iface.get("constants_in_pool") or iface.get("devices")
                or any(p["kind"] != "workspace" for p in pools) or len(pools) > 1):
            raise FirmwareError("model %s: the several-model harness takes models with one "
                                "workspace pool and their own I/O buffers, no constant pool, "
                                "devices or state" % name)
        up = "TVMGEN_%s" % name.upper()
        aligns.append("%s_ALIGNMENT" % up)
        if pools:
            sizes.append("%s_%s_WORKSPACE_POOL_SIZE" % (up, pools[0]["name"].upper()))
    size = "1"
    for s_ in sizes:
        size = "((%s) > (%s) ? (%s) : (%s))" % (s_, size, s_, size)
    align = "1"
    for a in aligns:
        align = "((%s) > (%s) ? (%s) : (%s))" % (a, align, a, align)
    out.append("\n#define FW_SHARED_POOL_SIZE %s\n#define FW_SHARED_ALIGN %s\n"
               "static uint8_t fw_shared_pool[FW_SHARED_POOL_SIZE]"
               " __attribute__((aligned(FW_SHARED_ALIGN)));\n"
               "extern const uint32_t fw_shared_pool_size;\n"
               "const uint32_t fw_shared_pool_size = FW_SHARED_POOL_SIZE;\n"
               "void fw_print_output(const char *model, const char *name, const uint8_t *bytes,"
               " size_t n);\n" % (size, align))
    for name, info, data in models:
        up = "TVMGEN_%s" % name.upper()
        al = "__attribute__((aligned(%s_ALIGNMENT)))" % up
        pools = [p for p in info["memory"]["pools"] if p["size_bytes"] > 0]
        out.append("\n/* %s */\n" % name)
        for spec, raw in zip(info["inputs"], data):
            out.append("static const uint8_t %s_input_%s[%d] = {" % (name, spec["name"], len(raw)))
            for i in range(0, len(raw), 16):
                out.append("\n  " + " ".join("%d," % b for b in raw[i:i + 16]))
            out.append("\n};\nstatic uint8_t %s_in_%s[%s_%s_SIZE] %s;\n"
                       % (name, spec["name"], up, spec["name"].upper(), al))
        for spec in info["outputs"]:
            out.append("static uint8_t %s_out_%s[%s_%s_SIZE] %s;\n"
                       % (name, spec["name"], up, spec["name"].upper(), al))
        out.append("\nstatic int32_t run_%s(void) {\n" % name)
        for spec in info["inputs"]:
            out.append("  memcpy(%s_in_%s, %s_input_%s, sizeof %s_in_%s);\n"
                       % ((name, spec["name"]) * 3))
        out.append("  struct tvmgen_%s_inputs in = {%s};\n" % (
            name, ", ".join("%s_in_%s" % (name, s_["name"]) for s_ in info["inputs"]) or "0"))
        out.append("  struct tvmgen_%s_outputs out = {%s};\n" % (
            name, ", ".join("%s_out_%s" % (name, s_["name"]) for s_ in info["outputs"]) or "0"))
        if pools:
            out.append("  struct tvmgen_%s_workspace_pools ws = {fw_shared_pool};\n"
                       "  return tvmgen_%s_run(&in, &out, &ws);\n}\n" % (name, name))
        else:
            out.append("  return tvmgen_%s_run(&in, &out);\n}\n" % name)
        out.append("\nstatic void print_%s(void) {\n" % name)
        for spec in info["outputs"]:
            out.append('  fw_print_output("%s", "%s", %s_out_%s, sizeof %s_out_%s);\n'
                       % (name, spec["name"], name, spec["name"], name, spec["name"]))
        out.append("}\n")
    out.append("\ntypedef struct {\n  const char *name;\n  int32_t (*run)(void);\n"
               "  void (*print)(void);\n} FwModel;\n"
               "extern const FwModel fw_models[];\nextern const int fw_num_models;\n"
               "const FwModel fw_models[] = {\n")
    for name, _, _ in models:
        out.append('  {"%s", run_%s, print_%s},\n' % (name, name, name))
    out.append("};\nconst int fw_num_models = %d;\n" % len(models))
    return "".join(out)


def build_multi(models: Sequence[Tuple[str, str, Sequence[Optional[str]]]], workdir: str, *,
                opt: str = "-Os", rounds: int = 2, stack_size: int = DEFAULT_STACK,
                target: str = DEFAULT_TARGET) -> Dict[str, Any]:
    """Several models (archive, name, input files) in one firmware through
    CMake: multi.c and fw_models.c, every archive add_subdirectory()'d,
    one workspace pool shared. Returns the ELF, each model's metadata and
    the firmware's sizes."""
    gen = os.path.join(workdir, "gen-multi")
    os.makedirs(gen, exist_ok=True)
    entries = []
    infos = {}
    for archive, name, inputs in models:
        info = read_metadata(os.path.abspath(archive), name)
        if len(inputs) != len(info["inputs"]):
            raise FirmwareError("model %s takes %d inputs, %d files given"
                                % (name, len(info["inputs"]), len(inputs)))
        data = [bytes(spec["size_bytes"]) if path is None else read_input(path, spec)
                for spec, path in zip(info["inputs"], inputs)]
        entries.append((name, info, data))
        infos[name] = info
    with open(os.path.join(gen, "fw_models.c"), "w") as f:
        f.write(models_source(entries))
    elf = cmake_build([(a, n) for a, n, _ in models], workdir, gen=gen, main="multi.c",
                      opt=opt, stack_size=stack_size, target=target,
                      defines=["FW_ROUNDS=%d" % rounds])
    bad = allocators_in(elf)
    if bad:
        raise FirmwareError("the firmware links an allocator: %s" % ", ".join(bad))
    return {"elf": elf, "infos": infos, "size": section_sizes(elf), "rounds": rounds}


def run_multi(models: Sequence[Tuple[str, str, Sequence[Optional[str]]]], workdir: str, *,
              opt: str = "-Os", rounds: int = 2, target: str = DEFAULT_TARGET,
              timeout: float = 120.0) -> Dict[str, Any]:
    """build_multi() and a run on qemu: per model a list of its outputs
    (name -> bytes) for each round, the statuses, the shared pool's size,
    the stack high-water mark, the sizes and "ram": .data + .bss + the
    stack's high-water mark."""
    b = build_multi(models, workdir, opt=opt, rounds=rounds, target=target)
    code, text = run_program(b["elf"], target, timeout)
    res: Dict[str, Any] = {"outputs": {n: [] for _, n, _ in models}, "status": {},
                           "exit_code": code, "log": text, "size": b["size"], "elf": b["elf"]}
    for line in text.splitlines():
        w = line.split()
        if len(w) >= 4 and w[0] == "models" and w[2] == "pool":
            res["pool_bytes"] = int(w[3])
        elif len(w) == 5 and w[0] == "run" and w[3] == "status":
            res["status"].setdefault(w[1], []).append(int(w[4]))
            res["outputs"][w[1]].append({})
        elif len(w) == 5 and w[0] == "output" and w[1] in res["outputs"]:
            raw = bytes.fromhex(w[4])
            if len(raw) != int(w[3]):
                raise FirmwareError("output %s %s: %d bytes, the line says %s"
                                    % (w[1], w[2], len(raw), w[3]))
            res["outputs"][w[1]][-1][w[2]] = raw
        elif w and w[0] == "stack":
            res["stack_bytes"] = int(w[1])
        elif w and w[0] == "done":
            res["done"] = int(w[1])
        elif w and w[0] == "fault":
            raise FirmwareError("the firmware faulted: %s\n%s" % (line, text[-2000:]))
    if "done" not in res:
        raise FirmwareError("qemu exited with %d before the firmware finished\n%s"
                            % (code, text[-2000:]))
    res["ram"] = b["size"]["data"] + b["size"]["bss"] + res.get("stack_bytes", 0)
    res["ok"] = code == 0 and all(s == 0 for v in res["status"].values() for s in v)
    return res


def build(archive: str, name: str, inputs: Sequence[Optional[str]], workdir: str, *,
          opt: str = "-Os", bad_calls: bool = False, stack_size: int = DEFAULT_STACK,
          cache: Optional[str] = None, harness_flags: Sequence[str] = (),
          target: str = DEFAULT_TARGET, harness: str = "main.c",
          all_forms: bool = False) -> Dict[str, Any]:
    """Write the glue, compile and link fw.elf in workdir for a target of
    the table. inputs: one file per model input (None: zeros);
    harness_flags: more flags for the harness's own sources
    (-DFW_SYST_RELOAD=..., say); harness: the main source (session_uart.c:
    the model behind the UART, with the crt's device session from the
    source tree); all_forms: compile every form of the crt's int8
    convolution and dense layer, not only those the model's layers take
    (metadata's conv_s8_forms and dense_s8_forms, as -DTN_CRT_CONV_S8_FORMS
    and -DTN_CRT_DENSE_S8_FORMS). Returns the paths and sizes;
    raises FirmwareError when the link holds an allocator."""
    t = get_target(target)
    archive = os.path.abspath(archive)
    info, gen = write_glue(archive, name, inputs, workdir)
    flags = target_flags(t, opt)
    for key in ("conv_s8_forms", "dense_s8_forms"):
        forms = info["interface"].get(key)
        if forms is not None and not all_forms:
            flags = flags + ["-DTN_CRT_%s=%d" % (key.upper(), forms)]
    model_inc = [os.path.join(archive, "codegen", "host", "include"),
                 os.path.join(archive, "runtime", "include")]
    crt_src = os.path.join(archive, "runtime", "src")
    crt_objs = _compile_all(_c_files(crt_src), flags, model_inc + [crt_src],
                            os.path.join(workdir, "obj", "crt"), cache)
    model_objs = _compile_all(_c_files(os.path.join(archive, "codegen", "host", "src")),
                              flags, model_inc, os.path.join(workdir, "obj", "model"), cache)
    own, own_inc = [harness] + HARNESS[1:], []
    if harness == "session_uart.c":
        own_inc = [os.path.join(CRT_TREE, "include"), t.folder]  # board.h: the UART
        own += SESSION_HARNESS
        # (crc32.c comes with an archive whose constants are in a pool)
        crt_objs += _compile_all([os.path.join(CRT_TREE, "src", f) for f in SESSION_CRT
                                  if not os.path.exists(os.path.join(crt_src, f))],
                                 flags, [os.path.join(CRT_TREE, "include"),
                                         os.path.join(CRT_TREE, "src")],
                                 os.path.join(workdir, "obj", "session"), cache)
    harness_objs = _compile_all([os.path.join(HERE, s) for s in own]
                                + [os.path.join(gen, "fw_input.c")],
                                flags + ["-DFW_BAD_CALLS=%d" % bool(bad_calls)]
                                + harness_defines(t) + list(harness_flags),
                                [gen, HERE] + model_inc + own_inc,
                                os.path.join(workdir, "obj", "harness"), cache)
    elf = os.path.join(workdir, "fw.elf")
    link(t, harness_objs + model_objs + crt_objs, elf, stack_size, opt,
         os.path.join(workdir, "fw.map"))
    bad = allocators_in(elf)
    if bad:
        raise FirmwareError("the firmware links an allocator: %s" % ", ".join(bad))
    crt_size = {"text": 0, "rodata": 0, "data": 0, "bss": 0}
    for obj in crt_objs:
        for k, v in section_sizes(obj).items():
            crt_size[k] += v
    return {"elf": elf, "info": info, "size": section_sizes(elf), "crt_size": crt_size,
            "crt_objects": len(crt_objs), "flags": flags, "target": t.name}


def build_program(sources: Sequence[str], workdir: str, *, target: str = DEFAULT_TARGET,
                  opt: str = "-O2", flags: Sequence[str] = (),
                  include_dirs: Sequence[str] = (), crt: Optional[str] = None,
                  cache: Optional[str] = None, elf_name: str = "program.elf",
                  stack_size: int = DEFAULT_STACK) -> str:
    """A firmware that is not a model (kernels_check.c, ticks_check.c):
    sources (names in firmware/common, or paths) with startup, semihosting
    and measuring, plus, with crt (a crt folder with include/ and src/),
    every crt source, all for the target; flags go to the sources only.
    Returns the ELF's path."""
    t = get_target(target)
    tflags = target_flags(t, opt)
    objs: List[str] = []
    inc = list(include_dirs)
    if crt:
        inc += [os.path.join(crt, "include"), os.path.join(crt, "src"),
                os.path.join(crt, "src", "kernels")]
        objs += _compile_all(_c_files(os.path.join(crt, "src")), tflags, inc,
                             os.path.join(workdir, "obj", "crt"), cache)
    own = [os.path.join(HERE, s) for s in sources]
    own += [os.path.join(HERE, s) for s in ("startup.c", "semihost.c", "measure.c")
            if s not in sources]
    objs = _compile_all(own, tflags + harness_defines(t) + list(flags), [HERE] + inc,
                        os.path.join(workdir, "obj", "harness"), cache) + objs
    return link(t, objs, os.path.join(workdir, elf_name), stack_size, opt)


def run_program(elf: str, target: str = DEFAULT_TARGET,
                timeout: float = 120.0,
                loads: Sequence[Tuple[str, int]] = ()) -> Tuple[int, str]:
    """Run a firmware under qemu: its exit code and its text. `loads`:
    (file, address) pairs that qemu's generic loader writes to the board's
    memory before the start, as raw bytes (data programmed apart from the
    firmware, such as a parameter blob in external flash)."""
    cmd = qemu_command(elf, target)
    for path, addr in loads:
        cmd += ["-device", "loader,file=%s,addr=0x%x,force-raw=on" % (path, addr)]
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                           timeout=timeout,
                           preexec_fn=_no_core_dump if os.name == "posix" else None)
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode(errors="replace")
        raise FirmwareError("qemu: no exit after %s s\n%s" % (timeout, out[-2000:])) from None
    return p.returncode, p.stdout.decode(errors="replace")


# --- running -------------------------------------------------------------

def qemu_command(elf: str, target: str = DEFAULT_TARGET,
                 plugin: Optional[str] = None) -> List[str]:
    t = get_target(target)
    extra = ["-plugin", plugin] if plugin else []
    return [QEMU, "-M", t.machine, "-cpu", t.cpu, "-nographic", "-monitor", "none",
            "-semihosting-config", "enable=on,target=native", "-icount", "shift=0",
            *extra, "-kernel", elf]


# --- the cycle estimate (--cycles) ----------------------------------------

def _symbols(elf: str) -> Dict[str, int]:
    """The firmware's function addresses (the Thumb bit clear)."""
    out: Dict[str, int] = {}
    for line in _run([NM, elf], "nm").splitlines():
        w = line.split()
        if len(w) == 3 and w[1] in "tTwW":
            out[w[2]] = int(w[0], 16) & ~1
    return out


def _symbol(syms: Dict[str, int], elf: str, name: str) -> int:
    if name not in syms:
        raise FirmwareError("%s: no symbol %s" % (elf, name))
    return syms[name]


def cycles_plugin(workdir: str) -> str:
    """cycles_plugin.c built for this host's qemu (once per workdir)."""
    src = os.path.join(HERE, "cycles_plugin.c")
    so = os.path.join(workdir, "cycles_plugin.so")
    if not os.path.exists(so) or os.path.getmtime(so) < os.path.getmtime(src):
        cc = shutil.which("cc") or shutil.which("gcc")
        if cc is None:
            raise FirmwareError("--cycles needs a host C compiler (cc) for the qemu plugin")
        os.makedirs(workdir, exist_ok=True)
        _run([cc, "-O2", "-shared", "-fPIC", "-Wall", "-Werror", src, "-o", so],
             "building the qemu plugin")
    return so


def _cycles_module() -> Any:
    """firmware/common/cycles.py, imported from this folder."""
    sys.path.insert(0, HERE)
    try:
        import cycles
    finally:
        sys.path.remove(HERE)
    return cycles


def priced(target: str) -> Any:
    """cycles.py, when its timing table describes the target's core;
    FirmwareError otherwise (cycles.PRICED_CPUS says which and why)."""
    cycles = _cycles_module()
    t = get_target(target)
    if t.cpu not in cycles.PRICED_CPUS:
        raise FirmwareError("--cycles: the estimate's timing table is the Cortex-M4's "
                            "(firmware/common/cycles.py), which does not describe the %s "
                            "of target %s (it prices %s); the report's instruction count "
                            "is exact without it" % (t.cpu, target,
                                                     ", ".join(cycles.PRICED_CPUS)))
    return cycles


def profile(elf: str, workdir: str, target: str = DEFAULT_TARGET,
            timeout: float = 120.0, priced_only: bool = True) -> Dict[str, Any]:
    """Run the firmware once more under cycles_plugin.c and price what ran
    between fw_profile_on and fw_profile_off (the timed inference) with
    cycles.py's Cortex-M4 table: instructions, estimated cycles, the
    per-class histogram and the per-function (per-operator) table.
    FirmwareError for a target whose core the table does not describe
    (cycles.PRICED_CPUS). With priced_only false (--profile) any core is
    counted and the result has instructions only: no cycles, classes by
    instructions, tables ordered by instructions."""
    cycles = priced(target) if priced_only else _cycles_module()
    counts = os.path.join(workdir, "cycles.txt")
    if os.path.exists(counts):
        os.remove(counts)
    syms = _symbols(elf)
    # the generated operator functions, in address order: the regions
    ops = sorted((a, n) for n, a in syms.items() if re.match(r"^tvmgen_\w+_op\d+_", n))
    regions = os.path.join(workdir, "cycles_regions.txt")
    with open(regions, "w") as f:
        f.write("".join("%x\n" % a for a, _ in ops))
    plugin = "%s,on=%x,off=%x,regions=%s,out=%s" % (
        cycles_plugin(workdir), _symbol(syms, elf, "fw_profile_on"),
        _symbol(syms, elf, "fw_profile_off"), regions, counts)
    try:
        subprocess.run(qemu_command(elf, target, plugin), stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, timeout=timeout,
                       preexec_fn=_no_core_dump if os.name == "posix" else None)
    except subprocess.TimeoutExpired:
        raise FirmwareError("qemu with the cycle plugin: no exit after %s s" % timeout) from None
    if not os.path.exists(counts):
        raise FirmwareError("the qemu plugin wrote no counts (%s)" % counts)
    insns, funcs = cycles.disassemble(elf, GCC.replace("gcc", "objdump"))
    est: Dict[str, Any] = cycles.estimate(cycles.read_counts(counts), insns, funcs,
                                          [n for _, n in ops])
    if not priced_only:
        est = cycles.instructions_only(est)
    est["table"] = cycles.format_table(est)
    return est


def session_pricing(elf: str, workdir: str, target: str) -> Optional[Dict[str, str]]:
    """For a session firmware on a core cycles.py prices: the cycle plugin
    and the firmware's price table, with which the emulator counts each
    timed repeat's estimated cycles as it serves (cycles_plugin.c's
    session mode; tvmnode-serve starts qemu with them). None for other
    cores, whose timed requests report instructions only."""
    try:
        cycles = priced(target)
    except FirmwareError:
        return None
    prices = os.path.splitext(elf)[0] + ".prices"
    cycles.write_prices(elf, prices, _symbol(_symbols(elf), elf, "session_clock"),
                        GCC.replace("gcc", "objdump"))
    return {"plugin": os.path.abspath(cycles_plugin(workdir)), "prices": os.path.abspath(prices)}


def _values(raw: bytes, dtype: str) -> List[Any]:
    code = DTYPES.get(dtype)
    if code is None:
        raise FirmwareError("no reader for output dtype %s" % dtype)
    return list(struct.unpack("<%d%s" % (len(raw) // struct.calcsize(code), code), raw))


def _field(line: str, key: str) -> int:
    """The integer after `key=` on a line of the firmware's output."""
    m = re.search(r"\b%s=(-?\d+)" % key, line)
    if m is None:
        raise FirmwareError("no %s= in the firmware's line %r" % (key, line))
    return int(m.group(1))


def parse_output(text: str, info: Dict[str, Any]) -> Dict[str, Any]:
    """The firmware's lines (main.c's header comment) as a dict."""
    res: Dict[str, Any] = {"outputs": {}, "bad_calls": {}}
    specs = {o["name"]: o for o in info["outputs"]}
    for line in text.splitlines():
        words = line.split()
        if not words:
            continue
        key = words[0]
        if key in ("warmup", "run") and len(words) == 3 and words[1] == "status":
            res["warmup_status" if key == "warmup" else "status"] = int(words[2])
        elif key == "output" and len(words) == 4 and words[1] in specs:
            spec = specs[words[1]]
            raw = bytes.fromhex(words[3])
            if len(raw) != int(words[2]) or len(raw) != spec["size_bytes"]:
                raise FirmwareError("output %s: %d bytes, expected %d"
                                    % (words[1], len(raw), spec["size_bytes"]))
            res["outputs"][words[1]] = {"dtype": spec["dtype"], "shape": spec["shape"],
                                        "values": _values(raw, spec["dtype"])}
        elif key == "instructions":
            res["instructions"] = int(words[1])
            res["systick_ticks"] = _field(line, "ticks")
        elif key == "stack":
            res["stack_bytes"] = int(words[1])
            res["run_stack_bytes"] = _field(line, "run")
            res["stack_size"] = _field(line, "size")
        elif key == "bad" and len(words) == 6:
            res["bad_calls"][words[1]] = {"status": int(words[3]), "expected": int(words[5])}
        elif key == "fault":
            res["fault"] = line.strip()
        elif key == "done":
            res["done"] = int(words[1])
    return res


def _no_core_dump() -> None:
    # qemu aborts on a core lockup; the abort is the message, not a core file.
    try:
        import resource
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    except (ImportError, ValueError, OSError):
        pass


def run_elf(elf: str, info: Dict[str, Any], timeout: float = 120.0,
            target: str = DEFAULT_TARGET) -> Dict[str, Any]:
    """Run fw.elf under qemu; the parsed report plus its exit code and text."""
    cmd = qemu_command(elf, target)
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           stdin=subprocess.DEVNULL, timeout=timeout,
                           preexec_fn=_no_core_dump if os.name == "posix" else None)
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode(errors="replace")
        raise FirmwareError("qemu: no exit after %s s (a hang, or a lockup after a "
                            "stack overflow)\n%s" % (timeout, out[-2000:])) from None
    text = p.stdout.decode(errors="replace")
    res = parse_output(text, info)
    res["exit_code"] = p.returncode
    res["log"] = text
    if "Lockup" in text:
        # A fault whose exception frame cannot be pushed: with the stack at
        # the bottom of RAM, that is an overflow running off into unmapped
        # memory.
        raise FirmwareError("the core locked up, most likely a stack overflow "
                            "(give it more: --stack-size)\n%s" % text[-2000:])
    if "fault" in res:
        raise FirmwareError("the firmware faulted: %s\n%s" % (res["fault"], text[-2000:]))
    if "done" not in res:
        raise FirmwareError("qemu exited with %d before the firmware finished\n%s"
                            % (p.returncode, text[-2000:]))
    return res


def memory_report(info: Dict[str, Any], res: Dict[str, Any]) -> Dict[str, Any]:
    """What a user must reserve for the model, from its metadata and the
    run: the workspace pools (the kernels' scratch is planned inside them,
    sized for the archive's scratch_isa), the inputs and outputs outside
    the pools, and the stack the timed run used; "ram_bytes" is their sum.
    "harness_bytes" is the rest of the firmware's .data + .bss (the
    harness's own statics), which the model does not need."""
    mem = info["memory"]
    pools = sum(p["size_bytes"] for p in workspace_pools(info))
    io = 0 if info["interface"].get("io_in_pool") else sum(
        t["size_bytes"] for t in info["inputs"] + info["outputs"])
    ops = [o[0]["workspace_size_bytes"] for o in mem["functions"]["operator_functions"].values()]
    stack = res.get("run_stack_bytes", 0)
    data_bss = res["size"].get("data", 0) + res["size"].get("bss", 0)
    return {"pool_bytes": pools, "scratch_bytes": max(ops or [0]), "scratch_in_pool": True,
            "scratch_isa": info["interface"].get("scratch_isa", "portable"),
            "io_bytes": io, "run_stack_bytes": stack, "ram_bytes": pools + io + stack,
            "harness_bytes": data_bss - pools - io}


def build_and_run(archive: str, name: str, inputs: Sequence[Optional[str]], workdir: str, *,
                  opt: str = "-Os", bad_calls: bool = False, stack_size: int = DEFAULT_STACK,
                  cache: Optional[str] = None, timeout: float = 120.0,
                  harness_flags: Sequence[str] = (),
                  target: str = DEFAULT_TARGET, cmake: bool = False,
                  linker_script: Optional[str] = None,
                  all_forms: bool = False) -> Dict[str, Any]:
    """build() (build_cmake() with cmake) then run_elf(): the whole report
    (see the module docstring)."""
    if cmake:
        if cache or harness_flags:
            raise FirmwareError("build_and_run: cache and harness_flags are not for "
                                "the CMake build")
        b = build_cmake(archive, name, inputs, workdir, opt=opt, bad_calls=bad_calls,
                        stack_size=stack_size, target=target, linker_script=linker_script,
                        all_forms=all_forms)
    elif linker_script:
        raise FirmwareError("build_and_run: linker_script is for the CMake build")
    else:
        b = build(archive, name, inputs, workdir, opt=opt, bad_calls=bad_calls,
                  stack_size=stack_size, cache=cache, harness_flags=harness_flags,
                  target=target, all_forms=all_forms)
    res = run_elf(b["elf"], b["info"], timeout, target)
    res.update({"model": name, "target": target, "elf": b["elf"], "size": b["size"],
                "crt_size": b["crt_size"], "flags": b["flags"], "allocators": [],
                "command": qemu_command(b["elf"], target)})
    res["memory"] = memory_report(b["info"], res)
    res["ok"] = (res["exit_code"] == 0 and res.get("status") == 0
                 and all(c["status"] == c["expected"] for c in res["bad_calls"].values()))
    return res


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("archive", help="an exported archive directory")
    ap.add_argument("name", help="the model name (as given to compile)")
    ap.add_argument("inputs", nargs="*",
                    help="one .npy or raw .bin file per model input (none: all zeros)")
    ap.add_argument("--workdir", default=None, help="build folder (default: ARCHIVE/../fw-NAME)")
    ap.add_argument("--target", default=DEFAULT_TARGET,
                    help="a target of firmware/targets.txt (default %s; there are: %s)"
                    % (DEFAULT_TARGET, ", ".join(targets())))
    ap.add_argument("--opt", default="-Os", help="optimization flag (default -Os)")
    ap.add_argument("--bad-calls", action="store_true",
                    help="also make wrong calls and check their error codes")
    ap.add_argument("--stack-size", type=int, default=DEFAULT_STACK)
    ap.add_argument("--cache", default=None, help="a folder to reuse compiled objects from")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds qemu may run")
    ap.add_argument("--log", action="store_true", help="keep the firmware's own text in the JSON")
    ap.add_argument("--cmake", action="store_true",
                    help="build through CMake: the archive's CMakeLists.txt and "
                         "firmware/common/CMakeLists.txt with firmware/cmake/arm-none-eabi.cmake")
    ap.add_argument("--ld", default=None,
                    help="with --cmake: a linker script instead of the target's "
                         "(firmware/m4/mps2_an386_psram.ld, say)")
    ap.add_argument("--cycles", action="store_true",
                    help="also estimate Cortex-M4 cycles of the inference, per instruction "
                         "class and per operator (a qemu plugin; cycles.py has the table), "
                         "printed as a table on stderr and as 'cycles' in the JSON (on the "
                         "M4 and the M33; not on the M7 and the M55, whose pipelines the "
                         "M4's table does not describe)")
    ap.add_argument("--profile", action="store_true",
                    help="also count the inference's instructions per operator and per "
                         "function (the --cycles plugin, without its prices), on any "
                         "target; printed on stderr and as 'profile' in the JSON")
    ap.add_argument("--session", action="store_true",
                    help="build the model behind the UART (session_uart.c: the crt's device "
                         "session) instead of the one-run harness")
    ap.add_argument("--all-forms", action="store_true",
                    help="compile every form of the crt's int8 convolution and dense "
                         "layer, not only those the model's layers take (metadata.json's "
                         "conv_s8_forms, dense_s8_forms)")
    ap.add_argument("--build-only", action="store_true",
                    help="build, do not run: the JSON says where the ELF is ('elf')")
    args = ap.parse_args(argv)
    if args.session and not args.build_only:
        ap.error("--session needs --build-only (the session firmware waits for a host "
                 "on its UART: tvmnode-serve --device NAME=qemu-m4:ARCHIVE runs it)")
    if args.build_only and (args.cmake or args.cycles or args.profile or args.bad_calls):
        ap.error("--build-only takes none of --cmake, --cycles, --profile, --bad-calls")
    if args.cycles and args.profile:
        ap.error("--cycles already counts instructions per operator: give one of "
                 "--cycles, --profile")
    missing = toolchain_missing()
    if missing:
        print(json.dumps({"ok": False, "error": missing}))
        return 2
    try:
        if args.cycles:
            priced(args.target)
    except FirmwareError as e:
        print(json.dumps({"ok": False, "error": str(e)}, indent=1))
        return 1
    info = read_metadata(args.archive, args.name)
    n_inputs = len(info["inputs"])
    if info["interface"].get("scratch_isa", "portable") != "arm_dsp":
        print("run.py: note: %s's kernel scratch is sized for portable kernels (compiled "
              "without --target cortex-m): the DSP convolutions run without their "
              "packed forms, the same outputs, slower" % args.name, file=sys.stderr)
    inputs: List[Optional[str]] = list(args.inputs) or [None] * n_inputs
    workdir = args.workdir or os.path.join(os.path.dirname(os.path.abspath(args.archive)),
                                           "fw-" + args.name)
    if args.build_only:
        try:
            b = build(args.archive, args.name, inputs, workdir, opt=args.opt,
                      stack_size=args.stack_size, cache=args.cache, target=args.target,
                      harness="session_uart.c" if args.session else "main.c",
                      all_forms=args.all_forms)
        except FirmwareError as e:
            print(json.dumps({"ok": False, "error": str(e)}, indent=1))
            return 1
        res = {"ok": True, "elf": b["elf"], "target": b["target"], "size": b["size"],
               "command": qemu_command(b["elf"], args.target)}
        if args.session:
            try:
                res["cycles"] = session_pricing(b["elf"], workdir, args.target)
            except FirmwareError as e:
                print(json.dumps({"ok": False, "error": str(e)}, indent=1))
                return 1
        print(json.dumps(res, indent=1))
        return 0
    try:
        res = build_and_run(args.archive, args.name, inputs, workdir, opt=args.opt,
                            bad_calls=args.bad_calls, stack_size=args.stack_size,
                            cache=args.cache, timeout=args.timeout, target=args.target,
                            cmake=args.cmake, linker_script=args.ld,
                            all_forms=args.all_forms)
        if args.cycles:
            res["cycles"] = profile(res["elf"], workdir, args.target, args.timeout)
            print(res["cycles"].pop("table"), file=sys.stderr)
        if args.profile:
            res["profile"] = profile(res["elf"], workdir, args.target, args.timeout,
                                     priced_only=False)
            print(res["profile"].pop("table"), file=sys.stderr)
    except FirmwareError as e:
        print(json.dumps({"ok": False, "error": str(e)}, indent=1))
        return 1
    if not args.log:
        res.pop("log")
    print(json.dumps(res, indent=1))
    return 0 if res["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
