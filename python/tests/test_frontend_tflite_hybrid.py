"""Hybrid layers (float32 activations, int8 weights: dynamic-range
quantization), which TFLite Micro does not run, against LiteRT's reference
kernels: the input quantized per row at run time as LiteRT does it, so the
results agree to float32 rounding rather than to the quantization's
error."""
from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("tflite")

from test_frontend_tflite_ops import check, const, conv_options, f32, fl  # noqa: E402
from tflite_build import builtin_options, single_op_model  # noqa: E402

RNG = np.random.default_rng(2718)


def hybrid_fc(units: int, depth: int, rows: int, act: int, bias: bool, scale: float) -> bytes:
    w = const(RNG.integers(-127, 128, (units, depth)).astype(np.int8), quant=(scale, 0))
    b = const(fl(units)) if bias else None
    return single_op_model("FULLY_CONNECTED", [f32((rows, depth)), w, b], [f32((rows, units))],
                           builtin_options("FullyConnectedOptions",
                                           fusedActivationFunction=act))


@pytest.mark.parametrize("act", [0, 1, 3])
@pytest.mark.parametrize("bias", [True, False])
def test_hybrid_fully_connected_matches_litert(act: int, bias: bool) -> None:
    model = hybrid_fc(7, 12, 4, act, bias, 0.013)
    x = fl(4, 12) * 3
    # ties of the rounding: a row whose largest value makes x * 127 / range
    # land on halves, and an all-zero row
    x[1] = np.array([1.0, 0.5 / 127, -0.5 / 127, 1.5 / 127, -2.5 / 127] + [0.25] * 7,
                    np.float32)
    x[2] = 0
    check(model, x, reference="litert")


def test_hybrid_fully_connected_batches_quantize_apart() -> None:
    # rows of very different ranges: each has its own scaling factor
    model = hybrid_fc(5, 9, 3, 0, True, 0.02)
    x = fl(3, 9)
    x[0] *= 1000
    x[2] *= 1e-3
    check(model, x, reference="litert")


def hybrid_conv(cin: int, cout: int, k: int, stride: int, padding: int, act: int,
                scales: Any, shape: Any) -> bytes:
    w = const(RNG.integers(-127, 128, (cout, k, k, cin)).astype(np.int8),
              quant=(scales, [0] * len(scales)), qdim=0)
    n, h, wd = shape
    oh = (h + stride - 1) // stride if padding == 0 else (h - k) // stride + 1
    ow = (wd + stride - 1) // stride if padding == 0 else (wd - k) // stride + 1
    return single_op_model("CONV_2D", [f32((n, h, wd, cin)), w, const(fl(cout))],
                           [f32((n, oh, ow, cout))],
                           conv_options("Conv2DOptions", act, stride, padding))


@pytest.mark.parametrize("act", [0, 1])
@pytest.mark.parametrize("padding,stride", [(0, 1), (1, 2)])
def test_hybrid_conv2d_matches_litert(act: int, padding: int, stride: int) -> None:
    # one filter scale: LiteRT quantizes each batch over all of its
    # H x W x C; SAME padding reads the quantized 0
    model = hybrid_conv(3, 5, 3, stride, padding, act, [0.011], (2, 7, 6))
    x = fl(2, 7, 6, 3)
    x[1] *= 40
    check(model, x, reference="litert")


def test_hybrid_conv2d_equal_channel_scales_count_as_one() -> None:
    model = hybrid_conv(2, 4, 1, 1, 0, 0, [0.02] * 4, (1, 5, 5))
    check(model, fl(1, 5, 5, 2), reference="litert")


def test_hybrid_layers_litert_quantizes_asymmetrically_are_computed_in_float() -> None:
    # per-channel scales (LiteRT: asymmetric, in double): dequantized
    # weights in float32, close to LiteRT within its quantization's error
    import tvmnode as tn
    from test_frontend_tflite_ops import run_litert_ref
    from tvmnode import frontend

    model = hybrid_conv(3, 4, 3, 1, 0, 0, [0.01, 0.02, 0.015, 0.03], (1, 6, 6))
    x = fl(1, 6, 6, 3)
    want = run_litert_ref(model, x)
    got = np.asarray(tn.runtime.Executor(frontend.from_tflite(model))(x))
    assert float(np.abs(got - want).max()) < 0.02 * float(np.abs(want).max())
