"""onnxruntime's QOperator format (com.microsoft QLinear* operators):
one-operator models built with onnx.helper, run through the executor (and
some through the generated C) and compared with onnxruntime's CPU
execution provider byte for byte, over inputs that hold every value of
their type, in int8 and uint8; and the errors for what is not mapped."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import tvmnode as tn  # noqa: E402
from tvmnode import codegen  # noqa: E402
from tvmnode.frontend import from_onnx  # noqa: E402
from tvmnode.frontend.onnx import UnsupportedOperatorError  # noqa: E402

from aot_util import HostModel  # noqa: E402

RNG = np.random.default_rng(31)
_ELEM = {"int8": TensorProto.INT8, "uint8": TensorProto.UINT8, "float32": TensorProto.FLOAT}
MS = "com.microsoft"


def every_value(dt: str, shape: Sequence[int]) -> np.ndarray:
    """An array of `shape` that holds each value of dt at least once (when
    it has 256 elements or more), the rest random."""
    n = int(np.prod(shape))
    info = np.iinfo(dt)
    v = RNG.integers(info.min, info.max + 1, n)
    k = min(n, 256)
    v[:k] = np.arange(info.min, info.min + 256)[RNG.permutation(256)[:k]]
    return RNG.permutation(v).astype(dt).reshape(shape)


def qmodel(nodes: Sequence[Any], inputs: Dict[str, np.ndarray], outputs: Dict[str, str],
           inits: Dict[str, np.ndarray]) -> Any:
    ins = [helper.make_tensor_value_info(k, _ELEM[str(v.dtype)], list(v.shape))
           for k, v in inputs.items()]
    outs = [helper.make_tensor_value_info(k, _ELEM[dt], None) for k, dt in outputs.items()]
    g = helper.make_graph(list(nodes), "g", ins, outs,
                          [numpy_helper.from_array(np.asarray(a), k) for k, a in inits.items()])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17),
                                               helper.make_opsetid(MS, 1)])


def ort_run(m: Any, feeds: Dict[str, np.ndarray]) -> List[np.ndarray]:
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    s = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return s.run(None, feeds)


def ours(m: Any, feeds: Dict[str, np.ndarray]) -> List[np.ndarray]:
    got = tn.runtime.Executor(from_onnx(m))(*feeds.values())
    return [np.asarray(g) for g in (got if isinstance(got, tuple) else (got,))]


def compiled(m: Any, feeds: Dict[str, np.ndarray], name: str, tmp_path: Any) -> List[np.ndarray]:
    arch = codegen.compile(from_onnx(m), name)
    got = HostModel(arch, str(tmp_path)).run(*feeds.values())
    return [np.asarray(g) for g in (got if isinstance(got, (list, tuple)) else (got,))]


def assert_exact(got: Sequence[np.ndarray], want: Sequence[np.ndarray]) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, g.shape, w.dtype, w.shape)
        bad = np.flatnonzero(g.reshape(-1) != w.reshape(-1))
        assert bad.size == 0, "%d of %d differ, first at %d: %s != %s" % (
            bad.size, g.size, bad[0], g.reshape(-1)[bad[0]], w.reshape(-1)[bad[0]])


def zp(dt: str, v: int) -> np.ndarray:
    return np.array(v, dt)


def sc(v: float) -> np.ndarray:
    return np.array(v, np.float32)


# quantizations (x scale, x zero point as an offset from the type's middle,
# y scale, y zero point likewise); the middle is 0 for int8, 128 for uint8
UNARY_Q = [(0.05, 0, 1 / 256, -128), (0.1173, 17, 0.0041, -100), (0.02, -40, 0.5, 3),
           (1.7, 90, 0.009, 60)]


def _mid(dt: str) -> int:
    return 128 if dt == "uint8" else 0


def unary_model(op: str, dt: str, q: Tuple[float, int, float, int], shape: Sequence[int],
                **attrs: Any) -> Tuple[Any, Dict[str, np.ndarray]]:
    xs, xz, ys, yz = q
    inits = {"xs": sc(xs), "xz": zp(dt, xz + _mid(dt)), "ys": sc(ys), "yz": zp(dt, yz + _mid(dt))}
    node = helper.make_node(op, ["x", "xs", "xz", "ys", "yz"], ["y"], domain=MS, name="n0",
                            **attrs)
    x = every_value(dt, shape)
    return qmodel([node], {"x": x}, {"y": dt}, inits), {"x": x}


@pytest.mark.parametrize("dt", ["int8", "uint8"])
@pytest.mark.parametrize("q", UNARY_Q)
def test_sigmoid(dt: str, q: Any) -> None:
    m, feeds = unary_model("QLinearSigmoid", dt, q, (2, 3, 7, 7))
    assert_exact(ours(m, feeds), ort_run(m, feeds))


@pytest.mark.parametrize("dt", ["int8", "uint8"])
@pytest.mark.parametrize("q", UNARY_Q)
@pytest.mark.parametrize("alpha", [0.01, 0.2, 1.7])
def test_leaky_relu(dt: str, q: Any, alpha: float) -> None:
    m, feeds = unary_model("QLinearLeakyRelu", dt, q, (1, 300), alpha=alpha)
    assert_exact(ours(m, feeds), ort_run(m, feeds))


def test_leaky_relu_default_alpha_and_absent_zero_points() -> None:
    node = helper.make_node("QLinearLeakyRelu", ["x", "xs", "", "ys", ""], ["y"], domain=MS)
    x = every_value("uint8", (16, 16))
    m = qmodel([node], {"x": x}, {"y": "uint8"}, {"xs": sc(0.03), "ys": sc(0.02)})
    assert_exact(ours(m, {"x": x}), ort_run(m, {"x": x}))


def concat_model(dt: str, shapes: Sequence[Sequence[int]], qs: Sequence[Tuple[float, int]],
                 yq: Tuple[float, int], axis: int) -> Tuple[Any, Dict[str, np.ndarray]]:
    mid = _mid(dt)
    inits = {"ys": sc(yq[0]), "yz": zp(dt, yq[1] + mid)}
    names = ["ys", "yz"]
    feeds = {}
    for i, (shape, (s, z)) in enumerate(zip(shapes, qs)):
        feeds["x%d" % i] = every_value(dt, shape)
        inits["s%d" % i], inits["z%d" % i] = sc(s), zp(dt, z + mid)
        names += ["x%d" % i, "s%d" % i, "z%d" % i]
    node = helper.make_node("QLinearConcat", names, ["y"], domain=MS, axis=axis, name="cat")
    return qmodel([node], feeds, {"y": dt}, inits), feeds


@pytest.mark.parametrize("dt", ["int8", "uint8"])
@pytest.mark.parametrize("axis", [1, -1, 0])
def test_concat(dt: str, axis: int) -> None:
    shapes = {1: [(2, 5, 4, 4), (2, 3, 4, 4), (2, 16, 4, 4)],
              -1: [(2, 3, 4, 5), (2, 3, 4, 30), (2, 3, 4, 1)],
              0: [(1, 3, 9, 9), (2, 3, 9, 9), (3, 3, 9, 9)]}[axis]
    qs = [(0.05, 3), (0.011, -20), (0.1, -128 if dt == "int8" else -128)]
    m, feeds = concat_model(dt, shapes, qs, (0.05, 3), axis)  # the first is copied
    assert_exact(ours(m, feeds), ort_run(m, feeds))


def test_concat_many_inputs() -> None:
    qs = [(0.01 * (i + 1), i - 9) for i in range(20)]
    m, feeds = concat_model("int8", [(1, 2, 3)] * 20, qs, (0.07, 5), 2)
    assert_exact(ours(m, feeds), ort_run(m, feeds))


def binary_model(op: str, dt: str, sa: Sequence[int], sb: Sequence[int],
                 q: Sequence[Tuple[float, int]]) -> Tuple[Any, Dict[str, np.ndarray]]:
    mid = _mid(dt)
    inits = {}
    for n, (s, z) in zip("abc", q):
        inits[n + "s"], inits[n + "z"] = sc(s), zp(dt, z + mid)
    node = helper.make_node(op, ["a", "as", "az", "b", "bs", "bz", "cs", "cz"], ["y"],
                            domain=MS, name="n0")
    feeds = {"a": every_value(dt, sa), "b": every_value(dt, sb)}
    return qmodel([node], feeds, {"y": dt}, inits), feeds


BINARY_Q = [[(0.05, 3), (0.07, -9), (0.1, 1)], [(0.0123, -100), (0.291, 77), (0.0377, -1)],
            [(0.5, 0), (0.003, 12), (0.01, 90)], [(1.3, -128), (1.1, 127), (0.02, 0)]]
SHAPES = [((4, 300), (4, 300)), ((2, 3, 4, 5), (1, 3, 1, 1)), ((2, 3, 4, 5), (5,)),
          ((1,), (3, 7, 11)), ((3, 7, 11), (1,)), ((3, 1, 11), (1, 7, 1)), ((2, 30), (1, 1))]


@pytest.mark.parametrize("op", ["QLinearAdd", "QLinearMul"])
@pytest.mark.parametrize("dt", ["int8", "uint8"])
@pytest.mark.parametrize("q", BINARY_Q)
@pytest.mark.parametrize("shapes", SHAPES)
def test_add_mul(op: str, dt: str, q: Any, shapes: Any) -> None:
    m, feeds = binary_model(op, dt, shapes[0], shapes[1], q)
    assert_exact(ours(m, feeds), ort_run(m, feeds))


@pytest.mark.parametrize("op", ["QLinearAdd", "QLinearMul"])
def test_add_mul_every_pair_of_values(op: str) -> None:
    """Every int8 pair, with random scales and zero points."""
    ga, gb = np.meshgrid(np.arange(-128, 128), np.arange(-128, 128))
    a, b = ga.astype(np.int8).reshape(-1), gb.astype(np.int8).reshape(-1)
    for _ in range(6):
        q = [(float(10 ** RNG.uniform(-3, 0)), int(RNG.integers(-128, 128))) for _ in range(3)]
        m, _ = binary_model(op, "int8", a.shape, b.shape, q)
        feeds = {"a": a, "b": b}
        assert_exact(ours(m, feeds), ort_run(m, feeds))


POOLS = [dict(kernel_shape=[2, 2], strides=[2, 2]),
         dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1], count_include_pad=1),
         dict(kernel_shape=[3, 2], strides=[2, 1], pads=[0, 1, 2, 0]),
         dict(kernel_shape=[3, 3], strides=[2, 2], auto_pad="SAME_UPPER"),
         dict(kernel_shape=[7, 9]),  # the whole image: onnxruntime's global sum
         dict(kernel_shape=[4], strides=[3], pads=[1, 2])]


@pytest.mark.parametrize("dt", ["int8", "uint8"])
@pytest.mark.parametrize("q", UNARY_Q[:3])
@pytest.mark.parametrize("attrs", POOLS)
def test_average_pool(dt: str, q: Any, attrs: Dict[str, Any]) -> None:
    shape = (2, 3, 15) if len(attrs["kernel_shape"]) == 1 else (2, 3, 7, 9)
    m, feeds = unary_model("QLinearAveragePool", dt, q, shape, **attrs)
    assert_exact(ours(m, feeds), ort_run(m, feeds))


@pytest.mark.parametrize("dt", ["int8", "uint8"])
@pytest.mark.parametrize("q", UNARY_Q)
@pytest.mark.parametrize("shape", [(2, 5, 7, 7), (1, 3, 40), (1, 2, 3, 4, 5)])
def test_global_average_pool(dt: str, q: Any, shape: Sequence[int]) -> None:
    m, feeds = unary_model("QLinearGlobalAveragePool", dt, q, shape)
    assert_exact(ours(m, feeds), ort_run(m, feeds))


@pytest.mark.parametrize("dt", ["int8", "uint8"])
@pytest.mark.parametrize("q", [(0.05, 0, 1 / 256, -128), (0.2, 10, 1 / 256, -128),
                               (0.01, -3, 0.003, -100), (0.1, 0, 1 / 255, -128)])
@pytest.mark.parametrize("opset,axis,shape", [(13, -1, (3, 40)), (13, 1, (2, 10, 3, 3)),
                                              (12, 1, (2, 3, 5)), (13, 0, (7, 4))])
def test_softmax(dt: str, q: Any, opset: int, axis: int, shape: Sequence[int]) -> None:
    m, feeds = unary_model("QLinearSoftmax", dt, q, shape, opset=opset, axis=axis)
    assert_exact(ours(m, feeds), ort_run(m, feeds))


def test_compiled_c_matches_onnxruntime(tmp_path: Any) -> None:
    """A small graph of all eight: the generated C equals onnxruntime."""
    dt = "uint8"
    x = every_value(dt, (1, 4, 8, 8))
    inits = {"xs": sc(0.06), "xz": zp(dt, 120), "ys": sc(1 / 256), "yz": zp(dt, 0),
             "ls": sc(0.04), "lz": zp(dt, 130), "as": sc(0.09), "az": zp(dt, 100),
             "ms": sc(0.2), "mz": zp(dt, 128), "cs": sc(0.05), "cz": zp(dt, 128)}
    nodes = [helper.make_node("QLinearSigmoid", ["x", "xs", "xz", "ys", "yz"], ["s"], domain=MS),
             helper.make_node("QLinearLeakyRelu", ["x", "xs", "xz", "ls", "lz"], ["l"],
                              domain=MS, alpha=0.1),
             helper.make_node("QLinearAdd", ["s", "ys", "yz", "l", "ls", "lz", "as", "az"],
                              ["a"], domain=MS),
             helper.make_node("QLinearMul", ["a", "as", "az", "x", "xs", "xz", "ms", "mz"],
                              ["m"], domain=MS),
             helper.make_node("QLinearConcat", ["cs", "cz", "s", "ys", "yz", "a", "as", "az",
                                                "m", "ms", "mz"], ["c"], domain=MS, axis=1),
             helper.make_node("QLinearAveragePool", ["c", "cs", "cz", "ms", "mz"], ["p"],
                              domain=MS, kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("QLinearGlobalAveragePool", ["p", "ms", "mz", "ys", "yz"], ["g"],
                              domain=MS),
             helper.make_node("QLinearSoftmax", ["g", "ys", "yz", "ys", "yz"], ["y"],
                              domain=MS, opset=13, axis=1)]
    m = qmodel(nodes, {"x": x}, {"y": dt}, inits)
    want = ort_run(m, {"x": x})
    assert_exact(ours(m, {"x": x}), want)
    assert_exact(compiled(m, {"x": x}, "qop_graph", tmp_path), want)


# ---- errors -------------------------------------------------------------------------

def test_per_channel_parameters_are_refused_with_the_node_named() -> None:
    node = helper.make_node("QLinearSigmoid", ["x", "xs", "xz", "ys", "yz"], ["y"], domain=MS,
                            name="sig")
    x = every_value("int8", (1, 2, 3))
    m = qmodel([node], {"x": x}, {"y": "int8"},
               {"xs": np.array([0.1, 0.2], np.float32), "xz": np.array([0, 0], np.int8),
                "ys": sc(0.1), "yz": zp("int8", 0)})
    with pytest.raises(UnsupportedOperatorError,
                       match=r"node 0 'sig' \(QLinearSigmoid\).*X_scale.*per tensor.*got 2"):
        from_onnx(m)


def test_computed_scale_and_mixed_types_are_refused() -> None:
    node = helper.make_node("QLinearLeakyRelu", ["x", "xs", "xz", "ys", "yz"], ["y"], domain=MS,
                            name="lr")
    x = every_value("int8", (4,))
    m = qmodel([node], {"x": x, "xs": sc(0.1)}, {"y": "int8"},
               {"xz": zp("int8", 0), "ys": sc(0.1), "yz": zp("int8", 0)})
    with pytest.raises(UnsupportedOperatorError, match=r"'lr'.*X scale.*must be a constant"):
        from_onnx(m)
    m = qmodel([node], {"x": x}, {"y": "int8"},
               {"xs": sc(0.1), "xz": zp("int8", 0), "ys": sc(0.1), "yz": zp("uint8", 0)})
    with pytest.raises(ValueError, match=r"'lr'.*Y_zero_point is uint8, expected int8"):
        from_onnx(m)


def test_concat_input_count_and_unknown_operator() -> None:
    x = every_value("int8", (2, 2))
    node = helper.make_node("QLinearConcat", ["ys", "yz", "x", "xs"], ["y"], domain=MS, axis=0,
                            name="c")
    m = qmodel([node], {"x": x}, {"y": "int8"},
               {"ys": sc(0.1), "yz": zp("int8", 0), "xs": sc(0.1)})
    with pytest.raises(ValueError, match=r"'c' \(QLinearConcat\).*triples, got 4 inputs"):
        from_onnx(m)
    node = helper.make_node("QLinearReduceMean", ["x"], ["y"], domain=MS, name="r")
    m = qmodel([node], {"x": x}, {"y": "int8"}, {})
    with pytest.raises(UnsupportedOperatorError,
                       match=r"com\.microsoft\.QLinearReduceMean \(node: r\).*com\.microsoft\.QLinearSigmoid"):
        from_onnx(m)


def test_pool_attributes_that_are_not_mapped() -> None:
    for attrs, what in ((dict(kernel_shape=[2, 2], channels_last=1), "channels_last=1"),
                        (dict(kernel_shape=[2, 2], ceil_mode=1), "ceil_mode=1"),
                        (dict(kernel_shape=[2, 2, 2]), r"kernel_shape=\[2, 2, 2\]"),
                        (dict(kernel_shape=[2, 2], dilations=[2, 2]), r"dilations=\[2, 2\]")):
        m, _ = unary_model("QLinearAveragePool", "int8", UNARY_Q[0], (1, 2, 4, 4), **attrs)
        m.graph.node[0].name = "ap"
        with pytest.raises(UnsupportedOperatorError,
                           match=r"node 0 'ap' \(QLinearAveragePool\).*%s" % what):
            from_onnx(m)


def test_softmax_needs_its_opset_attribute() -> None:
    m, _ = unary_model("QLinearSoftmax", "int8", UNARY_Q[0], (2, 4), axis=1)
    with pytest.raises(ValueError, match=r"node 0 'n0' \(QLinearSoftmax\).*opset is missing"):
        from_onnx(m)


@pytest.mark.parametrize("act", ["QUInt8", "QInt8"])
def test_quantize_static_qoperator_model(act: str, tmp_path: Any) -> None:
    """A float model of sigmoid, residual add, mul by a constant, pools,
    concat and leaky relu, quantized by onnxruntime.quantization to the
    QOperator format (QuantizeLinear, eight com.microsoft operators,
    DequantizeLinear): our result equals onnxruntime's, bit for bit, on
    inputs in and beyond the calibration range."""
    q = pytest.importorskip("onnxruntime.quantization")
    rng = np.random.default_rng(3)
    w = numpy_helper.from_array(rng.uniform(-1, 1, (1, 4, 1, 1)).astype(np.float32), "w")
    nodes = [helper.make_node("Sigmoid", ["x"], ["s"]),
             helper.make_node("Add", ["x", "s"], ["a"]),
             helper.make_node("Mul", ["a", "w"], ["m"]),
             helper.make_node("AveragePool", ["m"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Concat", ["p", "p"], ["c"], axis=1),
             helper.make_node("LeakyRelu", ["c"], ["l"], alpha=0.1),
             helper.make_node("GlobalAveragePool", ["l"], ["y"])]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                     [1, 4, 8, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [w])
    fpath, qpath = str(tmp_path / "f.onnx"), str(tmp_path / "q.onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), fpath)

    base: Any = q.CalibrationDataReader

    class Reader(base):
        def __init__(self) -> None:
            self.it = iter([{"x": rng.uniform(-3, 3, (1, 4, 8, 8)).astype(np.float32)}
                            for _ in range(8)])

        def get_next(self) -> Optional[Dict[str, np.ndarray]]:
            return next(self.it, None)

    qt = getattr(q.QuantType, act)
    q.quantize_static(fpath, qpath, Reader(), quant_format=q.QuantFormat.QOperator,
                      activation_type=qt, weight_type=qt)
    m = onnx.load(qpath)
    ops = [n.op_type for n in m.graph.node if n.domain == MS]
    assert len(ops) == 7 and "QLinearAdd" in ops and "QLinearGlobalAveragePool" in ops
    for scale in (1.0, 3.0):
        x = (rng.uniform(-3, 3, (1, 4, 8, 8)) * scale).astype(np.float32)
        assert_exact(ours(m, {"x": x}), ort_run(m, {"x": x}))


def test_missing_operators_know_the_com_microsoft_operators() -> None:
    # the all-at-once support check runs before shapes and must accept the
    # com.microsoft operators the importer maps, naming only the others
    from tvmnode.frontend.onnx import supported_operators
    ops = supported_operators()
    assert "com.microsoft.QLinearAdd" in ops and "com.microsoft.QLinearSoftmax" in ops
    x = helper.make_tensor_value_info("x", TensorProto.UINT8, [1, 4])
    y = helper.make_tensor_value_info("y", TensorProto.UINT8, [1, 4])
    inits = [numpy_helper.from_array(np.array(0.1, np.float32), "s"),
             numpy_helper.from_array(np.array(128, np.uint8), "z")]
    nodes = [helper.make_node("QLinearSigmoid", ["x", "s", "z", "s", "z"], ["a"], name="sig",
                              domain="com.microsoft"),
             helper.make_node("QLinearFrob", ["a"], ["y"], name="frob", domain="com.microsoft")]
    g = helper.make_graph(nodes, "g", [x], [y], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13),
                                            helper.make_opsetid("com.microsoft", 1)])
    with pytest.raises(UnsupportedOperatorError) as e:
        from_onnx(m)
    assert [d["operator"] for d in e.value.missing] == ["com.microsoft.QLinearFrob"]  # type: ignore[attr-defined]


def test_shapes_after_com_microsoft_operators_are_inferred() -> None:
    """ONNX's shape inference knows no com.microsoft operator, so the Shape
    of their results is only known from the types the importer gives each
    node as it goes: Shape -> Slice -> Reshape folds, and QGemm follows."""
    dt = "int8"
    x = every_value(dt, (2, 3, 4, 6))
    inits = {"s1": sc(0.05), "z1": zp(dt, 3), "b": every_value(dt, (1, 3, 1, 1)),
             "s2": sc(0.04), "z2": zp(dt, -7), "s3": sc(0.07), "z3": zp(dt, 1),
             "s4": sc(0.03), "z4": zp(dt, -2), "s5": sc(0.02), "z5": zp(dt, 0),
             "w": every_value(dt, (4, 6)), "ws": sc(0.011), "wz": zp(dt, 0),
             "s6": sc(0.5), "z6": zp(dt, 5),
             "st": np.array([0], np.int64), "en": np.array([2], np.int64)}
    nodes = [
        helper.make_node("QLinearAdd", ["x", "s1", "z1", "b", "s2", "z2", "s3", "z3"], ["a"],
                         domain=MS),
        helper.make_node("QLinearAveragePool", ["a", "s3", "z3", "s4", "z4"], ["p"], domain=MS,
                         kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("QLinearGlobalAveragePool", ["p", "s4", "z4", "s5", "z5"], ["g"],
                         domain=MS),
        helper.make_node("QLinearConcat", ["s5", "z5", "g", "s5", "z5", "g", "s5", "z5"], ["c"],
                         domain=MS, axis=1),
        helper.make_node("Shape", ["c"], ["shp"]),
        helper.make_node("Slice", ["shp", "st", "en"], ["two"]),
        helper.make_node("Reshape", ["c", "two"], ["flat"]),
        helper.make_node("QGemm", ["flat", "s5", "z5", "w", "ws", "wz", "", "s6", "z6"], ["y"],
                         domain=MS, transB=1),
    ]
    m = qmodel(nodes, {"x": x}, {"y": dt}, inits)
    inferred = onnx.shape_inference.infer_shapes(m, data_prop=True)
    known = {vi.name for vi in inferred.graph.value_info
             if vi.type.tensor_type.HasField("shape")}
    assert "c" not in known and "flat" not in known  # ONNX alone cannot size them
    got = ours(m, {"x": x})
    assert got[0].shape == (2, 4)
    assert_exact(got, ort_run(m, {"x": x}))
