"""onnxruntime's quantized operators (the com.microsoft domain of the
QOperator format that onnxruntime.quantization writes) for the ONNX
importer: QLinearSigmoid, QLinearLeakyRelu, QLinearConcat, QLinearAdd,
QLinearMul, QLinearAveragePool, QLinearGlobalAveragePool and
QLinearSoftmax.

Bit-exactness with onnxruntime's CPU kernels is the contract, so each
operator computes what onnxruntime computes, not what the operator's
definition says. The element-wise ones are 256-entry tables, built here
as onnxruntime builds them: every input byte dequantized in float32
(scale * (x - zero point)), the function applied in float32 (the
logistic is MLAS's rational approximation evaluated with fused
multiply-adds, as its FMA3 kernel does on x86-64), and quantized back
with MLAS's QuantizeLinear (divide by the scale, round half to even,
add the zero point, saturate). QLinearConcat passes each input through
such a table of the identity when its quantization differs from the
output's. The tables become qnn.lut calls. QLinearAdd and QLinearMul
become qnn.qlinear_add and qnn.qlinear_mul, whose kernel (the crt's
qlinear_ort.c) does onnxruntime's float32 arithmetic for each element
from the model's scales and zero points; the pools become
qnn.qlinear_avg_pool2d (NCHW; a 1-d window is a 2-d one of height 1,
a global pool one window over the flattened image), the same kernel
file. uint8 tensors are stored as
int8 shifted by 128 (the importer's convention), so a table is indexed
by the stored byte and holds stored bytes.
"""
from __future__ import annotations

import math
import struct
from fractions import Fraction
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .. import ir
from .common import call, scalar

from .onnx import Q8, _Ctx, _auto_pad, _norm_axis, _prod, _qparams, _s8_to_u8, _u8_to_s8  # noqa: E402  (onnx.py imports this last)

_Spec = Tuple[Callable[[_Ctx], ir.Expr], Optional[Callable[[_Ctx], None]]]

F = np.float32


# ---- float32 arithmetic as onnxruntime's kernels do it -----------------------

def _fma(a: Any, b: Any, c: Any) -> np.float32:
    """a * b + c rounded once to float32 (a fused multiply-add). The exact
    value is rounded to a double with round-to-odd, from which one more
    rounding to float32 is correct."""
    r = Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c))
    d = float(r)
    if Fraction(d) != r and struct.unpack("<q", struct.pack("<d", d))[0] & 1 == 0:
        d = math.nextafter(d, math.inf if Fraction(d) < r else -math.inf)
    return F(d)


# MLAS's logistic approximation (Eigen's coefficients): p(x) / q(x) + 1/2 on
# [-18, 18], p odd of degree 9, q even of degree 10
_LOGISTIC_P = [F(4.37031012579801e-11), F(1.15627324459942e-07), F(6.08574864600143e-05),
               F(8.51377133304701e-03), F(2.48287947061529e-01)]
_LOGISTIC_Q = [F(6.10247389755681e-13), F(5.76102136993427e-09), F(6.29106785017040e-06),
               F(1.70198817374094e-03), F(1.16817656904453e-01), F(9.93151921023180e-01)]


def _logistic(v: np.float32) -> np.float32:
    x = F(min(max(F(-18.0), v), F(18.0)))
    x2 = F(x * x)
    p = _fma(x2, _LOGISTIC_P[0], _LOGISTIC_P[1])
    for c in _LOGISTIC_P[2:]:
        p = _fma(x2, p, c)
    q = _fma(x2, _LOGISTIC_Q[0], _LOGISTIC_Q[1])
    for c in _LOGISTIC_Q[2:]:
        q = _fma(x2, q, c)
    p = F(x * p)
    return F(max(F(0.0), F(F(p / q) + F(0.5))))


def _quantize(v: np.ndarray, scale: np.float32, zp: int, dt: str) -> np.ndarray:
    """MLAS's QuantizeLinear of float32 values: v / scale, clamped to the
    type's range less the zero point, rounded half to even, plus the zero
    point."""
    lo, hi = (-128, 127) if dt == "int8" else (0, 255)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        q = np.asarray(v, F) / F(scale)
    q = np.clip(q, F(lo - zp), F(hi - zp))
    q = np.where(np.isnan(q), F(lo - zp), q)  # cvtps of NaN is INT_MIN, saturated
    return (np.rint(q).astype(np.int64) + zp).astype(np.int64)


def _stored_inputs(dt: str) -> np.ndarray:
    """The 256 stored int8 bytes in table order ((uint8)s) and the values
    of type `dt` they hold."""
    s = np.arange(256, dtype=np.uint8).view(np.int8).astype(np.int64)
    return s + 128 if dt == "uint8" else s


