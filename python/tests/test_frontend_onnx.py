"""tvmnode.frontend.from_onnx: small models built with onnx.helper, one per
mapped operator (and per opset where the operator changed), run through
the executor against numpy; the errors (unsupported operators, corrupt
files, bad initializers, dynamic shapes); round trips through the text
format and JSON; and the ONNX backend node tests (libonnx-testdata)."""
import os
import sys
from typing import Any, Dict, List, Optional, Sequence

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import tvmnode as tn  # noqa: E402
from tvmnode import ir  # noqa: E402
from tvmnode.frontend import ModelImportError, from_onnx  # noqa: E402
from tvmnode.frontend.onnx import UnsupportedOperatorError  # noqa: E402

RNG = np.random.default_rng(14)
_NP2ONNX = {"float32": TensorProto.FLOAT, "int8": TensorProto.INT8, "uint8": TensorProto.UINT8,
            "int32": TensorProto.INT32, "int64": TensorProto.INT64,
            "float64": TensorProto.DOUBLE}


def f32(*shape: int) -> np.ndarray:
    return RNG.uniform(-2, 2, size=shape).astype("float32")


def model(nodes: Sequence[Any], inputs: Dict[str, np.ndarray], outputs: Dict[str, Any],
          inits: Optional[Dict[str, np.ndarray]] = None, opset: int = 17) -> Any:
    """A model over `inputs` (name -> example array) with `outputs`
    (name -> (dtype, shape) or None for unknown)."""
    ins = [helper.make_tensor_value_info(k, _NP2ONNX[str(v.dtype)], list(v.shape))
           for k, v in inputs.items()]
    outs = []
    for k, v in outputs.items():
        if v is None:
            outs.append(helper.make_tensor_value_info(k, TensorProto.FLOAT, None))
        else:
            outs.append(helper.make_tensor_value_info(k, _NP2ONNX[v[0]], list(v[1])))
    g = helper.make_graph(list(nodes), "g", ins, outs,
                          [numpy_helper.from_array(np.asarray(a), k)
                           for k, a in (inits or {}).items()])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def run(m: Any, *arrays: np.ndarray) -> Any:
    mod = from_onnx(m)
    return tn.runtime.Executor(mod)(*arrays)


def check1(op_type: str, x: np.ndarray, ref: np.ndarray, inits: Optional[Dict] = None,
           extra_inputs: Sequence[str] = (), opset: int = 17, rtol: float = 1e-5,
           atol: float = 1e-6, **attrs: Any) -> None:
    """One node over input 'x' (and initializers) producing 'y'."""
    node = helper.make_node(op_type, ["x", *extra_inputs], ["y"], name="n0", **attrs)
    m = model([node], {"x": x}, {"y": (str(ref.dtype), ref.shape)}, inits, opset)
    np.testing.assert_allclose(run(m, x), ref, rtol=rtol, atol=atol)


# ---- float operators --------------------------------------------------------------

@pytest.mark.parametrize("op_type,ref", [("Add", np.add), ("Sub", np.subtract),
                                         ("Mul", np.multiply), ("Div", np.divide),
                                         ("Max", np.maximum), ("Min", np.minimum)])
@pytest.mark.parametrize("shapes", [((2, 3, 4), (4,)), ((2, 1, 4), (3, 1)), ((3,), (3,))])
def test_binary_broadcasting(op_type: str, ref: Any, shapes: Any) -> None:
    a, b = f32(*shapes[0]), f32(*shapes[1]) + 3
    want = ref(a, b)
    m = model([helper.make_node(op_type, ["a", "b"], ["y"])], {"a": a, "b": b},
              {"y": ("float32", want.shape)})
    np.testing.assert_allclose(run(m, a, b), want, rtol=1e-6)


def test_binary_with_initializer_and_int32() -> None:
    a = RNG.integers(-50, 50, (2, 3), dtype=np.int32)
    c = RNG.integers(-50, 50, (3,), dtype=np.int32)
    m = model([helper.make_node("Mul", ["a", "c"], ["y"])], {"a": a},
              {"y": ("int32", (2, 3))}, {"c": c})
    np.testing.assert_array_equal(run(m, a), a * c)


@pytest.mark.parametrize("op_type,ref", [
    ("Relu", lambda x: np.maximum(x, 0)), ("Sigmoid", lambda x: 1 / (1 + np.exp(-x))),
    ("Tanh", np.tanh), ("Exp", np.exp), ("Neg", np.negative), ("Identity", lambda x: x)])
def test_unary(op_type: str, ref: Any) -> None:
    x = f32(2, 3, 5)
    check1(op_type, x, ref(x).astype(np.float32))


def test_variadic_max_three_inputs() -> None:
    a, b, c = f32(4), f32(4), f32(4)
    m = model([helper.make_node("Max", ["a", "b", "c"], ["y"])], {"a": a, "b": b, "c": c},
              {"y": ("float32", (4,))})
    np.testing.assert_array_equal(run(m, a, b, c), np.maximum(np.maximum(a, b), c))


def test_clip_opsets() -> None:
    x = f32(3, 4)
    lo, hi = np.array(-0.5, np.float32), np.array(0.7, np.float32)
    check1("Clip", x, np.clip(x, lo, hi), {"lo": lo, "hi": hi}, ["lo", "hi"], opset=13)
    check1("Clip", x, np.clip(x, -np.inf, hi), {"hi": hi}, ["", "hi"], opset=13)
    check1("Clip", x, np.zeros_like(x), {"lo": np.array(1, np.float32), "hi": np.array(0, np.float32)},
           ["lo", "hi"], opset=13)  # min > max: every element is max
    # computed bounds
    m = model([helper.make_node("Clip", ["x", "lo", "hi"], ["y"])],
              {"x": x, "lo": lo, "hi": hi}, {"y": ("float32", x.shape)})
    np.testing.assert_array_equal(run(m, x, lo, hi), np.clip(x, lo, hi))
    # opset 6 (attributes) is below 11 and Clip changed at 11: onnx's version
    # converter turns the attributes into inputs
    np.testing.assert_array_equal(
        run(model([helper.make_node("Clip", ["x"], ["y"], min=-0.5, max=0.7)],
                  {"x": x}, {"y": ("float32", x.shape)}, opset=6), x), np.clip(x, lo, hi))


