"""Ahead-of-time compilation to C and the Model Library Format.

    arch = tvmnode.codegen.compile(mod, name="kws")
    arch.export("out/")          # or "out.tar"
    arch.plan                    # the memory plan, as data
    arch.metadata                # metadata.json, parsed

`compile` runs the standard pipeline (InferType, SimplifyExpr, FoldConstant,
FuseOps) unless told not to, then the C code generator ("codegen.AOT"),
which lowers the model to calls of the crt kernels over a static memory
plan. `export` writes the archive: the generated C and header, metadata.json,
the crt sources the code needs (runtime/), the constants as a parameter
file, the IR as text and a CMakeLists.txt that makes the archive a CMake
target (`add_subdirectory`). The layout is described in docs/mlf.md.
"""
from __future__ import annotations

import io
import json
import os
import re
import shutil
import struct
import tarfile
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from ._core import get_global_func
from ._paths import _crt_dir

__all__ = ["Archive", "TARGETS", "PARALLEL_TARGETS", "compile", "build_library", "module_list_source", "save_params",
           "load_params", "PARAMS_MAGIC", "cmake_lists"]

PARAMS_MAGIC = b"TNPARAMS"


#: The targets `compile` knows, each with the kernel layout of one-group
#: convolutions its kernels are fastest with (None: as the importer gave
#: them; ConvertKernelLayout otherwise). "host": the x86 forms and the
#: portable C, which broadcast an input against the output channels (HWIO,
#: the TFLite importer's); "cortex-m": the cores with the DSP extension
#: (M4, M7, M33, M55), whose matrix-product form multiplies each output
#: channel's taps in a row, in the order of NHWC data (OHWI, TFLite's own
#: filter layout); "wasm32": the portable C.
TARGETS: Dict[str, Optional[str]] = {"host": None, "cortex-m": "OHWI", "wasm32": None}
#: the ISA each target's kernel scratch is sized for (codegen option "isa"):
#: on "cortex-m" the DSP convolution forms' buffers are planned in the pool.
SCRATCH_ISA: Dict[str, str] = {"host": "portable", "cortex-m": "arm_dsp",
                               "wasm32": "portable"}
#: the least alignment each target's constant arrays get when compile is
#: not given constants_align (they take the larger of it and alignment):
#: "host" a cache line, 64 bytes, because the x86 forms read packed weights
#: in 64-byte vectors, and an array that starts inside a line makes every
#: such load touch two (the anomaly detector's dense layers ran 12 % slower
#: so, half their weights 32 bytes into a line). The other targets' kernels
#: read at most 4 bytes at once, and padding costs their flash.
CONSTANTS_ALIGN: Dict[str, int] = {"host": 64, "cortex-m": 1, "wasm32": 1}
#: the targets whose kernels gain from FoldInputOffset (the input zero
#: point of an int8 layer that reads only inside its input folded into its
#: bias at compile time): "cortex-m", whose DSP matrix product would
#: otherwise sum every weight row on every call. Elsewhere the kernels add
#: the input offset as they multiply, so the pass would change nothing.
FOLD_INPUT_OFFSET = ("cortex-m",)
#: the targets whose kernels read the int8 dense layer's weights packed at
#: compile time, and the layout (PackDenseWeights, its option
#: "PackDenseWeights.layout"): "host" "N16K4" (blocks of 16 outputs,
#: inputs in groups of 4, the input zero point -128 with the difference in
#: the bias; the same for a 1x1 convolution's [out, in] matrix), whose x86
#: forms then take one vpdpbusd (AVX-512 VNNI) or four vpmaddwd (AVX2) per
#: 16 outputs and 4 inputs, with no horizontal sums; "cortex-m" "N4K4"
#: (blocks of 4 outputs, the input zero point 0, dense layers only), whose
#: DSP loop reads a block's four rows' words of four inputs as 16 bytes in
#: a row. The portable C reads both (the same bytes out), but is no faster
#: with either, so "wasm32" keeps [N, K] and kernel_layout's. On "host" a
#: float32 nn.dense with a constant weight is packed too (blocks of 16
#: outputs, input by input: the AVX2 + FMA and AVX-512F forms' rows of
#: weights).
PACK_DENSE_WEIGHTS: Dict[str, str] = {"host": "N16K4", "cortex-m": "N4K4"}
#: of those, the targets whose 1x1 convolutions PackDenseWeights packs too
#: (its option "PackDenseWeights.conv"; with "N16K4" only, and not with
#: patch stages); the dense layers alone elsewhere
PACK_CONV_WEIGHTS: Tuple[str, ...] = ("host",)
#: of those, the targets whose larger windows (one group, NHWC, rows of
#: taps in whole groups of four inputs, 16 output channels or more) are
#: packed too (option "PackDenseWeights.conv" 2): their [out, k_h * k_w *
#: in] matrix, the input zero point kept and (io - 128) * sum(w) in the
#: bias, which the row forms (AVX-512 VNNI, AVX-VNNI and AVX2) read where
#: it lies instead of packing it on every call; what they do not take
#: (and a CPU below AVX2) is unpacked up to 16 channels at a time on the
#: stack (fewer where 16 windows do not fit its buffer), so no plan holds
#: scratch for it. Only windows of 16 input
#: channels or more are packed (not KWS's first layer), and none with
#: PatchStages, which cannot cut a packed layer
PACK_WINDOW_WEIGHTS: Tuple[str, ...] = ("host",)
#: the targets whose archives call their large convolutions and dense
#: layers through the crt's tn_crt_call_split (codegen option "parallel"),
#: so that a runtime Module given threads (Module.set_threads) can run
#: them in parts: "host". Without a hook set each call runs whole, so the
#: archive runs anywhere; the others keep their code as it was.
PARALLEL_TARGETS: Tuple[str, ...] = ("host",)


