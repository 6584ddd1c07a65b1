"""TFLite comparisons, logic, selection, rounding and the fill/broadcast
operators for frontend/tflite.py, composed of the IR's operators with the
helpers the ONNX importer uses too (common.py).

* EQUAL, NOT_EQUAL, GREATER, GREATER_EQUAL, LESS, LESS_EQUAL: exact 0/1
  masks of the difference (common.compare). int32 operands take the
  difference only where their signs agree, so none overflows (int64, which
  TFLite Micro compares too, is refused: the IR has no int64 arithmetic).
  int8 operands are first rescaled as TFLite Micro rescales them
  (each value minus its zero point, shifted left by 8, times its scale's
  fixed-point multiplier below one): with 256 possible values per operand
  that rescale is a table computed here and read with take.
* LOGICAL_AND, LOGICAL_OR, LOGICAL_NOT, SELECT_V2: arithmetic on 0/1.
* FLOOR, CEIL, ROUND (half to even), FLOOR_DIV, FLOOR_MOD, SQUARE, SIN,
  COS in float32, as TFLite Micro has them.
* ZEROS_LIKE, FILL, BROADCAST_TO, BROADCAST_ARGS: a constant when their
  inputs are constants (folded at import), else a take of the input at
  positions computed here (exact for every element type).
* ADD_N and CUMSUM in float32, summing in TFLite's order, and in int8 as
  TFLite rescales the sum (see _q_sum).
* RELU_0_TO_1 (float32, int8) as LiteRT has it.

Each converter takes the importer's operator context (tflite._Ctx).
"""
from __future__ import annotations

import math
from typing import Any, List, Optional, Tuple

import numpy as np

from .. import ir
from .common import (call, ceil_of, compare as compare_of, cumsum as cumsum_of, floor_of, gt_mask,
                     logic as logic_of, mod_of, ne_mask, not_mask, one, round_of, scalar,
                     select as select_of, sin_cos)

_KINDS = {"EQUAL": "eq", "NOT_EQUAL": "ne", "GREATER": "gt", "GREATER_EQUAL": "ge",
          "LESS": "lt", "LESS_EQUAL": "le"}


def multiplier_below_one(real: float) -> Tuple[int, int]:
    """TFLite's QuantizeMultiplierSmallerThanOneExp: (q31 multiplier,
    shift <= 0) with real = multiplier * 2^(shift - 31), for 0 < real < 1."""
    m, e = math.frexp(real)
    q = int(math.floor(m * (1 << 31) + 0.5))  # std::round of a positive value
    if q == 1 << 31:  # the mantissa rounded up to 1
        q, e = q >> 1, e + 1
    return (q, e) if e >= -31 else (0, 0)


def _high_mul(a: np.ndarray, b: int) -> np.ndarray:
    """SaturatingRoundingDoublingHighMul of int32 values a and b (no operand
    here is INT32_MIN, the saturating case)."""
    ab = a.astype(np.int64) * np.int64(b)
    nudge = np.where(ab >= 0, 1 << 30, 1 - (1 << 30)).astype(np.int64)
    v = ab + nudge
    # division by 2^31 toward zero
    return (np.sign(v) * (np.abs(v) >> 31)).astype(np.int64)


def _divide_by_pot(x: np.ndarray, e: int) -> np.ndarray:
    """RoundingDivideByPOT: x / 2^e rounded half away from zero."""
    mask = (1 << e) - 1
    rem = x & mask
    thr = (mask >> 1) + (x < 0).astype(np.int64)
    return (x >> e) + (rem > thr).astype(np.int64)


def rescale_table(ctx: Any, t: Any) -> np.ndarray:
    """The int32 values TFLite Micro's comparisons compare for each int8
    value of t (-128 .. 127): MultiplyByQuantizedMultiplierSmallerThanOneExp
    of (v - zero point) * 2^8 by t's scale."""
    s, z = ctx.qparams(t)
    if s.size != 1:
        raise ctx.error("tensor '%s' must be quantized per tensor, it has %d scales"
                        % (t.name, s.size))
    scale = float(s[0])
    if not scale < 1.0:
        raise ctx.unsupported("tensor '%s' has scale %g; TFLite's comparisons need a scale "
                              "below 1" % (t.name, scale))
    mult, shift = multiplier_below_one(scale)
    v = (np.arange(-128, 128, dtype=np.int64) - int(z[0])) * 256
    return _divide_by_pot(_high_mul(v, mult), -shift).astype(np.int32)


