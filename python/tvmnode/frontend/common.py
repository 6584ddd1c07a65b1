"""What the importers share: building calls by operator name, the error
type, names that the text format can carry, and the module attributes that
describe a model's inputs and outputs."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .. import ir
from ..ir import op as _op


class ModelImportError(ValueError):
    """A model the importer cannot turn into IR: an operator or attribute
    it cannot map, or a file that is not a valid model."""


class UnsupportedOperatorError(ModelImportError):
    """A valid model that uses an operator, attribute value or element type
    the importer cannot map (as opposed to a broken model)."""


def missing_operators(who: str, missing: Sequence[Dict[str, Any]], listed: str,
                      supported: Sequence[str]) -> UnsupportedOperatorError:
    """The error naming every operator type a model uses that the importer
    lacks (`listed`, as the importer describes them), with `missing` (one
    dict per type: at least "operator" and "count") as its attribute
    `missing`, for tools that report them as data."""
    n = len(missing)
    err = UnsupportedOperatorError("%s: %d operator type%s not supported: %s; supported: %s"
                                   % (who, n, " is" if n == 1 else "s are", listed,
                                      ", ".join(supported)))
    err.missing = list(missing)  # type: ignore[attr-defined]
    return err


class DynamicShapeWarning(UserWarning):
    """An importer fixed a dynamic input dimension by itself (an ONNX
    model's dynamic batch dimension, set to 1)."""


def call(name: str, *args: Any, **attrs: Any) -> ir.Expr:
    """A call of registered operator `name` ("qnn.conv2d", "add", ...)."""
    ns: Any = _op
    parts = name.split(".")
    for p in parts[:-1]:
        ns = getattr(ns, p)
    return getattr(ns, parts[-1])(*args, **attrs)


def gather_nd(data: ir.Expr, indices: ir.Expr, shape: Sequence[int],
              indices_shape: Sequence[int]) -> ir.Expr:
    """GatherND without batch dimensions (ONNX GatherND, TFLite GATHER_ND)
    of `data` (of `shape`) at int32 `indices` (of `indices_shape`, already
    non-negative): a take of the leading indices_shape[-1] axes flattened
    into one, at sum(index * stride)."""
    k = int(indices_shape[-1])
    lead = [int(d) for d in shape[:k]]
    strides = np.array([int(np.prod(lead[d + 1:], dtype=np.int64)) for d in range(k)], np.int32)
    flat = call("sum", call("multiply", indices, ir.const(strides)),
                axis=[len(indices_shape) - 1], keepdims=False)
    rows = int(np.prod(lead, dtype=np.int64))
    return call("take", call("reshape", data, newshape=[rows] + [int(d) for d in shape[k:]]),
                flat, axis=0)


def scalar(value: Any, dtype: str) -> ir.Constant:
    """A 0-d constant of `dtype`."""
    return ir.const(np.array(value, dtype=dtype))


def vector_or_scalar(values: Any, dtype: str) -> ir.Constant:
    """A per-tensor value as a 0-d constant, a per-channel one as a vector."""
    a = np.asarray(values, dtype=dtype).reshape(-1)
    return ir.const(a.reshape(()) if a.size == 1 else a)


_NAME_BAD = re.compile(r"[^A-Za-z0-9_]")


def var_name(name: str, used: Dict[str, int]) -> str:
    """A variable name the text format prints plainly: letters, digits and
    underscores, unique within the function."""
    base = _NAME_BAD.sub("_", name) or "input"
    if base[0].isdigit():
        base = "v_" + base
    n = used.get(base, 0)
    used[base] = n + 1
    return base if n == 0 else "%s_%d" % (base, n)


@dataclass
class TensorInfo:
    """An input or output of an imported model, as the firmware API and
    `tvmnode info` report it."""
    name: str
    shape: List[int]
    dtype: str
    scale: List[float] = field(default_factory=list)
    zero_point: List[int] = field(default_factory=list)
    quantized_dimension: int = 0

    def as_attr(self) -> Dict[str, Any]:
        d: Dict[str, Any] = {"name": self.name, "shape": list(self.shape), "dtype": self.dtype}
        if self.scale:
            d["scale"] = [float(s) for s in self.scale]
            d["zero_point"] = [int(z) for z in self.zero_point]
            d["quantized_dimension"] = int(self.quantized_dimension)
        return d


def finish(params: Sequence[ir.Var], outputs: Sequence[ir.Expr], inputs: Sequence[TensorInfo],
           output_infos: Sequence[TensorInfo], source: str, who: str) -> ir.IRModule:
    """The module of an imported graph: "main" with the model's inputs and
    outputs, described in the module attributes "inputs", "outputs" and
    "source"; checked with ir.well_formed and typed, and its output types
    checked against what the model file declares."""
    from .. import transform

    body = outputs[0] if len(outputs) == 1 else ir.Tuple(list(outputs))
    mod = ir.IRModule.from_expr(ir.Function(list(params), body))
    mod = mod.with_attr("inputs", [t.as_attr() for t in inputs])
    mod = mod.with_attr("outputs", [t.as_attr() for t in output_infos])
    mod = mod.with_attr("source", source)
    ir.well_formed(mod)
    typed = transform.InferType()(mod)
    ret = typed["main"].body.checked_type
    rets = list(ret.fields) if len(outputs) > 1 else [ret]
    for i, (t, info) in enumerate(zip(rets, output_infos)):
        got = [int(d) for d in t.shape]
        if got != list(info.shape) or str(t.dtype) != info.dtype:
            raise ModelImportError("%s: output %d '%s' is declared %s %s but computes %s %s"
                               % (who, i, info.name, info.shape, info.dtype, got, t.dtype))
    return typed


def model_io(mod: ir.IRModule) -> Dict[str, List[Dict[str, Any]]]:
    """The "inputs" and "outputs" module attributes of an imported model as
    plain Python lists of dicts (empty lists for a module without them)."""
    out: Dict[str, List[Dict[str, Any]]] = {"inputs": [], "outputs": []}
    attrs = mod.attrs
    if attrs is None:
        return out
    for key in out:
        if key in attrs:
            for t in attrs[key]:
                d: Dict[str, Any] = {}
                for k, v in t.items():
                    if k in ("shape", "scale", "zero_point"):
                        d[str(k)] = [x for x in v]
                    else:
                        d[str(k)] = v if isinstance(v, (int, float)) else str(v)
                out[key].append(d)
    return out



# ---- elementwise compositions both importers use ----------------------------------
#
# Comparisons give exact 0/1 masks from elementwise arithmetic: for integers
# min(max(d, 0), 1) is d > 0; for float32 the difference is scaled by 2^100
# twice (any nonzero difference, denormals included, reaches 1) and clipped.

BIG = 2.0 ** 100


def as_dtype(x: ir.Expr, dt: str) -> ir.Expr:
    """x cast to dt (x itself when it is of dt already)."""
    return x if str(x.checked_type.dtype) == dt else call("cast", x, dtype=dt)


def one(dt: str) -> ir.Expr:
    return scalar(1, dt)


def gt_mask(d: ir.Expr, dt: str) -> ir.Expr:
    """1 where d > 0, else 0 (d of the compute dtype dt)."""
    if dt == "float32":
        d = call("multiply", call("maximum", call("multiply", d, scalar(BIG, dt)),
                                  scalar(0.0, dt)), scalar(BIG, dt))
        return call("minimum", d, one(dt))
    return call("minimum", call("maximum", d, scalar(0, dt)), one(dt))


def ne_mask(d: ir.Expr, dt: str) -> ir.Expr:
    """1 where d != 0, else 0."""
    return call("add", gt_mask(d, dt), gt_mask(call("negative", d), dt))


def not_mask(m: ir.Expr, dt: str) -> ir.Expr:
    """1 - m of a 0/1 mask m."""
    return call("subtract", one(dt), m)


def trunc(x: ir.Expr) -> ir.Expr:
    """x rounded toward zero, exact for every float32: the int64 cast of x
    clipped to +-2^62, plus what the clip cut off (0, or an integer)."""
    f = "float32"
    xc = call("clip", x, a_min=-2.0 ** 62, a_max=2.0 ** 62)
    t = call("cast", call("cast", xc, dtype="int64"), dtype=f)
    return call("add", t, call("subtract", x, xc))


def floor_of(x: ir.Expr) -> ir.Expr:
    t = trunc(x)
    return call("subtract", t, gt_mask(call("subtract", t, x), "float32"))


def ceil_of(x: ir.Expr) -> ir.Expr:
    t = trunc(x)
    return call("add", t, gt_mask(call("subtract", x, t), "float32"))


def odd(k: ir.Expr) -> ir.Expr:
    """1 where the integral float32 k is odd, else 0 (every float beyond
    2^24 is even)."""
    f = "float32"
    kc = call("clip", k, a_min=-2.0 ** 24, a_max=2.0 ** 24)
    return call("abs", call("subtract", kc, call("multiply", trunc(
        call("multiply", kc, scalar(0.5, f))), scalar(2.0, f))))


def round_of(x: ir.Expr) -> ir.Expr:
    """Round half to even: floor(x), plus 1 above the half, plus 1 at the
    half when floor(x) is odd."""
    f = "float32"
    fl = floor_of(x)
    d = call("subtract", call("subtract", x, fl), scalar(0.5, f))
    up = gt_mask(d, f)
    tie = not_mask(ne_mask(d, f), f)
    return call("add", fl, call("add", up, call("multiply", tie, odd(fl))))


# pi in two parts: k * _PI_HI is exact for |k| < 2^15
_PI_HI = 3.140625
_PI_LO = float(np.pi - 3.140625)


def poly(z: ir.Expr, coeffs: Sequence[float]) -> ir.Expr:
    """sum coeffs[i] * z^i by Horner's rule."""
    f = "float32"
    y: ir.Expr = scalar(coeffs[-1], f)
    for c in reversed(coeffs[:-1]):
        y = call("add", call("multiply", y, z), scalar(c, f))
    return y


def reduce_pi(x: ir.Expr) -> Tuple[ir.Expr, ir.Expr]:
    """(r, s): x = k * pi + r with |r| <= pi / 2 and s = (-1)^k."""
    f = "float32"
    k = round_of(call("multiply", x, scalar(1 / np.pi, f)))
    r = call("subtract", call("subtract", x, call("multiply", k, scalar(_PI_HI, f))),
             call("multiply", k, scalar(_PI_LO, f)))
    return r, call("subtract", scalar(1.0, f), call("multiply", odd(k), scalar(2.0, f)))


def factorial(n: int) -> float:
    return float(np.prod(np.arange(1, n + 1, dtype=np.float64)))


# Taylor series on |r| <= pi / 2 (the first term left out is below 1e-9)
_SIN = [(-1) ** i / factorial(2 * i + 1) for i in range(7)]
_COS = [(-1) ** i / factorial(2 * i) for i in range(8)]


def sin_cos(x: ir.Expr) -> Tuple[ir.Expr, ir.Expr]:
    """sin(x), cos(x) in float32 (absolute error below 5e-7)."""
    r, sgn = reduce_pi(x)
    r2 = call("multiply", r, r)
    sin = call("multiply", call("multiply", poly(r2, _SIN), r), sgn)
    cos = call("multiply", poly(r2, _COS), sgn)
    return sin, cos


def compare(kind: str, a: ir.Expr, b: ir.Expr, dt: str) -> ir.Expr:
    """a <kind> b as bool, kind one of eq, ne, gt, ge, lt, le; a and b of
    the compute dtype dt (float32 or an integer type whose difference of
    any two values fits)."""
    if kind in ("eq", "ne"):
        m = ne_mask(call("subtract", a, b), dt)
        if kind == "eq":
            m = not_mask(m, dt)
    else:
        m = gt_mask(call("subtract", a, b) if kind in ("gt", "le") else call("subtract", b, a),
                    dt)
        if kind in ("le", "ge"):
            m = not_mask(m, dt)
    return call("cast", m, dtype="bool")


def logic(kind: str, a: ir.Expr, b: Optional[ir.Expr] = None) -> ir.Expr:
    """The bool result of kind (not, and, or, xor) on bool operands,
    computed on 0/1 in int32."""
    dt = "int32"
    ma = as_dtype(a, dt)
    if kind == "not":
        return call("cast", not_mask(ma, dt), dtype="bool")
    assert b is not None
    mb = as_dtype(b, dt)
    if kind == "and":
        m = call("multiply", ma, mb)
    elif kind == "or":
        m = call("maximum", ma, mb)
    else:
        m = ne_mask(call("subtract", ma, mb), dt)
    return call("cast", m, dtype="bool")


def select(cond: ir.Expr, x: ir.Expr, y: ir.Expr, out: str) -> ir.Expr:
    """x where the bool cond holds, else y (broadcast together), as
    cond * x + (1 - cond) * y in float32 or int32: an infinity or NaN in
    the branch not taken spreads into the result."""
    dt = "float32" if out == "float32" else "int32"
    c = as_dtype(cond, dt)
    r = call("add", call("multiply", c, as_dtype(x, dt)),
             call("multiply", not_mask(c, dt), as_dtype(y, dt)))
    return as_dtype(r, out)


def mod_of(a: ir.Expr, b: ir.Expr, floored: bool) -> ir.Expr:
    """a - b * trunc(a / b) in float32 (the sign of a), or, `floored`,
    moved by b where the signs of the remainder and b differ."""
    f = "float32"
    r = call("subtract", a, call("multiply", b, trunc(call("divide", a, b))))
    if floored:
        r = call("add", r, call("multiply", b, gt_mask(call("negative", call("multiply", r, b)), f)))
    return r


def cumsum(x: ir.Expr, shape: Sequence[int], axis: int, exclusive: bool,
           reverse: bool) -> ir.Expr:
    """The float32 running sum of x (of `shape`) along `axis` in [0, rank),
    as a product with a triangular 0/1 matrix (each output the sum, in
    order along the axis, of the entries it covers)."""
    r = len(shape)
    n = int(shape[axis])
    i = np.arange(n).reshape(-1, 1)
    j = np.arange(n).reshape(1, -1)
    # out[j] = sum_i x[i] * m[i, j]
    m = (i >= j) if reverse else (i <= j)
    if exclusive:
        m = m & (i != j)
    perm = [d for d in range(r) if d != axis] + [axis]
    if axis != r - 1:
        x = call("transpose", x, axes=perm)
    moved = [int(shape[d]) for d in perm]
    y = call("matmul", call("reshape", x, newshape=[int(np.prod(moved[:-1], dtype=np.int64)), n]),
             ir.const(m.astype(np.float32)))
    y = call("reshape", y, newshape=moved)
    if axis != r - 1:
        y = call("transpose", y, axes=[perm.index(d) for d in range(r)])
    return y
