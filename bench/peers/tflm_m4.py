#!/usr/bin/env python3
"""bench/peers/tflm_m4.py: TFLite Micro with CMSIS-NN beside tvmnode on the
emulated Cortex-M4 (qemu mps2-an386), model by model.

For each MLPerf Tiny int8 model (KWS, AD, IC, the streaming wake word and,
when its file is there, VWW) this

1. compiles the model with tvmnode (`python -m tvmnode compile --target
   cortex-m`) and runs it with firmware/common/run.py's harness and its
   cycle estimate (run.build_and_run, run.profile: what `run.py --cycles`
   does), and once more compiled with `--io-in-pool` (the harness then has
   no I/O buffers: the input is written into the pool), for its RAM and
   outputs;
2. builds TFLite Micro with its CMSIS-NN kernels (the files of
   tensorflow/lite/micro/kernels/cmsis_nn/ replace the reference kernels
   of the same name, as TFLM's Makefile does for OPTIMIZED_KERNEL_DIR=cmsis_nn)
   into a firmware with the same startup, semihosting, measuring code and
   linker script (firmware/common, firmware/m4), the same compiler and core
   flags, and bench/peers/tflm_m4/main.cc as its main; the flatbuffer is a
   constant array in flash, the tensor arena a static array: a first
   build with a large one finds the smallest size AllocateTensors accepts
   (by bisection, on the board; it can be more than arena_used_bytes()),
   and the measured build has exactly that;
3. runs both on the same input bytes, checks that the outputs are the same
   bytes, and reports instructions of one inference (SysTick), estimated
   Cortex-M4 cycles (the same qemu plugin and timing table,
   firmware/common/cycles.py), flash (.text + .rodata), RAM (.data + .bss,
   which hold the arena or the pools and the I/O buffers, plus the stack
   the inference used; ours with and without I/O in the pool) and the
   ratios tvmnode / TFLM. It prints a table and writes OUT/tflm_m4.json
   (--ram-only: only step 1, without the cycle estimate, and a table of our
   RAM with and without --io-in-pool in OUT/tflm_m4_ram.json);
4. checks the cycle estimator against a published latency: it builds the
   microTVM + CMSIS-NN keyword-spotting program that OctoML submitted to
   MLPerf Tiny v1.0 (its generated C and the TVM crt's stack allocator, as
   published in mlcommons/tiny_results_v1.0, with CMSIS-NN of August 2022
   and tflm_m4/microtvm_main.c as its main) on the same harness, runs it on
   the KWS input, and sets its estimated cycles beside the published median
   (NUCLEO-L4R5ZI, 120 MHz: cycles = ms x 120,000). Today's TFLM estimate
   is also set beside that figure and beside the published TFLite Micro
   v2.3.1 + CMSIS-NN one (MLPerf Tiny v0.5, Reference).

`--target NAME` builds and runs both sides for another row of
firmware/targets.txt with its flags and board instead (the M55:
`--target m55`, mps3-an547, where gcc 12.2 with -mcpu=cortex-m55 defines
__ARM_FEATURE_MVE and CMSIS-NN compiles its MVE kernels, as TFLM's
cortex_m_generic build for that core does). Where the cycle estimate's
timing table does not describe the core (firmware/common/cycles.py:
the M4's, which prices neither the M7's dual issue nor the M55's beats),
the table has instructions, flash and RAM without estimated cycles, the
estimator check (its published latencies are the M4 board's) is
skipped, and the JSON is OUT/tflm_NAME.json.

Inputs are the ones examples/deploy.py runs: the first bundled sample
(python/examples/deploy/samples/sample0.npy) for KWS, and for the other
models the first of its seeded random inputs
(numpy.random.default_rng(0).integers(min, max + 1, shape)). They are made
by the tvmnode interpreter (--python), which has numpy; this script itself
needs only the standard library.

Sources (not in this repository: pass --sources DIR, a folder with one
subfolder each, or each folder with its own option). The commits are the
ones TFLM's own download scripts pin at the TFLM commit used
(tensorflow/lite/micro/tools/make/third_party_downloads.inc,
ext_libs/cmsis_nn_download.sh, ext_libs/cmsis_download.sh,
flatbuffers_download.sh):

    tflite-micro  github.com/tensorflow/tflite-micro  90b983c2b3f1480642e040bbd2ddb37b998f3424
    CMSIS-NN      github.com/ARM-software/CMSIS-NN    4ab83cc3cc98fb85ed6dafb55e8ca02f1628dcae
    CMSIS_6       github.com/ARM-software/CMSIS_6     5782d6f8057906d360f4b95ec08a2354afe5c9b9
    flatbuffers   github.com/google/flatbuffers       187240970746d00bbd26b0f5873ed54d2477f9f3
                  (tag v25.9.23, with TFLM's tools/make/flatbuffers.patch applied)
    gemmlowp      github.com/google/gemmlowp          719139ce755a0f31cbf1c37f7f98adcc7fc9f425
    ruy           github.com/google/ruy               d37128311b445e758136b8602d1bbd2a755e115d
    mlcommons-tiny github.com/mlcommons/tiny          1afd2c9820f795965a6134facd0b4dfae41ef23f
                  (only for VWW: benchmark/training/visual_wake_words/
                  trained_models/vww_96_int8.tflite)
    tiny_results_v1.0 github.com/mlcommons/tiny_results_v1.0
                  c7761cf84076d601c4a0ed2ecc51e77d40696ed2 (only for the
                  estimator check: closed/OctoML/code/microtvm_cmsis_nn/
                  NUCLEO_L4R5ZI/kws and its performance/results.txt)
    CMSIS-NN-2022 github.com/ARM-software/CMSIS-NN    190612d076d00679e9c40dc616066f735345434c
                  (the same check: CMSIS-NN as of 2022-08-31; the submission
                  records no CMSIS commit)

The last three are optional: without them VWW or the check is skipped.

`--export-from DIR` makes such a folder from git clones (bare or not) named
DIR/<owner>+<name>/repo, DIR/<name>.git or DIR/<name>: `git archive` of
each pinned commit, the patch applied, the commit written to <sub>/.commit.
Each snapshot's commit (the .commit file, or `git rev-parse HEAD` in a
checkout) goes into the JSON.

    python3 bench/peers/tflm_m4.py --sources /work/tflm-sources \\
        --python build/python/venv/bin/python --out build-bench/bench

Needs arm-none-eabi-gcc/g++ 12.2 with newlib and libstdc++-arm-none-eabi-dev
(headers only: nothing of libstdc++ is linked), qemu-system-arm and a host
cc (for the plugin). Without the sources it says what it needs and exits
with 2.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import hashlib
import json
import os
import platform
import re
import shutil
import statistics
import struct
import subprocess
import sys
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
FW_COMMON = os.path.join(ROOT, "firmware", "common")
HARNESS_DIR = os.path.join(HERE, "tflm_m4")
sys.path.insert(0, FW_COMMON)
import run as fw  # noqa: E402  firmware/common/run.py

GXX = "arm-none-eabi-g++"
MODELS_DIR = "/work/shared/models"
SAMPLE = os.path.join(ROOT, "python", "examples", "deploy", "samples", "sample0.npy")
INITIAL_ARENA = 512 * 1024


OCTOML_KWS = "closed/OctoML/code/microtvm_cmsis_nn/NUCLEO_L4R5ZI/kws"
OCTOML_RESULT = "closed/OctoML/results/microtvm_cmsis_nn/NUCLEO_L4R5ZI/kws/performance/results.txt"


class Snapshot(NamedTuple):
    sub: str          # folder under --sources
    repo: str         # owner/name on GitHub
    commit: str       # the pinned commit
    marker: str       # a file that must exist in it
    optional: bool = False
    paths: Tuple[str, ...] = ()  # only these paths of the repository


SNAPSHOTS = [
    Snapshot("tflite-micro", "tensorflow/tflite-micro",
             "90b983c2b3f1480642e040bbd2ddb37b998f3424",
             "tensorflow/lite/micro/micro_interpreter.cc"),
    Snapshot("CMSIS-NN", "ARM-software/CMSIS-NN",
             "4ab83cc3cc98fb85ed6dafb55e8ca02f1628dcae", "Include/arm_nnfunctions.h"),
    Snapshot("CMSIS_6", "ARM-software/CMSIS_6",
             "5782d6f8057906d360f4b95ec08a2354afe5c9b9", "CMSIS/Core/Include/cmsis_compiler.h"),
    Snapshot("flatbuffers", "google/flatbuffers",
             "187240970746d00bbd26b0f5873ed54d2477f9f3", "include/flatbuffers/flatbuffers.h"),
    Snapshot("gemmlowp", "google/gemmlowp",
             "719139ce755a0f31cbf1c37f7f98adcc7fc9f425", "fixedpoint/fixedpoint.h"),
    Snapshot("ruy", "google/ruy",
             "d37128311b445e758136b8602d1bbd2a755e115d", "ruy/profiler/instrumentation.h"),
    Snapshot("mlcommons-tiny", "mlcommons/tiny",
             "1afd2c9820f795965a6134facd0b4dfae41ef23f",
             "benchmark/training/visual_wake_words/trained_models/vww_96_int8.tflite",
             optional=True,
             paths=("benchmark/training/visual_wake_words/trained_models/vww_96_int8.tflite",)),
    # the estimator's check against a published latency: the microTVM +
    # CMSIS-NN keyword-spotting submission of MLPerf Tiny v1.0 (its
    # generated C and crt), with CMSIS-NN as it was before that round
    Snapshot("tiny_results_v1.0", "mlcommons/tiny_results_v1.0",
             "c7761cf84076d601c4a0ed2ecc51e77d40696ed2",
             OCTOML_KWS + "/model/codegen/host/src/default_lib2.c", optional=True,
             paths=(OCTOML_KWS, OCTOML_RESULT)),
    Snapshot("CMSIS-NN-2022", "ARM-software/CMSIS-NN",
             "190612d076d00679e9c40dc616066f735345434c", "Include/arm_nnfunctions.h",
             optional=True),
]
VWW_PATH = "benchmark/training/visual_wake_words/trained_models/vww_96_int8.tflite"

# (short name, file): the bundled models, then VWW from the mlcommons/tiny snapshot
MODELS = [("kws", "kws_ref_model.tflite"), ("ad", "ad01_int8.tflite"),
          ("ic", "pretrainedResnet_quant.tflite"), ("ww", "str_ww_ref_model.tflite"),
          ("vww", "")]

# TFLite BuiltinOperator -> MicroMutableOpResolver method (the ones these
# models need, and a few neighbours)
RESOLVER = {0: "AddAdd", 1: "AddAveragePool2D", 2: "AddConcatenation", 3: "AddConv2D",
            4: "AddDepthwiseConv2D", 6: "AddDequantize", 9: "AddFullyConnected",
            14: "AddLogistic", 17: "AddMaxPool2D", 18: "AddMul", 19: "AddRelu",
            21: "AddRelu6", 22: "AddReshape", 25: "AddSoftmax", 34: "AddPad",
            40: "AddMean", 45: "AddStridedSlice", 114: "AddQuantize"}

# With --int8-kernels: the registrations of the CMSIS-NN kernels that keep
# only their int8 path (TFLM's way to drop the int16/int4 code from flash)
INT8_REGISTRATION = {0: "Register_ADD_INT8", 1: "Register_AVERAGE_POOL_2D_INT8",
                     3: "Register_CONV_2D_INT8", 4: "Register_DEPTHWISE_CONV_2D_INT8",
                     9: "Register_FULLY_CONNECTED_INT8", 17: "Register_MAX_POOL_2D_INT8",
                     18: "Register_MUL_INT8", 25: "Register_SOFTMAX_INT8",
                     34: "Register_PAD_INT8"}

# What TFLM's Makefile adds for a Cortex-M build with CMSIS-NN
# (tools/make/Makefile COMMON_FLAGS and BUILD_TYPE=release,
# ext_libs/cmsis_nn.inc, targets/cortex_m_generic_makefile.inc).
TFLM_DEFINES = ["-DTF_LITE_STATIC_MEMORY", "-DTF_LITE_DISABLE_X86_NEON", "-DCMSIS_NN",
                "-DNDEBUG", "-DTF_LITE_STRIP_ERROR_STRINGS", "-DTF_LITE_MCU_DEBUG_LOG",
                "-DARM_NN_ENABLE_F16=0", "-DARM_NN_ENABLE_F32=0"]
TFLM_COMMON = ["-ffunction-sections", "-fdata-sections", "-fno-unwind-tables",
               "-fno-asynchronous-unwind-tables", "-fmessage-length=0", "-fsigned-char"]
CXX_ONLY = ["-std=c++17", "-fno-rtti", "-fno-exceptions", "-fno-threadsafe-statics"]
C_ONLY = ["-std=c17"]


class BenchError(RuntimeError):
    pass


# --- sources ---------------------------------------------------------------

def _git_dir(root: str, repo: str) -> Optional[str]:
    owner, name = repo.split("/")
    for cand in (os.path.join(root, "%s+%s" % (owner, name), "repo"),
                 os.path.join(root, name + ".git"), os.path.join(root, name)):
        if os.path.isdir(cand):
            return cand
    return None


def export_sources(mirrors: str, dest: str) -> None:
    """git archive of each pinned commit from the clones in `mirrors` into
    dest/<sub>, with TFLM's flatbuffers patch applied."""
    for s in SNAPSHOTS:
        out = os.path.join(dest, s.sub)
        if os.path.exists(os.path.join(out, ".commit")):
            continue
        gd = _git_dir(mirrors, s.repo)
        if gd is None:
            print("no clone of %s under %s" % (s.repo, mirrors), file=sys.stderr)
            continue
        os.makedirs(out, exist_ok=True)
        arch = subprocess.run(["git", "--git-dir", gd, "archive", s.commit] + list(s.paths),
                              stdout=subprocess.PIPE, check=True).stdout
        subprocess.run(["tar", "-x", "-C", out], input=arch, check=True)
        if s.sub == "flatbuffers":
            patch = os.path.join(dest, "tflite-micro", "tensorflow", "lite", "micro", "tools",
                                 "make", "flatbuffers.patch")
            subprocess.run(["patch", "-s", "-p1", "-d", out, "-i", patch], check=True)
        with open(os.path.join(out, ".commit"), "w") as f:
            f.write(s.commit + "\n")


