"""ONNX models -> IRModule, read with the `onnx` package (its protobuf
classes and numpy_helper; no protobuf parsing here).

float32 graphs at opsets 11 to 21 keep ONNX's layouts: NCHW data and OIHW
kernels go to nn.conv2d and the pools as they are, so no transposes enter
the graph. Initializers and Constant nodes become constants; values that
parameterise an operator (Reshape's shape, Slice's starts, Squeeze's axes,
Pad's pads, quantization parameters) must be constants and are read here.
BatchNormalization is folded into a multiply and an add by constants.

Quantized graphs come in two forms. The QLinear operators (QLinearConv,
QLinearMatMul, com.microsoft QGemm) become qnn.conv2d / qnn.dense ->
bias_add -> qnn.requantize with rounding "ONNX", ONNX Runtime's integer
arithmetic (a float32 scale, ties to even). In the QDQ form
(QuantizeLinear / DequantizeLinear around float operators) the groups
ONNX Runtime fuses on the CPU (DequantizeLinear -> Conv / MatMul / Gemm
[-> Relu / Clip] -> QuantizeLinear, and DequantizeLinear -> Add / Mul /
Concat / AveragePool / GlobalAveragePool / Sigmoid / LeakyRelu / Softmax
-> QuantizeLinear into the com.microsoft QLinear operators) are first
rewritten into those operators, and QDQ pairs around Flatten, Reshape, Transpose, Squeeze,
Unsqueeze and MaxPool are dropped (see _QdqFuser), so that these run on
int8 tensors; the rest maps node by node onto qnn.quantize /
qnn.dequantize and computes what ONNX's reference does; a
DequantizeLinear of a constant is folded here. The kernels are int8:
uint8 tensors are moved to int8 by subtracting 128 from the values and
the zero point (exact), and moved back at the end.

Every node is checked before anything is built (a first pass over the
graph, using the types ONNX's shape inference gives): an operator,
attribute value or element type that cannot be mapped is an
UnsupportedOperatorError (a ModelImportError) naming the operator type,
the node's name and its index.
"""
from __future__ import annotations

import math
import os
import threading
import warnings
from typing import (Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Set,
                    Tuple, Union)

import numpy as np

from .. import ir
from .common import ModelImportError, TensorInfo, UnsupportedOperatorError, call, finish, scalar, var_name, vector_or_scalar
from .common import DynamicShapeWarning, missing_operators

WHO = "from_onnx"
# Elements of one input at most: what the kernels index (int32).
_MAX_INPUT_ELEMENTS = 2**31 - 1
MIN_OPSET, MAX_OPSET = 11, 21


# TensorProto.DataType -> our dtype name (None: no IR dtype)
_ELEM = {1: "float32", 2: "uint8", 3: "int8", 5: "int16", 6: "int32", 7: "int64", 9: "bool",
         11: "float64"}
_ELEM_NAMES = {0: "UNDEFINED", 1: "FLOAT", 2: "UINT8", 3: "INT8", 4: "UINT16", 5: "INT16",
               6: "INT32", 7: "INT64", 8: "STRING", 9: "BOOL", 10: "FLOAT16", 11: "DOUBLE",
               12: "UINT32", 13: "UINT64", 14: "COMPLEX64", 15: "COMPLEX128", 16: "BFLOAT16",
               17: "FLOAT8E4M3FN", 18: "FLOAT8E4M3FNUZ", 19: "FLOAT8E5M2", 20: "FLOAT8E5M2FNUZ",
               21: "UINT4", 22: "INT4"}

F32 = ("float32",)
F32_I32 = ("float32", "int32")
ANY = ("float32", "float64", "int8", "uint8", "int16", "int32", "int64", "bool")
Q8 = ("int8", "uint8")


def _onnx() -> Any:
    try:
        import onnx
        import onnx.numpy_helper  # noqa: F401
    except ModuleNotFoundError as e:  # pragma: no cover - install hint
        raise ModuleNotFoundError("from_onnx needs the 'onnx' package (pip install onnx)") from e
    return onnx


def _prod(xs: Sequence[int]) -> int:
    n = 1
    for x in xs:
        n *= int(x)
    return n


# ---- reading the model -------------------------------------------------------

class _Graph:
    """The parts of a model this importer uses, read and checked once."""

    def __init__(self, model: Any, shape: Optional[Dict[str, Sequence[int]]],
                 values: Optional[Mapping[str, Any]] = None) -> None:
        onnx = _onnx()
        self.onnx = onnx
        self.model = model
        g = model.graph
        self.opset = None
        self.domains: Dict[str, int] = {}
        for o in model.opset_import:
            self.domains[o.domain] = int(o.version)
            if o.domain in ("", "ai.onnx"):
                self.opset = int(o.version)
        if self.opset is None:
            # before IR version 3 the default domain was implied
            self.opset = 1 if not model.opset_import else None
        self.nodes = list(g.node)
        if not g.output:
            raise ModelImportError("%s: the graph has no outputs" % WHO)
        self.values: Dict[str, np.ndarray] = {}
        for t in g.initializer:
            self.values[t.name] = self._tensor(t, "initializer")
        for t in g.sparse_initializer:
            raise UnsupportedOperatorError("%s: sparse initializer '%s' is not supported"
                                           % (WHO, t.values.name))
        # declared types: name -> (dtype or 'elem N', shape list with None for unknown)
        self.declared: Dict[str, Tuple[str, Optional[List[Optional[int]]]]] = {}
        for vi in list(g.input) + list(g.value_info) + list(g.output):
            self.declared[vi.name] = self._vtype(vi)
        self.inputs = [vi for vi in g.input if vi.name not in self.values]
        self._fix_values(values or {})
        self.outputs = list(g.output)
        # every operator type is checked before the shapes, so that a model
        # with dynamic inputs still names all that it lacks
        _check_operators(self)
        self.notes: List[str] = []
        self.input_shapes = self._input_shapes(shape)
        self.inferred = self._infer()
        # QDQ groups' folded Relu / Clip: the fused node's output -> its
        # quantized (lo, hi)
        self.qdq_clamps: Dict[str, Tuple[int, int]] = {}
        # outputs of the nodes that move a QDQ group's quantized tensor
        self.qdq_moved: Set[str] = set()

    def _fix_values(self, values: Mapping[str, Any]) -> None:
        """Inputs given a value (from_onnx's values=, --value) become
        constants of the input's declared element type and shape."""
        names = [vi.name for vi in self.inputs]
        for name, v in values.items():
            if name not in names:
                raise ModelImportError("%s: values names '%s', which is not an input of the "
                                       "model (inputs: %s)" % (WHO, name, ", ".join(
                                           "'%s'" % n for n in names) or "none"))
            dt, shp = self.declared[name]
            if dt not in _ELEM.values():
                raise UnsupportedOperatorError("%s: input '%s' has element type %s, which is not "
                                               "supported" % (WHO, name, dt))
            try:
                given = np.asarray(v)
                a = given.astype(dt)
                exact = given.dtype.kind in "biuf" and bool(np.all(a == given))
            except (TypeError, ValueError, OverflowError):
                exact = False
            if not exact:
                raise ModelImportError("%s: the value given for input '%s' must be numbers "
                                       "that %s holds exactly, got %r" % (WHO, name, dt, v))
            full = [int(d) for d in shp if d is not None] if shp is not None else []
            if shp is not None and None not in shp and a.size == _prod(full):
                a = a.reshape(full)
            elif shp is not None and (len(shp) != a.ndim or any(
                    d is not None and d != n for d, n in zip(shp, a.shape))):
                raise ModelImportError("%s: the value given for input '%s' has shape %s; the "
                                       "input is declared %s" % (WHO, name, list(a.shape),
                                                                 ["?" if d is None else d
                                                                  for d in shp]))
            self.values[name] = np.asarray(a, order="C")
            self.declared[name] = (dt, list(a.shape))
        self.inputs = [vi for vi in self.inputs if vi.name not in self.values]

    def _input_shapes(self, shape: Optional[Dict[str, Sequence[int]]]) -> Dict[str, List[int]]:
        """The shape of every input: the file's, `shape`'s override, or the
        file's with a dynamic leading (batch) dimension set to 1 (a note in
        self.notes and a DynamicShapeWarning). A dimension the file declares
        as 0 is a zero-size dimension, as ONNX defines it; a negative one
        is read as dynamic."""
        names = [vi.name for vi in self.inputs]
        given = dict(shape or {})
        for k in given:
            if k not in names:
                raise ModelImportError("%s: shape names '%s', which is not an input of the model "
                                       "(inputs: %s)" % (WHO, k, ", ".join(
                                           "'%s'" % n for n in names) or "none"))
        out: Dict[str, List[int]] = {}
        for vi in self.inputs:
            dt, shp = self.declared[vi.name]
            if dt not in _ELEM.values():
                raise UnsupportedOperatorError("%s: input '%s' has element type %s, which is not "
                                               "supported" % (WHO, vi.name, dt))
            if shp is not None:
                shp = [d if d is not None and d >= 0 else None for d in shp]
            label = _fmt_input_dims(vi, shp)
            if vi.name in given:
                out[vi.name] = _override(vi.name, given[vi.name], shp, label)
                continue
            dyn = [] if shp is None else [i for i, d in enumerate(shp) if d is None]
            if shp is None:
                raise ModelImportError("%s: input '%s' has no declared shape; give it with "
                                       "--shape %s=D0,D1,... (from_onnx's shape={'%s': [...]})"
                                       % (WHO, vi.name, vi.name, vi.name))
            if dyn == [0] and len(shp) >= 2:
                fixed = [1] + [int(d) for d in shp[1:] if d is not None]
                note = ("input '%s': dynamic batch dimension set to 1; use --shape %s=%s "
                        "(from_onnx's shape={'%s': %s}) for another batch"
                        % (vi.name, vi.name, ",".join(["B"] + [str(d) for d in fixed[1:]]),
                           vi.name, "[B, %s]" % ", ".join(str(d) for d in fixed[1:])))
                self.notes.append(note)
                warnings.warn("%s: %s" % (WHO, note), DynamicShapeWarning, stacklevel=4)
                out[vi.name] = fixed
            elif dyn:
                raise ModelImportError("%s: input '%s' has dynamic shape %s; give it with "
                                       "--shape %s=%s (from_onnx's shape={'%s': [...]})"
                                       % (WHO, vi.name, label, vi.name, ",".join(
                                           "D%d" % i if d is None else str(d)
                                           for i, d in enumerate(shp)), vi.name))
            else:
                out[vi.name] = [int(d) for d in shp if d is not None]
        for name, dims in out.items():
            # refused before onnx's shape inference, which loops over such a
            # tensor's elements (a declared [2^31] input kept it busy for
            # minutes); the kernels count elements in int32 anyway
            n = 1
            for d in dims:
                n *= max(int(d), 1)
            if n > _MAX_INPUT_ELEMENTS:
                raise ModelImportError("%s: input '%s' of shape %s has %d elements; the kernels "
                                       "take at most %d" % (WHO, name, dims, n,
                                                            _MAX_INPUT_ELEMENTS))
        return out

    def _tensor(self, t: Any, what: str) -> np.ndarray:
        name = t.name
        if t.data_location == 1:  # EXTERNAL
            raise UnsupportedOperatorError("%s: %s '%s' keeps its data in an external file, "
                                           "which is not supported" % (WHO, what, name))
        dt = _ELEM.get(t.data_type)
        dims = [int(d) for d in t.dims]
        if any(d < 0 for d in dims):
            raise ModelImportError("%s: %s '%s' has negative dimensions %s" % (WHO, what, name,
                                                                             dims))
        if dt is None:
            raise UnsupportedOperatorError("%s: %s '%s' has element type %s, which is not "
                                           "supported" % (WHO, what, name,
                                                          _ELEM_NAMES.get(t.data_type,
                                                                          t.data_type)))
        if t.HasField("raw_data"):
            need = _prod(dims) * np.dtype(dt).itemsize
            if len(t.raw_data) != need:
                raise ModelImportError("%s: %s '%s' of shape %s %s needs %d bytes, its data has "
                                       "%d" % (WHO, what, name, dims, dt, need, len(t.raw_data)))
        try:
            a = self.onnx.numpy_helper.to_array(t)
        except Exception as e:
            raise ModelImportError("%s: %s '%s' of shape %s %s cannot be read (%s: %s)"
                                   % (WHO, what, name, dims, dt, type(e).__name__, e)) from None
        if list(a.shape) != dims:
            raise ModelImportError("%s: %s '%s' has %d values for shape %s"
                                   % (WHO, what, name, a.size, dims))
        # np.asarray keeps a 0-d value 0-d (np.ascontiguousarray makes it 1-d)
        return np.asarray(a.astype(np.dtype(dt), copy=False), order="C")

    @staticmethod
    def _vtype(vi: Any) -> Tuple[str, Optional[List[Optional[int]]]]:
        tt = vi.type.tensor_type if vi.type.HasField("tensor_type") else None
        if tt is None:
            return "non-tensor", None
        dt = _ELEM.get(tt.elem_type, _ELEM_NAMES.get(tt.elem_type, "elem %d" % tt.elem_type))
        if not tt.HasField("shape"):
            return dt, None
        shp: List[Optional[int]] = []
        for d in tt.shape.dim:
            shp.append(int(d.dim_value) if d.HasField("dim_value") and d.dim_value >= 0 else None)
        return dt, shp

    def _infer(self) -> Dict[str, Tuple[str, Optional[List[Optional[int]]]]]:
        """Element types (and shapes) of every tensor ONNX's shape inference
        can give, for the first pass; empty when inference fails."""
        out: Dict[str, Tuple[str, Optional[List[Optional[int]]]]] = dict(self.declared)
        try:
            m = self.onnx.ModelProto()
            m.CopyFrom(self.model)
            for vi in m.graph.input:
                fixed = self.input_shapes.get(vi.name)
                if fixed is not None and vi.type.HasField("tensor_type"):
                    dims = vi.type.tensor_type.shape.dim
                    del dims[:]
                    for d in fixed:
                        dims.add().dim_value = d
            for vi in m.graph.input:
                if vi.name in self.input_shapes:
                    out[vi.name] = (self.declared[vi.name][0], list(self.input_shapes[vi.name]))
            # data_prop: shapes computed from shapes (Shape -> Gather ->
            # Concat -> Reshape) are propagated too
            m = self.onnx.shape_inference.infer_shapes(m, data_prop=True)
            for vi in list(m.graph.value_info) + list(m.graph.output):
                dt, shp = self._vtype(vi)
                old = out.get(vi.name)
                known = shp is not None and all(d is not None for d in shp)
                if old is None or (known and (old[1] is None or None in old[1])):
                    out[vi.name] = (dt, shp)
        except Exception:
            pass
        for k, v in self.values.items():
            out[k] = (str(v.dtype), list(v.shape))
        return out


