"""tvmnode.frontend.from_onnx: LSTM, GRU and RNN (frontend/onnx_rnn.py),
unrolled over the sequence, against onnxruntime (float32 within 1e-5 of
each output's range): both layouts, every direction, biases, initial
states, peepholes, linear_before_reset, non-default activations, only some
outputs; and the errors for what is not mapped."""
from typing import Any, Dict, List, Optional

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import tvmnode as tn  # noqa: E402
from tvmnode.frontend import ModelImportError, from_onnx  # noqa: E402
from tvmnode.frontend.onnx import UnsupportedOperatorError  # noqa: E402

RNG = np.random.default_rng(41)
GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}


def f32(*shape: int) -> np.ndarray:
    return RNG.uniform(-1, 1, size=shape).astype(np.float32)


def rnn_model(op: str, seq: int = 5, batch: int = 2, n_in: int = 3, hid: int = 4,
              direction: str = "forward", layout: int = 0, bias: bool = True,
              states: bool = False, peep: bool = False, outputs: Optional[List[str]] = None,
              **attrs: Any) -> Any:
    dirs = 2 if direction == "bidirectional" else 1
    g = GATES[op]
    inits: Dict[str, np.ndarray] = {"W": f32(dirs, g * hid, n_in), "R": f32(dirs, g * hid, hid)}
    names = ["X", "W", "R"]
    names.append("B" if bias else "")
    if bias:
        inits["B"] = f32(dirs, 2 * g * hid)
    names.append("")  # sequence_lens
    st = [dirs, batch, hid] if layout == 0 else [batch, dirs, hid]
    if states:
        inits["h0"] = f32(*st)
        names.append("h0")
        if op == "LSTM":
            inits["c0"] = f32(*st)
            names.append("c0")
    if peep:
        while len(names) < 7:
            names.append("")
        inits["P"] = f32(dirs, 3 * hid)
        names.append("P")
    outs = outputs if outputs is not None else (["Y", "Y_h", "Y_c"] if op == "LSTM"
                                                else ["Y", "Y_h"])
    node = helper.make_node(op, names, outs, name="rnn", hidden_size=hid, direction=direction,
                            layout=layout, **attrs)
    xshape = [seq, batch, n_in] if layout == 0 else [batch, seq, n_in]
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, xshape)],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outs if o],
        [numpy_helper.from_array(v, k) for k, v in inits.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)]), xshape


def _ort(m: Any, x: np.ndarray) -> List[np.ndarray]:
    return ort.InferenceSession(m.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, {"X": x})


def _batch_first_reference(m: Any, x: np.ndarray) -> List[np.ndarray]:
    """onnxruntime lacks layout 1: its outputs for the layout 0 twin of the
    model (X and the initial states transposed), transposed back."""
    m0 = onnx.ModelProto()
    m0.CopyFrom(m)
    node = m0.graph.node[0]
    for a in node.attribute:
        if a.name == "layout":
            a.i = 0
    states = set(node.input[5:7])
    for t in m0.graph.initializer:
        if t.name in states and t.name:
            t.CopyFrom(numpy_helper.from_array(
                numpy_helper.to_array(t).transpose(1, 0, 2).copy(), t.name))
    dims = m0.graph.input[0].type.tensor_type.shape.dim
    dims[0].dim_value, dims[1].dim_value = dims[1].dim_value, dims[0].dim_value
    outs = _ort(m0, x.transpose(1, 0, 2).copy())
    return [o.transpose(2, 0, 1, 3) if o.ndim == 4 else o.transpose(1, 0, 2) for o in outs]


def check(m: Any, xshape: List[int]) -> None:
    x = f32(*xshape)
    layout = [a.i for a in m.graph.node[0].attribute if a.name == "layout"]
    want = _batch_first_reference(m, x) if layout == [1] else _ort(m, x)
    got = tn.runtime.Executor(from_onnx(m))(x)
    got = list(got) if isinstance(got, (list, tuple)) else [got]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g = np.asarray(g)
        assert g.shape == w.shape, (g.shape, w.shape)
        np.testing.assert_allclose(g, w, rtol=0, atol=1e-5 * max(1.0, float(np.abs(w).max())))