def snapshot_commit(path: str) -> str:
    marker = os.path.join(path, ".commit")
    if os.path.exists(marker):
        with open(marker) as f:
            return f.read().strip()
    p = subprocess.run(["git", "-C", path, "rev-parse", "HEAD"], stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, text=True)
    return p.stdout.strip() if p.returncode == 0 else "unknown"


def find_sources(args: argparse.Namespace) -> Tuple[Dict[str, str], List[str]]:
    """{sub: folder} of the snapshots present, and what is missing."""
    found: Dict[str, str] = {}
    missing: List[str] = []
    for s in SNAPSHOTS:
        given = getattr(args, s.sub.replace("-", "_").lower(), None)
        path = given or (os.path.join(args.sources, s.sub) if args.sources else "")
        if path and os.path.exists(os.path.join(path, s.marker)):
            found[s.sub] = os.path.abspath(path)
        elif not s.optional:
            missing.append("%s (github.com/%s at %s; checked for %s)"
                           % (s.sub, s.repo, s.commit, os.path.join(path or "?", s.marker)))
    return found, missing


# --- the model file ----------------------------------------------------------

def _u32(buf: bytes, pos: int) -> int:
    return int(struct.unpack_from("<I", buf, pos)[0])


def _table(buf: bytes, pos: int) -> Callable[[int], Optional[int]]:
    """A flatbuffer table at pos: field index -> the field's position (None
    when absent)."""
    vt = pos - struct.unpack_from("<i", buf, pos)[0]
    vlen = struct.unpack_from("<H", buf, vt)[0]

    def field(i: int) -> Optional[int]:
        off = 4 + 2 * i
        if off >= vlen:
            return None
        f = struct.unpack_from("<H", buf, vt + off)[0]
        return pos + f if f else None
    return field


