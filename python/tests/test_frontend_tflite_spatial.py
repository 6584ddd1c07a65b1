"""The spatial and normalising TFLite operators, one operator per model
(built with tflite_build), against TFLite Micro run on the same bytes:
integer outputs identical on every element, float32 within 1e-5 of the
output's range; each through the executor unfused and after FuseOps
(test_frontend_tflite_ops.check)."""
from typing import Any

import numpy as np
import pytest

pytest.importorskip("tflite")
pytest.importorskip("tflite_micro")

import tvmnode as tn  # noqa: E402
from tvmnode import frontend  # noqa: E402
from test_frontend_tflite_ops import _error, check, const, f32, fl, i8, q8  # noqa: E402
from tflite_build import TensorSpec, builtin_options, single_op_model  # noqa: E402

RNG = np.random.default_rng(4242)

# (align_corners, half_pixel_centers): every combination TFLite accepts
FLAGS = [(False, False), (True, False), (False, True)]
# (input h, w) -> (output h, w): up, down, mixed and to one pixel
SIZES = [((3, 4), (7, 9)), ((8, 6), (3, 4)), ((5, 5), (5, 10)), ((4, 3), (1, 1))]


def resize_model(kind: str, spec: Any, hw: Any, out_hw: Any, align: bool, half: bool,
                 channels: int = 3) -> bytes:
    table = "ResizeBilinearOptions" if kind == "RESIZE_BILINEAR" else \
        "ResizeNearestNeighborOptions"
    opts = builtin_options(table, alignCorners=align, halfPixelCenters=half)
    size = const(np.array(out_hw, np.int32))
    return single_op_model(kind, [spec((2, hw[0], hw[1], channels)), size],
                           [spec((2, out_hw[0], out_hw[1], channels))], opts)


def i16spec(shape: Any) -> TensorSpec:
    return TensorSpec(shape, "int16", quant=(0.001, 0))


@pytest.mark.parametrize("kind", ["RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR"])
@pytest.mark.parametrize("align,half", FLAGS)
@pytest.mark.parametrize("hw,out_hw", SIZES)
def test_resize_int8(kind: str, align: bool, half: bool, hw: Any, out_hw: Any) -> None:
    model = resize_model(kind, lambda s: q8(s, 0.05, -3), hw, out_hw, align, half)
    check(model, i8(2, hw[0], hw[1], 3))


@pytest.mark.parametrize("kind", ["RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR"])
@pytest.mark.parametrize("align,half", FLAGS)
@pytest.mark.parametrize("hw,out_hw", SIZES)
def test_resize_float(kind: str, align: bool, half: bool, hw: Any, out_hw: Any) -> None:
    model = resize_model(kind, f32, hw, out_hw, align, half)
    check(model, fl(2, hw[0], hw[1], 3))


@pytest.mark.parametrize("align,half", FLAGS)
def test_resize_nearest_int16(align: bool, half: bool) -> None:
    model = resize_model("RESIZE_NEAREST_NEIGHBOR", i16spec, (3, 5), (7, 4), align, half, 2)
    check(model, RNG.integers(-32768, 32768, (2, 3, 5, 2), dtype=np.int16))


def test_resize_refusals_are_named() -> None:
    model = resize_model("RESIZE_BILINEAR", i16spec, (3, 5), (7, 4), False, False)
    msg = _error(model)
    assert "RESIZE_BILINEAR" in msg and "int16" in msg
    model = resize_model("RESIZE_BILINEAR", f32, (3, 5), (7, 4), True, True)
    assert "align_corners and half_pixel_centers" in _error(model, unsupported=False)


# (a shape, b shape, adj_x, adj_y): plain, transposed operands, batch
# dims broadcast both ways and across ranks
BMM = [((3, 4), (4, 5), False, False),
       ((2, 3, 4), (2, 4, 5), False, False),
       ((2, 4, 3), (2, 5, 4), True, True),
       ((2, 1, 3, 6), (1, 3, 6, 2), False, False),
       ((3, 6, 2), (6, 4), True, False),
       ((5, 3), (2, 2, 4, 3), False, True)]