def _rescaled(ctx: Any, n: int) -> ir.Expr:
    """int8 input n as the int32 values TFLite Micro compares."""
    idx = call("add", call("cast", ctx.expr(n), dtype="int32"), scalar(128, "int32"))
    return call("take", ir.const(rescale_table(ctx, ctx.t(n))), idx, axis=0)


def _compare_int32(kind: str, a: ir.Expr, b: ir.Expr) -> ir.Expr:
    """a <kind> b of int32 operands without an overflowing difference:
    where the signs agree a - b fits and decides; where they differ the
    sign of a decides (and the operands are never equal)."""
    dt = "int32"
    if kind in ("lt", "ge"):
        a, b = b, a
    pa = call("add", call("clip", a, a_min=-1.0, a_max=0.0), one(dt))  # 1 where a >= 0
    pb = call("add", call("clip", b, a_min=-1.0, a_max=0.0), one(dt))
    same = call("add", call("multiply", pa, pb),
                call("multiply", not_mask(pa, dt), not_mask(pb, dt)))
    d = call("subtract", call("multiply", a, same), call("multiply", b, same))
    if kind in ("eq", "ne"):
        m = call("multiply", not_mask(ne_mask(d, dt), dt), same)
    else:
        m = call("add", call("multiply", gt_mask(d, dt), same),
                 call("multiply", pa, not_mask(same, dt)))
    if kind in ("ne", "le", "ge"):
        m = not_mask(m, dt)
    return call("cast", m, dtype="bool")


def compare(ctx: Any) -> ir.Expr:
    kind = _KINDS[ctx.name]
    a, b, out = ctx.t(0), ctx.t(1), ctx.out
    types = ("float32", "int8", "int32") + (("bool",) if kind in ("eq", "ne") else ())
    if a.dtype != b.dtype or a.dtype not in types or out.dtype != "bool":
        raise ctx.unsupported("operand types %s, %s -> %s are not supported (both of %s, "
                              "-> bool)" % (a.dtype, b.dtype, out.dtype, ", ".join(types)))
    if a.dtype == "int8":
        return compare_of(kind, _rescaled(ctx, 0), _rescaled(ctx, 1), "int32")
    if a.dtype == "int32":
        return _compare_int32(kind, ctx.expr(0), ctx.expr(1))
    if a.dtype == "bool":
        return compare_of(kind, call("cast", ctx.expr(0), dtype="int32"),
                          call("cast", ctx.expr(1), dtype="int32"), "int32")
    return compare_of(kind, ctx.expr(0), ctx.expr(1), "float32")


def _all_bool(ctx: Any, n: int) -> None:
    ts = [ctx.t(i) for i in range(n)] + [ctx.out]
    if any(t.dtype != "bool" for t in ts):
        raise ctx.unsupported("operand types %s are not supported (bool)"
                              % ", ".join(t.dtype for t in ts))


def logical(ctx: Any, kind: str) -> ir.Expr:
    if kind == "not":
        _all_bool(ctx, 1)
        return logic_of("not", ctx.expr(0))
    _all_bool(ctx, 2)
    return logic_of(kind, ctx.expr(0), ctx.expr(1))


def select_v2(ctx: Any) -> ir.Expr:
    c, x, y, out = ctx.t(0), ctx.t(1), ctx.t(2), ctx.out
    if c.dtype != "bool":
        raise ctx.unsupported("the condition is %s; expected bool" % c.dtype)
    if not x.dtype == y.dtype == out.dtype or x.dtype not in ("float32", "int8", "int16"):
        raise ctx.unsupported("operand types %s, %s -> %s are not supported (float32, int8 or "
                              "int16)" % (x.dtype, y.dtype, out.dtype))
    r = select_of(ctx.expr(0), ctx.expr(1), ctx.expr(2), out.dtype)
    shape = [int(d) for d in r.checked_type.shape] if hasattr(r, "checked_type") else None
    if shape is not None and shape != list(out.shape):
        raise ctx.error("the operands broadcast to %s, the output is %s" % (shape, out.shape))
    return r


