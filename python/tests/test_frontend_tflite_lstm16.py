"""UNIDIRECTIONAL_SEQUENCE_LSTM in TFLite's 16x8 form: int16 input, hidden
state and output (zero point 0), int8 weights, int64 bias, int16 cell
state, as the converter writes it and TFLite Micro runs it (its
EvalLstm<int16_t, int8_t, int16_t, int64_t>). One operator per model,
batch-major and time-major, with and without a cell clip; the states are
variable tensors carried across invoke() and across our runs, so several
streaming steps through the executor (unfused and fused) and the
generated C must equal TFLite Micro's bit for bit. Forms the 16x8 kernel
does not take are clear errors."""
from __future__ import annotations

from typing import Any, Dict, List

import numpy as np
import pytest

pytest.importorskip("tflite")
pytest.importorskip("tflite_micro")

from tflite_build import GraphSpec, OpSpec, TensorSpec, builtin_options, graph_model  # noqa: E402
from test_frontend_tflite_lstm import check_executor, check_generated_c  # noqa: E402
from tvmnode import frontend, ir, transform  # noqa: E402

RNG = np.random.default_rng(1608)
IN_SCALE = 2.0 ** -12
HIDDEN_SCALE = 2.0 ** -15


def lstm16_model(batch: int, steps: int, n_in: int, units: int, time_major: bool = False,
                 cell_clip: float = 0.0, cell_scale: float = 2.0 ** -11, x_zp: int = 0,
                 bias_dtype: str = "int64") -> bytes:
    """One 16x8 UNIDIRECTIONAL_SEQUENCE_LSTM: int16 input x, eight int8
    weight matrices (input ones first), four int64 gate biases at the
    input * weight scale, int16 hidden and cell state (variables), int16
    output y."""
    x_shape = [steps, batch, n_in] if time_major else [batch, steps, n_in]
    t: List[TensorSpec] = [TensorSpec(x_shape, "int16", quant=(IN_SCALE, x_zp), name="x")]
    w_scales = np.linspace(0.004, 0.015, 8)
    for g in range(8):
        shape = [units, n_in if g < 4 else units]
        t.append(TensorSpec(shape, "int8", quant=(float(w_scales[g]), 0),
                            data=RNG.integers(-127, 128, shape), name="w%d" % g))
    for g in range(4):
        t.append(TensorSpec([units], bias_dtype, quant=(IN_SCALE * float(w_scales[g]), 0),
                            data=RNG.integers(-200000, 200000, units), name="b%d" % g))
    h_q = (HIDDEN_SCALE, 0)
    t.append(TensorSpec([batch, units], "int16", quant=h_q, is_variable=True, name="h"))
    t.append(TensorSpec([batch, units], "int16", quant=(cell_scale, 0), is_variable=True,
                        name="c"))
    t.append(TensorSpec(x_shape[:2] + [units], "int16", quant=h_q, name="y"))
    ins = [0, 1, 2, 3, 4, 5, 6, 7, 8, -1, -1, -1, 9, 10, 11, 12, -1, -1, 13, 14,
           -1, -1, -1, -1]
    opts = builtin_options("UnidirectionalSequenceLSTMOptions", fusedActivationFunction=4,
                           cellClip=cell_clip, projClip=0.0, timeMajor=time_major)
    graph = GraphSpec(t, [0], [15], [OpSpec("UNIDIRECTIONAL_SEQUENCE_LSTM", ins, [15], opts)],
                      name="main")
    return graph_model([graph])


# (batch, steps, input size, units, options)
CONFIGS: Dict[str, Any] = {
    "s16": (1, 4, 6, 4, {}),
    "s16-batch-clip": (2, 3, 5, 6, dict(cell_clip=1.5)),
    "s16-time-major": (3, 3, 4, 5, dict(time_major=True, cell_scale=2.0 ** -12)),
    "s16-time-major-small-cell-clip": (2, 2, 3, 3, dict(time_major=True, cell_scale=2.0 ** -14,
                                                        cell_clip=0.5)),
}


def model_of(cid: str) -> bytes:
    b, s, n, u, kw = CONFIGS[cid]
    return lstm16_model(b, s, n, u, **kw)


def inputs_of(cid: str, n: int) -> List[np.ndarray]:
    b, s, m, _, kw = CONFIGS[cid]
    shape = (s, b, m) if kw.get("time_major") else (b, s, m)
    xs = [RNG.integers(-24000, 24000, shape).astype(np.int16) for _ in range(n)]
    xs[2] = xs[0]  # the same input meets another state
    return xs


@pytest.mark.parametrize("fuse", [False, True])
@pytest.mark.parametrize("cid", sorted(CONFIGS))
def test_executor_matches_tflite_micro(cid: str, fuse: bool) -> None:
    model = model_of(cid)
    assert "qnn.lstm" in frontend.from_tflite(model).astext()
    got = check_executor(model, inputs_of(cid, 4), fuse)
    assert got[0][0].dtype == np.int16
    # the outputs use more than the int8 range
    assert int(np.abs(np.concatenate([g[0].ravel() for g in got])).max()) > 127


def test_generated_c_matches_tflite_micro(tmp_path: Any) -> None:
    cid = "s16-time-major"
    check_generated_c(model_of(cid), "lstm16_" + cid.replace("-", "_"), inputs_of(cid, 4),
                      str(tmp_path))


def test_unsupported_16x8_forms_are_named() -> None:
    with pytest.raises(frontend.UnsupportedOperatorError,
                       match=r"int16 input \(input 0\) must have zero point 0"):
        frontend.from_tflite(lstm16_model(1, 2, 3, 4, x_zp=5))
    with pytest.raises(frontend.UnsupportedOperatorError,
                       match="int16, int8, int32, int16, int16 are not supported"):
        frontend.from_tflite(lstm16_model(1, 2, 3, 4, bias_dtype="int32"))


def test_bad_16x8_arguments_name_the_operator_and_argument() -> None:
    x = ir.var("x", shape=[2, 3, 5], dtype="int16")
    w = ir.const(np.zeros((4, 4, 5), np.int8))
    r = ir.const(np.zeros((4, 4, 4), np.int8))
    h = ir.var("h", shape=[2, 4], dtype="int16")
    c = ir.var("c", shape=[2, 4], dtype="int16")
    h8 = ir.var("h8", shape=[2, 4], dtype="int8")

    def f32(v: float) -> Any:
        return ir.const(np.array(v, np.float32))

    def i32(v: int) -> Any:
        return ir.const(np.array(v, np.int32))

    def lstm(b: np.ndarray, hidden: Any) -> Any:
        return ir.op.qnn.lstm(x, w, r, ir.const(b), hidden, c, f32(IN_SCALE), i32(0),
                              ir.const(np.full(8, 0.01, np.float32)), f32(HIDDEN_SCALE),
                              i32(0), f32(2.0 ** -11))

    def infer(e: Any) -> Any:
        mod = ir.IRModule.from_expr(ir.Function([x, h, c, h8], e))
        return transform.InferType()(mod)

    ok = infer(lstm(np.zeros((4, 4), np.int64), h))
    assert "int16" in ok.astext()
    with pytest.raises(Exception, match=r"qnn\.lstm.*bias.*expected int64"):
        infer(lstm(np.zeros((4, 4), np.int32), h))
    with pytest.raises(Exception, match=r"qnn\.lstm.*hidden.*expected int16"):
        infer(lstm(np.zeros((4, 4), np.int64), h8))
