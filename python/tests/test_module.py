"""Compiled models as runtime Modules: every bundled model compiled,
exported, built with the system C compiler and loaded with
tvmnode.runtime.load_module gives the host executor's outputs bit for bit,
with inputs and outputs in the pool and constants in a pool too; a C
program with archives linked in statically finds them by name in the
system library; errors are typed; an output keeps its library loaded; the
parameter file reads and writes the same bytes in C and in Python; the
command line builds libraries."""
from __future__ import annotations

import gc
import os
import subprocess
import threading
import time
from typing import Any, Dict, List

import numpy as np
import pytest

import tvmnode
from tvmnode import cli, codegen, frontend, runtime

from test_codegen import MODELS, inputs_for

BUNDLED = ["kws_ref_model.tflite", "ad01_int8.tflite", "str_ww_ref_model.tflite",
           "pretrainedResnet_quant.tflite", "ad01_fp32.tflite"]


def model_path(fname: str) -> str:
    path = os.path.join(MODELS, fname)
    if not os.path.exists(path):
        pytest.skip("model %s not found" % path)
    return path


class Built:
    """A model compiled, exported and built into a library, with the host
    executor's outputs for two seeds: plain data only (the conftest fixture
    wants no tvmnode object to outlive a test)."""

    def __init__(self, fname: str, workdir: str, name: str, **opts: Any) -> None:
        arch = codegen.compile(frontend.load_model(model_path(fname)), name=name, **opts)
        self.info = arch.info
        self.dir = arch.export(os.path.join(workdir, name))
        self.so = codegen.build_library(self.dir, os.path.join(workdir, "lib%s.so" % name),
                                        cflags=("-O2", "-Wall", "-Wextra", "-Werror"))
        ex = runtime.Executor(arch.module)
        self.cases = []
        for seed in range(2):
            xs = inputs_for(self.info["inputs"], seed)
            r = ex(*xs)
            self.cases.append((xs, [np.array(o, copy=True)
                                    for o in (r if isinstance(r, tuple) else (r,))]))
        del ex, arch, r


_built: Dict[Any, Built] = {}


def built(fname: str, tmp_path_factory: Any, name: str = "m", **opts: Any) -> Built:
    key = (fname, name, tuple(sorted(opts.items())))
    if key not in _built:
        _built[key] = Built(fname, str(tmp_path_factory.mktemp(name)), name, **opts)
    return _built[key]


def check_runs(m: runtime.Module, b: Built) -> None:
    for xs, want in b.cases:
        got = m.run(*xs)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and g.shape == w.shape
            np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("fname", BUNDLED)
def test_every_model_runs_as_a_module_like_the_executor(fname: str,
                                                        tmp_path_factory: Any) -> None:
    b = built(fname, tmp_path_factory, name=fname.split(".")[0].lower())
    with runtime.load_module(b.so) as m:
        assert m.name == b.info["model_name"]
        for mine, theirs in ((m.inputs, b.info["inputs"]), (m.outputs, b.info["outputs"])):
            for t, want in zip(mine, theirs):
                assert (t["name"], list(t["shape"]), t["dtype"]) == (
                    want["name"], want["shape"], want["dtype"])
                assert t["scale"] == pytest.approx(want.get("scale", 0.0), rel=1e-6)
                assert t["zero_point"] == want.get("zero_point", 0)
        check_runs(m, b)
        # again, by name and with views of the Module's buffers
        xs, want = b.cases[0]
        outs = m.run(copy=False, **{m.inputs[0]["name"]: xs[0]})
        np.testing.assert_array_equal(outs[0], want[0])
        np.testing.assert_array_equal(m.get_output(0), want[0])
        del outs


