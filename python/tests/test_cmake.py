"""Archives as CMake targets (docs/firmware.md): every exported archive
carries a CMakeLists.txt defining tvmgen_<name> (alias tvmnode::<name>) and
the crt target named by its version. A host project add_subdirectory()s two
archives, links both, and computes the host executor's outputs; the crt
sources the two share are compiled once. The Cortex-M4 firmware of
firmware/common builds through CMake with firmware/cmake/arm-none-eabi.cmake
and runs on qemu with the same outputs, and both models go into one M4
image (firmware/common/multi.c) sharing one workspace pool, run
alternately, with the host's outputs and less RAM than the two images
apart. Each model is compiled once for the module. Skipped without cmake (Debian: cmake); the firmware test also
without arm-none-eabi-gcc or qemu-system-arm.
"""
from __future__ import annotations

import importlib.machinery
import os
import shutil
import subprocess
import tarfile
import types
from typing import Any, Dict, Iterator, List, Tuple

import numpy as np
import pytest

from tvmnode import codegen, frontend, runtime

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RUNNER = os.path.join(ROOT, "firmware", "common", "run.py")
MODELS = os.environ.get("TVMNODE_MODELS",
                        os.path.join(os.path.dirname(ROOT), "shared", "models"))
# file, model name
PAIR = [("kws_ref_model.tflite", "kws"), ("ad01_int8.tflite", "ad")]

if shutil.which("cmake") is None:
    pytest.skip("cmake is not installed (Debian: cmake)", allow_module_level=True)


def _load_runner() -> Any:
    mod = types.ModuleType("firmware_common_run_cmake")
    mod.__file__ = RUNNER
    importlib.machinery.SourceFileLoader(mod.__name__, RUNNER).exec_module(mod)
    return mod


fw = _load_runner()


class Model:
    """One model compiled for the host and for cortex-m, its archives,
    seeded inputs and the host executor's outputs (plain numpy)."""

    def __init__(self, fname: str, name: str, workdir: str) -> None:
        path = os.path.join(MODELS, fname)
        if not os.path.exists(path):
            pytest.skip("no %s" % path)
        mod = frontend.load_model(path)
        arch = codegen.compile(mod, name=name)
        self.name = name
        self.host = arch.export(os.path.join(workdir, "host", name))
        self.info: Dict[str, Any] = arch.info
        self.generator = str(arch.metadata["generator"])
        rng = np.random.default_rng(11)
        self.inputs: List[np.ndarray] = []
        for spec in self.info["inputs"]:
            info = np.iinfo(spec["dtype"])
            self.inputs.append(rng.integers(info.min, info.max, spec["shape"], endpoint=True)
                               .astype(spec["dtype"]))
        outs = runtime.Executor(arch.module)(*self.inputs)
        outs = outs if isinstance(outs, tuple) else (outs,)
        self.ref = [np.array(o, copy=True) for o in outs]
        self.input_files = []
        for spec, x in zip(self.info["inputs"], self.inputs):
            p = os.path.join(workdir, "%s_%s.npy" % (name, spec["name"]))
            np.save(p, x)
            self.input_files.append(p)
        del arch, outs
        m4 = codegen.compile(mod, name=name, target="cortex-m")
        self.m4 = m4.export(os.path.join(workdir, "m4", name))
        # its pools hold the Cortex-M kernels' scratch: larger than the host's
        self.m4_info: Dict[str, Any] = m4.info
        del m4, mod


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dict[str, Model]]:
    work = str(tmp_path_factory.mktemp("cmake-models"))
    yield {name: Model(fname, name, work) for fname, name in PAIR}


