"""UNIDIRECTIONAL_SEQUENCE_LSTM, one operator per model (tflite_build),
float32 and int8 with int16 cell state (TFLite Micro's 8x8_16 kernel),
batch-major and time-major, with and without a cell clip. The hidden and
cell state are TFLite variable tensors, kept across invoke() by TFLite
Micro and as module states by us: several steps run through one
interpreter and through our executor (unfused and fused) and the
generated C (with its state pool and reset), and every step's output must
equal TFLite Micro's bit for bit for int8 and within 1e-6 of its range for
float32 (the 16x8 form: test_frontend_tflite_lstm16.py). Unsupported
forms (peephole, projection) and bad operator arguments are clear
errors."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

import numpy as np
import pytest

pytest.importorskip("tflite")
pytest.importorskip("tflite_micro")

from tflite_build import GraphSpec, OpSpec, TensorSpec, builtin_options, graph_model  # noqa: E402
from test_stateful import host_model, ours_steps, same, state_pool, tflm_steps  # noqa: E402
from tvmnode import frontend, ir, transform  # noqa: E402
from tvmnode.runtime import Executor  # noqa: E402

RNG = np.random.default_rng(2718)


def lstm_model(dtype: str, batch: int, steps: int, n_in: int, units: int,
               time_major: bool = False, cell_clip: float = 0.0, hidden_zp: int = 0,
               cell_scale: float = 2.0 ** -12, extra: Optional[Dict[int, TensorSpec]] = None,
               act: int = 4) -> bytes:
    """One UNIDIRECTIONAL_SEQUENCE_LSTM: input, four input and four
    recurrent weights, four gate biases, the hidden and cell state
    (variable tensors) and the output; `extra` fills optional inputs."""
    q = dtype == "int8"
    x_shape = [steps, batch, n_in] if time_major else [batch, steps, n_in]
    in_q = (0.03, -5) if q else None
    t: List[TensorSpec] = [TensorSpec(x_shape, dtype, quant=in_q, name="x")]
    w_scales = np.linspace(0.006, 0.02, 8)
    for g in range(8):
        shape = [units, n_in if g < 4 else units]
        if q:
            t.append(TensorSpec(shape, "int8", quant=(float(w_scales[g]), 0),
                                data=RNG.integers(-127, 128, shape), name="w%d" % g))
        else:
            t.append(TensorSpec(shape, "float32", data=RNG.standard_normal(shape) * 0.4,
                                name="w%d" % g))
    for g in range(4):
        if q:
            t.append(TensorSpec([units], "int32", quant=(0.03 * float(w_scales[g]), 0),
                                data=RNG.integers(-4000, 4000, units), name="b%d" % g))
        else:
            t.append(TensorSpec([units], "float32", data=RNG.standard_normal(units) * 0.3,
                                name="b%d" % g))
    h_q = (1 / 128, hidden_zp) if q else None
    t.append(TensorSpec([batch, units], dtype, quant=h_q, is_variable=True, name="h"))
    t.append(TensorSpec([batch, units], "int16" if q else "float32",
                        quant=(cell_scale, 0) if q else None, is_variable=True, name="c"))
    out_shape = x_shape[:2] + [units]
    t.append(TensorSpec(out_shape, dtype, quant=h_q, name="y"))
    ins = [0, 1, 2, 3, 4, 5, 6, 7, 8, -1, -1, -1, 9, 10, 11, 12, -1, -1, 13, 14,
           -1, -1, -1, -1]
    for slot, spec in (extra or {}).items():
        t.append(spec)
        ins[slot] = len(t) - 1
    opts = builtin_options("UnidirectionalSequenceLSTMOptions", fusedActivationFunction=act,
                           cellClip=cell_clip, projClip=0.0, timeMajor=time_major)
    graph = GraphSpec(t, [0], [15], [OpSpec("UNIDIRECTIONAL_SEQUENCE_LSTM", ins, [15], opts)],
                      name="main")
    return graph_model([graph])


# (dtype, batch, steps, n_in, units, options)
CONFIGS: Dict[str, Any] = {
    "s8": ("int8", 1, 5, 6, 4, {}),
    "s8-batch-clip": ("int8", 2, 3, 5, 7, dict(cell_clip=1.5, hidden_zp=-3)),
    "s8-time-major": ("int8", 3, 4, 3, 5, dict(time_major=True, cell_scale=2.0 ** -11,
                                                hidden_zp=4)),
    "s8-small-cell-scale": ("int8", 2, 2, 4, 3, dict(cell_scale=2.0 ** -14, cell_clip=0.5)),
    "f32": ("float32", 1, 6, 4, 5, {}),
    "f32-time-major-clip": ("float32", 2, 3, 5, 4, dict(time_major=True, cell_clip=0.8)),
}


def model_of(cid: str) -> bytes:
    dtype, b, s, n, u, kw = CONFIGS[cid]
    return lstm_model(dtype, b, s, n, u, **kw)


def inputs_of(cid: str, n: int) -> List[np.ndarray]:
    dtype, b, s, m, _, kw = CONFIGS[cid]
    shape = (s, b, m) if kw.get("time_major") else (b, s, m)
    xs = []
    for _ in range(n):
        if dtype == "int8":
            xs.append(RNG.integers(-128, 128, shape).astype(np.int8))
        else:
            xs.append((RNG.standard_normal(shape) * 1.5).astype(np.float32))
    xs[2] = xs[0]  # the same input meets another state
    return xs


def tuple_of(y: Any) -> Sequence[np.ndarray]:
    return y if isinstance(y, tuple) else (y,)


def check_executor(model: bytes, xs: List[np.ndarray], fuse: bool) -> List[List[np.ndarray]]:
    """Run `xs` as streaming steps through the executor (after FuseOps
    when `fuse`) and TFLite Micro: the same outputs, the state carried
    (xs[2] is xs[0] and must give another output), reset() back to the
    start. Returns our steps' outputs."""
    mod = frontend.from_tflite(model)
    assert [str(s["name"]) for s in mod.attrs["states"]] == ["tensor:h", "tensor:c"]
    if fuse:
        mod = transform.FuseOps()(transform.FoldConstant()(mod))
    ex = Executor(mod)
    assert ex.stateful
    want = tflm_steps(model, xs, 1)
    got = ours_steps(lambda x: tuple_of(ex(x)), ex.reset, xs)
    same(got, want)
    assert not np.array_equal(got[0][0], got[2][0])
    ex.reset()
    np.testing.assert_array_equal(tuple_of(ex(xs[0]))[0], got[0][0])
    return got