def model_operators(buf: bytes) -> List[int]:
    """The builtin operator codes of a .tflite flatbuffer (Model.operator_codes)."""
    model = _table(buf, _u32(buf, 0))
    vec = model(1)
    if vec is None:
        return []
    vec += _u32(buf, vec)
    codes = []
    for k in range(_u32(buf, vec)):
        e = vec + 4 + 4 * k
        oc = _table(buf, e + _u32(buf, e))
        dep, new = oc(0), oc(3)
        codes.append(max(struct.unpack_from("<b", buf, dep)[0] if dep else 0,
                         struct.unpack_from("<i", buf, new)[0] if new else 0))
    return sorted(set(codes))


# --- building TFLM -----------------------------------------------------------

def tflm_sources(src: Dict[str, str]) -> List[str]:
    """What TFLM's Makefile compiles into libtensorflow-microlite.a for
    OPTIMIZED_KERNEL_DIR=cmsis_nn (tests and benchmarks left out), plus
    CMSIS-NN's int8/int16 sources; --gc-sections keeps what is used."""
    t = src["tflite-micro"]
    micro = os.path.join(t, "tensorflow", "lite", "micro")
    out: List[str] = []
    for d in ("", "arena_allocator", "memory_planner", "tflite_bridge"):
        folder = os.path.join(micro, d)
        out += sorted(os.path.join(folder, n) for n in os.listdir(folder)
                      if n.endswith(".cc") and not n.endswith("_test.cc"))
    lite = os.path.join(t, "tensorflow")
    for root, dirs, names in os.walk(lite):
        rel = os.path.relpath(root, t)
        if rel.startswith(os.path.join("tensorflow", "lite", "micro")) or \
                rel.startswith(os.path.join("tensorflow", "lite", "experimental")):
            dirs[:] = []
            continue
        out += sorted(os.path.join(root, n) for n in names
                      if (n.endswith(".cc") or n.endswith(".c")) and n != "array.cc")
    with open(os.path.join(micro, "tools", "make", "sources.inc")) as f:
        inc = f.read()
    block = inc.split("MICROLITE_CC_KERNEL_SRCS := \\", 1)[1].split("\n\n", 1)[0]
    kernels = re.findall(r"tensorflow/lite/micro/kernels/[\w/]+\.cc", block)
    cmsis = os.path.join(micro, "kernels", "cmsis_nn")
    special = set(os.listdir(cmsis))
    for k in kernels:
        name = os.path.basename(k)
        out.append(os.path.join(cmsis, name) if name in special else os.path.join(t, k))
    for root, _, names in os.walk(os.path.join(src["CMSIS-NN"], "Source")):
        out += sorted(os.path.join(root, n) for n in names if n.endswith(".c")
                      and not n.endswith(("_f16.c", "_f32.c")) and n != "arm_nntables_flt.c")
    return out