def _patch_count(patch_stages: Union[None, int, str]) -> Optional[int]:
    """PatchStages.count for compile's patch_stages: None (no pass), 0 for
    "auto", or the number of bands."""
    if patch_stages is None:
        return None
    if isinstance(patch_stages, str):
        if patch_stages == "auto":
            return 0
        if not patch_stages.isdigit():
            raise ValueError("compile: patch_stages must be 'auto' or a number of bands "
                             ">= 1, got %r" % patch_stages)
        patch_stages = int(patch_stages)
    if isinstance(patch_stages, bool) or not isinstance(patch_stages, int) or patch_stages < 1:
        raise ValueError("compile: patch_stages must be 'auto' or a number of bands >= 1, "
                         "got %r" % (patch_stages,))
    return patch_stages


def _pipeline(mod: Any, target: str = "host", patch_count: Optional[int] = None,
              shrink_scratch: bool = True) -> Any:
    from . import transform

    layout = TARGETS[target]
    passes = [transform.InferType(), transform.SimplifyExpr(), transform.FoldConstant()]
    config: Dict[str, Any] = {}
    if layout is not None:
        passes.append(transform.ConvertKernelLayout())
        config["ConvertKernelLayout.layout"] = layout
    if target in FOLD_INPUT_OFFSET:
        passes.append(transform.FoldInputOffset())
    if target in PACK_DENSE_WEIGHTS:
        passes.append(transform.PackDenseWeights())
        config["PackDenseWeights.layout"] = PACK_DENSE_WEIGHTS[target]
        # not with patch stages: PatchStages sizes each convolution of a
        # stage as a layer of its own, which a packed weight is not
        config["PackDenseWeights.conv"] = (
            0 if target not in PACK_CONV_WEIGHTS or patch_count is not None
            else 2 if target in PACK_WINDOW_WEIGHTS else 1)
    if patch_count is not None:
        # after the weights take the target's layout, and planning with
        # the target's kernel scratch: the plans it compares are the
        # archive's own
        passes.append(transform.PatchStages())
        config["PatchStages.count"] = patch_count
        config["PatchStages.isa"] = SCRATCH_ISA[target]
        config["PatchStages.shrink_scratch"] = int(shrink_scratch)
    passes += [transform.FuseOps(), transform.InferType()]
    with transform.PassContext(config=config or None):
        return transform.Sequential(passes)(mod)