def check_generated_c(model: bytes, name: str, xs: List[np.ndarray], tmp: str) -> None:
    """Run `xs` as streaming steps through the generated C (its state pool,
    reset before the first and the fourth step; the cell state updated in
    place) and through TFLite Micro
    (a fresh interpreter at the fourth): the same outputs."""
    import ctypes

    hm = host_model(frontend.from_tflite(model), name, tmp)
    # the final cell state is computed over the current one in the state
    # pool; only the hidden state (the sequence's last step) is copied
    src = "".join(v for k, v in hm.arch.files.items() if k.endswith("_lib1.c"))
    assert src.count("TVMGEN_MEMCPY(sp") == 1
    pool = state_pool(hm)
    reset = getattr(hm.lib, "tvmgen_%s_reset" % name)
    reset.restype = ctypes.c_int32

    def do_reset() -> None:
        assert reset(ctypes.c_void_p(pool.ctypes.data)) == 0

    want = tflm_steps(model, xs, 1, reset_at=3)
    do_reset()
    got = ours_steps(lambda x: hm.run(x, state=pool), do_reset, xs, reset_at=3)
    same(got, want)


@pytest.mark.parametrize("fuse", [False, True])
@pytest.mark.parametrize("cid", sorted(CONFIGS))
def test_executor_matches_tflite_micro(cid: str, fuse: bool) -> None:
    check_executor(model_of(cid), inputs_of(cid, 5), fuse)


@pytest.mark.parametrize("cid", ["s8-batch-clip", "s8-time-major", "f32-time-major-clip"])
def test_generated_c_matches_tflite_micro(cid: str, tmp_path: Any) -> None:
    check_generated_c(model_of(cid), "lstm_" + cid.replace("-", "_"), inputs_of(cid, 5),
                      str(tmp_path))


