"""QDQ models (onnxruntime.quantization.quantize_static, QuantFormat.QDQ)
imported as int8 graphs: DequantizeLinear -> Conv / Gemm / MatMul ->
QuantizeLinear groups become qnn operators with ONNX Runtime's
requantization, so the executor and the generated C give onnxruntime's
CPU output bit for bit, with int8 tensors between the operators."""
from __future__ import annotations

import os
import re
import sys
from typing import Any, Callable, Dict, List, Tuple

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
quantization = pytest.importorskip("onnxruntime.quantization")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from tvmnode import codegen, runtime  # noqa: E402
from tvmnode.frontend import from_onnx  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
from aot_util import HostModel  # noqa: E402

RNG = np.random.default_rng(7)


def _init(name: str, shape: Tuple[int, ...], scale: float) -> Any:
    return numpy_helper.from_array((RNG.standard_normal(shape) * scale).astype(np.float32), name)


def _model(nodes: List[Any], x_shape: Tuple[int, ...], y_shape: Tuple[int, ...],
           inits: List[Any]) -> Any:
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                     list(x_shape))],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(y_shape))],
                          inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m


def conv_model() -> Any:
    """Conv + bias + Relu, then a Conv with stride 2 and Clip (ReLU6)."""
    return _model([helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
                   helper.make_node("Relu", ["c"], ["r"]),
                   helper.make_node("Conv", ["r", "w2", "b2"], ["d"], strides=[2, 2]),
                   helper.make_node("Clip", ["d", "lo", "hi"], ["y"])],
                  (1, 3, 9, 9), (1, 6, 4, 4),
                  [_init("w", (8, 3, 3, 3), 0.3), _init("b", (8,), 0.1),
                   _init("w2", (6, 8, 3, 3), 0.2), _init("b2", (6,), 0.1),
                   numpy_helper.from_array(np.array(0, np.float32), "lo"),
                   numpy_helper.from_array(np.array(6, np.float32), "hi")])


def depthwise_model() -> Any:
    """A pointwise Conv, then a depthwise Conv (group = channels)."""
    return _model([helper.make_node("Conv", ["x", "w", "b"], ["c"]),
                   helper.make_node("Conv", ["c", "w2", "b2"], ["y"], pads=[1, 1, 1, 1],
                                    group=8)],
                  (1, 4, 7, 7), (1, 8, 7, 7),
                  [_init("w", (8, 4, 1, 1), 0.4), _init("b", (8,), 0.1),
                   _init("w2", (8, 1, 3, 3), 0.3), _init("b2", (8,), 0.1)])


def gemm_model() -> Any:
    """Conv, Flatten, Gemm with transB (a classifier head)."""
    return _model([helper.make_node("Conv", ["x", "w", "b"], ["c"], strides=[2, 2]),
                   helper.make_node("Flatten", ["c"], ["f"]),
                   helper.make_node("Gemm", ["f", "fw", "fb"], ["y"], transB=1)],
                  (1, 2, 8, 8), (1, 10),
                  [_init("w", (4, 2, 2, 2), 0.4), _init("b", (4,), 0.1),
                   _init("fw", (10, 64), 0.1), _init("fb", (10,), 0.1)])


def matmul_model() -> Any:
    """Two MatMul layers with a Relu between."""
    return _model([helper.make_node("MatMul", ["x", "w"], ["h"]),
                   helper.make_node("Relu", ["h"], ["r"]),
                   helper.make_node("MatMul", ["r", "w2"], ["y"])],
                  (6, 16), (6, 8),
                  [_init("w", (16, 24), 0.3), _init("w2", (24, 8), 0.2)])


MODELS: Dict[str, Callable[[], Any]] = {
    "conv": conv_model, "depthwise": depthwise_model, "gemm": gemm_model,
    "matmul": matmul_model,
}


_ReaderBase: Any = quantization.CalibrationDataReader


class Reader(_ReaderBase):
    """A fixed set of calibration inputs."""

    def __init__(self, shape: Tuple[int, ...], n: int = 8) -> None:
        rng = np.random.default_rng(1)
        self.data = [{"x": rng.standard_normal(shape).astype(np.float32)} for _ in range(n)]
        self.at = 0

    def get_next(self) -> Any:
        if self.at >= len(self.data):
            return None
        self.at += 1
        return self.data[self.at - 1]


def x_shape(m: Any) -> Tuple[int, ...]:
    return tuple(d.dim_value for d in m.graph.input[0].type.tensor_type.shape.dim)


def quantize(m: Any, act: str, per_channel: bool, tmp: Any) -> Any:
    """The QDQ model, its weights in 7 bits (reduce_range): onnxruntime's
    x86 AVX2 int8 kernels (vpmaddubsw) saturate pairs of 8-bit products to
    16 bits, which 7-bit weights cannot reach, so its output is then the
    exact integer arithmetic on every CPU rather than an ISA's."""
    src, dst = os.path.join(str(tmp), "f.onnx"), os.path.join(str(tmp), "q.onnx")
    onnx.save(m, src)
    qt = quantization.QuantType
    quantization.quantize_static(
        src, dst, Reader(x_shape(m)), quant_format=quantization.QuantFormat.QDQ,
        activation_type=qt.QUInt8 if act == "u8" else qt.QInt8, weight_type=qt.QInt8,
        per_channel=per_channel, reduce_range=True)
    return onnx.load(dst)


def ort_run(m: Any, x: np.ndarray) -> np.ndarray:
    s = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    return s.run(None, {"x": x})[0]


def inputs(m: Any) -> List[np.ndarray]:
    rng = np.random.default_rng(3)
    shp = x_shape(m)
    return [rng.standard_normal(shp).astype(np.float32) * s for s in (1.0, 0.5, 2.5)]


def pool_bytes(arch: Any) -> int:
    return sum(p["size_bytes"] for p in arch.info["memory"]["pools"] if p["kind"] == "workspace")


@pytest.mark.parametrize("per_channel", [False, True], ids=["tensor", "channel"])
@pytest.mark.parametrize("act", ["u8", "s8"])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_qdq_model_matches_onnxruntime(name: str, act: str, per_channel: bool,
                                       tmp_path: Any) -> None:
    fm = MODELS[name]()
    qm = quantize(fm, act, per_channel, tmp_path)
    mod = from_onnx(qm)
    text = mod.astext()
    # the groups are integer operators: no float convolution or dense layer
    assert not re.search(r"\bnn\.(conv2d|dense)\(", text) and "matmul(" not in text
    assert re.search(r"qnn\.(conv2d|dense)\(", text)
    assert 'rounding="ONNX"' in text
    ex = runtime.Executor(mod)
    arch = codegen.compile(mod, "qdq_%s_%s_%d" % (name, act, per_channel))
    host = HostModel(arch, str(tmp_path))
    for x in inputs(fm):
        want = ort_run(qm, x)
        got = np.asarray(ex(x))
        assert got.dtype == want.dtype and got.shape == want.shape
        assert np.array_equal(got, want), "%s: the executor differs" % name
        c_out = host.run(x)
        c_out = c_out[0] if isinstance(c_out, (list, tuple)) else c_out
        assert np.array_equal(np.asarray(c_out), want), "%s: the generated C differs" % name
    # int8 activations: the workspace is smaller than the float model's
    f_arch = codegen.compile(from_onnx(fm), "f_%s" % name)
    assert pool_bytes(arch) < pool_bytes(f_arch)