def tflm_includes(src: Dict[str, str]) -> List[str]:
    return [src["tflite-micro"], os.path.join(src["flatbuffers"], "include"), src["gemmlowp"],
            src["ruy"], src["CMSIS_6"], os.path.join(src["CMSIS_6"], "CMSIS", "Core", "Include"),
            src["CMSIS-NN"], os.path.join(src["CMSIS-NN"], "Include")]


def compile_objects(sources: Sequence[str], flags: Sequence[str], objdir: str, key: str,
                    jobs: int) -> List[str]:
    """Compile each source (g++ for .cc, gcc for .c) into objdir; an object
    is reused when its source, the flags and `key` (the snapshots' commits)
    are what they were."""
    os.makedirs(objdir, exist_ok=True)

    def one(src: str) -> str:
        with open(src, "rb") as f:
            digest = hashlib.sha256(f.read() + b"\0" + "\0".join(flags).encode() + b"\0"
                                    + key.encode() + src.encode()).hexdigest()[:20]
        base = os.path.splitext(os.path.basename(src))[0]
        obj = os.path.join(objdir, "%s-%s.o" % (base, digest))
        if not os.path.exists(obj):
            cc = GXX if src.endswith(".cc") else fw.GCC
            lang = CXX_ONLY if src.endswith(".cc") else C_ONLY
            if any(f.startswith("-std=") for f in flags):
                lang = [f for f in lang if not f.startswith("-std=")]
            tmp = obj + ".%d.tmp" % os.getpid()
            fw._run([cc] + list(flags) + lang + ["-c", src, "-o", tmp], "compiling " + src)
            os.replace(tmp, obj)
        return obj

    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        return list(pool.map(one, sources))


def _digest_dir(folder: str) -> str:
    """A digest of the headers in folder (what the harness includes)."""
    h = hashlib.sha256()
    for n in sorted(os.listdir(folder)):
        if n.endswith(".h"):
            with open(os.path.join(folder, n), "rb") as f:
                h.update(n.encode() + b"\0" + f.read())
    return h.hexdigest()


def c_array(name: str, data: bytes, align: int = 16) -> str:
    lines = ["#include <stddef.h>\n", "extern const unsigned char %s[];\n" % name,
             "alignas(%d) const unsigned char %s[%d] = {\n" % (align, name, max(len(data), 1))]
    for i in range(0, len(data), 24):
        lines.append(",".join(str(b) for b in data[i:i + 24]) + ",\n")
    lines.append("};\n")
    return "".join(lines)


def write_gen(gen: str, name: str, model: bytes, ops: Sequence[int], inp: bytes,
              arena: int, search: bool, int8: bool = False) -> None:
    os.makedirs(gen, exist_ok=True)
    methods = []
    for code in ops:
        if code not in RESOLVER:
            raise BenchError("%s: builtin operator %d has no entry in RESOLVER" % (name, code))
        reg = INT8_REGISTRATION.get(code) if int8 else None
        methods.append("%s, (%s)" % (RESOLVER[code], "tflite::%s()" % reg if reg else ""))
    files = {
        "tflm_config.h": "/* written by bench/peers/tflm_m4.py */\n"
                         "#define TFLM_MODEL_NAME \"%s\"\n#define TFLM_NUM_OPS %d\n"
                         "#define TFLM_OPS(X) %s\n#define TFLM_ARENA_SIZE %d\n"
                         "#define TFLM_ARENA_SEARCH %d\n"
                         % (name, len(methods), " ".join("X(%s)" % m for m in methods), arena,
                            search),
        "tflm_model.cc": c_array("tflm_model", model),
        "tflm_input.cc": c_array("tflm_input", inp) +
        "extern const size_t tflm_input_size;\nconst size_t tflm_input_size = %d;\n" % len(inp),
    }
    for fname, text in files.items():
        path = os.path.join(gen, fname)
        if os.path.exists(path):
            with open(path) as f:
                if f.read() == text:
                    continue
        with open(path, "w") as f:
            f.write(text)


def build_tflm(src: Dict[str, str], lib_objs: List[str], name: str, model: bytes,
               inp: bytes, arena: int, work: str, opt: str, key: str, jobs: int,
               search: bool = False, int8: bool = False, target: str = "m4") -> str:
    t = fw.get_target(target)
    gen = os.path.join(work, "gen")
    write_gen(gen, name, model, model_operators(model), inp, arena, search, int8)
    defines = fw.harness_defines(t)
    cxx_flags = t.flags + [opt] + TFLM_COMMON + TFLM_DEFINES + defines + \
        ["-I" + gen, "-I" + FW_COMMON] + \
        [f for d in tflm_includes(src) for f in ("-isystem", d)]  # its warnings are not ours
    own = compile_objects([os.path.join(HARNESS_DIR, "main.cc"),
                           os.path.join(gen, "tflm_model.cc"), os.path.join(gen, "tflm_input.cc")],
                          cxx_flags + ["-Wall", "-Wextra", "-Werror"],
                          os.path.join(work, "obj"), key + _digest_dir(gen), jobs)
    c_flags = fw.target_flags(t, opt) + defines + ["-I" + FW_COMMON]
    harness = compile_objects([os.path.join(FW_COMMON, s)
                               for s in ("startup.c", "semihost.c", "measure.c")],
                              c_flags, os.path.join(work, "obj"), key, jobs)
    elf = os.path.join(work, "tflm.elf")
    fw.link(t, harness + own + lib_objs, elf, fw.DEFAULT_STACK, opt,
            os.path.join(work, "tflm.map"))
    bad = fw.allocators_in(elf)
    if bad:
        raise BenchError("the TFLM firmware links an allocator: %s" % ", ".join(bad))
    return elf


