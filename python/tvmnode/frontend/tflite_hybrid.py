"""TFLite's hybrid layers (float32 activations, int8 weights: the
converter's dynamic-range quantization) for frontend/tflite.py, computed as
LiteRT computes them rather than in float: each batch row of the input is
quantized at run time, symmetrically, to int8, the layer sums in int32, and
the sums are scaled back to float32.

For a row x (a FULLY_CONNECTED input row; a CONV_2D batch, all of its
H x W x C), as LiteRT's SymmetricQuantizeFloats and its hybrid
FULLY_CONNECTED and per-tensor CONV_2D do (float32 throughout):

    range = max |x|            (all zero: the row quantizes to zeros)
    q     = clamp(round_half_away(x * (127 / range)), -127, 127)
    y     = float(sum q * w) * ((range / 127) * filter_scale) + bias

then the fused activation. LiteRT's per-channel hybrid convolutions
quantize asymmetrically, in double; those layers, and depthwise ones,
are computed in float32 from dequantized weights instead (close to
LiteRT, not equal). Rounding half away from zero is composed
exactly: the truncated magnitude, plus one where the fraction left is at
least one half, with the sign put back.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from .. import ir
from .common import call, gt_mask, not_mask, scalar

_F = "float32"
_KSCALE = 127.0


def _round_half_away(v: ir.Expr) -> ir.Expr:
    """std::round of float32 v (|v| well below 2^31), exactly."""
    a = call("abs", v)
    t = call("cast", call("cast", a, dtype="int32"), dtype=_F)  # trunc = floor
    frac = call("subtract", a, t)  # exact
    up = not_mask(gt_mask(call("subtract", scalar(0.5, _F), frac), _F), _F)
    mag = call("add", t, up)
    sign = call("subtract", gt_mask(v, _F), gt_mask(call("negative", v), _F))
    return call("multiply", mag, sign)


def quantize_rows(x: ir.Expr, axes: Any) -> Any:
    """(q, factor): x quantized to int8 symmetrically per row (the range
    reduced over `axes`, kept as size-1 dims), and each row's scaling
    factor range / 127 (0 for an all-zero row, whose q is all zeros)."""
    rng = call("max", call("abs", x), axis=axes, keepdims=True)
    # an all-zero row: any finite inverse gives zeros
    safe = call("maximum", rng, scalar(np.finfo(np.float32).tiny, _F))
    inv = call("divide", scalar(_KSCALE, _F), safe)
    q = _round_half_away(call("multiply", x, inv))
    q = call("cast", call("clip", q, a_min=-_KSCALE, a_max=_KSCALE), dtype="int8")
    return q, call("divide", rng, scalar(_KSCALE, _F))


def layer(kind: str, x: ir.Expr, kern: np.ndarray, scale: float, bias: Optional[np.ndarray],
          axis: int, **attrs: Any) -> ir.Expr:
    """LiteRT's hybrid FULLY_CONNECTED ("dense": x [rows, depth], each row
    quantized apart) or per-tensor CONV_2D ("conv2d": x NHWC, each batch
    quantized over all of its H x W x C) with int8 weights of one scale,
    before the activation. The convolution pads with the quantized 0."""
    q, factor = quantize_rows(x, [1] if kind == "dense" else [1, 2, 3])
    acc = call("qnn." + kind, q, ir.const(kern.astype(np.int8)), scalar(0, "int32"),
               scalar(0, "int32"), scalar(1.0, _F), scalar(1.0, _F), out_dtype="int32",
               **attrs)
    y = call("multiply", call("cast", acc, dtype=_F),
             call("multiply", factor, scalar(np.float32(scale), _F)))
    if bias is not None:
        y = call("nn.bias_add", y, ir.const(bias.astype(np.float32)), axis=axis)
    return y