def test_old_opset_converted() -> None:
    """An opset 9 network (Conv, BatchNormalization, Upsample, MaxPool, Clip
    all changed since) is converted to opset 11 and matches onnxruntime on
    the original file."""
    ort = pytest.importorskip("onnxruntime")
    x = f32(1, 3, 8, 8)
    inits = {"w": f32(4, 3, 3, 3), "b": f32(4), "s": np.array([1, 1, 2, 2], np.float32),
             "g": f32(4), "be": f32(4), "mu": f32(4), "var": RNG.uniform(0.5, 2, 4).astype("float32")}
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("BatchNormalization", ["c", "g", "be", "mu", "var"], ["n"]),
             helper.make_node("Clip", ["n"], ["r"], min=-1.0, max=1.5),
             helper.make_node("Upsample", ["r", "s"], ["u"], mode="nearest"),
             helper.make_node("MaxPool", ["u"], ["y"], kernel_shape=[3, 3], strides=[2, 2])]
    m = model(nodes, {"x": x}, {"y": None}, inits, opset=9)
    ref = ort.InferenceSession(m.SerializeToString(),
                               providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    np.testing.assert_allclose(run(m, x), ref, rtol=1e-5, atol=1e-5)


def test_newer_opset_converted() -> None:
    # opset 22 changed Conv and Relu only in the types they take: the model is
    # converted to opset 21 and computes what the opset 21 model computes
    x, w = f32(1, 2, 6, 6), f32(3, 2, 3, 3)

    def at(opset: int) -> Any:
        return model([helper.make_node("Conv", ["x", "w"], ["c"]),
                      helper.make_node("Relu", ["c"], ["y"])], {"x": x}, {"y": None}, {"w": w},
                     opset=opset)
    out = run(at(22), x)
    assert out.shape == (1, 3, 4, 4) and out.max() > 0
    np.testing.assert_array_equal(out, run(at(21), x))


def test_old_opset_not_convertible() -> None:
    # the converter cannot read this TopK (one output where opset 1 has two):
    # the error names the node and the opset
    x = f32(3, 4)
    m = model([helper.make_node("TopK", ["x"], ["y"], name="t0", k=2)], {"x": x},
              {"y": ("float32", (3, 2))}, opset=9)
    with pytest.raises(UnsupportedOperatorError, match="node 0 't0' \\(TopK\\): opset 9 .*version "
                                                         "converter"):
        from_onnx(m)


def test_clip_int8() -> None:
    x = RNG.integers(-128, 128, (10,), dtype=np.int8)
    check1("Clip", x, np.clip(x, -5, 9).astype(np.int8),
           {"lo": np.array(-5, np.int8), "hi": np.array(9, np.int8)}, ["lo", "hi"])


def _softmax(x: np.ndarray, axis: int) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def test_softmax_axis_semantics_by_opset() -> None:
    x = f32(2, 3, 4)
    # opset 13: along the axis (default -1)
    check1("Softmax", x, _softmax(x, -1), opset=13)
    check1("Softmax", x, _softmax(x, 1), opset=13, axis=1)
    # before 13: the input is flattened to 2-d at axis (default 1)
    flat = _softmax(x.reshape(2, 12), 1).reshape(2, 3, 4)
    check1("Softmax", x, flat, opset=11)
    check1("Softmax", x, _softmax(x.reshape(6, 4), 1).reshape(2, 3, 4), opset=11, axis=2)
    check1("Softmax", x, _softmax(x.reshape(1, 24), 1).reshape(2, 3, 4), opset=12, axis=0)


def conv_ref(x: np.ndarray, w: np.ndarray, pads: Sequence[int], strides: Sequence[int],
             dil: Sequence[int] = (1, 1), group: int = 1) -> np.ndarray:
    n, c, h, wd = x.shape
    o, ci, kh, kw = w.shape
    xp = np.pad(x.astype(np.float64), [[0, 0], [0, 0], [pads[0], pads[2]], [pads[1], pads[3]]])
    oh = (xp.shape[2] - (kh - 1) * dil[0] - 1) // strides[0] + 1
    ow = (xp.shape[3] - (kw - 1) * dil[1] - 1) // strides[1] + 1
    out = np.zeros((n, o, oh, ow))
    og = o // group
    for g in range(group):
        for i in range(kh):
            for j in range(kw):
                patch = xp[:, g * ci:(g + 1) * ci,
                           i * dil[0]:i * dil[0] + strides[0] * (oh - 1) + 1:strides[0],
                           j * dil[1]:j * dil[1] + strides[1] * (ow - 1) + 1:strides[1]]
                out[:, g * og:(g + 1) * og] += np.einsum(
                    "nchw,oc->nohw", patch, w[g * og:(g + 1) * og, :, i, j])
    return out.astype(np.float32)


@pytest.mark.parametrize("case", [
    dict(pads=[1, 1, 1, 1], strides=[1, 1]),
    dict(pads=[0, 1, 2, 0], strides=[2, 1]),
    dict(auto_pad="SAME_UPPER", strides=[2, 2]),
    dict(auto_pad="SAME_LOWER", strides=[2, 2]),
    dict(pads=[1, 1, 1, 1], strides=[1, 1], dilations=[2, 2]),
    dict(pads=[1, 1, 1, 1], strides=[1, 1], group=2),
])
def test_conv(case: Dict[str, Any]) -> None:
    group = case.get("group", 1)
    x, w, b = f32(1, 4, 7, 8), f32(6, 4 // group, 3, 3), f32(6)
    attrs = dict(case, kernel_shape=[3, 3])
    if "auto_pad" in case:
        oh, ow = -(-7 // 2), -(-8 // 2)
        th, tw = max((oh - 1) * 2 + 3 - 7, 0), max((ow - 1) * 2 + 3 - 8, 0)
        if case["auto_pad"] == "SAME_UPPER":
            pads = [th // 2, tw // 2, th - th // 2, tw - tw // 2]
        else:
            pads = [th - th // 2, tw - tw // 2, th // 2, tw // 2]
    else:
        pads = case["pads"]
    want = conv_ref(x, w, pads, case["strides"], case.get("dilations", (1, 1)), group) + \
        b.reshape(1, -1, 1, 1)
    node = helper.make_node("Conv", ["x", "w", "b"], ["y"], **attrs)
    m = model([node], {"x": x}, {"y": ("float32", want.shape)}, {"w": w, "b": b})
    np.testing.assert_allclose(run(m, x), want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("ta,tb,alpha,beta", [(0, 0, 1.0, 1.0), (0, 1, 0.5, 2.0),
                                              (1, 0, 1.0, 0.0), (1, 1, 2.0, 1.0)])
def test_gemm(ta: int, tb: int, alpha: float, beta: float) -> None:
    a = f32(5, 3) if ta else f32(3, 5)
    b = f32(4, 5) if tb else f32(5, 4)
    c = f32(4)
    want = alpha * ((a.T if ta else a) @ (b.T if tb else b)) + beta * c
    node = helper.make_node("Gemm", ["a", "b", "c"], ["y"], transA=ta, transB=tb, alpha=alpha,
                            beta=beta)
    m = model([node], {"a": a}, {"y": ("float32", (3, 4))}, {"b": b, "c": c})
    np.testing.assert_allclose(run(m, a), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("sa,sb", [((3, 5), (5, 4)), ((2, 3, 5), (5, 4)), ((5,), (5, 4)),
                                   ((3, 5), (5,)), ((2, 3, 5), (1, 5, 4))])
def test_matmul(sa: Any, sb: Any) -> None:
    a, b = f32(*sa), f32(*sb)
    want = np.matmul(a, b)
    m = model([helper.make_node("MatMul", ["a", "b"], ["y"])], {"a": a},
              {"y": ("float32", want.shape)}, {"b": b})
    np.testing.assert_allclose(run(m, a), want, rtol=1e-5, atol=1e-5)


def pool_ref(x: np.ndarray, k: Sequence[int], s: Sequence[int], pads: Sequence[int],
             kind: str, ceil: bool = False, count_include_pad: bool = False) -> np.ndarray:
    n, c, h, w = x.shape

    def size(i: int, p0: int, p1: int, kk: int, ss: int) -> int:
        num = i + p0 + p1 - kk
        o = (-(-num // ss) if ceil else num // ss) + 1
        if ceil and (o - 1) * ss >= i + p0:
            o -= 1
        return o
    oh, ow = size(h, pads[0], pads[2], k[0], s[0]), size(w, pads[1], pads[3], k[1], s[1])
    out = np.zeros((n, c, oh, ow), np.float32)
    for i in range(oh):
        for j in range(ow):
            h0, w0 = i * s[0] - pads[0], j * s[1] - pads[1]
            h1, w1 = h0 + k[0], w0 + k[1]
            win = x[:, :, max(h0, 0):min(h1, h), max(w0, 0):min(w1, w)]
            if kind == "max":
                out[:, :, i, j] = win.max(axis=(2, 3))
            else:
                if count_include_pad:
                    cnt = (min(h1, h + pads[2]) - h0) * (min(w1, w + pads[3]) - w0)
                else:
                    cnt = win.shape[2] * win.shape[3]
                out[:, :, i, j] = win.sum(axis=(2, 3)) / cnt
    return out


@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("case", [
    dict(k=[2, 2], s=[2, 2], pads=[0, 0, 0, 0]),
    dict(k=[3, 3], s=[2, 2], pads=[1, 1, 1, 1]),
    dict(k=[3, 3], s=[2, 2], pads=[0, 0, 0, 0], ceil=True),
    dict(k=[3, 2], s=[1, 2], pads=[1, 0, 1, 1], count_include_pad=True),
])
def test_pool(kind: str, case: Dict[str, Any]) -> None:
    x = f32(1, 3, 7, 6)
    want = pool_ref(x, case["k"], case["s"], case["pads"], kind, case.get("ceil", False),
                    case.get("count_include_pad", False))
    attrs: Dict[str, Any] = dict(kernel_shape=case["k"], strides=case["s"], pads=case["pads"],
                                 ceil_mode=int(case.get("ceil", False)))
    if kind == "avg":
        attrs["count_include_pad"] = int(case.get("count_include_pad", False))
    check1("MaxPool" if kind == "max" else "AveragePool", x, want, rtol=1e-5, **attrs)


def test_global_average_pool() -> None:
    x = f32(2, 3, 5, 4)
    check1("GlobalAveragePool", x, x.mean(axis=(2, 3), keepdims=True), rtol=1e-5)


def test_reshape_flatten_transpose() -> None:
    x = f32(2, 3, 4)
    shape = np.array([0, -1, 2], np.int64)
    check1("Reshape", x, x.reshape(2, 6, 2), {"s": shape}, ["s"])
    check1("Flatten", x, x.reshape(6, 4), axis=2)
    check1("Flatten", x, x.reshape(1, 24), axis=0)
    check1("Flatten", x, x.reshape(2, 12), axis=-2)
    check1("Transpose", x, x.transpose(2, 0, 1), perm=[2, 0, 1])
    check1("Transpose", x, x.transpose())


def test_reshape_from_constant_node() -> None:
    x = f32(2, 3, 4)
    shape = helper.make_node("Constant", [], ["s"], value=numpy_helper.from_array(
        np.array([4, -1], np.int64)))
    m = model([shape, helper.make_node("Reshape", ["x", "s"], ["y"])], {"x": x},
              {"y": ("float32", (4, 6))})
    np.testing.assert_array_equal(run(m, x), x.reshape(4, 6))


def test_concat() -> None:
    a, b = f32(2, 3), f32(2, 5)
    m = model([helper.make_node("Concat", ["a", "b"], ["y"], axis=-1)], {"a": a, "b": b},
              {"y": ("float32", (2, 8))})
    np.testing.assert_array_equal(run(m, a, b), np.concatenate([a, b], -1))


def test_squeeze_unsqueeze_attr_and_input() -> None:
    x = f32(1, 3, 1, 4)
    # opset 11: axes are an attribute
    check1("Squeeze", x, x.reshape(3, 1, 4), opset=11, axes=[0])
    check1("Squeeze", x, x.reshape(3, 4), opset=11)
    check1("Unsqueeze", x, x.reshape(1, 3, 1, 4, 1), opset=11, axes=[-1])
    # opset 13: axes are an input
    ax = np.array([0, 2], np.int64)
    check1("Squeeze", x, x.reshape(3, 4), {"ax": ax}, ["ax"], opset=13)
    check1("Unsqueeze", x, x.reshape(1, 1, 3, 1, 1, 4), {"ax": np.array([0, 3], np.int64)},
           ["ax"], opset=13)


def test_pad_constant() -> None:
    x = f32(2, 3)
    pads = np.array([1, 0, 2, 3], np.int64)
    want = np.pad(x, [[1, 2], [0, 3]], constant_values=1.5)
    check1("Pad", x, want, {"p": pads, "v": np.array(1.5, np.float32)}, ["p", "v"], opset=13)
    with pytest.raises(UnsupportedOperatorError, match="mode='symmetric'"):
        check1("Pad", x, want, {"p": pads}, ["p"], mode="symmetric")


def test_cast_dropout() -> None:
    x = f32(3, 4) * 10
    check1("Cast", x, x.astype(np.int32), to=TensorProto.INT32)
    check1("Dropout", x, x, opset=13)
    check1("Dropout", x, x, {"r": np.array(0.3, np.float32)}, ["r"], opset=13)


def test_batch_normalization_folds_to_constants() -> None:
    x = f32(2, 3, 4, 5)
    sc, b, mean, var = f32(3), f32(3), f32(3), np.abs(f32(3)) + 0.5
    want = (x - mean.reshape(1, 3, 1, 1)) / np.sqrt(var.reshape(1, 3, 1, 1) + 1e-3) * \
        sc.reshape(1, 3, 1, 1) + b.reshape(1, 3, 1, 1)
    check1("BatchNormalization", x, want.astype(np.float32), dict(s=sc, b=b, m=mean, v=var),
           ["s", "b", "m", "v"], rtol=1e-4, atol=1e-5, epsilon=1e-3)
    mod = from_onnx(model([helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"],
                                            ["y"])], {"x": x}, {"y": ("float32", x.shape)},
                          dict(s=sc, b=b, m=mean, v=var)))
    assert "multiply" in mod.astext() and "batch" not in mod.astext()


def _needs(name: str) -> None:
    from tvmnode.frontend.onnx import _op_exists

    if not _op_exists(name):
        pytest.skip("operator '%s' is missing or has no kernel in this build" % name)


def test_reduce_mean() -> None:
    _needs("mean")
    x = f32(2, 3, 4)
    check1("ReduceMean", x, x.mean(axis=(1,), keepdims=True), rtol=1e-5, axes=[1], opset=13)
    check1("ReduceMean", x, x.mean(axis=(0, 2)), {"a": np.array([0, -1], np.int64)}, ["a"],
           rtol=1e-5, keepdims=0, opset=18)
    check1("ReduceMean", x, x.mean(keepdims=True), rtol=1e-5, opset=13)


def test_slice() -> None:
    _needs("strided_slice")
    x = f32(5, 6, 7)
    c = lambda *v: np.array(v, np.int64)  # noqa: E731
    check1("Slice", x, x[1:4, :, -3:], dict(s=c(1, -3), e=c(4, 2 ** 62), a=c(0, 2)),
           ["s", "e", "a"])
    check1("Slice", x, x[:, ::-2], dict(s=c(-1), e=c(-2 ** 62), a=c(1), st=c(-2)),
           ["s", "e", "a", "st"])


def test_reduce_mean_and_slice_unsupported_without_kernels() -> None:
    from tvmnode.frontend.onnx import _op_exists

    x = f32(2, 3)
    if not _op_exists("mean"):
        with pytest.raises(UnsupportedOperatorError, match="ReduceMean"):
            from_onnx(model([helper.make_node("ReduceMean", ["x"], ["y"])], {"x": x},
                            {"y": None}))
    if not _op_exists("strided_slice"):
        with pytest.raises(UnsupportedOperatorError, match="Slice"):
            from_onnx(model([helper.make_node("Slice", ["x", "s", "e"], ["y"])], {"x": x},
                            {"y": None}, {"s": np.array([0], np.int64),
                                          "e": np.array([1], np.int64)}))


def test_small_cnn_end_to_end() -> None:
    """Conv -> BN -> Relu -> MaxPool -> Flatten -> Gemm -> Softmax."""
    x = f32(1, 3, 8, 8)
    w, b = f32(4, 3, 3, 3) * 0.3, f32(4)
    sc, bb, mean, var = f32(4), f32(4), f32(4), np.abs(f32(4)) + 0.5
    fw, fb = f32(10, 64) * 0.1, f32(10)
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], name="conv"),
             helper.make_node("BatchNormalization", ["c", "s", "bb", "m", "v"], ["n"]),
             helper.make_node("Relu", ["n"], ["r"]),
             helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Flatten", ["p"], ["f"]),
             helper.make_node("Gemm", ["f", "fw", "fb"], ["g"], transB=1),
             helper.make_node("Softmax", ["g"], ["y"])]
    m = model(nodes, {"x": x}, {"y": ("float32", (1, 10))},
              dict(w=w, b=b, s=sc, bb=bb, m=mean, v=var, fw=fw, fb=fb))
    c = conv_ref(x, w, [1, 1, 1, 1], [1, 1]) + b.reshape(1, -1, 1, 1)
    n = (c - mean.reshape(1, -1, 1, 1)) / np.sqrt(var.reshape(1, -1, 1, 1) + 1e-5) * \
        sc.reshape(1, -1, 1, 1) + bb.reshape(1, -1, 1, 1)
    p = np.maximum(n, 0).reshape(1, 4, 4, 2, 4, 2).max(axis=(3, 5))
    want = _softmax(p.reshape(1, 64) @ fw.T + fb, 1)
    np.testing.assert_allclose(run(m, x), want, rtol=1e-4, atol=1e-6)


# ---- quantized ----------------------------------------------------------------------

def test_quantize_dequantize_int8_and_uint8() -> None:
    x = f32(2, 5) * 3
    s = np.array(0.05, np.float32)
    for zp in (np.array(-3, np.int8), np.array(130, np.uint8)):
        lo, hi = (-128, 127) if zp.dtype == np.int8 else (0, 255)
        q = np.clip(np.round(x / s) + int(zp), lo, hi).astype(zp.dtype)
        check1("QuantizeLinear", x, q, {"s": s, "z": zp}, ["s", "z"], opset=13, atol=1)
        deq = ((q.astype(np.float32) - float(zp)) * s).astype(np.float32)
        node = helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"])
        m = model([node], {"q": q}, {"y": ("float32", q.shape)}, {"s": s, "z": zp}, 13)
        np.testing.assert_allclose(run(m, q), deq, rtol=1e-6)


@pytest.mark.parametrize("zp", [np.array(-3, np.int8), np.array(130, np.uint8)])
def test_quantize_ties_round_half_to_even_as_onnxruntime(zp: np.ndarray) -> None:
    """Inputs exactly k + 0.5 steps from a level (and some between): ONNX
    rounds ties to even, TFLite away from zero; the result must be
    onnxruntime's exactly, the int8 and uint8 forms alike."""
    ort = pytest.importorskip("onnxruntime")
    s = np.array(0.25, np.float32)
    x = np.concatenate([(np.arange(-40, 40, dtype=np.float32) + 0.5) * s,
                        f32(40) * 10]).reshape(4, 30)
    node = helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"])
    m = model([node], {"x": x}, {"y": (str(zp.dtype), x.shape)}, {"s": s, "z": zp}, 13)
    want = ort.InferenceSession(m.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    got = np.asarray(run(m, x))
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    lo, hi = np.iinfo(zp.dtype).min, np.iinfo(zp.dtype).max
    np.testing.assert_array_equal(got, np.clip(np.rint(x / s) + int(zp), lo, hi))


def test_quantize_per_channel() -> None:
    x = f32(2, 3, 4)
    s = np.array([0.01, 0.02, 0.03], np.float32)
    zp = np.array([0, 5, -5], np.int8)
    q = np.clip(np.round(x / s.reshape(1, 3, 1)) + zp.reshape(1, 3, 1), -128, 127)
    check1("QuantizeLinear", x, q.astype(np.int8), {"s": s, "z": zp}, ["s", "z"], opset=13,
           atol=1, axis=1)


def test_qdq_conv_model() -> None:
    """The QDQ form: DQ(constant weights) folds, DQ -> Conv -> Q computes as ONNX's
    reference (float arithmetic between quantize and dequantize)."""
    x = RNG.integers(-128, 128, (1, 2, 5, 5), dtype=np.int8)
    w = RNG.integers(-127, 128, (3, 2, 3, 3), dtype=np.int8)
    xs, ws, ys = np.array(0.02, np.float32), np.array(0.01, np.float32), np.array(0.05, np.float32)
    z = np.array(0, np.int8)
    nodes = [helper.make_node("DequantizeLinear", ["x", "xs", "z"], ["xf"]),
             helper.make_node("DequantizeLinear", ["w", "ws", "z"], ["wf"]),
             helper.make_node("Conv", ["xf", "wf"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("QuantizeLinear", ["c", "ys", "z"], ["y"])]
    m = model(nodes, {"x": x}, {"y": ("int8", (1, 3, 5, 5))},
              dict(w=w, xs=xs, ws=ws, ys=ys, z=z), 13)
    ref = conv_ref(x.astype(np.float32) * xs, w.astype(np.float32) * ws, [1, 1, 1, 1], [1, 1])
    want = np.clip(np.round(ref / ys), -128, 127)
    got = run(m, x).astype(np.int64)
    assert np.abs(got - want).max() <= 1


def _requant_ref(acc: np.ndarray, scale: Any, zp: int, dt: Any) -> np.ndarray:
    info = np.iinfo(dt)
    return np.clip(np.round(acc * scale) + zp, info.min, info.max).astype(dt)


@pytest.mark.parametrize("dt", [np.int8, np.uint8])
def test_qlinear_matmul(dt: Any) -> None:
    info = np.iinfo(dt)
    a = RNG.integers(info.min, info.max + 1, (3, 8), dtype=dt)
    b = RNG.integers(info.min, info.max + 1, (8, 4), dtype=dt)
    az, bz, yz = dt(info.min + 100), dt(info.min + 120), dt(info.min + 130)
    as_, bs, ys = np.float32(0.02), np.float32(0.03), np.float32(0.5)
    node = helper.make_node("QLinearMatMul", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"],
                            ["y"])
    m = model([node], {"a": a}, {"y": (np.dtype(dt).name, (3, 4))},
              {"as": np.array(as_), "az": np.array(az), "b": b, "bs": np.array(bs),
               "bz": np.array(bz), "ys": np.array(ys), "yz": np.array(yz)}, 13)
    acc = (a.astype(np.int64) - int(az)) @ (b.astype(np.int64) - int(bz))
    want = _requant_ref(acc, np.float64(as_) * np.float64(bs) / np.float64(ys), int(yz), dt)
    got = run(m, a)
    assert got.dtype == dt
    assert np.abs(got.astype(np.int64) - want.astype(np.int64)).max() <= 1


@pytest.mark.parametrize("dt,per_channel", [(np.int8, False), (np.int8, True),
                                            (np.uint8, False)])
def test_qlinear_conv(dt: Any, per_channel: bool) -> None:
    info = np.iinfo(dt)
    x = RNG.integers(info.min, info.max + 1, (1, 3, 6, 5), dtype=dt)
    w = RNG.integers(info.min, info.max + 1, (4, 3, 3, 3), dtype=dt)
    bias = RNG.integers(-500, 500, (4,), dtype=np.int32)
    xz, yz = dt(info.min + 110), dt(info.min + 140)
    wz = dt(0) if dt == np.int8 else dt(128)
    xs, ys = np.float32(0.03), np.float32(0.4)
    ws = (RNG.uniform(0.005, 0.02, 4) if per_channel else np.array([0.01])).astype(np.float32)
    node = helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"],
                            ["y"], pads=[1, 1, 1, 1], strides=[1, 2])
    ws_init = ws if per_channel else np.array(ws[0])
    m = model([node], {"x": x}, {"y": (np.dtype(dt).name, (1, 4, 6, 3))},
              {"xs": np.array(xs), "xz": np.array(xz), "w": w, "ws": ws_init,
               "wz": np.array(wz), "ys": np.array(ys), "yz": np.array(yz), "b": bias}, 13)
    acc = conv_ref((x.astype(np.int64) - int(xz)).astype(np.float64),
                   (w.astype(np.int64) - int(wz)).astype(np.float64), [1, 1, 1, 1], [1, 2])
    acc = np.rint(acc).astype(np.int64) + bias.reshape(1, -1, 1, 1)
    scale = (np.float64(xs) * ws.astype(np.float64) / np.float64(ys)).reshape(1, -1, 1, 1)
    want = _requant_ref(acc, scale, int(yz), dt)
    got = run(m, x)
    assert got.dtype == dt
    assert np.abs(got.astype(np.int64) - want.astype(np.int64)).max() <= 1


# ---- module attributes, inputs, shapes --------------------------------------------

def test_initializer_inputs_are_not_parameters_and_io_is_recorded() -> None:
    x, w = f32(2, 3), f32(3, 4)
    g = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("w", TensorProto.FLOAT, [3, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])],
        [numpy_helper.from_array(w, "w")])
    mod = from_onnx(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]))
    assert len(mod["main"].params) == 1
    io = tn.frontend.model_io(mod)
    assert io["inputs"] == [{"name": "x", "shape": [2, 3], "dtype": "float32"}]
    assert io["outputs"] == [{"name": "y", "shape": [2, 4], "dtype": "float32"}]


def test_dynamic_shape_needs_the_shape_argument() -> None:
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, "N"])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, "N"])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)])
    with pytest.raises(ModelImportError, match=r"input 'x' has dynamic shape \[3, N\].*shape="):
        from_onnx(m)
    mod = from_onnx(m, shape={"x": [3, 4]})
    x = f32(3, 4)
    np.testing.assert_array_equal(tn.runtime.Executor(mod)(x), np.maximum(x, 0))
    with pytest.raises(ModelImportError, match="does not fit"):
        from_onnx(m, shape={"x": [4, 5]})
    with pytest.raises(ModelImportError, match="not an input"):
        from_onnx(m, shape={"z": [4, 3]})