def _host_main(models: List[Model]) -> str:
    """A host program that runs each model on the bytes of its input files
    (argv, in order) and prints `<model> <output> <hex>` a line."""
    c = ["#include <stdio.h>\n#include <stdint.h>\n"]
    for m in models:
        # the library's PUBLIC definition reaches what links it
        c.append('#include "tvmgen_%s.h"\n#if !TVMGEN_HAVE_%s\n#error "no TVMGEN_HAVE_%s"\n'
                 '#endif\n' % (m.name, m.name.upper(), m.name.upper()))
    c.append("\nstatic int load(const char *path, void *buf, size_t n) {\n"
             "  FILE *f = fopen(path, \"rb\");\n"
             "  if (!f) return 1;\n"
             "  size_t got = fread(buf, 1, n, f);\n"
             "  fclose(f);\n  return got != n;\n}\n\n"
             "static void show(const char *m, const char *o, const uint8_t *p, size_t n) {\n"
             "  printf(\"%s %s \", m, o);\n"
             "  for (size_t i = 0; i < n; i++) printf(\"%02x\", p[i]);\n"
             "  printf(\"\\n\");\n}\n\n")
    for m in models:
        up = "TVMGEN_%s" % m.name.upper()
        al = "_Alignas(%s_ALIGNMENT)" % up
        for spec in m.info["inputs"] + m.info["outputs"]:
            c.append("static %s uint8_t %s_%s[%s_%s_SIZE];\n"
                     % (al, m.name, spec["name"], up, spec["name"].upper()))
        for p in m.info["memory"]["pools"]:
            c.append("static %s uint8_t %s_pool_%s[%s_%s_WORKSPACE_POOL_SIZE];\n"
                     % (al, m.name, p["name"], up, p["name"].upper()))
    c.append("\nint main(int argc, char **argv) {\n  int a = 1;\n  (void)argc;\n")
    for m in models:
        n = m.name
        for spec in m.info["inputs"]:
            c.append("  if (load(argv[a++], %s_%s, sizeof %s_%s)) return 2;\n"
                     % (n, spec["name"], n, spec["name"]))
        c.append("  {\n    struct tvmgen_%s_inputs in = {%s};\n" % (
            n, ", ".join("%s_%s" % (n, s["name"]) for s in m.info["inputs"])))
        c.append("    struct tvmgen_%s_outputs out = {%s};\n" % (
            n, ", ".join("%s_%s" % (n, s["name"]) for s in m.info["outputs"])))
        c.append("    struct tvmgen_%s_workspace_pools ws = {%s};\n" % (
            n, ", ".join("%s_pool_%s" % (n, p["name"]) for p in m.info["memory"]["pools"])))
        c.append("    int32_t st = tvmgen_%s_run(&in, &out, &ws);\n"
                 "    if (st) { printf(\"%s status %%d\\n\", (int)st); return 1; }\n"
                 % (n, n))
        for spec in m.info["outputs"]:
            c.append('    show("%s", "%s", %s_%s, sizeof %s_%s);\n'
                     % (n, spec["name"], n, spec["name"], n, spec["name"]))
        c.append("  }\n")
    c.append("  return 0;\n}\n")
    return "".join(c)


def _outputs(text: str, m: Model) -> List[np.ndarray]:
    got: Dict[str, bytes] = {}
    for line in text.splitlines():
        words = line.split()
        if len(words) == 3 and words[0] == m.name:
            got[words[1]] = bytes.fromhex(words[2])
    return [np.frombuffer(got[s["name"]], s["dtype"]).reshape(s["shape"])
            for s in m.info["outputs"]]


def test_archive_carries_cmakelists(models: Dict[str, Model], tmp_path: Any) -> None:
    m = models["kws"]
    text = open(os.path.join(m.host, "CMakeLists.txt")).read()
    assert "add_library(tvmgen_kws STATIC" in text
    assert "add_library(tvmnode::kws ALIAS tvmgen_kws)" in text
    assert "if(NOT TARGET ${_tvmnode_crt})" in text
    version = m.generator.split()[-1].replace(".", "_")
    assert "set(_tvmnode_crt tvmnode_crt_%s)" % version in text
    # every crt source the archive carries is listed, and nothing else
    listed = {ln.strip().rstrip(")") for ln in text.splitlines() if ln.startswith("  ")
              and ln.strip().rstrip(")").endswith(".c") and "/" not in ln}
    carried = {f for f in os.listdir(os.path.join(m.host, "runtime", "src")) if f.endswith(".c")}
    assert listed == carried
    # the tar export carries it too
    arch = codegen.compile(frontend.load_model(os.path.join(MODELS, "ad01_int8.tflite")),
                           name="ad")
    tar = arch.export(str(tmp_path / "ad.tar"))
    del arch
    with tarfile.open(tar) as t:
        assert "./CMakeLists.txt" in t.getnames()


