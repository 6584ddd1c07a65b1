"""SVDF, one operator per model, over several runs against TFLite Micro
(whose variable tensors keep the state across invoke): int8 with int16 or
int8 state bit for bit, float32 within 1e-6 of the output's range;
through the executor (unfused and fused, with a reset) and the generated
C with its state pool."""
from __future__ import annotations

import re
from typing import Any, Callable, List, Optional, Tuple

import numpy as np
import pytest

pytest.importorskip("tflite")
pytest.importorskip("tflite_micro")

from tflite_build import GraphSpec, OpSpec, TensorSpec, builtin_options, graph_model  # noqa: E402
from test_stateful import host_model, ours_steps, same, state_pool, tflm_steps  # noqa: E402
from tvmnode import frontend, transform  # noqa: E402
from tvmnode.runtime import Executor  # noqa: E402

RNG = np.random.default_rng(31)


def svdf_model(dtype: str, batch: int, n_in: int, units: int, rank: int, memory: int,
               act: int = 0, bias: str = "random", state: str = "int16", seed: int = 0) -> bytes:
    """x [batch, n_in] -> SVDF -> y [batch, units]; the state a variable
    tensor [batch, memory * filters] that is no graph input. bias "random",
    "zero" or "none" (the same weights for the same seed)."""
    rng = np.random.default_rng(seed)
    filters = units * rank
    if dtype == "float32":
        x = TensorSpec((batch, n_in), "float32", name="x")
        wf = TensorSpec((filters, n_in), "float32", name="wf",
                        data=rng.standard_normal((filters, n_in)).astype(np.float32))
        wt = TensorSpec((filters, memory), "float32", name="wt",
                        data=rng.standard_normal((filters, memory)).astype(np.float32))
        b: Optional[TensorSpec] = TensorSpec((units,), "float32", name="b",
                                             data=rng.standard_normal(units).astype(np.float32))
        st = TensorSpec((batch, memory * filters), "float32", name="state", is_variable=True)
        y = TensorSpec((batch, units), "float32", name="y")
    else:
        wide = state == "int16"
        # an int8 state's scale keeps the features within [-78, 127] before
        # its zero point -50 is added: TFLite Micro releases differ on
        # features beyond (older ones add the zero point after the clamp,
        # and wrap)
        sx, swf, sst, swt, sy = 0.03, 0.0071, 0.0123 if wide else 0.3, 0.00047, 0.021
        lim = 32768 if wide else 128
        x = TensorSpec((batch, n_in), "int8", quant=(sx, 5), name="x")
        wf = TensorSpec((filters, n_in), "int8", quant=(swf, 0), name="wf",
                        data=rng.integers(-128, 128, (filters, n_in)).astype(np.int8))
        wt = TensorSpec((filters, memory), state, quant=(swt, 0), name="wt",
                        data=rng.integers(-lim, lim, (filters, memory)).astype(state))
        b = TensorSpec((units,), "int32", quant=(float(np.float32(sst) * np.float32(swt)), 0),
                       name="b", data=rng.integers(-20000, 20000, units).astype(np.int32))
        # an int8 state may have a zero point (an int16 one has none)
        st = TensorSpec((batch, memory * filters), state, quant=(sst, 0 if wide else -50),
                        name="state", is_variable=True)
        y = TensorSpec((batch, units), "int8", quant=(sy, -4), name="y")
    assert b is not None and b.data is not None
    if bias == "zero":
        b.data = np.zeros_like(b.data)
    tensors = [x, wf, wt, st, y] + ([b] if bias != "none" else [])
    ins = [0, 1, 2, 5 if bias != "none" else -1, 3]
    graph = GraphSpec(tensors, [0], [4], [OpSpec("SVDF", ins, [4], builtin_options(
        "SVDFOptions", rank=rank, fusedActivationFunction=act))], name="main")
    return graph_model([graph], description="tvmnode tests: SVDF")