def _table(ctx: _Ctx, xs: np.float32, xz: int, ys: np.float32, yz: int, dt: str,
           fn: Callable[[np.ndarray], np.ndarray]) -> ir.Expr:
    """The qnn.lut table of fn between two quantizations of type dt."""
    x = _stored_inputs(dt)
    real = (F(xs) * (x - xz).astype(F)).astype(F)
    y = _quantize(fn(real), ys, yz, dt)
    stored = y - 128 if dt == "uint8" else y
    return ir.const(stored.astype(np.int8))


def _lut(ctx: _Ctx, x: ir.Expr, table: ir.Expr) -> ir.Expr:
    return call("qnn.lut", x, table)


def _stored(ctx: _Ctx, n: int, dt: str) -> ir.Expr:
    """Input n as the kernels store it (uint8 as int8 less 128)."""
    return _u8_to_s8(ctx.expr(n)) if dt == "uint8" else ctx.expr(n)


def _result(y: ir.Expr, dt: str) -> ir.Expr:
    """A stored result as the model's type."""
    return _s8_to_u8(y) if dt == "uint8" else y


# ---- element-wise operators by table ----------------------------------------------

def _unary_q(ctx: _Ctx) -> Tuple[np.float32, int, np.float32, int, str]:
    """X_scale, X_zero_point, Y_scale, Y_zero_point of a QLinear unary
    operator (inputs 1 to 4), per tensor, and its element type."""
    xdt = ctx.dtype(0)
    if xdt is not None and xdt not in Q8:
        raise ctx.unsupported("input 0 '%s' of element type %s is not supported (int8, uint8)"
                              % (ctx.ins[0], xdt))
    xs, xz, xzdt = _qparams(ctx, 1, 2, "X", xdt)
    ys, yz, yzdt = _qparams(ctx, 3, 4, "Y", xdt)
    for what, s, z in (("X", xs, xz), ("Y", ys, yz)):
        if s.size != 1 or z.size != 1:
            raise ctx.unsupported("%s_scale and %s_zero_point must be per tensor (one value), "
                                  "got %d and %d" % (what, what, s.size, z.size))
    dt = xdt or xzdt
    for what, zdt in (("X", xzdt), ("Y", yzdt)):
        if zdt != dt:
            raise ctx.error("%s_zero_point is %s, expected %s like the input" % (what, zdt, dt))
    return F(xs[0]), int(xz[0]), F(ys[0]), int(yz[0]), dt


def _chk_unary(ctx: _Ctx) -> None:
    _unary_q(ctx)
    ctx.single_output()


def _sigmoid(ctx: _Ctx) -> ir.Expr:
    xs, xz, ys, yz, dt = _unary_q(ctx)
    t = _table(ctx, xs, xz, ys, yz, dt,
               lambda v: np.array([_logistic(F(e)) for e in v], F))
    return _result(_lut(ctx, _stored(ctx, 0, dt), t), dt)


def _leaky_relu(ctx: _Ctx) -> ir.Expr:
    xs, xz, ys, yz, dt = _unary_q(ctx)
    alpha = F(ctx.attr("alpha", 0.01))
    t = _table(ctx, xs, xz, ys, yz, dt,
               lambda v: np.where(v >= F(0), v, (alpha * v).astype(F)).astype(F))
    return _result(_lut(ctx, _stored(ctx, 0, dt), t), dt)


# ---- QLinearConcat ---------------------------------------------------------------------

def _concat_parts(ctx: _Ctx) -> Tuple[np.float32, int, str, List[Tuple[int, np.float32, int]]]:
    """Y_scale, Y_zero_point, the element type and (input index, scale,
    zero point) of each concatenated tensor."""
    n = len(ctx.ins)
    if n < 5 or (n - 2) % 3:
        raise ctx.error("expects Y_scale, Y_zero_point and (X, X_scale, X_zero_point) "
                        "triples, got %d inputs" % n)
    ys, yz, dt = _qparams(ctx, 0, 1, "Y", None)
    if dt not in Q8:
        raise ctx.unsupported("Y_zero_point of element type %s is not supported (int8, uint8)"
                              % dt)
    if ys.size != 1 or yz.size != 1:
        raise ctx.unsupported("Y must be quantized per tensor")
    parts = []
    for i in range(2, n, 3):
        xdt = ctx.dtype(i)
        if xdt is not None and xdt != dt:
            raise ctx.unsupported("input %d '%s' is %s, expected %s like Y_zero_point"
                                  % (i, ctx.ins[i], xdt, dt))
        xs, xz, zdt = _qparams(ctx, i + 1, i + 2, "input %d's" % i, dt)
        if zdt != dt:
            raise ctx.error("input %d's zero point is %s, expected %s like Y_zero_point"
                            % (i + 2, zdt, dt))
        if xs.size != 1 or xz.size != 1:
            raise ctx.unsupported("input %d must be quantized per tensor" % i)
        parts.append((i, F(xs[0]), int(xz[0])))
    return F(ys[0]), int(yz[0]), dt, parts