def test_multiple_outputs(tmp_path: Any) -> None:
    x = f32(3)
    m = model([helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Neg", ["x"], ["b"])],
              {"x": x}, {"a": ("float32", (3,)), "b": ("float32", (3,))})
    p = tmp_path / "m.onnx"
    onnx.save(m, str(p))
    mod = tn.frontend.load_model(str(p))
    a, b = tn.runtime.Executor(mod)(x)
    np.testing.assert_array_equal(a, np.maximum(x, 0))
    np.testing.assert_array_equal(b, -x)
    assert str(mod.attrs["source"]) == "onnx:m.onnx"


# ---- errors -------------------------------------------------------------------------

def test_unsupported_operator_names_type_node_and_index_before_building() -> None:
    x = f32(2, 3)
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="first"),
             helper.make_node("Det", ["a"], ["b"], name="the_det"),
             helper.make_node("Relu", ["b"], ["y"], name="last")]
    m = model(nodes, {"x": x}, {"y": ("float32", (2, 3))})
    with pytest.raises(UnsupportedOperatorError) as e:
        from_onnx(m)
    msg = str(e.value)
    assert "Det (node: the_det)" in msg and "not supported" in msg
    assert e.value.missing[0]["first"] == 1  # type: ignore[attr-defined]
    assert isinstance(e.value, ModelImportError) and isinstance(e.value, ValueError)