def _floats(ctx: Any, n: int, allowed: str = "float32") -> List[ir.Expr]:
    ts = [ctx.t(i) for i in range(n)] + [ctx.out]
    if any(t.dtype != "float32" for t in ts):
        raise ctx.unsupported("operand types %s are not supported (%s)"
                              % (", ".join(t.dtype for t in ts), allowed))
    return [ctx.expr(i) for i in range(n)]


def rounding(ctx: Any, kind: str) -> ir.Expr:
    """FLOOR, CEIL, ROUND (half to even)."""
    x, = _floats(ctx, 1)
    return {"floor": floor_of, "ceil": ceil_of, "round": round_of}[kind](x)


def _int32_floor(ctx: Any) -> Optional[Tuple[ir.Expr, ir.Expr, ir.Expr, ir.Expr]]:
    """For int32 operands (LiteRT's FLOOR_DIV and FLOOR_MOD take them;
    TFLite Micro's do not): the truncated quotient q, the remainder r =
    a - q * b (|r| < |b|, so no overflow), the divisor b and the
    correction, 1 where r and b differ in sign (floor is then q - 1 and the
    floored remainder r + b), else 0. None for other types. A zero divisor
    or INT32_MIN / -1 fails the run, as the crt's integer DIV does."""
    ts = [ctx.t(0), ctx.t(1), ctx.out]
    if any(t.dtype != "int32" for t in ts):
        return None
    a, b = ctx.expr(0), ctx.expr(1)
    q = call("divide", a, b)
    r = call("subtract", a, call("multiply", q, b))
    zero, one = scalar(0, "int32"), scalar(1, "int32")

    def pos(x: ir.Expr) -> ir.Expr:  # 1 where x > 0 (no negation: INT32_MIN)
        return call("maximum", call("minimum", x, one), zero)

    def neg(x: ir.Expr) -> ir.Expr:  # 1 where x < 0
        return call("negative", call("minimum", call("maximum", x, scalar(-1, "int32")), zero))

    fix = call("add", call("multiply", neg(r), pos(b)), call("multiply", pos(r), neg(b)))
    return q, r, b, fix


def floor_div(ctx: Any) -> ir.Expr:
    """FLOOR_DIV: float32 (TFLite Micro), or int32 (LiteRT) exactly."""
    ints = _int32_floor(ctx)
    if ints is not None:
        q, _, _, fix = ints
        return call("subtract", q, fix)
    a, b = _floats(ctx, 2, "float32, or int32")
    return floor_of(call("divide", a, b))


def floor_mod(ctx: Any) -> ir.Expr:
    """TFLite's FloorMod: fmod(x, y), moved by y where its sign and y's
    differ; here x - y * trunc(x / y) in float32 (common.mod_of), equal to
    fmod's exact remainder up to the rounding of y * trunc(x / y) (a
    quotient that rounds up to an integer gives a remainder off by y); or
    exactly for int32 (LiteRT)."""
    ints = _int32_floor(ctx)
    if ints is not None:
        _, r, b, fix = ints
        return call("add", r, call("multiply", fix, b))
    a, b = _floats(ctx, 2, "float32, or int32")
    return mod_of(a, b, floored=True)


def square(ctx: Any) -> ir.Expr:
    x, = _floats(ctx, 1)
    return call("multiply", x, x)


def trig(ctx: Any, kind: str) -> ir.Expr:
    x, = _floats(ctx, 1)
    sin, cos = sin_cos(x)
    return sin if kind == "sin" else cos


def zeros_like(ctx: Any) -> np.ndarray:
    x, out = ctx.t(0), ctx.out
    if x.dtype != out.dtype or x.dtype not in ("float32", "int8", "int32", "int64"):
        raise ctx.unsupported("%s -> %s is not supported (float32, int8, int32, int64)"
                              % (x.dtype, out.dtype))
    return np.zeros(out.shape, dtype=out.np_dtype)


def _shape_input(ctx: Any, n: int, what: str) -> List[int]:
    t = ctx.t(n)
    if t.dtype not in ("int32", "int64"):
        raise ctx.unsupported("%s (input %d) is %s; expected int32 or int64" % (what, n, t.dtype))
    return [int(d) for d in ctx.const(n, what).reshape(-1)]


