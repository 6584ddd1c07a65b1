"""tvmnode.frontend.from_onnx, the operators of frontend/onnx_ops.py: nodes
folded at import (Shape, Size, ConstantOfShape, Range and shape
arithmetic), and the operators composed of IR operators, each run through
the executor against onnxruntime (float32 within 1e-5 of the output's
range, integer and bool outputs exactly); and their error paths."""
from typing import Any, Dict, List, Optional, Sequence

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import tvmnode as tn  # noqa: E402
from tvmnode.frontend import ModelImportError, from_onnx  # noqa: E402
from tvmnode.frontend.onnx import UnsupportedOperatorError, supported_operators  # noqa: E402

RNG = np.random.default_rng(23)
_T = {"float32": TensorProto.FLOAT, "int32": TensorProto.INT32, "int64": TensorProto.INT64,
      "int8": TensorProto.INT8, "uint8": TensorProto.UINT8, "bool": TensorProto.BOOL}


def f32(*shape: int) -> np.ndarray:
    return RNG.uniform(-3, 3, size=shape).astype(np.float32)


def build(nodes: Sequence[Any], inputs: Dict[str, np.ndarray], outputs: Sequence[str],
          inits: Optional[Dict[str, np.ndarray]] = None, opset: int = 18) -> Any:
    """A model over `inputs` whose outputs' types ONNX's shape inference
    gives."""
    ins = [helper.make_tensor_value_info(k, _T[str(v.dtype)], list(v.shape))
           for k, v in inputs.items()]
    g = helper.make_graph(list(nodes), "g", ins, [],
                          [numpy_helper.from_array(np.asarray(a), k)
                           for k, a in (inits or {}).items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    m = onnx.shape_inference.infer_shapes(m)
    inferred = {vi.name: vi for vi in m.graph.value_info}
    del m.graph.value_info[:]
    m.graph.output.extend(inferred.get(k) or helper.make_tensor_value_info(
        k, TensorProto.FLOAT, None) for k in outputs)
    return m


def reference(m: Any, arrays: Dict[str, np.ndarray]) -> List[np.ndarray]:
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, arrays)


def compare(m: Any, arrays: Dict[str, np.ndarray]) -> List[np.ndarray]:
    """Run the model through from_onnx and the executor, and compare every
    output with onnxruntime's."""
    want = reference(m, arrays)
    got = tn.runtime.Executor(from_onnx(m))(*arrays.values())
    got = list(got) if isinstance(got, (list, tuple)) else [got]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g = np.asarray(g)
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, g.dtype, w.shape, w.dtype)
        if w.dtype.kind == "f":
            span = float(np.max(np.abs(w[np.isfinite(w)]), initial=1.0))
            np.testing.assert_allclose(g, w, rtol=0, atol=1e-5 * span)
        else:
            np.testing.assert_array_equal(g, w)
    return got


def one(op: str, arrays: Dict[str, np.ndarray], inits: Optional[Dict[str, np.ndarray]] = None,
        inputs: Optional[Sequence[str]] = None, outputs: Sequence[str] = ("y",),
        opset: int = 18, **attrs: Any) -> List[np.ndarray]:
    names = list(inputs) if inputs is not None else list(arrays) + list(inits or {})
    node = helper.make_node(op, names, list(outputs), name="n0", **attrs)
    return compare(build([node], arrays, outputs, inits, opset), arrays)


# ---- folding -----------------------------------------------------------------------

def test_shape_arithmetic_is_folded() -> None:
    """Shape -> Gather -> Mul -> Concat -> Reshape: the shape is read at
    import, and the module holds the reshape only."""
    x = f32(2, 3, 4)
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Gather", ["s", "i0"], ["d0"], axis=0),
             helper.make_node("Slice", ["s", "one", "three"], ["d12"]),
             helper.make_node("ReduceProd", ["d12"], ["d"], keepdims=1),
             helper.make_node("Concat", ["d0", "d"], ["shape"], axis=0),
             helper.make_node("Reshape", ["x", "shape"], ["y"])]
    inits = {"i0": np.array([0], np.int64), "one": np.array([1], np.int64),
             "three": np.array([3], np.int64)}
    m = build(nodes, {"x": x}, ["y"], inits)
    (y,) = compare(m, {"x": x})
    assert y.shape == (2, 12)
    text = from_onnx(m).astext()
    assert "reshape" in text and "take" not in text and "concatenate" not in text


def test_size_constant_of_shape_range_fold() -> None:
    x = f32(3, 5)
    nodes = [helper.make_node("Size", ["x"], ["n"]),
             helper.make_node("Shape", ["x"], ["s"], start=-1),
             helper.make_node("ConstantOfShape", ["s"], ["c"],
                              value=numpy_helper.from_array(np.array([2.5], np.float32))),
             helper.make_node("Cast", ["n"], ["nf"], to=TensorProto.FLOAT),
             helper.make_node("Range", ["zero", "nf", "three"], ["r"]),
             helper.make_node("Add", ["x", "c"], ["y"])]
    inits = {"zero": np.array(0, np.float32), "three": np.array(3, np.float32)}
    got = compare(build(nodes, {"x": x}, ["y", "n", "r"], inits), {"x": x})
    assert int(got[1]) == 15 and got[1].shape == ()
    np.testing.assert_array_equal(got[2], np.arange(0, 15, 3, dtype=np.float32))