def bmm_out(sa: Any, sb: Any, adj_x: bool, adj_y: bool) -> Any:
    ea, eb = np.zeros(sa), np.zeros(sb)
    if adj_x:
        ea = np.swapaxes(ea, -1, -2)
    if adj_y:
        eb = np.swapaxes(eb, -1, -2)
    return (ea @ eb).shape


@pytest.mark.parametrize("sa,sb,adj_x,adj_y", BMM)
@pytest.mark.parametrize("dtype", ["int8", "float32"])
@pytest.mark.parametrize("const_b", [False, True])
def test_batch_matmul(sa: Any, sb: Any, adj_x: bool, adj_y: bool, dtype: str,
                      const_b: bool) -> None:
    opts = builtin_options("BatchMatMulOptions", adjX=adj_x, adjY=adj_y)
    out = bmm_out(sa, sb, adj_x, adj_y)
    if dtype == "int8":
        b = const(i8(*sb), quant=(0.02, 3)) if const_b else q8(sb, 0.02, 3)
        model = single_op_model("BATCH_MATMUL", [q8(sa, 0.05, -4), b], [q8(out, 0.3, 5)], opts)
        xs = [i8(*sa)] + ([] if const_b else [i8(*sb)])
    else:
        b = const(fl(*sb)) if const_b else f32(sb)
        model = single_op_model("BATCH_MATMUL", [f32(sa), b], [f32(out)], opts)
        xs = [fl(*sa)] + ([] if const_b else [fl(*sb)])
    check(model, *xs)


def test_batch_matmul_refusals_are_named() -> None:
    opts = builtin_options("BatchMatMulOptions", adjX=False, adjY=False)
    model = single_op_model("BATCH_MATMUL", [f32((1, 2, 1, 2, 3, 4)), f32((4, 2))],
                            [f32((1, 2, 1, 2, 3, 2))], opts)
    assert "2 to 5 dimensions" in _error(model, unsupported=False)
    # int16 runs in 16x8 mode (test_frontend_tflite_16x8), symmetric only
    model = single_op_model("BATCH_MATMUL", [i16spec((3, 4)),
                                             TensorSpec((4, 2), "int16", quant=(0.001, 3))],
                            [i16spec((3, 2))], opts)
    msg = _error(model, unsupported=False)
    assert "BATCH_MATMUL" in msg and "zero point 0" in msg


def tconv_model(x: Any, w: Any, b: Any, out: Any, out_shape: Any, padding: int, stride: int,
                act: int = 0) -> bytes:
    opts = builtin_options("TransposeConvOptions", padding=padding, strideW=stride,
                           strideH=stride, fusedActivationFunction=act)
    ins = [const(np.array(out_shape, np.int32)), w, x] + ([b] if b is not None else [])
    return single_op_model("TRANSPOSE_CONV", ins, [out], opts)


# (input h, w, output h, w, kernel, stride, padding: 0 SAME, 1 VALID)
TCONV = [(3, 4, 6, 8, 3, 2, 0), (3, 3, 7, 7, 3, 2, 1), (4, 5, 4, 5, 3, 1, 0),
         (2, 3, 5, 7, 2, 2, 1), (3, 3, 9, 9, 4, 3, 0)]


@pytest.mark.parametrize("ih,iw,oh,ow,k,s,pad", TCONV)
@pytest.mark.parametrize("bias", [True, False])
def test_transpose_conv_int8(ih: int, iw: int, oh: int, ow: int, k: int, s: int, pad: int,
                             bias: bool) -> None:
    cin, cout = 3, 4
    sw = RNG.uniform(0.002, 0.02, cout).astype(np.float32)
    w = const(i8(cout, k, k, cin), quant=(list(sw), [0] * cout))
    b = const(RNG.integers(-800, 800, cout).astype(np.int32),
              quant=(list(np.float32(0.05) * sw), [0] * cout)) if bias else None
    model = tconv_model(q8((1, ih, iw, cin), 0.05, 6), w, b, q8((1, oh, ow, cout), 0.04, -2),
                        (1, oh, ow, cout), pad, s)
    check(model, i8(1, ih, iw, cin))