def test_int8_state_starts_at_its_zero_point() -> None:
    mod = frontend.from_tflite(model_of("s8-batch-clip"))
    h = [s for s in mod.attrs["states"] if str(s["name"]) == "tensor:h"][0]
    assert set(int(v) for v in np.asarray(h["init"]).ravel()) == {-3}


def test_unsupported_forms_are_named() -> None:
    peep = {9: TensorSpec([4], "float32", data=np.ones(4), name="peep")}
    with pytest.raises(frontend.UnsupportedOperatorError, match="peephole"):
        frontend.from_tflite(lstm_model("float32", 1, 2, 3, 4, extra=peep))
    proj = {16: TensorSpec([4, 4], "float32", data=np.ones((4, 4)), name="proj")}
    with pytest.raises(frontend.UnsupportedOperatorError, match="projection weights"):
        frontend.from_tflite(lstm_model("float32", 1, 2, 3, 4, extra=proj))
    with pytest.raises(frontend.UnsupportedOperatorError, match="cell activation RELU"):
        frontend.from_tflite(lstm_model("float32", 1, 2, 3, 4, act=1))


def test_bad_arguments_name_the_operator_and_argument() -> None:
    x = ir.var("x", shape=[2, 3, 5], dtype="float32")
    w = ir.const(np.zeros((4, 4, 5), np.float32))
    r = ir.const(np.zeros((4, 4, 4), np.float32))
    b = ir.const(np.zeros((4, 4), np.float32))
    h = ir.var("h", shape=[2, 4], dtype="float32")
    c = ir.var("c", shape=[2, 4], dtype="float32")
    bad_h = ir.var("bh", shape=[3, 4], dtype="float32")
    bad_c = ir.var("bc", shape=[2, 4], dtype="int16")

    def infer(e: Any) -> None:
        mod = ir.IRModule.from_expr(ir.Function([x, h, c, bad_h, bad_c], e))
        transform.InferType()(mod)

    infer(ir.op.nn.lstm(x, w, r, b, h, c))
    with pytest.raises(Exception, match=r"nn\.lstm.*hidden.*expected shape \[2, 4\]"):
        infer(ir.op.nn.lstm(x, w, r, b, bad_h, c))
    with pytest.raises(Exception, match=r"nn\.lstm.*cell.*expected float32"):
        infer(ir.op.nn.lstm(x, w, r, b, h, bad_c))
    with pytest.raises(Exception, match=r"nn\.lstm.*emit 'all' is not sequence or cell"):
        infer(ir.op.nn.lstm(x, w, r, b, h, c, emit="all"))


def test_cell_in_place_never_overwrites_a_hidden_state_it_still_reads() -> None:
    """The final cell state may be computed over the cell state it starts
    from; not when that buffer is also the hidden state the step reads (one
    value passed as both): the result must be the one with two copies."""
    from tvmnode import ir

    r = np.random.default_rng(5)
    units, n_in = 4, 3
    wi, wr, b = [ir.const((r.standard_normal(s) * 0.5).astype(np.float32))
                 for s in ((4, units, n_in), (4, units, units), (4, units))]
    x = ir.var("x", shape=(1, 2, n_in), dtype="float32")
    v = ir.var("v", shape=(1, units), dtype="float32")
    v2 = ir.var("v2", shape=(1, units), dtype="float32")
    t = ir.op.tanh(v)
    # (negated, so that the cell state is an intermediate the plan may
    # place over its input, not the caller's output)
    shared = ir.op.negative(ir.op.nn.lstm(x, wi, wr, b, t, t, emit="cell"))
    apart = ir.op.negative(ir.op.nn.lstm(x, wi, wr, b, t, ir.op.tanh(v2), emit="cell"))
    xs = r.standard_normal((1, 2, n_in)).astype(np.float32)
    vs = r.standard_normal((1, units)).astype(np.float32)
    got = Executor(ir.IRModule.from_expr(ir.Function([x, v], shared)))(xs, vs)
    want = Executor(ir.IRModule.from_expr(ir.Function([x, v, v2], apart)))(xs, vs, vs)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