def test_unsupported_attribute_and_domain() -> None:
    x = f32(1, 2, 6, 6)
    node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], dilations=[2, 2],
                            name="mp")
    with pytest.raises(UnsupportedOperatorError, match=r"node 0 'mp' \(MaxPool\).*dilations"):
        from_onnx(model([node], {"x": x}, {"y": None}))
    node = helper.make_node("Gelu", ["x"], ["y"], domain="com.microsoft", name="g")
    m = model([node], {"x": x}, {"y": None})
    m.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    with pytest.raises(UnsupportedOperatorError, match=r"com\.microsoft\.Gelu \(node: g\)"):
        from_onnx(m)
    # an opset onnx's version converter does not know either
    with pytest.raises(UnsupportedOperatorError, match="opset 99"):
        from_onnx(model([helper.make_node("Relu", ["x"], ["y"])], {"x": x}, {"y": None},
                        opset=99))


def test_parameter_inputs_must_be_constants() -> None:
    x = f32(2, 3)
    s = np.array([3, 2], np.int64)
    m = model([helper.make_node("Reshape", ["x", "s"], ["y"], name="r")], {"x": x, "s": s},
              {"y": None})
    with pytest.raises(UnsupportedOperatorError, match="node 0 'r' \\(Reshape\\).*constant"):
        from_onnx(m)


