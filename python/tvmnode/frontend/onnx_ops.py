"""More ONNX operators for frontend/onnx.py: folding at import, and
operators composed of the IR's operators.

Folding: a node whose inputs are all constants (and Shape, Size and
EyeLike of any tensor: shapes are static after import) is evaluated here
with numpy, as a Constant node is read; the importer never builds it. So
the shape arithmetic of exported graphs (Shape -> Gather -> Concat ->
Reshape, ConstantOfShape, Range, ...) becomes the constants the operators
that read it need.

Composition: the remaining operators are built from the IR's operators.
Comparisons give exact 0/1 masks from elementwise arithmetic: for integers
min(max(a - b, 0), 1) is a > b; for float32 the difference is scaled by
2^100 twice (any nonzero difference, denormals included, reaches 1) and
clipped. Logic operators compute on 0/1 in int32. Where blends with the
mask (cond * x + (1 - cond) * y: an infinity or NaN in the branch not
taken spreads into the result). int64 inputs of integer arithmetic run in
int32 (the values must fit). Data movement that depends only on shapes and
constant indices (Trilu, Pad's edge/reflect/wrap, Compress, scatters with
constant indices, ReverseSequence, nearest Resize) is a take at positions
computed here, exact for every element type; linear and cubic Resize,
CumSum and scatter-add are products with constant matrices. Transcendental
functions the IR lacks (Erf, the trigonometric ones) are series after a
range reduction (measured: absolute error below 5e-7; Tan's relative error
below 1.2e-6).

WIDENED replaces rows of frontend/onnx.py's _CONVERTERS (wider element
types, select_last_index, Dropout's mask, edge/reflect/wrap Pad, 1-d
pools); CONVERTERS adds operators; both join _CONVERTERS at the end of
frontend/onnx.py, which calls fold() in its first pass.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .. import ir
from .common import call, compare, cumsum, gather_nd, logic, mod_of, scalar, select
from .common import (as_dtype as _as, ceil_of, floor_of as _floor_of, gt_mask as _gt_mask,
                     ne_mask as _ne_mask, not_mask as _not, poly as _poly,
                     round_of as _round_of, sin_cos as _sin_cos)
from . import onnx as _o
from .onnx import (ANY, F32, _axes, _Ctx, _ELEM, _ELEM_NAMES, _norm_axis, _prod)

INT = ("int8", "uint8", "int16", "int32", "int64")
F32_INT = ("float32",) + INT


# ---- folding ---------------------------------------------------------------------

def _shape_of(ctx: _Ctx, n: int) -> Optional[List[int]]:
    """Input n's static shape (a constant's, or what shape inference gives)."""
    if ctx.is_const(n):
        return list(ctx.imp.g.values[ctx.ins[n]].shape)
    t = ctx.imp.g.inferred.get(ctx.ins[n]) if ctx.has(n) else None
    if t is None or t[1] is None or any(d is None for d in t[1]):
        return None
    return [int(d or 0) for d in t[1]]


def _v(ctx: _Ctx, n: int) -> np.ndarray:
    return ctx.imp.g.values[ctx.ins[n]]


def _f_shape(ctx: _Ctx) -> List[np.ndarray]:
    shp = _shape_of(ctx, 0)
    assert shp is not None
    r = len(shp)
    start = int(ctx.attr("start", 0))
    end = ctx.attr("end")
    start = min(max(start + r if start < 0 else start, 0), r)
    e = r if end is None else int(end)
    e = min(max(e + r if e < 0 else e, 0), r)
    return [np.array(shp[start:e], np.int64)]


def _f_size(ctx: _Ctx) -> List[np.ndarray]:
    shp = _shape_of(ctx, 0)
    assert shp is not None
    return [np.array(_prod(shp), np.int64)]


def _f_constant_of_shape(ctx: _Ctx) -> List[np.ndarray]:
    shp = [int(d) for d in _v(ctx, 0).reshape(-1)] if ctx.has(0) else []
    if any(d < 0 for d in shp):
        raise ctx.error("the shape %s has a negative dimension" % shp)
    a = ctx.attrs.get("value")
    fill = ctx.imp.g._tensor(a.t, "value") if a is not None else np.zeros(1, np.float32)
    if fill.size != 1:
        raise ctx.error("attribute value must hold one value, it has %d" % fill.size)
    return [np.full(shp, fill.reshape(-1)[0], fill.dtype)]


def _f_range(ctx: _Ctx) -> List[np.ndarray]:
    start, limit, delta = (_v(ctx, i).reshape(-1) for i in range(3))
    if start.size != 1 or limit.size != 1 or delta.size != 1:
        raise ctx.error("start, limit and delta must be scalars")
    if delta[0] == 0:
        raise ctx.error("delta must not be 0")
    n = max(int(np.ceil((limit[0] - start[0]) / delta[0])), 0)
    dt = start.dtype
    return [(start[0] + np.arange(n, dtype=np.float64 if dt.kind == "f" else np.int64)
             * delta[0]).astype(dt)]


def _f_eye_like(ctx: _Ctx) -> List[np.ndarray]:
    shp = _shape_of(ctx, 0)
    assert shp is not None
    if len(shp) != 2:
        raise ctx.error("expects a 2-d input, got shape %s" % shp)
    dt = ctx.attr("dtype")
    dtype = _ELEM.get(int(dt)) if dt is not None else ctx.dtype(0)
    if dtype is None:
        raise ctx.unsupported("dtype %s is not supported" % _ELEM_NAMES.get(int(dt), dt))
    return [np.eye(shp[0], shp[1], int(ctx.attr("k", 0)), dtype=np.dtype(dtype))]


def _np_int_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if np.any(b == 0):
        raise ValueError("integer division by zero")
    q = np.abs(a) // np.abs(b)
    return (np.sign(a) * np.sign(b) * q).astype(np.result_type(a, b))


def _f_binary(fn: Callable[[np.ndarray, np.ndarray], np.ndarray]
              ) -> Callable[[_Ctx], List[np.ndarray]]:
    def f(ctx: _Ctx) -> List[np.ndarray]:
        a, b = _v(ctx, 0), _v(ctx, 1)
        return [np.asarray(fn(a, b))]
    return f


def _div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype.kind in "iu":
        return _np_int_div(a, b)
    return (a / b).astype(a.dtype)


def _f_cast(ctx: _Ctx) -> List[np.ndarray]:
    to = _ELEM.get(int(ctx.attr("to", 0)))
    if to is None:
        raise ctx.unsupported("cast to %s is not supported"
                              % _ELEM_NAMES.get(int(ctx.attr("to", 0))))
    return [_v(ctx, 0).astype(np.dtype(to))]


def _f_gather(ctx: _Ctx) -> List[np.ndarray]:
    x, idx = _v(ctx, 0), _v(ctx, 1)
    axis = _norm_axis(ctx, int(ctx.attr("axis", 0)), x.ndim)
    return [np.take(x, idx.astype(np.int64), axis=axis)]


def _f_concat(ctx: _Ctx) -> List[np.ndarray]:
    xs = [_v(ctx, i) for i in range(len(ctx.ins)) if ctx.has(i)]
    return [np.concatenate(xs, axis=_norm_axis(ctx, int(ctx.attr("axis", 0)), xs[0].ndim))]


def _f_unsqueeze(ctx: _Ctx) -> List[np.ndarray]:
    x = _v(ctx, 0)
    axes = _axes(ctx, 13) or []
    r = x.ndim + len(axes)
    out = x
    for a in sorted(_norm_axis(ctx, a, r) for a in axes):
        out = np.expand_dims(out, a)
    return [out]


def _f_squeeze(ctx: _Ctx) -> List[np.ndarray]:
    x = _v(ctx, 0)
    axes = _axes(ctx, 13)
    if axes is None:
        return [np.squeeze(x)]
    return [np.squeeze(x, axis=tuple(_norm_axis(ctx, a, x.ndim) for a in axes))]


def _f_reshape(ctx: _Ctx) -> List[np.ndarray]:
    x = _v(ctx, 0)
    want = [int(d) for d in _v(ctx, 1).reshape(-1)]
    out = [x.shape[i] if d == 0 and not int(ctx.attr("allowzero", 0)) else d
           for i, d in enumerate(want)]
    return [x.reshape(out)]


def _f_slice(ctx: _Ctx) -> List[np.ndarray]:
    x = _v(ctx, 0)
    starts = [int(v) for v in _v(ctx, 1).reshape(-1)]
    ends = [int(v) for v in _v(ctx, 2).reshape(-1)]
    axes = ([int(v) for v in _v(ctx, 3).reshape(-1)] if ctx.has(3)
            else list(range(len(starts))))
    steps = [int(v) for v in _v(ctx, 4).reshape(-1)] if ctx.has(4) else [1] * len(starts)
    sl = [slice(None)] * x.ndim
    for s, e, a, st in zip(starts, ends, axes, steps):
        n = x.shape[_norm_axis(ctx, a, x.ndim)]
        # ONNX clamps the ends to [-1, n] with a negative step, [0, n] otherwise
        e = max(min(e, n), -n - 1)
        sl[_norm_axis(ctx, a, x.ndim)] = slice(s, None if (st < 0 and e < -n) else e, st)
    return [x[tuple(sl)]]


def _f_reduce(fn: Callable[..., np.ndarray], since: int) -> Callable[[_Ctx], List[np.ndarray]]:
    def f(ctx: _Ctx) -> List[np.ndarray]:
        x = _v(ctx, 0)
        axes = _axes(ctx, since)
        keep = bool(ctx.attr("keepdims", 1))
        if not axes:
            if ctx.opset >= since and int(ctx.attr("noop_with_empty_axes", 0)):
                return [x]
            ax: Tuple[int, ...] = tuple(range(x.ndim))
        else:
            ax = tuple(sorted({_norm_axis(ctx, a, x.ndim) for a in axes}))
        return [np.asarray(fn(x, axis=ax, keepdims=keep)).astype(x.dtype)]
    return f


def _f_where(ctx: _Ctx) -> List[np.ndarray]:
    return [np.where(_v(ctx, 0), _v(ctx, 1), _v(ctx, 2))]


def _f_expand(ctx: _Ctx) -> List[np.ndarray]:
    x = _v(ctx, 0)
    shp = tuple(int(d) for d in _v(ctx, 1).reshape(-1))
    out = np.broadcast_shapes(x.shape, shp)
    return [np.ascontiguousarray(np.broadcast_to(x, out))]


def _f_tile(ctx: _Ctx) -> List[np.ndarray]:
    x = _v(ctx, 0)
    reps = [int(d) for d in _v(ctx, 1).reshape(-1)]
    if len(reps) != x.ndim or min(reps, default=1) < 0:
        raise ctx.error("repeats %s for an input of rank %d" % (reps, x.ndim))
    return [np.tile(x, reps)]


def _f_unary(fn: Callable[[np.ndarray], np.ndarray]) -> Callable[[_Ctx], List[np.ndarray]]:
    return lambda ctx: [np.asarray(fn(_v(ctx, 0))).astype(_v(ctx, 0).dtype)]


def _f_variadic(fn: Callable[[np.ndarray, np.ndarray], np.ndarray]
                ) -> Callable[[_Ctx], List[np.ndarray]]:
    def f(ctx: _Ctx) -> List[np.ndarray]:
        xs = [_v(ctx, i) for i in range(len(ctx.ins)) if ctx.has(i)]
        y = xs[0]
        for x in xs[1:]:
            y = fn(y, x)
        return [np.asarray(y)]
    return f


# op type -> numpy evaluation of a node whose inputs are all constants
FOLD: Dict[str, Callable[[_Ctx], List[np.ndarray]]] = {
    "Shape": _f_shape,
    "Size": _f_size,
    "EyeLike": _f_eye_like,
    "ConstantOfShape": _f_constant_of_shape,
    "Range": _f_range,
    "Cast": _f_cast,
    "CastLike": lambda c: [_v(c, 0).astype(_v(c, 1).dtype)],
    "Identity": lambda c: [_v(c, 0)],
    "Add": _f_binary(lambda a, b: a + b),
    "Sub": _f_binary(lambda a, b: a - b),
    "Mul": _f_binary(lambda a, b: a * b),
    "Div": _f_binary(_div),
    "Equal": _f_binary(np.equal),
    "Less": _f_binary(np.less),
    "Greater": _f_binary(np.greater),
    "LessOrEqual": _f_binary(np.less_equal),
    "GreaterOrEqual": _f_binary(np.greater_equal),
    "And": _f_binary(np.logical_and),
    "Or": _f_binary(np.logical_or),
    "Not": lambda c: [np.logical_not(_v(c, 0))],
    "Neg": _f_unary(np.negative),
    "Abs": _f_unary(np.abs),
    "Sqrt": _f_unary(np.sqrt),
    "Max": _f_variadic(np.maximum),
    "Min": _f_variadic(np.minimum),
    "Where": _f_where,
    "Gather": _f_gather,
    "Concat": _f_concat,
    "Unsqueeze": _f_unsqueeze,
    "Squeeze": _f_squeeze,
    "Reshape": _f_reshape,
    "Slice": _f_slice,
    "Expand": _f_expand,
    "ReduceProd": _f_reduce(np.prod, 18),
    "ReduceSum": _f_reduce(np.sum, 13),
    "ReduceMax": _f_reduce(np.max, 18),
    "ReduceMin": _f_reduce(np.min, 18),
    "Transpose": lambda c: [np.transpose(_v(c, 0), c.ints("perm"))],
    "Tile": _f_tile,
}

# evaluated from the input's static shape, whatever computes the input
SHAPE_ONLY = ("Shape", "Size", "EyeLike")


def fold(ctx: _Ctx) -> bool:
    """Evaluate the node into the graph's constants when FOLD knows it and
    its inputs are constants; False otherwise."""
    f = FOLD.get(ctx.op)
    if f is None:
        return False
    if ctx.op in SHAPE_ONLY:
        if _shape_of(ctx, 0) is None:
            return False
    elif not all(ctx.is_const(i) for i in range(len(ctx.ins)) if ctx.has(i)):
        return False
    g = ctx.imp.g
    vals = f(ctx)
    for name, v in zip(ctx.outs, vals):
        if name:
            v = np.array(v, order="C")  # keeps a 0-d value 0-d
            g.values[name] = v
            g.inferred[name] = (str(v.dtype), list(v.shape))
    return True


def _only_folded(ctx: _Ctx) -> ir.Expr:
    raise ctx.unsupported("is supported only when its inputs are constants (it is evaluated "
                          "at import)")


def _chk_folded(ctx: _Ctx) -> None:
    _only_folded(ctx)


# ---- helpers ---------------------------------------------------------------------

def _compute_dtype(dt: str) -> str:
    """The IR dtype an elementwise computation on `dt` runs in."""
    return "float32" if dt == "float32" else "int32"


def _compare_dt(ctx: _Ctx) -> str:
    return _compute_dtype(ctx.dtype(0) or "float32")


def _chk_compare(ctx: _Ctx) -> None:
    ctx.dtypes(F32_INT + ("bool",))
    a, b = ctx.dtype(0), ctx.dtype(1)
    if a is not None and b is not None and a != b:
        raise ctx.error("inputs of element types %s and %s differ" % (a, b))


def _compare(kind: str) -> Callable[[_Ctx], ir.Expr]:
    """Equal, Greater, Less, GreaterOrEqual, LessOrEqual -> bool."""
    def conv(ctx: _Ctx) -> ir.Expr:
        dt = _compare_dt(ctx)
        return compare(kind, _as(ctx.expr(0), dt), _as(ctx.expr(1), dt), dt)
    return conv


def _chk_logic(ctx: _Ctx) -> None:
    ctx.dtypes(("bool",))


def _logic(kind: str) -> Callable[[_Ctx], ir.Expr]:
    def conv(ctx: _Ctx) -> ir.Expr:
        return logic(kind, ctx.expr(0), None if kind == "not" else ctx.expr(1))
    return conv


def _chk_where(ctx: _Ctx) -> None:
    ctx.dtypes(("bool",), 0)
    ctx.dtypes(F32_INT, 1, 2)


def _where(ctx: _Ctx) -> ir.Expr:
    return select(ctx.expr(0), ctx.expr(1), ctx.expr(2), ctx.dtype(1) or "float32")


def _arith(kind: str) -> Callable[[_Ctx], ir.Expr]:
    """A binary or variadic elementwise operator; integer types other than
    int32 run in int32 and are cast back."""
    def conv(ctx: _Ctx) -> ir.Expr:
        out = ctx.dtype(0) or "float32"
        dt = _compute_dtype(out)
        xs = [_as(ctx.expr(i), dt) for i in range(len(ctx.ins)) if ctx.has(i)]
        y = xs[0]
        for x in xs[1:]:
            y = call(kind, y, x)
        return _as(y, out)
    return conv


def _neg(ctx: _Ctx) -> ir.Expr:
    out = ctx.dtype(0) or "float32"
    return _as(call("negative", _as(ctx.expr(0), _compute_dtype(out))), out)


# ---- activations and elementwise float operators ---------------------------------

def _f(ctx: _Ctx, name: str, default: float) -> float:
    return float(ctx.attr(name, default))


def _exp_minus_one_neg(x: ir.Expr, scale: float = 1.0) -> ir.Expr:
    """exp(min(x, 0) / scale) - 1."""
    m = call("minimum", x, scalar(0.0, "float32"))
    if scale != 1.0:
        m = call("divide", m, scalar(scale, "float32"))
    return call("subtract", call("exp", m), scalar(1.0, "float32"))


def _elu_like(x: ir.Expr, alpha: float, scale: float = 1.0, gamma: float = 1.0) -> ir.Expr:
    """relu(x) + alpha * (exp(min(x, 0) / scale) - 1), times gamma."""
    y = call("add", call("nn.relu", x),
             call("multiply", _exp_minus_one_neg(x, scale), scalar(alpha, "float32")))
    return y if gamma == 1.0 else call("multiply", y, scalar(gamma, "float32"))


def _elu(ctx: _Ctx) -> ir.Expr:
    return _elu_like(ctx.expr(0), _f(ctx, "alpha", 1.0))


def _selu(ctx: _Ctx) -> ir.Expr:
    return _elu_like(ctx.expr(0), _f(ctx, "alpha", 1.67326319217681884765625),
                     gamma=_f(ctx, "gamma", 1.05070102214813232421875))


def _celu(ctx: _Ctx) -> ir.Expr:
    a = _f(ctx, "alpha", 1.0)
    if a == 0:
        raise ctx.error("attribute alpha must not be 0")
    return _elu_like(ctx.expr(0), a, scale=a)


def _hard_sigmoid(ctx: _Ctx) -> ir.Expr:
    y = call("add", call("multiply", ctx.expr(0), scalar(_f(ctx, "alpha", 0.2), "float32")),
             scalar(_f(ctx, "beta", 0.5), "float32"))
    return call("clip", y, a_min=0.0, a_max=1.0)


def _softplus(ctx: _Ctx) -> ir.Expr:
    # max(x, 0) + log(1 + exp(-|x|)): no overflow for large x
    x = ctx.expr(0)
    t = call("log", call("add", scalar(1.0, "float32"),
                         call("exp", call("negative", call("abs", x)))))
    return call("add", call("nn.relu", x), t)


def _softsign(ctx: _Ctx) -> ir.Expr:
    x = ctx.expr(0)
    return call("divide", x, call("add", scalar(1.0, "float32"), call("abs", x)))


def _reciprocal(ctx: _Ctx) -> ir.Expr:
    return call("divide", scalar(1.0, "float32"), ctx.expr(0))


def _thresholded_relu(ctx: _Ctx) -> ir.Expr:
    x = ctx.expr(0)
    m = _gt_mask(call("subtract", x, scalar(_f(ctx, "alpha", 1.0), "float32")), "float32")
    return call("multiply", x, m)


def _prelu(ctx: _Ctx) -> ir.Expr:
    x = ctx.expr(0)
    neg = call("multiply", call("minimum", x, scalar(0.0, "float32")), ctx.expr(1))
    return call("add", call("nn.relu", x), neg)


def _sign(ctx: _Ctx) -> ir.Expr:
    return _sign_of(ctx.expr(0))


def _pow(ctx: _Ctx) -> ir.Expr:
    """Pow with a constant exponent. Integer exponents (|y| <= 16) multiply:
    the product over k of (x where k <= |y|, else 1), inverted where y < 0;
    others are exp(y * log(x)) (NaN for x < 0, as the operator defines).
    Integer inputs compute in float32 and are cast back."""
    out = ctx.dtype(0) or "float32"
    x = _as(ctx.expr(0), "float32")
    e = ctx.value(1, "the exponent").astype(np.float64)
    if np.all(e == np.round(e)) and np.all(np.abs(e) <= 16):
        y: ir.Expr = call("add", call("multiply", x, scalar(0.0, "float32")),
                          scalar(1.0, "float32"))
        mag = np.abs(e)
        for k in range(1, int(mag.max(initial=0)) + 1):
            m = (mag >= k)
            if np.all(m):
                y = call("multiply", y, x)
            else:
                mk = ir.const(m.astype(np.float32))
                f = call("add", call("multiply", x, mk), ir.const((1 - m).astype(np.float32)))
                y = call("multiply", y, f)
        if np.any(e < 0):
            inv = call("divide", scalar(1.0, "float32"), y)
            if np.all(e < 0):
                y = inv
            else:
                neg = (e < 0).astype(np.float32)
                y = call("add", call("multiply", inv, ir.const(neg)),
                         call("multiply", y, ir.const(1 - neg)))
    else:
        y = call("exp", call("multiply", ir.const(e.astype(np.float32)), call("log", x)))
    return _as(y, out)


def _chk_pow(ctx: _Ctx) -> None:
    ctx.dtypes(("float32", "int32", "int64"), 0)
    ctx.dtypes(("float32", "int32", "int64"), 1)
    ctx.value(1, "the exponent")


# ---- softmax family and losses ------------------------------------------------------

def _log_softmax_axis(x: ir.Expr, axis: int, r: int) -> ir.Expr:
    """nn.log_softmax over any axis: the axis moved last and back."""
    if axis == r - 1 or r <= 1:
        return call("nn.log_softmax", x, axis=-1)
    perm = [d for d in range(r) if d != axis] + [axis]
    y = call("nn.log_softmax", call("transpose", x, axes=perm), axis=-1)
    return call("transpose", y, axes=[perm.index(d) for d in range(r)])


def _log_softmax(ctx: _Ctx) -> ir.Expr:
    shp = ctx.shape(0)
    r = len(shp)
    if ctx.opset >= 13:
        return _log_softmax_axis(ctx.expr(0), _norm_axis(ctx, int(ctx.attr("axis", -1)), r),
                                 r)
    axis = _norm_axis(ctx, int(ctx.attr("axis", 1)), r) if r else 0
    if axis == r - 1 or r <= 1:
        return call("nn.log_softmax", ctx.expr(0), axis=-1)
    flat = call("reshape", ctx.expr(0), newshape=[_prod(shp[:axis]), _prod(shp[axis:])])
    return call("reshape", call("nn.log_softmax", flat, axis=-1), newshape=shp)


def _hardmax(ctx: _Ctx) -> ir.Expr:
    shp = ctx.shape(0)
    r = len(shp)
    x = ctx.expr(0)
    if ctx.opset >= 13:
        axis = _norm_axis(ctx, int(ctx.attr("axis", -1)), r)
        work, wshape = x, shp
    else:
        axis0 = _norm_axis(ctx, int(ctx.attr("axis", 1)), r)
        wshape = [_prod(shp[:axis0]), _prod(shp[axis0:])]
        work, axis = call("reshape", x, newshape=wshape), 1
    idx = call("cast", call("argmax", work, axis=axis, keepdims=True), dtype="int32")
    pos = np.arange(wshape[axis], dtype=np.int32).reshape(
        [-1 if d == axis else 1 for d in range(len(wshape))])
    hit = _not(_ne_mask(call("subtract", idx, ir.const(pos)), "int32"), "int32")
    y = call("cast", hit, dtype="float32")
    return y if wshape == shp else call("reshape", y, newshape=shp)


def _chk_nll(ctx: _Ctx) -> None:
    ctx.dtypes(F32, 0)
    ctx.dtypes(("int32", "int64"), 1)
    if ctx.has(2):
        ctx.dtypes(F32, 2)
    ctx.only("reduction", ("none", "sum", "mean"), "mean")
    ctx.single_output()


def _nll(ctx: _Ctx, logp: ir.Expr, shp: List[int]) -> ir.Expr:
    """NegativeLogLikelihoodLoss of log-probabilities logp [N, C, d...] and
    the targets in input 1 [N, d...]."""
    if len(shp) < 2:
        raise ctx.error("expects an input of rank >= 2, got %s" % shp)
    c = shp[1]
    rest = [shp[0]] + shp[2:]
    m = _prod(rest)
    perm = [0] + list(range(2, len(shp))) + [1]
    flat = call("reshape", call("transpose", logp, axes=perm), newshape=[m * c])
    t = call("reshape", _as(ctx.expr(1), "int32"), newshape=[m])
    ii = ctx.attr("ignore_index")
    keep: Optional[ir.Expr] = None
    if ii is not None:
        keep = _ne_mask(call("subtract", t, scalar(int(ii), "int32")), "int32")
        t = call("multiply", t, keep)  # an ignored target reads class 0
    picked = call("take", flat, call("add", t, ir.const(np.arange(m, dtype=np.int32) * c)),
                  axis=0)
    w: Optional[ir.Expr] = None
    if ctx.has(2):
        w = call("take", ctx.expr(2), t, axis=0)
    if keep is not None:
        kf = call("cast", keep, dtype="float32")
        w = kf if w is None else call("multiply", w, kf)
    loss = call("negative", picked if w is None else call("multiply", picked, w))
    red = ctx.attr("reduction", "mean")
    if red == "none":
        return call("reshape", loss, newshape=rest)
    total = call("sum", loss, axis=[0], keepdims=False)
    if red == "sum":
        return total
    den = call("sum", w, axis=[0], keepdims=False) if w is not None else scalar(
        float(m), "float32")
    return call("divide", total, den)


def _nll_loss(ctx: _Ctx) -> ir.Expr:
    return _nll(ctx, ctx.expr(0), ctx.shape(0))


def _chk_sce(ctx: _Ctx) -> None:
    ctx.dtypes(F32, 0)
    ctx.dtypes(("int32", "int64"), 1)
    if ctx.has(2):
        ctx.dtypes(F32, 2)
    ctx.only("reduction", ("none", "sum", "mean"), "mean")


def _sce_loss(ctx: _Ctx) -> Any:
    shp = ctx.shape(0)
    logp = _log_softmax_axis(ctx.expr(0), 1, len(shp))
    loss = _nll(ctx, logp, shp)
    return [loss, logp] if len(ctx.outs) > 1 else loss


def _from_end(i: ir.Expr, n: Any) -> ir.Expr:
    """int32 indices with a negative one counted from the end (n added
    where i < 0; n an extent, or the extents along i's last axis)."""
    neg = call("negative", call("maximum", call("minimum", i, scalar(0, "int32")),
                                scalar(-1, "int32")))
    return call("add", i, call("multiply", neg, ir.const(np.array(n, np.int32))))


def _chk_gather_elements(ctx: _Ctx) -> None:
    ctx.dtypes(ANY, 0)
    ctx.dtypes(("int32", "int64"), 1)


def _gather_elements(ctx: _Ctx) -> ir.Expr:
    shp = ctx.shape(0)
    ishp = ctx.shape(1)
    r = len(shp)
    if len(ishp) != r:
        raise ctx.error("indices of rank %d for data of rank %d" % (len(ishp), r))
    axis = _norm_axis(ctx, int(ctx.attr("axis", 0)), r)
    strides = [_prod(shp[d + 1:]) for d in range(r)]
    base = np.zeros(ishp, np.int64)
    for d in range(r):
        if d != axis:
            base = base + np.arange(ishp[d]).reshape(
                [-1 if e == d else 1 for e in range(r)]) * strides[d]
    n = shp[axis]
    if ctx.is_const(1):
        idx = ctx.value(1, "the indices").astype(np.int64)
        if np.any(idx < -n) or np.any(idx >= n):
            raise ctx.error("an index is out of range for the %d entries of axis %d"
                            % (n, axis))
        flat_idx: ir.Expr = ir.const((base + (idx % n) * strides[axis]).astype(np.int32))
    else:
        i = _from_end(_as(ctx.expr(1), "int32"), n)
        flat_idx = call("add", call("multiply", i, scalar(strides[axis], "int32")),
                        ir.const(base.astype(np.int32)))
    return call("take", call("reshape", ctx.expr(0), newshape=[_prod(shp)]), flat_idx,
                axis=0)


# ---- normalization and reductions ------------------------------------------------------

def _moments(x: ir.Expr, axes: List[int]) -> Tuple[ir.Expr, ir.Expr]:
    mean = call("mean", x, axis=axes, keepdims=True)
    d = call("subtract", x, mean)
    var = call("mean", call("multiply", d, d), axis=axes, keepdims=True)
    return d, var


def _chk_layer_norm(ctx: _Ctx) -> None:
    ctx.dtypes(F32)
    if int(ctx.attr("stash_type", 1)) != 1:
        raise ctx.unsupported("stash_type %s is not supported (1)" % ctx.attr("stash_type"))


def _layer_norm(ctx: _Ctx) -> Any:
    shp = ctx.shape(0)
    r = len(shp)
    axis = _norm_axis(ctx, int(ctx.attr("axis", -1)), r)
    axes = list(range(axis, r))
    x = ctx.expr(0)
    mean = call("mean", x, axis=axes, keepdims=True)
    d = call("subtract", x, mean)
    var = call("mean", call("multiply", d, d), axis=axes, keepdims=True)
    inv = call("rsqrt", call("add", var, scalar(_f(ctx, "epsilon", 1e-5), "float32")))
    y = call("multiply", call("multiply", d, inv), ctx.expr(1))
    if ctx.has(2):
        y = call("add", y, ctx.expr(2))
    return [y, mean, inv]


def _chk_instance_norm(ctx: _Ctx) -> None:
    ctx.dtypes(F32)


def _instance_norm(ctx: _Ctx) -> ir.Expr:
    shp = ctx.shape(0)
    if len(shp) < 3:
        raise ctx.error("expects an input of rank >= 3, got %s" % shp)
    bshape = [shp[1]] + [1] * (len(shp) - 2)
    d, var = _moments(ctx.expr(0), list(range(2, len(shp))))
    inv = call("rsqrt", call("add", var, scalar(_f(ctx, "epsilon", 1e-5), "float32")))
    y = call("multiply", call("multiply", d, inv), call("reshape", ctx.expr(1),
                                                        newshape=bshape))
    return call("add", y, call("reshape", ctx.expr(2), newshape=bshape))


def _reduce_axes(ctx: _Ctx, since: int) -> Optional[List[int]]:
    """The axes to reduce (None: the input itself, noop_with_empty_axes)."""
    r = len(ctx.shape(0))
    axes = _axes(ctx, since)
    if not axes:
        if ctx.opset >= since and int(ctx.attr("noop_with_empty_axes", 0)):
            return None
        return list(range(r))
    return sorted({_norm_axis(ctx, a, r) for a in axes})


def _chk_reduce_prod(ctx: _Ctx) -> None:
    ctx.dtypes(F32_INT, 0)
    _axes(ctx, 18)


def _chk_reduce_f32(ctx: _Ctx) -> None:
    ctx.dtypes(F32, 0)
    _axes(ctx, 18)


def _reduce_composed(kind: str) -> Callable[[_Ctx], ir.Expr]:
    """ReduceL1, ReduceL2, ReduceSumSquare, ReduceLogSum, ReduceLogSumExp."""
    def conv(ctx: _Ctx) -> ir.Expr:
        x = ctx.expr(0)
        ax = _reduce_axes(ctx, 18)
        keep = bool(ctx.attr("keepdims", 1))
        if ax is None:  # no reduction: the elementwise part only
            ax, keep = [], True
        if kind == "logsumexp":
            if not ax:
                return x
            mx = call("max", x, axis=ax, keepdims=True)
            s = call("sum", call("exp", call("subtract", x, mx)), axis=ax, keepdims=True)
            y = call("add", call("log", s), mx)
            if not keep:
                y = call("squeeze", y, axis=ax)
            return y
        pre = {"l1": lambda v: call("abs", v), "l2": lambda v: call("multiply", v, v),
               "sumsquare": lambda v: call("multiply", v, v), "logsum": lambda v: v}[kind]
        v = pre(x)
        s = call("sum", v, axis=ax, keepdims=keep) if ax else v
        if kind == "l2":
            s = call("sqrt", s)
        elif kind == "logsum":
            s = call("log", s)
        return s
    return conv


def _reduce_prod(ctx: _Ctx) -> ir.Expr:
    """ReduceProd as products of the slices along each reduced axis
    (integers in int32)."""
    out = ctx.dtype(0) or "float32"
    shp = ctx.shape(0)
    ax = _reduce_axes(ctx, 18)
    if ax is None:
        return ctx.expr(0)
    y = _as(ctx.expr(0), _compute_dtype(out))
    if sum(shp[a] for a in ax) > 256:
        raise ctx.unsupported("reducing %d entries along axes %s is not supported (256 "
                              "slices at most)" % (sum(shp[a] for a in ax), ax))
    for a in ax:
        p = None
        for i in range(shp[a]):
            s = call("strided_slice", y, begin=[i], end=[i + 1], strides=[1], axes=[a])
            p = s if p is None else call("multiply", p, s)
        y = p if p is not None else y
    if not bool(ctx.attr("keepdims", 1)) and ax:
        y = call("reshape", y, newshape=[d for i, d in enumerate(shp) if i not in ax])
    return _as(y, out)


def _global_max_pool(ctx: _Ctx) -> ir.Expr:
    r = len(ctx.shape(0))
    if r < 3:
        raise ctx.error("expects at least 3 dimensions, got %d" % r)
    return call("max", ctx.expr(0), axis=list(range(2, r)), keepdims=True)


def _mean_of(ctx: _Ctx) -> ir.Expr:
    xs = [ctx.expr(i) for i in range(len(ctx.ins)) if ctx.has(i)]
    y = xs[0]
    for x in xs[1:]:
        y = call("add", y, x)
    return call("divide", y, scalar(float(len(xs)), "float32")) if len(xs) > 1 else y


# ---- data movement ----------------------------------------------------------------------

def _cast_like(ctx: _Ctx) -> ir.Expr:
    to = ctx.dtype(1)
    if ctx.dtype(0) == to:
        return ctx.expr(0)
    return call("cast", ctx.expr(0), dtype=to)


def _chk_cast_like(ctx: _Ctx) -> None:
    ctx.dtypes(ANY)


def _expand(ctx: _Ctx) -> ir.Expr:
    shp = ctx.shape(0)
    want = [int(d) for d in ctx.value(1, "the shape").reshape(-1)]
    try:
        out = list(np.broadcast_shapes(tuple(shp), tuple(want)))
    except ValueError:
        raise ctx.error("shape %s does not broadcast with the input %s" % (want, shp)) from None
    x = ctx.expr(0)
    full = [1] * (len(out) - len(shp)) + shp
    if full != shp:
        x = call("reshape", x, newshape=full)
    for d, (a, b) in enumerate(zip(full, out)):
        if a != b:
            x = _o._tile_many(x, b, d)
    return x


def _split_sizes(ctx: _Ctx, n: int) -> List[int]:
    nout = len(ctx.outs)
    if ctx.opset >= 13 and ctx.has(1):
        sizes = [int(v) for v in ctx.value(1, "the split").reshape(-1)]
    elif ctx.opset < 13 and ctx.attr("split") is not None:
        sizes = [int(v) for v in ctx.ints("split") or []]
    else:
        k = int(ctx.attr("num_outputs", nout))
        if k < 1:
            raise ctx.error("attribute num_outputs must be positive, got %d" % k)
        part = -(-n // k)
        sizes = [min(part, n - i * part) for i in range(k)]
    if len(sizes) != nout or sum(sizes) != n or any(s < 0 for s in sizes):
        raise ctx.error("split %s does not cut the %d entries into %d outputs"
                        % (sizes, n, nout))
    return sizes


def _split(ctx: _Ctx) -> List[ir.Expr]:
    shp = ctx.shape(0)
    axis = _norm_axis(ctx, int(ctx.attr("axis", 0)), len(shp))
    outs = []
    at = 0
    for s in _split_sizes(ctx, shp[axis]):
        outs.append(call("strided_slice", ctx.expr(0), begin=[at], end=[at + s], strides=[1],
                         axes=[axis]))
        at += s
    return outs


def _chk_split(ctx: _Ctx) -> None:
    ctx.dtypes(ANY, 0)
    if ctx.opset >= 13 and ctx.has(1):
        ctx.value(1, "the split")


def _trilu(ctx: _Ctx) -> ir.Expr:
    """Trilu as a take from the flattened input and one zero: exact for
    every element type."""
    shp = ctx.shape(0)
    if len(shp) < 2:
        raise ctx.error("expects an input of rank >= 2, got %s" % shp)
    k = int(ctx.value(1, "k").reshape(-1)[0]) if ctx.has(1) else 0
    rows, cols = shp[-2], shp[-1]
    i = np.arange(rows).reshape(-1, 1)
    j = np.arange(cols).reshape(1, -1)
    keep = (j - i >= k) if int(ctx.attr("upper", 1)) else (j - i <= k)
    n = _prod(shp)
    dt = ctx.dtype(0)
    if n == 0:
        return ir.const(np.zeros(shp, np.dtype(dt)))
    idx = np.arange(n).reshape(shp)
    idx = np.where(np.broadcast_to(keep, shp), idx, n).astype(np.int32)
    zero = ir.const(np.zeros([1], np.dtype(dt)))
    flat = call("concatenate", ir.Tuple([call("reshape", ctx.expr(0), newshape=[n]), zero]),
                axis=0)
    return call("take", flat, ir.const(idx), axis=0)


def _chk_trilu(ctx: _Ctx) -> None:
    ctx.dtypes(ANY, 0)
    if ctx.has(1):
        ctx.value(1, "k")


def _chk_cumsum(ctx: _Ctx) -> None:
    ctx.dtypes(F32, 0)
    ctx.value(1, "the axis")


def _cumsum(ctx: _Ctx) -> ir.Expr:
    """CumSum as a product with a triangular 0/1 matrix."""
    shp = ctx.shape(0)
    axis = _norm_axis(ctx, int(ctx.value(1, "the axis").reshape(-1)[0]), len(shp))
    return cumsum(ctx.expr(0), shp, axis, bool(int(ctx.attr("exclusive", 0))),
                  bool(int(ctx.attr("reverse", 0))))


def _chk_one_hot(ctx: _Ctx) -> None:
    ctx.dtypes(("int32", "int64", "float32"), 0)
    ctx.value(1, "the depth")
    ctx.value(2, "the values")


def _one_hot(ctx: _Ctx) -> ir.Expr:
    shp = ctx.shape(0)
    depth = int(ctx.value(1, "the depth").reshape(-1)[0])
    vals = ctx.value(2, "the values").reshape(-1)
    if vals.size != 2:
        raise ctx.error("values must hold [off, on], it has %d values" % vals.size)
    r = len(shp) + 1
    axis = _norm_axis(ctx, int(ctx.attr("axis", -1)), r)
    i = _from_end(_as(ctx.expr(0), "int32"), depth)
    i = call("expand_dims", i, axis=axis)
    pos = np.arange(depth, dtype=np.int32).reshape([-1 if d == axis else 1 for d in range(r)])
    hit = _not(_ne_mask(call("subtract", i, ir.const(pos)), "int32"), "int32")
    out = str(vals.dtype)
    dt = _compute_dtype(out)
    off, on = vals.astype(np.dtype(dt))
    y = call("add", call("multiply", _as(hit, dt), scalar(on - off, dt)), scalar(off, dt))
    return _as(y, out)


# ---- rounding and float classes -------------------------------------------------------

def _floor(ctx: _Ctx) -> ir.Expr:
    return _floor_of(ctx.expr(0))


def _ceil(ctx: _Ctx) -> ir.Expr:
    return ceil_of(ctx.expr(0))


def _round(ctx: _Ctx) -> ir.Expr:
    return _round_of(ctx.expr(0))


FLT_MAX = float(np.finfo(np.float32).max)


def _is_inf(ctx: _Ctx) -> ir.Expr:
    f = "float32"
    x = ctx.expr(0)
    pos, neg = int(ctx.attr("detect_positive", 1)), int(ctx.attr("detect_negative", 1))
    if not pos and not neg:
        return ir.const(np.zeros(ctx.shape(0), bool))
    m: ir.Expr = scalar(0.0, f)
    if pos:
        m = call("add", m, _gt_mask(call("subtract", x, scalar(FLT_MAX, f)), f))
    if neg:
        m = call("add", m, _gt_mask(call("subtract", call("negative", x), scalar(FLT_MAX, f)),
                                    f))
    return call("cast", m, dtype="bool")


def _is_nan(ctx: _Ctx) -> ir.Expr:
    """maximum(|x|, -1) is -1 for NaN only (maximum keeps its right operand
    when the comparison with NaN fails)."""
    f = "float32"
    v = call("maximum", call("abs", ctx.expr(0)), scalar(-1.0, f))
    return call("cast", _gt_mask(call("negative", v), f), dtype="bool")


def _shrink(ctx: _Ctx) -> ir.Expr:
    f = "float32"
    x = ctx.expr(0)
    lam, bias = _f(ctx, "lambd", 0.5), _f(ctx, "bias", 0.0)
    lo = _gt_mask(call("subtract", scalar(-lam, f), x), f)
    hi = _gt_mask(call("subtract", x, scalar(lam, f)), f)
    return call("add", call("multiply", lo, call("add", x, scalar(bias, f))),
                call("multiply", hi, call("subtract", x, scalar(bias, f))))


# ---- ArgMax/ArgMin, Dropout, GatherND ------------------------------------------------

def _arg(op: str) -> Callable[[_Ctx], ir.Expr]:
    """ArgMax, ArgMin; select_last_index=1 searches the reversed axis."""
    def conv(ctx: _Ctx) -> ir.Expr:
        shp = ctx.shape(0)
        axis = _norm_axis(ctx, int(ctx.attr("axis", 0)), len(shp))
        keep = bool(ctx.attr("keepdims", 1))
        x = ctx.expr(0)
        last = int(ctx.attr("select_last_index", 0))
        if last:
            n = shp[axis]
            x = call("strided_slice", x, begin=[n - 1], end=[-n - 1], strides=[-1],
                     axes=[axis])
        y = call(op, x, axis=axis, keepdims=keep)
        if last:
            y = call("subtract", scalar(shp[axis] - 1, "int32"), _as(y, "int32"))
        return call("cast", y, dtype="int64")
    return conv


def _chk_arg(ctx: _Ctx) -> None:
    ctx.dtypes(("float32", "int8", "int32"), 0)
    ctx.only("select_last_index", [0, 1], 0)


def _chk_dropout(ctx: _Ctx) -> None:
    if ctx.opset >= 12 and ctx.has(2):
        t = ctx.value(2, "training_mode").reshape(-1)
        if t.size and bool(t[0]):
            r = ctx.value(1, "the ratio").reshape(-1) if ctx.has(1) else np.array([0.5])
            if float(r[0]) != 0.0:
                raise ctx.unsupported("training_mode=True with ratio %g is not supported "
                                      "(inference only)" % float(r[0]))
    if ctx.attr("is_test") == 0 and ctx.opset < 7:
        raise ctx.unsupported("is_test=0 is not supported (inference only)")


def _dropout(ctx: _Ctx) -> Any:
    """Inference: the input, and a mask of all true."""
    x = ctx.expr(0)
    if len(ctx.outs) < 2 or not ctx.outs[1]:
        return x
    return [x, ir.const(np.ones(ctx.shape(0), bool))]


def _chk_gather_nd(ctx: _Ctx) -> None:
    ctx.dtypes(("float32", "int8", "uint8", "int16", "int32", "int64"), 0)
    ctx.dtypes(("int32", "int64"), 1)
    ctx.only("batch_dims", [0], 0)


def _gather_nd(ctx: _Ctx) -> ir.Expr:
    """GatherND (batch_dims 0), negative indices counted from the end."""
    shp, ishp = ctx.shape(0), ctx.shape(1)
    k = ishp[-1]
    if not 1 <= k <= len(shp):
        raise ctx.error("indices address %d axes of data of rank %d" % (k, len(shp)))
    return gather_nd(ctx.expr(0), _from_end(_as(ctx.expr(1), "int32"), shp[:k]), shp, ishp)


# ---- Resize --------------------------------------------------------------------------

def _cubic(t: np.ndarray, a: float) -> np.ndarray:
    t = np.abs(t)
    near = ((a + 2) * t - (a + 3)) * t * t + 1
    far = ((a * t - 5 * a) * t + 8 * a) * t - 4 * a
    return np.where(t <= 1, near, np.where(t < 2, far, 0.0))


def _source_coords(ctx: _Ctx, n_in: int, n_out: int, scale: float,
                   roi: Tuple[float, float]) -> np.ndarray:
    """The input coordinate each output index samples along one axis."""
    ctm = ctx.attr("coordinate_transformation_mode", "half_pixel")
    y = np.arange(n_out, dtype=np.float64)
    width = scale * n_in
    if ctm == "align_corners":
        return np.zeros(n_out) if width == 1 else y * (n_in - 1) / (width - 1)
    if ctm == "asymmetric":
        return y / scale
    if ctm == "tf_crop_and_resize":
        if width == 1:
            x = np.full(n_out, (roi[1] - roi[0]) * (n_in - 1) / 2)
        else:
            x = y * (roi[1] - roi[0]) * (n_in - 1) / (width - 1)
        return x + roi[0] * (n_in - 1)
    if ctm == "pytorch_half_pixel":
        return np.full(n_out, -0.5) if width == 1 else (y + 0.5) / scale - 0.5
    if ctm == "half_pixel":
        return (y + 0.5) / scale - 0.5
    if ctm == "half_pixel_symmetric":
        offset = n_in / 2 * (1 - n_out / width)
        return offset + (y + 0.5) / scale - 0.5
    raise ctx.unsupported("attribute coordinate_transformation_mode=%r is not supported" % ctm)


def _resize_weights(ctx: _Ctx, n_in: int, n_out: int, scale: float,
                    roi: Tuple[float, float]) -> Tuple[np.ndarray, np.ndarray]:
    """(W [n_out, n_in], the rows outside the crop) of a resize along one
    axis: output = W @ input, and extrapolation_value on the rows marked."""
    mode = ctx.attr("mode", "nearest")
    x = _source_coords(ctx, n_in, n_out, scale, roi)
    w = np.zeros((n_out, n_in), np.float64)
    outside = np.zeros(n_out, bool)
    if ctx.attr("coordinate_transformation_mode") == "tf_crop_and_resize":
        outside = (x < 0) | (x > n_in - 1)
    if mode == "nearest":
        nm = ctx.attr("nearest_mode", "round_prefer_floor")
        picks: Dict[str, Callable[[np.ndarray], np.ndarray]] = {
            "round_prefer_floor": lambda v: np.ceil(v - 0.5),
            "round_prefer_ceil": lambda v: np.floor(v + 0.5),
            "floor": np.floor, "ceil": np.ceil}
        pick = picks.get(nm)
        if pick is None:
            raise ctx.unsupported("attribute nearest_mode=%r is not supported" % nm)
        idx = np.where(x == np.floor(x), x, pick(x)).astype(np.int64)
        w[np.arange(n_out), np.clip(idx, 0, n_in - 1)] = 1.0
        return w, outside
    if mode not in ("linear", "cubic"):
        raise ctx.unsupported("attribute mode=%r is not supported" % mode)
    anti = bool(int(ctx.attr("antialias", 0)))
    s = min(scale, 1.0) if anti else 1.0
    support = (1.0 if mode == "linear" else 2.0) / s
    a = _f(ctx, "cubic_coeff_a", -0.75)
    exclude = bool(int(ctx.attr("exclude_outside", 0)))
    for o in range(n_out):
        taps = np.arange(int(np.floor(x[o] - support)) + 1, int(np.ceil(x[o] + support)))
        t = (taps - x[o]) * s
        k = np.clip(1 - np.abs(t), 0, 1) if mode == "linear" else _cubic(t, a)
        if anti:
            k = k / k.sum()
        if exclude:
            k = np.where((taps < 0) | (taps >= n_in), 0.0, k)
            k = k / (k.sum() or 1.0)
        np.add.at(w[o], np.clip(taps, 0, n_in - 1), k)
    return w, outside


def _resize_plan(ctx: _Ctx) -> List[Tuple[int, int, float, Tuple[float, float]]]:
    """(axis, output extent, scale, roi) of every axis the node resizes."""
    shp = _shape_of(ctx, 0)
    if shp is None:
        raise ctx.unsupported("the input's shape is not known")
    r = len(shp)
    axes = [_norm_axis(ctx, a, r) for a in (ctx.ints("axes") or list(range(r)))]
    k = len(axes)

    def const(n: int) -> Optional[np.ndarray]:
        if not ctx.has(n):
            return None
        v = ctx.value(n, ("roi", "scales", "sizes")[n - 1]).reshape(-1)
        return v if v.size else None

    roi_v, scales_v, sizes_v = const(1), const(2), const(3)
    if (scales_v is None) == (sizes_v is None):
        raise ctx.error("needs exactly one of scales and sizes")
    given = scales_v if scales_v is not None else sizes_v
    assert given is not None
    if given.size != k:
        raise ctx.error("%d %s for %d axes" % (given.size, "scales" if scales_v is not None
                                                else "sizes", k))
    if sizes_v is not None:
        scales = [float(sizes_v[i]) / shp[a] for i, a in enumerate(axes)]
        policy = ctx.attr("keep_aspect_ratio_policy", "stretch")
        if policy == "stretch":
            outs = [int(v) for v in sizes_v]
        elif policy in ("not_larger", "not_smaller"):
            sc = min(scales) if policy == "not_larger" else max(scales)
            scales = [sc] * k
            outs = [int(sc * shp[a] + 0.5) for a in axes]
        else:
            raise ctx.unsupported("attribute keep_aspect_ratio_policy=%r is not supported"
                                  % policy)
    else:
        scales = [float(v) for v in scales_v]  # type: ignore[union-attr]
        if any(v <= 0 for v in scales):
            raise ctx.error("scales %s must be positive" % scales)
        outs = [int(sc * shp[a]) for sc, a in zip(scales, axes)]
    plan = []
    for i, a in enumerate(axes):
        roi = ((float(roi_v[i]), float(roi_v[k + i])) if roi_v is not None and roi_v.size == 2 * k
               else (0.0, 1.0))
        if outs[i] == shp[a] and scales[i] == 1.0 and roi == (0.0, 1.0):
            continue
        plan.append((a, outs[i], scales[i], roi))
    return plan


def _chk_resize(ctx: _Ctx) -> None:
    mode = ctx.only("mode", ("nearest", "linear", "cubic"), "nearest")
    ctx.dtypes(ANY if mode == "nearest" else ("float32", "int8", "uint8") if mode == "linear"
               else ("float32",), 0)
    plan = _resize_plan(ctx)
    shp = _shape_of(ctx, 0) or []
    if mode == "linear" and ctx.dtype(0) in ("int8", "uint8"):
        if plan:
            _bilinear_8bit_axes(ctx, shp, plan)
        return
    for a, n_out, sc, roi in plan:
        _resize_weights(ctx, shp[a], n_out, sc, roi)


def _resize(ctx: _Ctx) -> ir.Expr:
    """Resize as one operation per resized axis: a take for nearest (exact
    for every element type), else a product with the interpolation matrix
    (float32); the crop's extrapolation_value is added where it applies.
    An int8/uint8 linear one follows onnxruntime's arithmetic
    (_bilinear_8bit)."""
    y = ctx.expr(0)
    r = len(ctx.shape(0))
    extrap = _f(ctx, "extrapolation_value", 0.0)
    if ctx.attr("mode", "nearest") == "linear" and ctx.dtype(0) in ("int8", "uint8"):
        plan = _resize_plan(ctx)
        return _bilinear_8bit(ctx, plan) if plan else y
    for a, n_out, sc, roi in _resize_plan(ctx):
        shp = [int(d) for d in y.checked_type.shape]
        w, outside = _resize_weights(ctx, shp[a], n_out, sc, roi)
        if ctx.attr("mode", "nearest") == "nearest" and not outside.any():
            y = call("take", y, ir.const(w.argmax(axis=1).astype(np.int32)), axis=a)
            continue
        w[outside] = 0.0
        perm = [d for d in range(r) if d != a] + [a]
        moved = [shp[d] for d in perm]
        t = call("transpose", y, axes=perm) if a != r - 1 else y
        t = call("matmul", call("reshape", t, newshape=[_prod(moved[:-1]), shp[a]]),
                 ir.const(np.ascontiguousarray(w.T).astype(np.float32)))
        if outside.any():
            t = call("add", t, ir.const((outside * extrap).astype(np.float32)))
        t = call("reshape", t, newshape=moved[:-1] + [n_out])
        y = call("transpose", t, axes=[perm.index(d) for d in range(r)]) if a != r - 1 else t
    return y


def _source_coords_f32(ctx: _Ctx, n_in: int, n_out: int, scale: float,
                       roi: Tuple[float, float]) -> np.ndarray:
    """_source_coords as onnxruntime's CPU kernel evaluates it: in float32
    (half_pixel_symmetric's last step and a one-element tf_crop_and_resize
    in float64), the input coordinate itself where the scale is 1."""
    f = np.float32
    ctm = ctx.attr("coordinate_transformation_mode", "half_pixel")
    y = np.arange(n_out, dtype=f)
    s, o, i = f(scale), f(n_out), f(n_in)
    if s == 1:
        return y
    if ctm == "align_corners":
        return np.zeros(n_out, f) if n_out == 1 else y * (i - f(1)) / (o - f(1))
    if ctm == "asymmetric":
        return y / s
    if ctm == "tf_crop_and_resize":
        r0, r1 = f(roi[0]), f(roi[1])
        if n_out == 1:
            return np.full(n_out, 0.5 * (float(r0) + float(r1)) * float(i - f(1)), f)
        return r0 * (i - f(1)) + y * (r1 - r0) * (i - f(1)) / (o - f(1))
    if ctm == "pytorch_half_pixel" and n_out == 1:
        return np.zeros(n_out, f)
    if ctm in ("half_pixel", "pytorch_half_pixel"):
        return (y + f(0.5)) / s - f(0.5)
    if ctm == "half_pixel_symmetric":
        offset = i / f(2) * (f(1) - o / (s * i))
        return (offset.astype(np.float64) + (y.astype(np.float64) + 0.5) / float(s)
                - 0.5).astype(f)
    raise ctx.unsupported("attribute coordinate_transformation_mode=%r is not supported" % ctm)


_Plan = List[Tuple[int, int, float, Tuple[float, float]]]


def _bilinear_8bit_axes(ctx: _Ctx, shp: List[int], plan: _Plan) -> Tuple[bool, _Plan]:
    """(in fixed point, the (axis, output extent, scale, roi) of both
    spatial axes) of an 8-bit linear resize, as onnxruntime's CPU kernel
    picks its form from the scales that are not 1: the last two axes of a
    2-d input or of a 4-d one (NCHW, in float32), else axes 1 and 2 of a
    4-d one (NHWC, in 10-bit fixed point)."""
    r = len(shp)
    moved = {a for a, _, sc, _ in plan if np.float32(sc) != 1}
    if r == 4 and not moved <= {2, 3} and moved <= {1, 2}:
        fixed, axes = True, (1, 2)
    elif r in (2, 4) and moved <= {r - 2, r - 1}:
        fixed, axes = False, (r - 2, r - 1)
    else:
        raise ctx.unsupported("mode='linear' on int8/uint8 resizes the last two axes of a 2-d "
                              "or 4-d input, or axes 1 and 2 of a 4-d one (got a %d-d input "
                              "resized on axes %s)" % (r, sorted(moved)))
    if ctx.attr("antialias", 0):
        raise ctx.unsupported("antialias=1 is not supported for int8/uint8 (float32 only)")
    given = {a: (n, sc, roi) for a, n, sc, roi in plan}
    return fixed, [(a,) + given.get(a, (shp[a], 1.0, (0.0, 1.0))) for a in axes]


def _bilinear_taps(ctx: _Ctx, n_in: int, n_out: int, scale: float, roi: Tuple[float, float],
                   fixed: bool) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                         np.ndarray]:
    """(first tap, second tap, weight of the first, weight of the second,
    outside the crop) of each output index along one axis, as onnxruntime
    forms them: float32 distances, or in fixed point the distances of the
    coordinate truncated to 1/1024ths (both weights one half where the
    taps meet)."""
    f = np.float32
    x = _source_coords_f32(ctx, n_in, n_out, scale, roi)
    outside = np.zeros(n_out, bool)
    if ctx.attr("coordinate_transformation_mode") == "tf_crop_and_resize" and f(scale) != 1:
        outside = (x < 0) | (x > f(n_in - 1))
    c = np.maximum(f(0), np.minimum(x, f(n_in - 1)))
    i1 = np.minimum(c.astype(np.int64), n_in - 1)
    i2 = np.minimum(i1 + 1, n_in - 1)
    if fixed:
        c10 = (c * f(1024)).astype(np.int64)
        d1, d2 = np.abs(c10 - i1 * 1024), np.abs(c10 - i2 * 1024)
        half: Any = 512
    else:
        d1, d2 = np.abs(c - i1.astype(f)), np.abs(c - i2.astype(f))
        half = f(0.5)
    d1[i1 == i2] = d2[i1 == i2] = half
    return i1, i2, d2, d1, outside


def _bilinear_8bit(ctx: _Ctx, plan: _Plan) -> ir.Expr:
    """int8/uint8 linear resize as onnxruntime's CPU kernel computes it: the
    four corners times the products of their row and column weights, summed
    in a fixed order; NCHW in float32 (every step one IEEE operation, so the
    result is exact) truncated to the element type, NHWC in int32 with
    weights in 1/2^20ths and a truncating division. Outside a
    tf_crop_and_resize crop the weights are 0 and extrapolation_value is
    added."""
    shp, dt = ctx.shape(0), str(ctx.dtype(0))
    fixed, ((ah, oh, sh, rh), (aw, ow, sw, rw)) = _bilinear_8bit_axes(ctx, shp, plan)
    y1, y2, wy1, wy2, out_y = _bilinear_taps(ctx, shp[ah], oh, sh, rh, fixed)
    x1, x2, wx1, wx2, out_x = _bilinear_taps(ctx, shp[aw], ow, sw, rw, fixed)
    outside = out_y[:, None] | out_x[None, :]
    wshape = [oh, ow] + [1] * (len(shp) - 1 - aw)
    acc = "int32" if fixed else "float32"
    x = _as(ctx.expr(0), acc)

    def corner(rows: np.ndarray, cols: np.ndarray) -> ir.Expr:
        t = call("take", x, ir.const(rows.astype(np.int32)), axis=ah)
        return call("take", t, ir.const(cols.astype(np.int32)), axis=aw)

    def weight(wy: np.ndarray, wx: np.ndarray) -> ir.Expr:
        w = (wy[:, None] * wx[None, :]).astype(acc)
        return ir.const(np.where(outside, 0, w).astype(acc).reshape(wshape))

    s = None
    for rows, wy in ((y1, wy1), (y2, wy2)):
        for cols, wx in ((x1, wx1), (x2, wx2)):
            term = call("multiply", corner(rows, cols), weight(wy, wx))
            s = term if s is None else call("add", s, term)
    assert s is not None
    if fixed:
        s = call("divide", s, scalar(1 << 20, "int32"))
    if outside.any():
        e = np.float32(_f(ctx, "extrapolation_value", 0.0))
        # onnxruntime converts the value to the element type through int32
        # (truncation), keeping its low byte: -3.7 is 253 as uint8.
        whole = int(np.trunc(e)) if np.isfinite(e) and abs(e) < 2.0 ** 31 else -2 ** 31
        v = int(np.array([whole & 0xFF], np.uint8).view(dt)[0])
        s = call("add", s, ir.const(np.where(outside, v, 0).astype(acc).reshape(wshape)))
    return call("cast", s, dtype=dt)


# ---- ConvTranspose ---------------------------------------------------------------------

def _chk_conv_transpose(ctx: _Ctx) -> None:
    ctx.dtypes(F32)
    ctx.only("auto_pad", ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"), "NOTSET")
    r = ctx.rank(0)
    if r is not None and r not in (3, 4):
        raise ctx.unsupported("a %d-d input is not supported (1-d and 2-d windows)" % r)


def _conv_transpose(ctx: _Ctx) -> ir.Expr:
    """ConvTranspose as nn.conv2d over the input spread out by the strides
    (zeros between the rows and columns), with the kernel flipped and its
    in/out channels swapped per group; a 1-d one as a 2-d one of height 1."""
    shp, wshp = ctx.shape(0), ctx.shape(1)
    one_d = len(shp) == 3
    x, w = ctx.expr(0), ctx.expr(1)
    if one_d:
        shp, wshp = shp[:2] + [1] + shp[2:], wshp[:2] + [1] + wshp[2:]
        x, w = call("reshape", x, newshape=shp), call("reshape", w, newshape=wshp)

    def pair(name: str, default: int) -> List[int]:
        v = ctx.ints(name) or [default] * (1 if one_d else 2)
        v = [default] + v if one_d else v
        if len(v) != 2:
            raise ctx.error("attribute %s=%s needs %d values" % (name, ctx.ints(name),
                                                               1 if one_d else 2))
        return v

    n, cin, h, wd = shp
    g = int(ctx.attr("group", 1))
    if wshp[0] != cin or cin % g:
        raise ctx.error("weight %s does not fit %d input channels in %d groups"
                        % (wshp, cin, g))
    cout_g, kh, kw = wshp[1], wshp[2], wshp[3]
    k = [kh, kw]
    s, d, op = pair("strides", 1), pair("dilations", 1), pair("output_padding", 0)
    ins = [h, wd]
    full = [s[i] * (ins[i] - 1) + op[i] + (k[i] - 1) * d[i] + 1 for i in range(2)]
    pads = ctx.ints("pads")
    out_shape = ctx.ints("output_shape")
    mode = ctx.attr("auto_pad", "NOTSET")
    if out_shape is not None or mode in ("SAME_UPPER", "SAME_LOWER"):
        want = ([1] + out_shape if one_d else out_shape)[-2:] if out_shape is not None \
            else [ins[i] * s[i] for i in range(2)]
        total = [full[i] - want[i] for i in range(2)]
        half = [int(t / 2) for t in total]  # toward zero: a negative total grows the end
        begin = [t - hf for t, hf in zip(total, half)] if mode == "SAME_LOWER" else half
        end = [total[i] - begin[i] for i in range(2)]
    elif mode == "VALID" or pads is None:
        begin, end = [0, 0], [0, 0]
    else:
        p = [0, pads[0], 0, pads[1]] if one_d else pads
        if len(p) != 4:
            raise ctx.error("attribute pads=%s needs %d values" % (pads, 2 if one_d else 4))
        begin, end = [p[0], p[1]], [p[2], p[3]]
    # spread the input: zeros after each row and column but the last
    if s != [1, 1]:
        x = call("reshape", x, newshape=[n, cin, h, 1, wd, 1])
        x = call("nn.pad", x, pad_width=[[0, 0], [0, 0], [0, 0], [0, s[0] - 1], [0, 0],
                                         [0, s[1] - 1]], pad_value=0.0)
        x = call("reshape", x, newshape=[n, cin, h * s[0], wd * s[1]])
        x = call("strided_slice", x, begin=[0, 0], end=[(h - 1) * s[0] + 1,
                                                         (wd - 1) * s[1] + 1],
                 strides=[1, 1], axes=[2, 3])
    # the kernel: [cin, cout/g, kh, kw] -> [cout, cin/g, kh, kw], flipped
    w = call("reshape", w, newshape=[g, cin // g, cout_g, kh, kw])
    w = call("reshape", call("transpose", w, axes=[0, 2, 1, 3, 4]),
             newshape=[g * cout_g, cin // g, kh, kw])
    w = call("strided_slice", w, begin=[kh - 1, kw - 1], end=[-kh - 1, -kw - 1],
             strides=[-1, -1], axes=[2, 3])
    edge = [(k[i] - 1) * d[i] for i in range(2)]
    lo = [edge[i] - begin[i] for i in range(2)]
    hi = [edge[i] - end[i] + op[i] for i in range(2)]
    y = call("nn.conv2d", x, w, strides=[1, 1], padding=[max(lo[0], 0), max(lo[1], 0),
                                                          max(hi[0], 0), max(hi[1], 0)],
             dilation=d, groups=g, channels=g * cout_g, kernel_size=k)
    if min(lo + hi) < 0:  # more padding than the kernel's reach: crop
        oshp = [int(v) for v in y.checked_type.shape]
        cut_lo = [max(-v, 0) for v in lo]
        cut_hi = [max(-v, 0) for v in hi]
        y = call("strided_slice", y, begin=cut_lo, end=[oshp[2] - cut_hi[0],
                                                        oshp[3] - cut_hi[1]],
                 strides=[1, 1], axes=[2, 3])
    if ctx.has(2):
        y = call("nn.bias_add", y, ctx.expr(2), axis=1)
    if one_d:
        oshp = [int(v) for v in y.checked_type.shape]
        y = call("reshape", y, newshape=[oshp[0], oshp[1], oshp[3]])
    return y


# ---- windows, Compress, Pad modes, MeanVarianceNormalization, LRN, scatters ------------

def _f_window(kind: str) -> Callable[[_Ctx], List[np.ndarray]]:
    """HannWindow, HammingWindow, BlackmanWindow of a constant size."""
    def f(ctx: _Ctx) -> List[np.ndarray]:
        n = int(_v(ctx, 0).reshape(-1)[0])
        if n < 0:
            raise ctx.error("the size %d is negative" % n)
        dt = _ELEM.get(int(ctx.attr("output_datatype", 1)))
        if dt is None:
            raise ctx.unsupported("output_datatype %s is not supported"
                                  % ctx.attr("output_datatype"))
        den = n if int(ctx.attr("periodic", 1)) else n - 1
        t = 2 * np.pi * np.arange(n) / max(den, 1)
        if kind == "hann":
            w = 0.5 - 0.5 * np.cos(t)
        elif kind == "hamming":
            w = 25 / 46 - 21 / 46 * np.cos(t)
        else:
            w = 0.42 - 0.5 * np.cos(t) + 0.08 * np.cos(2 * t)
        return [w.astype(np.float32).astype(np.dtype(dt))]
    return f


FOLD.update({"HannWindow": _f_window("hann"), "HammingWindow": _f_window("hamming"),
             "BlackmanWindow": _f_window("blackman")})


def _chk_compress(ctx: _Ctx) -> None:
    ctx.dtypes(ANY, 0)
    ctx.value(1, "the condition")


def _compress(ctx: _Ctx) -> ir.Expr:
    shp = ctx.shape(0)
    cond = ctx.value(1, "the condition").reshape(-1).astype(bool)
    axis = ctx.attr("axis")
    x = ctx.expr(0)
    if axis is None:
        x, a, n = call("reshape", x, newshape=[_prod(shp)]), 0, _prod(shp)
    else:
        a = _norm_axis(ctx, int(axis), len(shp))
        n = shp[a]
    if cond.size > n:
        raise ctx.error("the condition has %d values for %d entries" % (cond.size, n))
    keep = np.nonzero(cond)[0].astype(np.int32)
    if keep.size == 0:
        raise ctx.unsupported("a condition that keeps nothing (an empty output) is not "
                              "supported")
    return call("take", x, ir.const(keep), axis=a)


def _chk_pad_modes(ctx: _Ctx) -> None:
    mode = ctx.only("mode", ("constant", "edge", "reflect", "wrap"), "constant")
    if mode == "constant":
        _o._chk_pad(ctx)
        return
    ctx.dtypes(ANY, 0)
    ctx.value(1, "the pads")
    if ctx.has(3):
        ctx.value(3, "the axes")


def _pad_modes(ctx: _Ctx) -> ir.Expr:
    """Pad: constant as nn.pad; edge, reflect and wrap as a take per padded
    axis (exact for every element type)."""
    mode = ctx.attr("mode", "constant")
    if mode == "constant":
        return _o._pad(ctx)
    shp = ctx.shape(0)
    r = len(shp)
    pads = [int(v) for v in ctx.value(1, "the pads").reshape(-1)]
    axes = ([_norm_axis(ctx, int(a), r) for a in ctx.value(3, "the axes").reshape(-1)]
            if ctx.has(3) else list(range(r)))
    if len(pads) != 2 * len(axes):
        raise ctx.error("%d pads for %d axes" % (len(pads), len(axes)))
    y = ctx.expr(0)
    for i, a in enumerate(axes):
        lo, hi, n = pads[i], pads[i + len(axes)], shp[a]
        if lo == 0 and hi == 0:
            continue
        pos = np.arange(-lo, n + hi)
        if mode == "edge":
            idx = np.clip(pos, 0, n - 1)
        elif mode == "wrap":
            idx = pos % n
        else:
            if n < 2:
                raise ctx.error("reflect needs at least 2 entries on axis %d, it has %d"
                                % (a, n))
            period = 2 * (n - 1)
            m = pos % period
            idx = np.where(m < n, m, period - m)
        if np.any(idx < 0):
            raise ctx.error("pads %s cut more than axis %d holds" % (pads, a))
        y = call("take", y, ir.const(idx.astype(np.int32)), axis=a)
    return y


def _mvn(ctx: _Ctx) -> ir.Expr:
    r = len(ctx.shape(0))
    axes = sorted({_norm_axis(ctx, a, r) for a in (ctx.ints("axes") or [0, 2, 3])})
    d, var = _moments(ctx.expr(0), axes)
    return call("divide", d, call("add", call("sqrt", var), scalar(1e-9, "float32")))


def _lrn(ctx: _Ctx) -> ir.Expr:
    shp = ctx.shape(0)
    size = int(ctx.attr("size", 0))
    if size < 1:
        raise ctx.error("attribute size must be positive, got %d" % size)
    if len(shp) < 3:
        raise ctx.error("expects an input of rank >= 3, got %s" % shp)
    alpha, beta, bias = _f(ctx, "alpha", 1e-4), _f(ctx, "beta", 0.75), _f(ctx, "bias", 1.0)
    x = ctx.expr(0)
    lo, hi = (size - 1) // 2, size - 1 - (size - 1) // 2
    width = [[0, 0] for _ in shp]
    width[1] = [lo, hi]
    sq = call("nn.pad", call("multiply", x, x), pad_width=width, pad_value=0.0)
    total: Optional[ir.Expr] = None
    for i in range(size):
        part = call("strided_slice", sq, begin=[i], end=[i + shp[1]], strides=[1], axes=[1])
        total = part if total is None else call("add", total, part)
    base = call("add", call("multiply", total, scalar(alpha / size, "float32")),
                scalar(bias, "float32"))
    return call("divide", x, call("exp", call("multiply", call("log", base),
                                              scalar(beta, "float32"))))


def _chk_scatter(ctx: _Ctx) -> None:
    ctx.value(1, "the indices")
    red = ctx.only("reduction", ("none", "add"), "none")
    ctx.dtypes(ANY if red == "none" else F32, 0, 2)


def _scatter_positions(ctx: _Ctx, shp: List[int]) -> Tuple[np.ndarray, List[int]]:
    """The flat position in data each update writes, and the updates' shape."""
    idx = ctx.value(1, "the indices").astype(np.int64)
    strides = np.array([_prod(shp[d + 1:]) for d in range(len(shp))], np.int64)
    if ctx.op == "ScatterND":
        k = idx.shape[-1]
        if not 1 <= k <= len(shp):
            raise ctx.error("indices address %d axes of data of rank %d" % (k, len(shp)))
        lead = np.array(shp[:k])
        if np.any(idx < -lead) or np.any(idx >= lead):
            raise ctx.error("an index is out of range for data of shape %s" % shp)
        base = ((idx % lead) * strides[:k]).sum(axis=-1)
        inner = _prod(shp[k:])
        pos = base[..., None] * 1 + np.arange(inner)
        return pos.reshape(-1), list(idx.shape[:-1]) + shp[k:]
    axis = _norm_axis(ctx, int(ctx.attr("axis", 0)), len(shp))
    n = shp[axis]
    if np.any(idx < -n) or np.any(idx >= n):
        raise ctx.error("an index is out of range for the %d entries of axis %d" % (n, axis))
    pos = np.zeros(idx.shape, np.int64)
    for d in range(idx.ndim):
        coord = (idx % n) if d == axis else np.arange(idx.shape[d]).reshape(
            [-1 if e == d else 1 for e in range(idx.ndim)])
        pos = pos + coord * strides[d]
    return pos.reshape(-1), list(idx.shape)


def _scatter(ctx: _Ctx) -> ir.Expr:
    """ScatterElements and ScatterND with constant indices: reduction none
    as a take from the data and the updates (the last write wins), add as
    the data plus a 0/1 matrix times the updates."""
    shp = ctx.shape(0)
    n = _prod(shp)
    pos, ushape = _scatter_positions(ctx, shp)
    if [int(d) for d in ctx.shape(2)] != ushape:
        raise ctx.error("updates of shape %s, expected %s" % (ctx.shape(2), ushape))
    flat = call("reshape", ctx.expr(0), newshape=[n])
    upd = call("reshape", ctx.expr(2), newshape=[len(pos)])
    if ctx.attr("reduction", "none") == "add":
        m = np.zeros((len(pos), n), np.float32)
        np.add.at(m, (np.arange(len(pos)), pos), 1.0)
        add = call("reshape", call("matmul", call("reshape", upd, newshape=[1, len(pos)]),
                                   ir.const(m)), newshape=[n])
        return call("reshape", call("add", flat, add), newshape=shp)
    src = np.arange(n)
    src[pos] = n + np.arange(len(pos))  # numpy keeps the last of repeated positions
    both = call("concatenate", ir.Tuple([flat, upd]), axis=0)
    return call("reshape", call("take", both, ir.const(src.astype(np.int32)), axis=0),
                newshape=shp)


# ---- Mod, DynamicQuantizeLinear ---------------------------------------------------------

def _chk_mod(ctx: _Ctx) -> None:
    ctx.dtypes(F32_INT)
    fmod = int(ctx.attr("fmod", 0))
    if ctx.dtype(0) == "float32" and not fmod:
        raise ctx.error("attribute fmod=0 is invalid for float32 inputs (expected 1)")


def _mod(ctx: _Ctx) -> ir.Expr:
    """Mod in float32: a - b * trunc(a / b), the sign of a (fmod=1), or
    moved by b where the signs of the remainder and b differ (fmod=0).
    Integers are exact while |a| stays below 2^24 (the float quotient
    then truncates to the integer one)."""
    f = "float32"
    out = ctx.dtype(0) or f
    r = mod_of(_as(ctx.expr(0), f), _as(ctx.expr(1), f), not int(ctx.attr("fmod", 0)))
    return _as(r, out)


def _dynamic_quantize(ctx: _Ctx) -> List[ir.Expr]:
    """DynamicQuantizeLinear: uint8 with the scale and zero point of the
    input's range (widened to hold 0), rounding half to even."""
    f = "float32"
    x = ctx.expr(0)
    r = len(ctx.shape(0))
    ax = list(range(r))
    lo = call("minimum", call("min", x, axis=ax, keepdims=False), scalar(0.0, f))
    hi = call("maximum", call("max", x, axis=ax, keepdims=False), scalar(0.0, f))
    scale = call("divide", call("subtract", hi, lo), scalar(255.0, f))
    zp = call("clip", _round_of(call("divide", call("negative", lo), scale)), a_min=0.0,
              a_max=255.0)
    y = call("add", _round_of(call("divide", x, scale)), zp)
    y = call("cast", call("clip", y, a_min=0.0, a_max=255.0), dtype="uint8")
    return [y, scale, call("cast", zp, dtype="uint8")]


# ---- TopK --------------------------------------------------------------------------------

def _chk_top_k(ctx: _Ctx) -> None:
    ctx.dtypes(F32, 0)
    ctx.value(1, "k")


def _top_k(ctx: _Ctx) -> List[ir.Expr]:
    """TopK as k rounds of argmax (argmin for the smallest): each round
    takes the first extreme entry and pushes it past every other value.
    Both orders put equal values by index, as ONNX does. (An input holding
    the float32 extreme itself, or an infinity, can repeat an index.)"""
    f = "float32"
    shp = ctx.shape(0)
    axis = _norm_axis(ctx, int(ctx.attr("axis", -1)), len(shp))
    k = int(ctx.value(1, "k").reshape(-1)[0])
    n = shp[axis]
    if not 1 <= k <= n:
        raise ctx.error("k=%d is out of range for the %d entries of axis %d" % (k, n, axis))
    if k > 64:
        raise ctx.unsupported("k=%d is not supported (64 at most)" % k)
    largest = int(ctx.attr("largest", 1))
    op, ext = ("argmax", "max") if largest else ("argmin", "min")
    away = scalar(-FLT_MAX if largest else FLT_MAX, f)
    pos = ir.const(np.arange(n, dtype=np.int32).reshape(
        [-1 if d == axis else 1 for d in range(len(shp))]))
    x = ctx.expr(0)
    vals, idxs = [], []
    for _ in range(k):
        i = _as(call(op, x, axis=axis, keepdims=True), "int32")
        vals.append(call(ext, x, axis=[axis], keepdims=True))
        idxs.append(i)
        hit = call("cast", _not(_ne_mask(call("subtract", pos, i), "int32"), "int32"), dtype=f)
        x = call("add", call("multiply", x, _not(hit, f)), call("multiply", hit, away))
    cat = (lambda xs: xs[0] if len(xs) == 1 else call("concatenate", ir.Tuple(xs), axis=axis))
    return [cat(vals), call("cast", cat(idxs), dtype="int64")]


# ---- 1-d pools ------------------------------------------------------------------------

def _chk_pool_1d(ctx: _Ctx) -> None:
    if ctx.rank(0) != 3:
        _o._chk_pool(ctx)
        return
    ctx.single_output()
    ctx.only("storage_order", (0,), 0)
    ctx.only("auto_pad", ("NOTSET", "VALID"), "NOTSET")
    ctx.dtypes(("float32", "int8") if ctx.op == "MaxPool" else F32)
    for name, n in (("kernel_shape", 1), ("strides", 1), ("dilations", 1), ("pads", 2)):
        v = ctx.ints(name)
        if v is not None and len(v) != n:
            raise ctx.error("attribute %s=%s needs %d values for a 1-d window" % (name, v, n))
    d = ctx.ints("dilations")
    if d is not None and d != [1]:
        raise ctx.unsupported("attribute dilations=%s is not supported (1 only)" % d)


def _pool_1d(kind: str) -> Callable[[_Ctx], ir.Expr]:
    """MaxPool, AveragePool; a 1-d window as a 2-d one of height 1."""
    two_d = _o._pool(kind)

    def conv(ctx: _Ctx) -> ir.Expr:
        shp = ctx.shape(0)
        if len(shp) != 3:
            return two_d(ctx)
        k = ctx.ints("kernel_shape")
        if k is None:
            raise ctx.error("attribute kernel_shape is missing")
        s = ctx.ints("strides", [1]) or [1]
        p = [0, 0] if ctx.attr("auto_pad", "NOTSET") == "VALID" else (ctx.ints("pads")
                                                                       or [0, 0])
        attrs: Dict[str, Any] = dict(pool_size=[1, k[0]], strides=[1, s[0]],
                                     padding=[0, p[0], 0, p[1]], layout="NCHW",
                                     ceil_mode=bool(ctx.attr("ceil_mode", 0)))
        if kind == "avg_pool2d":
            attrs["count_include_pad"] = bool(ctx.attr("count_include_pad", 0))
        x = call("reshape", ctx.expr(0), newshape=[shp[0], shp[1], 1, shp[2]])
        y = call("nn." + kind, x, **attrs)
        oshp = [int(v) for v in y.checked_type.shape]
        return call("reshape", y, newshape=[oshp[0], oshp[1], oshp[3]])
    return conv


# ---- 1-d convolution ----------------------------------------------------------------------

def _chk_conv_1d(ctx: _Ctx) -> None:
    """Conv over 3-d (1-d windows) and 5-d (3-d windows) inputs; 4-d as
    frontend/onnx.py checks it."""
    r = ctx.rank(0)
    if r not in (3, 5):
        _o._chk_conv(ctx)
        return
    ctx.dtypes(F32)
    ctx.only("auto_pad", ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"), "NOTSET")
    k = r - 2
    for name, n in (("kernel_shape", k), ("strides", k), ("dilations", k), ("pads", 2 * k)):
        v = ctx.ints(name)
        if v is not None and len(v) != n:
            raise ctx.error("attribute %s=%s needs %d values for a %d-d window"
                            % (name, v, n, k))
        if v is not None and any(x < (0 if name == "pads" else 1) for x in v):
            raise ctx.error("attribute %s=%s must be %s" % (name, v, "non-negative"
                                                              if name == "pads" else "positive"))
    if ctx.rank(1) not in (None, r):
        raise ctx.error("the weight must be %d-d (M, C/group, %s) for a %d-d input, got rank %s"
                        % (r, ", ".join("k%d" % i for i in range(k)), r, ctx.rank(1)))


def _same_pads(ctx: _Ctx, size: int, k: int, s: int, d: int) -> List[int]:
    """[begin, end] of one axis for auto_pad SAME_UPPER / SAME_LOWER / VALID."""
    p = _o._auto_pad(ctx, [1, size], [1, k], [1, s], [1, d])
    return [p[1], p[3]]


def _conv_3d(ctx: _Ctx) -> ir.Expr:
    """Conv over (N, C, D, H, W) as one 2-d convolution per kernel depth
    tap j: the input's depth slices j*dilation, j*dilation + stride, ...
    folded into the batch, convolved with the weight's slice j, and summed."""
    shp, wshp = ctx.shape(0), ctx.shape(1)
    n, c, dd, hh, ww = shp
    m, kd = wshp[0], wshp[2]
    k = ctx.ints("kernel_shape") or wshp[2:]
    if list(k) != wshp[2:]:
        raise ctx.error("kernel_shape %s does not match the weight %s" % (k, wshp))
    s = ctx.ints("strides") or [1, 1, 1]
    d = ctx.ints("dilations") or [1, 1, 1]
    if ctx.attr("auto_pad", "NOTSET") == "NOTSET":
        p = ctx.ints("pads") or [0] * 6
        pads = [[p[i], p[i + 3]] for i in range(3)]
    else:
        pads = [_same_pads(ctx, shp[2 + i], k[i], s[i], d[i]) for i in range(3)]
    x = ctx.expr(0)
    if pads[0] != [0, 0]:
        x = call("nn.pad", x, pad_width=[[0, 0], [0, 0], pads[0], [0, 0], [0, 0]],
                 pad_value=0.0)
    dpad = dd + pads[0][0] + pads[0][1]
    od = (dpad - (kd - 1) * d[0] - 1) // s[0] + 1
    if od < 1:
        raise ctx.error("the kernel (depth %d, dilation %d) is deeper than the padded input "
                        "(%d)" % (kd, d[0], dpad))
    w = ctx.expr(1)
    total = None
    for j in range(kd):
        start = j * d[0]
        xj = call("strided_slice", x, begin=[start], end=[start + (od - 1) * s[0] + 1],
                  strides=[s[0]], axes=[2])
        xj = call("reshape", call("transpose", xj, axes=[0, 2, 1, 3, 4]),
                  newshape=[n * od, c, hh, ww])
        wj = call("reshape", call("strided_slice", w, begin=[j], end=[j + 1], strides=[1],
                                  axes=[2]), newshape=[m, wshp[1], wshp[3], wshp[4]])
        y = call("nn.conv2d", xj, wj, strides=s[1:], dilation=d[1:],
                 padding=[pads[1][0], pads[2][0], pads[1][1], pads[2][1]],
                 groups=int(ctx.attr("group", 1)), channels=m, kernel_size=k[1:])
        total = y if total is None else call("add", total, y)
    assert total is not None
    oshp = [int(v) for v in total.checked_type.shape]
    y = call("transpose", call("reshape", total, newshape=[n, od, m, oshp[2], oshp[3]]),
             axes=[0, 2, 1, 3, 4])
    if ctx.has(2):
        y = call("nn.bias_add", y, ctx.expr(2), axis=1)
    return y


def _conv_1d(ctx: _Ctx) -> ir.Expr:
    """Conv over (N, C, W) as a 2-d one of height 1 (weight (M, C/group, 1, k))."""
    shp = ctx.shape(0)
    if len(shp) == 5:
        return _conv_3d(ctx)
    if len(shp) != 3:
        return _o._conv(ctx)
    wshp = ctx.shape(1)
    k = ctx.ints("kernel_shape") or wshp[2:]
    if list(k) != wshp[2:]:
        raise ctx.error("kernel_shape %s does not match the weight %s" % (k, wshp))
    s = (ctx.ints("strides") or [1])[0]
    d = (ctx.ints("dilations") or [1])[0]
    if ctx.attr("auto_pad", "NOTSET") == "NOTSET":
        pads = ctx.ints("pads") or [0, 0]
        p = [0, pads[0], 0, pads[1]]
    else:
        p = _o._auto_pad(ctx, [1, shp[2]], [1, k[0]], [1, s], [1, d])
    x = call("reshape", ctx.expr(0), newshape=[shp[0], shp[1], 1, shp[2]])
    w = call("reshape", ctx.expr(1), newshape=[wshp[0], wshp[1], 1, wshp[2]])
    y = call("nn.conv2d", x, w, strides=[1, s], padding=p, dilation=[1, d],
             groups=int(ctx.attr("group", 1)), channels=wshp[0], kernel_size=[1, k[0]])
    if ctx.has(2):
        y = call("nn.bias_add", y, ctx.expr(2), axis=1)
    oshp = [int(v) for v in y.checked_type.shape]
    return call("reshape", y, newshape=[oshp[0], oshp[1], oshp[3]])


# ---- hyperbolic functions, Erf -------------------------------------------------------------

def _hyperbolic(kind: str) -> Callable[[_Ctx], ir.Expr]:
    """Sinh, Cosh from exp; Asinh, Acosh, Atanh from log and sqrt."""
    def conv(ctx: _Ctx) -> ir.Expr:
        f = "float32"
        x = ctx.expr(0)
        half, one_ = scalar(0.5, f), scalar(1.0, f)
        if kind in ("sinh", "cosh"):
            e, ne = call("exp", x), call("exp", call("negative", x))
            return call("multiply", call("subtract" if kind == "sinh" else "add", e, ne), half)
        if kind == "asinh":  # odd: log(|x| + sqrt(x^2 + 1)) with the sign of x
            ax = call("abs", x)
            m = call("log", call("add", ax, call("sqrt", call("add", call("multiply", x, x),
                                                                  one_))))
            return call("multiply", m, _sign_of(x))
        if kind == "acosh":
            return call("log", call("add", x, call("sqrt", call("subtract", call(
                "multiply", x, x), one_))))
        return call("multiply", call("log", call("divide", call("add", one_, x),
                                                 call("subtract", one_, x))), half)
    return conv


def _sign_of(x: ir.Expr) -> ir.Expr:
    return call("subtract", _gt_mask(x, "float32"), _gt_mask(call("negative", x), "float32"))


# erf(x) = 1 - poly(t) * exp(-x^2), t = 1 / (1 + P x), for x >= 0
# (Abramowitz and Stegun 7.1.26, |error| <= 1.5e-7); odd
_ERF_P = 0.3275911
_ERF_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)


def _erf(ctx: _Ctx) -> ir.Expr:
    f = "float32"
    x = ctx.expr(0)
    ax = call("abs", x)
    t = call("divide", scalar(1.0, f), call("add", scalar(1.0, f),
                                            call("multiply", ax, scalar(_ERF_P, f))))
    poly: ir.Expr = scalar(_ERF_A[-1], f)
    for a in reversed(_ERF_A[:-1]):
        poly = call("add", call("multiply", poly, t), scalar(a, f))
    poly = call("multiply", poly, t)
    y = call("subtract", scalar(1.0, f), call("multiply", poly, call(
        "exp", call("negative", call("multiply", ax, ax)))))
    return call("multiply", y, _sign_of(x))


# ---- trigonometric functions ---------------------------------------------------------------

# atan on |z| <= tan(pi / 8)
_ATAN = [(-1) ** i / (2 * i + 1) for i in range(11)]


def _atan_of(x: ir.Expr) -> ir.Expr:
    """atan: |x| folded into [0, 1] by 1 / |x|, then into |z| <= tan(pi/8)
    by atan(y) = pi/4 + atan((y - 1) / (y + 1)); masks blend finite values."""
    f = "float32"
    ax = call("abs", x)
    big = _gt_mask(call("subtract", ax, scalar(1.0, f)), f)
    y = call("minimum", ax, call("divide", scalar(1.0, f), ax))
    mid = _gt_mask(call("subtract", y, scalar(float(np.tan(np.pi / 8)), f)), f)
    moved = call("divide", call("subtract", y, scalar(1.0, f)), call("add", y, scalar(1.0, f)))
    z = call("add", y, call("multiply", mid, call("subtract", moved, y)))
    a = call("multiply", _poly(call("multiply", z, z), _ATAN), z)
    a = call("add", a, call("multiply", mid, scalar(np.pi / 4, f)))
    a = call("add", a, call("multiply", big, call("subtract", scalar(np.pi / 2, f),
                                                  call("multiply", a, scalar(2.0, f)))))
    return call("multiply", a, _sign_of(x))


def _asin_of(x: ir.Expr) -> ir.Expr:
    """asin(x) = 2 atan(x / (1 + sqrt(1 - x^2)))."""
    f = "float32"
    d = call("add", scalar(1.0, f), call("sqrt", call("subtract", scalar(1.0, f),
                                                       call("multiply", x, x))))
    return call("multiply", _atan_of(call("divide", x, d)), scalar(2.0, f))


def _trig(kind: str) -> Callable[[_Ctx], ir.Expr]:
    def conv(ctx: _Ctx) -> ir.Expr:
        x = ctx.expr(0)
        if kind in ("sin", "cos", "tan"):
            sin, cos = _sin_cos(x)
            return {"sin": sin, "cos": cos}.get(kind) or call("divide", sin, cos)
        if kind == "atan":
            return _atan_of(x)
        if kind == "asin":
            return _asin_of(x)
        return call("subtract", scalar(np.pi / 2, "float32"), _asin_of(x))
    return conv


# ---- ReverseSequence --------------------------------------------------------------------------

def _chk_reverse_sequence(ctx: _Ctx) -> None:
    ctx.dtypes(ANY, 0)
    ctx.value(1, "the sequence lengths")


def _reverse_sequence(ctx: _Ctx) -> ir.Expr:
    """ReverseSequence with constant lengths: a take at the reversed flat
    positions (exact for every element type)."""
    shp = ctx.shape(0)
    if len(shp) < 2:
        raise ctx.error("expects an input of rank >= 2, got %s" % shp)
    ta, ba = int(ctx.attr("time_axis", 0)), int(ctx.attr("batch_axis", 1))
    if sorted((ta, ba)) != [0, 1]:
        raise ctx.error("time_axis=%d and batch_axis=%d must be 0 and 1" % (ta, ba))
    lens = ctx.value(1, "the sequence lengths").reshape(-1).astype(np.int64)
    if lens.size != shp[ba] or np.any(lens < 0) or np.any(lens > shp[ta]):
        raise ctx.error("sequence lengths %s do not fit %d sequences of %d steps"
                        % (list(lens), shp[ba], shp[ta]))
    idx = np.arange(_prod(shp)).reshape(shp)
    src = idx.copy()
    tb_idx, tb_src = np.moveaxis(idx, (ta, ba), (0, 1)), np.moveaxis(src, (ta, ba), (0, 1))
    for b, n in enumerate(lens):
        tb_src[:n, b] = tb_idx[:n, b][::-1]  # a view of src: written through
    flat = call("reshape", ctx.expr(0), newshape=[_prod(shp)])
    return call("take", flat, ir.const(src.astype(np.int32)), axis=0)


# ---- the rows ------------------------------------------------------------------------

def _chk(allowed: Sequence[str], *inputs: int) -> Callable[[_Ctx], None]:
    def chk(ctx: _Ctx) -> None:
        ctx.dtypes(allowed, *inputs)
    return chk


CONVERTERS: Dict[str, Tuple[Callable[[_Ctx], Any], Optional[Callable[[_Ctx], None]]]] = {
    "Shape": (_only_folded, _chk_folded),
    "Size": (_only_folded, _chk_folded),
    "EyeLike": (_only_folded, _chk_folded),
    "ConstantOfShape": (_only_folded, _chk_folded),
    "Range": (_only_folded, _chk_folded),
    "LogSoftmax": (_log_softmax, _chk(F32)),
    "Hardmax": (_hardmax, _chk(F32)),
    "NegativeLogLikelihoodLoss": (_nll_loss, _chk_nll),
    "SoftmaxCrossEntropyLoss": (_sce_loss, _chk_sce),
    "GatherElements": (_gather_elements, _chk_gather_elements),
    "Equal": (_compare("eq"), _chk_compare),
    "Greater": (_compare("gt"), _chk_compare),
    "Less": (_compare("lt"), _chk_compare),
    "GreaterOrEqual": (_compare("ge"), _chk_compare),
    "LessOrEqual": (_compare("le"), _chk_compare),
    "Not": (_logic("not"), _chk_logic),
    "And": (_logic("and"), _chk_logic),
    "Or": (_logic("or"), _chk_logic),
    "Xor": (_logic("xor"), _chk_logic),
    "Where": (_where, _chk_where),
    "Reciprocal": (_reciprocal, _chk(F32)),
    "Softplus": (_softplus, _chk(F32)),
    "Softsign": (_softsign, _chk(F32)),
    "HardSigmoid": (_hard_sigmoid, _chk(F32)),
    "Elu": (_elu, _chk(F32)),
    "Selu": (_selu, _chk(F32)),
    "Celu": (_celu, _chk(F32)),
    "ThresholdedRelu": (_thresholded_relu, _chk(F32)),
    "PRelu": (_prelu, _chk(F32)),
    "Sign": (_sign, _chk(F32)),
    "Pow": (_pow, _chk_pow),
    "LayerNormalization": (_layer_norm, _chk_layer_norm),
    "InstanceNormalization": (_instance_norm, _chk_instance_norm),
    "ReduceL1": (_reduce_composed("l1"), _chk_reduce_f32),
    "ReduceL2": (_reduce_composed("l2"), _chk_reduce_f32),
    "ReduceSumSquare": (_reduce_composed("sumsquare"), _chk_reduce_f32),
    "ReduceLogSum": (_reduce_composed("logsum"), _chk_reduce_f32),
    "ReduceLogSumExp": (_reduce_composed("logsumexp"), _chk_reduce_f32),
    "GlobalMaxPool": (_global_max_pool, _chk(F32)),
    "Mean": (_mean_of, _chk(F32)),
    "Sum": (_arith("add"), _chk(F32_INT)),
    "CastLike": (_cast_like, _chk_cast_like),
    "Expand": (_expand, _chk(ANY, 0)),
    "Split": (_split, _chk_split),
    "Trilu": (_trilu, _chk_trilu),
    "CumSum": (_cumsum, _chk_cumsum),
    "OneHot": (_one_hot, _chk_one_hot),
    "ReduceProd": (_reduce_prod, _chk_reduce_prod),
    "Floor": (_floor, _chk(F32)),
    "Ceil": (_ceil, _chk(F32)),
    "Round": (_round, _chk(F32)),
    "IsInf": (_is_inf, _chk(F32)),
    "IsNaN": (_is_nan, _chk(F32)),
    "Shrink": (_shrink, _chk(F32)),
    "GatherND": (_gather_nd, _chk_gather_nd),
    "Resize": (_resize, _chk_resize),
    "ConvTranspose": (_conv_transpose, _chk_conv_transpose),
    "HannWindow": (_only_folded, _chk_folded),
    "HammingWindow": (_only_folded, _chk_folded),
    "BlackmanWindow": (_only_folded, _chk_folded),
    "Compress": (_compress, _chk_compress),
    "MeanVarianceNormalization": (_mvn, _chk(F32)),
    "LRN": (_lrn, _chk(F32)),
    "ScatterElements": (_scatter, _chk_scatter),
    "ScatterND": (_scatter, _chk_scatter),
    "Mod": (_mod, _chk_mod),
    "DynamicQuantizeLinear": (_dynamic_quantize, _chk(F32)),
    "TopK": (_top_k, _chk_top_k),
    "Sinh": (_hyperbolic("sinh"), _chk(F32)),
    "Cosh": (_hyperbolic("cosh"), _chk(F32)),
    "Asinh": (_hyperbolic("asinh"), _chk(F32)),
    "Acosh": (_hyperbolic("acosh"), _chk(F32)),
    "Atanh": (_hyperbolic("atanh"), _chk(F32)),
    "Erf": (_erf, _chk(F32)),
    "Sin": (_trig("sin"), _chk(F32)),
    "Cos": (_trig("cos"), _chk(F32)),
    "Tan": (_trig("tan"), _chk(F32)),
    "Asin": (_trig("asin"), _chk(F32)),
    "Acos": (_trig("acos"), _chk(F32)),
    "Atan": (_trig("atan"), _chk(F32)),
    "ReverseSequence": (_reverse_sequence, _chk_reverse_sequence),
}

# rows of frontend/onnx.py replaced: wider element types (int64 and the
# narrow integers computed in int32), ArgMax/ArgMin's select_last_index,
# Dropout's mask output
WIDENED: Dict[str, Tuple[Callable[[_Ctx], Any], Optional[Callable[[_Ctx], None]]]] = {
    "Add": (_arith("add"), _chk(F32_INT)),
    "Sub": (_arith("subtract"), _chk(F32_INT)),
    "Mul": (_arith("multiply"), _chk(F32_INT)),
    "Max": (_arith("maximum"), _chk(F32_INT)),
    "Min": (_arith("minimum"), _chk(F32_INT)),
    "Neg": (_neg, _chk(("float32", "int8", "int16", "int32", "int64"))),
    "ArgMax": (_arg("argmax"), _chk_arg),
    "ArgMin": (_arg("argmin"), _chk_arg),
    "Dropout": (_dropout, _chk_dropout),
    "Pad": (_pad_modes, _chk_pad_modes),
    "MaxPool": (_pool_1d("max_pool2d"), _chk_pool_1d),
    "AveragePool": (_pool_1d("avg_pool2d"), _chk_pool_1d),
    "Conv": (_conv_1d, _chk_conv_1d),
}

PARAMETER_INPUTS: Dict[str, Tuple[int, ...]] = {
    "ReduceL1": (1,), "ReduceL2": (1,), "ReduceSumSquare": (1,), "ReduceLogSum": (1,),
    "ReduceLogSumExp": (1,), "ReduceProd": (1,), "Split": (1,), "Trilu": (1,),
    "CumSum": (1,), "OneHot": (1, 2), "Expand": (1,), "Pow": (1,),
    "ConstantOfShape": (0,), "Range": (0, 1, 2), "Resize": (1, 2, 3),
    "HannWindow": (0,), "HammingWindow": (0,), "BlackmanWindow": (0,), "Compress": (1,),
    "ScatterElements": (1,), "ScatterND": (1,), "TopK": (1,), "ReverseSequence": (1,),
}