def test_isa_levels_reach_the_modules_crt(tmp_path_factory: Any) -> None:
    """set_isa caps the kernels' ISA forms in this process and in a loaded
    library's own crt (read back through the library's exported
    tvmnode_module_isa_limit): the executor's outputs at every level the
    CPU has; bad levels are named."""
    import ctypes

    b = built("ad01_int8.tflite", tmp_path_factory, name="adisa")
    top = runtime.isa()
    assert top in runtime.ISA_LEVELS
    lib = ctypes.CDLL(b.so)
    try:
        with runtime.load_module(b.so) as m:
            for level in runtime.ISA_LEVELS[:runtime.ISA_LEVELS.index(top) + 1]:
                assert runtime.set_isa(level) == level
                check_runs(m, b)
                # the library's crt took the level at the run (-1: read only)
                assert lib.tvmnode_module_isa_limit(-1) & 0xff == \
                    runtime.ISA_LEVELS.index(level)
            if runtime.ISA_LEVELS.index(top) >= 3 and os.path.exists("/proc/cpuinfo"):
                # AVX2 with the AVX-VNNI forms: the flag reaches the
                # library's crt where the CPU has it, a cap of AVX2 drops it
                assert runtime.set_isa("avxvnni") == "avx2"
                check_runs(m, b)
                with open("/proc/cpuinfo") as f:
                    has = " avx_vnni" in f.read()
                assert bool(lib.tvmnode_module_isa_limit(-1) & 0x100) == has
                runtime.set_isa("avx2")
                check_runs(m, b)
                assert not lib.tvmnode_module_isa_limit(-1) & 0x100
            assert runtime.set_isa("avx512vnni") == top
            check_runs(m, b)
            assert lib.tvmnode_module_isa_limit(-1) & 0xff == runtime.ISA_LEVELS.index(top)
    finally:
        runtime.set_isa("avx512vnni")
    assert runtime.set_isa(2) == runtime.ISA_LEVELS[min(2, runtime.ISA_LEVELS.index(top))]
    runtime.set_isa("vnni")
    with pytest.raises(ValueError, match=r"runtime.IsaLimit: level: expected one of "
                       r"portable, .*got 'avx9'"):
        runtime.set_isa("avx9")
    with pytest.raises(ValueError, match=r"runtime.IsaLimit: level: expected -1 to 5, got 6"):
        runtime.set_isa(6)
    assert runtime.isa() == top


def test_tvmnode_isa_in_the_environment() -> None:
    """TVMNODE_ISA, read at start-up, caps the level; an unknown value is
    reported on stderr and changes nothing."""
    import sys

    code = "from tvmnode import runtime; print(runtime.isa())"
    env = dict(os.environ, TVMNODE_ISA="portable")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True)
    assert out.stdout.strip() == "portable"
    env["TVMNODE_ISA"] = "avx9"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True)
    assert out.stdout.strip() == runtime.isa()
    assert "TVMNODE_ISA: expected one of portable" in out.stderr and "'avx9'" in out.stderr


@pytest.mark.parametrize("opts", [{"io_in_pool": True}, {"constants_in_pool": True},
                                  {"io_in_pool": True, "constants_in_pool": True,
                                   "alignment": 64}])
@pytest.mark.parametrize("fname", ["kws_ref_model.tflite", "ad01_fp32.tflite"])
def test_pooled_archives(fname: str, opts: Dict[str, Any], tmp_path_factory: Any) -> None:
    b = built(fname, tmp_path_factory, name="p", **opts)
    assert all(("pool" in t) == bool(opts.get("io_in_pool"))
               for t in b.info["inputs"] + b.info["outputs"])
    with runtime.load_module(b.so, "p") as m:
        check_runs(m, b)
        for _ in range(3):  # the constant pool is filled once and stays right
            check_runs(m, b)