def parse_tflm(text: str) -> Dict[str, Any]:
    res: Dict[str, Any] = fw.parse_output(text, {"outputs": []})
    outs: List[bytes] = []
    for line in text.splitlines():
        w = line.split()
        if len(w) == 4 and w[0] == "output":
            outs.append(bytes.fromhex(w[3]))
        elif len(w) >= 2 and w[0] == "arena":
            res["arena_used"] = fw._field(line, "used")
            res["arena_size"] = fw._field(line, "size")
        elif len(w) == 2 and w[0] == "arena_min":
            res["arena_min"] = int(w[1])
        elif len(w) == 3 and w[0] == "allocate":
            res["allocate_status"] = int(w[2])
    res["output_bytes"] = outs
    return res


def run_tflm(elf: str, target: str = "m4") -> Dict[str, Any]:
    code, text = fw.run_program(elf, target, timeout=600)
    res = parse_tflm(text)
    res["exit_code"] = code
    res["log"] = text
    return res


# --- tvmnode -----------------------------------------------------------------

def make_input(python: str, name: str, shape: Sequence[int], dtype: str, out: str) -> None:
    """The input examples/deploy.py would run first, as raw bytes."""
    code = (
        "import sys, numpy as np\n"
        "shape, dtype, out, sample = eval(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]\n"
        "if sample:\n"
        "    x = np.load(sample)\n"
        "else:\n"
        "    i = np.iinfo(dtype)\n"
        "    x = np.random.default_rng(0).integers(i.min, i.max + 1, shape)\n"
        "np.asarray(x).astype(dtype).reshape(shape).tofile(out)\n")
    sample = SAMPLE if name == "kws" else ""
    fw._run([python, "-c", code, repr(list(shape)), dtype, out, sample], "making the input")


def tvmnode_compile(python: str, model: str, name: str, out: str,
                    io_in_pool: bool = False) -> Dict[str, Any]:
    if not os.path.exists(os.path.join(out, "metadata.json")):
        fw._run([python, "-m", "tvmnode", "compile", model, "--target", "cortex-m",
                 "--name", name, "-o", out] + (["--io-in-pool"] if io_in_pool else []),
                "tvmnode compile " + model)
    return fw.read_metadata(out, name)


def ram(res: Dict[str, Any]) -> Dict[str, int]:
    """A firmware's RAM as the table counts it: .data + .bss and the stack
    the timed run used."""
    data_bss = res["size"].get("data", 0) + res["size"].get("bss", 0)
    return {"data_bss": data_bss, "run_stack": res["run_stack_bytes"],
            "ram": data_bss + res["run_stack_bytes"]}


def ours_io_in_pool(args: argparse.Namespace, name: str, path: str, work: str, inp: str,
                    ours: Dict[str, Any]) -> Dict[str, Any]:
    """The same model compiled with --io-in-pool on the same harness (no
    I/O buffers of the harness's: the input is written into the pool): its
    RAM, and whether its outputs are the plain build's."""
    archive = os.path.join(work, "mlf-io-in-pool")
    tvmnode_compile(args.python, path, name, archive, io_in_pool=True)
    res = fw.build_and_run(archive, name, [inp], os.path.join(work, "fw-io-in-pool"),
                           opt=args.opt, target=args.target, timeout=600,
                           cache=os.path.join(args.work, "objs" + args.opt))
    if not res["ok"]:
        raise BenchError("%s: the --io-in-pool firmware failed: %s" % (name, res["log"][-2000:]))
    return dict(ram(res), outputs_equal=out_bytes(res) == out_bytes(ours))


def out_bytes(res: Dict[str, Any]) -> List[bytes]:
    out = []
    for o in res["outputs"].values():
        code = fw.DTYPES[o["dtype"]]
        out.append(struct.pack("<%d%s" % (len(o["values"]), code), *o["values"]))
    return out


# --- the table ---------------------------------------------------------------

def side(size: Dict[str, int], run: Dict[str, Any],
         est: Optional[Dict[str, Any]]) -> Dict[str, Any]:
    """One side's row; est is None on a core the cycle estimate does not
    price (its instructions, flash and RAM only)."""
    data_bss = size.get("data", 0) + size.get("bss", 0)
    return {"instructions": run["instructions"],
            "plugin_instructions": est["instructions"] if est else None,
            "cycles": est["cycles"] if est else None,
            "flash": size.get("text", 0) + size.get("rodata", 0),
            "text": size.get("text", 0), "rodata": size.get("rodata", 0),
            "data_bss": data_bss, "run_stack": run["run_stack_bytes"],
            "stack": run["stack_bytes"], "ram": data_bss + run["run_stack_bytes"],
            "top_functions": est["functions"][:8] if est else []}


def table(rows: List[Dict[str, Any]]) -> str:
    head = ("| model | outputs equal | instructions tvmnode / TFLM | est. cycles tvmnode / TFLM"
            " | flash tvmnode / TFLM | RAM tvmnode / TFLM | RAM, I/O in pool, tvmnode / TFLM"
            " | TFLM arena (arena_used_bytes) |")
    out = [head, "|---|---|---:|---:|---:|---:|---:|---:|"]

    def pair(r: Dict[str, Any], k: str, side: str = "tvmnode") -> str:
        a, b = r[side][k], r["tflm"][k]
        if a is None or b is None:
            return "n/a"
        return "{:,} / {:,} ({:.2f})".format(a, b, a / b if b else float("nan"))
    for r in rows:
        equal = r["outputs_equal"] and r["tvmnode_io_in_pool"]["outputs_equal"]
        out.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["model"], "yes" if equal else "**no**", pair(r, "instructions"),
            pair(r, "cycles"), pair(r, "flash"), pair(r, "ram"),
            pair(r, "ram", "tvmnode_io_in_pool"),
            "{:,} ({:,})".format(r["tflm"]["arena_size"], r["tflm"]["arena_used"])))
    return "\n".join(out)