@pytest.mark.parametrize("op", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("layout", [0, 1])
def test_directions_and_layouts(op: str, direction: str, layout: int) -> None:
    check(*rnn_model(op, direction=direction, layout=layout, states=True))


@pytest.mark.parametrize("op", ["LSTM", "GRU", "RNN"])
def test_without_bias_or_states_and_one_step(op: str) -> None:
    check(*rnn_model(op, bias=False))
    check(*rnn_model(op, seq=1, batch=1))


def test_lstm_peepholes() -> None:
    check(*rnn_model("LSTM", peep=True, states=True, direction="bidirectional"))


def test_gru_linear_before_reset() -> None:
    check(*rnn_model("GRU", linear_before_reset=1, states=True, direction="bidirectional"))


@pytest.mark.parametrize("op,acts", [
    ("LSTM", ["HardSigmoid", "Softsign", "Elu"]),
    ("GRU", ["Relu", "ScaledTanh"]),
    ("RNN", ["Softplus"]),
    ("RNN", ["LeakyRelu"]),
    ("RNN", ["ThresholdedRelu"]),
    ("GRU", ["Affine", "Tanh", "Sigmoid", "Tanh"]),
])
def test_activations_with_alpha_beta(op: str, acts: List[str]) -> None:
    d = "bidirectional" if len(acts) == 2 * {"LSTM": 3, "GRU": 2, "RNN": 1}[op] else "forward"
    n_ab = {"HardSigmoid": 2, "Elu": 1, "ScaledTanh": 2, "LeakyRelu": 1,
            "ThresholdedRelu": 1, "Affine": 2}
    alphas = [0.3 for a in acts if a in n_ab]
    betas = [0.4 for a in acts if n_ab.get(a) == 2]
    attrs: Dict[str, Any] = {"activations": acts}
    if alphas:
        attrs["activation_alpha"] = alphas
    if betas:
        attrs["activation_beta"] = betas
    check(*rnn_model(op, direction=d, **attrs))


def test_only_some_outputs() -> None:
    check(*rnn_model("LSTM", outputs=["", "Y_h"]))
    check(*rnn_model("GRU", outputs=["Y"]))


def test_full_sequence_lens_is_accepted_and_a_shorter_one_refused() -> None:
    m, xs = rnn_model("LSTM")
    node = m.graph.node[0]
    node.input[4] = "lens"
    m.graph.initializer.append(numpy_helper.from_array(np.array([5, 5], np.int32), "lens"))
    check(m, xs)
    m.graph.initializer[-1].CopyFrom(numpy_helper.from_array(np.array([5, 3], np.int32),
                                                             "lens"))
    with pytest.raises(UnsupportedOperatorError,
                       match=r"'rnn' \(LSTM\).*sequence_lens\) is supported only when it is "
                             r"the sequence length \(5\) for every batch entry, got \[5, 3\]"):
        from_onnx(m)


def test_errors_name_the_node_and_attribute() -> None:
    with pytest.raises(UnsupportedOperatorError, match=r"'rnn' \(LSTM\): attribute clip"):
        from_onnx(rnn_model("LSTM", clip=3.0)[0])
    with pytest.raises(UnsupportedOperatorError, match="input_forget=1"):
        from_onnx(rnn_model("LSTM", input_forget=1)[0])
    with pytest.raises(UnsupportedOperatorError, match="activation 'Gelu' is not supported"):
        from_onnx(rnn_model("RNN", activations=["Gelu"])[0])
    with pytest.raises(ModelImportError, match="activations=.*needs 2 names"):
        from_onnx(rnn_model("GRU", activations=["Sigmoid"])[0])
    m, _ = rnn_model("GRU")
    m.graph.initializer[0].CopyFrom(numpy_helper.from_array(f32(1, 9, 4), "W"))
    with pytest.raises(ModelImportError, match=r"input 1 \(W\) has shape \[1, 9, 4\], "
                                               r"expected \[1, 12, 3\]"):
        from_onnx(m)
