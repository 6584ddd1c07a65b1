"""QUANTIZE and DEQUANTIZE in every dtype pair TFLite Micro runs (the
converter's uint8 adapters and its 16x8 mode's int8 <-> int16 steps), and
the 16x8 mode's layers (int16 activations, int8 weights, int64 bias), one
operator per model, against TFLite Micro on the same bytes: integer
outputs identical on every element, float32 within 1e-5 of the output's
range (the helpers of test_frontend_tflite_ops)."""
from typing import Any, Optional, Sequence, Tuple

import numpy as np
import pytest

pytest.importorskip("tflite")
pytest.importorskip("tflite_micro")

from tvmnode import frontend  # noqa: E402
from test_frontend_tflite_ops import check, const, conv_options, f32, fl  # noqa: E402
from tflite_build import Node, TensorSpec, builtin_options, chain_model, single_op_model  # noqa: E402,E501

RNG = np.random.default_rng(1616)

_RANGE = {"int8": (-128, 127), "uint8": (0, 255), "int16": (-32768, 32767),
          "int32": (-(1 << 31), (1 << 31) - 1)}


def q(dtype: str, shape: Sequence[int], scale: float, zp: int) -> TensorSpec:
    return TensorSpec(shape, dtype, quant=(scale, zp))


def ints(dtype: str, *shape: int, span: Optional[Tuple[int, int]] = None) -> np.ndarray:
    lo, hi = span if span is not None else _RANGE[dtype]
    return RNG.integers(lo, hi, shape, endpoint=True).astype(dtype)


def edges(dtype: str, n: int) -> np.ndarray:
    """n values with both ends of the type and zero among them."""
    lo, hi = _RANGE[dtype]
    x = ints(dtype, n, span=(max(lo, -40000), min(hi, 40000)))
    x[:3] = [lo, hi, 0 if lo < 0 else 128]
    return x


# (input dtype, its scale and zero point, output dtype, its scale and zero
# point): per pair, one case with the same scale (the converter's adapters:
# a zero-point shift only) and one that rescales and saturates.
REQUANT = [
    ("uint8", 0.05, 128, "int8", 0.05, 0),
    ("uint8", 0.02, 100, "int8", 0.031, -7),
    ("int8", 0.05, 0, "uint8", 0.05, 128),
    ("int8", 0.04, -5, "uint8", 0.013, 131),
    ("int8", 0.05, -3, "int8", 0.017, 11),
    ("int8", 0.05, 2, "int16", 0.05 / 256, 0),
    ("int8", 0.03, -9, "int16", 0.0001, 0),
    ("int8", 0.05, 4, "int32", 0.001, 0),
    ("int16", 0.001, 0, "int8", 0.05, -4),
    ("int16", 0.0004, 0, "int8", 0.002, 3),
    ("int16", 0.001, 0, "int16", 0.0003, 0),
    ("int16", 0.0005, 0, "int16", 0.0009, 0),
    ("int16", 0.001, 0, "int32", 0.00002, 0),
    ("int32", 0.0001, 0, "int8", 0.04, 2),
    ("int32", 0.0001, 0, "int16", 0.003, 0),
]


@pytest.mark.parametrize("src,si,zi,dst,so,zo", REQUANT)
def test_quantize_integer_pairs(src: str, si: float, zi: int, dst: str, so: float,
                                zo: int) -> None:
    shape = (3, 17)
    model = single_op_model("QUANTIZE", [q(src, shape, si, zi)], [q(dst, shape, so, zo)])
    x = edges(src, 51).reshape(shape)
    if src == "int32":
        x = ints(src, *shape, span=(-3000000, 3000000))
        x.flat[:2] = [-(1 << 31), (1 << 31) - 1]
    check(model, x)


@pytest.mark.parametrize("scale,zp", [(0.0007, 0), (0.003, 0), (1 / 32768, 0)])
def test_quantize_float_int16(scale: float, zp: int) -> None:
    model = single_op_model("QUANTIZE", [f32((4, 9))], [q("int16", (4, 9), scale, zp)])
    x = fl(4, 9) * 40
    # saturation (within int32 steps: beyond, TFLite's conversion is
    # undefined and differs between targets), and halves
    x.flat[:4] = [1e3, -1e3, 0.5 * scale, -0.5 * scale]
    check(model, x.astype(np.float32))


@pytest.mark.parametrize("src,scale,zp", [("int16", 0.0007, 0), ("int16", 0.01, 0),
                                          ("int8", 0.05, -6), ("uint8", 0.02, 120)])
def test_dequantize(src: str, scale: float, zp: int) -> None:
    model = single_op_model("DEQUANTIZE", [q(src, (2, 3, 5), scale, zp)], [f32((2, 3, 5))])
    check(model, edges(src, 30).reshape(2, 3, 5))


