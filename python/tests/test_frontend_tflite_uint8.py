"""uint8 models (the old converter's): one operator per model against
LiteRT's reference kernels (BUILTIN_REF), every output element identical,
through the executor unfused and after FuseOps. The importer reads uint8
tensors as int8 less 128; these check that it computes LiteRT's uint8
arithmetic where the two differ (the filter's zero point, the float
multiplier product, the average's rounding) and that the model's inputs
and outputs stay uint8."""
from typing import Any, Sequence

import numpy as np
import pytest

pytest.importorskip("tflite")
pytest.importorskip("ai_edge_litert.interpreter")

from tvmnode import frontend  # noqa: E402
from tflite_build import TensorSpec, builtin_options, single_op_model  # noqa: E402
from test_frontend_tflite_ops import check, conv_options  # noqa: E402

RNG = np.random.default_rng(88)


def qu8(shape: Sequence[int], scale: float = 0.05, zp: int = 120) -> TensorSpec:
    return TensorSpec(shape, "uint8", quant=(scale, zp))


def const(a: np.ndarray, quant: Any = None) -> TensorSpec:
    return TensorSpec(a.shape, str(a.dtype), quant=quant, data=a)


def u8(*shape: int) -> np.ndarray:
    return RNG.integers(0, 256, shape, dtype=np.uint8)


def bias(n: int, scale: float) -> TensorSpec:
    return const(RNG.integers(-3000, 3000, n).astype(np.int32), quant=(scale, 0))


def litert(model: bytes, *xs: np.ndarray) -> None:
    check(model, *xs, reference="litert")


@pytest.mark.parametrize("act", [0, 1, 3])
@pytest.mark.parametrize("padding,stride", [(0, 1), (0, 2), (1, 2)])
def test_conv2d_uint8(act: int, padding: int, stride: int) -> None:
    cin, cout, sx, sw = 3, 5, 0.047, 0.0123
    w = const(u8(cout, 3, 3, cin), quant=(sw, 131))
    oh = 9 if stride == 1 else (5 if padding == 0 else 4)
    ow = 8 if stride == 1 else (4 if padding == 0 else 3)
    model = single_op_model("CONV_2D", [qu8((1, 9, 8, cin), sx, 117), w,
                                        bias(cout, float(np.float32(sx) * np.float32(sw)))],
                            [qu8((1, oh, ow, cout), 0.21, 98)],
                            conv_options("Conv2DOptions", act, stride, padding))
    litert(model, u8(1, 9, 8, cin))


@pytest.mark.parametrize("mult", [1, 2])
def test_depthwise_uint8(mult: int) -> None:
    cin, sx, sw = 4, 0.031, 0.017
    cout = cin * mult
    w = const(u8(1, 3, 3, cout), quant=(sw, 140))
    model = single_op_model("DEPTHWISE_CONV_2D",
                            [qu8((1, 6, 7, cin), sx, 128), w,
                             bias(cout, float(np.float32(sx) * np.float32(sw)))],
                            [qu8((1, 6, 7, cout), 0.09, 5)],
                            conv_options("DepthwiseConv2DOptions", 3, 1, 0, depthMultiplier=mult))
    litert(model, u8(1, 6, 7, cin))


def test_fully_connected_uint8() -> None:
    sx, sw = 0.03, 0.011
    w = const(u8(6, 8), quant=(sw, 121))
    model = single_op_model("FULLY_CONNECTED",
                            [qu8((2, 3, 8), sx, 130), w,
                             bias(6, float(np.float32(sx) * np.float32(sw)))],
                            [qu8((6, 6), 0.07, 110)],
                            builtin_options("FullyConnectedOptions", fusedActivationFunction=1))
    litert(model, u8(2, 3, 8))


@pytest.mark.parametrize("kind", ["AVERAGE_POOL_2D", "MAX_POOL_2D"])
@pytest.mark.parametrize("window,padding", [(3, 0), (2, 1), (4, 0)])
def test_pools_uint8(kind: str, window: int, padding: int) -> None:
    opts = builtin_options("Pool2DOptions", padding=padding, strideW=2, strideH=2,
                           filterWidth=window, filterHeight=window, fusedActivationFunction=0)
    oh = (8 + 1) // 2 if padding == 0 else (8 - window) // 2 + 1
    ow = (7 + 1) // 2 if padding == 0 else (7 - window) // 2 + 1
    model = single_op_model(kind, [qu8((1, 8, 7, 3))], [qu8((1, oh, ow, 3))], opts)
    litert(model, u8(1, 8, 7, 3))
    # sums at exact halves below 128 * count, where the int8 rounding
    # would differ
    litert(model, np.full((1, 8, 7, 3), 127, np.uint8) + (RNG.integers(0, 2, (1, 8, 7, 3))
                                                          .astype(np.uint8)))


