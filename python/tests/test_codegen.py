"""Ahead-of-time C: every bundled model compiled, built with the system C
compiler under -Wall -Wextra -Werror and run through its C interface gives
the host executor's outputs bit for bit; every interface variant, the
firmware API over the generated descriptor, every error code the generated
run returns, shared pools, device hooks, the archive layout, the parameter
file and the command line."""
from __future__ import annotations

import ctypes
import json
import os
import shutil
import subprocess
import tarfile
from typing import Any, Dict, List

import numpy as np
import pytest

import tvmnode
from tvmnode import codegen, frontend, runtime
from tvmnode import cli

from aot_util import STRICT, HostModel, aligned

MODELS = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "models")
MODELS = os.environ.get("TVMNODE_MODELS", os.path.normpath(MODELS))
ALL = ["kws_ref_model.tflite", "ad01_int8.tflite", "pretrainedResnet_quant.tflite",
       "str_ww_ref_model.tflite", "ad01_fp32.tflite", "kws_ref_model_float32.tflite",
       "pretrainedResnet.tflite"]
NULL_POINTER, POOL_MISALIGNED, DEVICE_FAILED = 9, 8, 12

def model(fname: str) -> Any:
    """A bundled model, imported (not cached: tests leave no object alive)."""
    path = os.path.join(MODELS, fname)
    if not os.path.exists(path):
        pytest.skip("model %s not found" % path)
    return frontend.load_model(path)