def test_quantize_pairs_tflm_lacks_are_refused() -> None:
    model = single_op_model("QUANTIZE", [q("uint8", (4,), 0.1, 0)],
                            [q("int16", (4,), 0.001, 0)])
    with pytest.raises(frontend.ModelImportError, match="quantizing uint8 to int16"):
        frontend.from_tflite(model)
    model = single_op_model("QUANTIZE", [f32((4,))], [q("uint8", (4,), 0.1, 0)])
    with pytest.raises(frontend.ModelImportError, match="float32 to uint8"):
        frontend.from_tflite(model)
    model = single_op_model("DEQUANTIZE", [q("int32", (4,), 0.1, 0)], [f32((4,))])
    with pytest.raises(frontend.ModelImportError, match="dequantizing int32"):
        frontend.from_tflite(model)


# ---- int16 activations (16x8) in the movement operators ----------------------

def test_int16_reshape_pad_concatenation() -> None:
    shape = const(np.array([4, 6], np.int32))
    model = single_op_model("RESHAPE", [q("int16", (1, 4, 6), 0.001, 0), shape],
                            [q("int16", (4, 6), 0.001, 0)])
    check(model, ints("int16", 1, 4, 6))
    pads = const(np.array([[0, 0], [1, 2], [2, 1], [0, 0]], np.int32))
    model = single_op_model("PAD", [q("int16", (1, 3, 3, 2), 0.002, 0), pads],
                            [q("int16", (1, 6, 6, 2), 0.002, 0)])
    check(model, ints("int16", 1, 3, 3, 2))
    opts = builtin_options("ConcatenationOptions", axis=3, fusedActivationFunction=0)
    model = single_op_model("CONCATENATION", [q("int16", (1, 2, 2, 3), 0.001, 0),
                                              q("int16", (1, 2, 2, 5), 0.001, 0)],
                            [q("int16", (1, 2, 2, 8), 0.001, 0)], opts)
    check(model, ints("int16", 1, 2, 2, 3), ints("int16", 1, 2, 2, 5))


# ---- 16x8 layers --------------------------------------------------------------

def i8w(*shape: int) -> np.ndarray:
    return RNG.integers(-127, 128, shape).astype(np.int8)


def bias64(n: int, scale: Any) -> TensorSpec:
    return const(RNG.integers(-(1 << 20), 1 << 20, n).astype(np.int64),
                 quant=([float(v) for v in scale], [0] * len(scale)))


@pytest.mark.parametrize("act", [0, 1, 3])
@pytest.mark.parametrize("padding,stride", [(0, 1), (1, 2)])
def test_conv2d_16x8(act: int, padding: int, stride: int) -> None:
    cin, cout, sx = 3, 5, 0.0004
    sw = RNG.uniform(0.002, 0.02, cout).astype(np.float32)
    w = const(i8w(cout, 3, 3, cin), quant=(list(sw), [0] * cout))
    oh, ow = (9, 8) if stride == 1 else (4, 3)
    model = single_op_model("CONV_2D", [q("int16", (1, 9, 8, cin), sx, 0), w,
                                        bias64(cout, np.float32(sx) * sw)],
                            [q("int16", (1, oh, ow, cout), 0.0009, 0)],
                            conv_options("Conv2DOptions", act, stride, padding))
    check(model, ints("int16", 1, 9, 8, cin))


def test_conv2d_16x8_no_bias() -> None:
    w = const(i8w(4, 2, 2, 2), quant=([0.01] * 4, [0] * 4))
    model = single_op_model("CONV_2D", [q("int16", (1, 5, 5, 2), 0.001, 0), w, None],
                            [q("int16", (1, 4, 4, 4), 0.004, 0)],
                            conv_options("Conv2DOptions", 0, 1, 1))
    check(model, ints("int16", 1, 5, 5, 2))


@pytest.mark.parametrize("mult", [1, 2])
def test_depthwise_16x8(mult: int) -> None:
    cin, sx = 4, 0.0005
    cout = cin * mult
    sw = RNG.uniform(0.002, 0.02, cout).astype(np.float32)
    w = const(i8w(1, 3, 3, cout), quant=(list(sw), [0] * cout), qdim=3)
    model = single_op_model("DEPTHWISE_CONV_2D", [q("int16", (1, 6, 7, cin), sx, 0), w,
                                                  bias64(cout, np.float32(sx) * sw)],
                            [q("int16", (1, 6, 7, cout), 0.0007, 0)],
                            conv_options("DepthwiseConv2DOptions", 1, 1, 0, depthMultiplier=mult))
    check(model, ints("int16", 1, 6, 7, cin))