def ram_table(rows: List[Dict[str, Any]]) -> str:
    """--ram-only: our RAM with and without --io-in-pool, no TFLM."""
    out = ["| model | outputs equal | .data + .bss, plain / I/O in pool | run stack, plain /"
           " I/O in pool | RAM, plain / I/O in pool |", "|---|---|---:|---:|---:|"]
    for r in rows:
        a, b = r["tvmnode"], r["tvmnode_io_in_pool"]
        out.append("| %s | %s | %s | %s | %s |" % (
            r["model"], "yes" if b["outputs_equal"] else "**no**",
            *("{:,} / {:,}".format(a[k], b[k]) for k in ("data_bss", "run_stack", "ram"))))
    return "\n".join(out)


# --- the estimator against published latencies ------------------------------

MHZ = 120  # NUCLEO-L4R5ZI, the published figures' board
# The published TFLite Micro + CMSIS-NN figure: MLPerf Tiny v0.5, submitter
# "Reference", NUCLEO-L4R5ZI at 120 MHz, TFLite Micro v2.3.1 with its
# cmsis-nn tag, mbed-os, GCC 6-2017-q2 (mlcommons/tiny_results_v0.5 at
# d75aef63526dcbb30632f0529411f0219ed1003e,
# closed/reference/results/Nucleo-L4R5ZI/kws/performance/results.txt:
# median throughput 5.497 inferences/s).
TFLM_V05_KWS_IPS = 5.497


def median_throughput(path: str) -> float:
    """The 'Median throughput is N inf./sec.' of an MLPerf Tiny results.txt."""
    with open(path) as f:
        m = re.search(r"Median throughput is\s+([0-9.]+)", f.read())
    if m is None:
        raise BenchError("%s: no median throughput" % path)
    return float(m.group(1))


def build_microtvm_kws(src: Dict[str, str], inp: bytes, work: str, opt: str, key: str,
                       jobs: int) -> str:
    """The published microTVM + CMSIS-NN KWS program with our harness
    (tflm_m4/microtvm_main.c) and CMSIS-NN of August 2022."""
    t = fw.get_target("m4")
    d = os.path.join(src["tiny_results_v1.0"], OCTOML_KWS)
    nn = src["CMSIS-NN-2022"]
    gen = os.path.join(work, "gen")
    os.makedirs(gen, exist_ok=True)
    with open(os.path.join(gen, "fw_input.c"), "w") as f:
        f.write("#include <stdint.h>\nextern const uint8_t fw_input[%d];\n"
                "const uint8_t fw_input[%d] = {%s};\n"
                % (len(inp), len(inp), ",".join(str(b) for b in inp)))
    gen_src = os.path.join(d, "model", "codegen", "host", "src")
    srcs = [os.path.join(gen_src, n) for n in sorted(os.listdir(gen_src))]
    srcs.append(os.path.join(d, "crt", "src", "runtime", "crt", "memory", "stack_allocator.c"))
    for root, _, names in os.walk(os.path.join(nn, "Source")):
        srcs += sorted(os.path.join(root, n) for n in names if n.endswith(".c")
                       and not n.endswith(("_f16.c", "_f32.c")))
    srcs += [os.path.join(HARNESS_DIR, "microtvm_main.c"), os.path.join(gen, "fw_input.c")]
    srcs += [os.path.join(FW_COMMON, n) for n in ("startup.c", "semihost.c", "measure.c")]
    inc = [os.path.join(d, "crt", "include"), os.path.join(d, "crt_config"),
           os.path.join(d, "model", "codegen", "host", "include"), os.path.join(nn, "Include"),
           os.path.join(src["CMSIS_6"], "CMSIS", "Core", "Include"), FW_COMMON]
    flags = t.flags + [opt, "-ffunction-sections", "-fdata-sections"] + \
        fw.harness_defines(t) + ["-I" + i for i in inc]
    objs = compile_objects(srcs, flags, os.path.join(work, "obj"), key + inp.hex(), jobs)
    elf = os.path.join(work, "microtvm_kws.elf")
    fw.link(t, objs, elf, fw.DEFAULT_STACK, opt)
    return elf


def validate(src: Dict[str, str], rows: List[Dict[str, Any]], work: str, opt: str, key: str,
             jobs: int) -> Dict[str, Any]:
    """Estimated cycles of KWS against the published latencies on the
    NUCLEO-L4R5ZI at 120 MHz (cycles = ms x 120,000)."""
    out: Dict[str, Any] = {"mhz": MHZ}
    kws = next((r for r in rows if r["model"] == "kws"), None)
    pub_tvm = None
    if "tiny_results_v1.0" in src:
        ips = median_throughput(os.path.join(src["tiny_results_v1.0"], OCTOML_RESULT))
        pub_tvm = {"what": "microTVM + CMSIS-NN", "round": "MLPerf Tiny v1.0",
                   "submitter": "OctoML", "file": OCTOML_RESULT, "median_ips": ips,
                   "ms": 1000.0 / ips, "cycles": MHZ * 1e6 / ips}
        out["published_microtvm"] = pub_tvm
    pub_tflm = {"what": "TFLite Micro v2.3.1 + CMSIS-NN", "round": "MLPerf Tiny v0.5",
                "submitter": "Reference", "median_ips": TFLM_V05_KWS_IPS,
                "ms": 1000.0 / TFLM_V05_KWS_IPS, "cycles": MHZ * 1e6 / TFLM_V05_KWS_IPS}
    out["published_tflm"] = pub_tflm
    if kws is not None:
        est = kws["tflm"]["cycles"]
        out["tflm_today_vs_published_tflm_v05"] = est / pub_tflm["cycles"] - 1
        if pub_tvm:
            out["tflm_today_vs_published_microtvm"] = est / pub_tvm["cycles"] - 1
    if pub_tvm and "CMSIS-NN-2022" in src and kws is not None:
        wd = os.path.join(work, "microtvm_kws")
        inp = bytes.fromhex(kws["input_hex"])
        elf = build_microtvm_kws(src, inp, wd, opt, key, jobs)
        res = run_tflm(elf)
        if res.get("done") != 0:
            raise BenchError("the microTVM KWS program failed:\n" + res["log"][-2000:])
        est = fw.profile(elf, wd, "m4", timeout=1200)
        size = fw.section_sizes(elf)
        out["microtvm_program"] = {
            "instructions": res["instructions"], "cycles": est["cycles"],
            "flash": size.get("text", 0) + size.get("rodata", 0),
            "run_stack": res["run_stack_bytes"],
            "output": res["output_bytes"][0].hex() if res["output_bytes"] else "",
            "output_equals_tflm": bool(res["output_bytes"]) and
            res["output_bytes"][0].hex() == kws["outputs"]["tflm"][0],
            "top_functions": est["functions"][:8]}
        out["estimator_error"] = est["cycles"] / pub_tvm["cycles"] - 1
    return out