def test_a_workspace_of_the_callers(tmp_path_factory: Any) -> None:
    """set_workspace runs the model in an array the caller gives, inputs and
    outputs included when they live in the pool; outputs read from it stay
    readable after the pool is given back; bad pools are named."""
    b = built("ad01_int8.tflite", tmp_path_factory, name="adp", io_in_pool=True)
    (x,), (want,) = b.cases[0]
    (x1,), (want1,) = b.cases[1]
    with runtime.load_module(b.so) as m:
        (pool_info,) = m.pools
        size, align = pool_info["size"], pool_info["alignment"]
        assert size == m.workspace_bytes and align >= 16
        raw = np.zeros(size + 2 * align, np.uint8)
        off = -raw.ctypes.data % align
        pool = raw[off:off + size]
        m.set_workspace(0, pool)
        (y,) = m.run(x, copy=False)
        np.testing.assert_array_equal(y, want)
        assert np.shares_memory(y, raw)  # the output lives in the caller's pool
        m.set_workspace(0)  # the Module's own again
        np.testing.assert_array_equal(y, want)  # the old view still reads it
        np.testing.assert_array_equal(m.run(x1)[0], want1)
        np.testing.assert_array_equal(y, want)  # and is not the Module's
        with pytest.raises(ValueError, match="pool '.*' needs %d bytes, got %d"
                           % (size, size - 1)):
            m.set_workspace(0, pool[:-1])
        with pytest.raises(ValueError, match="must be aligned to %d bytes" % align):
            m.set_workspace(0, raw[off + 1:off + 1 + size])
        with pytest.raises(IndexError, match="no pool 1"):
            m.set_workspace(1, pool)
        with pytest.raises(TypeError, match="expected a tn.Tensor or None"):
            m.set_workspace(0, "pool")
        # a run writes its pools: read-only memory is refused
        frozen = pool.copy()
        frozen.flags.writeable = False
        with pytest.raises(ValueError, match="pool 0: the tensor is read-only"):
            m.set_workspace(0, frozen)
        with pytest.raises(ValueError, match="read-only"):
            m.set_workspace(0, np.frombuffer(bytes(size), np.uint8))
        # after the errors, the Module runs as before
        np.testing.assert_array_equal(m.run(x)[0], want)
        del y


def test_a_pool_may_not_overlap_what_a_run_reads_or_writes(tmp_path_factory: Any) -> None:
    b = built("ad01_int8.tflite", tmp_path_factory, name="ad")
    (x,), (want,) = b.cases[0]
    with runtime.load_module(b.so) as m:
        (info,) = m.pools
        size, align = info["size"], info["alignment"]
        (y,) = m.run(x, copy=False)
        out = y.view(np.uint8).reshape(-1)
        start = -out.ctypes.data % align
        with pytest.raises(ValueError, match="overlaps an output buffer of the Module"):
            m.set_workspace(0, out[start:start + size])
        raw = np.zeros(max(size, 640) + 2 * align, np.int8)
        off = -raw.ctypes.data % align
        held = raw[off:off + 640].reshape(1, 640)
        held[...] = x
        m.set_input(0, held)  # read in place
        with pytest.raises(ValueError, match="overlaps an input the Module reads in place"):
            m.set_workspace(0, raw.view(np.uint8)[off:off + size])
        np.testing.assert_array_equal(m.run()[0], want)  # nothing changed
        del y, out


def test_set_input_then_run_and_benchmark(tmp_path_factory: Any) -> None:
    b = built("ad01_int8.tflite", tmp_path_factory, name="ad")
    (x,), (want,) = b.cases[0]
    with runtime.load_module(b.so) as m:
        m.set_input("input_1", x)
        (y,) = m.run()
        np.testing.assert_array_equal(y, want)
        # zero copy: the array is read at run(), not at set_input()
        x2 = x.copy()
        m.set_input(0, x2)
        (xs1,), (want1,) = b.cases[1]
        x2[...] = xs1
        np.testing.assert_array_equal(m.run()[0], want1)
        # a strided array is made compact first; bytes are copied
        wide = np.zeros((1, 1280), np.int8)
        wide[:, ::2] = x
        np.testing.assert_array_equal(m.run(wide[:, ::2])[0], want)
        m.set_input(0, x.tobytes())
        np.testing.assert_array_equal(m.run()[0], want)
        stats = m.benchmark(number=20, repeat=3)
        assert set(stats) >= {"median_ms", "mean_ms", "min_ms", "max_ms", "std_ms"}
        assert len(stats["results_ms"]) == 3 and 0 < stats["median_ms"] < 1000
        assert m.macs > 0 and m.workspace_bytes > 0