def test_range_of_computed_inputs_is_unsupported() -> None:
    a = np.array(4, np.int64)
    m = build([helper.make_node("Range", ["zero", "a", "one"], ["y"], name="r0")], {"a": a},
              ["y"], {"zero": np.array(0, np.int64), "one": np.array(1, np.int64)})
    with pytest.raises(UnsupportedOperatorError, match=r"node 0 'r0' \(Range\).*constants"):
        from_onnx(m)


# ---- comparisons, logic, Where -----------------------------------------------------------

@pytest.mark.parametrize("op", ["Equal", "Greater", "Less", "GreaterOrEqual", "LessOrEqual"])
@pytest.mark.parametrize("dtype", ["float32", "int32", "int64"])
def test_comparisons(op: str, dtype: str) -> None:
    a = RNG.integers(-3, 4, (3, 4)).astype(dtype)
    b = RNG.integers(-3, 4, (4,)).astype(dtype)
    if dtype == "float32":  # neighbours and denormals differ too
        a[0, :3] = [1e-45, np.nextafter(np.float32(1), np.float32(2)), -0.0]
        b[:3] = [0.0, 1.0, 0.0]
    one(op, {"a": a, "b": b})


@pytest.mark.parametrize("op", ["And", "Or", "Xor"])
def test_logic(op: str) -> None:
    a = RNG.integers(0, 2, (2, 3, 4)).astype(bool)
    b = RNG.integers(0, 2, (3, 1)).astype(bool)
    one(op, {"a": a, "b": b})


def test_not_and_where() -> None:
    c = RNG.integers(0, 2, (2, 5)).astype(bool)
    one("Not", {"c": c})
    one("Where", {"c": c, "p": f32(2, 5), "q": f32(5)})
    one("Where", {"c": c, "p": RNG.integers(-9, 9, (2, 5)), "q": RNG.integers(-9, 9, (2, 1))})


# ---- activations and elementwise ----------------------------------------------------------

@pytest.mark.parametrize("op,attrs", [
    ("Elu", {"alpha": 0.7}), ("Selu", {}), ("Celu", {"alpha": 1.5}),
    ("HardSigmoid", {"alpha": 0.3, "beta": 0.4}), ("Softplus", {}), ("Softsign", {}),
    ("ThresholdedRelu", {"alpha": 0.5}), ("Reciprocal", {}), ("Sign", {}),
    ("LogSoftmax", {"axis": 0}), ("Hardmax", {"axis": 1})])
def test_float_unary(op: str, attrs: Dict[str, Any]) -> None:
    x = f32(3, 4, 5)
    x[0, 0, :3] = [0.0, 0.5, 40.0]  # a threshold itself, a large value
    one(op, {"x": x}, **attrs)


def test_opset11_coerced_softmax_axis() -> None:
    x = f32(2, 3, 4)
    one("LogSoftmax", {"x": x}, opset=11, axis=1)
    one("Hardmax", {"x": x}, opset=11, axis=1)


def test_prelu_and_variadic() -> None:
    x = f32(2, 3, 4)
    one("PRelu", {"x": x}, {"slope": f32(3, 1)})
    a, b, c = f32(3, 4), f32(4), f32(1, 4)
    one("Mean", {"a": a, "b": b, "c": c})
    one("Sum", {"a": a, "b": b, "c": c})


@pytest.mark.parametrize("e", [np.array(3, np.float32), np.array(-2, np.float32),
                               np.array([0, 1, 2, 5], np.float32),
                               np.array(0.5, np.float32), np.array(1.7, np.float32)])
def test_pow_constant_exponent(e: np.ndarray) -> None:
    x = f32(3, 4)
    if float(e.reshape(-1)[0]) % 1:
        x = np.abs(x) + 0.1
    one("Pow", {"x": x}, {"e": e})


def test_int64_arithmetic() -> None:
    a = RNG.integers(-1000, 1000, (2, 3))
    b = RNG.integers(-1000, 1000, (3,))
    for op in ("Add", "Sub", "Mul", "Max", "Min"):
        one(op, {"a": a, "b": b})
    one("Neg", {"a": a})
    u = RNG.integers(0, 256, (4,), dtype=np.uint8)
    v = RNG.integers(0, 256, (4,), dtype=np.uint8)
    one("Max", {"u": u, "v": v})


# ---- losses and gathers ---------------------------------------------------------------------

