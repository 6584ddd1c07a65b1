"""FoldInputOffset: an int8 layer that reads only inside its input (an
unpadded qnn.conv2d, a qnn.dense) with constant weights and bias gets its
input zero point folded into the bias and set to 0; the outputs stay the
same integers, and what the pass must not take it leaves alone.
codegen.compile(target="cortex-m") runs it."""
import os
from typing import Any, List, Optional, Tuple

import numpy as np
import pytest

from tvmnode import codegen, frontend, ir, runtime, transform
from tvmnode.ir import op

MODELS = os.environ.get("TVMNODE_MODELS", os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))), "shared", "models"))
INT8_MODELS = ["kws_ref_model.tflite", "ad01_int8.tflite", "str_ww_ref_model.tflite",
               "pretrainedResnet_quant.tflite"]


def _c(v: Any, dtype: str = "float32") -> Any:
    return ir.const(np.array(v, dtype=dtype))


def _layer(kind: str = "conv", *, k: int = 1, padding: Optional[List[int]] = None,
           groups: int = 1, layout: str = "HWIO", zx: int = -128, per_channel: bool = False,
           const_weight: bool = True, bias: Any = "random", cin: int = 8, cout: int = 6,
           seed: int = 0) -> Tuple[ir.IRModule, Tuple[int, ...], Optional[np.ndarray]]:
    """One int8 layer + bias + requantize + clip, TFLite's shape of it.
    Returns the module, the input shape and the bias (None: no bias_add)."""
    rng = np.random.default_rng(seed)
    if kind == "dense":
        shape: Tuple[int, ...] = (2, cin)
        wv = rng.integers(-128, 128, (cout, cin)).astype("int8")
    else:
        shape = (1, 5, 6, cin)
        oihw = rng.integers(-128, 128, (cout, cin // groups, k, k)).astype("int8")
        wv = np.ascontiguousarray(oihw.transpose(["OIHW".index(c) for c in layout]))
    x = ir.var("x", shape=shape, dtype="int8")
    params = [x]
    if const_weight:
        w: Any = ir.const(wv)
    else:
        w = ir.var("w", shape=wv.shape, dtype="int8")
        params.append(w)
    s_in, s_out = np.float32(0.05), np.float32(0.4)
    s_w = (rng.uniform(0.002, 0.02, cout) if per_channel else np.full(cout, 0.01)).astype(
        "float32")
    sw = ir.const(s_w) if per_channel else _c(s_w[0])
    if kind == "dense":
        y = op.qnn.dense(x, w, _c(zx, "int32"), _c(0, "int32"), _c(s_in), sw,
                         out_dtype="int32")
        axis = 1
    else:
        y = op.qnn.conv2d(x, w, _c(zx, "int32"), _c(0, "int32"), _c(s_in), sw,
                          padding=padding or [0, 0, 0, 0], groups=groups, channels=cout,
                          kernel_size=[k, k], data_layout="NHWC", kernel_layout=layout,
                          out_dtype="int32")
        axis = 3
    b = None
    if isinstance(bias, str):
        b = rng.integers(-5000, 5000, cout).astype("int32")
    elif bias is not None:
        b = np.asarray(bias, "int32")
    if b is not None:
        y = op.nn.bias_add(y, ir.const(b), axis=axis)
    acc = (s_in * s_w).astype("float32")
    y = op.qnn.requantize(y, ir.const(acc) if per_channel else _c(acc[0]), _c(0, "int32"),
                          _c(s_out), _c(3, "int32"), axis=axis)
    y = op.clip(y, a_min=-128.0, a_max=127.0)
    return ir.IRModule.from_expr(ir.Function(params, y)), shape, b


def _fold(mod: ir.IRModule) -> ir.IRModule:
    return transform.Sequential([transform.InferType(), transform.FoldInputOffset(),
                                 transform.InferType()])(mod)


def _layers(mod: ir.IRModule) -> List[Tuple[int, Optional[np.ndarray]]]:
    """(input zero point, the bias added to its sums or None) of every
    qnn.conv2d / qnn.dense, in order."""
    found: List[Tuple[Any, int]] = []
    biased: List[Tuple[Any, np.ndarray]] = []

    def visit(e: Any) -> None:
        if isinstance(e, ir.Call) and str(e.op.name) == "nn.bias_add" and \
                isinstance(e.args[1], ir.Constant):
            biased.append((e.args[0], np.array(e.args[1].data, copy=True)))
        if isinstance(e, ir.Call) and str(e.op.name) in ("qnn.conv2d", "qnn.dense"):
            found.append((e, int(np.asarray(e.args[2].data))))
    ir.post_order_visit(mod["main"], visit)
    out: List[Tuple[int, Optional[np.ndarray]]] = []
    for call, zx in found:
        b = [v for k, v in biased if k.same_as(call)]
        out.append((zx, b[0] if b else None))
    return out


def _inputs(shape: Tuple[int, ...], n: int = 3) -> List[np.ndarray]:
    rng = np.random.default_rng(11)
    xs = [rng.integers(-128, 128, shape).astype("int8") for _ in range(n)]
    xs.append(np.full(shape, -128, "int8"))  # the extremes too
    xs.append(np.full(shape, 127, "int8"))
    return xs


def _run(mod: ir.IRModule, *args: np.ndarray) -> List[np.ndarray]:
    out = runtime.Executor(codegen.compile(mod, name="m").module)(*args)
    outs = out if isinstance(out, tuple) else (out,)
    return [np.array(o, copy=True) for o in outs]


def _same_outputs(before: ir.IRModule, after: ir.IRModule, shape: Tuple[int, ...],
                  extra: Tuple[np.ndarray, ...] = ()) -> None:
    for x in _inputs(shape):
        for a, b in zip(_run(after, x, *extra), _run(before, x, *extra)):
            np.testing.assert_array_equal(a, b)


def _expected_bias(b: np.ndarray, w: np.ndarray, o_axis: int, zx: int) -> np.ndarray:
    sums = np.moveaxis(w.astype(np.int64), o_axis, 0).reshape(w.shape[o_axis], -1).sum(1)
    return ((b.astype(np.int64) - zx * sums + 2**31) % 2**32 - 2**31).astype("int32")


@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("case", ["1x1 HWIO", "1x1 OHWI", "3x3 OIHW stride 1", "grouped 3x3",
                                  "depthwise 3x3", "dense"])
def test_an_unpadded_layer_is_folded_and_gives_the_same_outputs(case: str,
                                                                per_channel: bool) -> None:
    kw: Any = {"per_channel": per_channel}
    if case == "1x1 OHWI":
        kw["layout"] = "OHWI"
    elif case == "3x3 OIHW stride 1":
        kw.update(k=3, layout="OIHW")
    elif case == "grouped 3x3":
        kw.update(k=3, groups=2)
    elif case == "depthwise 3x3":
        kw.update(k=3, groups=8, cout=8)
    mod, shape, b = _layer("dense" if case == "dense" else "conv", **kw)
    out = _fold(mod)
    [(zx, nb)] = _layers(out)
    assert zx == 0 and nb is not None and b is not None
    w = [e for e in _consts(mod) if e.dtype == np.int8][0]
    o_axis = 0 if case == "dense" else kw.get("layout", "HWIO").index("O")
    np.testing.assert_array_equal(nb, _expected_bias(b, w, o_axis, -128))
    _same_outputs(mod, out, shape)


def _consts(mod: ir.IRModule) -> List[np.ndarray]:
    found: List[np.ndarray] = []

    def visit(e: Any) -> None:
        if isinstance(e, ir.Constant):
            found.append(np.array(e.data, copy=True))
    ir.post_order_visit(mod["main"], visit)
    return found


def test_a_bias_that_wraps_gives_the_same_outputs() -> None:
    # zx = 127 and a large bias: B - zx * sum(w) leaves int32 and wraps,
    # as the kernels' sums do
    mod, shape, b = _layer(zx=127, bias=[2**31 - 5, -2**31 + 3, 2**31 - 1, 7, -2**31, 0],
                           cin=64)
    out = _fold(mod)
    [(zx, nb)] = _layers(out)
    assert zx == 0 and b is not None
    exact = b.astype(np.int64) - 127 * _w_sums(mod)
    assert np.any((exact > 2**31 - 1) | (exact < -2**31)), "the case must wrap"
    _same_outputs(mod, out, shape)


def _w_sums(mod: ir.IRModule) -> np.ndarray:
    w = [e for e in _consts(mod) if e.dtype == np.int8][0]  # HWIO
    return w.astype(np.int64).reshape(-1, w.shape[3]).sum(0)


@pytest.mark.parametrize("case", ["padded 3x3", "padded depthwise", "bottom padding only",
                                  "parameter weights", "zero point 0", "no bias"])
def test_what_must_stay_is_left_alone(case: str) -> None:
    kw: Any = {}
    if case == "padded 3x3":
        kw.update(k=3, padding=[1, 1, 1, 1])
    elif case == "padded depthwise":
        kw.update(k=3, groups=8, cout=8, padding=[1, 1, 1, 1])
    elif case == "bottom padding only":
        kw.update(k=3, padding=[0, 0, 1, 0])
    elif case == "parameter weights":
        kw.update(const_weight=False)
    elif case == "zero point 0":
        kw.update(zx=0)
    elif case == "no bias":
        kw.update(bias=None)
    mod, _, _ = _layer(**kw)
    before = transform.InferType()(mod)
    out = _fold(mod)
    assert out["main"].same_as(before["main"])
    assert _layers(out)[0][0] == kw.get("zx", -128)


def test_a_parameter_bias_is_left_alone() -> None:
    x = ir.var("x", shape=(1, 4, 4, 8), dtype="int8")
    b = ir.var("b", shape=(6,), dtype="int32")
    w = np.ones((1, 1, 8, 6), "int8")
    y = op.qnn.conv2d(x, ir.const(w), _c(-128, "int32"), _c(0, "int32"), _c(0.05), _c(0.01),
                      data_layout="NHWC", kernel_layout="HWIO", out_dtype="int32")
    mod = ir.IRModule.from_expr(ir.Function([x, b], op.nn.bias_add(y, b, axis=3)))
    assert _fold(mod)["main"].same_as(transform.InferType()(mod)["main"])


def bundled_model(fname: str) -> ir.IRModule:
    """The bundled model fname as codegen's pipeline has it before the
    target's passes (skips the test where the model is missing)."""
    path = os.path.join(MODELS, fname)
    if not os.path.exists(path):
        pytest.skip("no %s" % path)
    return transform.Sequential([transform.InferType(), transform.SimplifyExpr(),
                                 transform.FoldConstant()])(frontend.load_model(path))


@pytest.mark.parametrize("fname", INT8_MODELS)
def test_every_bundled_int8_model_keeps_its_outputs(fname: str) -> None:
    mod = bundled_model(fname)
    out = _fold(mod)
    zps_before = [z for z, _ in _layers(mod)]
    zps_after = [z for z, _ in _layers(out)]
    folded = sum(1 for a, b in zip(zps_before, zps_after) if a != b)
    assert folded > 0 and all(b == 0 for a, b in zip(zps_before, zps_after) if a != b)
    shape = tuple(int(d) for d in mod["main"].params[0].checked_type.shape)
    _same_outputs(mod, out, shape)


def test_compile_folds_for_cortex_m_only() -> None:
    mod, shape, _ = _layer()
    host = codegen.compile(mod, name="m")
    dev = codegen.compile(mod, name="m", target="cortex-m")
    assert codegen.FOLD_INPUT_OFFSET == ("cortex-m",)
    for x in _inputs(shape, 1):
        np.testing.assert_array_equal(_run_module(dev.module, x), _run_module(host.module, x))
    # the archive's bias is the folded one (its int32 constant changed)
    bh = [a for a in host.constants.values() if a.dtype == np.int32 and a.ndim == 1]
    bd = [a for a in dev.constants.values() if a.dtype == np.int32 and a.ndim == 1]
    assert len(bh) == len(bd) == 1 and not np.array_equal(bh[0], bd[0])


def _run_module(mod: ir.IRModule, x: np.ndarray) -> np.ndarray:
    return np.array(runtime.Executor(mod)(x), copy=True)
