"""QDQ groups whose Clip bounds are one-element tensors (what some
exporters write instead of scalars), and errors raised while fusing."""
from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from tvmnode import runtime  # noqa: E402
from tvmnode.frontend import from_onnx  # noqa: E402

from test_frontend_onnx_qdq import _qdq_conv, inputs, ort_run  # noqa: E402


def _with_clip(m: object, lo: np.ndarray, hi: np.ndarray) -> object:
    g = m.graph  # type: ignore[attr-defined]
    k = next(i for i, n in enumerate(g.node) if n.op_type == "Relu")
    clip = helper.make_node("Clip", ["c", "clo", "chi"], ["r"], name="clip0")
    g.node.remove(g.node[k])
    g.node.insert(k, clip)
    g.initializer.extend([numpy_helper.from_array(lo, "clo"), numpy_helper.from_array(hi, "chi")])
    return m


@pytest.mark.parametrize("act_dt", [TensorProto.UINT8, TensorProto.INT8], ids=["u8", "s8"])
def test_clip_with_one_element_bounds_joins_the_group(act_dt: int) -> None:
    # bounds that cover the output's quantized range (0 .. 7.65): the group
    # is fused, and equals onnxruntime, which drops such a Clip
    m = _with_clip(_qdq_conv(act_dt, True), np.array([0.0], np.float32),
                   np.array([8.0], np.float32))
    mod = from_onnx(m)
    text = mod.astext()
    assert "nn.conv2d(" not in text.replace("qnn.conv2d(", "")
    ex = runtime.Executor(mod)
    for x in inputs(m):
        assert np.array_equal(np.asarray(ex(x)), ort_run(m, x))


def test_clip_with_several_bounds_is_an_import_error_not_a_crash() -> None:
    # illegal (Clip's bounds are scalars), but it must be refused by name
    m = _with_clip(_qdq_conv(TensorProto.INT8, True), np.array([0.0, 0.0], np.float32),
                   np.array([1.5, 1.5], np.float32))
    with pytest.raises(ValueError, match="from_onnx: .*"):
        from_onnx(m)