@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("weighted", [False, True])
def test_negative_log_likelihood_loss(reduction: str, weighted: bool) -> None:
    x = f32(3, 5, 2)
    t = RNG.integers(0, 5, (3, 2))
    t[0, 0] = -1
    arrays = {"x": x, "t": t}
    if weighted:
        arrays["w"] = np.abs(f32(5)) + 0.1
    one("NegativeLogLikelihoodLoss", arrays, reduction=reduction, ignore_index=-1)


@pytest.mark.parametrize("reduction", ["none", "mean"])
def test_softmax_cross_entropy_loss(reduction: str) -> None:
    x = f32(4, 3, 2)
    t = RNG.integers(0, 3, (4, 2))
    one("SoftmaxCrossEntropyLoss", {"x": x, "t": t}, {"w": np.abs(f32(3)) + 0.1},
        outputs=("y", "logp"), reduction=reduction)


def test_gather_elements_negative_indices() -> None:
    x = f32(3, 4)
    i = RNG.integers(-4, 4, (3, 2))
    one("GatherElements", {"x": x, "i": i}, axis=1)
    one("GatherElements", {"x": x}, {"i": RNG.integers(-3, 3, (2, 4))}, axis=0)


def test_one_hot() -> None:
    i = RNG.integers(-5, 5, (2, 3))
    one("OneHot", {"i": i}, {"d": np.array(5, np.int64),
                             "v": np.array([-1.0, 2.0], np.float32)}, axis=1)


# ---- normalization and reductions -------------------------------------------------------------

def test_layer_and_instance_normalization() -> None:
    x = f32(2, 3, 4)
    one("LayerNormalization", {"x": x, "s": f32(3, 4), "b": f32(3, 4)}, axis=1,
        epsilon=1e-3, outputs=("y", "mean", "inv"), opset=17)
    one("InstanceNormalization", {"x": x, "s": f32(3), "b": f32(3)}, epsilon=1e-4)


@pytest.mark.parametrize("op", ["ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSum",
                                "ReduceLogSumExp"])
@pytest.mark.parametrize("keepdims", [0, 1])
def test_composed_reductions(op: str, keepdims: int) -> None:
    x = np.abs(f32(2, 3, 4)) + 0.1
    one(op, {"x": x}, {"a": np.array([0, -1], np.int64)}, keepdims=keepdims)
    one(op, {"x": x}, keepdims=keepdims)


@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_reduce_prod(dtype: str) -> None:
    # |product of 24| <= 2^24 whatever the generator's state: no int32 wrap
    x = (f32(2, 3, 4) if dtype == "float32" else RNG.integers(-2, 3, (2, 3, 4))).astype(dtype)
    one("ReduceProd", {"x": x}, {"a": np.array([1, -1], np.int64)}, keepdims=0)
    one("ReduceProd", {"x": x}, keepdims=1)


def test_global_max_pool() -> None:
    one("GlobalMaxPool", {"x": f32(1, 3, 4, 5)})


# ---- data movement ---------------------------------------------------------------------------

def test_split_expand_cast_like() -> None:
    x = f32(2, 7)
    one("Split", {"x": x}, {"s": np.array([2, 5], np.int64)}, outputs=("a", "b"), axis=1)
    one("Split", {"x": x}, outputs=("a", "b", "c"), axis=1, num_outputs=3)
    one("Expand", {"x": f32(3, 1)}, {"s": np.array([2, 1, 4], np.int64)})
    one("CastLike", {"x": x, "like": np.zeros(1, np.int32)})


@pytest.mark.parametrize("upper", [0, 1])
@pytest.mark.parametrize("k", [-1, 0, 2])
def test_trilu_int64(upper: int, k: int) -> None:
    x = RNG.integers(-100, 100, (2, 3, 4))
    one("Trilu", {"x": x}, {"k": np.array(k, np.int64)}, upper=upper)


@pytest.mark.parametrize("exclusive", [0, 1])
@pytest.mark.parametrize("reverse", [0, 1])
def test_cumsum(exclusive: int, reverse: int) -> None:
    one("CumSum", {"x": f32(3, 4, 2)}, {"a": np.array(1, np.int32)}, exclusive=exclusive,
        reverse=reverse)


# ---- rounding, float classes, ArgMax, Dropout, GatherND -------------------------------------

@pytest.mark.parametrize("op", ["Floor", "Ceil", "Round"])
def test_rounding(op: str) -> None:
    x = np.concatenate([f32(20) * 10, np.array(
        [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, -0.0, 3e9, -7e12, 2.0 ** 70, -2.0 ** 90, 1e-40,
         -1e-40, 8388607.5, np.inf, -np.inf], np.float32)])
    one(op, {"x": x})


def test_is_inf_is_nan_shrink() -> None:
    x = np.array([-1.5, np.nan, np.inf, 2.0, -np.inf, 0.0, 3.4e38, -3.4e38], np.float32)
    one("IsInf", {"x": x})
    one("IsInf", {"x": x}, detect_negative=0)
    one("IsInf", {"x": x}, detect_positive=0)
    one("IsInf", {"x": x}, detect_positive=0, detect_negative=0)
    one("IsNaN", {"x": x})
    z = f32(4, 5)
    one("Shrink", {"x": z}, lambd=1.0, bias=0.5)


