"""Streaming models: TFLite resource variables (VAR_HANDLE, READ_VARIABLE,
ASSIGN_VARIABLE, CALL_ONCE with its init subgraph) become states of the
module; the executor and the generated C keep them between runs and
reset them. Each step's outputs are compared with TFLite Micro, which
keeps its variables across invoke() too: bit for bit for int8, within
1e-6 of the output's range for float32."""
from __future__ import annotations

import importlib
import os
from typing import Any, Callable, Dict, List, Sequence, Tuple

import numpy as np
import pytest

pytest.importorskip("tflite")

from tflite_build import (GraphSpec, OpSpec, TensorSpec, builtin_options,  # noqa: E402
                          graph_model, var_handle_options)
from tvmnode import frontend, transform  # noqa: E402
from tvmnode.runtime import Executor  # noqa: E402

RNG = np.random.default_rng(27)


def call_once(init: int) -> Any:
    return builtin_options("CallOnceOptions", initSubgraphIndex=init)


def init_graph(values: Sequence[Any]) -> GraphSpec:
    """A CALL_ONCE init subgraph assigning constants to variables:
    values is [(shared_name, TensorSpec with data)]."""
    tensors: List[TensorSpec] = []
    ops: List[OpSpec] = []
    for name, spec in values:
        tensors.append(TensorSpec((), "resource", name="init_" + name))
        tensors.append(spec)
        h, c = len(tensors) - 2, len(tensors) - 1
        ops.append(OpSpec("VAR_HANDLE", [], [h], var_handle_options(name)))
        ops.append(OpSpec("ASSIGN_VARIABLE", [h, c], []))
    return GraphSpec(tensors, [], [], ops, name="init")


def int8_model() -> bytes:
    """acc += x (rescaled, int8 ADD); prev is a one-step delay of x. Outputs
    the new accumulator and the previous input."""
    qx, qa = (0.05, 3), (0.1, -2)
    t = [TensorSpec((1, 8), "int8", quant=qx, name="x"),            # 0
         TensorSpec((), "resource", name="h_acc"),                   # 1
         TensorSpec((), "resource", name="h_prev"),                  # 2
         TensorSpec((1, 8), "int8", quant=qa, name="acc"),           # 3
         TensorSpec((1, 8), "int8", quant=qx, name="prev"),          # 4
         TensorSpec((1, 8), "int8", quant=qa, name="sum")]           # 5
    ops = [OpSpec("CALL_ONCE", [], [], call_once(1)),
           OpSpec("VAR_HANDLE", [], [1], var_handle_options("acc")),
           OpSpec("VAR_HANDLE", [], [2], var_handle_options("prev")),
           OpSpec("READ_VARIABLE", [1], [3]),
           OpSpec("READ_VARIABLE", [2], [4]),
           OpSpec("ADD", [0, 3], [5], builtin_options("AddOptions")),
           OpSpec("ASSIGN_VARIABLE", [1, 5], []),
           OpSpec("ASSIGN_VARIABLE", [2, 0], [])]
    main = GraphSpec(t, [0], [5, 4], ops, name="main")
    init = init_graph([
        ("acc", TensorSpec((1, 8), "int8", quant=qa,
                           data=RNG.integers(-20, 20, (1, 8)).astype(np.int8))),
        ("prev", TensorSpec((1, 8), "int8", quant=qx,
                            data=RNG.integers(-128, 127, (1, 8)).astype(np.int8)))])
    return graph_model([main, init])


def float_model() -> bytes:
    """h = 0.5 * h + x; outputs h and the variable read back after the
    assignment (the new value, within the same run)."""
    t = [TensorSpec((2, 3), "float32", name="x"),                      # 0
         TensorSpec((), "resource", name="h_state"),                   # 1
         TensorSpec((2, 3), "float32", name="old"),                    # 2
         TensorSpec((1,), "float32", data=np.array([0.5], np.float32), name="decay"),  # 3
         TensorSpec((2, 3), "float32", name="decayed"),                # 4
         TensorSpec((2, 3), "float32", name="new"),                    # 5
         TensorSpec((2, 3), "float32", name="again")]                  # 6
    ops = [OpSpec("CALL_ONCE", [], [], call_once(1)),
           OpSpec("VAR_HANDLE", [], [1], var_handle_options("h")),
           OpSpec("READ_VARIABLE", [1], [2]),
           OpSpec("MUL", [2, 3], [4], builtin_options("MulOptions")),
           OpSpec("ADD", [4, 0], [5], builtin_options("AddOptions")),
           OpSpec("ASSIGN_VARIABLE", [1, 5], []),
           OpSpec("READ_VARIABLE", [1], [6])]
    main = GraphSpec(t, [0], [5, 6], ops, name="main")
    init = init_graph([("h", TensorSpec((2, 3), "float32",
                                        data=RNG.standard_normal((2, 3)).astype(np.float32)))])
    return graph_model([main, init])