def inputs(dtype: str, batch: int, n_in: int, steps: int) -> List[np.ndarray]:
    if dtype == "float32":
        return [RNG.standard_normal((batch, n_in)).astype(np.float32) for _ in range(steps)]
    return [RNG.integers(-128, 128, (batch, n_in)).astype(np.int8) for _ in range(steps)]


# (dtype, state, batch, inputs, units, rank, memory, activation, bias)
CASES: List[Tuple[str, str, int, int, int, int, int, int, bool]] = [
    ("int8", "int16", 1, 16, 4, 1, 5, 0, True),
    ("int8", "int16", 2, 7, 3, 2, 4, 1, True),
    ("int8", "int16", 1, 9, 5, 3, 1, 0, False),
    ("int8", "int8", 2, 12, 4, 2, 3, 0, True),
    ("float32", "float32", 1, 10, 4, 1, 6, 0, True),
    ("float32", "float32", 2, 5, 3, 2, 3, 1, True),
    ("float32", "float32", 1, 6, 2, 2, 1, 3, False),
]


def ids(c: Tuple[Any, ...]) -> str:
    return "%s-%s-b%d-i%d-u%d-r%d-m%d-a%d%s" % (c[:8] + ("" if c[8] else "-nobias",))


def build(case: Tuple[Any, ...]) -> Tuple[bytes, bytes, List[np.ndarray]]:
    """The model, the one TFLite Micro runs as its reference (TFLite Micro
    needs SVDF's bias: without one, the same model with a zero bias) and
    the inputs of each run."""
    dtype, state, batch, n_in, units, rank, memory, act, bias = case
    seed = int(RNG.integers(1 << 30))
    model = svdf_model(dtype, batch, n_in, units, rank, memory, act,
                       "random" if bias else "none", state, seed)
    ref = model if bias else svdf_model(dtype, batch, n_in, units, rank, memory, act, "zero",
                                        state, seed)
    return model, ref, inputs(dtype, batch, n_in, 7)


def steps(run: Callable[[np.ndarray], Any], reset: Callable[[], None], xs: List[np.ndarray],
          reset_at: int = -1) -> List[List[np.ndarray]]:
    return ours_steps(lambda x: (run(x),), reset, xs, reset_at)


@pytest.mark.parametrize("fuse", [False, True])
@pytest.mark.parametrize("case", CASES, ids=ids)
def test_svdf_executor_matches_tflite_micro(case: Tuple[Any, ...], fuse: bool) -> None:
    model, ref, xs = build(case)
    mod = frontend.from_tflite(model)
    states = mod.attrs["states"]
    assert [str(s["name"]) for s in states] == ["tensor:state"]
    assert str(states[0]["dtype"]) == case[1]
    if fuse:
        mod = transform.FuseOps()(transform.FoldConstant()(mod))
    ex = Executor(mod)
    assert ex.stateful and len(ex.inputs) == 1 and len(ex.outputs) == 1
    want = tflm_steps(ref, xs, 1, reset_at=5)
    got = steps(ex, ex.reset, xs, reset_at=5)
    same(got, want)
    # the state is used: the same input twice gives different outputs
    ex.reset()
    a, b2 = np.asarray(ex(xs[0])), np.asarray(ex(xs[0]))
    assert case[6] == 1 or not np.array_equal(a, b2)


@pytest.mark.parametrize("case", [CASES[1], CASES[3], CASES[5]], ids=ids)
def test_svdf_generated_c_matches_tflite_micro(case: Tuple[Any, ...], tmp_path: Any) -> None:
    import ctypes

    model, ref, xs = build(case)
    name = "svdf_" + case[1]
    hm = host_model(frontend.from_tflite(model), name, str(tmp_path))
    # the state is updated in place in the pool: nothing is copied at the
    # end of a run
    src = "".join(v for k, v in hm.arch.files.items() if k.endswith("_lib1.c"))
    assert "svdf_state" in src and "TVMGEN_MEMCPY(sp" not in src
    pool = state_pool(hm)
    reset = getattr(hm.lib, "tvmgen_%s_reset" % name)
    reset.restype = ctypes.c_int32

    def do_reset() -> None:
        assert reset(ctypes.c_void_p(pool.ctypes.data)) == 0

    do_reset()
    want = tflm_steps(ref, xs, 1, reset_at=4)
    got = ours_steps(lambda x: hm.run(x, state=pool), do_reset, xs, reset_at=4)
    same(got, want)