def test_run_with_every_input_is_one_call_that_keeps_them(tmp_path_factory: Any) -> None:
    """run(x) with arrays that are exactly the inputs takes the one-call
    path; what it read stays the input, in place, as set_input's would."""
    b = built("ad01_int8.tflite", tmp_path_factory, name="ad")
    (x,), (want,) = b.cases[0]
    (x1,), (want1,) = b.cases[1]
    with runtime.load_module(b.so) as m:
        mine = x.copy()
        np.testing.assert_array_equal(m.run(mine)[0], want)
        # read in place and kept: a later run without inputs sees changes
        mine[...] = x1
        np.testing.assert_array_equal(m.run()[0], want1)
        assert m.benchmark(number=3, repeat=1)["median_ms"] > 0
        # set_input replaces what run(x) lent, and only that input
        m.run(x)
        m.set_input(0, x1)
        np.testing.assert_array_equal(m.run()[0], want1)
        # copy=False gives views of the Module's buffers, new ones each
        # time: reshaping one changes no later result
        (v,) = m.run(x, copy=False)
        (v2,) = m.run(x1, copy=False)
        assert v is not v2 and np.shares_memory(v, v2)
        np.testing.assert_array_equal(v, want1)
        v.shape = (640,)
        assert m.run(x1, copy=False)[0].shape == (1, 640)
        (c,) = m.run(x)
        assert not np.shares_memory(c, v)
        np.testing.assert_array_equal(c, want)
        # arrays that are not exactly the input take the checked path:
        # lists, other dtypes that convert, read-only and misaligned memory
        np.testing.assert_array_equal(m.run(x.tolist())[0], want)
        ro = x.copy()
        ro.flags.writeable = False
        np.testing.assert_array_equal(m.run(ro)[0], want)
        raw = np.zeros(641, np.int8)
        odd = raw[1:].reshape(1, 640)
        odd[...] = x1
        np.testing.assert_array_equal(m.run(odd)[0], want1)
        # an output view fed back as the input is copied before the run,
        # and that copy stays the input (the view changes with the run)
        np.testing.assert_array_equal(m.run(x)[0], want)
        (out,) = m.run(x, copy=False)
        assert out.shape == (1, 640) and out.dtype == np.int8
        before = out.copy()
        got = m.run(out)[0]
        np.testing.assert_array_equal(got, m.run(before)[0])
        again = m.run(out)[0]
        np.testing.assert_array_equal(m.run()[0], again)


def test_run_with_buffers_that_change_after_the_run(tmp_path_factory: Any) -> None:
    """Any buffer of the right dtype and shape takes the one-call path; one
    that cannot be read any more when a later call needs it is named, and
    nothing crashes."""
    b = built("ad01_int8.tflite", tmp_path_factory, name="ad")
    (x,), (want,) = b.cases[0]
    (x1,), (want1,) = b.cases[1]
    with runtime.load_module(b.so) as m:
        mv = memoryview(bytearray(x.tobytes())).cast("b", [1, 640])
        np.testing.assert_array_equal(m.run(mv)[0], want)
        mv.release()  # the Module holds no export of it
        with pytest.raises(ValueError, match=r"input 'input_1': the memoryview given to "
                                             r"the last run\(\) can no longer be read"):
            m.run()
        # replacing such an input is no error
        mv = memoryview(bytearray(x.tobytes())).cast("b", [1, 640])
        m.run(mv)
        mv.release()
        m.set_input(0, x1)
        np.testing.assert_array_equal(m.run()[0], want1)
        mv = memoryview(bytearray(x.tobytes())).cast("b", [1, 640])
        m.run(mv)
        mv.release()
        np.testing.assert_array_equal(m.run(x1.tolist())[0], want1)
        # named once, and then simply not set
        mv = memoryview(bytearray(x.tobytes())).cast("b", [1, 640])
        m.run(mv)
        mv.release()
        with pytest.raises(ValueError, match="can no longer be read"):
            m.run()
        with pytest.raises(RuntimeError, match=r"input 'input_1' \(0\) is not set"):
            m.run()
        gone = memoryview(bytearray(x.tobytes())).cast("b", [1, 640])
        gone.release()
        with pytest.raises(TypeError, match=r"input 'input_1': expected an array of int8 with "
                                            r"shape \[1, 640\], got memoryview"):
            m.run(gone)
        with pytest.raises(TypeError, match="got NoneType"):
            m.run(None)
        # a bytearray read in place, then resized: read again at the next run
        ba = bytearray(x1.tobytes())
        np.testing.assert_array_equal(m.run(np.frombuffer(ba, np.int8).reshape(1, 640))[0],
                                      want1)
        class Sub(np.ndarray):
            pass
        np.testing.assert_array_equal(m.run(x.view(Sub))[0], want)
        np.testing.assert_array_equal(m.run()[0], want)