MODELS: Dict[str, Tuple[Callable[[], bytes], Callable[[], np.ndarray]]] = {
    "int8": (int8_model, lambda: RNG.integers(-128, 127, (1, 8)).astype(np.int8)),
    "float32": (float_model, lambda: RNG.standard_normal((2, 3)).astype(np.float32))}


def tflm_steps(model: bytes, xs: Sequence[np.ndarray], nout: int,
               reset_at: int = -1) -> List[List[np.ndarray]]:
    """Each step's outputs from one TFLite Micro interpreter (its variables
    persist across invoke); a fresh interpreter from step `reset_at` on.
    (TFLite Micro's own reset() sets variables to their zero point and does
    not run CALL_ONCE again; a reset here gives the initial values, as a
    freshly loaded model has them, so the comparison is with a new
    interpreter.)"""
    runtime: Any = importlib.import_module("tflite_micro.python.tflite_micro.runtime")
    interp = runtime.Interpreter.from_bytes(model)
    out = []
    for k, x in enumerate(xs):
        if k == reset_at:
            interp = runtime.Interpreter.from_bytes(model)
        interp.set_input(x, 0)
        interp.invoke()
        out.append([np.array(interp.get_output(i), copy=True) for i in range(nout)])
    return out


def ours_steps(run: Callable[[np.ndarray], Sequence[np.ndarray]], reset: Callable[[], None],
               xs: Sequence[np.ndarray], reset_at: int = -1) -> List[List[np.ndarray]]:
    out = []
    for k, x in enumerate(xs):
        if k == reset_at:
            reset()
        out.append([np.asarray(y) for y in run(x)])
    return out


def same(got: List[List[np.ndarray]], want: List[List[np.ndarray]]) -> None:
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want)):
        assert len(g) == len(w)
        for i, (a, b) in enumerate(zip(g, w)):
            assert a.shape == b.shape and a.dtype == b.dtype, (k, i)
            if a.dtype == np.float32:
                span = max(float(b.max() - b.min()), 1e-30)
                assert float(np.abs(a - b).max()) <= 1e-6 * span + 1e-7, (k, i)
            else:
                np.testing.assert_array_equal(a, b, err_msg="step %d output %d" % (k, i))


def tuple_of(y: Any) -> Sequence[np.ndarray]:
    return y if isinstance(y, tuple) else (y,)


@pytest.mark.parametrize("dtype", sorted(MODELS))
def test_import_states(dtype: str) -> None:
    mod = frontend.from_tflite(MODELS[dtype][0]())
    states = mod.attrs["states"]
    names = [str(s["name"]) for s in states]
    assert names == (["acc", "prev"] if dtype == "int8" else ["h"])
    params = mod["main"].params
    assert len(params) == 1 + len(states)
    for s in states:
        assert int(s["param"]) >= 1 and int(s["result"]) >= 2
        assert str(s["dtype"]) == dtype
    assert len(mod.attrs["inputs"]) == 1 and len(mod.attrs["outputs"]) == 2


@pytest.mark.parametrize("fuse", [False, True])
@pytest.mark.parametrize("dtype", sorted(MODELS))
def test_executor_matches_tflite_micro(dtype: str, fuse: bool) -> None:
    build, gen = MODELS[dtype]
    model = build()
    mod = frontend.from_tflite(model)
    if fuse:
        mod = transform.FuseOps()(transform.FoldConstant()(mod))
    ex = Executor(mod)
    assert ex.stateful and len(ex.inputs) == 1 and len(ex.outputs) == 2
    xs = [gen() for _ in range(6)]
    want = tflm_steps(model, xs, 2)
    got = ours_steps(lambda x: tuple_of(ex(x)), ex.reset, xs)
    same(got, want)
    # the state moved: a later step differs from the first on the same input
    assert any(not np.array_equal(a[0], b[0]) for a, b in zip(got[1:], got[:-1]))