def _chk_concat(ctx: _Ctx) -> None:
    if ctx.attr("axis") is None:
        raise ctx.error("attribute axis is missing")
    _concat_parts(ctx)


def _concat(ctx: _Ctx) -> ir.Expr:
    ys, yz, dt, parts = _concat_parts(ctx)
    xs: List[ir.Expr] = []
    rank = len(ctx.shape(parts[0][0]))
    axis = _norm_axis(ctx, int(ctx.attr("axis")), rank)
    for i, s, z in parts:
        x = ctx.expr(i)
        if not (s == ys and z == yz):
            x = _result(_lut(ctx, _stored(ctx, i, dt), _table(ctx, s, z, ys, yz, dt,
                                                              lambda v: v)), dt)
        xs.append(x)
    while len(xs) > 1:  # a concatenate takes at most 16 parts
        xs = [p[0] if len(p) == 1 else call("concatenate", ir.Tuple(p), axis=axis)
              for p in (xs[i:i + 16] for i in range(0, len(xs), 16))]
    return xs[0]


# ---- QLinearAdd, QLinearMul ----------------------------------------------------------

def _binary_q(ctx: _Ctx) -> Tuple[List[Tuple[np.float32, int]], str]:
    """(scale, zero point) of A, B and C (inputs 1-2, 4-5, 6-7), per
    tensor, and the element type."""
    dt = ctx.dtype(0) or ctx.dtype(3)
    for i in (0, 3):
        d = ctx.dtype(i)
        if d is not None and (d not in Q8 or d != dt):
            raise ctx.unsupported("input %d '%s' of element type %s is not supported (int8 or "
                                  "uint8, both inputs alike)" % (i, ctx.ins[i], d))
    qs = []
    for what, s_i, z_i in (("A", 1, 2), ("B", 4, 5), ("C", 6, 7)):
        s, z, zdt = _qparams(ctx, s_i, z_i, what, dt)
        if s.size != 1 or z.size != 1:
            raise ctx.unsupported("%s_scale and %s_zero_point must be per tensor (one value), "
                                  "got %d and %d" % (what, what, s.size, z.size))
        if dt is not None and zdt != dt:
            raise ctx.error("%s_zero_point is %s, expected %s like the inputs" % (what, zdt, dt))
        dt = dt or zdt
        qs.append((F(s[0]), int(z[0])))
    assert dt is not None
    return qs, dt


def _chk_binary(ctx: _Ctx) -> None:
    _binary_q(ctx)
    ctx.single_output()


def _binary(kind: str) -> Callable[[_Ctx], ir.Expr]:
    def conv(ctx: _Ctx) -> ir.Expr:
        qs, dt = _binary_q(ctx)
        args: List[ir.Expr] = [_stored(ctx, 0, dt), _stored(ctx, 3, dt)]
        for s, z in qs:
            args += [scalar(s, "float32"), scalar(z, "int32")]
        return _result(call(kind, *args, scalar(128 if dt == "uint8" else 0, "int32")), dt)
    return conv


# ---- QLinearAveragePool, QLinearGlobalAveragePool -----------------------------------