def test_the_one_call_path_refuses_another_thread(tmp_path_factory: Any) -> None:
    """Two threads that share one Module, both with run(x): one runs, the
    other gets the in-use error, and no run ever mixes their inputs."""
    b = built("pretrainedResnet_quant.tflite", tmp_path_factory,
              name="pretrainedresnet_quant")
    (xa,), (wa,) = b.cases[0]
    (xb,), (wb,) = b.cases[1]
    refused, wrong = [0], [0]
    start = threading.Barrier(2)
    with runtime.load_module(b.so) as m:
        def loop(x: np.ndarray, want: np.ndarray) -> None:
            # together from the start, and on (at most 30 s) until a run was
            # refused, however fast the model runs
            start.wait()
            deadline = time.monotonic() + 30
            n = 0
            while (n < 40 or refused[0] == 0) and time.monotonic() < deadline:
                n += 1
                try:
                    if not np.array_equal(m.run(x)[0], want):
                        wrong[0] += 1
                except RuntimeError as e:
                    assert "in use by another thread" in str(e)
                    refused[0] += 1

        ts = [threading.Thread(target=loop, args=a) for a in ((xa, wa), (xb, wb))]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
    assert wrong[0] == 0
    assert refused[0] > 0


def test_errors_are_typed(tmp_path_factory: Any, tmp_path: Any) -> None:
    b = built("ad01_int8.tflite", tmp_path_factory, name="ad")
    (x,), _ = b.cases[0]
    with pytest.raises(OSError, match="cannot load"):
        runtime.load_module(str(tmp_path / "missing.so"))
    # a library that is no model library (by its path: a bare name is a
    # file in the current folder, never one on the system's library path)
    with open("/proc/self/maps") as maps:
        libm = next(ln.split()[-1] for ln in maps if "/libm.so" in ln or "/libm-" in ln)
    with pytest.raises(OSError, match="holds no model"):
        runtime.load_module(libm)
    with pytest.raises(OSError, match=r"cannot load 'libm\.so\.6': \./libm\.so\.6"):
        runtime.load_module("libm.so.6")
    with pytest.raises(KeyError, match="no model 'kws'.*'ad'"):
        runtime.load_module(b.so, "kws")
    with pytest.raises(KeyError, match="no model 'nothing_here'"):
        runtime.system_module("nothing_here")
    m = runtime.load_module(b.so)
    with pytest.raises(RuntimeError, match="input 'input_1' \\(0\\) is not set"):
        m.run()
    with pytest.raises(RuntimeError, match="has not run"):
        m.get_output(0)
    with pytest.raises(KeyError, match="no input 'x'"):
        m.set_input("x", x)
    with pytest.raises(KeyError, match="no input 'x'"):
        m.run(x=x)
    with pytest.raises(IndexError, match="no input 3"):
        m.set_input(3, x)
    # an index past int32 is named as given, never as a truncated -1
    with pytest.raises(IndexError, match="no input 2147483648"):
        m.set_input(2**31, x)
    with pytest.raises(IndexError, match="no output 1099511627776"):
        m.get_output(2**40)
    with pytest.raises(IndexError, match="no workspace pool -4294967296"):
        m.set_workspace(-2**32)
    with pytest.raises(ValueError, match="input 'input_1' has shape \\[1, 640\\], got \\[640\\]"):
        m.run(x.reshape(-1))
    with pytest.raises(TypeError, match="input 'input_1' is int8, got float32"):
        m.run(x.astype(np.float32))
    with pytest.raises(ValueError, match="takes 640 bytes, got 3"):
        m.set_input(0, b"abc")
    with pytest.raises(TypeError, match="has 1 inputs"):
        m.run(x, x)
    with pytest.raises(TypeError, match="given twice"):
        m.run(x, input_1=x)
    m.close()
    with pytest.raises(ValueError, match="closed"):
        m.run(x)
    assert "closed" in repr(m)


def _maps() -> str:
    with open("/proc/self/maps") as f:
        return f.read()


def test_an_output_keeps_the_library_loaded(tmp_path_factory: Any, tmp_path: Any) -> None:
    b = built("ad01_int8.tflite", tmp_path_factory, name="ad")
    so = str(tmp_path / "own.so")  # a library of this test's own
    with open(b.so, "rb") as src, open(so, "wb") as dst:
        dst.write(src.read())
    (x,), (want,) = b.cases[0]
    m = runtime.load_module(so)
    assert so in _maps()
    (y,) = m.run(x, copy=False)
    m.close()
    del m
    gc.collect()
    assert so in _maps()  # y views the Module's buffer: still loaded
    np.testing.assert_array_equal(y, want)
    del y
    gc.collect()
    assert so not in _maps()