def _good_bytes() -> bytes:
    x = f32(2, 3)
    m = model([helper.make_node("Gemm", ["x", "w"], ["y"])], {"x": x},
              {"y": ("float32", (2, 4))}, {"w": f32(3, 4)})
    return m.SerializeToString()


@pytest.mark.parametrize("cut", [1, 7, 20, 0.5, 0.9, -3])
def test_truncated_file_is_a_clear_error(cut: float) -> None:
    buf = _good_bytes()
    n = int(len(buf) * cut) if isinstance(cut, float) else (cut if cut > 0 else len(buf) + cut)
    with pytest.raises(ModelImportError):
        from_onnx(buf[:n])


def test_corrupt_and_empty_files(tmp_path: Any) -> None:
    with pytest.raises(ModelImportError, match="empty"):
        from_onnx(b"")
    with pytest.raises(ModelImportError, match="corrupt|not an ONNX"):
        from_onnx(b"\xff\xfe not a protobuf at all \x00\x01")
    rng = np.random.default_rng(3)
    good = bytearray(_good_bytes())
    for _ in range(50):  # flipped bytes: an error or a model, never a crash
        b = bytearray(good)
        for i in rng.integers(0, len(b), 4):
            b[i] = int(rng.integers(0, 256))
        try:
            from_onnx(bytes(b))
        except ModelImportError:
            pass
    p = tmp_path / "bad.onnx"
    p.write_bytes(b"\x0a\x05garbage")
    with pytest.raises(ModelImportError):
        from_onnx(str(p))