def inputs_for(infos: List[Dict[str, Any]], seed: int = 0) -> List[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = []
    for i in infos:
        if i["dtype"] == "int8":
            out.append(rng.integers(-128, 128, i["shape"]).astype(np.int8))
        else:
            out.append(rng.standard_normal(i["shape"]).astype(i["dtype"]))
    return out


def expected(arch: codegen.Archive, xs: List[np.ndarray]) -> List[np.ndarray]:
    r = runtime.Executor(arch.module)(*xs)
    return [np.asarray(o) for o in (r if isinstance(r, tuple) else (r,))]


def check_plan(plan: Dict[str, Any]) -> None:
    """No two buffers alive at a common step overlap in one pool, every
    offset aligned, every pool within its limit."""
    bufs = plan["buffers"]
    for p, pool in enumerate(plan["pools"]):
        mine = [b for b in bufs if b["pool"] == p and b["size"] > 0]
        for b in mine:
            assert b["offset"] % 16 == 0
            assert b["offset"] + b["size"] <= pool["size"]
            if pool["limit"]:
                assert pool["size"] <= pool["limit"]
        for i, a in enumerate(mine):
            for b in mine[i + 1:]:
                if a["first"] <= b["last"] and b["first"] <= a["last"]:
                    assert (a["offset"] + a["size"] <= b["offset"]
                            or b["offset"] + b["size"] <= a["offset"]), (a, b)
    assert sum(p["size"] for p in plan["pools"]) >= plan["lower_bound"]


@pytest.mark.parametrize("fname", ALL)
def test_every_model_matches_the_executor(fname: str, tmp_path: Any) -> None:
    arch = codegen.compile(model(fname), name=fname.split(".")[0].lower())
    check_plan(arch.plan)
    hm = HostModel(arch, str(tmp_path))
    for seed in range(2):
        xs = inputs_for(hm.inputs, seed)
        for got, want in zip(hm.run(*xs), expected(arch, xs)):
            np.testing.assert_array_equal(got, want)


VARIANTS: List[Dict[str, Any]] = [
    {"io_in_pool": True},
    {"constants_in_pool": True},
    {"alignment": 64},
    {"io_in_pool": True, "constants_in_pool": True, "alignment": 32},
    {"pools": [{"name": "sram", "limit": 4096}, {"name": "dram", "limit": 0}]},
    {"io_in_pool": True, "pools": [{"name": "fast", "accepts": ["intermediate", "scratch"]},
                                   {"name": "iobuf", "accepts": ["input", "output"]}]},
]


@pytest.mark.parametrize("fname", ["kws_ref_model.tflite", "pretrainedResnet_quant.tflite",
                                   "ad01_fp32.tflite"])
@pytest.mark.parametrize("variant", range(len(VARIANTS)))
def test_interface_variants(fname: str, variant: int, tmp_path: Any) -> None:
    opts = VARIANTS[variant]
    arch = codegen.compile(model(fname), name="m%d" % variant, **opts)
    check_plan(arch.plan)
    hm = HostModel(arch, str(tmp_path))
    xs = inputs_for(hm.inputs, 7)
    for got, want in zip(hm.run(*xs), expected(arch, xs)):
        np.testing.assert_array_equal(got, want)
    header = arch.files["codegen/host/include/tvmgen_m%d.h" % variant]
    if opts.get("io_in_pool"):
        assert "tvmgen_m%d_map_inputs" % variant in header
        assert all("pool" in t for t in arch.info["inputs"] + arch.info["outputs"])
    if opts.get("constants_in_pool"):
        assert "TVMGEN_M%d_CONSTANT_POOL_SIZE" % variant in header
        assert "TVMGEN_M%d_CONSTANT_POOL_DATA" % variant in header
    if "pools" in opts and not opts.get("io_in_pool"):
        sizes = {p["name"]: p["size_bytes"] for p in arch.info["memory"]["pools"]}
        assert sizes["sram"] <= 4096
    elif "pools" in opts:  # inputs and outputs only in the pool that accepts them
        assert {t["pool"] for t in arch.info["inputs"] + arch.info["outputs"]} == {"iobuf"}
        kinds = {b["kind"] for b in arch.plan["buffers"] if b["pool"] == 0 and b["size"]}
        assert kinds <= {"intermediate", "scratch"}


def test_keyword_spotting_runs_in_place_in_under_70_percent_of_two_buffers() -> None:
    arch = codegen.compile(model("kws_ref_model.tflite"), name="kws")
    ops = arch.info["memory"]["functions"]["operator_functions"]
    in_place = [k for k, v in ops.items() if v[0]["in_place"]]
    assert len(in_place) == 8  # four depthwise and four pointwise layers
    # 16,000 B: two 25x5x64 activations, tflite-micro's plan for this model
    assert arch.workspace_bytes <= 0.7 * 16000
    assert arch.plan["lower_bound"] <= arch.workspace_bytes


@pytest.mark.parametrize("fname", ALL)
def test_the_executor_plans_as_the_code_generator(fname: str) -> None:
    """One planner: the executor's arena is the generated code's workspace
    pool (keyword spotting: 9,024 B, where TFLite Micro needs 16,000 B)."""
    arch = codegen.compile(model(fname), name="m")
    st = runtime.Executor(arch.module).stats()
    assert st["arena_bytes"] == arch.workspace_bytes
    assert st["arena_lower_bound"] == arch.plan["lower_bound"]
    if fname == "kws_ref_model.tflite":
        assert st["arena_bytes"] == 9024


def test_the_generated_code_builds_warning_free_everywhere(tmp_path: Any) -> None:
    """gcc and clang on the host, arm-none-eabi-gcc for a Cortex-M4, and the
    header as C++, each with -Wall -Wextra -Werror, for a plain and a
    fully pooled variant with a device."""
    variants: List[Dict[str, Any]] = [{}, {"io_in_pool": True, "constants_in_pool": True,
                     "devices": {"npu": ["qnn.conv2d"]}}]
    compilers = [c for c in ("gcc", "clang", "arm-none-eabi-gcc") if shutil.which(c)]
    assert "gcc" in compilers
    for k, opts in enumerate(variants):
        arch = codegen.compile(model("kws_ref_model.tflite"), name="kws%d" % k, **opts)
        d = arch.export(str(tmp_path / ("kws%d" % k)))
        srcs = [os.path.join(d, "codegen", "host", "src", f)
                for f in sorted(os.listdir(os.path.join(d, "codegen", "host", "src")))]
        inc = ["-I" + os.path.join(d, "codegen", "host", "include"),
               "-I" + os.path.join(d, "runtime", "include")]
        for cc in compilers:
            extra = (["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16",
                      "-ffreestanding"] if cc.startswith("arm") else [])
            for src in srcs:
                r = subprocess.run([cc, "-std=c99", "-Wall", "-Wextra", "-Werror", "-O2", *extra,
                                    *inc, "-c", src, "-o", str(tmp_path / "x.o")],
                                   capture_output=True, text=True)
                assert r.returncode == 0, (cc, src, r.stderr)
        cxx = shutil.which("g++") or shutil.which("clang++")
        if cxx:
            main = tmp_path / "use.cc"
            main.write_text('#include "tvmgen_kws%d.h"\nint main() { return 0; }\n' % k)
            r = subprocess.run([cxx, "-Wall", "-Wextra", "-Werror", "-fsyntax-only", *inc,
                                str(main)], capture_output=True, text=True)
            assert r.returncode == 0, r.stderr


def test_run_reports_null_and_misaligned_pools(tmp_path: Any) -> None:
    arch = codegen.compile(model("ad01_int8.tflite"), name="ad")
    hm = HostModel(arch, str(tmp_path))
    xs = inputs_for(hm.inputs)
    assert hm.run(*xs, pools=hm.new_pools(offset=4), raw_status=True) == POOL_MISALIGNED
    st = hm.run_fn(None, None, None)
    assert st == NULL_POINTER
    In = hm.In(None)
    Out = hm.Out(np.zeros(1).ctypes.data)
    pools = hm.new_pools()
    ws = hm.Ws(*[p.ctypes.data for p in pools])
    assert hm.run_fn(ctypes.byref(In), ctypes.byref(Out), ctypes.byref(ws)) == NULL_POINTER
    ws0 = hm.Ws(None)
    x = xs[0]
    In = hm.In(x.ctypes.data)
    assert hm.run_fn(ctypes.byref(In), ctypes.byref(Out), ctypes.byref(ws0)) == NULL_POINTER


def test_two_models_share_one_pool_and_two_instances_have_their_own(tmp_path: Any) -> None:
    a = HostModel(codegen.compile(model("kws_ref_model.tflite"), name="kws"), str(tmp_path))
    b = HostModel(codegen.compile(model("ad01_int8.tflite"), name="ad"), str(tmp_path))
    size = max(a.arch.workspace_bytes, b.arch.workspace_bytes)
    shared = aligned(size)
    for seed in range(3):
        xa, xb = inputs_for(a.inputs, seed), inputs_for(b.inputs, seed)
        for got, want in zip(a.run(*xa, pools=[shared[:a.arch.workspace_bytes]]),
                             expected(a.arch, xa)):
            np.testing.assert_array_equal(got, want)
        for got, want in zip(b.run(*xb, pools=[shared[:b.arch.workspace_bytes]]),
                             expected(b.arch, xb)):
            np.testing.assert_array_equal(got, want)
    # two instances of one model, each with its own pool, interleaved
    p1, p2 = a.new_pools(), a.new_pools()
    x1, x2 = inputs_for(a.inputs, 11), inputs_for(a.inputs, 12)
    for _ in range(2):
        np.testing.assert_array_equal(a.run(*x1, pools=p1)[0], expected(a.arch, x1)[0])
        np.testing.assert_array_equal(a.run(*x2, pools=p2)[0], expected(a.arch, x2)[0])


DEVICE_C = r"""
#include "tvmgen_%(m)s.h"
int32_t tvmgen_%(m)s_npu_compute(void *device, const TnCrtDeviceCall *call) {
  int32_t *state = (int32_t *)device; /* [calls, fail] */
  state[0]++;
  if (state[1]) return -1;
  if (call->num_inputs < 2 || call->output == 0) return -2;
  return call->reference(call->inputs, call->output, call->scratch);
}
"""


def test_device_hooks_get_the_operators_and_failures_are_reported(tmp_path: Any) -> None:
    arch = codegen.compile(model("kws_ref_model.tflite"), name="kwsd",
                           devices={"npu": ["qnn.conv2d"]})
    hm = HostModel(arch, str(tmp_path), extra_sources={"device.c": DEVICE_C % {"m": "kwsd"}})
    state = np.zeros(2, np.int32)
    xs = inputs_for(hm.inputs, 3)
    got = hm.run(*xs, devices=[state.ctypes.data])
    np.testing.assert_array_equal(got[0], expected(arch, xs)[0])
    convs = [v for v in arch.info["memory"]["functions"]["operator_functions"].values()
             if v[0]["operator"] == "qnn.conv2d"]
    assert state[0] == len(convs) == 9
    state[1] = 1
    assert hm.run(*xs, devices=[state.ctypes.data], raw_status=True) == DEVICE_FAILED
    assert hm.run(*xs, devices=[0], raw_status=True) != 0  # a NULL device handle


def test_device_hooks_must_exist_to_link(tmp_path: Any) -> None:
    arch = codegen.compile(model("ad01_int8.tflite"), name="add", devices={"npu": ["qnn.dense"]})
    with pytest.raises(RuntimeError):
        # a shared library may leave symbols undefined; -Wl,-z,defs makes it an error
        codegen.build_library(arch.export(str(tmp_path / "a")), str(tmp_path / "a.so"),
                              cflags=["-O1", "-Wl,-z,defs"])


def test_build_library_takes_a_launcher_and_names_the_source_that_failed(
        tmp_path: Any) -> None:
    """build_library compiles each source on its own from inside the
    archive: cc may be a command line (a compiler cache or `env` before
    the compiler), the library it gives runs the model as the plain
    compiler's does, and a source that does not compile is named, with
    the compiler's message, as is a library that does not link."""
    arch = codegen.compile(model("ad01_int8.tflite"), name="ad")
    d = arch.export(str(tmp_path / "ad"))
    plain = codegen.build_library(d, str(tmp_path / "plain.so"))
    launched = codegen.build_library(d, str(tmp_path / "launched.so"), cc="env LC_ALL=C cc")
    xs = [np.random.default_rng(3).integers(-128, 128, i["shape"]).astype(np.int8)
          for i in arch.info["inputs"]]
    outs = []
    for so in (plain, launched):
        with runtime.load_module(so) as m:
            outs.append(m.run(*xs)[0])
    np.testing.assert_array_equal(outs[0], outs[1])
    np.testing.assert_array_equal(outs[0], expected(arch, xs)[0])
    broken = os.path.join(d, "codegen", "host", "src", "zz_broken.c")
    with open(broken, "w") as f:
        f.write("int tvmnode_test_broken(void) { return undeclared_name; }\n")
    with pytest.raises(RuntimeError, match=r"(?s)build_library: .*failed on "
                       r"codegen/host/src/zz_broken\.c:.*undeclared_name"):
        codegen.build_library(d, str(tmp_path / "broken.so"))
    os.remove(broken)
    with pytest.raises(RuntimeError, match=r"(?s)build_library: linking .*nolink\.so.*tn_no_such_lib"):
        codegen.build_library(d, str(tmp_path / "nolink.so"),
                              cflags=["-O1", "-ltn_no_such_lib"])
    with pytest.raises(ValueError, match="build_library: argument cc"):
        codegen.build_library(d, str(tmp_path / "x.so"), cc=" ")


class TensorInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("dtype", ctypes.c_int32), ("ndim", ctypes.c_int32),
                ("shape", ctypes.POINTER(ctypes.c_int32)), ("nbytes", ctypes.c_uint32),
                ("scale", ctypes.c_float), ("zero_point", ctypes.c_int32),
                ("pool", ctypes.c_int32), ("offset", ctypes.c_uint32)]


class PoolInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("size", ctypes.c_uint32),
                ("alignment", ctypes.c_uint32)]


class Model(ctypes.Structure):
    _fields_ = [("magic", ctypes.c_uint32), ("abi_version", ctypes.c_uint32),
                ("name", ctypes.c_char_p), ("version", ctypes.c_char_p),
                ("num_inputs", ctypes.c_int32), ("num_outputs", ctypes.c_int32),
                ("inputs", ctypes.POINTER(TensorInfo)), ("outputs", ctypes.POINTER(TensorInfo)),
                ("num_workspace_pools", ctypes.c_int32),
                ("workspace_pools", ctypes.POINTER(PoolInfo)),
                ("num_constant_pools", ctypes.c_int32),
                ("constant_pools", ctypes.POINTER(PoolInfo)),
                ("constant_pool_data", ctypes.c_void_p), ("num_devices", ctypes.c_int32),
                ("devices", ctypes.c_void_p), ("macs", ctypes.c_int64),
                ("constant_bytes", ctypes.c_uint32), ("run", ctypes.c_void_p)]


class Pool(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("size", ctypes.c_uint32)]


DTYPES = {0: "float32", 1: "int32", 2: "int8"}
vp = ctypes.c_void_p


@pytest.mark.parametrize("opts", [{}, {"io_in_pool": True, "constants_in_pool": True}])
def test_the_descriptor_describes_the_model_and_drives_the_firmware_api(
        opts: Dict[str, Any], tmp_path: Any) -> None:
    arch = codegen.compile(model("kws_ref_model.tflite"), name="kws", **opts)
    # the crt's own API exported too (build_library hides all but the model's)
    hm = HostModel(arch, str(tmp_path), cflags=STRICT + ("-fvisibility=default",))
    m = Model.in_dll(hm.lib, "tvmgen_kws_model")
    assert m.magic == 0x544E4D44 and m.abi_version == 1 and m.name == b"kws"
    assert m.version.decode() == tvmnode.__version__
    assert (m.num_inputs, m.num_outputs) == (1, 1)
    info = arch.info
    for t, want in ((m.inputs[0], info["inputs"][0]), (m.outputs[0], info["outputs"][0])):
        assert t.name.decode() == want["name"]
        assert DTYPES[t.dtype] == want["dtype"]
        assert [t.shape[i] for i in range(t.ndim)] == want["shape"]
        assert t.nbytes == want["size_bytes"]
        assert t.scale == pytest.approx(want["scale"], rel=1e-6)
        assert t.zero_point == want["zero_point"]
        assert (t.pool >= 0) == bool(opts.get("io_in_pool"))
    assert m.inputs[0].scale == pytest.approx(0.5847029089927673, rel=1e-6)
    assert m.macs == info["macs"] > 2_000_000
    assert m.workspace_pools[0].size == arch.workspace_bytes
    assert m.num_constant_pools == (1 if opts.get("constants_in_pool") else 0)
    assert m.constant_bytes == info["memory"]["functions"]["main"][0]["constants_size_bytes"]
    # the generic API over the descriptor
    lib = hm.lib
    inst = aligned(1024, 16)
    ws = aligned(m.workspace_pools[0].size, 16)
    pools = (Pool * 1)(Pool(ws.ctypes.data, ws.size))
    cps = (Pool * 1)()
    ncp = m.num_constant_pools
    if ncp:
        cp = aligned(m.constant_pools[0].size, 16)
        cps[0] = Pool(cp.ctypes.data, cp.size)
    model_p = ctypes.byref(m)
    assert lib.tn_crt_instance_init(vp(inst.ctypes.data), model_p, pools, 1, cps, ncp) == 0
    x = inputs_for(hm.inputs, 5)[0]
    y = np.zeros(info["outputs"][0]["shape"], np.int8)
    if opts.get("io_in_pool"):
        off_in, off_out = info["inputs"][0]["offset"], info["outputs"][0]["offset"]
        ws[off_in:off_in + x.nbytes] = x.view(np.uint8).reshape(-1)
        assert lib.tn_crt_run(vp(inst.ctypes.data)) == 0
        y = ws[off_out:off_out + y.nbytes].view(np.int8).reshape(y.shape)
    else:
        assert lib.tn_crt_run(vp(inst.ctypes.data)) == 11  # NOT_BOUND
        assert lib.tn_crt_bind_input(vp(inst.ctypes.data), 0, vp(x.ctypes.data), x.nbytes) == 0
        assert lib.tn_crt_bind_output(vp(inst.ctypes.data), 0, vp(y.ctypes.data), y.nbytes) == 0
        assert lib.tn_crt_run(vp(inst.ctypes.data)) == 0
    np.testing.assert_array_equal(y, expected(arch, [x])[0])
    small = (Pool * 1)(Pool(ws.ctypes.data, ws.size - 16))
    assert lib.tn_crt_instance_init(vp(inst.ctypes.data), model_p, small, 1, cps, ncp) == 6