def test_one_module_one_thread_at_a_time(tmp_path_factory: Any) -> None:
    b = built("pretrainedResnet_quant.tflite", tmp_path_factory,
              name="pretrainedresnet_quant")
    xs, want = b.cases[0]
    run_c = tvmnode.get_global_func("runtime.ModuleRun")
    with runtime.load_module(b.so) as m:
        m.set_input(0, xs[0])
        done = threading.Event()
        timed: List[int] = []
        refused = {"wrapper": 0, "C": 0}
        # The thread keeps the Module busy until the main thread has been
        # refused both ways (however fast the model runs), at most 30 s.
        deadline = time.monotonic() + 30

        def busy() -> None:
            while (not (refused["wrapper"] and refused["C"]) or len(timed) < 3) \
                    and time.monotonic() < deadline:
                try:
                    m.benchmark(number=10, repeat=1)  # in C, the GIL released
                    timed.append(1)
                except RuntimeError as e:  # the main thread got there first
                    assert "in use by another thread" in str(e)
            done.set()

        t = threading.Thread(target=busy)
        t.start()
        while not done.is_set():
            # after a run of its own, the main thread pauses, so that the
            # other one gets the Module rather than being refused itself
            try:
                m.run()
            except RuntimeError as e:
                assert "in use by another thread" in str(e)
                refused["wrapper"] += 1
            else:
                time.sleep(0.001)
            try:
                run_c(m.handle)  # past the wrapper: the C Module's own flag
            except RuntimeError as e:
                assert "in use by another thread" in str(e)
                refused["C"] += 1
            else:
                time.sleep(0.001)
        t.join()
        assert refused["wrapper"] > 0 and refused["C"] > 0, refused
        assert len(timed) >= 3, timed
        np.testing.assert_array_equal(m.run(*xs)[0], want[0])