@pytest.mark.parametrize("dtype", sorted(MODELS))
def test_executor_reset(dtype: str) -> None:
    build, gen = MODELS[dtype]
    model = build()
    ex = Executor(frontend.from_tflite(model))
    xs = [gen() for _ in range(5)]
    first = ours_steps(lambda x: tuple_of(ex(x)), ex.reset, xs)
    ex.reset()
    again = ours_steps(lambda x: tuple_of(ex(x)), ex.reset, xs)
    same(again, first)
    want = tflm_steps(model, xs, 2, reset_at=3)
    ex.reset()
    got = ours_steps(lambda x: tuple_of(ex(x)), ex.reset, xs, reset_at=3)
    same(got, want)


def test_init_must_assign_constants() -> None:
    t = [TensorSpec((1, 4), "float32", name="x"), TensorSpec((), "resource"),
         TensorSpec((1, 4), "float32", name="old"), TensorSpec((1, 4), "float32", name="y")]
    main = GraphSpec(t, [0], [3], [
        OpSpec("CALL_ONCE", [], [], call_once(1)),
        OpSpec("VAR_HANDLE", [], [1], var_handle_options("v")),
        OpSpec("READ_VARIABLE", [1], [2]),
        OpSpec("ADD", [0, 2], [3], builtin_options("AddOptions")),
        OpSpec("ASSIGN_VARIABLE", [1, 3], [])])
    it = [TensorSpec((), "resource"), TensorSpec((1, 4), "float32", data=np.ones((1, 4))),
          TensorSpec((1, 4), "float32")]
    init = GraphSpec(it, [], [], [
        OpSpec("VAR_HANDLE", [], [0], var_handle_options("v")),
        OpSpec("RELU", [1], [2]),
        OpSpec("ASSIGN_VARIABLE", [0, 2], [])])
    with pytest.raises(frontend.ModelImportError, match="operator 1 RELU: an init subgraph may only assign "
                       "constants"):
        frontend.from_tflite(graph_model([main, init]))


def test_variable_without_init_starts_at_zero() -> None:
    t = [TensorSpec((1, 4), "float32", name="x"), TensorSpec((), "resource"),
         TensorSpec((1, 4), "float32", name="old"), TensorSpec((1, 4), "float32", name="y")]
    main = GraphSpec(t, [0], [3], [
        OpSpec("VAR_HANDLE", [], [1], var_handle_options("v")),
        OpSpec("READ_VARIABLE", [1], [2]),
        OpSpec("ADD", [0, 2], [3], builtin_options("AddOptions")),
        OpSpec("ASSIGN_VARIABLE", [1, 3], [])])
    ex = Executor(frontend.from_tflite(graph_model([main])))
    x = np.arange(4, dtype=np.float32).reshape(1, 4)
    np.testing.assert_array_equal(ex(x), x)
    np.testing.assert_array_equal(ex(x), 2 * x)
    ex.reset()
    np.testing.assert_array_equal(ex(x), x)


def test_stateless_models_have_no_states() -> None:
    t = [TensorSpec((1, 4), "float32", name="x"), TensorSpec((1, 4), "float32", name="y")]
    mod = frontend.from_tflite(graph_model([GraphSpec(t, [0], [1], [OpSpec("RELU", [0], [1])])]))
    assert mod.attrs is None or "states" not in mod.attrs
    assert not Executor(mod).stateful


# ---- generated C --------------------------------------------------------------


def host_model(mod: Any, name: str, tmp: str, **opts: Any) -> Any:
    from aot_util import HostModel
    from tvmnode import codegen

    return HostModel(codegen.compile(mod, name=name, **opts), tmp)


def state_pool(hm: Any) -> np.ndarray:
    from aot_util import aligned

    (pool,) = [p for p in hm.arch.info["memory"]["pools"] if p["kind"] == "state"]
    return aligned(pool["size_bytes"], hm.align)