def test_wrong_initializer_size() -> None:
    x = f32(2, 3)
    w = numpy_helper.from_array(f32(3, 4), "w")
    w.raw_data = w.raw_data[:-4]
    g = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])], [w])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    with pytest.raises(ModelImportError, match="initializer 'w' of shape \\[3, 4\\].*48 bytes.*44"):
        from_onnx(m)
    w2 = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[3, 4])
    w2.float_data.extend([1.0] * 5)
    del m.graph.initializer[:]
    m.graph.initializer.append(w2)
    with pytest.raises(ModelImportError, match="initializer 'w'"):
        from_onnx(m)


def test_missing_tensor_and_wrong_declared_output() -> None:
    x = f32(2, 3)
    m = model([helper.make_node("Relu", ["nope"], ["y"], name="r")], {"x": x}, {"y": None})
    with pytest.raises(ModelImportError, match="node 0 'r'.*'nope'"):
        from_onnx(m)
    m = model([helper.make_node("Relu", ["x"], ["y"])], {"x": x}, {"y": ("float32", (3, 2))})
    with pytest.raises(ModelImportError, match="declared"):
        from_onnx(m)


# ---- round trips --------------------------------------------------------------------

def _roundtrip_models() -> List[Any]:
    x = f32(1, 3, 8, 8)
    cnn = model([helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
                 helper.make_node("Relu", ["c"], ["r"]),
                 helper.make_node("GlobalAveragePool", ["r"], ["p"]),
                 helper.make_node("Flatten", ["p"], ["f"]),
                 helper.make_node("Gemm", ["f", "fw", "fb"], ["y"], transB=1)],
                {"x": x}, {"y": ("float32", (1, 5))},
                dict(w=f32(4, 3, 3, 3), fw=f32(5, 4), fb=f32(5)))
    q = RNG.integers(-128, 128, (2, 8), dtype=np.int8)
    qmm = model([helper.make_node("QLinearMatMul", ["a", "as", "az", "b", "bs", "bz", "ys",
                                                    "yz"], ["y"])], {"a": q},
                {"y": ("int8", (2, 3))},
                {"as": np.array(0.1, np.float32), "az": np.array(1, np.int8),
                 "b": RNG.integers(-128, 128, (8, 3), dtype=np.int8),
                 "bs": np.array(0.2, np.float32), "bz": np.array(0, np.int8),
                 "ys": np.array(0.3, np.float32), "yz": np.array(-2, np.int8)}, 13)
    return [cnn, qmm]