def _spread(ctx: Any, n: int, index: np.ndarray) -> ir.Expr:
    """Input n flattened, read at the int32 positions `index`."""
    flat = call("reshape", ctx.expr(n), newshape=[int(np.prod(ctx.t(n).shape, dtype=np.int64))])
    return call("take", flat, ir.const(index.astype(np.int32)), axis=0)


def fill(ctx: Any) -> ir.Expr:
    dims = _shape_input(ctx, 0, "the output's dims")
    v, out = ctx.t(1), ctx.out
    if v.dtype != out.dtype or v.dtype not in ("float32", "int8", "int32"):
        raise ctx.unsupported("a %s value -> %s is not supported (float32, int8, int32)"
                              % (v.dtype, out.dtype))
    if int(np.prod(v.shape, dtype=np.int64)) != 1:
        raise ctx.error("the value must be a scalar, it has shape %s" % v.shape)
    if dims != list(out.shape):
        raise ctx.error("dims %s differ from the output's shape %s" % (dims, out.shape))
    return _spread(ctx, 1, np.zeros(dims, np.int32))


def fold_fill(ctx: Any, xs: List[np.ndarray]) -> List[np.ndarray]:
    return [np.full([int(d) for d in xs[0].reshape(-1)], xs[1].reshape(-1)[0])]


def _broadcast_index(ctx: Any, shape: List[int]) -> np.ndarray:
    x = ctx.t(0)
    src = np.arange(int(np.prod(x.shape, dtype=np.int64)), dtype=np.int32).reshape(x.shape)
    try:
        return np.broadcast_to(src, shape)
    except ValueError:
        raise ctx.error("input shape %s does not broadcast to %s" % (x.shape, shape)) from None


def broadcast_to(ctx: Any) -> ir.Expr:
    shape = _shape_input(ctx, 1, "the shape")
    if shape != list(ctx.out.shape):
        raise ctx.error("shape %s differs from the output's shape %s" % (shape, ctx.out.shape))
    if ctx.t(0).dtype != ctx.out.dtype:
        raise ctx.error("the input is %s, the output %s" % (ctx.t(0).dtype, ctx.out.dtype))
    return _spread(ctx, 0, _broadcast_index(ctx, shape))


def fold_broadcast_to(ctx: Any, xs: List[np.ndarray]) -> List[np.ndarray]:
    return [np.broadcast_to(xs[0], [int(d) for d in xs[1].reshape(-1)]).copy()]


def broadcast_args(ctx: Any) -> ir.Expr:
    raise ctx.unsupported("both shapes must be constants (or computed from constants and "
                          "SHAPE)")


def fold_broadcast_args(ctx: Any, xs: List[np.ndarray]) -> List[np.ndarray]:
    a, b = (tuple(int(d) for d in x.reshape(-1)) for x in xs)
    try:
        shape = np.broadcast_shapes(a, b)
    except ValueError:
        raise ctx.error("shapes %s and %s do not broadcast" % (list(a), list(b))) from None
    return [np.array(shape, dtype=xs[0].dtype)]


# TFLite's int8 ADD_N and CUMSUM: each (value - zero point) shifted left
# by 20 and halved by its multiplier 1/2 (exactly (v - z) * 2^19), summed
# in int32 onto a start of -z (rescaled the same way; TFLite's reference
# kernels start their sums there, not at 0: an extra term the tests
# confirm on the tflite-micro wheel), and the sum scaled by
# 2 * s_in / (2^20 * s_out). That is qnn.requantize of the int32 sum * 2^19
# from s_in to s_out * 2^19 (the same double quotient, rounded as TFLite
# rounds). Past 16 terms (the start included) TFLite's int32 sum of
# shifted values wraps; the int32 arithmetic here wraps the same way (the
# unshifted sum is exact, its product by 2^19 wraps as TFLite's additions
# do), so longer sums equal the wheel's too. The limit keeps CUMSUM's
# float32 running sums of 9-bit values exact.
_SUM_SHIFT = 19
_MAX_TERMS = 1 << 16