def test_the_archive_layout_and_metadata(tmp_path: Any) -> None:
    arch = codegen.compile(model("kws_ref_model.tflite"), name="kws")
    tar = arch.export(str(tmp_path / "kws.tar"))
    with tarfile.open(tar) as t:
        names = {n.lstrip("./") for n in t.getnames()}
    for want in ("metadata.json", "codegen/host/src/kws_lib0.c", "codegen/host/src/kws_lib1.c",
                 "codegen/host/include/tvmgen_kws.h", "parameters/kws.params", "src/kws.tn",
                 "runtime/include/tvmnode/crt/kernels.h", "runtime/src/status.c"):
        assert want in names
    # exactly the kernels the model calls: no float kernels in an int8 model
    assert not any("f32" in n for n in names)
    meta = json.loads(arch.files["metadata.json"])
    assert meta["version"] == 7
    mod = meta["modules"]["kws"]
    assert mod["executors"] == ["aot"] and mod["model_name"] == "kws"
    assert mod["inputs"][0]["shape"] == [1, 49, 10, 1]
    assert mod["outputs"][0]["dtype"] == "int8"
    main = mod["memory"]["functions"]["main"][0]
    assert main["workspace_size_bytes"] == arch.workspace_bytes
    assert main["io_size_bytes"] == 490 + 12
    header = arch.files["codegen/host/include/tvmgen_kws.h"]
    assert "#define TVMGEN_KWS_GLOBAL_WORKSPACE_WORKSPACE_POOL_SIZE %d" % arch.workspace_bytes \
        in header
    assert "#define TVMGEN_KWS_INPUT_1_SIZE 490" in header
    params = codegen.load_params(arch.all_files()["parameters/kws.params"])
    assert set(params) == set(arch.constants)
    # the IR text reads back as the same module
    assert tvmnode.ir.structural_equal(tvmnode.ir.parse(arch.all_files()["src/kws.tn"].decode()),
                                       arch.module)


