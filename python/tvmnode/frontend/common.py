"""What the importers share: building calls by operator name, the error
type, names that the text format can carry, and the module attributes that
describe a model's inputs and outputs."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence

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