class Archive:
    """A compiled model: the generated files and what the compiler knows
    about them."""

    def __init__(self, name: str, result: Any, mod: Any) -> None:
        self.name = name
        self.files: Dict[str, str] = {str(k): str(v) for k, v in result["files"].items()}
        self.runtime_sources: List[str] = [str(s) for s in result["runtime_sources"]]
        self._plan_obj: Any = result["plan"]
        self._plan: Optional[Dict[str, Any]] = None
        self.constants: Dict[str, np.ndarray] = {
            str(k): np.asarray(t).copy() for k, t in result["constants"].items()}
        self._metadata: Optional[Dict[str, Any]] = None
        self.module = mod

    # the plan and the metadata are read when first asked for: on a model
    # of a million operators each is a second or more of conversion that
    # writing the archive does not need
    @property
    def plan(self) -> Dict[str, Any]:
        """The memory plan, as data (pools, buffers and their live ranges)."""
        if self._plan is None:
            self._plan = _plain(self._plan_obj)
            self._plan_obj = None
        return self._plan

    @property
    def metadata(self) -> Dict[str, Any]:
        """metadata.json, parsed."""
        if self._metadata is None:
            self._metadata = json.loads(self.files["metadata.json"])
        return self._metadata

    def _record_patch_stages(self, requested: Union[int, str], mod: Any) -> None:
        """metadata.json's "patch_stages" of this model: what was asked and
        what PatchStages chose (bands 1: the model whole)."""
        attrs = getattr(mod, "attrs", None)
        chosen = attrs.get("patch_stages") if attrs is not None else None
        entry: Dict[str, Any] = {"requested": requested if isinstance(requested, str)
                                 else int(requested), "bands": 1}
        if chosen is not None:
            entry.update({str(k): (v if isinstance(v, str) else int(v))
                          for k, v in chosen.items()})
        meta = self.metadata
        meta["modules"][self.name]["patch_stages"] = entry
        self.files["metadata.json"] = json.dumps(meta, indent=2) + "\n"
        self._metadata = None

    @property
    def info(self) -> Dict[str, Any]:
        """The model's entry of metadata.json."""
        return dict(self.metadata["modules"][self.name])

    @property
    def workspace_bytes(self) -> int:
        return int(self.info["memory"]["functions"]["main"][0]["workspace_size_bytes"])

    @property
    def state_bytes(self) -> int:
        """The state pool of a streaming model (0 for a model without
        state): kept across runs, separate from the workspace."""
        return sum(int(p["size_bytes"]) for p in self.info["memory"]["pools"]
                   if p.get("kind") == "state")

    @property
    def io_bytes(self) -> int:
        """The inputs and outputs (in the workspace when io_in_pool)."""
        return int(self.info["memory"]["functions"]["main"][0]["io_size_bytes"])

    def all_files(self) -> Dict[str, bytes]:
        """Every file of the archive, by path inside it."""
        out: Dict[str, bytes] = {p: t.encode() for p, t in self.files.items()}
        crt = _crt_dir()
        for rel in self.runtime_sources:
            dst = _archive_path(rel)
            if dst in out:  # two crt files flattened onto one name
                raise RuntimeError("crt files %s and another both go to %s" % (rel, dst))
            with open(os.path.join(crt, rel), "rb") as f:
                out[dst] = f.read()
        out["parameters/%s.params" % self.name] = save_params(self.constants)
        out["CMakeLists.txt"] = cmake_lists(
            self.name, sorted(p for p in out if p.startswith("codegen/host/src/")
                              and p.endswith(".c")),
            [p for p in (_archive_path(r) for r in self.runtime_sources)
             if p.startswith("runtime/src/") and p.endswith(".c")],
            str(self.metadata.get("generator", "tvmnode"))).encode()
        out["src/%s.tn" % self.name] = self.module.astext(show_meta_data=True).encode()
        return out

    def export(self, path: str) -> str:
        """Write the archive to a directory, or to a tar file when `path`
        ends in .tar; returns `path`."""
        files = self.all_files()
        if path.endswith(".tar"):
            with tarfile.open(path, "w") as tar:
                for rel in sorted(files):
                    data = files[rel]
                    ti = tarfile.TarInfo("./" + rel)
                    ti.size = len(data)
                    ti.mode = 0o644
                    tar.addfile(ti, io.BytesIO(data))
            return path
        if os.path.isdir(path):
            for sub in ("codegen", "runtime", "parameters", "src"):
                shutil.rmtree(os.path.join(path, sub), ignore_errors=True)
        for rel, data in files.items():
            dst = os.path.join(path, rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            with open(dst, "wb") as f:
                f.write(data)
        return path


def build_library(archive: str, output: str, *, cc: Optional[str] = None,
                  cflags: Sequence[str] = ("-O2",)) -> str:
    """Compile an exported archive (a directory: the generated C and the
    runtime sources it carries) into a shared library with the system C
    compiler ($CC or cc; a command line, so "ccache cc" works). Besides the
    model's C interface the library exports `tvmnode_module_models`, the
    list of its model descriptors, so that tvmnode.runtime.load_module can
    open it. Returns `output`.

    Each source is compiled on its own, as many at once as the machine has
    cores, from inside the archive by paths relative to it, then the
    objects are linked: a compiler cache (ccache, named in $CC or first on
    PATH as /usr/lib/ccache) keys the runtime's sources the same in every
    archive and compiles them once."""
    import concurrent.futures
    import shlex
    import subprocess
    import tempfile

    cc_cmd = shlex.split(cc or os.environ.get("CC", "") or "cc")
    if not cc_cmd:
        raise ValueError("build_library: argument cc: expected a compiler command, got %r" % cc)
    archive = os.path.abspath(archive)
    output = os.path.abspath(output)
    gen = os.path.join("codegen", "host", "src")
    srcs = sorted(os.path.join(gen, f) for f in os.listdir(os.path.join(archive, gen))
                  if f.endswith(".c"))
    rt = os.path.join("runtime", "src")
    for root, _, names in os.walk(os.path.join(archive, rt)):
        rel = os.path.relpath(root, archive)
        srcs += sorted(os.path.join(rel, n) for n in names if n.endswith(".c"))
    # only the model's interface is exported (the caller's cflags come
    # last and may say otherwise): two libraries, or a library and
    # libtvmnode, never bind each other's kernels
    compile_cmd = cc_cmd + ["-std=c99", "-I" + os.path.join("codegen", "host", "include"),
                            "-I" + os.path.join("runtime", "include"), "-fPIC",
                            "-fvisibility=hidden", *cflags, "-c"]
    with tempfile.TemporaryDirectory(prefix="tvmnode-build-") as tmp:
        models = os.path.join(tmp, "tvmnode_module_models.c")
        with open(models, "w", encoding="utf-8") as f:
            f.write(module_list_source(archive))

        def one(i_src: Tuple[int, str]) -> Tuple[str, "subprocess.CompletedProcess[str]"]:
            i, src = i_src
            obj = os.path.join(tmp, "%d_%s.o" % (i, os.path.splitext(os.path.basename(src))[0]))
            return obj, subprocess.run(compile_cmd + [src, "-o", obj], cwd=archive,
                                       capture_output=True, text=True)

        jobs = list(enumerate(srcs + [models]))
        with concurrent.futures.ThreadPoolExecutor(min(len(jobs), os.cpu_count() or 1)) as pool:
            done = list(pool.map(one, jobs))
        for (_, src), (_, proc) in zip(jobs, done):
            if proc.returncode != 0:
                raise RuntimeError("build_library: %s failed on %s:\n%s"
                                   % (" ".join(cc_cmd + ["-c"]), src, proc.stderr))
        proc = subprocess.run(cc_cmd + ["-shared", "-fPIC", *cflags]
                              + [obj for obj, _ in done] + ["-o", output, "-lm"],
                              capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError("build_library: linking %s with %s failed:\n%s"
                           % (output, " ".join(cc_cmd), proc.stderr))
    return output


def module_list_source(archive: str) -> str:
    """The C file that makes a library built from `archive` loadable as a
    runtime Module: it exports `tvmnode_module_models`, a NULL-terminated
    list of the archive's model descriptors (the names are read from
    metadata.json), `tvmnode_module_isa_limit`, its crt's
    tn_crt_isa_limit, and `tvmnode_module_set_parallel`, which sets its
    crt's parallel hook (runtime Module threads) where its code has calls
    to cut, with default visibility whatever -fvisibility says."""
    with open(os.path.join(archive, "metadata.json"), encoding="utf-8") as f:
        names = [str(m.get("model_name", k)).lower()
                 for k, m in json.load(f)["modules"].items()]
    includes = "".join('#include "tvmgen_%s.h"\n' % n for n in names)
    includes += '#include "tvmnode/crt/kernels.h"\n'
    refs = "".join("&tvmgen_%s_model, " % n for n in names)
    # a library whose code calls tn_crt_call_split (split.c in the archive)
    # lets a Module set its crt's parallel hook; others have nothing to cut
    # and export no such function (tn_module_load reads its absence as
    # that), so their C compiles against a crt without the hook too
    parallel = ""
    if os.path.exists(os.path.join(archive, "runtime", "src", "split.c")):
        parallel = ("/* this library's code hands calls to its crt's parallel hook,\n"
                    " * which this sets once, when it is not set already; a Module\n"
                    " * with threads uses it (tn_module_set_threads) */\n"
                    "extern TVMGEN_API int tvmnode_module_set_parallel(TnCrtParallelFn fn, "
                    "void *ctx);\n"
                    "TVMGEN_API int tvmnode_module_set_parallel(TnCrtParallelFn fn, void *ctx) {\n"
                    "  if (tn_crt_parallel(0) != fn) tn_crt_set_parallel(fn, ctx);\n"
                    "  return 1;\n}\n")
    includes += '#include "tvmnode/crt/calls.h"\n'
    return ("/* Generated by tvmnode.codegen.build_library: the models of this\n"
            " * library, for tvmnode.runtime.load_module (tn_module_load). */\n"
            "%s\nextern TVMGEN_API const TnCrtModel *const tvmnode_module_models[];\n"
            "TVMGEN_API const TnCrtModel *const tvmnode_module_models[] = {%s0};\n"
            "/* the level of ISA forms this library's crt takes, which a Module\n"
            " * sets to the loading process's own (tn_crt_isa_limit) */\n"
            "extern TVMGEN_API int tvmnode_module_isa_limit(int level);\n"
            "TVMGEN_API int tvmnode_module_isa_limit(int level) {\n"
            "  return tn_crt_isa_limit(level);\n}\n%s"
            % (includes, refs, parallel))


def _crt_target(generator: str) -> str:
    """The crt's CMake target for archives written by `generator`
    (metadata.json's "tvmnode 0.1.0"): tvmnode_crt_0_1_0."""
    version = generator.split()[-1] if generator.split() else "unknown"
    return "tvmnode_crt_" + re.sub(r"[^A-Za-z0-9]", "_", version)


def cmake_lists(name: str, model_sources: Sequence[str], crt_sources: Sequence[str],
                generator: str) -> str:
    """The archive's CMakeLists.txt (docs/firmware.md). A project that
    add_subdirectory()s the archive gets the static library tvmgen_<name>
    (alias tvmnode::<name>): the generated C, its header's folder as a
    PUBLIC include directory and TVMGEN_HAVE_<NAME>=1 as a PUBLIC
    definition, linked with the crt. The crt is a static library of its own,
    tvmnode_crt_<version> (alias tvmnode::crt), defined by the first archive
    of that version the project adds; each archive adds the crt sources it
    carries that the target does not have yet, so that the sources several
    models share are compiled once. model_sources and crt_sources are paths
    inside the archive."""
    crt = _crt_target(generator)
    up = name.upper()
    model = "\n".join("  ${CMAKE_CURRENT_SOURCE_DIR}/%s" % p for p in model_sources)
    files = "\n".join("  %s" % p[len("runtime/src/"):] for p in crt_sources)
    return f"""# CMakeLists.txt of model '{name}' (generated by {generator}).
#
#   add_subdirectory(path/to/this/archive)
#   target_link_libraries(firmware PRIVATE tvmnode::{name})
#
# tvmgen_{name} (alias tvmnode::{name}): the model's generated C, a static
# library; its header tvmgen_{name}.h is on the include path of whatever
# links it, and TVMGEN_HAVE_{up}=1 is defined there.
# {crt} (alias tvmnode::crt): the crt, a static library shared by every
# archive of this version in the project. Each archive adds the crt sources
# it carries that the target does not have yet, so a source two models
# share is compiled once. -DTVMNODE_CRT_NO_AVX2=ON leaves the x86 AVX2
# forms out (TN_CRT_NO_AVX2). -DTVMNODE_CRT_CONV_S8_FORMS=N compiles only
# the int8 convolution's DSP forms in N (metadata.json's conv_s8_forms; for
# several models, their bitwise OR): less flash, and a model whose layers
# take a form left out fails to compile. -DTVMNODE_CRT_DENSE_S8_FORMS=N
# does the same for the int8 dense layer's forms (dense_s8_forms).
#
# The files build without CMake too:
#   cc codegen/host/src/*.c runtime/src/*.c -Icodegen/host/include -Iruntime/include -lm
cmake_minimum_required(VERSION 3.13)
enable_language(C)

set(_tvmnode_crt {crt})
if(NOT TARGET ${{_tvmnode_crt}})
  option(TVMNODE_CRT_NO_AVX2 "leave the crt's x86 AVX2 kernel forms out" OFF)
  add_library(${{_tvmnode_crt}} STATIC)
  target_include_directories(${{_tvmnode_crt}} PUBLIC
    ${{CMAKE_CURRENT_SOURCE_DIR}}/runtime/include)
  if(TVMNODE_CRT_NO_AVX2)
    target_compile_definitions(${{_tvmnode_crt}} PRIVATE TN_CRT_NO_AVX2)
  endif()
  foreach(_kernel CONV DENSE)
    string(TOLOWER ${{_kernel}} _lower)
    set(TVMNODE_CRT_${{_kernel}}_S8_FORMS "" CACHE STRING
      "the int8 forms the crt compiles (metadata.json's ${{_lower}}_s8_forms); empty: all")
    if(NOT TVMNODE_CRT_${{_kernel}}_S8_FORMS STREQUAL "")
      target_compile_definitions(${{_tvmnode_crt}} PUBLIC
        TN_CRT_${{_kernel}}_S8_FORMS=${{TVMNODE_CRT_${{_kernel}}_S8_FORMS}})
    endif()
  endforeach()
  # C99 without GNU extensions: no floating-point contraction, so float
  # models compute the host executor's bits
  set_target_properties(${{_tvmnode_crt}} PROPERTIES
    C_STANDARD 99 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
  if(NOT MSVC)
    target_link_libraries(${{_tvmnode_crt}} PUBLIC m)
  endif()
  if(NOT TARGET tvmnode::crt)
    add_library(tvmnode::crt ALIAS ${{_tvmnode_crt}})
  endif()
endif()

get_property(_tvmnode_crt_have GLOBAL PROPERTY ${{_tvmnode_crt}}_SOURCES)
foreach(_f IN ITEMS
{files})
  if(NOT _f IN_LIST _tvmnode_crt_have)
    target_sources(${{_tvmnode_crt}} PRIVATE ${{CMAKE_CURRENT_SOURCE_DIR}}/runtime/src/${{_f}})
    set_property(GLOBAL APPEND PROPERTY ${{_tvmnode_crt}}_SOURCES ${{_f}})
    list(APPEND _tvmnode_crt_have ${{_f}})
  endif()
endforeach()

add_library(tvmgen_{name} STATIC
{model})
target_include_directories(tvmgen_{name} PUBLIC
  ${{CMAKE_CURRENT_SOURCE_DIR}}/codegen/host/include)
target_compile_definitions(tvmgen_{name} PUBLIC TVMGEN_HAVE_{up}=1)
set_target_properties(tvmgen_{name} PROPERTIES
  C_STANDARD 99 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
target_link_libraries(tvmgen_{name} PUBLIC ${{_tvmnode_crt}})
add_library(tvmnode::{name} ALIAS tvmgen_{name})
"""


def _archive_path(rel: str) -> str:
    """Where a crt file goes in the archive: headers keep their include
    path, sources and private headers sit flat in runtime/src, so that
    `cc codegen/host/src/*.c runtime/src/*.c` builds the model. An ISA form
    of a kernel (src/kernels/<isa>/F.c, which has its portable file's name)
    is runtime/src/<isa>_F.c; an ISA header (src/kernels/<isa>/H.h, which
    a portable file includes as "<isa>/H.h") keeps its folder:
    runtime/src/<isa>/H.h, where no *.c pattern compiles anything."""
    if rel.startswith("include/"):
        return "runtime/" + rel
    parts = rel.split("/")
    if len(parts) == 4 and parts[:2] == ["src", "kernels"] and parts[3].endswith(".c"):
        return "runtime/src/%s_%s" % (parts[2], parts[3])
    if len(parts) == 4 and parts[:2] == ["src", "kernels"] and parts[3].endswith(".h"):
        return "runtime/src/%s/%s" % (parts[2], parts[3])
    return "runtime/src/" + os.path.basename(rel)


def _plain(v: Any) -> Any:
    """tvmnode containers as Python dicts, lists and scalars."""
    if hasattr(v, "items"):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, (str, bytes, int, float, bool)) or v is None:
        return v
    if hasattr(v, "__iter__"):
        return [_plain(x) for x in v]
    return v


def compile(mod: Any, name: str = "default", *, alignment: int = 16,
            interface: str = "c", io_in_pool: bool = False,
            constants_in_pool: bool = False,
            pools: Optional[Sequence[Mapping[str, Any]]] = None,
            devices: Optional[Mapping[str, Iterable[str]]] = None,
            run_passes: bool = True, target: str = "host",
            constants_section: Optional[str] = None,
            workspace_section: Optional[str] = None,
            constants_align: Optional[int] = None,
            patch_stages: Union[None, int, str] = None,
            shrink_scratch: bool = True) -> Archive:
    """Compile the "main" function of `mod` to C; see the module docstring.

    target: where the archive will run, one of TARGETS ("host", the
    default; "cortex-m"; "wasm32"): the pipeline gives one-group
    convolutions the weight layout that target's kernels are fastest with
    (ConvertKernelLayout, before FuseOps), folds the input zero point of
    the int8 layers that read only inside their input into their bias
    where that target's kernels gain from it (FoldInputOffset,
    FOLD_INPUT_OFFSET: "cortex-m"), packs the int8 dense layers' weights
    for the x86 forms or the Cortex-M DSP form (PackDenseWeights,
    PACK_DENSE_WEIGHTS: "host" N16K4, "cortex-m" N4K4), and
    the plan gives each kernel the scratch that target's forms take
    (SCRATCH_ISA: on "cortex-m" the DSP convolutions' buffers, in the pool
    rather than on the stack). Every
    archive runs everywhere and computes the same integers; only its
    speed depends on the target.
    With run_passes=False the caller runs its own pipeline, and those
    passes too if it wants them.

    pools: workspace pools in order of preference, each {"name": str,
    "limit": bytes (0: none), "accepts": kinds of buffer it holds
    (intermediate, input, output, scratch; all when absent)}; devices: {device name: [operator names]}
    whose calls go to the application's device hook.

    constants_section, workspace_section: linker sections for the constant
    arrays (given the attribute in the generated code) and for the pools
    (the header's TVMGEN_<NAME>_WORKSPACE_SECTION, for the application's
    pool definitions); constants_align: the constant arrays' alignment (a
    power of two; by default the larger of alignment and the target's
    CONSTANTS_ALIGN: 64 on "host"). ValueError for a name that is not
    a section name or an alignment that is not a power of two.

    patch_stages: "auto" or a number of bands N: the PatchStages pass runs
    the first, high-resolution stage of the model band by band (bit-exact,
    with the halo rows recomputed), at the stage end and N ("auto": and N)
    whose planned workspace is smallest; metadata.json records the choice
    under "patch_stages" (docs/mlf.md). None (the default) or 1 leaves the
    model whole; with run_passes=False it is ignored.

    shrink_scratch (target "cortex-m"): where a convolution's scratch is
    alive at the pool's peak, the plan may give it a smaller one its DSP
    forms still run in (narrower blocks of packed weights, or none), when
    that makes the pool smaller: the same integers, that layer a little
    slower. False keeps every layer's fastest scratch."""
    if target not in TARGETS:
        raise ValueError("compile: target must be one of %s, got %r"
                         % (", ".join(sorted(TARGETS)), target))
    patch_count = _patch_count(patch_stages)
    if run_passes:
        mod = _pipeline(mod, target, patch_count, bool(shrink_scratch))
    opts: Dict[str, Any] = {"name": name, "alignment": int(alignment), "interface": interface,
                            "io_in_pool": bool(io_in_pool),
                            "constants_in_pool": bool(constants_in_pool),
                            "isa": SCRATCH_ISA[target],
                            "shrink_scratch": bool(shrink_scratch),
                            "parallel": target in PARALLEL_TARGETS}
    if pools is not None:
        opts["pools"] = [dict(p) for p in pools]
    for key, val in (("constants_section", constants_section),
                     ("workspace_section", workspace_section)):
        if val is not None:
            opts[key] = str(val)
    if constants_align is None:
        constants_align = max(int(alignment), CONSTANTS_ALIGN[target])
    opts["constants_align"] = int(constants_align)
    if devices is not None:
        opts["devices"] = {str(k): [str(o) for o in v] for k, v in devices.items()}
    result = get_global_func("codegen.AOT")(mod, opts)
    arch = Archive(name.lower(), result, mod)
    if patch_stages is not None and run_passes:
        arch._record_patch_stages(patch_stages, mod)
    return arch


# ---- parameter files -------------------------------------------------------------------
# The format (docs/mlf.md) is written and read in C only (runtime/host/params.c,
# through the registry's runtime.SaveParams / runtime.LoadParams), so the bytes
# Python writes are the bytes C writes.


def save_params(params: Mapping[str, Any]) -> bytes:
    """Tensors by name in the parameter file format (docs/mlf.md): the
    magic, the version, the count, then per tensor its name, dtype, shape
    and data; a CRC-32 of everything before it closes the file. TypeError
    for a dtype the format does not carry."""
    from . import from_dlpack
    tensors = {}
    for name, value in params.items():
        a = np.asarray(value)
        if not a.flags.writeable or not a.dtype.isnative:  # DLPack exports neither
            a = a.astype(a.dtype.newbyteorder("="), copy=True)
        if a.dtype.kind == "c":
            raise TypeError("save_params: tensor '%s' has dtype %s, which the format "
                            "does not carry" % (name, a.dtype))
        tensors[str(name)] = from_dlpack(a)
    return bytes(get_global_func("runtime.SaveParams")(tensors))


def params_blob(archive: Any, params: Mapping[str, Any], *,
                weights_version: int = 0) -> bytes:
    """A parameter blob for a model compiled with constants_in_pool: its
    weights supplied at run time (tvmnode/crt/params.h, docs/firmware.md).

    `archive` is the Archive, its metadata.json (as a dict) or the module's
    entry in it; `params` the constants by name (const<i>, as in
    parameters/<name>.params and Archive.constants), each of the dtype and
    shape the model was compiled with: a second set of weights of the same
    layout. The blob is a parameter file (save_params) of three uint8
    entries: the model id with the layout version and `weights_version`,
    padding, and the constant pool's image, which starts at a multiple of
    the pool's alignment from the blob's first byte. ValueError names a
    missing, unknown or mis-shaped constant, or an archive without a
    constant pool."""
    info = archive.info if isinstance(archive, Archive) else dict(archive)
    if "modules" in info:
        mods = info["modules"]
        if len(mods) != 1:
            raise ValueError("params_blob: the metadata holds %d models; pass "
                             "one module's entry" % len(mods))
        info = next(iter(mods.values()))
    spec = info.get("params")
    if not spec:
        raise ValueError("params_blob: model '%s' was not compiled with "
                         "constants_in_pool: its constants are in the code, not "
                         "supplied at run time" % info.get("model_name", "?"))
    wv = int(weights_version)
    if not 0 <= wv <= 0xFFFFFFFF:
        raise ValueError("params_blob: weights_version must be in [0, 2**32), got %d"
                         % wv)
    known = {str(c["name"]) for c in spec["constants"]}
    extra = sorted(set(str(k) for k in params) - known)
    if extra:
        raise ValueError("params_blob: '%s' is not a constant of model '%s'"
                         % (extra[0], info.get("model_name", "?")))
    pool = np.zeros(int(spec["size_bytes"]), np.uint8)
    for c in spec["constants"]:
        name = str(c["name"])
        if name not in params:
            raise ValueError("params_blob: constant '%s' is missing" % name)
        a = np.asarray(params[name])
        want = np.dtype(str(c["dtype"]))
        shape = tuple(int(d) for d in c["shape"])
        if a.dtype != want or a.shape != shape:
            raise ValueError("params_blob: constant '%s' must be %s%s, got %s%s"
                             % (name, want, list(shape), a.dtype, list(a.shape)))
        raw = np.ascontiguousarray(a).astype(want.newbyteorder("<"), copy=False)
        off = int(c["offset"])
        pool[off:off + raw.nbytes] = np.frombuffer(raw.tobytes(), np.uint8)
    ident = struct.pack("<QII", int(str(spec["model_id"]), 16),
                        int(spec["version"]), wv)
    # before the pool's data: the header (16), the id entry (60), the pad
    # entry's fields (39) and the pool entry's (name length, name, dtype,
    # ndim, one dimension, data size: 4 + name + 24)
    pool_name = str(spec["pool"])
    data_at = 16 + 60 + 39 + 4 + len(pool_name.encode()) + 24
    align = int(spec["alignment"])
    pad = (-data_at) % align
    return save_params({"tvmnode.model_id": np.frombuffer(ident, np.uint8),
                        "tvmnode.pad": np.zeros(pad, np.uint8),
                        pool_name: pool})


def load_params(data: bytes) -> Dict[str, np.ndarray]:
    """The tensors of a parameter file, as NumPy arrays; ValueError naming
    what is wrong for a truncated or corrupted one."""
    loaded = get_global_func("runtime.LoadParams")(bytes(data))
    out = {str(k): np.from_dlpack(t).copy() for k, t in loaded.items()}
    del loaded
    return out