@pytest.mark.parametrize("act", [0, 1])
def test_fully_connected_16x8(act: int) -> None:
    sx, sw = 0.0003, 0.01
    w = const(i8w(6, 8), quant=(sw, 0))
    model = single_op_model("FULLY_CONNECTED", [q("int16", (2, 3, 8), sx, 0), w,
                                                bias64(6, [np.float32(sx) * np.float32(sw)])],
                            [q("int16", (6, 6), 0.0011, 0)],
                            builtin_options("FullyConnectedOptions", fusedActivationFunction=act))
    check(model, ints("int16", 2, 3, 8))
    model = single_op_model("FULLY_CONNECTED", [q("int16", (3, 8), sx, 0), w, None],
                            [q("int16", (3, 6), 0.002, 0)],
                            builtin_options("FullyConnectedOptions", fusedActivationFunction=0))
    check(model, ints("int16", 3, 8))


@pytest.mark.parametrize("kind", ["AVERAGE_POOL_2D", "MAX_POOL_2D"])
@pytest.mark.parametrize("padding,act", [(0, 0), (1, 1), (0, 3)])
def test_pools_int16(kind: str, padding: int, act: int) -> None:
    opts = builtin_options("Pool2DOptions", padding=padding, strideW=2, strideH=2,
                           filterWidth=3, filterHeight=3, fusedActivationFunction=act)
    out = (1, 4, 3, 3) if padding == 0 else (1, 3, 2, 3)
    model = single_op_model(kind, [q("int16", (1, 7, 6, 3), 0.0005, 0)],
                            [q("int16", out, 0.0005, 0)], opts)
    check(model, ints("int16", 1, 7, 6, 3))


@pytest.mark.parametrize("kind,table", [("ADD", "AddOptions"), ("MUL", "MulOptions")])
@pytest.mark.parametrize("act", [0, 1])
def test_add_mul_int16(kind: str, table: str, act: int) -> None:
    opts = builtin_options(table, fusedActivationFunction=act)
    model = single_op_model(kind, [q("int16", (1, 4, 4, 3), 0.0005, 0),
                                   q("int16", (1, 4, 4, 3), 0.0002, 0)],
                            [q("int16", (1, 4, 4, 3), 0.0007 if kind == "ADD" else 0.003, 0)],
                            opts)
    check(model, ints("int16", 1, 4, 4, 3), ints("int16", 1, 4, 4, 3))
    # broadcast
    model = single_op_model(kind, [q("int16", (2, 1, 5), 0.001, 0), q("int16", (3, 1), 0.0004, 0)],
                            [q("int16", (2, 3, 5), 0.002, 0)], opts)
    check(model, ints("int16", 2, 1, 5), ints("int16", 3, 1))


@pytest.mark.parametrize("keep", [True, False])
@pytest.mark.parametrize("same_quant", [True, False])
def test_mean_int16(keep: bool, same_quant: bool) -> None:
    axes = const(np.array([1, 2], np.int32))
    out = (1, 1, 1, 6) if keep else (1, 6)
    opts = builtin_options("ReducerOptions", keepDims=keep)
    q_out = q("int16", out, 0.0005 if same_quant else 0.0002, 0)
    model = single_op_model("MEAN", [q("int16", (1, 5, 4, 6), 0.0005, 0), axes], [q_out], opts)
    check(model, ints("int16", 1, 5, 4, 6))
    axes = const(np.array([0, 2], np.int32))
    model = single_op_model("MEAN", [q("int16", (3, 2, 7), 0.001, 0), axes],
                            [q("int16", (2,), 0.0007, 0)],
                            builtin_options("ReducerOptions", keepDims=False))
    check(model, ints("int16", 3, 2, 7))


def test_float16_weights_are_widened_at_import() -> None:
    """The converter's float16 weights: a constant float16 tensor through
    DEQUANTIZE, widened exactly at import (LiteRT's reference runs it;
    TFLite Micro has no float16 DEQUANTIZE)."""
    w16 = (RNG.standard_normal((2, 3)) * 4).astype(np.float16)
    w = TensorSpec((2, 3), "float16", data=w16)
    wf, x, y = f32((2, 3)), f32((2, 3)), f32((2, 3))
    model = chain_model([Node("DEQUANTIZE", [w], [wf]),
                         Node("ADD", [x, wf], [y], builtin_options("AddOptions"))], [y])
    mod = frontend.from_tflite(model)
    assert "float16" not in str(mod)
    check(model, fl(2, 3), reference="litert")
    moving = chain_model([Node("DEQUANTIZE", [TensorSpec((2, 3), "float16")], [wf])], [wf])
    with pytest.raises(frontend.ModelImportError, match="float16"):
        frontend.from_tflite(moving)