def test_add_uint8() -> None:
    opts = builtin_options("AddOptions", fusedActivationFunction=1)
    model = single_op_model("ADD", [qu8((2, 5, 4), 0.04, 100), qu8((2, 5, 4), 0.03, 140)],
                            [qu8((2, 5, 4), 0.06, 128)], opts)
    litert(model, u8(2, 5, 4), u8(2, 5, 4))


def test_mul_pad_uint8() -> None:
    opts = builtin_options("MulOptions", fusedActivationFunction=0)
    model = single_op_model("MUL", [qu8((2, 5, 4), 0.04, 100), qu8((1, 5, 4), 0.03, 140)],
                            [qu8((2, 5, 4), 0.02, 90)], opts)
    litert(model, u8(2, 5, 4), u8(1, 5, 4))
    model = single_op_model("PAD", [qu8((1, 3, 4, 2), 0.1, 37),
                                    const(np.array([[0, 0], [1, 2], [2, 0], [0, 0]], np.int32))],
                            [qu8((1, 6, 6, 2), 0.1, 37)])
    litert(model, u8(1, 3, 4, 2))


def test_softmax_uint8() -> None:
    model = single_op_model("SOFTMAX", [qu8((3, 10), 0.1, 128)], [qu8((3, 10), 1 / 256, 0)],
                            builtin_options("SoftmaxOptions", beta=1.0))
    litert(model, u8(3, 10))


def test_reshape_concat_uint8() -> None:
    model = single_op_model("RESHAPE", [qu8((2, 3, 4)),
                                        const(np.array([6, 4], np.int32))], [qu8((6, 4))])
    litert(model, u8(2, 3, 4))
    model = single_op_model("CONCATENATION", [qu8((2, 3)), qu8((2, 2))], [qu8((2, 5))],
                            builtin_options("ConcatenationOptions", axis=1,
                                            fusedActivationFunction=0))
    litert(model, u8(2, 3), u8(2, 2))


def test_quantize_dequantize_uint8() -> None:
    model = single_op_model("QUANTIZE", [qu8((4, 6), 0.05, 130)],
                            [TensorSpec((4, 6), "int8", quant=(0.05, 2))])
    litert(model, u8(4, 6))
    model = single_op_model("DEQUANTIZE", [qu8((4, 6), 0.05, 130)],
                            [TensorSpec((4, 6), "float32")])
    litert(model, u8(4, 6))


def test_uint8_edges_stay_uint8() -> None:
    model = single_op_model("MAX_POOL_2D", [qu8((1, 4, 4, 2), 0.5, 77)],
                            [qu8((1, 2, 2, 2), 0.5, 77)],
                            builtin_options("Pool2DOptions", padding=1, strideW=2, strideH=2,
                                            filterWidth=2, filterHeight=2,
                                            fusedActivationFunction=0))
    mod = frontend.from_tflite(model)
    io = frontend.model_io(mod)
    ins, outs = io["inputs"], io["outputs"]
    assert [t["dtype"] for t in ins + outs] == ["uint8", "uint8"]
    assert [t["zero_point"] for t in ins + outs] == [[77], [77]]
    assert mod["main"].params[0].checked_type.dtype == "uint8"


def test_uint8_operators_that_round_differently_are_refused() -> None:
    model = single_op_model("LOGISTIC", [qu8((2, 3), 0.1, 128)], [qu8((2, 3), 1 / 256, 0)])
    with pytest.raises(frontend.ModelImportError, match="LOGISTIC.*uint8 operands"):
        frontend.from_tflite(model)
    model = single_op_model("CONCATENATION", [qu8((2, 3), 0.1, 3), qu8((2, 2))], [qu8((2, 5))],
                            builtin_options("ConcatenationOptions", axis=1,
                                            fusedActivationFunction=0))
    with pytest.raises(frontend.ModelImportError, match="output's scale and zero point"):
        frontend.from_tflite(model)


def test_uint8_filter_with_int8_input_is_refused() -> None:
    w = const(u8(2, 3), quant=(0.01, 128))
    model = single_op_model("FULLY_CONNECTED",
                            [TensorSpec((1, 3), "int8", quant=(0.05, 0)), w, None],
                            [TensorSpec((1, 2), "int8", quant=(0.05, 0))],
                            builtin_options("FullyConnectedOptions", fusedActivationFunction=0))
    with pytest.raises(frontend.ModelImportError, match="FULLY_CONNECTED.*uint8 filter"):
        frontend.from_tflite(model)


def test_uint8_moves() -> None:
    """Operators that only move values take uint8 data: the shift to int8
    commutes with a move."""
    model = single_op_model("TRANSPOSE", [qu8((2, 3, 4)), const(np.array([2, 0, 1], np.int32))],
                            [qu8((4, 2, 3))])
    litert(model, u8(2, 3, 4))
    model = single_op_model("SLICE", [qu8((3, 5)), const(np.array([1, 1], np.int32)),
                                      const(np.array([2, 3], np.int32))], [qu8((2, 3))])
    litert(model, u8(3, 5))