@pytest.mark.parametrize("ih,iw,oh,ow,k,s,pad", TCONV)
@pytest.mark.parametrize("bias", [True, False])
def test_transpose_conv_float(ih: int, iw: int, oh: int, ow: int, k: int, s: int, pad: int,
                              bias: bool) -> None:
    cin, cout = 2, 3
    b = const(fl(cout)) if bias else None
    model = tconv_model(f32((2, ih, iw, cin)), const(fl(cout, k, k, cin)), b,
                        f32((2, oh, ow, cout)), (2, oh, ow, cout), pad, s)
    check(model, fl(2, ih, iw, cin))


def test_transpose_conv_per_tensor_int8() -> None:
    w = const(i8(2, 3, 3, 2), quant=(0.01, 0))
    model = tconv_model(q8((1, 3, 3, 2), 0.1, -1), w, None, q8((1, 6, 6, 2), 0.2, 3),
                        (1, 6, 6, 2), 0, 2)
    check(model, i8(1, 3, 3, 2))


@pytest.mark.parametrize("act", [1, 3])
def test_transpose_conv_activation(act: int) -> None:
    model = tconv_model(f32((1, 3, 3, 2)), const(fl(3, 3, 3, 2)), const(fl(3)),
                        f32((1, 6, 6, 3)), (1, 6, 6, 3), 0, 2, act)
    check(model, fl(1, 3, 3, 2))
    sw = [0.01, 0.02, 0.005]
    model = tconv_model(q8((1, 3, 3, 2), 0.05, 6), const(i8(3, 3, 3, 2), quant=(sw, [0] * 3)),
                        None, q8((1, 6, 6, 3), 0.04, -2), (1, 6, 6, 3), 0, 2, act)
    check(model, i8(1, 3, 3, 2))


@pytest.mark.parametrize("shape", [(2, 10), (1, 3, 4, 7), (5,)])
@pytest.mark.parametrize("zp", [0, -5, 30])
def test_l2_normalization_int8(shape: Any, zp: int) -> None:
    model = single_op_model("L2_NORMALIZATION", [q8(shape, 0.05, zp)],
                            [q8(shape, 1 / 128, 0)],
                            builtin_options("L2NormOptions", fusedActivationFunction=0))
    x = i8(*shape)
    x.reshape(-1, shape[-1])[0] = zp  # a row of zeros: TFLite's special case
    check(model, x)


@pytest.mark.parametrize("shape", [(2, 10), (1, 3, 4, 7), (5,)])
def test_l2_normalization_float(shape: Any) -> None:
    model = single_op_model("L2_NORMALIZATION", [f32(shape)], [f32(shape)],
                            builtin_options("L2NormOptions", fusedActivationFunction=0))
    check(model, fl(*shape))


@pytest.mark.parametrize("shape", [(2, 10), (1, 3, 4, 7), (5,)])
def test_log_softmax_float(shape: Any) -> None:
    model = single_op_model("LOG_SOFTMAX", [f32(shape)], [f32(shape)])
    check(model, 3 * fl(*shape))


def test_normalization_refusals_are_named() -> None:
    model = single_op_model("L2_NORMALIZATION", [q8((2, 4), 0.05, 0)], [q8((2, 4), 0.01, 0)],
                            builtin_options("L2NormOptions", fusedActivationFunction=0))
    with pytest.raises(NotImplementedError, match="qnn.l2_normalize.*1/128"):
        tn.runtime.Executor(frontend.from_tflite(model))(i8(2, 4))
    model = single_op_model("LOG_SOFTMAX", [q8((2, 4), 0.05, 0)], [q8((2, 4), 0.1, 127)])
    with pytest.raises(NotImplementedError, match="qnn.log_softmax.*16/256"):
        tn.runtime.Executor(frontend.from_tflite(model))(i8(2, 4))
    model = single_op_model("LOG_SOFTMAX", [i16spec((2, 4))], [i16spec((2, 4))])
    assert "LOG_SOFTMAX" in _error(model) and "int16" in _error(model)


@pytest.mark.parametrize("shape", [(2, 10), (1, 3, 4, 7), (5,), (1, 300)])
@pytest.mark.parametrize("scale,zp", [(0.1, 3), (0.02, -20), (0.5, 0)])
def test_log_softmax_int8(shape: Any, scale: float, zp: int) -> None:
    model = single_op_model("LOG_SOFTMAX", [q8(shape, scale, zp)], [q8(shape, 16 / 256, 127)])
    check(model, i8(*shape))