# com.microsoft operators typed as the standard operator over some of their
# inputs: (operator, the inputs it reads, attributes kept)
_MS_AS_STANDARD: Dict[str, Tuple[str, Sequence[int], Sequence[str]]] = {
    "QLinearAdd": ("Add", (0, 3), ()),
    "QLinearMul": ("Mul", (0, 3), ()),
    "QLinearSigmoid": ("Identity", (0,), ()),
    "QLinearLeakyRelu": ("Identity", (0,), ()),
    "QLinearSoftmax": ("Identity", (0,), ()),
    "QLinearAveragePool": ("AveragePool", (0,), ("auto_pad", "ceil_mode", "kernel_shape",
                                                  "pads", "strides")),
    "QGemm": ("Gemm", (0, 3), ("transA", "transB")),
}


_ELEM_CODES = {v: k for k, v in _ELEM.items()}  # dtype name -> ONNX element type


def _attr_of(node: Any, name: str, default: Any) -> Any:
    for a in node.attribute:
        if a.name == name:
            return _onnx().helper.get_attribute_value(a)
    return default


def _known(t: Optional[Tuple[str, Optional[List[Optional[int]]]]]) -> bool:
    return t is not None and t[1] is not None and None not in t[1]


def _refine_types(g: "_Graph", node: Any) -> None:
    """Types for a node's outputs that ONNX's whole-model shape inference
    left unknown (after a com.microsoft operator, or a shape computed by a
    chain data propagation does not follow), from its inputs' types and the
    values folded so far, by ONNX's inference of that one node. Nothing
    changes where that inference fails: the node's check then reports what
    it cannot size."""
    outs = [o for o in node.output if o]
    if not outs or all(_known(g.inferred.get(o)) for o in outs):
        return
    onnx = g.onnx
    helper = onnx.helper
    proxy, dt = node, None
    if node.domain == _MS_DOMAIN:
        spec = _MS_AS_STANDARD.get(node.op_type)
        if node.op_type == "QLinearGlobalAveragePool" and not int(_attr_of(node, "channels_last",
                                                                          0)):
            spec = ("GlobalAveragePool", (0,), ())
        elif node.op_type == "QLinearConcat":
            spec = ("Concat", tuple(range(2, len(node.input), 3)), ("axis",))
        if spec is None:
            return
        op, idx, keep = spec
        if any(i >= len(node.input) or not node.input[i] for i in idx):
            return
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute if a.name in keep}
        proxy = helper.make_node(op, [node.input[i] for i in idx], outs[:1], **attrs)
        # the output is of the type of its zero point, or of the input's
        ins = list(node.input)
        zp = {"QLinearConcat": 1, "QGemm": 8}.get(node.op_type, len(ins) - 1)
        if node.op_type == "QGemm" and (len(ins) < 8 or not ins[7]):
            dt = "float32"  # no output scale: a float result
        elif zp < len(ins) and ins[zp] and g.inferred.get(ins[zp]):
            dt = g.inferred[ins[zp]][0]
        else:
            dt = (g.inferred.get(ins[idx[0]]) or (None,))[0]
    elif node.domain not in ("", "ai.onnx"):
        return
    elem = _ELEM_CODES
    try:
        schema = onnx.defs.get_schema(proxy.op_type, g.opset or MAX_OPSET, "")
        types, data = {}, {}
        for name in proxy.input:
            if not name:
                continue
            t = g.inferred.get(name)
            if t is None or t[0] not in elem:
                return
            # a standard stand-in is typed in float32, which it accepts
            types[name] = helper.make_tensor_type_proto(1 if proxy is not node else elem[t[0]],
                                                        t[1])
            v = g.values.get(name)
            if v is not None and v.size <= 1024:
                data[name] = onnx.numpy_helper.from_array(np.asarray(v), name)
        res = onnx.shape_inference.infer_node_outputs(
            schema, proxy, types, data, opset_imports=[helper.make_opsetid("", g.opset or
                                                                           MAX_OPSET)])
    except Exception:
        return
    for name, tp in res.items():
        vi = helper.make_value_info(name, tp)
        t_dt, shp = _Graph._vtype(vi)
        if shp is not None and None not in shp and not _known(g.inferred.get(name)):
            g.inferred[name] = (dt or t_dt, shp)


def _fmt_input_dims(vi: Any, shp: Optional[Sequence[Optional[int]]]) -> str:
    """An input's declared shape with its dynamic dimensions by name
    ("[batch, 3, ?, ?]")."""
    if shp is None:
        return "(unknown)"
    dims = list(vi.type.tensor_type.shape.dim)
    return "[%s]" % ", ".join(
        str(d) if d is not None else (dims[i].dim_param if i < len(dims) and dims[i].dim_param
                                      else "?") for i, d in enumerate(shp))


def _override(name: str, value: Any, shp: Optional[Sequence[Optional[int]]],
              label: str) -> List[int]:
    """A shape given for input `name`, checked against its declared shape."""
    try:
        fixed = [int(d) for d in value]
        if any(int(d) != d for d in value):
            raise ValueError
    except (TypeError, ValueError):
        raise ModelImportError("%s: the shape given for input '%s' must be a list of integers, "
                               "got %r" % (WHO, name, value)) from None
    bad = [i for i, d in enumerate(fixed) if d <= 0]
    if bad:
        raise ModelImportError("%s: shape %s given for input '%s' has dimension %d = %d; "
                               "dimensions must be positive" % (WHO, fixed, name, bad[0],
                                                               fixed[bad[0]]))
    if shp is not None and len(fixed) != len(shp):
        raise ModelImportError("%s: shape %s given for input '%s' has rank %d, the input's "
                               "declared shape %s has rank %d" % (WHO, fixed, name, len(fixed),
                                                                  label, len(shp)))
    for i, (d, f) in enumerate(zip(shp or [], fixed)):
        if d is not None and d != f:
            raise ModelImportError("%s: shape %s given for input '%s' does not fit its declared "
                                   "shape %s: dimension %d is fixed to %d" % (
                                       WHO, fixed, name, label, i, d))
    return fixed


def _with_branches(nodes: Sequence[Any], top: int = -1) -> Iterator[Tuple[int, Any]]:
    """(index, node) for the nodes and, after each If, the nodes of both its
    branches (indexed by the If's position)."""
    for k, node in enumerate(nodes):
        yield (k if top < 0 else top), node
        if node.op_type == "If" and node.domain in ("", "ai.onnx"):
            for a in node.attribute:
                if a.name in ("then_branch", "else_branch") and a.HasField("g"):
                    yield from _with_branches(list(a.g.node), k if top < 0 else top)


def _check_operators(g: _Graph) -> None:
    """Every operator type the model uses that the importer cannot map, all
    at once, each with the nodes that use it (by name, or #index for a
    node without one): an UnsupportedOperatorError whose `missing` lists
    them as {"operator", "count", "first", "output", "nodes"}."""
    missing: Dict[str, Dict[str, Any]] = {}
    for k, node in _with_branches(g.nodes):
        if _spec(node) is not None:
            continue
        if node.domain in ("", "ai.onnx"):
            name = node.op_type
        else:
            name = "%s.%s" % (node.domain, node.op_type)
        label = node.name or "#%d" % k
        m = missing.get(name)
        if m is None:
            missing[name] = {"operator": name, "count": 1, "first": k,
                             "output": node.output[0] if node.output else "?", "nodes": [label]}
        else:
            m["count"] += 1
            m["nodes"].append(label)
    if not missing:
        return

    def nodes(m: Dict[str, Any]) -> str:
        shown = m["nodes"][:8]
        more = " and %d more" % (m["count"] - len(shown)) if m["count"] > len(shown) else ""
        return "%s: %s%s" % ("node" if m["count"] == 1 else "nodes", ", ".join(shown), more)

    listed = ", ".join("%s (%s)" % (m["operator"], nodes(m)) for m in missing.values())
    raise missing_operators(WHO, list(missing.values()), listed, supported_operators())


# ---- one node ------------------------------------------------------------------

class _Ctx:
    """One node being checked (imp.building False) or converted."""

    def __init__(self, imp: "_Importer", k: int, node: Any) -> None:
        self.imp, self.k, self.node = imp, k, node
        self.op = node.op_type
        self.opset = imp.g.opset or 0
        self.ins = list(node.input)
        self.outs = list(node.output)
        self.attrs: Dict[str, Any] = {}
        for a in node.attribute:
            self.attrs[a.name] = a

    # errors
    def _where(self) -> str:
        return "%s: node %d '%s' (%s)" % (WHO, self.k, self.node.name, self.op)

    def error(self, msg: str) -> ModelImportError:
        return ModelImportError("%s: %s" % (self._where(), msg))

    def unsupported(self, msg: str) -> UnsupportedOperatorError:
        return UnsupportedOperatorError("%s: %s" % (self._where(), msg))

    # attributes
    def attr(self, name: str, default: Any = None) -> Any:
        a = self.attrs.get(name)
        if a is None:
            return default
        helper = self.imp.g.onnx.helper
        v = helper.get_attribute_value(a)
        if isinstance(v, bytes):
            v = v.decode("utf-8", "replace")
        if isinstance(v, list):
            v = [x.decode("utf-8", "replace") if isinstance(x, bytes) else x for x in v]
        return v

    def ints(self, name: str, default: Optional[List[int]] = None) -> Optional[List[int]]:
        v = self.attr(name)
        return default if v is None else [int(x) for x in v]

    def only(self, name: str, allowed: Sequence[Any], default: Any) -> Any:
        v = self.attr(name, default)
        if v not in allowed:
            raise self.unsupported("attribute %s=%r is not supported (%s)"
                                   % (name, v, " or ".join(repr(a) for a in allowed)))
        return v

    # inputs
    def has(self, n: int) -> bool:
        return n < len(self.ins) and self.ins[n] != ""

    def need(self, n: int, what: str) -> str:
        if not self.has(n):
            raise self.error("input %d (%s) is missing" % (n, what))
        return self.ins[n]

    def is_const(self, n: int) -> bool:
        return self.has(n) and self.ins[n] in self.imp.g.values

    def value(self, n: int, what: str) -> np.ndarray:
        """Input n's constant value; unsupported when it is computed."""
        name = self.need(n, what)
        v = self.imp.g.values.get(name)
        if v is None:
            raise self.unsupported("%s (input %d '%s') must be a constant" % (what, n, name))
        return v

    def dtype(self, n: int) -> Optional[str]:
        """Element type of input n (inferred when checking; None if unknown)."""
        if not self.has(n):
            return None
        if self.imp.building:
            return str(self.expr(n).checked_type.dtype)
        t = self.imp.g.inferred.get(self.ins[n])
        return t[0] if t else None

    def rank(self, n: int) -> Optional[int]:
        if self.imp.building:
            return len(self.shape(n))
        t = self.imp.g.inferred.get(self.ins[n]) if self.has(n) else None
        return len(t[1]) if t and t[1] is not None else None

    def out_dtype(self, n: int = 0) -> Optional[str]:
        t = self.imp.g.inferred.get(self.outs[n]) if n < len(self.outs) else None
        return t[0] if t else None

    def dtypes(self, allowed: Sequence[str], *inputs: int) -> None:
        for n in inputs or range(len(self.ins)):
            d = self.dtype(n)
            if d is not None and d not in allowed:
                raise self.unsupported("input %d '%s' of element type %s is not supported (%s)"
                                       % (n, self.ins[n], d, ", ".join(allowed)))

    def expr(self, n: int) -> ir.Expr:
        return self.imp.expr(self.need(n, "input %d" % n))

    def shape(self, n: int) -> List[int]:
        return [int(d) for d in self.expr(n).checked_type.shape]

    def used_outputs(self) -> List[int]:
        """Indices of this node's outputs that something reads."""
        used = self.imp.consumed
        return [i for i, o in enumerate(self.outs) if o and o in used]

    def single_output(self) -> None:
        extra = [i for i in self.used_outputs() if i > 0]
        if extra:
            raise self.unsupported("output %d '%s' is not supported (only the first output)"
                                   % (extra[0], self.outs[extra[0]]))