@pytest.mark.parametrize("dtype", sorted(MODELS))
def test_generated_c_matches_tflite_micro(dtype: str, tmp_path: Any) -> None:
    import ctypes

    build, gen = MODELS[dtype]
    model = build()
    hm = host_model(frontend.from_tflite(model), "st_" + dtype, str(tmp_path))
    header = open(os.path.join(hm.dir, "codegen", "host", "include",
                               "tvmgen_st_%s.h" % dtype)).read()
    assert "TVMGEN_ST_%s_STATE_POOL_SIZE" % dtype.upper() in header
    assert "tvmgen_st_%s_reset(void *state_pool)" % dtype in header
    assert len(hm.inputs) == 1 and len(hm.outputs) == 2
    pool = state_pool(hm)
    reset = getattr(hm.lib, "tvmgen_st_%s_reset" % dtype)
    reset.restype = ctypes.c_int32
    xs = [gen() for _ in range(6)]
    want = tflm_steps(model, xs, 2, reset_at=4)

    def do_reset() -> None:
        assert reset(ctypes.c_void_p(pool.ctypes.data)) == 0

    do_reset()
    got = ours_steps(lambda x: hm.run(x, state=pool), do_reset, xs, reset_at=4)
    same(got, want)
    # a missing or misaligned state pool is an error code, not a crash
    assert reset(None) == 9  # TN_CRT_NULL_POINTER
    assert reset(ctypes.c_void_p(pool.ctypes.data + 1)) == 8  # TN_CRT_POOL_MISALIGNED


def swap_model() -> bytes:
    """Three variables: a and b swap their values each run, c is a
    one-step delay of x; outputs the old a and the old c, and x + old b."""
    t = [TensorSpec((1, 4), "float32", name="x")]                   # 0
    t += [TensorSpec((), "resource", name="h_" + v) for v in "abc"]  # 1 2 3
    t += [TensorSpec((1, 4), "float32", name="old_" + v) for v in "abc"]  # 4 5 6
    t += [TensorSpec((1, 4), "float32", name="sum")]                # 7
    ops = [OpSpec("CALL_ONCE", [], [], call_once(1))]
    ops += [OpSpec("VAR_HANDLE", [], [1 + i], var_handle_options(v)) for i, v in enumerate("abc")]
    ops += [OpSpec("READ_VARIABLE", [1 + i], [4 + i]) for i in range(3)]
    ops += [OpSpec("ADD", [0, 5], [7], builtin_options("AddOptions")),
            OpSpec("ASSIGN_VARIABLE", [1, 5], []),
            OpSpec("ASSIGN_VARIABLE", [2, 4], []),
            OpSpec("ASSIGN_VARIABLE", [3, 0], [])]
    main = GraphSpec(t, [0], [4, 6, 7], ops, name="main")
    init = init_graph([(v, TensorSpec((1, 4), "float32", data=np.full(
        (1, 4), k + 1, np.float32))) for k, v in enumerate("abc")])
    return graph_model([main, init])


@pytest.mark.parametrize("io_in_pool", [False, True])
def test_generated_c_swaps_and_delays(io_in_pool: bool, tmp_path: Any) -> None:
    """New values that are other states' current values (a swap: a cycle of
    copies at the end of the run, and a delay line) come out right from
    the one-copy state pool, with the inputs and outputs in the workspace
    or not."""
    model = swap_model()
    name = "sw%d" % io_in_pool
    hm = host_model(frontend.from_tflite(model), name, str(tmp_path), io_in_pool=io_in_pool)
    pool = state_pool(hm)
    # the states (3 x 16 bytes, aligned) and room for one to break the cycle
    assert pool.size == 4 * max(16, hm.align)
    reset = getattr(hm.lib, "tvmgen_%s_reset" % name)
    xs = [RNG.standard_normal((1, 4)).astype(np.float32) for _ in range(5)]
    want = tflm_steps(model, xs, 3)
    assert reset(ctypes_pointer(pool)) == 0
    got = ours_steps(lambda x: hm.run(x, state=pool), lambda: None, xs)
    same(got, want)
    assert [float(w[0][0, 0]) for w in want[:3]] == [1.0, 2.0, 1.0]  # a swaps


def ctypes_pointer(a: np.ndarray) -> Any:
    import ctypes

    return ctypes.c_void_p(a.ctypes.data)