def test_cmake_lists_are_listed_as_given() -> None:
    text = codegen.cmake_lists("m", ["codegen/host/src/m_lib0.c"],
                               ["runtime/src/status.c"], "tvmnode 9.8-rc1")
    assert "set(_tvmnode_crt tvmnode_crt_9_8_rc1)" in text
    assert "${CMAKE_CURRENT_SOURCE_DIR}/codegen/host/src/m_lib0.c" in text
    assert "TVMGEN_HAVE_M=1" in text


def _cmake(src: str, build: str, *extra: str) -> None:
    for cmd in (["cmake", "-G", "Unix Makefiles", "-S", src, "-B", build, *extra],
                ["cmake", "--build", build, "-j", "2"]):
        p = subprocess.run(cmd, capture_output=True, text=True)
        assert p.returncode == 0, "%s failed:\n%s\n%s" % (cmd, p.stdout[-3000:], p.stderr[-3000:])


def test_host_project_links_two_archives(models: Dict[str, Model], tmp_path: Any) -> None:
    pair = [models["kws"], models["ad"]]
    proj = tmp_path / "app"
    proj.mkdir()
    (proj / "main.c").write_text(_host_main(pair))
    (proj / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.13)\nproject(app C)\n"
        + "".join("add_subdirectory(%s %s)\n" % (m.host, m.name) for m in pair)
        + "add_executable(app main.c)\nset_target_properties(app PROPERTIES C_STANDARD 11)\n"
        "target_compile_options(app PRIVATE -Wall -Wextra -Werror)\n"
        "target_link_libraries(app PRIVATE tvmnode::kws tvmnode::ad)\n")
    build = str(tmp_path / "build")
    _cmake(str(proj), build, "-DCMAKE_C_FLAGS=-Wall -Wextra -Werror")
    # the crt is one library, its shared sources compiled once
    objs: Dict[str, List[str]] = {}
    for root, _, names in os.walk(build):
        for n in names:
            if n.endswith(".c.o"):
                objs.setdefault(n, []).append(root)
    for shared in ("status.c.o", "model.c.o", "fixed_point.c.o", "dense_s8.c.o"):
        assert len(objs[shared]) == 1, (shared, objs[shared])
        assert "tvmnode_crt_" in objs[shared][0]
    assert "conv_s8.c.o" in objs  # kws's alone
    libs = sorted(n for _, _, ns in os.walk(build) for n in ns if n.endswith(".a"))
    assert libs == ["libtvmgen_ad.a", "libtvmgen_kws.a", "libtvmnode_crt_0_1_0.a"], libs
    raw = []
    for m in pair:
        for f, x in zip(m.input_files, m.inputs):
            r = f[:-4] + ".bin"
            with open(r, "wb") as fh:
                fh.write(x.tobytes())
            raw.append(r)
    p = subprocess.run([os.path.join(build, "app")] + raw, capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    for m in pair:
        for got, want in zip(_outputs(p.stdout, m), m.ref):
            np.testing.assert_array_equal(got, want)


def test_a_target_of_a_project_that_has_one(models: Dict[str, Model], tmp_path: Any) -> None:
    """A project that already defines the crt target (another archive of
    the same version, added first) keeps it: the second archive adds only
    its missing sources, and a model's name never collides with the crt's."""
    m = models["ad"]
    proj = tmp_path / "p"
    proj.mkdir()
    (proj / "main.c").write_text(_host_main([m]))
    (proj / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.13)\nproject(p C)\n"
        "add_subdirectory(%s ad)\nadd_subdirectory(%s ad_again_kws)\n"
        "add_executable(app main.c)\ntarget_link_libraries(app PRIVATE tvmnode::ad)\n"
        "get_target_property(_s tvmnode_crt_0_1_0 SOURCES)\n"
        "list(LENGTH _s _n)\nmessage(STATUS \"crt sources: ${_n}\")\n"
        % (m.host, models["kws"].host))
    p = subprocess.run(["cmake", "-S", str(proj), "-B", str(tmp_path / "b")],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    n = int(p.stdout.split("crt sources: ")[1].split()[0])
    union = set(os.listdir(os.path.join(m.host, "runtime", "src"))) | set(
        os.listdir(os.path.join(models["kws"].host, "runtime", "src")))
    assert n == len({f for f in union if f.endswith(".c")})


_missing = fw.toolchain_missing()


@pytest.mark.skipif(_missing is not None, reason="Cortex-M firmware: %s" % _missing)
def test_m4_firmware_through_cmake(models: Dict[str, Model], tmp_path: Any) -> None:
    for m in (models["kws"], models["ad"]):
        res = fw.build_and_run(m.m4, m.name, m.input_files, str(tmp_path / m.name),
                               bad_calls=m.name == "kws", cmake=True)
        assert res["ok"], res.get("log")
        for spec, want in zip(m.info["outputs"], m.ref):
            got = np.array(res["outputs"][spec["name"]]["values"], spec["dtype"])
            np.testing.assert_array_equal(got.reshape(spec["shape"]), want)
        assert res["allocators"] == [] and res["crt_size"]["text"] > 0
        assert os.path.exists(os.path.join(str(tmp_path / m.name), "cmake", "models", m.name,
                                           "libtvmgen_%s.a" % m.name))


@pytest.mark.skipif(_missing is not None, reason="Cortex-M firmware: %s" % _missing)
def test_two_models_in_one_m4_firmware(models: Dict[str, Model], tmp_path: Any,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    """Keyword spotting and the anomaly detector in one image, one CMake
    project, one workspace pool: run alternately twice (kws, ad, kws, ad),
    every run's outputs the host executor's. Its RAM (.data + .bss + the
    stack's high-water mark) against the two single-model firmwares'."""
    pair = [models["kws"], models["ad"]]
    res = fw.run_multi([(m.m4, m.name, m.input_files) for m in pair], str(tmp_path / "multi"))
    assert res["ok"], res["log"]
    for m in pair:
        assert res["status"][m.name] == [0, 0]
        assert len(res["outputs"][m.name]) == 2
        for round_ in res["outputs"][m.name]:
            for spec, want in zip(m.info["outputs"], m.ref):
                got = np.frombuffer(round_[spec["name"]], spec["dtype"]).reshape(spec["shape"])
                np.testing.assert_array_equal(got, want)
    pools = [m.m4_info["memory"]["pools"][0]["size_bytes"] for m in pair]
    assert res["pool_bytes"] == max(pools)
    # both archives' libraries and one crt library in the link
    libs = sorted(n for _, _, ns in os.walk(str(tmp_path / "multi" / "cmake" / "models"))
                  for n in ns if n.endswith(".a"))
    assert libs == ["libtvmgen_ad.a", "libtvmgen_kws.a", "libtvmnode_crt_0_1_0.a"], libs
    single = {}
    for m in pair:
        r = fw.build_and_run(m.m4, m.name, m.input_files, str(tmp_path / ("single-" + m.name)),
                             cmake=True)
        assert r["ok"]
        single[m.name] = r["size"]["data"] + r["size"]["bss"] + r["stack_bytes"]
    total = sum(single.values())
    with capsys.disabled():
        print("\ntwo models, one firmware: RAM %d B (pool %d B, stack %d B); separately "
              "%s = %d B; pools %s, shared %d B"
              % (res["ram"], res["pool_bytes"], res["stack_bytes"],
                 " + ".join("%s %d" % kv for kv in single.items()), total, pools,
                 res["pool_bytes"]))
    # the shared pool saves the smaller model's pool at least
    assert res["ram"] <= total - min(pools)