@pytest.mark.parametrize("which", [0, 1])
def test_round_trip_text_and_json(which: int) -> None:
    mod = from_onnx(_roundtrip_models()[which])
    ir.assert_structural_equal(ir.parse(mod.astext()), mod)
    ir.assert_structural_equal(tn.load_json(tn.save_json(mod)), mod)


# ---- the ONNX backend node tests ---------------------------------------------------

def test_onnx_node_tests(capsys: Any) -> None:
    sys.path.insert(0, os.path.dirname(__file__))
    try:
        import onnx_node_tests as nt
    finally:
        sys.path.pop(0)
    root = nt.data_dir()
    if root is None:
        pytest.skip("the ONNX node tests are not installed (apt-get install libonnx-testdata)")
    res = nt.run_all(root)
    line = nt.summary(res)
    with capsys.disabled():
        print("\n" + line)
    assert len(res["passing"]) > 100
    assert not res["failing"], line


def test_reductions_gather_tile_depth_space() -> None:
    _needs("sum")
    x = f32(2, 3, 4)
    check1("ReduceSum", x, x.sum(axis=1, keepdims=True), {"a": np.array([1], np.int64)}, ["a"],
           opset=13)
    check1("ReduceMax", x, x.max(axis=(0, 2)), axes=[0, -1], keepdims=0, opset=13)
    check1("ReduceMin", x, x.min(axis=2, keepdims=True), {"a": np.array([2], np.int64)}, ["a"],
           opset=18)
    check1("ArgMax", x, np.argmax(x, axis=1)[:, None, :].astype(np.int64), axis=1)
    check1("ArgMin", x, np.argmin(x, axis=-1).astype(np.int64), axis=-1, keepdims=0)
    idx = np.array([[2, -1], [0, 1]], np.int64)
    check1("Gather", x, np.take(x, idx, axis=1), {"i": idx}, ["i"], axis=1)
    check1("Tile", x, np.tile(x, (1, 2, 3)), {"r": np.array([1, 2, 3], np.int64)}, ["r"])
    y = f32(1, 8, 2, 3)
    b = 2
    dcr = y.reshape(1, b, b, 2, 2, 3).transpose(0, 3, 4, 1, 5, 2).reshape(1, 2, 4, 6)
    check1("DepthToSpace", y, dcr, blocksize=b)
    crd = y.reshape(1, 2, b, b, 2, 3).transpose(0, 1, 4, 2, 5, 3).reshape(1, 2, 4, 6)
    check1("DepthToSpace", y, crd, blocksize=b, mode="CRD")
    z = f32(1, 2, 4, 6)
    s2d = z.reshape(1, 2, 2, b, 3, b).transpose(0, 3, 5, 1, 2, 4).reshape(1, 8, 2, 3)
    check1("SpaceToDepth", z, s2d, blocksize=b)