def test_svdf_operators_check_their_arguments() -> None:
    from tvmnode import ir

    st = ir.var("s", shape=(1, 6, 4), dtype="int16")
    cases = [
        (lambda: ir.op.nn.svdf_state(st, ir.var("f", shape=(1, 5), dtype="int16")),
         "argument 1 (feature)"),
        (lambda: ir.op.nn.svdf_state(st, ir.var("f", shape=(1, 6), dtype="int8")),
         "expected int16"),
        (lambda: ir.op.nn.svdf_state(ir.var("s", shape=(6, 4), dtype="int16"),
                                     ir.var("f", shape=(1, 6), dtype="int16")),
         "[batch, filters, memory]"),
        (lambda: ir.op.nn.svdf_state(ir.var("s", shape=(1, 6, 4), dtype="int32"),
                                     ir.var("f", shape=(1, 6), dtype="int32")),
         "float32, int16 or int8"),
        (lambda: ir.op.nn.svdf_time(st, ir.const(np.zeros((6, 4), np.int16)), rank=4),
         "'rank' must divide the 6 filters, got 4"),
        (lambda: ir.op.nn.svdf_time(st, ir.const(np.zeros((6, 4), np.int16)), zero_point=40000),
         "'zero_point' must be in the state's range, got 40000"),
        (lambda: ir.op.nn.svdf_time(st, ir.const(np.zeros((6, 3), np.int16))),
         "argument 1 (weights_time)"),
    ]
    for build, msg in cases:
        with pytest.raises(Exception, match=re.escape(msg)):
            build()


def test_svdf_bad_forms_are_refused() -> None:
    model = svdf_model("int8", 1, 4, 2, 1, 3)
    # a rank that does not divide the filters
    t = [TensorSpec((1, 4), "float32", name="x"),
         TensorSpec((3, 4), "float32", name="wf", data=np.ones((3, 4), np.float32)),
         TensorSpec((3, 2), "float32", name="wt", data=np.ones((3, 2), np.float32)),
         TensorSpec((1, 6), "float32", name="state", is_variable=True),
         TensorSpec((1, 1), "float32", name="y")]
    g = GraphSpec(t, [0], [4], [OpSpec("SVDF", [0, 1, 2, -1, 3], [4],
                                       builtin_options("SVDFOptions", rank=2))])
    with pytest.raises(frontend.ModelImportError, match="SVDF.*rank 2"):
        frontend.from_tflite(graph_model([g]))
    t[3] = TensorSpec((1, 6), "int16", quant=(0.01, 3), name="state", is_variable=True)
    t[0] = TensorSpec((1, 4), "int8", quant=(0.01, 0), name="x")
    t[1] = TensorSpec((3, 4), "int8", quant=(0.01, 0), name="wf", data=np.ones((3, 4), np.int8))
    t[2] = TensorSpec((3, 2), "int16", quant=(0.01, 0), name="wt", data=np.ones((3, 2), np.int16))
    t[4] = TensorSpec((1, 3), "int8", quant=(0.1, 0), name="y")
    g = GraphSpec(t, [0], [4], [OpSpec("SVDF", [0, 1, 2, -1, 3], [4],
                                       builtin_options("SVDFOptions", rank=1))])
    with pytest.raises(frontend.ModelImportError, match="SVDF.*zero point 0"):
        frontend.from_tflite(graph_model([g]))
    assert frontend.from_tflite(model).attrs["states"]