@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
def test_select_last_index(op: str) -> None:
    x = RNG.integers(0, 3, (3, 5)).astype(np.float32)  # ties
    one(op, {"x": x}, axis=1, select_last_index=1)
    one(op, {"x": x}, axis=0, keepdims=0, select_last_index=1)


def test_dropout_mask_and_zero_ratio_training() -> None:
    x = f32(2, 3)
    one("Dropout", {"x": x}, outputs=("y", "mask"))
    one("Dropout", {"x": x}, {"r": np.array(0.0, np.float32), "t": np.array(True)},
        outputs=("y", "mask"))


def test_gather_nd() -> None:
    x = f32(3, 4, 2)
    one("GatherND", {"x": x, "i": RNG.integers(-3, 3, (5, 1))})
    one("GatherND", {"x": x, "i": np.stack([RNG.integers(0, 3, 6), RNG.integers(-4, 4, 6)], 1)})


# ---- Resize ---------------------------------------------------------------------------------

@pytest.mark.parametrize("attrs", [
    dict(mode="nearest"), dict(mode="nearest", nearest_mode="floor",
                               coordinate_transformation_mode="asymmetric"),
    dict(mode="linear"), dict(mode="linear", coordinate_transformation_mode="align_corners"),
    dict(mode="cubic"), dict(mode="cubic", cubic_coeff_a=-0.5, exclude_outside=1),
    dict(mode="linear", antialias=1), dict(mode="cubic", antialias=1)])
@pytest.mark.parametrize("scales", [[1, 1, 0.6, 0.75], [1, 1, 2.0, 1.5]])  # integer sizes
def test_resize_scales(attrs: Dict[str, Any], scales: List[float]) -> None:
    one("Resize", {"x": f32(1, 2, 5, 4)},
        {"roi": np.zeros(0, np.float32), "s": np.array(scales, np.float32)}, opset=18, **attrs)


def test_resize_sizes_axes_crop_and_int8_nearest() -> None:
    x = f32(1, 2, 4, 6)
    one("Resize", {"x": x}, {"roi": np.zeros(0, np.float32), "s": np.zeros(0, np.float32),
                             "z": np.array([3, 9], np.int64)},
        mode="linear", axes=[2, 3], keep_aspect_ratio_policy="not_larger")
    one("Resize", {"x": x}, {"roi": np.array([0.2, 0.1, 0.9, 1.2], np.float32),
                             "s": np.zeros(0, np.float32), "z": np.array([5, 5], np.int64)},
        mode="linear", axes=[2, 3], coordinate_transformation_mode="tf_crop_and_resize",
        extrapolation_value=7.0)
    q = RNG.integers(-128, 128, (1, 1, 3, 3), dtype=np.int8)
    one("Resize", {"x": q}, {"roi": np.zeros(0, np.float32),
                             "s": np.array([1, 1, 2, 2], np.float32)}, mode="nearest")


_CTMS = ["half_pixel", "asymmetric", "pytorch_half_pixel", "align_corners",
         "half_pixel_symmetric", "tf_crop_and_resize"]


def _every_value(dt: str, shape: Sequence[int]) -> np.ndarray:
    """Every value of the 8-bit type, shuffled (its own generator, leaving
    the module's stream to the other tests), repeated to fill `shape`."""
    info = np.iinfo(dt)
    n = int(np.prod(shape))
    v = np.resize(np.arange(info.min, info.max + 1), max(n, 256))
    assert n >= 256
    return np.random.default_rng(n).permutation(v)[:n].astype(dt).reshape(shape)


@pytest.mark.parametrize("dt", ["int8", "uint8"])
@pytest.mark.parametrize("ctm", _CTMS)
@pytest.mark.parametrize("shape,scales,sizes", [
    ((1, 4, 8, 8), [1, 1, 2.0, 2.0], None), ((2, 2, 8, 8), [1, 1, 0.5, 0.75], None),
    ((1, 2, 9, 15), [1, 1, 1.7, 0.6], None), ((1, 2, 16, 8), [1, 1, 1.0, 2.5], None),
    ((1, 1, 16, 16), None, [1, 1, 5, 23]), ((1, 1, 16, 16), None, [1, 1, 1, 16]),
    ((16, 16), [3.3, 0.4], None), ((1, 8, 8, 4), [1, 2.0, 1.5, 1], None),
    ((2, 9, 13, 2), [1, 0.6, 1.7, 1], None), ((1, 16, 16, 1), None, [1, 5, 23, 1]),
    ((1, 16, 8, 2), [1, 0.5, 1.0, 1], None)])