def _norm_axis(ctx: _Ctx, axis: int, rank: int) -> int:
    if not -rank <= axis < max(rank, 1):
        raise ctx.error("axis %d is out of range for rank %d" % (axis, rank))
    return axis % rank if rank else 0


def _op_exists(name: str) -> bool:
    """Whether operator `name` is registered and can run (has a kernel or a
    host compute function): `mean` and `strided_slice` are newer than this
    importer."""
    try:
        o = ir.Op.get(name)
        return o.get_attr("kernel") is not None or o.get_attr("compute") is not None
    except Exception:
        return False


# ---- padding ---------------------------------------------------------------------

def _auto_pad(ctx: _Ctx, in_hw: Sequence[int], k: Sequence[int], s: Sequence[int],
              d: Sequence[int]) -> List[int]:
    """[top, left, bottom, right] from auto_pad or pads."""
    mode = ctx.attr("auto_pad", "NOTSET")
    if mode == "NOTSET":
        pads = ctx.ints("pads", [0, 0, 0, 0])
        assert pads is not None
        return [pads[0], pads[1], pads[2], pads[3]]
    if mode == "VALID":
        return [0, 0, 0, 0]
    begin, end = [], []
    for i in range(2):
        eff = (k[i] - 1) * d[i] + 1
        out = -(-in_hw[i] // s[i])
        total = max((out - 1) * s[i] + eff - in_hw[i], 0)
        small, big = total // 2, total - total // 2
        if mode == "SAME_UPPER":
            begin.append(small)
            end.append(big)
        else:
            begin.append(big)
            end.append(small)
    return [begin[0], begin[1], end[0], end[1]]


def _check_window(ctx: _Ctx, with_dilation: bool = True) -> None:
    ctx.only("auto_pad", ("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"), "NOTSET")
    r = ctx.rank(0)
    if r is not None and r != 4:
        raise ctx.unsupported("%d-d input is not supported (2-d windows on NCHW only)" % r)
    for name, n in (("kernel_shape", 2), ("strides", 2), ("dilations", 2), ("pads", 4)):
        v = ctx.ints(name)
        if v is not None and len(v) != n:
            raise ctx.unsupported("attribute %s=%s is not supported (2-d windows only)"
                                  % (name, v))
    d = ctx.ints("dilations")
    if not with_dilation and d is not None and any(x != 1 for x in d):
        raise ctx.unsupported("attribute dilations=%s is not supported (1 only)" % d)
    p = ctx.ints("pads")
    if p is not None and any(x < 0 for x in p):
        raise ctx.unsupported("negative pads %s are not supported" % p)


# ---- checks (first pass) and converters ---------------------------------------

def _chk_conv(ctx: _Ctx) -> None:
    _check_window(ctx)
    ctx.dtypes(F32)
    if not ctx.is_const(1) and ctx.rank(1) not in (None, 4):
        raise ctx.unsupported("the weight must be 4-d")


def _conv(ctx: _Ctx) -> ir.Expr:
    x = ctx.shape(0)
    w = ctx.shape(1)
    if len(x) != 4 or len(w) != 4:
        raise ctx.unsupported("expects 4-d NCHW data and OIHW weight, got %s and %s" % (x, w))
    k = ctx.ints("kernel_shape") or w[2:]
    if list(k) != w[2:]:
        raise ctx.error("kernel_shape %s does not match the weight %s" % (k, w))
    s = ctx.ints("strides", [1, 1]) or [1, 1]
    d = ctx.ints("dilations", [1, 1]) or [1, 1]
    group = int(ctx.attr("group", 1))
    pad = _auto_pad(ctx, x[2:], k, s, d)
    y = call("nn.conv2d", ctx.expr(0), ctx.expr(1), strides=s, padding=pad, dilation=d,
             groups=group, channels=w[0], kernel_size=k)
    if ctx.has(2):
        y = call("nn.bias_add", y, ctx.expr(2), axis=1)
    return y


def _chk_gemm(ctx: _Ctx) -> None:
    ctx.dtypes(F32)


def _gemm(ctx: _Ctx) -> ir.Expr:
    ta, tb = bool(ctx.attr("transA", 0)), bool(ctx.attr("transB", 0))
    alpha, beta = float(ctx.attr("alpha", 1.0)), float(ctx.attr("beta", 1.0))
    a, b = ctx.expr(0), ctx.expr(1)
    if len(ctx.shape(0)) != 2 or len(ctx.shape(1)) != 2:
        raise ctx.error("A and B must be 2-d, got %s and %s" % (ctx.shape(0), ctx.shape(1)))
    if tb and not ta:
        y = call("nn.dense", a, b, units=ctx.shape(1)[0])
    else:
        y = call("matmul", a, b, transpose_a=ta, transpose_b=tb)
    if alpha != 1.0:
        y = call("multiply", y, scalar(alpha, "float32"))
    if ctx.has(2) and beta != 0.0:
        if ctx.is_const(2):
            cv = ctx.value(2, "C").astype(np.float32) * np.float32(beta)
            y = call("add", y, ir.const(cv.astype(np.float32)))
        else:
            c = ctx.expr(2)
            if beta != 1.0:
                c = call("multiply", c, scalar(beta, "float32"))
            y = call("add", y, c)
    return y


def _chk_matmul(ctx: _Ctx) -> None:
    ctx.dtypes(F32)
    t = ctx.imp.g.inferred.get(ctx.ins[1]) if ctx.has(1) else None
    if t and t[1] is not None and len(t[1]) > 2 and _prod([d or 2 for d in t[1][:-2]]) > 1 \
            and not _op_exists("strided_slice"):
        raise ctx.unsupported("a batched right operand needs 'strided_slice', which this build "
                              "cannot run")


def _matmul(ctx: _Ctx) -> ir.Expr:
    sa, sb = ctx.shape(0), ctx.shape(1)
    a, b = ctx.expr(0), ctx.expr(1)
    if not sa or not sb:
        raise ctx.error("MatMul of a scalar")
    a2 = [1] + sa if len(sa) == 1 else sa
    b2 = sb + [1] if len(sb) == 1 else sb
    if len(sa) == 1:
        a = call("reshape", a, newshape=a2)
    if len(sb) == 1:
        b = call("reshape", b, newshape=b2)
    ba, bb = a2[:-2], b2[:-2]
    try:
        batch = list(np.broadcast_shapes(tuple(ba), tuple(bb)))
    except ValueError:
        raise ctx.error("batch dimensions %s and %s do not broadcast" % (ba, bb)) from None
    m, kk, n = a2[-2], a2[-1], b2[-1]
    if _prod(bb) == 1:
        if len(bb):
            b = call("reshape", b, newshape=b2[-2:])
        y = call("matmul", a, b)
    else:
        nb = _prod(batch)
        if nb > 64:
            raise ctx.unsupported("a batched right operand of %d matrices is not supported" % nb)
        # the IR's matmul takes a 2-d right operand: one product per matrix
        if list(ba) != batch:
            raise ctx.unsupported("a left operand %s broadcast over the batch of %s is not "
                                  "supported" % (sa, sb))
        a3 = call("reshape", a, newshape=[nb, m, kk])
        bfull = b if list(bb) == batch else None
        if bfull is None:
            raise ctx.unsupported("a right operand %s broadcast over the batch of %s is not "
                                  "supported" % (sb, sa))
        b3 = call("reshape", b, newshape=[nb, kk, n])
        parts = []
        for i in range(nb):
            ai = call("reshape", call("strided_slice", a3, begin=[i], end=[i + 1]),
                      newshape=[m, kk])
            bi = call("reshape", call("strided_slice", b3, begin=[i], end=[i + 1]),
                      newshape=[kk, n])
            parts.append(call("reshape", call("matmul", ai, bi), newshape=[1, m, n]))
        y = parts[0] if nb == 1 else call("concatenate", ir.Tuple(parts), axis=0)
    want = batch + ([m] if len(sa) > 1 else []) + ([n] if len(sb) > 1 else [])
    if [int(d) for d in y.checked_type.shape] != want:
        y = call("reshape", y, newshape=want)
    return y


def _chk_binary(allowed: Sequence[str]) -> Callable[[_Ctx], None]:
    def chk(ctx: _Ctx) -> None:
        ctx.dtypes(allowed)
    return chk


def _binary(kind: str) -> Callable[[_Ctx], ir.Expr]:
    return lambda ctx: call(kind, ctx.expr(0), ctx.expr(1))


def _chk_variadic(allowed: Sequence[str]) -> Callable[[_Ctx], None]:
    def chk(ctx: _Ctx) -> None:
        if not any(ctx.has(i) for i in range(len(ctx.ins))):
            raise ctx.error("needs at least one input")
        ctx.dtypes(allowed)
    return chk


def _variadic(kind: str) -> Callable[[_Ctx], ir.Expr]:
    def conv(ctx: _Ctx) -> ir.Expr:
        xs = [ctx.expr(i) for i in range(len(ctx.ins)) if ctx.has(i)]
        y = xs[0]
        for x in xs[1:]:
            y = call(kind, y, x)
        return y
    return conv


def _unary(kind: str) -> Callable[[_Ctx], ir.Expr]:
    return lambda ctx: call(kind, ctx.expr(0))


def _chk_clip(ctx: _Ctx) -> None:
    x = ctx.dtype(0)
    if x in ("int8", "int32"):  # the clip kernel's integer forms: constant bounds only
        for i in (1, 2):
            if ctx.has(i):
                ctx.value(i, "the bound of an integer clip")
        return
    ctx.dtypes(F32)


def _clip(ctx: _Ctx) -> ir.Expr:
    x = ctx.expr(0)
    if ctx.opset < 11:
        lo = float(ctx.attr("min", -np.inf))
        hi = float(ctx.attr("max", np.inf))
        return call("clip", x, a_min=lo, a_max=hi)
    bounds: List[Optional[float]] = [None, None]
    dynamic = False
    for i in (1, 2):
        if ctx.has(i):
            if ctx.is_const(i):
                v = ctx.value(i, "the bound").reshape(-1)
                if v.size != 1:
                    raise ctx.error("input %d must be a scalar, it has %d values" % (i, v.size))
                bounds[i - 1] = float(v[0])
            else:
                dynamic = True
    if not dynamic:
        lo = -np.inf if bounds[0] is None else bounds[0]
        hi = np.inf if bounds[1] is None else bounds[1]
        # min(max(x, lo), hi): everything is hi when lo > hi
        return call("clip", x, a_min=min(lo, hi), a_max=hi)
    # computed bounds: min(max(x, lo), hi), as the operator defines it
    if ctx.has(1):
        x = call("maximum", x, ctx.expr(1))
    if ctx.has(2):
        x = call("minimum", x, ctx.expr(2))
    return x


def _chk_softmax(ctx: _Ctx) -> None:
    ctx.dtypes(F32)


def _softmax(ctx: _Ctx) -> ir.Expr:
    shp = ctx.shape(0)
    r = len(shp)
    if ctx.opset >= 13:
        return call("nn.softmax", ctx.expr(0), axis=_norm_axis(ctx, int(ctx.attr("axis", -1)), r))
    # before opset 13: the input is coerced to 2-d at axis, softmax over the rest
    axis = _norm_axis(ctx, int(ctx.attr("axis", 1)), r) if r else 0
    if axis == r - 1 or r <= 1:
        return call("nn.softmax", ctx.expr(0), axis=-1)
    flat = call("reshape", ctx.expr(0), newshape=[_prod(shp[:axis]), _prod(shp[axis:])])
    return call("reshape", call("nn.softmax", flat, axis=-1), newshape=shp)


def _chk_pool(ctx: _Ctx) -> None:
    _check_window(ctx, with_dilation=False)
    ctx.single_output()
    ctx.only("storage_order", (0,), 0)
    moved = ("uint8",) if ctx.outs and ctx.outs[0] in ctx.imp.g.qdq_moved else ()
    ctx.dtypes(("float32", "int8") + moved if ctx.op == "MaxPool" else F32)


def _pool(kind: str) -> Callable[[_Ctx], ir.Expr]:
    def conv(ctx: _Ctx) -> ir.Expr:
        x = ctx.shape(0)
        if len(x) != 4:
            raise ctx.unsupported("%d-d input is not supported (NCHW only)" % len(x))
        k = ctx.ints("kernel_shape")
        if k is None:
            raise ctx.error("attribute kernel_shape is missing")
        s = ctx.ints("strides", [1, 1]) or [1, 1]
        pad = _auto_pad(ctx, x[2:], k, s, [1, 1])
        attrs: Dict[str, Any] = dict(pool_size=k, strides=s, padding=pad, layout="NCHW",
                                     ceil_mode=bool(ctx.attr("ceil_mode", 0)))
        if kind == "avg_pool2d":
            attrs["count_include_pad"] = bool(ctx.attr("count_include_pad", 0))
        return call("nn." + kind, ctx.expr(0), **attrs)
    return conv


def _chk_gap(ctx: _Ctx) -> None:
    ctx.dtypes(F32)
    r = ctx.rank(0)
    if r is not None and r != 4 and not _op_exists("mean"):
        raise ctx.unsupported("%d-d input is not supported (NCHW only)" % r)


def _gap(ctx: _Ctx) -> ir.Expr:
    r = len(ctx.shape(0))
    if r == 4:
        return call("nn.global_avg_pool2d", ctx.expr(0), layout="NCHW")
    if r < 3:
        raise ctx.error("expects at least 3 dimensions, got %d" % r)
    return call("mean", ctx.expr(0), axis=list(range(2, r)), keepdims=True)


def _chk_reshape(ctx: _Ctx) -> None:
    v = ctx.value(1, "the shape")
    if int(ctx.attr("allowzero", 0)) and np.any(v == 0):
        raise ctx.unsupported("allowzero=1 with a 0 in the shape is not supported")


def _reshape(ctx: _Ctx) -> ir.Expr:
    shp = ctx.shape(0)
    want = [int(d) for d in ctx.value(1, "the shape").reshape(-1)]
    out = []
    for i, d in enumerate(want):
        if d == 0:
            if i >= len(shp):
                raise ctx.error("shape %s copies dimension %d of %s" % (want, i, shp))
            out.append(shp[i])
        else:
            out.append(d)
    if out.count(-1) > 1 or any(d < -1 for d in out):
        raise ctx.error("shape %s is not valid" % want)
    if -1 in out:
        known = _prod([d for d in out if d != -1])
        total = _prod(shp)
        if known == 0 or total % known:
            raise ctx.error("shape %s does not fit %s" % (want, shp))
        out[out.index(-1)] = total // known
    if _prod(out) != _prod(shp):
        raise ctx.error("shape %s does not fit %s" % (want, shp))
    return call("reshape", ctx.expr(0), newshape=out)


def _flatten(ctx: _Ctx) -> ir.Expr:
    shp = ctx.shape(0)
    r = len(shp)
    axis = int(ctx.attr("axis", 1))
    if not -r <= axis <= r:
        raise ctx.error("axis %d is out of range for rank %d" % (axis, r))
    if axis < 0:
        axis += r
    return call("reshape", ctx.expr(0), newshape=[_prod(shp[:axis]), _prod(shp[axis:])])


def _transpose(ctx: _Ctx) -> ir.Expr:
    perm = ctx.ints("perm")
    r = len(ctx.shape(0))
    if perm is None:
        perm = list(range(r))[::-1]
    return call("transpose", ctx.expr(0), axes=[_norm_axis(ctx, p, r) for p in perm])


def _concat(ctx: _Ctx) -> ir.Expr:
    xs = [ctx.expr(i) for i in range(len(ctx.ins)) if ctx.has(i)]
    axis = ctx.attr("axis")
    if axis is None:
        raise ctx.error("attribute axis is missing")
    r = len(xs[0].checked_type.shape)
    return call("concatenate", ir.Tuple(xs), axis=_norm_axis(ctx, int(axis), r))


def _axes(ctx: _Ctx, since: int) -> Optional[List[int]]:
    """Axes from the attribute (before opset `since`) or input 1."""
    if ctx.opset < since:
        return ctx.ints("axes")
    if ctx.has(1):
        return [int(a) for a in ctx.value(1, "the axes").reshape(-1)]
    return None


def _chk_axes(since: int, allowed: Sequence[str] = ANY) -> Callable[[_Ctx], None]:
    def chk(ctx: _Ctx) -> None:
        _axes(ctx, since)
        ctx.dtypes(allowed, 0)
    return chk


def _squeeze(ctx: _Ctx) -> ir.Expr:
    shp = ctx.shape(0)
    axes = _axes(ctx, 13)
    if axes is None:
        return call("squeeze", ctx.expr(0))
    ax = sorted({_norm_axis(ctx, a, len(shp)) for a in axes})
    for a in ax:
        if shp[a] != 1:
            raise ctx.error("axis %d has extent %d, not 1" % (a, shp[a]))
    return call("squeeze", ctx.expr(0), axis=ax)


def _unsqueeze(ctx: _Ctx) -> ir.Expr:
    shp = ctx.shape(0)
    axes = _axes(ctx, 13)
    if not axes:
        raise ctx.error("needs axes")
    r = len(shp) + len(axes)
    ax = sorted({_norm_axis(ctx, a, r) for a in axes})
    if len(ax) != len(axes):
        raise ctx.error("axes %s repeat an axis" % axes)
    out = []
    it = iter(shp)
    for i in range(r):
        out.append(1 if i in ax else next(it))
    if len(ax) == 1:
        return call("expand_dims", ctx.expr(0), axis=ax[0])
    return call("reshape", ctx.expr(0), newshape=out)


def _chk_pad(ctx: _Ctx) -> None:
    ctx.only("mode", ("constant",), "constant")
    if ctx.opset >= 11:
        p = ctx.value(1, "the pads")
        if ctx.has(2):
            ctx.value(2, "the constant value")
        if ctx.has(3):
            ctx.value(3, "the axes")
    else:
        p = np.array(ctx.ints("pads", []))
    if np.any(p < 0):
        raise ctx.unsupported("negative pads %s are not supported" % list(p))
    ctx.dtypes(("float32", "int32", "int8"), 0)


def _pad(ctx: _Ctx) -> ir.Expr:
    r = len(ctx.shape(0))
    value = 0.0
    if ctx.opset >= 11:
        pads = [int(v) for v in ctx.value(1, "the pads").reshape(-1)]
        if ctx.has(2):
            cv = ctx.value(2, "the constant value").reshape(-1)
            if cv.size != 1:
                raise ctx.error("the constant value must be a scalar")
            value = float(cv[0])
        axes = ([int(a) for a in ctx.value(3, "the axes").reshape(-1)] if ctx.has(3)
                else list(range(r)))
    else:
        pads = ctx.ints("pads", []) or []
        value = float(ctx.attr("value", 0.0))
        axes = list(range(r))
    if len(pads) != 2 * len(axes):
        raise ctx.error("%d pads for %d axes" % (len(pads), len(axes)))
    width = [[0, 0] for _ in range(r)]
    for i, a in enumerate(axes):
        a = _norm_axis(ctx, a, r)
        width[a] = [pads[i], pads[i + len(axes)]]
    return call("nn.pad", ctx.expr(0), pad_width=width, pad_value=value)


def _chk_cast(ctx: _Ctx) -> None:
    to = int(ctx.attr("to", 0))
    if to not in _ELEM:
        raise ctx.unsupported("cast to %s is not supported" % _ELEM_NAMES.get(to, to))
    ctx.dtypes(ANY, 0)


def _cast(ctx: _Ctx) -> ir.Expr:
    to = _ELEM[int(ctx.attr("to"))]
    if ctx.dtype(0) == to:
        return ctx.expr(0)
    return call("cast", ctx.expr(0), dtype=to)


def _chk_dropout(ctx: _Ctx) -> None:
    ctx.single_output()
    if ctx.opset >= 12 and ctx.has(2):
        t = ctx.value(2, "training_mode").reshape(-1)
        if t.size and bool(t[0]):
            raise ctx.unsupported("training_mode=True is not supported (inference only)")
    if ctx.attr("is_test") == 0 and ctx.opset < 7:
        raise ctx.unsupported("is_test=0 is not supported (inference only)")


def _identity(ctx: _Ctx) -> ir.Expr:
    return ctx.expr(0)


def _chk_bn(ctx: _Ctx) -> None:
    ctx.only("training_mode", (0,), 0)
    ctx.single_output()
    for i, what in ((1, "scale"), (2, "bias"), (3, "mean"), (4, "var")):
        ctx.value(i, what)
    ctx.dtypes(F32, 0)


def _batch_norm(ctx: _Ctx) -> ir.Expr:
    shp = ctx.shape(0)
    if len(shp) < 2:
        raise ctx.error("expects at least 2 dimensions, got %s" % shp)
    c = shp[1]
    vals = []
    for i, what in ((1, "scale"), (2, "bias"), (3, "mean"), (4, "var")):
        v = ctx.value(i, what).astype(np.float64).reshape(-1)
        if v.size != c:
            raise ctx.error("%s has %d values for %d channels" % (what, v.size, c))
        vals.append(v)
    scale, bias, mean, var = vals
    eps = float(ctx.attr("epsilon", 1e-5))
    mul = scale / np.sqrt(var + np.float64(np.float32(eps)))
    add = bias - mean * mul
    bshape = [c] + [1] * (len(shp) - 2)
    y = call("multiply", ctx.expr(0), ir.const(mul.astype(np.float32).reshape(bshape)))
    return call("add", y, ir.const(add.astype(np.float32).reshape(bshape)))


def _chk_reduce_mean(ctx: _Ctx) -> None:
    x = ctx.dtype(0)
    if x not in (None, "float32"):
        raise ctx.unsupported("input of element type %s is not supported (float32)" % x)
    if not _op_exists("mean"):
        raise ctx.unsupported("the IR's 'mean' operator is missing or cannot run in this build")
    _axes(ctx, 18)


def _reduce_mean(ctx: _Ctx) -> ir.Expr:
    r = len(ctx.shape(0))
    axes = _axes(ctx, 18)
    keep = bool(ctx.attr("keepdims", 1))
    if not axes:
        if ctx.opset >= 18 and int(ctx.attr("noop_with_empty_axes", 0)):
            return ctx.expr(0)
        ax = list(range(r))
    else:
        ax = sorted({_norm_axis(ctx, a, r) for a in axes})
    return call("mean", ctx.expr(0), axis=ax, keepdims=keep)


def _chk_slice(ctx: _Ctx) -> None:
    if not _op_exists("strided_slice"):
        raise ctx.unsupported("the IR's 'strided_slice' operator is missing or cannot run in "
                              "this build")
    for i, what in ((1, "starts"), (2, "ends"), (3, "axes"), (4, "steps")):
        if ctx.has(i):
            ctx.value(i, what)


def _slice(ctx: _Ctx) -> ir.Expr:
    r = len(ctx.shape(0))
    starts = [int(v) for v in ctx.value(1, "starts").reshape(-1)]
    ends = [int(v) for v in ctx.value(2, "ends").reshape(-1)]
    axes = ([int(v) for v in ctx.value(3, "axes").reshape(-1)] if ctx.has(3)
            else list(range(len(starts))))
    steps = ([int(v) for v in ctx.value(4, "steps").reshape(-1)] if ctx.has(4)
             else [1] * len(starts))
    if not len(starts) == len(ends) == len(axes) == len(steps):
        raise ctx.error("starts, ends, axes and steps must have the same length")
    axes = [_norm_axis(ctx, a, r) for a in axes]
    return call("strided_slice", ctx.expr(0), begin=starts, end=ends, strides=steps, axes=axes)


# ---- quantized operators -----------------------------------------------------------

def _qparams(ctx: _Ctx, s: int, z: int, what: str, zdtype: Optional[str] = None
             ) -> Tuple[np.ndarray, np.ndarray, str]:
    """(scales float32, zero points int64, the quantized dtype) of inputs s, z."""
    scale = ctx.value(s, "%s scale" % what).astype(np.float32).reshape(-1)
    if ctx.has(z):
        zv = ctx.value(z, "%s zero point" % what)
        dt = str(zv.dtype)
        zp = zv.astype(np.int64).reshape(-1)
    else:
        dt = zdtype or "uint8"
        zp = np.zeros(scale.size, np.int64)
    if dt not in Q8 and dt != "int32":
        raise ctx.unsupported("%s of element type %s is not supported (int8, uint8)" % (what, dt))
    if zp.size not in (1, scale.size):
        raise ctx.error("%s has %d scales but %d zero points" % (what, scale.size, zp.size))
    if not np.all(np.isfinite(scale)) or np.any(scale <= 0):
        raise ctx.error("%s scale must be positive and finite" % what)
    if dt == "int32" and np.any(zp == -2**31):
        # the kernels negate zero points in int32
        raise ctx.error("%s zero point -2147483648 is out of range (the kernels negate it)"
                        % what)
    if zp.size == 1 and scale.size > 1:
        zp = np.full(scale.size, zp[0], np.int64)
    return scale, zp, dt


# uint8 expressions made by _s8_to_u8: id -> (the uint8 expr, its int8 source),
# so that moving one back to int8 takes the source and no int32 round trip
# stays between two integer operators (cleared by each import; one table
# per thread, so that imports in several threads do not share it).
_TLS = threading.local()


def _s8_of() -> Dict[int, Tuple[ir.Expr, ir.Expr]]:
    d = getattr(_TLS, "s8_of", None)
    if d is None:
        d = _TLS.s8_of = {}
    return d


def _u8_to_s8(x: ir.Expr) -> ir.Expr:
    """uint8 -> int8 by subtracting 128 (exact)."""
    known = _s8_of().get(id(x))
    if known is not None and known[0] is x:
        return known[1]
    y = call("subtract", call("cast", x, dtype="int32"), scalar(128, "int32"))
    return call("cast", y, dtype="int8")


def _s8_to_u8(x: ir.Expr) -> ir.Expr:
    y = call("add", call("cast", x, dtype="int32"), scalar(128, "int32"))
    u = call("cast", y, dtype="uint8")
    _s8_of()[id(u)] = (u, x)
    return u


def _chk_quantize(ctx: _Ctx) -> None:
    ctx.dtypes(F32, 0)
    if int(ctx.attr("block_size", 0)):
        raise ctx.unsupported("blocked quantization (block_size) is not supported")
    out = ctx.attr("output_dtype", 0)
    if out and _ELEM.get(int(out)) not in Q8:
        raise ctx.unsupported("output_dtype %s is not supported (INT8, UINT8)"
                              % _ELEM_NAMES.get(int(out), out))
    _, _, dt = _qparams(ctx, 1, 2, "y", _ELEM.get(int(out)) if out else None)
    if dt not in Q8:
        raise ctx.unsupported("quantizing to %s is not supported (int8, uint8)" % dt)


def _axis_for(ctx: _Ctx, n: int, rank: int) -> Tuple[int, int]:
    """The IR's axis attribute for `n` scales (-1 per tensor) and the
    normalised ONNX axis."""
    if n == 1:
        return -1, -1
    a = _norm_axis(ctx, int(ctx.attr("axis", 1)), rank)
    return a - rank, a


def _quantize(ctx: _Ctx) -> ir.Expr:
    out = ctx.attr("output_dtype", 0)
    s, z, dt = _qparams(ctx, 1, 2, "y", _ELEM.get(int(out)) if out else None)
    r = len(ctx.shape(0))
    axis, a = _axis_for(ctx, s.size, r)
    if ctx.is_const(0) and ctx.dtype(0) == "float32":
        # a constant (e.g. anchor boxes) is quantized here as onnxruntime
        # does: the float32 quotient rounded half to even
        bshape = [1] * r
        if s.size > 1:
            bshape[a] = s.size
        q = np.rint(ctx.value(0, "x") / s.reshape(bshape).astype(np.float32))
        info = np.iinfo(dt)
        q = np.clip(q + z.reshape(bshape).astype(np.float32), info.min, info.max)
        return ir.const(q.astype(dt))
    shift = 128 if dt == "uint8" else 0
    y = call("qnn.quantize", ctx.expr(0), vector_or_scalar(s, "float32"),
             vector_or_scalar(z - shift, "int32"), axis=axis, out_dtype="int8",
             rounding="EVEN")
    return _s8_to_u8(y) if shift else y


def _chk_dequantize(ctx: _Ctx) -> None:
    if int(ctx.attr("block_size", 0)):
        raise ctx.unsupported("blocked quantization (block_size) is not supported")
    _, _, dt = _qparams(ctx, 1, 2, "x", ctx.dtype(0))
    x = ctx.dtype(0)
    if x is not None and x not in Q8 + ("int32",):
        raise ctx.unsupported("dequantizing %s is not supported (int8, uint8, int32)" % x)


def _dequantize(ctx: _Ctx) -> ir.Expr:
    xd = ctx.dtype(0)
    s, z, _ = _qparams(ctx, 1, 2, "x", xd)
    shp = ctx.shape(0)
    axis, a = _axis_for(ctx, s.size, len(shp))
    bshape = [1] * len(shp)
    if s.size > 1:
        if shp[a] != s.size:
            raise ctx.error("%d scales for %d channels on axis %d" % (s.size, shp[a], a))
        bshape[a] = s.size
    if ctx.is_const(0):  # a constant (QDQ weights): dequantized here
        v = ctx.value(0, "x").astype(np.float32)
        real = (v - z.reshape(bshape).astype(np.float32)) * s.reshape(bshape)
        return ir.const(real.astype(np.float32))
    if xd == "int8":
        return call("qnn.dequantize", ctx.expr(0), vector_or_scalar(s, "float32"),
                    vector_or_scalar(z, "int32"), axis=axis)
    if xd == "uint8":
        return call("qnn.dequantize", _u8_to_s8(ctx.expr(0)), vector_or_scalar(s, "float32"),
                    vector_or_scalar(z - 128, "int32"), axis=axis)
    # int32 (a bias): (x - zp) * scale in float
    x = call("cast", ctx.expr(0), dtype="float32")
    if np.any(z != 0):
        x = call("subtract", x, ir.const(z.astype(np.float32).reshape(bshape if s.size > 1
                                                                       else ())))
    return call("multiply", x, ir.const(s.reshape(bshape) if s.size > 1 else s.reshape(())))


def _to_s8(ctx: _Ctx, n: int, zp: np.ndarray, dt: str) -> Tuple[ir.Expr, np.ndarray]:
    """Input n as int8 (uint8 moved by 128) and its zero points moved alike."""
    if dt == "uint8":
        if ctx.is_const(n):
            v = ctx.value(n, "input").astype(np.int16) - 128
            return ir.const(v.astype(np.int8)), zp - 128
        return _u8_to_s8(ctx.expr(n)), zp - 128
    return ctx.expr(n), zp


def _chk_qlinear(ctx: _Ctx, conv: bool) -> None:
    if conv:
        _check_window(ctx)
    x_dt = ctx.dtype(0)
    if x_dt is not None and x_dt not in Q8:
        raise ctx.unsupported("input of element type %s is not supported (int8, uint8)" % x_dt)
    _qparams(ctx, 1, 2, "x", x_dt)
    ctx.value(3, "the weight" if conv else "b")
    _, wz, _ = _qparams(ctx, 4, 5, "w" if conv else "b", ctx.dtype(3))
    if np.any(wz != wz[0]):
        raise ctx.unsupported("per-channel weight zero points are not supported")
    _qparams(ctx, 6, 7, "y", None)
    if conv and ctx.has(8):
        ctx.value(8, "the bias")


def _requant_out(ctx: _Ctx, acc: ir.Expr, acc_scale: np.ndarray, axis: int,
                 y_at: int = 6) -> ir.Expr:
    """ONNX Runtime's requantization (MlasRequantizeOutput): the float32
    scale x_scale * w_scale[c] / y_scale, multiplied in float32, rounded half
    to even: the accumulator scale here is the float32 product, and
    qnn.requantize's rounding ONNX divides it by y_scale in float32. A Relu
    or Clip folded into the node (a QDQ group) is a clamp after it."""
    ys, yz, ydt = _qparams(ctx, y_at, y_at + 1, "y", None)
    if ys.size != 1:
        raise ctx.unsupported("a per-channel output scale is not supported")
    shift = 128 if ydt == "uint8" else 0
    y = call("qnn.requantize", acc, vector_or_scalar(acc_scale.astype(np.float32), "float32"),
             scalar(0, "int32"), scalar(ys[0], "float32"), scalar(int(yz[0]) - shift, "int32"),
             axis=axis, rounding="ONNX", out_dtype="int8")
    clamp = ctx.imp.g.qdq_clamps.get(ctx.outs[0])
    if clamp is not None:
        y = call("clip", y, a_min=float(clamp[0] - shift), a_max=float(clamp[1] - shift))
    return _s8_to_u8(y) if shift else y


def _qlinear_conv(ctx: _Ctx) -> ir.Expr:
    x = ctx.shape(0)
    wv = ctx.value(3, "the weight")
    if len(x) != 4 or wv.ndim != 4:
        raise ctx.unsupported("expects 4-d NCHW data and OIHW weight, got %s and %s"
                              % (x, list(wv.shape)))
    xs, xz, xdt = _qparams(ctx, 1, 2, "x", ctx.dtype(0))
    ws, wz, wdt = _qparams(ctx, 4, 5, "w", str(wv.dtype))
    if xs.size != 1:
        raise ctx.error("x must be quantized per tensor")
    cout = wv.shape[0]
    if ws.size not in (1, cout):
        raise ctx.error("w has %d scales for %d output channels" % (ws.size, cout))
    xe, xz = _to_s8(ctx, 0, xz, xdt)
    we, wz = _to_s8(ctx, 3, wz, wdt)
    k = ctx.ints("kernel_shape") or list(wv.shape[2:])
    s = ctx.ints("strides", [1, 1]) or [1, 1]
    d = ctx.ints("dilations", [1, 1]) or [1, 1]
    pad = _auto_pad(ctx, x[2:], k, s, d)
    y = call("qnn.conv2d", xe, we, scalar(int(xz[0]), "int32"), scalar(int(wz[0]), "int32"),
             scalar(xs[0], "float32"), vector_or_scalar(ws, "float32"), strides=s, padding=pad,
             dilation=d, groups=int(ctx.attr("group", 1)), channels=int(cout), kernel_size=k,
             out_dtype="int32")
    if ctx.has(8):
        b = ctx.value(8, "the bias")
        if b.dtype != np.int32 or b.size != cout:
            raise ctx.error("the bias must be int32 with %d values" % cout)
        y = call("nn.bias_add", y, ir.const(b.reshape(-1)), axis=1)
    acc = np.float32(xs[0]) * ws.astype(np.float32)
    return _requant_out(ctx, y, acc, 1)  # the channel axis (the fused kernel wants it)


def _qlinear_matmul(ctx: _Ctx) -> ir.Expr:
    a = ctx.shape(0)
    bv = ctx.value(3, "b")
    if bv.ndim != 2 or len(a) < 2:
        raise ctx.unsupported("expects a 2-d constant b and a left operand of rank >= 2, got "
                              "%s and %s" % (a, list(bv.shape)))
    as_, az, adt = _qparams(ctx, 1, 2, "a", ctx.dtype(0))
    bs, bz, bdt = _qparams(ctx, 4, 5, "b", str(bv.dtype))
    n = bv.shape[1]
    if as_.size != 1 or bs.size not in (1, n):
        raise ctx.error("a must be quantized per tensor and b per tensor or per column")
    y = _qdense(ctx, bv.T, (as_, az, adt), (bs, bz, bdt))
    acc = np.float32(as_[0]) * bs.astype(np.float32)
    return _requant_out(ctx, y, acc, -1)


def _qdense(ctx: _Ctx, bt: np.ndarray, aq: Tuple[np.ndarray, np.ndarray, str],
            bq: Tuple[np.ndarray, np.ndarray, str]) -> ir.Expr:
    """qnn.dense of input 0 (quantized as aq: scale, zero point, dtype) and
    the constant weight bt [N, K] (quantized as bq), int8 after moving
    uint8 by 128."""
    as_, az, adt = aq
    bs, bz, bdt = bq
    ae, az = _to_s8(ctx, 0, az, adt)
    bt = np.ascontiguousarray(bt)
    if bdt == "uint8":
        bt = (bt.astype(np.int16) - 128).astype(np.int8)
        bz = bz - 128
    return call("qnn.dense", ae, ir.const(bt), scalar(int(az[0]), "int32"),
                scalar(int(bz[0]), "int32"), scalar(as_[0], "float32"),
                vector_or_scalar(bs, "float32"), units=int(bt.shape[0]), out_dtype="int32")


def _chk_qgemm(ctx: _Ctx) -> None:
    a_dt = ctx.dtype(0)
    if a_dt is not None and a_dt not in Q8:
        raise ctx.unsupported("input A of element type %s is not supported (int8, uint8)" % a_dt)
    if int(ctx.attr("transA", 0)):
        raise ctx.unsupported("transA=1 is not supported")
    if float(ctx.attr("alpha", 1.0)) != 1.0:
        raise ctx.unsupported("alpha other than 1 is not supported")
    _qparams(ctx, 1, 2, "a", a_dt)
    ctx.value(3, "B")
    _, bz, _ = _qparams(ctx, 4, 5, "b", ctx.dtype(3))
    if np.any(bz != bz[0]):
        raise ctx.unsupported("per-channel zero points of B are not supported")
    if not ctx.has(7):
        raise ctx.unsupported("a float output (no y_scale) is not supported")
    _qparams(ctx, 7, 8, "y", None)
    if ctx.has(6):
        ctx.value(6, "C")


def _qgemm(ctx: _Ctx) -> ir.Expr:
    """com.microsoft QGemm with a quantized output: qnn.dense + bias +
    qnn.requantize with ONNX Runtime's rounding."""
    a = ctx.shape(0)
    bv = ctx.value(3, "B")
    if len(a) != 2 or bv.ndim != 2:
        raise ctx.unsupported("expects 2-d A and a 2-d constant B, got %s and %s"
                              % (a, list(bv.shape)))
    as_, az, adt = _qparams(ctx, 1, 2, "a", ctx.dtype(0))
    bs, bz, bdt = _qparams(ctx, 4, 5, "b", str(bv.dtype))
    bt = bv if int(ctx.attr("transB", 0)) else bv.T  # [N, K]
    n = bt.shape[0]
    if as_.size != 1 or bs.size not in (1, n):
        raise ctx.error("A must be quantized per tensor and B per tensor or per column")
    y = _qdense(ctx, bt, (as_, az, adt), (bs, bz, bdt))
    if ctx.has(6):
        c = ctx.value(6, "C")
        if c.dtype != np.int32 or c.size != n:
            raise ctx.error("C must be int32 with %d values" % n)
        y = call("nn.bias_add", y, ir.const(c.reshape(-1)), axis=-1)
    acc = np.float32(as_[0]) * bs.astype(np.float32)
    return _requant_out(ctx, y, acc, -1, y_at=7)


# ---- QDQ groups -> integer operators ----------------------------------------------
#
# DequantizeLinear -> Conv / MatMul / Gemm (-> Relu / Clip) -> QuantizeLinear
# becomes one QLinearConv / QLinearMatMul / QGemm node, as ONNX Runtime's
# QDQ transformer does on the CPU, so the group runs on int8 tensors with
# ONNX Runtime's requantization. A Relu or Clip between the operator and
# the QuantizeLinear is a clamp of the quantized output (exact: quantizing
# is monotone). DequantizeLinear -> Flatten / Reshape / Transpose /
# Squeeze / Unsqueeze / MaxPool -> QuantizeLinear with the same scale and
# zero point moves the quantized tensor itself (uint8 as int8, exact: the
# shift by 128 is monotone). DequantizeLinear'd inputs -> Add / Mul /
# Concat / AveragePool / GlobalAveragePool / Sigmoid / LeakyRelu / Softmax ->
# QuantizeLinear of the inputs' element type becomes the com.microsoft
# QLinear operator (onnx_qop.py), as ONNX Runtime's CPU transformer does.
# A Conv, MatMul or Gemm between
# DequantizeLinear and QuantizeLinear that cannot be fused stays float, with
# a warning naming the node.

_QDQ_MOVES = ("Flatten", "Reshape", "Transpose", "Squeeze", "Unsqueeze", "MaxPool")
_QDQ_QLINEAR = ("Add", "Mul", "Concat", "AveragePool", "GlobalAveragePool", "Sigmoid",
                "LeakyRelu", "Softmax")


class _QdqFuser:
    def __init__(self, g: _Graph) -> None:
        self.g = g
        self.producer: Dict[str, Any] = {}
        self.readers: Dict[str, List[Any]] = {}
        for n in g.nodes:
            for o in n.output:
                if o:
                    self.producer[o] = n
            for i in n.input:
                if i:
                    self.readers.setdefault(i, []).append(n)
        self.outputs = {o.name for o in g.outputs}
        self.replace: Dict[int, Any] = {}  # id(the anchor node) -> its new node
        self.fresh = 0

    def attr(self, n: Any, name: str, default: Any) -> Any:
        for a in n.attribute:
            if a.name == name:
                return self.g.onnx.helper.get_attribute_value(a)
        return default

    def const(self, name: str) -> Optional[np.ndarray]:
        return self.g.values.get(name) if name else None

    def val(self, name: str) -> np.ndarray:
        """A constant already known to be one."""
        v = self.g.values.get(name)
        assert v is not None, name
        return v

    def dq(self, name: str) -> Optional[Any]:
        """The DequantizeLinear that computes `name`, with constant scale and
        zero point, or None."""
        n = self.producer.get(name)
        if n is None or n.op_type != "DequantizeLinear" or n.domain not in ("", "ai.onnx"):
            return None
        if int(self.attr(n, "block_size", 0)) or len(n.input) < 2:
            return None
        if self.const(n.input[1]) is None:
            return None
        if len(n.input) > 2 and n.input[2] and self.const(n.input[2]) is None:
            return None
        return n

    def only_reader(self, name: str) -> Optional[Any]:
        r = self.readers.get(name, [])
        if len(r) != 1 or name in self.outputs:
            return None
        return r[0]

    def q_after(self, name: str) -> Optional[Any]:
        n = self.only_reader(name)
        if n is None or n.op_type != "QuantizeLinear" or n.domain not in ("", "ai.onnx"):
            return None
        if int(self.attr(n, "block_size", 0)) or len(n.input) < 2 or self.const(n.input[1]) is None:
            return None
        if len(n.input) > 2 and n.input[2] and self.const(n.input[2]) is None:
            return None
        if len(n.input) < 3 or not n.input[2]:
            return None  # the output type is then an attribute: left float
        s = self.val(n.input[1])
        z = self.val(n.input[2])
        if s.size != 1 or str(z.dtype) not in Q8:
            return None
        return n

    def zp_input(self, n: Any) -> str:
        """Node n's (a DequantizeLinear's) zero point input, made when absent."""
        if len(n.input) > 2 and n.input[2]:
            return n.input[2]
        v = self.const(n.input[0])
        x = (str(v.dtype), []) if v is not None else self.g.inferred.get(n.input[0])
        dt = x[0] if x else "uint8"
        name = "%s__zero_point_%d" % (n.output[0], self.fresh)
        self.fresh += 1
        self.g.values[name] = np.zeros((), np.dtype(dt if dt in Q8 else "uint8"))
        self.g.inferred[name] = (str(self.g.values[name].dtype), [])
        return name

    def q8_activation(self, d: Optional[Any]) -> bool:
        if d is None or self.const(d.input[0]) is not None:
            return False
        s = self.val(d.input[1])
        t = self.g.inferred.get(d.input[0])
        return s.size == 1 and t is not None and t[0] in Q8

    def weight(self, d: Optional[Any], axis: int) -> bool:
        """A constant int8/uint8 weight with one zero point, per tensor or
        per channel on `axis`."""
        if d is None:
            return False
        w = self.val(d.input[0])
        if w is None or str(w.dtype) not in Q8:
            return False
        s = self.val(d.input[1])
        if len(d.input) > 2 and d.input[2]:
            z = self.val(d.input[2]).reshape(-1)
            if np.any(z != z[0]):
                return False
        if s.size == 1:
            return True
        a = int(self.attr(d, "axis", 1))
        return s.ndim == 1 and (a % w.ndim) == axis % w.ndim and w.shape[axis] == s.size

    def bias(self, name: str, x: Any, w: Any) -> Optional[str]:
        """The int32 constant behind a DequantizeLinear'd bias at scale
        x_scale * w_scale, or None."""
        d = self.dq(name)
        if d is None:
            return None
        b = self.const(d.input[0])
        if b is None or b.dtype != np.int32:
            return None
        if len(d.input) > 2 and d.input[2] and np.any(self.const(d.input[2]) != 0):
            return None
        want = np.float32(self.val(x.input[1]).reshape(-1)[0]) * \
            self.val(w.input[1]).astype(np.float32).reshape(-1)
        got = self.val(d.input[1]).astype(np.float32).reshape(-1)
        if got.size not in (1, want.size) or want.size not in (1, got.size) or \
                not np.allclose(got, want, rtol=1e-6, atol=0):
            return None
        return d.input[0]

    def tail(self, name: str) -> Optional[Tuple[Any, Optional[Tuple[int, int]]]]:
        """(the QuantizeLinear after `name`, the clamp of a Relu / Clip between)."""
        q = self.q_after(name)
        if q is not None:
            return q, None
        act = self.only_reader(name)
        if act is None or act.op_type not in ("Relu", "Clip") or act.domain not in ("", "ai.onnx"):
            return None
        q = self.q_after(act.output[0])
        if q is None:
            return None
        s = np.float32(self.val(q.input[1]).reshape(-1)[0])
        z = self.val(q.input[2])
        info = np.iinfo(z.dtype)
        zp = int(z.reshape(-1)[0])

        def quant(v: float) -> int:
            return int(np.clip(np.rint(np.float32(v) / s) + zp, info.min, info.max))
        lo, hi = -np.inf, np.inf
        if act.op_type == "Relu":
            lo = 0.0
        else:
            if len(act.input) > 1 or any(a.name in ("min", "max") for a in act.attribute):
                lo_n = act.input[1] if len(act.input) > 1 else ""
                hi_n = act.input[2] if len(act.input) > 2 else ""
                if (lo_n and self.const(lo_n) is None) or (hi_n and self.const(hi_n) is None):
                    return None
                if any(n and self.val(n).size != 1 for n in (lo_n, hi_n)):
                    return None  # not a scalar bound: the Clip stays a node of its own
                lo = (float(self.val(lo_n).reshape(-1)[0]) if lo_n
                      else float(self.attr(act, "min", -np.inf)))
                hi = (float(self.val(hi_n).reshape(-1)[0]) if hi_n
                      else float(self.attr(act, "max", np.inf)))
        qlo = info.min if lo == -np.inf else quant(lo)
        qhi = info.max if hi == np.inf else quant(hi)
        return q, (qlo, qhi)

    def fuse(self, n: Any) -> Optional[Any]:
        helper = self.g.onnx.helper
        if n.domain not in ("", "ai.onnx") or not n.input:
            return None
        if n.op_type in _QDQ_MOVES:
            return self.move(n)
        if n.op_type in _QDQ_QLINEAR:
            return self.qlinear(n)
        if n.op_type not in ("Conv", "MatMul", "Gemm") or len(n.input) < 2:
            return None
        x, w = self.dq(n.input[0]), self.dq(n.input[1])
        if x is None or w is None:
            return None  # not a QDQ group
        t = self.tail(n.output[0])
        why = None
        wv = self.const(w.input[0])
        if t is None:
            why = "its output is not quantized by one QuantizeLinear"
        elif not self.q8_activation(x):
            why = "its input is not an int8/uint8 tensor quantized per tensor"
        elif n.op_type == "Conv" and (wv is None or wv.ndim != 4):
            why = "only a 2-d convolution with a constant weight runs in int8"
        elif n.op_type == "Conv" and not self.weight(w, 0):
            why = "its weight is not a constant int8/uint8 quantized per tensor or per channel"
        elif n.op_type == "MatMul" and (wv is None or wv.ndim != 2 or not self.weight(w, 1)):
            why = "its right operand is not a 2-d constant int8/uint8 quantized per tensor " \
                  "or per column"
        elif n.op_type == "Gemm":
            tb = int(self.attr(n, "transB", 0))
            if wv is None or wv.ndim != 2 or not self.weight(w, 0 if tb else 1):
                why = "B is not a 2-d constant int8/uint8 quantized per tensor or per column"
            elif int(self.attr(n, "transA", 0)) or float(self.attr(n, "alpha", 1.0)) != 1.0:
                why = "transA or alpha is not supported in int8"
            elif len(n.input) > 2 and n.input[2] and float(self.attr(n, "beta", 1.0)) != 1.0:
                why = "beta is not supported in int8"
        bias = None
        if why is None and len(n.input) > 2 and n.input[2]:
            bias = self.bias(n.input[2], x, w)
            if bias is None:
                why = "its bias is not an int32 constant at scale x_scale * w_scale"
        if why is not None:
            import warnings
            warnings.warn("%s: node '%s' (%s) stays float: %s"
                          % (WHO, n.name, n.op_type, why), stacklevel=4)
            return None
        assert t is not None
        q, clamp = t
        xin = [x.input[0], x.input[1], self.zp_input(x)]
        win = [w.input[0], w.input[1], self.zp_input(w)]
        yin = [q.input[1], q.input[2]]
        keep = {a.name: helper.get_attribute_value(a) for a in n.attribute}
        if n.op_type == "Conv":
            new = helper.make_node("QLinearConv", xin + win + yin + ([bias] if bias else []),
                                   [q.output[0]], name=n.name, **keep)
        elif n.op_type == "MatMul":
            new = helper.make_node("QLinearMatMul", xin + win + yin, [q.output[0]], name=n.name)
        else:
            new = helper.make_node("QGemm", xin + win + [bias or ""] + yin, [q.output[0]],
                                   name=n.name, domain="com.microsoft",
                                   transB=int(self.attr(n, "transB", 0)))
        if clamp is not None:
            self.g.qdq_clamps[q.output[0]] = clamp
        return new

    def q8_operand(self, d: Optional[Any]) -> Optional[str]:
        """The element type of a DequantizeLinear'd int8/uint8 operand (a
        tensor or a constant) quantized per tensor, or None."""
        if d is None:
            return None
        v = self.const(d.input[0])
        t = str(v.dtype) if v is not None else (self.g.inferred.get(d.input[0]) or (None,))[0]
        if t not in Q8 or self.val(d.input[1]).size != 1:
            return None
        if len(d.input) > 2 and d.input[2] and self.val(d.input[2]).size != 1:
            return None
        return t

    def qlinear(self, n: Any) -> Optional[Any]:
        """DequantizeLinear -> Add / Mul / Concat / AveragePool /
        GlobalAveragePool / Sigmoid / LeakyRelu / Softmax -> QuantizeLinear
        as the com.microsoft QLinear operator: every input dequantized,
        inputs and output of one element type, the output read by the
        QuantizeLinear alone (a Relu / Clip between only when the
        quantization makes it a no-op), as ONNX Runtime selects them."""
        ins = [i for i in n.input if i]
        want = {"Add": 2, "Mul": 2, "Concat": len(ins)}.get(n.op_type, 1)
        if not ins or len(ins) != len(n.input) or len(ins) != want:
            return None
        found = [self.dq(i) for i in ins]
        dqs = [d for d in found if d is not None]
        types = {self.q8_operand(d) for d in dqs}
        if len(dqs) != len(ins) or len(types) != 1 or None in types:
            return None
        t = self.tail(n.output[0])
        if t is None:
            return None
        q, clamp = t
        qz = self.val(q.input[2])
        info = np.iinfo(qz.dtype)
        if str(qz.dtype) not in types or (clamp is not None and
                                          clamp != (int(info.min), int(info.max))):
            return None
        helper = self.g.onnx.helper
        keep = {a.name: helper.get_attribute_value(a) for a in n.attribute}
        args: List[str] = []
        if n.op_type == "Concat":
            args = [q.input[1], q.input[2]]
            for d in dqs:
                args += [d.input[0], d.input[1], self.zp_input(d)]
        else:
            for d in dqs:
                args += [d.input[0], d.input[1], self.zp_input(d)]
            args += [q.input[1], q.input[2]]
        if n.op_type == "Softmax":
            keep["opset"] = 13 if (self.g.opset or 13) >= 13 else \
                11 if (self.g.opset or 13) >= 11 else 1
        return helper.make_node("QLinear" + n.op_type, args, [q.output[0]], name=n.name,
                                domain="com.microsoft", **keep)

    def move(self, n: Any) -> Optional[Any]:
        x = self.dq(n.input[0])
        if x is None or not self.q8_activation(x):
            return None
        q = self.q_after(n.output[0])
        if q is None:
            return None
        xs, qs = self.val(x.input[1]), self.val(q.input[1])
        xz = self.val(self.zp_input(x))
        qz = self.val(q.input[2])
        if xs.size != 1 or np.float32(xs.reshape(-1)[0]) != np.float32(qs.reshape(-1)[0]) or \
                xz.dtype != qz.dtype or int(xz.reshape(-1)[0]) != int(qz.reshape(-1)[0]):
            return None
        new = self.g.onnx.NodeProto()
        new.CopyFrom(n)
        new.input[0] = x.input[0]
        del new.output[:]
        new.output.append(q.output[0])
        self.g.qdq_moved.add(q.output[0])
        return new

    def run(self) -> List[Any]:
        # the fused node takes its QuantizeLinear's place in the order (after
        # its inputs, before its readers); the group's other nodes, read by
        # nothing any more, are pruned
        at_q: Dict[str, Any] = {}
        for n in self.g.nodes:
            new = self.fuse(n)
            if new is not None:
                at_q[new.output[0]] = new
        result = [at_q.get(n.output[0], n) if n.op_type == "QuantizeLinear" and n.output
                  else n for n in self.g.nodes]
        return self._prune(result) if at_q else result

    def _prune(self, nodes: List[Any]) -> List[Any]:
        """Drops nodes whose outputs nothing reads any more (the float
        operator and activation of a fused group)."""
        while True:
            read = {o.name for o in self.g.outputs}
            for n in nodes:
                read.update(i for i in n.input if i)
            keep = [n for n in nodes if any(o in read for o in n.output if o)]
            if len(keep) == len(nodes):
                return nodes
            nodes = keep


def _fuse_qdq(g: _Graph) -> None:
    g.nodes = _QdqFuser(g).run()


def _constant(ctx: _Ctx) -> ir.Expr:
    raise AssertionError("Constant nodes are read in the first pass")


# op type -> (converter, check for the first pass or None, allowed input dtypes or None)
_Spec = Tuple[Callable[[_Ctx], ir.Expr], Optional[Callable[[_Ctx], None]]]
def _chk_reduce(op: str, since: int, allowed: Sequence[str]) -> Callable[[_Ctx], None]:
    def chk(ctx: _Ctx) -> None:
        ctx.dtypes(allowed, 0)
        if not _op_exists(op):
            raise ctx.unsupported("the IR's '%s' operator is missing or cannot run in this "
                                  "build" % op)
        _axes(ctx, since)
    return chk


def _reduce(op: str, since: int) -> Callable[[_Ctx], ir.Expr]:
    """ReduceSum (axes an input from opset 13), ReduceMax, ReduceMin (from
    18): no axes reduce every axis, or none with noop_with_empty_axes."""
    def conv(ctx: _Ctx) -> ir.Expr:
        r = len(ctx.shape(0))
        axes = _axes(ctx, since)
        keep = bool(ctx.attr("keepdims", 1))
        if not axes:
            if ctx.opset >= since and int(ctx.attr("noop_with_empty_axes", 0)):
                return ctx.expr(0)
            ax = list(range(r))
        else:
            ax = sorted({_norm_axis(ctx, a, r) for a in axes})
        return call(op, ctx.expr(0), axis=ax, keepdims=keep)
    return conv


def _chk_arg(ctx: _Ctx) -> None:
    ctx.dtypes(("float32", "int8", "int32"), 0)
    ctx.only("select_last_index", [0], 0)


def _arg(op: str) -> Callable[[_Ctx], ir.Expr]:
    def conv(ctx: _Ctx) -> ir.Expr:
        axis = _norm_axis(ctx, int(ctx.attr("axis", 0)), len(ctx.shape(0)))
        y = call(op, ctx.expr(0), axis=axis, keepdims=bool(ctx.attr("keepdims", 1)))
        return call("cast", y, dtype="int64")  # ONNX's indices are int64
    return conv


def _chk_gather(ctx: _Ctx) -> None:
    ctx.dtypes(("float32", "int8", "uint8", "int16", "int32"), 0)
    ctx.dtypes(("int32", "int64"), 1)


def _gather(ctx: _Ctx) -> ir.Expr:
    shp = ctx.shape(0)
    axis = _norm_axis(ctx, int(ctx.attr("axis", 0)), len(shp))
    n = shp[axis]
    if ctx.is_const(1):
        idx = ctx.value(1, "the indices")
        if np.any(idx < -n) or np.any(idx >= n):
            raise ctx.error("an index is out of range for the %d entries of axis %d" % (n, axis))
        ie: ir.Expr = ir.const(np.where(idx < 0, idx + n, idx).astype(np.int32))
    else:  # computed indices: take counts a negative one from the end
        ie = ctx.expr(1)
        if ctx.dtype(1) != "int32":
            ie = call("cast", ie, dtype="int32")
    return call("take", ctx.expr(0), ie, axis=axis)


def _tile(ctx: _Ctx) -> ir.Expr:
    shp = ctx.shape(0)
    reps = [int(v) for v in ctx.value(1, "the repeats").reshape(-1)]
    if len(reps) != len(shp) or any(v < 1 for v in reps):
        raise ctx.unsupported("repeats %s are not supported (%d values >= 1)" % (reps, len(shp)))
    y = ctx.expr(0)
    for d, k in enumerate(reps):
        if k > 1:
            y = _tile_many(y, k, d)
    return y


def _tile_many(y: ir.Expr, k: int, d: int) -> ir.Expr:
    """k copies of y along axis d (a concatenate takes at most 16 parts)."""
    parts = [y] * k
    while len(parts) > 1:
        parts = [p[0] if len(p) == 1 else call("concatenate", ir.Tuple(p), axis=d)
                 for p in (parts[i:i + 16] for i in range(0, len(parts), 16))]
    return parts[0]


def _chk_depth_space(ctx: _Ctx) -> None:
    ctx.dtypes(ANY, 0)
    if ctx.rank(0) not in (None, 4):
        raise ctx.unsupported("a rank-%s input is not supported (NCHW)" % ctx.rank(0))
    ctx.only("mode", ["DCR", "CRD"], "DCR")


def _depth_space(to_depth: bool) -> Callable[[_Ctx], ir.Expr]:
    """SpaceToDepth and DepthToSpace (NCHW; DCR or CRD) as a reshape, a
    transpose and a reshape."""
    def conv(ctx: _Ctx) -> ir.Expr:
        n, c, h, w = ctx.shape(0)
        b = int(ctx.attr("blocksize", 0))
        if b < 1:
            raise ctx.error("blocksize must be positive, got %d" % b)
        if to_depth:
            if h % b or w % b:
                raise ctx.error("height %d and width %d must be multiples of %d" % (h, w, b))
            inner, perm = [n, c, h // b, b, w // b, b], [0, 3, 5, 1, 2, 4]
            out = [n, c * b * b, h // b, w // b]
        else:
            if c % (b * b):
                raise ctx.error("channels %d must be a multiple of %d" % (c, b * b))
            if ctx.attr("mode", "DCR") == "DCR":
                inner, perm = [n, b, b, c // (b * b), h, w], [0, 3, 4, 1, 5, 2]
            else:
                inner, perm = [n, c // (b * b), b, b, h, w], [0, 1, 4, 2, 5, 3]
            out = [n, c // (b * b), h * b, w * b]
        y = call("reshape", ctx.expr(0), newshape=inner)
        return call("reshape", call("transpose", y, axes=perm), newshape=out)
    return conv


def _if_unreached(ctx: _Ctx) -> ir.Expr:
    raise ctx.unsupported("has a condition that is not a constant")


_CONVERTERS: Dict[str, _Spec] = {
    "Conv": (_conv, _chk_conv),
    "Gemm": (_gemm, _chk_gemm),
    "MatMul": (_matmul, _chk_matmul),
    "Add": (_binary("add"), _chk_binary(F32_I32)),
    "Sub": (_binary("subtract"), _chk_binary(F32_I32)),
    "Mul": (_binary("multiply"), _chk_binary(F32_I32)),
    "Div": (_binary("divide"), _chk_binary(F32)),
    "Max": (_variadic("maximum"), _chk_variadic(F32_I32)),
    "Min": (_variadic("minimum"), _chk_variadic(F32_I32)),
    "Relu": (_unary("nn.relu"), _chk_binary(F32)),
    "Clip": (_clip, _chk_clip),
    "Sigmoid": (_unary("sigmoid"), _chk_binary(F32)),
    "Tanh": (_unary("tanh"), _chk_binary(F32)),
    "Exp": (_unary("exp"), _chk_binary(F32)),
    "Neg": (_unary("negative"), _chk_binary(F32_I32)),
    "Softmax": (_softmax, _chk_softmax),
    "MaxPool": (_pool("max_pool2d"), _chk_pool),
    "AveragePool": (_pool("avg_pool2d"), _chk_pool),
    "GlobalAveragePool": (_gap, _chk_gap),
    "Reshape": (_reshape, _chk_reshape),
    "Flatten": (_flatten, _chk_binary(ANY)),
    "Transpose": (_transpose, _chk_binary(ANY)),
    "Concat": (_concat, _chk_binary(ANY)),
    "Squeeze": (_squeeze, _chk_axes(13)),
    "Unsqueeze": (_unsqueeze, _chk_axes(13)),
    "Pad": (_pad, _chk_pad),
    "Cast": (_cast, _chk_cast),
    "Identity": (_identity, _chk_binary(ANY)),
    "Dropout": (_identity, _chk_dropout),
    "BatchNormalization": (_batch_norm, _chk_bn),
    "ReduceMean": (_reduce_mean, _chk_reduce_mean),
    "Slice": (_slice, _chk_slice),
    "QuantizeLinear": (_quantize, _chk_quantize),
    "DequantizeLinear": (_dequantize, _chk_dequantize),
    "QLinearConv": (_qlinear_conv, lambda c: _chk_qlinear(c, True)),
    "QLinearMatMul": (_qlinear_matmul, lambda c: _chk_qlinear(c, False)),
    "Constant": (_constant, None),
    "ReduceSum": (_reduce("sum", 13), _chk_reduce("sum", 13, F32_I32)),
    "ReduceMax": (_reduce("max", 18), _chk_reduce("max", 18, ("float32", "int8", "int32"))),
    "ReduceMin": (_reduce("min", 18), _chk_reduce("min", 18, ("float32", "int8", "int32"))),
    "ArgMax": (_arg("argmax"), _chk_arg),
    "ArgMin": (_arg("argmin"), _chk_arg),
    "Gather": (_gather, _chk_gather),
    "Tile": (_tile, lambda c: c.dtypes(ANY, 0)),
    "DepthToSpace": (_depth_space(False), _chk_depth_space),
    "SpaceToDepth": (_depth_space(True), _chk_depth_space),
    "Abs": (_unary("abs"), _chk_binary(F32)),
    "Sqrt": (_unary("sqrt"), _chk_binary(F32)),
    "Log": (_unary("log"), _chk_binary(F32)),
    "HardSwish": (_unary("nn.hard_swish"), _chk_binary(F32)),
    "LeakyRelu": (lambda c: call("nn.leaky_relu", c.expr(0), alpha=float(c.attr("alpha", 0.01))),
                  _chk_binary(F32)),
    "QGemm": (_qgemm, _chk_qgemm),
    # replaced by the branch it takes in the first pass (_taken_branch)
    "If": (_if_unreached, None),
}

# Operators of the com.microsoft domain (ONNX Runtime's contrib operators).
_MS_OPS: Set[str] = {"QGemm"}

# Inputs that parameterise an operator and must be constants (the node-test
# runner freezes such graph inputs from the test data).
PARAMETER_INPUTS: Dict[str, Tuple[int, ...]] = {
    "Reshape": (1,), "Squeeze": (1,), "Clip": (1, 2), "Unsqueeze": (1,), "Pad": (1, 2, 3),
    "ReduceMean": (1,), "Slice": (1, 2, 3, 4), "Dropout": (1, 2),
    "BatchNormalization": (1, 2, 3, 4), "QuantizeLinear": (1, 2), "DequantizeLinear": (1, 2),
    "QLinearConv": (1, 2, 3, 4, 5, 6, 7, 8), "QLinearMatMul": (1, 2, 3, 4, 5, 6, 7),
    "ReduceSum": (1,), "ReduceMax": (1,), "ReduceMin": (1,), "Tile": (1,),
    "QGemm": (1, 2, 3, 4, 5, 6, 7, 8), "If": (0,),
}


# folding at import, composed operators, wider element types: onnx_ops.py
from . import onnx_ops as _ops  # noqa: E402

_CONVERTERS.update(_ops.WIDENED)
_CONVERTERS.update(_ops.CONVERTERS)
PARAMETER_INPUTS.update(_ops.PARAMETER_INPUTS)

# LSTM, GRU, RNN unrolled: onnx_rnn.py
from . import onnx_rnn as _rnn  # noqa: E402

_CONVERTERS.update(_rnn.CONVERTERS)
PARAMETER_INPUTS.update(_rnn.PARAMETER_INPUTS)


def supported_operators() -> List[str]:
    """The ONNX operators this importer maps: the default domain's by
    name, onnxruntime's as "com.microsoft.NAME"."""
    return (sorted(k for k in _CONVERTERS if k not in _MS_OPS)
            + sorted("%s.%s" % (_MS_DOMAIN, k) for k in set(_MS_CONVERTERS) | _MS_OPS))


_MS_DOMAIN = "com.microsoft"


def _spec(node: Any) -> Optional[_Spec]:
    """The converter of a node: the default domain's, or onnxruntime's
    com.microsoft operators (onnx_qop.py, and QGemm)."""
    if node.domain == _MS_DOMAIN:
        if node.op_type in _MS_OPS:
            return _CONVERTERS.get(node.op_type)
        return _MS_CONVERTERS.get(node.op_type)
    if node.op_type in _MS_OPS:
        return None
    return _CONVERTERS.get(node.op_type)


def _constant_value(ctx: _Ctx) -> np.ndarray:
    """The value of a Constant node."""
    if len(ctx.attrs) != 1:
        raise ctx.error("needs exactly one value attribute, has %s" % sorted(ctx.attrs))
    name = next(iter(ctx.attrs))
    a = ctx.attrs[name]
    if name == "value":
        return ctx.imp.g._tensor(a.t, "constant")
    v = ctx.attr(name)
    if name == "value_float":
        return np.array(v, np.float32)
    if name == "value_floats":
        return np.array(v, np.float32)
    if name == "value_int":
        return np.array(v, np.int64)
    if name == "value_ints":
        return np.array(v, np.int64)
    raise ctx.unsupported("attribute %s is not supported" % name)


class _Importer:
    def __init__(self, g: _Graph) -> None:
        self.g = g
        _fuse_qdq(g)
        self.exprs: Dict[str, ir.Expr] = {}
        self.consts: Dict[str, ir.Expr] = {}
        self.building = False
        self.consumed: Set[str] = {o.name for o in g.outputs}
        for node in g.nodes:
            self.consumed.update(i for i in node.input if i)

    def expr(self, name: str) -> ir.Expr:
        e = self.exprs.get(name)
        if e is not None:
            return e
        v = self.g.values.get(name)
        if v is not None:
            c = self.consts.get(name)
            if c is None:
                c = self.consts[name] = ir.const(v)
            return c
        raise ModelImportError("%s: tensor '%s' is read before any node computes it"
                               % (WHO, name))

    def _check_old_opset(self) -> None:
        """A model below opset 11 is read when each of its operators is the
        version it has at opset 11 (unchanged since), so that the opset 11
        semantics apply."""
        g = self.g
        opset = g.opset or 0
        for k, node in enumerate(g.nodes):
            if _changed_since(g.onnx, node, opset) is not False:  # changed, or unknown
                raise UnsupportedOperatorError(
                    "%s: node %d '%s' (%s): opset %d is not supported (%d to %d; below %d only "
                    "for operators unchanged since, or when onnx's version converter can "
                    "convert the model)" % (WHO, k, node.name, node.op_type, opset,
                                            MIN_OPSET, MAX_OPSET, MIN_OPSET))

    def _taken_branch(self, ctx: _Ctx, known: Set[str]) -> List[Any]:
        """The nodes of the branch an If takes, its condition being a
        constant, with an Identity from each branch output to the If's."""
        g, node = self.g, ctx.node
        if not node.input or not node.input[0] or node.input[0] not in known:
            raise ctx.error("input 0 (the condition) is not computed by any earlier node")
        cond = g.values.get(node.input[0])
        if cond is None:
            raise ctx.unsupported(
                "is supported only when its condition '%s' is known at import: give the inputs "
                "it depends on a value (--value NAME=V, from_onnx's values={...})"
                % node.input[0])
        if cond.size != 1:
            raise ctx.error("the condition '%s' has %d values, expected 1"
                            % (node.input[0], cond.size))
        which = "then_branch" if bool(cond.reshape(-1)[0]) else "else_branch"
        branch = next((a.g for a in node.attribute if a.name == which and a.HasField("g")),
                      None)
        if branch is None:
            raise ctx.error("has no %s graph" % which)
        if len(branch.output) != len(node.output):
            raise ctx.error("its %s has %d outputs, the node %d" % (which, len(branch.output),
                                                                    len(node.output)))
        helper = g.onnx.helper
        for t in branch.initializer:
            if t.name in known:
                raise ctx.error("the %s's initializer '%s' hides a tensor of the graph"
                                % (which, t.name))
            g.values[t.name] = g._tensor(t, "initializer")
            known.add(t.name)
            g.inferred[t.name] = (str(g.values[t.name].dtype), list(g.values[t.name].shape))
        for vi in list(branch.value_info) + list(branch.output):
            if vi.name not in g.inferred:
                g.inferred[vi.name] = g._vtype(vi)
        outs = set(o for n in branch.node for o in n.output if o)
        clash = sorted(outs & (known | set(node.output)))
        if clash:
            raise ctx.error("the %s computes '%s', a name the graph already has"
                            % (which, clash[0]))
        nodes = list(branch.node)
        for i, (src, dst) in enumerate(zip(branch.output, node.output)):
            if dst:
                nodes.append(helper.make_node("Identity", [src.name], [dst],
                                              name="%s/%s/out%d" % (node.name, which, i)))
        return nodes

    def check(self) -> None:
        """The first pass: every node, before anything is built."""
        g = self.g
        if g.opset is None or g.opset > MAX_OPSET or g.opset < 1:
            raise UnsupportedOperatorError("%s: opset %s of the default domain is not supported "
                                           "(%d to %d)" % (WHO, g.opset, MIN_OPSET, MAX_OPSET))
        if g.opset < MIN_OPSET:
            self._check_old_opset()
        known: Set[str] = set(g.values) | {vi.name for vi in g.inputs}
        k = -1
        while k + 1 < len(g.nodes):
            k += 1
            node = g.nodes[k]
            ctx = _Ctx(self, k, node)
            if node.op_type == "If" and node.domain in ("", "ai.onnx"):
                g.nodes[k:k + 1] = self._taken_branch(ctx, known)
                k -= 1
                continue
            if node.domain not in ("", "ai.onnx", _MS_DOMAIN):
                raise ctx.unsupported("operators of domain '%s' are not supported" % node.domain)
            spec = _spec(node)
            if spec is None and node.domain == _MS_DOMAIN:
                raise ctx.unsupported("the operator of domain '%s' is not supported; supported: "
                                      "%s" % (_MS_DOMAIN, ", ".join(_ms_supported_operators())))
            if spec is None:
                raise ctx.unsupported("the operator is not supported; supported: %s"
                                      % ", ".join(supported_operators()))
            for i, name in enumerate(node.input):
                if name and name not in known:
                    raise ctx.error("input %d '%s' is not computed by any earlier node"
                                    % (i, name))
            if not node.output:
                raise ctx.error("has no outputs")
            if node.op_type == "Constant":
                g.values[node.output[0]] = _constant_value(ctx)
                g.inferred[node.output[0]] = (str(g.values[node.output[0]].dtype),
                                              list(g.values[node.output[0]].shape))
            else:
                _refine_types(g, node)
                try:
                    if not _ops.fold(ctx) and spec[1] is not None:
                        spec[1](ctx)
                except ModelImportError:
                    raise
                except (ValueError, TypeError, KeyError, IndexError) as e:
                    raise ctx.error(str(e)) from None
            known.update(o for o in node.output if o)
        for i, o in enumerate(g.outputs):
            if o.name not in known:
                raise ModelImportError("%s: output %d '%s' is not computed by any node"
                                       % (WHO, i, o.name))

    def _convert(self, ctx: _Ctx, node: Any) -> ir.Expr:
        conv = _spec(node)[0]  # type: ignore[index]
        if node.output[0] not in self.g.qdq_moved:
            return conv(ctx)
        # a uint8 tensor moved by a QDQ group: the int8 one it came from is
        # moved instead, so that no int32 round trip stays between operators
        x = self.expr(node.input[0])
        if str(x.checked_type.dtype) != "uint8":
            return conv(ctx)
        self.exprs[node.input[0]] = _u8_to_s8(x)  # its int8 source when known
        try:
            return _s8_to_u8(conv(ctx))
        finally:
            self.exprs[node.input[0]] = x

    def run(self, source: str) -> ir.IRModule:
        try:
            return self._run(source)
        finally:
            _s8_of().clear()

    def _run(self, source: str) -> ir.IRModule:
        g = self.g
        self.check()
        self.building = True
        used: Dict[str, int] = {}
        params = []
        in_infos = []
        for vi in g.inputs:
            dt = g.declared[vi.name][0]
            shp = g.input_shapes[vi.name]
            v = ir.var(var_name(vi.name, used), shape=shp, dtype=dt)
            self.exprs[vi.name] = v
            params.append(v)
            in_infos.append(TensorInfo(vi.name, list(shp), dt))
        for k, node in enumerate(g.nodes):
            if node.op_type == "Constant" or all(o in g.values for o in node.output if o):
                continue  # read or folded in the first pass
            ctx = _Ctx(self, k, node)
            try:
                y = self._convert(ctx, node)
            except ModelImportError:
                raise
            except (ValueError, TypeError, NotImplementedError, KeyError, IndexError) as e:
                raise ctx.error(str(e)) from None
            if isinstance(y, (list, tuple)):  # several outputs
                for o, e in zip(node.output, y):
                    if o:
                        self.exprs[o] = e
            else:
                self.exprs[node.output[0]] = y
        outs = [self.expr(o.name) for o in g.outputs]
        out_infos = []
        for out, o in zip(outs, g.outputs):
            dt, decl = g.declared[o.name]
            if decl is None or any(d is None or d <= 0 for d in decl):
                # dynamic (0 counts as dynamic, as for inputs): as computed
                shp = [int(d) for d in out.checked_type.shape]
            else:
                shp = [int(d) for d in decl if d is not None]
            if dt not in _ELEM.values():
                raise UnsupportedOperatorError("%s: output '%s' has element type %s, which is not "
                                               "supported" % (WHO, o.name, dt))
            out_infos.append(TensorInfo(o.name, [int(d) for d in shp], dt))
        return finish(params, outs, in_infos, out_infos, source, WHO)


def _parse(onnx: Any, buf: bytes) -> Any:
    if not buf:
        raise ModelImportError("%s: the file is empty" % WHO)
    m = onnx.ModelProto()
    try:
        m.ParseFromString(buf)
    except Exception as e:
        raise ModelImportError("%s: the file is corrupt or truncated, or not an ONNX model "
                               "(%s: %s)" % (WHO, type(e).__name__, e)) from None
    if not m.HasField("graph"):
        raise ModelImportError("%s: not an ONNX model (no graph)" % WHO)
    return m


def _default_opset(m: Any) -> Optional[int]:
    for o in m.opset_import:
        if o.domain in ("", "ai.onnx"):
            return int(o.version)
    return None


def _upgraded(onnx: Any, m: Any) -> Any:
    """A model below opset 11 that uses an operator changed since is
    converted to opset 11 by onnx's version converter (its adapters keep
    the meaning: Clip's bounds become inputs, Upsample becomes Resize, ...),
    and a model above opset 21 to opset 21 (where its operators changed
    only in the types they accept, or have an adapter). Where the converter
    cannot, the model is returned as it is, and the check names the first
    node that needs another opset."""
    opset = _default_opset(m)
    if opset is None or MIN_OPSET <= opset <= MAX_OPSET or opset < 1:
        return m
    if opset < MIN_OPSET and not any(node.domain in ("", "ai.onnx") and
                                     _changed_since(onnx, node, opset)
                                     for node in m.graph.node):
        return m
    try:
        from onnx import version_converter
        return version_converter.convert_version(m, min(max(opset, MIN_OPSET), MAX_OPSET))
    except Exception:
        return m


def _changed_since(onnx: Any, node: Any, opset: int) -> Optional[bool]:
    """Whether a node's operator changed between `opset` and MIN_OPSET;
    None when onnx does not know it."""
    try:
        old = onnx.defs.get_schema(node.op_type, opset, node.domain).since_version
        new = onnx.defs.get_schema(node.op_type, MIN_OPSET, node.domain).since_version
    except Exception:
        return None
    return bool(old != new)


def from_onnx(model: Union[str, bytes, bytearray, memoryview, Any],
              shape: Optional[Dict[str, Sequence[int]]] = None,
              values: Optional[Mapping[str, Any]] = None) -> ir.IRModule:
    """Import an ONNX model (an onnx.ModelProto, a path, or the file's
    bytes) as an IRModule whose "main" takes the model's inputs (those that
    are not initializers) and returns its outputs.

    `shape` ({input name: shape}) fixes inputs whose shape the file leaves
    dynamic. `values` ({input name: value}) makes inputs constants, which
    then fold: an `If` whose condition they decide (a sample rate, a mode
    flag) keeps only the branch taken; "main" no longer takes them. Raises ModelImportError (a ValueError) for a corrupt file, and
    UnsupportedOperatorError (a ModelImportError) naming the node for an
    operator, attribute or element type that cannot be mapped."""
    onnx = _onnx()
    if isinstance(model, onnx.ModelProto):
        m, source = model, "onnx"
    elif isinstance(model, (bytes, bytearray, memoryview)):
        m, source = _parse(onnx, bytes(model)), "onnx"
    else:
        path = str(model)
        with open(path, "rb") as f:
            buf = f.read()
        m, source = _parse(onnx, buf), "onnx:" + os.path.basename(path)
    try:
        m = _upgraded(onnx, m)
        g = _Graph(m, shape, values)
        imp = _Importer(g)  # QDQ groups fused here
    except ModelImportError:
        raise
    except Exception as e:  # a structurally broken model
        raise ModelImportError("%s: the model cannot be read (%s: %s)"
                               % (WHO, type(e).__name__, e)) from None
    return imp.run(source)


# onnxruntime's com.microsoft operators; imported last, as they use this
# module's helpers
from .onnx_qop import MS_CONVERTERS as _MS_CONVERTERS  # noqa: E402
from .onnx_qop import supported_operators as _ms_supported_operators  # noqa: E402