def _q_sum(ctx: Any, total: ir.Expr, values: int) -> ir.Expr:
    """The int8 result of the int32 sum `total` of `values` values (each
    less its zero point)."""
    x, out = ctx.t(0), ctx.out
    terms = values + 1
    if terms > _MAX_TERMS:
        raise ctx.unsupported("an int8 sum of %d values is not supported (at most %d)"
                              % (values, _MAX_TERMS - 1))
    sx, _ = ctx.qscalar(x)
    so, zo = ctx.qscalar(out)
    start = scalar(-int(x.zero_point[0]), "int32")
    acc = call("multiply", call("add", total, start), scalar(1 << _SUM_SHIFT, "int32"))
    return call("qnn.requantize", acc, sx, scalar(0, "int32"),
                scalar(float(out.scale[0]) * (1 << _SUM_SHIFT), "float32"), zo,
                out_dtype="int8")


def _int8_terms(ctx: Any, n: int) -> List[ir.Expr]:
    """Inputs 0 .. n-1 (int8, one scale and zero point) less their zero
    point, in int32."""
    ts = [ctx.t(i) for i in range(n)]
    if any(t.dtype != "int8" for t in ts) or ctx.out.dtype != "int8":
        raise ctx.unsupported("operand types %s -> %s are not supported (float32 or int8)"
                              % (", ".join(t.dtype for t in ts), ctx.out.dtype))
    s0, z0 = ctx.qparams(ts[0])
    for t in ts[1:]:
        s, z = ctx.qparams(t)
        if s[0] != s0[0] or z[0] != z0[0]:
            raise ctx.error("int8 inputs must share one scale and zero point; '%s' has %g, %d, "
                            "'%s' has %g, %d" % (ts[0].name, s0[0], z0[0], t.name, s[0], z[0]))
    ctx.qscalar(ctx.out)
    zp = scalar(int(z0[0]), "int32")
    return [call("subtract", call("cast", ctx.expr(i), dtype="int32"), zp) for i in range(n)]


def _sum(xs: List[ir.Expr]) -> ir.Expr:
    y = xs[0]
    for x in xs[1:]:
        y = call("add", y, x)
    return y


def add_n(ctx: Any) -> ir.Expr:
    n = len(ctx.ins)
    if n < 2:
        raise ctx.error("needs at least 2 inputs, it has %d" % n)
    if ctx.t(0).dtype == "int8":
        return _q_sum(ctx, _sum(_int8_terms(ctx, n)), n)
    return _sum(_floats(ctx, n))


def cumsum(ctx: Any) -> ir.Expr:
    o = ctx.options("CumsumOptions")
    shape = list(ctx.t(0).shape)
    axis = int(ctx.const(1, "the axis").reshape(-1)[0])
    if not -len(shape) <= axis < len(shape):
        raise ctx.error("axis %d is out of range for rank %d" % (axis, len(shape)))
    axis %= len(shape)
    exclusive, reverse = bool(o.Exclusive()), bool(o.Reverse())
    if ctx.t(0).dtype == "int8":
        v, = _int8_terms(ctx, 1)
        # the float32 running sums of at most 2^16 values of 9 bits are exact
        total = cumsum_of(call("cast", v, dtype="float32"), shape, axis, exclusive, reverse)
        return _q_sum(ctx, call("cast", total, dtype="int32"), int(shape[axis]))
    x, = _floats(ctx, 1)
    return cumsum_of(x, shape, axis, exclusive, reverse)


def relu_0_to_1(ctx: Any) -> ir.Expr:
    """RELU_0_TO_1 (LiteRT's; the tflite-micro wheel lacks it): a clip to
    [0, 1], in int8 at the output's quantized 0 and 1 (rounded half away
    from zero, as TFLite's activation ranges) after a rescale when the
    scales differ."""
    x, out = ctx.t(0), ctx.out
    if x.dtype == out.dtype == "float32":
        return call("clip", ctx.expr(0), a_min=0.0, a_max=1.0)
    if not x.dtype == out.dtype == "int8":
        raise ctx.unsupported("%s -> %s is not supported (float32 or int8)"
                              % (x.dtype, out.dtype))
    (sx, zx), (so, zo) = ctx.qscalar(x), ctx.qscalar(out)
    e = ctx.expr(0)
    if x.scale[0] != out.scale[0] or x.zero_point[0] != out.zero_point[0]:
        e = call("qnn.requantize", e, sx, zx, so, zo, out_dtype="int8")
    scale, zp = np.float32(out.scale[0]), int(out.zero_point[0])
    hi = zp + int(math.floor(float(np.float32(1.0) / scale) + 0.5))
    return call("clip", e, a_min=float(max(-128, zp)), a_max=float(min(127, hi)))