def test_resize_linear_8bit(dt: str, ctm: str, shape: Sequence[int],
                            scales: Optional[List[float]], sizes: Optional[List[int]]) -> None:
    """int8/uint8 linear resize exactly as onnxruntime (NCHW, and NHWC where
    the last axis keeps its size and axis 1 does not), whose result is the
    same without and with its graph optimisations."""
    x = _every_value(dt, shape)
    r = len(shape)
    per = scales if scales is not None else sizes
    assert per is not None
    nhwc = r == 4 and per[3] == 1 and per[1] != 1 and per[1] != shape[1]
    lo, hi = np.zeros(r, np.float32), np.ones(r, np.float32)
    for a, (b, e) in zip((1, 2) if nhwc else (r - 2, r - 1), ((0.2, 0.9), (-0.1, 1.3))):
        lo[a], hi[a] = b, e
    roi = np.concatenate([lo, hi])
    inits = {"roi": roi if ctm == "tf_crop_and_resize" else np.zeros(0, np.float32),
             "s": np.array(scales or [], np.float32)}
    if sizes is not None:
        inits["z"] = np.array(sizes, np.int64)
    node = helper.make_node("Resize", ["x"] + list(inits), ["y"], mode="linear",
                            coordinate_transformation_mode=ctm, extrapolation_value=-3.7)
    m = build([node], {"x": x}, ["y"], inits, opset=19)
    levels = []
    for level in (ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
                  ort.GraphOptimizationLevel.ORT_ENABLE_ALL):
        so = ort.SessionOptions()
        so.intra_op_num_threads, so.graph_optimization_level = 1, level
        sess = ort.InferenceSession(m.SerializeToString(), so,
                                    providers=["CPUExecutionProvider"])
        levels.append(sess.run(None, {"x": x})[0])
    np.testing.assert_array_equal(levels[0], levels[1])
    got = np.asarray(tn.runtime.Executor(from_onnx(m))(x))
    assert got.dtype == levels[0].dtype and got.shape == levels[0].shape
    np.testing.assert_array_equal(got, levels[0])


def test_resize_linear_8bit_rejects() -> None:
    q = _every_value("int8", (4, 4, 4, 4))
    for s in ([1, 2, 1, 2], [2, 1, 1, 1]):
        m = build([helper.make_node("Resize", ["x", "", "s"], ["y"], mode="linear")],
                  {"x": q}, ["y"], {"s": np.array(s, np.float32)})
        with pytest.raises(UnsupportedOperatorError, match="last two axes"):
            from_onnx(m)
    m = build([helper.make_node("Resize", ["x", "", "s"], ["y"], mode="cubic")],
              {"x": q}, ["y"], {"s": np.array([1, 1, 2, 2], np.float32)})
    with pytest.raises((UnsupportedOperatorError, ModelImportError), match="float32"):
        from_onnx(m)


@pytest.mark.parametrize("dt", ["int8", "uint8"])
def test_quantize_constant_tile_rounds_half_to_even(dt: str) -> None:
    """A constant tiled (folded at import) then quantized: ties round to
    even as onnxruntime's QuantizeLinear does."""
    s = np.array([0.25, 0.5, 0.125], np.float32)
    c = ((np.arange(-9, 9).reshape(6, 3) + 0.5) * s).astype(np.float32)  # every one a tie
    z = np.array(3 if dt == "int8" else 130, dt)
    nodes = [helper.make_node("Tile", ["c", "reps"], ["t"]),
             helper.make_node("QuantizeLinear", ["t", "s1", "z"], ["q"]),
             helper.make_node("QuantizeLinear", ["t", "s", "zc"], ["qc"], axis=1),
             helper.make_node("DequantizeLinear", ["q", "s1", "z"], ["d"]),
             helper.make_node("Add", ["x", "d"], ["y"])]
    inits: Dict[str, np.ndarray] = {"c": c, "reps": np.array([2, 1], np.int64), "s1": np.array(0.25, np.float32),
             "z": z, "s": s, "zc": np.full(3, z, dt)}
    x = np.linspace(-2, 2, 36, dtype=np.float32).reshape(12, 3)
    compare(build(nodes, {"x": x}, ["y", "q", "qc"], inits, opset=13), {"x": x})


# ---- ConvTranspose --------------------------------------------------------------------------

@pytest.mark.parametrize("attrs", [
    dict(), dict(strides=[2, 3], pads=[1, 0, 2, 1]), dict(strides=[2, 2], output_padding=[1, 0]),
    dict(dilations=[2, 1], group=2), dict(strides=[2, 2], auto_pad="SAME_UPPER"),
    dict(strides=[3, 2], output_shape=[10, 8]), dict(strides=[2, 2], pads=[3, 1, 2, 3])])
def test_conv_transpose(attrs: Dict[str, Any]) -> None:
    x, w, b = f32(1, 4, 3, 3), f32(4, 3, 3, 3), f32(3 * attrs.get("group", 1))
    if attrs.get("group") == 2:
        w = f32(4, 3, 3, 3)
    one("ConvTranspose", {"x": x, "w": w}, {"b": b}, **attrs)