def test_stateless_c_has_no_state(tmp_path: Any) -> None:
    t = [TensorSpec((1, 4), "float32", name="x"), TensorSpec((1, 4), "float32", name="y")]
    mod = frontend.from_tflite(graph_model([GraphSpec(t, [0], [1], [OpSpec("RELU", [0], [1])])]))
    from tvmnode import codegen

    files = codegen.compile(mod, name="plain").files
    text = "".join(str(v) for v in files.values())
    assert "state" not in text.lower()


RUST_MAIN = """#[path = %s]
#[allow(dead_code)]
mod m;
use std::io::{Read, Write};

// Steps over the inputs on stdin, a reset before step RESET_AT, each
// step's outputs to stdout: the state lives in one StatePool throughout.
const RESET_AT: usize = %d;

fn main() {
    let mut data = Vec::new();
    std::io::stdin().read_to_end(&mut data).unwrap();
    let mut state = m::StatePool::new();
    m::reset(&mut state).unwrap();
    let mut out = std::io::stdout();
    for (k, chunk) in data.chunks(m::INPUT_X_SIZE).enumerate() {
        if k == RESET_AT {
            m::reset(&mut state).unwrap();
        }
        let mut x = [0i8; m::INPUT_X_LEN];
        for (d, s) in x.iter_mut().zip(chunk) {
            *d = *s as i8;
        }
        let mut sum = [0i8; m::OUTPUT_SUM_LEN];
        let mut prev = [0i8; m::OUTPUT_PREV_LEN];
        let mut ins = m::Inputs::new(&mut x);
        let mut outs = m::Outputs::new(&mut sum, &mut prev);
        m::run(&mut ins, &mut outs, &mut state).unwrap();
        out.write_all(&sum.map(|v| v as u8)).unwrap();
        out.write_all(&prev.map(|v| v as u8)).unwrap();
    }
}
"""


def test_rust_interface_streams(tmp_path: Any) -> None:
    import json
    import shutil
    import subprocess

    if shutil.which("rustc") is None:
        pytest.skip("rustc is not installed")
    model = int8_model()
    hm = host_model(frontend.from_tflite(model), "st_rs", str(tmp_path), interface="c,rust")
    rs = os.path.join(hm.dir, "codegen", "host", "src", "tvmgen_st_rs.rs")
    text = open(rs).read()
    assert "pub type StatePool = Pool<STATE_POOL_SIZE>;" in text
    assert "pub fn reset(state_pool: &mut StatePool)" in text
    main = str(tmp_path / "main.rs")
    with open(main, "w") as f:
        f.write(RUST_MAIN % (json.dumps(rs), 4))
    exe = str(tmp_path / "stream")
    libdir = os.path.dirname(hm.so)
    libname = os.path.basename(hm.so)[3:-3]
    p = subprocess.run(["rustc", "--edition", "2021", "-O", "-o", exe, main, "-L", libdir,
                        "-l", "dylib=" + libname], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-4000:]
    xs = [RNG.integers(-128, 127, (1, 8)).astype(np.int8) for _ in range(6)]
    p2 = subprocess.run([exe], input=b"".join(x.tobytes() for x in xs), capture_output=True,
                        timeout=120, env=dict(os.environ, LD_LIBRARY_PATH=libdir))
    assert p2.returncode == 0, p2.stderr[-2000:]
    raw = np.frombuffer(p2.stdout, np.int8).reshape(len(xs), 2, 1, 8)
    got = [[raw[k, 0], raw[k, 1]] for k in range(len(xs))]
    same(got, tflm_steps(model, xs, 2, reset_at=4))


def test_info_names_the_model_stateful(tmp_path: Any, capsys: Any) -> None:
    from tvmnode import cli

    path = str(tmp_path / "acc.tflite")
    with open(path, "wb") as f:
        f.write(int8_model())
    assert cli.main(["info", path]) == 0
    out = capsys.readouterr().out
    assert "stateful     2 states kept between runs, 16 bytes: acc, prev" in out