# ---- If with a condition known at import; inputs given values ------------------------------

def _mode_model() -> Any:
    """y = If(mode == 1) then Relu(x) * k (k a branch initializer) else
    Conv-free x + b (b an outer initializer); mode an int64 scalar input."""
    k = numpy_helper.from_array(np.array(3.0, np.float32), "k")
    then_g = helper.make_graph([helper.make_node("Relu", ["x"], ["r"]),
                                helper.make_node("Mul", ["r", "k"], ["t_out"])], "then", [],
                               [helper.make_tensor_value_info("t_out", TensorProto.FLOAT, None)],
                               [k])
    else_g = helper.make_graph([helper.make_node("Add", ["x", "b"], ["e_out"])], "else", [],
                               [helper.make_tensor_value_info("e_out", TensorProto.FLOAT, None)])
    nodes = [helper.make_node("Equal", ["mode", "one"], ["cond"]),
             helper.make_node("If", ["cond"], ["y"], name="pick", then_branch=then_g,
                              else_branch=else_g)]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                     [2, 5]),
                                       helper.make_tensor_value_info("mode", TensorProto.INT64,
                                                                     [])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 5])],
                          [numpy_helper.from_array(np.array(1, np.int64), "one"),
                           numpy_helper.from_array(f32(5), "b")])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("mode", [1, 0])
def test_if_on_an_input_given_a_value_keeps_the_branch_taken(mode: int) -> None:
    m, x = _mode_model(), f32(2, 5)
    mod = from_onnx(m, values={"mode": mode})
    assert [p.name_hint for p in mod["main"].params] == ["x"]
    b = numpy_helper.to_array(m.graph.initializer[1])
    want = np.maximum(x, 0) * 3 if mode == 1 else x + b
    np.testing.assert_allclose(tn.runtime.Executor(mod)(x), want, rtol=1e-6)
    ort = pytest.importorskip("onnxruntime")
    ref = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(
        None, {"x": x, "mode": np.array(mode, np.int64)})[0]
    np.testing.assert_allclose(tn.runtime.Executor(mod)(x), ref, rtol=1e-6)


def test_if_on_a_runtime_condition_names_the_node_and_the_remedy() -> None:
    with pytest.raises(UnsupportedOperatorError,
                       match=r"'pick' \(If\): is supported only when its condition 'cond' is "
                             r"known at import: give the inputs it depends on a value "
                             r"\(--value NAME=V"):
        from_onnx(_mode_model())


def test_if_on_a_shape_folds_without_values() -> None:
    # the branch chosen by the input's (fixed) width
    then_g = helper.make_graph([helper.make_node("Neg", ["x"], ["t"])], "then", [],
                               [helper.make_tensor_value_info("t", TensorProto.FLOAT, None)])
    else_g = helper.make_graph([helper.make_node("Abs", ["x"], ["e"])], "else", [],
                               [helper.make_tensor_value_info("e", TensorProto.FLOAT, None)])
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Gather", ["s", "i"], ["w"], axis=0),
             helper.make_node("Equal", ["w", "four"], ["c"]),
             helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)]
    for width, fn in ((4, np.negative), (3, np.abs)):
        x = f32(2, width)
        m = model(nodes, {"x": x}, {"y": None}, {"i": np.array(1, np.int64),
                                                 "four": np.array(4, np.int64)})
        np.testing.assert_array_equal(run(m, x), fn(x))


def test_operators_inside_branches_are_checked() -> None:
    m = _mode_model()
    then_g = m.graph.node[1].attribute[0].g
    then_g.node[0].op_type = "Det"
    with pytest.raises(UnsupportedOperatorError, match=r"Det \(node: #1\)"):
        from_onnx(m, values={"mode": 1})


@pytest.mark.parametrize("values,match", [
    ({"nope": 1}, "values names 'nope', which is not an input of the model \\(inputs: 'x', "
                  "'mode'\\)"),
    ({"mode": 1.5}, "the value given for input 'mode' must be numbers that int64 holds "
                    "exactly, got 1.5"),
    ({"mode": [1, 2]}, "the value given for input 'mode' has shape \\[2\\]; the input is "
                       "declared \\[\\]"),
    ({"mode": "one"}, "input 'mode' must be numbers"),
])
def test_bad_values_name_the_input(values: Dict[str, Any], match: str) -> None:
    with pytest.raises(ModelImportError, match=match):
        from_onnx(_mode_model(), values=values)