def test_conv_transpose_1d_constant_weight() -> None:
    one("ConvTranspose", {"x": f32(2, 3, 5)}, {"w": f32(3, 2, 4)}, strides=[2], pads=[1, 2])


# ---- windows, Compress, Pad modes, MVN, LRN, scatters ----------------------------------------

@pytest.mark.parametrize("op", ["HannWindow", "HammingWindow", "BlackmanWindow"])
@pytest.mark.parametrize("periodic", [0, 1])
def test_windows_fold(op: str, periodic: int) -> None:
    x = f32(10)
    m = build([helper.make_node(op, ["n"], ["w"], periodic=periodic),
               helper.make_node("Mul", ["x", "w"], ["y"])], {"x": x}, ["y"],
              {"n": np.array(10, np.int32)}, opset=17)
    compare(m, {"x": x})


def test_compress() -> None:
    x = f32(3, 4)
    one("Compress", {"x": x}, {"c": np.array([True, False, True])}, axis=0)
    one("Compress", {"x": x}, {"c": np.array([False, True, True, False, True])})


@pytest.mark.parametrize("mode", ["edge", "reflect", "wrap"])
def test_pad_modes(mode: str) -> None:
    x = RNG.integers(-50, 50, (3, 4)).astype(np.int32)
    one("Pad", {"x": x}, {"p": np.array([1, 2, 2, 3], np.int64)}, mode=mode)
    one("Pad", {"x": f32(2, 3, 4)}, {"p": np.array([2, 1], np.int64),
                                     "v": np.array(0, np.float32), "a": np.array([-1], np.int64)},
        mode=mode)


def test_mvn_lrn() -> None:
    x = f32(2, 5, 3, 3)
    one("MeanVarianceNormalization", {"x": x}, opset=13)
    one("LRN", {"x": x}, size=3, alpha=0.01, beta=0.6, bias=1.5)
    one("LRN", {"x": x}, size=5)


@pytest.mark.parametrize("reduction", ["none", "add"])
def test_scatter_constant_indices(reduction: str) -> None:
    x = f32(3, 4)
    i = np.array([[1, -1, 1], [0, 2, 0]], np.int64)
    one("ScatterElements", {"x": x, "u": f32(2, 3)}, {"i": i}, inputs=["x", "i", "u"], axis=1,
        reduction=reduction)
    j = np.array([[2], [0], [2]], np.int64)
    one("ScatterND", {"x": x, "u": f32(3, 4)}, {"i": j}, inputs=["x", "i", "u"],
        reduction=reduction)


# ---- Mod, DynamicQuantizeLinear -------------------------------------------------------------

@pytest.mark.parametrize("dtype,fmod", [("int32", 0), ("int64", 1), ("int8", 0),
                                        ("uint8", 0), ("float32", 1)])
def test_mod(dtype: str, fmod: int) -> None:
    lo = 0 if dtype == "uint8" else -100
    a = RNG.integers(lo, 100, (3, 5)).astype(dtype)
    b = RNG.integers(1, 9, (5,)).astype(dtype)
    if lo:
        b[::2] = -b[::2]
    if dtype == "float32":
        a, b = a * np.float32(0.37), b * np.float32(1.3)
    one("Mod", {"a": a, "b": b}, fmod=fmod)


def test_dynamic_quantize_linear() -> None:
    one("DynamicQuantizeLinear", {"x": f32(3, 4)}, outputs=("y", "s", "z"))
    one("DynamicQuantizeLinear", {"x": np.abs(f32(6)) + 0.5}, outputs=("y", "s", "z"))


# ---- TopK -----------------------------------------------------------------------------------

@pytest.mark.parametrize("largest", [0, 1])
def test_top_k(largest: int) -> None:
    x = RNG.integers(-5, 5, (3, 6)).astype(np.float32)  # ties
    one("TopK", {"x": x}, {"k": np.array([4], np.int64)}, outputs=("v", "i"),
        largest=largest)
    one("TopK", {"x": f32(5, 3)}, {"k": np.array([2], np.int64)}, outputs=("v", "i"), axis=0,
        largest=largest)


# ---- 1-d pools -------------------------------------------------------------------------------

@pytest.mark.parametrize("op", ["MaxPool", "AveragePool"])
def test_pool_1d(op: str) -> None:
    x = f32(2, 3, 9)
    one(op, {"x": x}, kernel_shape=[3])
    one(op, {"x": x}, kernel_shape=[2], strides=[2], pads=[1, 0])


# ---- 1-d convolution -------------------------------------------------------------------------

@pytest.mark.parametrize("attrs", [{}, {"pads": [2, 1], "strides": [2]},
                                   {"dilations": [2], "pads": [1, 3]},
                                   {"auto_pad": "SAME_UPPER", "strides": [2]},
                                   {"group": 2, "auto_pad": "SAME_LOWER", "strides": [3]},
                                   {"auto_pad": "VALID", "kernel_shape": [3]}])