@pytest.mark.parametrize("dtype", sorted(MODELS))
def test_host_module_streams(dtype: str, tmp_path: Any) -> None:
    """A compiled streaming model as a tvmnode.runtime.Module: it owns the
    state pool, starts at the initial values, every run advances the
    state, reset() starts over; each step equals TFLite Micro's."""
    from tvmnode import codegen, runtime

    build, gen = MODELS[dtype]
    model = build()
    arch = codegen.compile(frontend.from_tflite(model), name="st_mod")
    assert arch.state_bytes > 0
    so = codegen.build_library(arch.export(str(tmp_path / "st_mod")), str(tmp_path / "st.so"))
    xs = [gen() for _ in range(6)]
    want = tflm_steps(model, xs, 2, reset_at=4)
    with runtime.load_module(so) as m:
        assert m.stateful and m.state_bytes == arch.state_bytes
        got = ours_steps(lambda x: m.run(x), m.reset, xs, reset_at=4)
        same(got, want)
        # the other ways in advance the same state: set_input + run by name
        m.reset()
        m.set_input(0, xs[0])
        first = m.run(copy=True)
        m.reset()
        assert all(np.array_equal(a, b) for a, b in zip(m.run(xs[0]), first))
    # a stateless model has nothing to reset
    t = [TensorSpec((1, 4), "float32", name="x"), TensorSpec((1, 4), "float32", name="y")]
    plain = codegen.compile(frontend.from_tflite(graph_model(
        [GraphSpec(t, [0], [1], [OpSpec("RELU", [0], [1])])])), name="plain")
    assert plain.state_bytes == 0
    so2 = codegen.build_library(plain.export(str(tmp_path / "plain")), str(tmp_path / "p.so"))
    with runtime.load_module(so2) as m2:
        assert not m2.stateful and m2.state_bytes == 0
        m2.reset()
        x = np.array([[-1, 2, -3, 4]], np.float32)
        np.testing.assert_array_equal(m2.run(x)[0], np.maximum(x, 0))


def test_check_compiles_stateful_models(tmp_path: Any) -> None:
    """tvmnode check compiles a streaming model too: outputs of the
    generated C equal the executor's, RAM counts the state pool."""
    from tvmnode import cli

    path = str(tmp_path / "acc.tflite")
    with open(path, "wb") as f:
        f.write(int8_model())
    res = cli.check_model(path, str(tmp_path / "res.json"))
    assert res["stateful"] and res["run"] and res["match"], res
    assert res["compile"] is True and res["c_equal"] is True, res
    assert res["state_bytes"] > 0
    assert res["ram_bytes"] >= res["workspace_bytes"] + res["state_bytes"]


def accumulator(late_read: bool) -> Any:
    """main(x, s) -> (y, tanh(s + x)) with s a state: y reads only the new value
    (so the new value may be computed over the current one in the state
    pool), or with late_read also the current value after the new one is
    made (so it may not: the new value is planned apart and copied)."""
    from tvmnode import ir

    x = ir.var("x", shape=(1, 8), dtype="float32")
    s = ir.var("s", shape=(1, 8), dtype="float32")
    new = ir.op.tanh(ir.op.add(s, x))
    y = ir.op.multiply(new, s) if late_read else ir.op.negative(new)
    mod = ir.IRModule.from_expr(ir.Function([x, s], ir.Tuple([y, new])))
    return mod.with_attr("states", [{"param": 1, "result": 1, "name": "acc",
                                     "init": [0.5] * 8}])


@pytest.mark.parametrize("late_read", [False, True])
def test_generated_c_updates_a_state_in_place_when_nothing_reads_it_later(
        late_read: bool, tmp_path: Any) -> None:
    name = "acc%d" % late_read
    hm = host_model(accumulator(late_read), name, str(tmp_path))
    src = "".join(v for k, v in hm.arch.files.items() if k.endswith("_lib1.c"))
    copies = "TVMGEN_MEMCPY(sp + 0" in src
    assert copies == late_read
    pool = state_pool(hm)
    reset = getattr(hm.lib, "tvmgen_%s_reset" % name)
    assert reset(ctypes_pointer(pool)) == 0
    s = np.full((1, 8), 0.5, np.float32)
    for _ in range(4):
        x = RNG.standard_normal((1, 8)).astype(np.float32)
        new = np.tanh(s + x)
        want = new * s if late_read else -new
        got = hm.run(x, state=pool)
        got = got[0] if isinstance(got, (list, tuple)) else got
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6, atol=1e-6)
        s = np.asarray(new, np.float32)