def test_modules_of_one_library_on_many_threads(tmp_path_factory: Any) -> None:
    b = built("kws_ref_model.tflite", tmp_path_factory, name="kws")
    mods = [runtime.load_module(b.so) for _ in range(4)]
    bad: List[str] = []

    def work(m: runtime.Module, k: int) -> None:
        xs, want = b.cases[k % 2]
        for _ in range(20):
            if not np.array_equal(m.run(*xs)[0], want[0]):
                bad.append(m.name)

    threads = [threading.Thread(target=work, args=(m, k)) for k, m in enumerate(mods)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not bad
    for m in mods:
        m.close()


def _c_paths() -> Dict[str, str]:
    build = os.environ.get("TVMNODE_BUILD_DIR")
    if not build:
        pytest.skip("TVMNODE_BUILD_DIR is not set: no libtvmnode to link")
    from tvmnode._paths import _crt_dir, _include_dir

    inc = _include_dir()
    host = inc if (inc / "tvmnode" / "module.h").exists() else \
        inc.parent.parent / "runtime" / "host" / "include"
    return {"lib": os.path.join(build, "libtvmnode", ".libs"), "inc": str(inc),
            "host": str(host), "crt": str(_crt_dir() / "include")}


SYSTEM_MAIN = r"""
#include <stdio.h>
#include <stdlib.h>
#include <tvmnode/module.h>

static int fail(const char *what) {
  TnObject *e = tn_error_take_raised();
  fprintf(stderr, "%s: %s: %s\n", what, e ? tn_error_kind(e) : "?",
          e ? tn_error_message(e) : "");
  tn_object_release(e);
  return 1;
}

/* argv: (model, input file, output file)... */
int main(int argc, char **argv) {
  if (tn_module_system("nope") != NULL) return 2;
  TnObject *e = tn_error_take_raised();
  printf("%s: %s\n", tn_error_kind(e), tn_error_message(e));
  tn_object_release(e);
  for (int a = 1; a + 2 < argc; a += 3) {
    TnObject *mod = tn_module_system(argv[a]);
    if (mod == NULL) return fail("tn_module_system");
    const TnCrtTensorInfo *in = tn_module_input_info(mod, 0);
    const TnCrtTensorInfo *out = tn_module_output_info(mod, 0);
    char *x = malloc(in->nbytes), *y = malloc(out->nbytes);
    FILE *f = fopen(argv[a + 1], "rb");
    if (!f || fread(x, 1, in->nbytes, f) != in->nbytes) return 3;
    fclose(f);
    if (tn_module_set_input_bytes(mod, 0, x, in->nbytes) ||
        tn_module_run(mod) || tn_module_copy_output(mod, 0, y, out->nbytes))
      return fail(argv[a]);
    f = fopen(argv[a + 2], "wb");
    fwrite(y, 1, out->nbytes, f);
    fclose(f);
    printf("ran %s\n", tn_module_model(mod)->name);
    free(x), free(y);
    tn_object_release(mod);
  }
  return 0;
}
"""


def test_archives_linked_into_a_program_are_found_by_name(tmp_path_factory: Any,
                                                          tmp_path: Any) -> None:
    paths = _c_paths()
    models = [built("kws_ref_model.tflite", tmp_path_factory, name="kws"),
              built("ad01_int8.tflite", tmp_path_factory, name="ad")]
    srcs: List[str] = []
    rt: Dict[str, str] = {}  # one copy of each crt source for both models
    for b in models:
        gen = os.path.join(b.dir, "codegen", "host", "src")
        srcs += [os.path.join(gen, f) for f in sorted(os.listdir(gen)) if f.endswith(".c")]
        rsrc = os.path.join(b.dir, "runtime", "src")
        rt.update({f: os.path.join(rsrc, f) for f in os.listdir(rsrc) if f.endswith(".c")})
    main = tmp_path / "main.c"
    main.write_text(SYSTEM_MAIN)
    exe = str(tmp_path / "prog")
    incs = ["-I" + os.path.join(b.dir, "codegen", "host", "include") for b in models]
    cmd = ["cc", "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-DTVMGEN_SYSTEM_LIB",
           *incs, "-I" + paths["inc"], "-I" + paths["host"], "-I" + paths["crt"],
           str(main), *srcs, *sorted(rt.values()), "-o", exe,
           "-L" + paths["lib"], "-ltvmnode", "-Wl,-rpath," + paths["lib"], "-lm"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    args = []
    for b in models:
        name = b.info["model_name"]
        (x,), _ = b.cases[0]
        x.tofile(str(tmp_path / (name + ".in")))
        args += [name, str(tmp_path / (name + ".in")), str(tmp_path / (name + ".out"))]
    r = subprocess.run([exe, *args], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("KeyError: tn_module_system: no model 'nope'")
    assert "'kws'" in lines[0] and "'ad'" in lines[0]
    assert lines[1:] == ["ran kws", "ran ad"]
    for b in models:
        name, out = b.info["model_name"], b.info["outputs"][0]
        got = np.fromfile(str(tmp_path / (name + ".out")), out["dtype"]).reshape(out["shape"])
        np.testing.assert_array_equal(got, b.cases[0][1][0])


def test_a_loaded_system_library_registers_and_stays(tmp_path_factory: Any,
                                                     tmp_path: Any) -> None:
    """A library built with -DTVMGEN_SYSTEM_LIB (and linked to libtvmnode)
    registers its model when loaded; it is pinned, so the system library
    never points into an unloaded one."""
    paths = _c_paths()
    b = built("ad01_int8.tflite", tmp_path_factory, name="pinned")
    so = codegen.build_library(b.dir, str(tmp_path / "pinned.so"), cflags=(
        "-O2", "-DTVMGEN_SYSTEM_LIB", "-Wl,--no-as-needed", "-L" + paths["lib"],
        "-ltvmnode", "-Wl,-rpath," + paths["lib"]))
    with runtime.load_module(so):
        pass
    gc.collect()
    assert so in _maps()
    with runtime.system_module("pinned") as m:
        (x,), (want,) = b.cases[0]
        np.testing.assert_array_equal(m.run(x)[0], want)


def test_cli_compile_shared_and_build(tmp_path: Any, capsys: Any) -> None:
    path = model_path("ad01_int8.tflite")
    out, so = str(tmp_path / "ad"), str(tmp_path / "ad.so")
    assert cli.main(["compile", path, "--name", "ad", "-o", out, "--shared", so]) == 0
    assert "wrote %s" % so in capsys.readouterr().out
    tar, so2 = str(tmp_path / "ad.tar"), str(tmp_path / "ad2.so")
    assert cli.main(["compile", path, "--name", "ad", "-o", tar]) == 0
    assert cli.main(["build", tar, "-o", so2, "--cflags", "-O1 -g"]) == 0
    x = inputs_for([{"dtype": "int8", "shape": [1, 640]}])[0]
    with runtime.load_module(so) as a, runtime.load_module(so2) as b:
        np.testing.assert_array_equal(a.run(x)[0], b.run(x)[0])
    capsys.readouterr()
    assert cli.main(["build", str(tmp_path / "nothing"), "-o", so2]) == 1
    assert cli.main(["build", out, "-o", so2, "--cc", "false"]) == 1
    assert "build_library" in capsys.readouterr().err


# ---- parameter files ----------------------------------------------------------------

save_c = tvmnode.get_global_func("runtime.SaveParams")
load_c = tvmnode.get_global_func("runtime.LoadParams")

PARAMS: Dict[str, np.ndarray] = {
    "w": np.arange(-12, 12, dtype=np.int8).reshape(2, 3, 4),
    "b16": np.array([-300, 7], np.int16), "b32": np.array([1 << 30], np.int32),
    "i64": np.array([[-(1 << 40)]], np.int64), "u8": np.array([0, 255], np.uint8),
    "f": np.linspace(-1, 1, 7, dtype=np.float32), "d": np.array([np.pi, -0.0]),
    "mask": np.array([True, False, True]), "empty": np.zeros((0, 3), np.float32),
    "const7": np.ones((2, 2))[:, 1:],  # strided: written in C order
    "ünïcode": np.array([1], np.int8),
}


def c_map(params: Dict[str, np.ndarray]) -> Any:
    return {k: tvmnode.from_dlpack(v) for k, v in params.items()}


def test_params_bytes_are_the_same_in_c_and_python() -> None:
    blob = codegen.save_params(PARAMS)
    assert save_c(c_map(PARAMS)) == blob
    back = load_c(blob)
    assert list(back.keys()) == list(PARAMS)
    for k, v in back.items():
        got = np.from_dlpack(v)
        assert got.dtype == PARAMS[k].dtype and got.shape == PARAMS[k].shape
        np.testing.assert_array_equal(got, PARAMS[k])
    del back, got, v
    py = codegen.load_params(save_c(c_map(PARAMS)))
    for k in PARAMS:
        np.testing.assert_array_equal(py[k], PARAMS[k])


def test_params_scalars_are_the_same_in_c_and_python() -> None:
    scalar = {"s": np.array(7, np.int32)}
    same = save_c(c_map(scalar)) == codegen.save_params(scalar)
    assert same


def test_an_archive_parameter_file_loads_in_c(tmp_path_factory: Any) -> None:
    b = built("ad01_int8.tflite", tmp_path_factory, name="ad")
    with open(os.path.join(b.dir, "parameters", "ad.params"), "rb") as f:
        blob = f.read()
    py = codegen.load_params(blob)
    back = load_c(blob)
    assert list(back.keys()) == list(py) and len(py) > 3
    for k, v in back.items():
        np.testing.assert_array_equal(np.from_dlpack(v), py[k])
    assert save_c(back) == blob
    del back, v


def test_damaged_parameter_files_are_refused_by_both() -> None:
    blob = codegen.save_params(PARAMS)
    for n in list(range(0, 40)) + list(range(40, len(blob), 17)):
        with pytest.raises(ValueError, match="tn_params_load"):
            load_c(blob[:n])
        with pytest.raises(ValueError):
            codegen.load_params(blob[:n])
    rng = np.random.default_rng(1)
    for i in rng.integers(0, len(blob), 60):
        bad = bytearray(blob)
        bad[i] ^= 1 << int(rng.integers(0, 8))
        with pytest.raises(ValueError, match="bad magic|checksum mismatch"):
            load_c(bytes(bad))
        with pytest.raises(ValueError):
            codegen.load_params(bytes(bad))
    with pytest.raises(TypeError, match="dtype uint16"):
        save_c({"h": tvmnode.from_dlpack(np.zeros(2, np.uint16))})