@pytest.mark.parametrize("bias", [False, True])
def test_conv_1d(attrs: Dict[str, Any], bias: bool) -> None:
    x = f32(2, 4, 11)
    cin = 4 // int(attrs.get("group", 1))
    inits = {"w": f32(6, cin, 3)}
    if bias:
        inits["b"] = f32(6)
    one("Conv", {"x": x}, inits, **attrs)


def test_conv_1d_computed_weight_and_bad_weight() -> None:
    x, w = f32(1, 2, 8), f32(3, 2, 5)
    one("Conv", {"x": x, "w": w}, pads=[2, 2])
    with pytest.raises(ModelImportError, match=r"'c' \(Conv\).*pads=\[1\] needs 2 values"):
        from_onnx(build([helper.make_node("Conv", ["x", "w"], ["y"], name="c", pads=[1])],
                        {"x": x}, ["y"], {"w": w}))
    with pytest.raises(ModelImportError, match=r"'c' \(Conv\).*weight must be 3-d"):
        from_onnx(build([helper.make_node("Conv", ["x", "w"], ["y"], name="c")],
                        {"x": x}, ["y"], {"w": f32(3, 2, 1, 5)}))


# ---- hyperbolic functions, Erf ---------------------------------------------------------------

@pytest.mark.parametrize("op", ["Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Erf"])
def test_hyperbolic_and_erf(op: str) -> None:
    x = f32(4, 6)
    if op == "Acosh":
        x = np.abs(x) + 1
    elif op == "Atanh":
        x = x / np.float32(3.1)
    one(op, {"x": x}, opset=13)


# ---- trigonometric functions -----------------------------------------------------------------

@pytest.mark.parametrize("op", ["Sin", "Cos", "Tan", "Asin", "Acos", "Atan"])
def test_trigonometric(op: str) -> None:
    if op in ("Asin", "Acos"):
        x = np.concatenate([RNG.uniform(-1, 1, 40), [-1.0, 1.0, 0.0, 0.999]]).astype(np.float32)
    elif op == "Atan":
        x = np.concatenate([f32(40) * 5, np.array([0.0, 0.41, 1.0, -1.0, 1e6, np.inf, -np.inf],
                                                  np.float32)])
    elif op == "Tan":
        x = RNG.uniform(-1.4, 1.4, 40).astype(np.float32)
    else:
        x = np.concatenate([f32(40) * 30, np.array([0.0, np.pi / 2, -np.pi], np.float32)])
    one(op, {"x": x}, opset=13)


# ---- ReverseSequence -------------------------------------------------------------------------

def test_reverse_sequence() -> None:
    x = RNG.integers(-9, 9, (4, 3, 2)).astype(np.int32)
    one("ReverseSequence", {"x": x}, {"n": np.array([4, 0, 2], np.int64)}, opset=13)
    one("ReverseSequence", {"x": f32(3, 4)}, {"n": np.array([1, 2, 3], np.int64)},
        time_axis=1, batch_axis=0, opset=13)


# ---- errors -----------------------------------------------------------------------------------

def test_bad_attributes_name_node_attribute_and_values() -> None:
    node = helper.make_node("SoftmaxCrossEntropyLoss", ["x", "t"], ["y"], name="loss",
                            reduction="average")
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                      [2, 3]),
                                        helper.make_tensor_value_info("t", TensorProto.INT64,
                                                                      [2])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    with pytest.raises(UnsupportedOperatorError,
                       match=r"node 0 'loss' \(SoftmaxCrossEntropyLoss\): attribute "
                             r"reduction='average' is not supported \('none' or 'sum' or "
                             r"'mean'\)"):
        from_onnx(m)
    node = helper.make_node("LayerNormalization", ["x", "s"], ["y"], name="ln", stash_type=0)
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                      [2, 3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
                          [numpy_helper.from_array(f32(3), "s")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(UnsupportedOperatorError, match=r"'ln' \(LayerNormalization\): "
                                                       r"stash_type 0 is not supported \(1\)"):
        from_onnx(m)


def test_bad_split_and_celu_alpha() -> None:
    node = helper.make_node("Split", ["x", "s"], ["a", "b"], name="sp", axis=1)
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                      [2, 7])],
                          [helper.make_tensor_value_info("a", TensorProto.FLOAT, None),
                           helper.make_tensor_value_info("b", TensorProto.FLOAT, None)],
                          [numpy_helper.from_array(np.array([3, 3], np.int64), "s")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    with pytest.raises(ModelImportError, match=r"'sp' \(Split\): split \[3, 3\] does not cut "
                                               r"the 7 entries into 2 outputs"):
        from_onnx(m)
    node = helper.make_node("Celu", ["x"], ["y"], name="c", alpha=0.0)
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                      [2, 7])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 7])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    with pytest.raises(ModelImportError, match=r"'c' \(Celu\): attribute alpha must not be 0"):
        from_onnx(m)