# --- main --------------------------------------------------------------------

def bench_model(args: argparse.Namespace, src: Dict[str, str], lib_objs: List[str], key: str,
                name: str, path: str) -> Dict[str, Any]:
    work = os.path.join(args.work, name)
    os.makedirs(work, exist_ok=True)
    archive = os.path.join(work, "mlf")
    info = tvmnode_compile(args.python, path, name, archive)
    spec = info["inputs"][0]
    inp = os.path.join(work, "input.bin")
    make_input(args.python, name, spec["shape"], spec["dtype"], inp)
    with open(inp, "rb") as f:
        inp_bytes = f.read()

    ours = fw.build_and_run(archive, name, [inp], os.path.join(work, "fw"), opt=args.opt,
                            target=args.target, timeout=600,
                            cache=os.path.join(args.work, "objs" + args.opt))
    if not ours["ok"]:
        raise BenchError("%s: the tvmnode firmware failed: %s" % (name, ours["log"][-2000:]))
    ours_io = ours_io_in_pool(args, name, path, work, inp, ours)
    if args.ram_only:
        return {"model": name, "file": path, "tvmnode": ram(ours),
                "tvmnode_io_in_pool": ours_io}
    ours_est = fw.profile(ours["elf"], os.path.join(work, "fw"), args.target,
                          timeout=1200) if args.priced else None

    with open(path, "rb") as f:
        model = f.read()
    tw = os.path.join(work, "tflm-int8" if args.int8_kernels else "tflm")
    elf = build_tflm(src, lib_objs, name, model, inp_bytes, INITIAL_ARENA, tw, args.opt, key,
                     args.jobs, search=True, int8=args.int8_kernels, target=args.target)
    first = run_tflm(elf, args.target)
    if first.get("done") != 0 or "arena_min" not in first:
        raise BenchError("%s: TFLM failed with a %d KiB arena:\n%s"
                         % (name, INITIAL_ARENA // 1024, first["log"][-2000:]))
    arena = first["arena_min"]
    for _ in range(8):
        elf = build_tflm(src, lib_objs, name, model, inp_bytes, arena, tw, args.opt, key,
                         args.jobs, int8=args.int8_kernels, target=args.target)
        theirs = run_tflm(elf, args.target)
        if theirs.get("done") == 0:
            break
        arena += 16
    else:
        raise BenchError("%s: TFLM does not run in the arena it allocated in:\n%s"
                         % (name, theirs["log"][-2000:]))
    theirs_est = fw.profile(elf, tw, args.target, timeout=1200) if args.priced else None
    tsize = fw.section_sizes(elf)
    equal = out_bytes(ours) == theirs["output_bytes"]
    row = {"model": name, "file": path, "input_bytes": len(inp_bytes),
           "input_hex": inp_bytes.hex() if len(inp_bytes) <= 4096 else "",
           "outputs_equal": equal,
           "tvmnode": side(ours["size"], ours, ours_est),
           "tvmnode_io_in_pool": ours_io,
           "tflm": dict(side(tsize, theirs, theirs_est), arena_used=theirs["arena_used"],
                        arena_size=theirs["arena_size"],
                        arena_used_large=first["arena_used"], arena_min=first["arena_min"],
                        operators=[RESOLVER[c] for c in model_operators(model)]),
           "outputs": {"tvmnode": [b.hex() for b in out_bytes(ours)],
                       "tflm": [b.hex() for b in theirs["output_bytes"]]}}
    for k in ("instructions", "cycles", "flash", "ram"):
        if row["tvmnode"][k] is not None and row["tflm"][k] is not None:
            row["ratio_" + k] = row["tvmnode"][k] / max(row["tflm"][k], 1)
    row["ratio_ram_io_in_pool"] = ours_io["ram"] / max(row["tflm"]["ram"], 1)
    return row


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sources", default=os.environ.get("TFLM_SOURCES"),
                    help="a folder with the snapshots as subfolders (default: $TFLM_SOURCES)")
    for s in SNAPSHOTS:
        ap.add_argument("--" + s.sub.lower(), default=None, help="the %s snapshot" % s.repo)
    ap.add_argument("--export-from", default=None,
                    help="first export the pinned commits from the git clones in this folder "
                         "into --sources")
    ap.add_argument("--python", default=sys.executable,
                    help="an interpreter that imports tvmnode and numpy")
    ap.add_argument("--opt", default="-O2", help="optimization flag for both sides (default -O2)")
    ap.add_argument("--out", default=os.path.join(ROOT, "build-bench", "bench"))
    ap.add_argument("--target", default="m4",
                    help="a row of firmware/targets.txt: both sides are built with its flags "
                         "and run on its board (default m4). Where the cycle estimate does "
                         "not price the core (firmware/common/cycles.py), the table has "
                         "instructions, flash and RAM only, and the estimator check against "
                         "the published M4 latencies is skipped")
    ap.add_argument("--work", default=None, help="build folder (default OUT/tflm_TARGET)")
    ap.add_argument("--models", default=",".join(m for m, _ in MODELS))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--int8-kernels", action="store_true",
                    help="register the int8-only forms of TFLM's CMSIS-NN kernels "
                         "(Register_CONV_2D_INT8() and the like) instead of the defaults")
    ap.add_argument("--ram-only", action="store_true",
                    help="build and run only our side, with and without --io-in-pool, "
                         "and report its RAM (no TFLM build; writes tflm_TARGET_ram.json)")
    args = ap.parse_args(argv)

    if args.export_from:
        if not args.sources:
            ap.error("--export-from needs --sources")
        export_sources(args.export_from, args.sources)
    src, missing = find_sources(args)
    if missing:
        print("tflm_m4: TFLite Micro + CMSIS-NN sources not found; skipped. It needs "
              "(--sources DIR with these subfolders, or one option each):\n  "
              + "\n  ".join(missing), file=sys.stderr)
        return 2
    tools = fw.toolchain_missing() or (None if shutil.which(GXX) else GXX + " not installed")
    if tools:
        print("tflm_m4: %s; skipped" % tools, file=sys.stderr)
        return 2
    os.environ.setdefault("TVMNODE_SOURCE_DIR", ROOT)  # the crt the archives carry
    args.work = args.work or os.path.join(args.out, "tflm_" + args.target)
    try:
        fw.priced(args.target)
        args.priced = True
    except fw.FirmwareError as e:
        args.priced = False
        print("tflm_m4: instructions only on %s: %s" % (args.target, e), file=sys.stderr)
    commits = {s.sub: snapshot_commit(src[s.sub]) for s in SNAPSHOTS if s.sub in src}
    key = json.dumps(commits, sort_keys=True)

    t = fw.get_target(args.target)
    lib_flags = t.flags + [args.opt] + TFLM_COMMON + TFLM_DEFINES + \
        ["-I" + d for d in tflm_includes(src)]
    wanted = [m for m, _ in MODELS if m in args.models.split(",")]
    sources = tflm_sources(src) if wanted and not args.ram_only else []
    print("tflm_m4: compiling %d TFLM and CMSIS-NN sources (%s, -j%d)"
          % (len(sources), args.opt, args.jobs), file=sys.stderr)
    lib_objs = compile_objects(sources, lib_flags,
                               os.path.join(args.work, "lib" + args.opt.replace("-", "_")),
                               key, args.jobs)

    rows = []
    for name, fname in MODELS:
        if name not in args.models.split(","):
            continue
        if name == "vww":
            if "mlcommons-tiny" not in src:
                print("tflm_m4: vww skipped (no mlcommons-tiny snapshot)", file=sys.stderr)
                continue
            path = os.path.join(src["mlcommons-tiny"], VWW_PATH)
        else:
            path = os.path.join(MODELS_DIR, fname)
        if not os.path.exists(path):
            print("tflm_m4: %s skipped (%s not found)" % (name, path), file=sys.stderr)
            continue
        print("tflm_m4: %s" % name, file=sys.stderr)
        rows.append(bench_model(args, src, lib_objs, key, name, path))

    if args.ram_only:
        text = ram_table(rows)
        print(text)
        os.makedirs(args.out, exist_ok=True)
        path = os.path.join(args.out, "tflm_%s_ram.json" % args.target)
        with open(path, "w") as f:
            json.dump({"opt": args.opt, "target": args.target, "models": rows, "table": text}, f,
                      indent=1)
        print("wrote %s" % path, file=sys.stderr)
        return 0 if all(r["tvmnode_io_in_pool"]["outputs_equal"] for r in rows) else 1
    text = table(rows)
    print(text)
    # the published latencies are the M4 board's
    check = validate(src, rows, args.work, args.opt, key, args.jobs) if args.priced else {}
    lines = []
    if "microtvm_program" in check:
        p, pub = check["microtvm_program"], check["published_microtvm"]
        lines.append("estimator check, KWS: the published microTVM + CMSIS-NN program "
                     "(%s, %s) estimated at %s cycles; published %.1f ms = %s cycles "
                     "at %d MHz: error %+.1f %%" % (
                         pub["round"], pub["submitter"], "{:,}".format(p["cycles"]),
                         pub["ms"], "{:,.0f}".format(pub["cycles"]), MHZ,
                         100 * check["estimator_error"]))
    if "tflm_today_vs_published_tflm_v05" in check:
        pt = check["published_tflm"]
        lines.append("TFLM + CMSIS-NN today, estimated, against %s (%s): %+.1f %%" % (
            pt["what"], pt["round"], 100 * check["tflm_today_vs_published_tflm_v05"]))
    if "tflm_today_vs_published_microtvm" in check:
        lines.append("TFLM + CMSIS-NN today, estimated, against microTVM + CMSIS-NN "
                     "(v1.0): %+.1f %%" % (100 * check["tflm_today_vs_published_microtvm"]))
    print("\n".join(lines))
    cpu = ""
    try:
        cpu = next(line.split(":", 1)[1].strip() for line in
                   subprocess.run(["lscpu"], stdout=subprocess.PIPE, text=True).stdout
                   .splitlines() if line.startswith("Model name"))
    except (OSError, StopIteration):
        pass
    gcc = fw._run([GXX, "--version"], "g++ --version").splitlines()[0]
    os.makedirs(args.out, exist_ok=True)
    report = {"opt": args.opt, "target": args.target, "int8_kernels": args.int8_kernels, "machine": cpu or platform.machine(),
              "compiler": gcc, "snapshots": {s.sub: {"repo": s.repo, "commit": commits[s.sub],
                                                     "path": src[s.sub]}
                                             for s in SNAPSHOTS if s.sub in src},
              "tflm_flags": lib_flags[:len(t.flags) + 1] + TFLM_COMMON + TFLM_DEFINES,
              "median_ratio_cycles": statistics.median(r["ratio_cycles"] for r in rows)
              if rows and args.priced else None,
              "median_ratio_instructions":
              statistics.median(r["ratio_instructions"] for r in rows) if rows else None,
              "models": rows, "table": text, "estimator_check": check}
    path = os.path.join(args.out, "tflm_%s%s.json" % (args.target,
                                                    "_int8" if args.int8_kernels else ""))
    with open(path, "w") as f:
        json.dump(report, f, indent=1)
    print("wrote %s" % path, file=sys.stderr)
    return 0 if all(r["outputs_equal"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