def test_the_archive_builds_with_nothing_but_its_own_files(tmp_path: Any) -> None:
    arch = codegen.compile(model("str_ww_ref_model.tflite"), name="ww")
    d = arch.export(str(tmp_path / "ww"))
    # what docs/mlf.md promises: cc codegen/host/src/*.c runtime/src/*.c
    import glob
    srcs = sorted(glob.glob(os.path.join(d, "codegen", "host", "src", "*.c")) +
                  glob.glob(os.path.join(d, "runtime", "src", "*.c")))
    main = tmp_path / "main.c"
    inp, outp = arch.info["inputs"][0]["name"].upper(), arch.info["outputs"][0]["name"].upper()
    main.write_text(r"""
#include <stdio.h>
#include "tvmgen_ww.h"
static int8_t in[TVMGEN_WW_%s_SIZE];
static int8_t out[TVMGEN_WW_%s_SIZE];
static uint8_t pool[TVMGEN_WW_GLOBAL_WORKSPACE_WORKSPACE_POOL_SIZE] __attribute__((aligned(16)));
int main(void) {
  struct tvmgen_ww_inputs i = {in};
  struct tvmgen_ww_outputs o = {out};
  struct tvmgen_ww_workspace_pools w = {pool};
  int32_t st = tvmgen_ww_run(&i, &o, &w);
  printf("%%d %%d\n", (int)st, (int)out[0]);
  return st;
}
""" % (inp, outp))
    exe = tmp_path / "ww.exe"
    r = subprocess.run(["cc", "-std=c99", "-Wall", "-Wextra", "-Werror", str(main), *srcs,
                        "-I" + os.path.join(d, "codegen", "host", "include"),
                        "-I" + os.path.join(d, "runtime", "include"), "-o", str(exe), "-lm"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    out = subprocess.run([str(exe)], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.split()[0] == "0"
    xs = [np.zeros(arch.info["inputs"][0]["shape"], np.int8)]
    assert int(out.stdout.split()[1]) == int(expected(arch, xs)[0].reshape(-1)[0])


def test_parameter_files_round_trip_and_reject_damage() -> None:
    params: Dict[str, np.ndarray] = {"w": np.arange(-6, 6, dtype=np.int8).reshape(3, 4),
              "b": np.array([1.5, -2.25], np.float32), "s": np.array(7, np.int32)}
    blob = codegen.save_params(params)
    back = codegen.load_params(blob)
    assert set(back) == set(params)
    for k in params:
        np.testing.assert_array_equal(back[k], params[k])
        assert back[k].dtype == params[k].dtype
    for cut in range(len(blob)):
        with pytest.raises(ValueError):
            codegen.load_params(blob[:cut])
    for pos in range(0, len(blob), 3):
        bad = bytearray(blob)
        bad[pos] ^= 0x40
        with pytest.raises(ValueError):
            codegen.load_params(bytes(bad))
    with pytest.raises(TypeError, match="complex"):
        codegen.save_params({"c": np.zeros(2, np.complex64)})


def test_parameter_files_are_written_by_c_whatever_the_array() -> None:
    """Python hands the tensors to the C writer: read-only and big-endian
    arrays give the bytes of the plain ones, and C reads back what Python
    wrote and the other way round."""
    save_c = tvmnode.get_global_func("runtime.SaveParams")
    plain: Dict[str, np.ndarray] = {"w": np.arange(-6, 6, dtype=np.int8).reshape(3, 4),
             "f": np.array([1.5, -2.25], np.float32), "s": np.array(7, np.int32)}
    ro = np.frombuffer(plain["f"].tobytes(), np.float32)  # read only
    odd: Dict[str, np.ndarray] = {"w": plain["w"], "f": ro.astype(">f4"), "s": plain["s"]}
    blob = codegen.save_params(plain)
    assert codegen.save_params(odd) == blob
    assert codegen.save_params({"f": ro}) == codegen.save_params({"f": plain["f"]})
    assert bytes(save_c({k: tvmnode.from_dlpack(v) for k, v in plain.items()})) == blob
    back = codegen.load_params(blob)
    assert codegen.save_params(back) == blob
    assert [v.dtype for v in back.values()] == [v.dtype for v in plain.values()]


def test_compile_errors_name_what_is_wrong() -> None:
    m = model("ad01_int8.tflite")
    with pytest.raises(ValueError, match="unknown option 'bogus'"):
        tvmnode.get_global_func("codegen.AOT")(codegen._pipeline(m), {"bogus": 1})
    with pytest.raises(ValueError, match="C identifier"):
        codegen.compile(m, name="1bad-name")
    with pytest.raises(ValueError, match="power of two"):
        codegen.compile(m, alignment=24)
    with pytest.raises(ValueError, match="tiny"):
        codegen.compile(m, pools=[{"name": "tiny", "limit": 64}])
    with pytest.raises(ValueError, match="accepts 'weights'"):
        codegen.compile(m, pools=[{"name": "p", "accepts": ["weights"]}])
    with pytest.raises(ValueError, match="no pool accepts intermediate"):
        codegen.compile(m, pools=[{"name": "p", "accepts": ["input"]}])
    with pytest.raises(ValueError, match="interface"):
        codegen.compile(m, interface="java")
    with pytest.raises(ValueError, match="two devices"):
        codegen.compile(m, devices={"a": ["qnn.dense"], "b": ["qnn.dense"]})
    with pytest.raises(TypeError, match="options must be a map"):
        tvmnode.get_global_func("codegen.AOT")(codegen._pipeline(m), [1, 2])


def test_cli_compile_and_plan(tmp_path: Any, capsys: Any) -> None:
    path = os.path.join(MODELS, "ad01_int8.tflite")
    if not os.path.exists(path):
        pytest.skip("model not found")
    out = str(tmp_path / "ad")
    assert cli.main(["compile", path, "--name", "ad", "-o", out, "--io-in-pool",
                     "--pool", "sram:1k", "--pool", "dram"]) == 0
    text = capsys.readouterr().out
    assert "pool sram" in text and "wrote" in text
    assert os.path.exists(os.path.join(out, "metadata.json"))
    assert cli.main(["compile", path, "-o", str(tmp_path / "ad.tar")]) == 0
    assert tarfile.is_tarfile(str(tmp_path / "ad.tar"))
    assert cli.main(["plan", path, "--name", "ad"]) == 0
    text = capsys.readouterr().out
    assert "lower bound" in text and "intermediate" in text
    assert cli.main(["compile", path, "-o", out, "--device", "npu"]) == 1
    assert "NAME:OP" in capsys.readouterr().err


# Every C11 keyword, C23's new ones and names the usual headers define: as
# input and output names they broke the generated C (`void *int;`).
C_NAMES = ["auto", "break", "case", "char", "const", "continue", "default", "do", "double",
           "else", "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long",
           "register", "restrict", "return", "short", "signed", "sizeof", "static", "struct",
           "switch", "typedef", "union", "unsigned", "void", "volatile", "while", "_Alignas",
           "_Alignof", "_Atomic", "_Bool", "_Complex", "_Generic", "_Imaginary", "_Noreturn",
           "_Static_assert", "_Thread_local", "bool", "true", "false", "errno",
           "static_assert", "alignas", "alignof", "noreturn", "thread_local", "complex",
           "imaginary", "offsetof", "assert", "and", "or", "not", "xor", "nullptr", "typeof",
           "constexpr", "__reserved", "stdin", "NULL"]
USUAL_HEADERS = ("#include <stdbool.h>\n#include <errno.h>\n#include <assert.h>\n"
                 "#include <stdalign.h>\n#include <stdnoreturn.h>\n#include <complex.h>\n"
                 "#include <iso646.h>\n#include <stddef.h>\n#include <stdio.h>\n")


@pytest.mark.parametrize("chunk", range(0, len(C_NAMES), 16))
def test_c_keywords_as_tensor_names(chunk: int, tmp_path: Any) -> None:
    from tvmnode import ir
    from tvmnode.ir import op
    names = C_NAMES[chunk:chunk + 16]
    xs = [ir.var(n, shape=(4,), dtype="float32") for n in names]
    y: Any = xs[0]
    for x in xs[1:]:
        y = op.add(y, x)
    mod = ir.IRModule.from_expr(ir.Function(xs, op.nn.relu(y)))
    mod = mod.with_attr("inputs", [{"name": n} for n in names])
    mod = mod.with_attr("outputs", [{"name": names[-1]}])
    arch = codegen.compile(mod, "kw")
    c_names = [i["name"] for i in arch.info["inputs"]]
    assert len(set(c_names)) == len(names)
    # the generated header after the headers a firmware project includes,
    # its structs used by name
    fields = "".join("  (void)in.%s;\n" % n for n in c_names)
    use = (USUAL_HEADERS + '#include "tvmgen_kw.h"\n'
           "void kw_use(struct tvmgen_kw_inputs in, struct tvmgen_kw_outputs out);\n"
           "void kw_use(struct tvmgen_kw_inputs in, struct tvmgen_kw_outputs out) {\n"
           + fields + "  (void)out.%s;\n}\n" % arch.info["outputs"][0]["name"])
    hm = HostModel(arch, str(tmp_path), extra_sources={"use.c": use})
    vals = [np.arange(4, dtype="float32") - k for k in range(len(names))]
    got = hm.run(*vals)
    np.testing.assert_array_equal(got[0], expected(arch, vals)[0])