def test_supported_operators_lists_the_new_operators() -> None:
    ops = supported_operators()
    for op in ("Shape", "LogSoftmax", "NegativeLogLikelihoodLoss", "GatherElements", "Where",
               "LayerNormalization", "Trilu", "Split"):
        assert op in ops


def test_shapes_data_propagation_misses_are_inferred_per_node() -> None:
    """At opset 12 ONNX's data propagation does not follow Slice, so a
    Reshape to a shape sliced from a Shape has no inferred type; the
    importer types each node as it goes from the values it has folded, and
    the Shape of that result folds too."""
    def c(name: str, v: Sequence[int]) -> Any:
        return helper.make_node("Constant", [], [name],
                                value=numpy_helper.from_array(np.array(v, np.int64)))
    nodes = [c("st", [0]), c("en", [2]), c("ax", [0]), c("m1", [-1]),
             helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Slice", ["s", "st", "en", "ax"], ["s2"]),
             helper.make_node("Concat", ["s2", "m1"], ["s3"], axis=0),
             helper.make_node("Reshape", ["x", "s3"], ["r"]),
             helper.make_node("Transpose", ["r"], ["t"], perm=[0, 2, 1]),
             helper.make_node("Shape", ["t"], ["ts"]),
             helper.make_node("Gather", ["ts", "m1"], ["last"], axis=0),
             helper.make_node("Concat", ["m1", "last"], ["s4"], axis=0),
             helper.make_node("Reshape", ["t", "s4"], ["y"])]
    x = f32(2, 6, 1, 4)
    m = build(nodes, {"x": x}, ["y"], opset=12)
    inferred = onnx.shape_inference.infer_shapes(m, data_prop=True)
    known = {vi.name for vi in inferred.graph.value_info
             if vi.type.tensor_type.HasField("shape")}
    assert "r" not in known  # ONNX alone cannot size it
    got = compare(m, {"x": x})
    assert got[0].shape == (8, 6)


def test_transpose_and_tile_of_constants_fold() -> None:
    """Pad's pads computed by Transpose and Tile of constants (as exporters
    write a (begin, end) pair table) fold, so the Pad sees constants."""
    x = f32(2, 3, 5)
    table = np.array([[0, 0, 1], [0, 0, 2]], np.int64)  # begins, ends per axis
    nodes = [helper.make_node("Transpose", ["tab"], ["tt"], perm=[1, 0]),
             helper.make_node("Transpose", ["tt"], ["back"]),  # default perm: reversed
             helper.make_node("Reshape", ["back", "flat"], ["pads"]),
             helper.make_node("Tile", ["one", "reps"], ["ones"]),
             helper.make_node("Mul", ["pads", "ones"], ["p2"]),
             helper.make_node("Pad", ["x", "p2"], ["y"], mode="reflect")]
    inits = {"tab": table, "flat": np.array([-1], np.int64),
             "one": np.array([1], np.int64), "reps": np.array([6], np.int64)}
    got = compare(build(nodes, {"x": x}, ["y"], inits), {"x": x})
    assert got[0].shape == (2, 3, 8)


# ---- 3-d convolution -------------------------------------------------------------------------

@pytest.mark.parametrize("attrs", [{}, {"pads": [1, 0, 2, 1, 2, 0], "strides": [2, 1, 2]},
                                   {"dilations": [2, 1, 1], "pads": [2, 1, 1, 2, 1, 1]},
                                   {"group": 2, "auto_pad": "SAME_UPPER", "strides": [1, 2, 2]},
                                   {"auto_pad": "SAME_LOWER", "kernel_shape": [3, 2, 3]}])
@pytest.mark.parametrize("bias", [False, True])
def test_conv_3d(attrs: Dict[str, Any], bias: bool) -> None:
    x = f32(2, 4, 6, 7, 5)
    cin = 4 // int(attrs.get("group", 1))
    inits = {"w": f32(6, cin, 3, 2, 3)}
    if bias:
        inits["b"] = f32(6)
    one("Conv", {"x": x}, inits, **attrs)


def test_conv_3d_errors() -> None:
    x = f32(1, 2, 3, 4, 4)
    with pytest.raises(ModelImportError, match=r"'c' \(Conv\).*strides=\[1, 1\] needs 3 values "
                                               r"for a 3-d window"):
        from_onnx(build([helper.make_node("Conv", ["x", "w"], ["y"], name="c", strides=[1, 1])],
                        {"x": x}, ["y"], {"w": f32(3, 2, 1, 3, 3)}))
    with pytest.raises(ModelImportError, match=r"'c' \(Conv\).*deeper than the padded input"):
        from_onnx(build([helper.make_node("Conv", ["x", "w"], ["y"], name="c")],
                        {"x": x}, ["y"], {"w": f32(3, 2, 5, 3, 3)}))