def _chk_pool(ctx: _Ctx) -> None:
    _chk_unary(ctx)
    if int(ctx.attr("channels_last", 0)):
        raise ctx.unsupported("attribute channels_last=%d is not supported (0: NCHW)"
                              % int(ctx.attr("channels_last", 0)))
    r = ctx.rank(0)
    if ctx.op == "QLinearAveragePool":
        ctx.only("auto_pad", ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"), "NOTSET")
        ctx.only("ceil_mode", (0,), 0)
        k = ctx.ints("kernel_shape")
        if k is None:
            raise ctx.error("attribute kernel_shape is missing")
        if len(k) not in (1, 2):
            raise ctx.unsupported("attribute kernel_shape=%s is not supported (1-d or 2-d "
                                  "windows)" % k)
        d = ctx.ints("dilations")
        if d is not None and any(x != 1 for x in d):
            raise ctx.unsupported("attribute dilations=%s is not supported (1 only)" % d)
        if r is not None and r != len(k) + 2:
            raise ctx.error("a %d-d window over a rank-%d input" % (len(k), r))
    elif r is not None and r < 3:
        raise ctx.error("expects at least 3 dimensions, got %d" % r)


def _pool(ctx: _Ctx) -> ir.Expr:
    xs, xz, ys, yz, dt = _unary_q(ctx)
    shp = ctx.shape(0)
    x = _stored(ctx, 0, dt)
    if ctx.op == "QLinearGlobalAveragePool":
        hw = [1, _prod(shp[2:])]
        k, s, pad, cip = hw, [1, 1], [0, 0, 0, 0], False
    else:
        k = list(ctx.ints("kernel_shape") or [])
        s = list(ctx.ints("strides", [1] * len(k)) or [1] * len(k))
        if len(k) == 1:  # 1-d: a 2-d window of height 1
            hw = [1, shp[2]]
            p1 = ctx.ints("pads", [0, 0]) or [0, 0]
            if ctx.attr("auto_pad", "NOTSET") not in ("NOTSET", "VALID"):
                raise ctx.unsupported("auto_pad %s on a 1-d window is not supported"
                                      % ctx.attr("auto_pad"))
            pad = [0, p1[0], 0, p1[1]] if ctx.attr("auto_pad", "NOTSET") == "NOTSET" else [0] * 4
            k, s = [1, k[0]], [1, s[0]]
        else:
            hw = shp[2:]
            pad = _auto_pad(ctx, hw, k, s, [1, 1])
        cip = bool(ctx.attr("count_include_pad", 0))
    if any(v < 0 for v in pad):
        raise ctx.unsupported("negative pads %s are not supported" % pad)
    if list(hw) != shp[2:]:
        x = call("reshape", x, newshape=shp[:2] + list(hw))
    y = call("qnn.qlinear_avg_pool2d", x, scalar(xs, "float32"), scalar(xz, "int32"),
             scalar(ys, "float32"), scalar(yz, "int32"),
             scalar(128 if dt == "uint8" else 0, "int32"), pool_size=k, strides=s,
             padding=pad, layout="NCHW", ceil_mode=False, count_include_pad=cip)
    if ctx.op == "QLinearGlobalAveragePool":
        y = call("reshape", y, newshape=shp[:2] + [1] * (len(shp) - 2))
    elif len(shp) == 3:
        y = call("reshape", y, newshape=shp[:2] + [int(y.checked_type.shape[3])])
    return _result(y, dt)


# ---- QLinearSoftmax ------------------------------------------------------------------

def _chk_softmax(ctx: _Ctx) -> None:
    _chk_unary(ctx)
    if ctx.attr("opset") is None:
        raise ctx.error("attribute opset is missing (onnxruntime requires it)")


def _softmax_table(xs: np.float32, n: int) -> np.ndarray:
    """onnxruntime's table: entry d is exp((bit_shift - d) * x_scale) in
    double, as float32, where bit_shift keeps n of the largest below
    FLT_MAX."""
    fmax = F(np.finfo(F).max)
    shift = max(0.0, math.log(float(F(fmax / F(n)))) - 5.0) / float(xs)
    return np.array([math.exp((shift - d) * float(xs)) for d in range(256)], F)


def _softmax(ctx: _Ctx) -> ir.Expr:
    xs, _, ys, yz, dt = _unary_q(ctx)
    shp = ctx.shape(0)
    opset = int(ctx.attr("opset"))
    axis = _norm_axis(ctx, int(ctx.attr("axis", 1 if opset < 13 else -1)), len(shp))
    outer = _prod(shp[:axis])
    if opset < 13:  # the input as 2-d at axis
        n, inner = _prod(shp[axis:]), 1
    else:
        n, inner = shp[axis], _prod(shp[axis + 1:])
    x = call("reshape", _stored(ctx, 0, dt), newshape=[outer, n, inner])
    y = call("qnn.qlinear_softmax", x, ir.const(_softmax_table(xs, n)),
             scalar(ys, "float32"), scalar(yz, "int32"),
             scalar(128 if dt == "uint8" else 0, "int32"))
    return _result(call("reshape", y, newshape=shp), dt)


# com.microsoft operator -> (converter, check for the first pass)
MS_CONVERTERS: Dict[str, _Spec] = {
    "QLinearSigmoid": (_sigmoid, _chk_unary),
    "QLinearLeakyRelu": (_leaky_relu, _chk_unary),
    "QLinearConcat": (_concat, _chk_concat),
    "QLinearAdd": (_binary("qnn.qlinear_add"), _chk_binary),
    "QLinearMul": (_binary("qnn.qlinear_mul"), _chk_binary),
    "QLinearAveragePool": (_pool, _chk_pool),
    "QLinearGlobalAveragePool": (_pool, _chk_pool),
    "QLinearSoftmax": (_softmax, _chk_softmax),
}

# inputs that must be constants (the quantization parameters)
MS_PARAMETER_INPUTS: Dict[str, Tuple[int, ...]] = {
    "QLinearSigmoid": (1, 2, 3, 4), "QLinearLeakyRelu": (1, 2, 3, 4),
    "QLinearAdd": (1, 2, 4, 5, 6, 7), "QLinearMul": (1, 2, 4, 5, 6, 7),
}


def supported_operators() -> List[str]:
    """The com.microsoft operators the ONNX importer maps."""
    return sorted(MS_CONVERTERS)


__all__: Sequence[str] = ("MS_CONVERTERS", "supported_operators")
