"""TFLite flatbuffers -> IRModule, read with the `tflite` package (the
schema's generated reader; no flatbuffer parsing here).

int8 tensors stay int8 and their arithmetic becomes the `qnn.*` operators
with the file's scales and zero points, so that the executor and the code
generator compute what TFLite Micro computes, bit for bit:

* CONV_2D / DEPTHWISE_CONV_2D: qnn.conv2d -> bias_add -> qnn.requantize
  (whose input scale is input_scale * filter_scale[c] in float64, TFLite's
  double product) -> clip for a fused activation; FuseOps makes it one
  kernel call.
* FULLY_CONNECTED: the same with qnn.dense (per-tensor multipliers from
  TFLite's float product, as its kernel computes them).
* Fused activations become clips at the output's quantized range
  (TFLite's CalculateActivationRangeQuantized).
* The converter's 16x8 mode (int16 activations, int8 weights, int64
  bias) takes the same graphs with int64 sums requantized to int16;
  QUANTIZE between integer types is qnn.requantize with its out_dtype.
* uint8 models (the old converter's, LiteRT's uint8 kernels): every
  quantized uint8 tensor is read as int8, its values and zero point less
  128. (x - zx)(w - zw) and every requantization are unchanged by that, so
  the int8 operators compute LiteRT's uint8 results; where the arithmetic
  differs it is given LiteRT's: conv and fully-connected multipliers from
  the float product input_scale * filter_scale (GetQuantizedConvolution-
  Multipler), the filter's zero point kept, and average pooling rounded
  half up on the unshifted values. The model's uint8 inputs and outputs
  stay uint8, shifted once at the edges.
* SVDF keeps its state in a TFLite variable tensor, a state of the module
  (tflite_state): the new state and the output computed from it are built
  of plain operators (see _svdf).

NHWC stays NHWC: filters are reordered to HWIO when read, no transposes
enter the graph. Every operator is checked before anything is built: one
that cannot be mapped is a ModelImportError naming its type, index and
output tensor.
"""
from __future__ import annotations

import math
import struct
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from .. import ir
from . import tflite_hybrid as _hybrid
from . import tflite_logic as _lg
from . import tflite_state
from .common import ModelImportError, TensorInfo, UnsupportedOperatorError, call, finish, scalar, var_name, vector_or_scalar
from .common import gather_nd, missing_operators, select

WHO = "from_tflite"

# TensorType of the schema -> (our dtype, numpy dtype)
_DTYPES = {0: ("float32", np.float32), 1: ("float16", np.float16), 2: ("int32", np.int32), 3: ("uint8", np.uint8),
           4: ("int64", np.int64), 6: ("bool", np.bool_), 7: ("int16", np.int16),
           9: ("int8", np.int8), 10: ("float64", np.float64)}

_NONE, _RELU, _RELU_N1_TO_1, _RELU6 = 0, 1, 2, 3
_UINT8_SHIFT = 128  # uint8 value - 128 = the int8 value it is read as
_ACT_NAMES = {0: "NONE", 1: "RELU", 2: "RELU_N1_TO_1", 3: "RELU6", 4: "TANH", 5: "SIGN_BIT"}


def _tfl() -> Any:
    try:
        import tflite
    except ModuleNotFoundError as e:  # pragma: no cover - install hint
        raise ModuleNotFoundError(
            "from_tflite needs the 'tflite' package (pip install tflite)") from e
    return tflite


def _round_away(x: float) -> int:
    """std::round: halves away from zero."""
    return int(math.floor(abs(x) + 0.5)) * (1 if x >= 0 else -1)


# The zero points a quantized tensor of each element type may have: its own
# range (TFLite's kernels add them in int32 and negate them, so even an
# int32 tensor's leaves out INT32_MIN, whose negation overflows).
_ZP_RANGE = {"int8": (-128, 127), "uint8": (0, 255), "int16": (-32768, 32767),
             "int4": (-8, 7), "int32": (-2**31 + 1, 2**31 - 1)}


class _Tensor:
    __slots__ = ("index", "name", "shape", "dtype", "np_dtype", "scale", "zero_point",
                 "qdim", "data", "shifted")

    def __init__(self, index: int, name: str, shape: List[int], dtype: str, np_dtype: Any,
                 scale: Optional[np.ndarray], zero_point: Optional[np.ndarray], qdim: int,
                 data: Optional[np.ndarray]) -> None:
        self.index, self.name, self.shape, self.dtype = index, name, shape, dtype
        self.np_dtype, self.scale, self.zero_point, self.qdim = np_dtype, scale, zero_point, qdim
        self.data = data
        # a quantized uint8 tensor read as int8 (values and zero point - 128)
        self.shifted = False
        if dtype == "uint8" and zero_point is not None:
            self.shifted = True
            self.dtype, self.np_dtype = "int8", np.int8
            self.zero_point = zero_point - _UINT8_SHIFT
            if data is not None:
                self.data = (data.astype(np.int16) - _UINT8_SHIFT).astype(np.int8)

    @property
    def quantized(self) -> bool:
        return self.scale is not None

    def info(self) -> TensorInfo:
        """What the model's user sees: a shifted tensor as its uint8 self."""
        zp = self.zero_point
        if self.shifted and zp is not None:
            zp = zp + _UINT8_SHIFT
        return TensorInfo(self.name, list(self.shape), "uint8" if self.shifted else self.dtype,
                          [float(s) for s in self.scale] if self.scale is not None else [],
                          [int(z) for z in zp] if zp is not None else [], self.qdim)


class _Op:
    """An operator's tensor indices and options table, read eagerly so that
    a corrupt offset is found while the file is read."""
    __slots__ = ("opcode", "inputs", "outputs", "table")

    def __init__(self, op: Any) -> None:
        self.opcode = int(op.OpcodeIndex())
        self.inputs = [int(i) for i in op.InputsAsNumpy()] if op.InputsLength() else []
        self.outputs = [int(i) for i in op.OutputsAsNumpy()] if op.OutputsLength() else []
        self.table = op.BuiltinOptions()


class _Reader:
    """The parts of a model this importer uses, read and checked once."""

    def __init__(self, buf: bytes, subgraph: int = 0) -> None:
        tfl = _tfl()
        self.tfl = tfl
        self.buf = buf
        self.subgraph = subgraph
        if len(buf) < 8:
            raise ModelImportError("%s: %d bytes is too short for a TFLite model" % (WHO, len(buf)))
        if buf[4:8] != b"TFL3":
            raise ModelImportError("%s: not a TFLite model (file identifier %r, expected "
                                   "b'TFL3')" % (WHO, bytes(buf[4:8])))
        try:
            self._read()
        except ModelImportError:
            raise
        except Exception as e:  # the generated reader on a corrupt buffer
            raise ModelImportError("%s: the file is corrupt or truncated (%s: %s)"
                                   % (WHO, type(e).__name__, e)) from None

    def _read(self) -> None:
        tfl = self.tfl
        m = tfl.Model.GetRootAsModel(self.buf, 0)
        self.model = m
        if m.SubgraphsLength() < 1:
            raise ModelImportError("%s: the model has no subgraph" % WHO)
        if not 0 <= self.subgraph < m.SubgraphsLength():
            raise ModelImportError("%s: subgraph %d does not exist (the model has %d)"
                                   % (WHO, self.subgraph, m.SubgraphsLength()))
        g = m.Subgraphs(self.subgraph)
        self.graph = g
        names = {v: k for k, v in vars(tfl.BuiltinOperator).items() if not k.startswith("_")}
        self.opcodes: List[Tuple[int, str, str]] = []
        for i in range(m.OperatorCodesLength()):
            oc = m.OperatorCodes(i)
            code = max(int(oc.BuiltinCode()), int(oc.DeprecatedBuiltinCode()))
            custom = oc.CustomCode()
            name = names.get(code, "BUILTIN_%d" % code)
            if code == getattr(tfl.BuiltinOperator, "CUSTOM", 32) and custom:
                name = "CUSTOM(%s)" % custom.decode("utf-8", "replace")
            self.opcodes.append((code, name, custom.decode("utf-8", "replace") if custom else ""))
        nbuf = m.BuffersLength()
        self.tensors: List[_Tensor] = []
        for i in range(g.TensorsLength()):
            self.tensors.append(self._tensor(i, g.Tensors(i), nbuf))
        self.inputs = [self._index(int(i), "subgraph input") for i in g.InputsAsNumpy()] \
            if g.InputsLength() else []
        self.outputs = [self._index(int(i), "subgraph output") for i in g.OutputsAsNumpy()] \
            if g.OutputsLength() else []
        if not self.outputs:
            raise ModelImportError("%s: the model has no outputs" % WHO)
        self.ops = [_Op(g.Operators(i)) for i in range(g.OperatorsLength())]

    def _index(self, i: int, what: str) -> int:
        if not 0 <= i < len(self.tensors):
            raise ModelImportError("%s: %s refers to tensor %d; the model has %d tensors"
                                   % (WHO, what, i, len(self.tensors)))
        return i

    def _tensor(self, i: int, t: Any, nbuf: int) -> _Tensor:
        name = (t.Name() or b"").decode("utf-8", "replace") or "t%d" % i
        ttype = int(t.Type())
        shape = [int(d) for d in t.ShapeAsNumpy()] if t.ShapeLength() else []
        if any(d < 0 for d in shape):
            raise ModelImportError("%s: tensor %d '%s' has dynamic shape %s; only fixed shapes "
                                   "are supported" % (WHO, i, name, shape))
        dtype, npd = _DTYPES.get(ttype, ("type%d" % ttype, None))
        q = t.Quantization()
        scale = zp = None
        qdim = 0
        if q is not None and q.ScaleLength() > 0:
            scale = q.ScaleAsNumpy().astype(np.float32)
            zp = (q.ZeroPointAsNumpy().astype(np.int64) if q.ZeroPointLength()
                  else np.zeros(scale.size, np.int64))
            qdim = int(q.QuantizedDimension())
            if zp.size != scale.size:
                raise ModelImportError("%s: tensor %d '%s' has %d scales but %d zero points"
                                       % (WHO, i, name, scale.size, zp.size))
            if not np.all(np.isfinite(scale)) or np.any(scale <= 0):
                raise ModelImportError("%s: tensor %d '%s' has a scale that is not a positive "
                                       "finite number" % (WHO, i, name))
            lo, hi = _ZP_RANGE.get(dtype, _ZP_RANGE["int32"])
            bad = zp[(zp < lo) | (zp > hi)]
            if bad.size:
                raise ModelImportError("%s: tensor %d '%s' (%s) has zero point %d; a %s "
                                       "tensor's zero points lie in %d..%d"
                                       % (WHO, i, name, dtype, int(bad[0]), dtype, lo, hi))
        data: Optional[np.ndarray] = None
        b = int(t.Buffer())
        if b < 0 or b >= max(nbuf, 1):
            raise ModelImportError("%s: tensor %d '%s' refers to buffer %d; the model has %d"
                                   % (WHO, i, name, b, nbuf))
        if b > 0:
            raw = self._buffer(b)
            if raw is not None and len(raw) > 0:
                if npd is None:
                    raise ModelImportError("%s: tensor %d '%s' has element type %d, which the "
                                           "importer does not read" % (WHO, i, name, ttype))
                count = 1
                for d in shape:
                    count *= d
                need = count * np.dtype(npd).itemsize
                if t.Sparsity() is not None:
                    # a sparse constant (DENSIFY's input): made dense here
                    who = "%s: tensor %d '%s'" % (WHO, i, name)
                    if len(raw) % np.dtype(npd).itemsize or need > _MAX_DENSE_BYTES:
                        raise ModelImportError("%s: a sparse %s tensor of shape %s (%d bytes "
                                               "dense; at most %d) cannot be stored in %d "
                                               "bytes" % (who, dtype, shape, need,
                                                          _MAX_DENSE_BYTES, len(raw)))
                    data = _densify(t.Sparsity(), np.frombuffer(raw, dtype=npd), shape, who)
                    return _Tensor(i, name, shape, dtype, npd, scale, zp, qdim, data)
                if len(raw) != need:
                    raise ModelImportError("%s: tensor %d '%s' of shape %s %s needs %d bytes, "
                                           "its buffer has %d" % (WHO, i, name, shape, dtype,
                                                                  need, len(raw)))
                data = np.frombuffer(raw, dtype=npd).reshape(shape).copy()
        return _Tensor(i, name, shape, dtype, npd, scale, zp, qdim, data)

    def _buffer(self, b: int) -> Optional[bytes]:
        buf = self.model.Buffers(b)
        off = int(buf.Offset()) if hasattr(buf, "Offset") else 0
        if off > 1:  # data stored after the flatbuffer (large models)
            size = int(buf.Size())
            if off + size > len(self.buf):
                raise ModelImportError("%s: buffer %d lies past the end of the file" % (WHO, b))
            return bytes(self.buf[off:off + size])
        if buf.DataLength() == 0:
            return None
        return buf.DataAsNumpy().tobytes()

    def op_name(self, k: int) -> str:
        idx = self.ops[k].opcode
        if not 0 <= idx < len(self.opcodes):
            raise ModelImportError("%s: operator %d refers to operator code %d; the model has %d"
                                   % (WHO, k, idx, len(self.opcodes)))
        return self.opcodes[idx][1]

    def options(self, op: _Op, cls_name: str) -> Any:
        table = op.table
        if table is None:
            return None
        o = getattr(self.tfl, cls_name)()
        o.Init(table.Bytes, table.Pos)
        return o


# The largest sparse tensor made dense at import (a flatbuffer holds less).
_MAX_DENSE_BYTES = 1 << 31


def _sparse_index_vector(kind: int, table: Any) -> np.ndarray:
    """A SparseIndexVector union member (Int32Vector, Uint16Vector or
    Uint8Vector) as an int64 array."""
    cls = {1: "Int32Vector", 2: "Uint16Vector", 3: "Uint8Vector"}.get(kind)
    if cls is None or table is None:
        raise ValueError("index vector of type %d" % kind)
    v = getattr(_tfl(), cls)()
    v.Init(table.Bytes, table.Pos)
    return (v.ValuesAsNumpy().astype(np.int64) if v.ValuesLength()
            else np.zeros(0, np.int64))


def _densify(sp: Any, values: np.ndarray, shape: List[int], who: str) -> np.ndarray:
    """A sparse TFLite tensor (its SparsityParameters and stored values)
    made dense, as TFLite's sparsity format converter does: the levels of
    dim_metadata in traversal order, each DENSE (dense_size entries) or
    SPARSE_CSR (array_segments and array_indices); levels past the tensor's
    rank are blocks of the dimensions block_map names."""
    rank = len(shape)
    order = [int(v) for v in sp.TraversalOrderAsNumpy()] if sp.TraversalOrderLength() else \
        list(range(rank))
    bmap = [int(v) for v in sp.BlockMapAsNumpy()] if sp.BlockMapLength() else []
    levels = sp.DimMetadataLength()
    if levels != rank + len(bmap) or levels > 16 or sorted(order) != list(range(levels)) or \
            any(not 0 <= d < rank for d in bmap) or len(set(bmap)) != len(bmap):
        raise ModelImportError("%s: sparsity of %d levels, traversal order %s and block map %s "
                               "does not fit shape %s" % (who, levels, order, bmap, shape))
    metas: List[Tuple[int, Optional[np.ndarray], Optional[np.ndarray]]] = []
    try:
        for lv in range(levels):
            m = sp.DimMetadata(lv)
            if int(m.Format()) == 0:
                metas.append((int(m.DenseSize()), None, None))
            else:
                metas.append((0, _sparse_index_vector(int(m.ArraySegmentsType()),
                                                      m.ArraySegments()),
                              _sparse_index_vector(int(m.ArrayIndicesType()),
                                                   m.ArrayIndices())))
    except ValueError as e:
        raise ModelImportError("%s: sparsity with an %s" % (who, e)) from None
    # each level's extent: a dimension (less its blocks) or a block; every
    # DENSE level must give its own, and block levels are DENSE
    blocks = [metas[order.index(rank + k)][0] for k in range(len(bmap))]
    extent = list(shape) + blocks
    for k, d in enumerate(bmap):
        if metas[order.index(rank + k)][1] is not None or blocks[k] < 1 or shape[d] % blocks[k]:
            raise ModelImportError("%s: block %d of size %d does not divide dimension %d of "
                                   "shape %s (or is not dense)" % (who, k, blocks[k], d, shape))
        extent[d] = shape[d] // blocks[k]
    for lv, (size, segs, _) in enumerate(metas):
        if segs is None and size != extent[order[lv]]:
            raise ModelImportError("%s: level %d is dense of size %d, where its dimension has %d"
                                   % (who, lv, size, extent[order[lv]]))
    dense = np.zeros(shape, dtype=values.dtype)
    expanded = [0] * levels
    taken = 0

    def put() -> None:
        nonlocal taken
        idx = list(expanded[:rank])
        for k, d in enumerate(bmap):
            idx[d] = idx[d] * blocks[k] + expanded[rank + k]
        if taken >= values.size or any(not 0 <= idx[d] < shape[d] for d in range(rank)):
            raise ModelImportError("%s: sparse values do not fit shape %s" % (who, shape))
        dense[tuple(idx)] = values[taken]
        taken += 1

    def walk(level: int, prev: int) -> None:
        if level == levels:
            put()
            return
        size, segs, ids = metas[level]
        if segs is None or ids is None:
            for j in range(size):
                expanded[order[level]] = j
                walk(level + 1, prev * size + j)
            return
        if prev + 1 >= segs.size or not 0 <= segs[prev] <= segs[prev + 1] <= ids.size:
            raise ModelImportError("%s: sparse segments out of range" % who)
        for j in range(int(segs[prev]), int(segs[prev + 1])):
            expanded[order[level]] = int(ids[j])
            walk(level + 1, j)

    walk(0, 0)
    if taken != values.size:
        raise ModelImportError("%s: %d sparse values stored, %d placed" % (who, values.size, taken))
    return dense


class _Ctx:
    """One operator being converted."""

    def __init__(self, imp: "_Importer", k: int, op: _Op, name: str) -> None:
        self.imp, self.k, self.op, self.name = imp, k, op, name
        r = imp.r
        self.ins, self.outs = op.inputs, op.outputs
        for i in self.ins:
            if i >= 0:
                r._index(i, "an input of operator %d" % k)
        for i in self.outs:
            r._index(i, "an output of operator %d" % k)
        if not self.outs:
            raise self.error("has no outputs")

    def error(self, msg: str) -> ModelImportError:
        out = self.imp.r.tensors[self.outs[0]].name if self.outs else "?"
        return ModelImportError("%s: operator %d %s (output '%s'): %s"
                                % (WHO, self.k, self.name, out, msg))

    def unsupported(self, msg: str) -> UnsupportedOperatorError:
        """A valid operator in a form the importer cannot map."""
        e = self.error(msg)
        return UnsupportedOperatorError(str(e))

    def t(self, n: int) -> _Tensor:
        """Input n's tensor."""
        if n >= len(self.ins) or self.ins[n] < 0:
            raise self.error("input %d is missing" % n)
        return self.imp.r.tensors[self.ins[n]]

    def has(self, n: int) -> bool:
        return n < len(self.ins) and self.ins[n] >= 0

    @property
    def out(self) -> _Tensor:
        return self.imp.r.tensors[self.outs[0]]

    def expr(self, n: int) -> ir.Expr:
        """Input n as an expression (a constant when the file holds its data)."""
        return self.imp.expr(self.t(n))

    def const(self, n: int, what: str) -> np.ndarray:
        t = self.t(n)
        if t.data is None:
            raise self.error("%s (input %d '%s') must be a constant" % (what, n, t.name))
        return t.data

    def options(self, cls_name: str) -> Any:
        o = self.imp.r.options(self.op, cls_name)
        if o is None:
            raise self.error("its %s are missing" % cls_name)
        return o

    def qparams(self, t: _Tensor) -> Tuple[np.ndarray, np.ndarray]:
        if t.scale is None or t.zero_point is None:
            raise self.error("tensor '%s' (%s) has no quantization parameters" % (t.name, t.dtype))
        return t.scale, t.zero_point

    def qscalar(self, t: _Tensor) -> Tuple[ir.Constant, ir.Constant]:
        """Per-tensor scale and zero point of t as constants."""
        s, z = self.qparams(t)
        if s.size != 1:
            raise self.error("tensor '%s' must be quantized per tensor, it has %d scales"
                             % (t.name, s.size))
        return scalar(s[0], "float32"), scalar(z[0], "int32")


def _act_range_q(ctx: _Ctx, act: int, t: _Tensor) -> Optional[Tuple[int, int]]:
    """TFLite's CalculateActivationRangeQuantized for int8 output t, or None
    when there is no activation."""
    if act == _NONE:
        return None
    s, z = ctx.qparams(t)
    scale, zp = np.float32(s[0]), int(z[0])

    def q(f: float) -> int:
        return zp + _round_away(float(np.float32(f) / scale))

    lo, hi = (-32768, 32767) if t.dtype == "int16" else (-128, 127)
    if act == _RELU:
        return max(lo, q(0.0)), hi
    if act == _RELU6:
        return max(lo, q(0.0)), min(hi, q(6.0))
    if act == _RELU_N1_TO_1:
        return max(lo, q(-1.0)), min(hi, q(1.0))
    raise ctx.unsupported("fused activation %s is not supported" % _ACT_NAMES.get(act, act))


def _activation(ctx: _Ctx, x: ir.Expr, act: int, t: _Tensor) -> ir.Expr:
    if t.dtype in ("int8", "int16"):
        r = _act_range_q(ctx, act, t)
        return x if r is None else call("clip", x, a_min=float(r[0]), a_max=float(r[1]))
    if act == _NONE:
        return x
    if act == _RELU:
        return call("nn.relu", x)
    if act == _RELU6:
        return call("clip", x, a_min=0.0, a_max=6.0)
    if act == _RELU_N1_TO_1:
        return call("clip", x, a_min=-1.0, a_max=1.0)
    raise ctx.unsupported("fused activation %s is not supported" % _ACT_NAMES.get(act, act))


def _same_padding(in_size: int, k: int, stride: int, dil: int) -> Tuple[int, int]:
    eff = (k - 1) * dil + 1
    out = (in_size + stride - 1) // stride
    total = max((out - 1) * stride + eff - in_size, 0)
    return total // 2, total - total // 2


def _padding(ctx: _Ctx, padding: int, hw: Sequence[int], k: Sequence[int],
             strides: Sequence[int], dil: Sequence[int]) -> List[int]:
    """[top, left, bottom, right] of TFLite's SAME (0) or VALID (1)."""
    if padding == 1:
        return [0, 0, 0, 0]
    if padding != 0:
        raise ctx.error("padding %d is neither SAME nor VALID" % padding)
    t, b = _same_padding(hw[0], k[0], strides[0], dil[0])
    left, r = _same_padding(hw[1], k[1], strides[1], dil[1])
    return [t, left, b, r]


def _positive(ctx: _Ctx, what: str, *vals: int) -> None:
    for v in vals:
        if v < 1:
            raise ctx.error("%s must be positive, got %d" % (what, v))


# ---- converters: each returns the output expression ---------------------

def _conv(ctx: _Ctx, depthwise: bool) -> ir.Expr:
    o = ctx.options("DepthwiseConv2DOptions" if depthwise else "Conv2DOptions")
    x, w = ctx.t(0), ctx.t(1)
    wd = ctx.const(1, "the filter")
    if len(x.shape) != 4 or wd.ndim != 4:
        raise ctx.error("expects a 4-d NHWC input and a 4-d filter, got %s and %s"
                        % (x.shape, list(wd.shape)))
    strides = [int(o.StrideH()), int(o.StrideW())]
    dil = [int(o.DilationHFactor()), int(o.DilationWFactor())]
    _positive(ctx, "strides", *strides)
    _positive(ctx, "dilation", *dil)
    cin = x.shape[3]
    if depthwise:
        # [1, kh, kw, cin * multiplier] -> HWIO [kh, kw, 1, cout], groups = cin
        if wd.shape[0] != 1 or cin < 1 or wd.shape[3] % cin:
            raise ctx.error("depthwise filter %s does not fit %d input channels"
                            % (list(wd.shape), cin))
        kern = wd.reshape(wd.shape[1], wd.shape[2], 1, wd.shape[3])
        groups = cin
    else:
        # OHWI -> HWIO
        kern = np.ascontiguousarray(wd.transpose(1, 2, 3, 0))
        if kern.shape[2] < 1 or cin % kern.shape[2]:
            raise ctx.error("filter %s does not fit %d input channels" % (list(wd.shape), cin))
        groups = cin // kern.shape[2]
    cout = kern.shape[3]
    pad = _padding(ctx, int(o.Padding()), x.shape[1:3], kern.shape[:2], strides, dil)
    attrs = dict(strides=strides, padding=pad, dilation=dil, groups=groups, channels=cout,
                 kernel_size=[int(kern.shape[0]), int(kern.shape[1])], data_layout="NHWC",
                 kernel_layout="HWIO")
    return _conv_like(ctx, "conv2d", kern, attrs, axis=3,
                      act=int(o.FusedActivationFunction()))


def _int8_layer_qparams(ctx: _Ctx, x: _Tensor, w: _Tensor, out: _Tensor, cout: int,
                        int16: bool = False) -> Tuple[
        np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The input scale and zero point, the filter's scales (per tensor or
    per output channel, zero points 0) and the output's scale and zero
    point of an int8 convolution-like layer (or, with int16, of TFLite's
    16x8 one: int16 activations, int8 weights)."""
    wide = int16 and x.dtype == out.dtype == "int16"
    if (x.dtype != "int8" and not wide) or w.dtype != "int8" or out.dtype != x.dtype:
        raise ctx.unsupported("input, filter and output types %s, %s, %s are not supported "
                              "(%s)" % (x.dtype, w.dtype, out.dtype,
                                        "float32, int8, or int16 with an int8 filter"
                                        if int16 else "float32 or int8"))
    sx, zx = ctx.qparams(x)
    sw, zw = ctx.qparams(w)
    so, zo = ctx.qparams(out)
    if sw.size not in (1, cout):
        raise ctx.error("the filter has %d scales for %d output channels" % (sw.size, cout))
    if w.shifted:
        if not (x.shifted and out.shifted) or sw.size != 1:
            raise ctx.unsupported("a uint8 filter needs uint8 input and output and one scale")
    elif np.any(zw != 0):
        raise ctx.error("int8 filters must have zero point 0")
    elif x.shifted or out.shifted:
        raise ctx.unsupported("uint8 input or output with an int8 filter is not supported")
    return sx, zx, sw, so, zo


def _conv_like(ctx: _Ctx, kind: str, kern: np.ndarray, attrs: Dict[str, Any], axis: int,
               act: int, data: Optional[ir.Expr] = None) -> ir.Expr:
    """conv2d or dense, + bias, + activation; int8 through qnn and requantize."""
    x, w, out = ctx.t(0), ctx.t(1), ctx.out
    xe = data if data is not None else ctx.expr(0)
    bias = ctx.const(2, "the bias") if ctx.has(2) else None
    cout = kern.shape[3] if kind == "conv2d" else kern.shape[0]
    if bias is not None and bias.size != cout:
        raise ctx.error("bias has %d values for %d output channels" % (bias.size, cout))
    if x.dtype == "float32":
        if w.dtype == "int8" and w.quantized and _hybrid_exact(ctx, kind, w, attrs):
            # a hybrid layer LiteRT computes with symmetric input
            # quantization: its arithmetic (tflite_hybrid.py)
            y = _hybrid.layer(kind, xe, kern, float(ctx.qparams(w)[0][0]), bias, axis, **attrs)
            return _activation(ctx, y, act, out)
        if w.dtype == "int8" and w.quantized:
            # another hybrid layer (float activations, int8 weights): the
            # weights are dequantized here and the layer computes in float32
            sw, zw = ctx.qparams(w)
            ch_axis = 3 if kind == "conv2d" else 0
            shape = [1] * kern.ndim
            if sw.size > 1:
                if sw.size != kern.shape[ch_axis]:
                    raise ctx.error("the filter has %d scales for %d output channels"
                                    % (sw.size, kern.shape[ch_axis]))
                shape[ch_axis] = sw.size
            kern = ((kern.astype(np.float32) - zw.reshape(shape).astype(np.float32))
                    * sw.reshape(shape).astype(np.float32)).astype(np.float32)
        elif w.dtype != "float32":
            raise ctx.unsupported("float32 input with a %s filter is not supported" % w.dtype)
        y = call("nn." + kind, xe, ir.const(kern), **attrs)
        if bias is not None:
            y = call("nn.bias_add", y, ir.const(bias.astype(np.float32)), axis=axis)
        return _activation(ctx, y, act, out)
    # int8, or TFLite's 16x8: int16 activations, int8 weights, int64 sums
    wide = x.dtype == out.dtype == "int16"
    sx, zx, sw, so, zo = _int8_layer_qparams(ctx, x, w, out, cout, int16=True)
    per_channel = sw.size > 1
    kzp = int(ctx.qparams(w)[1][0]) if w.shifted else 0
    if (kind == "conv2d" or per_channel) and not w.shifted:
        # TFLite: double(input_scale) * double(filter_scale[c])
        acc_scale = np.float64(sx[0]) * sw.astype(np.float64)
    else:
        # TFLite's fully-connected and every uint8 layer: the product in
        # float, then double
        acc_scale = np.array([np.float32(sx[0]) * np.float32(sw[0])], np.float64)
    acc = "int64" if wide else "int32"
    if wide and (zx[0] != 0 or zo[0] != 0):
        raise ctx.error("int16 input and output must have zero point 0, got %d and %d"
                        % (zx[0], zo[0]))
    y = call("qnn." + kind, xe, ir.const(kern), scalar(zx[0], "int32"), scalar(kzp, "int32"),
             scalar(sx[0], "float32"), vector_or_scalar(sw, "float32"), out_dtype=acc,
             **attrs)
    if bias is not None:
        if bias.dtype != np.dtype(acc):
            raise ctx.error("an %s layer's bias must be %s, got %s" % (x.dtype, acc, bias.dtype))
        y = call("nn.bias_add", y, ir.const(bias), axis=axis)
    y = call("qnn.requantize", y, vector_or_scalar(acc_scale, "float64"), scalar(0, "int32"),
             scalar(so[0], "float32"), scalar(zo[0], "int32"), axis=axis, out_dtype=x.dtype)
    return _activation(ctx, y, act, out)


def _hybrid_exact(ctx: _Ctx, kind: str, w: _Tensor, attrs: Dict[str, Any]) -> bool:
    """Whether LiteRT computes this hybrid layer with symmetric input
    quantization (tflite_hybrid.py): a fully-connected layer without
    asymmetric_quantize_inputs, or an ungrouped convolution, with one
    filter scale (a convolution's several equal scales count as one) and
    zero point 0."""
    sw, zw = ctx.qparams(w)
    if np.any(zw != 0):
        return False
    if kind == "dense":
        o = ctx.imp.r.options(ctx.op, "FullyConnectedOptions")
        return sw.size == 1 and not (o is not None and bool(o.AsymmetricQuantizeInputs()))
    return ctx.name == "CONV_2D" and int(attrs.get("groups", 1)) == 1 and \
        bool(np.all(sw == sw[0]))


def _fully_connected(ctx: _Ctx) -> ir.Expr:
    o = ctx.imp.r.options(ctx.op, "FullyConnectedOptions")
    act = int(o.FusedActivationFunction()) if o is not None else _NONE
    if o is not None and int(o.WeightsFormat()) != 0:
        raise ctx.unsupported("weights format %d is not supported (DEFAULT only)" % o.WeightsFormat())
    x = ctx.t(0)
    wd = ctx.const(1, "the weights")
    if wd.ndim != 2:
        raise ctx.error("weights must be 2-d [units, depth], got %s" % list(wd.shape))
    units, depth = wd.shape
    n = 1
    for d in x.shape:
        n *= d
    if depth < 1 or n % depth:
        raise ctx.error("input %s does not divide into rows of %d" % (x.shape, depth))
    xe = ctx.expr(0)
    if len(x.shape) != 2 or x.shape[1] != depth:
        xe = call("reshape", xe, newshape=[n // depth, depth])
    y = _conv_like(ctx, "dense", wd, dict(units=int(units)), axis=-1, act=act, data=xe)
    keep = o is not None and bool(o.KeepNumDims())
    if keep and len(ctx.out.shape) != 2:
        y = call("reshape", y, newshape=list(ctx.out.shape))
    return y


def _pool_window(ctx: _Ctx) -> Tuple[Any, List[int], List[int], List[int]]:
    """A pooling operator's options, window, strides and padding."""
    o = ctx.options("Pool2DOptions")
    x = ctx.t(0)
    if len(x.shape) != 4:
        raise ctx.error("expects a 4-d NHWC input, got %s" % x.shape)
    k = [int(o.FilterHeight()), int(o.FilterWidth())]
    s = [int(o.StrideH()), int(o.StrideW())]
    _positive(ctx, "the window", *k)
    _positive(ctx, "strides", *s)
    return o, k, s, _padding(ctx, int(o.Padding()), x.shape[1:3], k, s, [1, 1])


def _pool(ctx: _Ctx, kind: str) -> ir.Expr:
    o, k, s, pad = _pool_window(ctx)
    x = ctx.t(0)
    if x.dtype in ("int8", "int16"):
        if not _same_quant(ctx, x, ctx.out):
            raise ctx.error("%s pooling needs the same scale and zero point in and out"
                            % x.dtype)
    elif x.dtype != "float32":
        raise ctx.unsupported("%s input is not supported (float32, int8 or int16)" % x.dtype)
    xe = ctx.expr(0)
    unshift = kind == "avg_pool2d" and x.shifted
    if unshift:
        # LiteRT's uint8 average rounds half up, the int8 one half away from
        # zero: the average is taken of the uint8 values (as int16, where
        # they are never negative and the two agree)
        sx, zx = ctx.qscalar(x)
        zu = scalar(int(ctx.qparams(x)[1][0]) + _UINT8_SHIFT, "int32")
        xe = call("qnn.requantize", xe, sx, zx, sx, zu, out_dtype="int16")
    y = call("nn." + kind, xe, pool_size=k, strides=s, padding=pad, layout="NHWC")
    if unshift:
        y = call("qnn.requantize", y, sx, zu, sx, zx, out_dtype="int8")
    return _activation(ctx, y, int(o.FusedActivationFunction()), ctx.out)


def _same_quant(ctx: _Ctx, a: _Tensor, b: _Tensor) -> bool:
    sa, za = ctx.qparams(a)
    sb, zb = ctx.qparams(b)
    return bool(sa.size == sb.size and np.all(sa == sb) and np.all(za == zb))


# int8 MUL is qnn.mul (the float operator is "multiply")
_QNN_NAME = {"multiply": "mul"}


def _binary(ctx: _Ctx, kind: str) -> ir.Expr:
    o = ctx.imp.r.options(ctx.op, "AddOptions" if kind == "add" else "MulOptions")
    act = int(o.FusedActivationFunction()) if o is not None else _NONE
    a, b, out = ctx.t(0), ctx.t(1), ctx.out
    if a.dtype == "float32" and b.dtype == "float32":
        return _activation(ctx, call(kind, ctx.expr(0), ctx.expr(1)), act, out)
    if a.dtype == b.dtype == out.dtype and a.dtype in ("int8", "int16"):
        qa, qb, qo = ctx.qscalar(a), ctx.qscalar(b), ctx.qscalar(out)
        y = call("qnn." + _QNN_NAME.get(kind, kind), ctx.expr(0), ctx.expr(1), *qa, *qb, *qo)
        return _activation(ctx, y, act, out)
    if a.dtype == b.dtype == out.dtype == "int32":
        return _activation(ctx, call(kind, ctx.expr(0), ctx.expr(1)), act, out)
    raise ctx.unsupported("operand types %s, %s -> %s are not supported" % (a.dtype, b.dtype, out.dtype))


def _reshape(ctx: _Ctx) -> ir.Expr:
    x, out = ctx.t(0), ctx.out
    if x.dtype == "int8" and out.quantized and not _same_quant(ctx, x, out):
        raise ctx.error("an int8 reshape must keep its scale and zero point")
    return call("reshape", ctx.expr(0), newshape=list(out.shape))


def _squeeze(ctx: _Ctx) -> ir.Expr:
    return call("reshape", ctx.expr(0), newshape=list(ctx.out.shape))


def _softmax(ctx: _Ctx) -> ir.Expr:
    o = ctx.imp.r.options(ctx.op, "SoftmaxOptions")
    beta = float(o.Beta()) if o is not None else 1.0
    x, out = ctx.t(0), ctx.out
    if x.dtype == "float32":
        xe = ctx.expr(0)
        if beta != 1.0:
            xe = call("multiply", xe, scalar(beta, "float32"))
        return call("nn.softmax", xe, axis=-1)
    if x.dtype == "int8" and out.dtype in ("int8", "int16"):
        return call("qnn.softmax", ctx.expr(0), *ctx.qscalar(x), *ctx.qscalar(out), axis=-1,
                    beta=beta, out_dtype=out.dtype)
    if x.dtype == out.dtype == "int16":
        # TFLite Micro's int16 softmax: zero points 0, output 1/32768
        # (within a thousandth of it, as its prepare checks in float)
        _s16_zero_points(ctx, x, out)
        so = np.float32(ctx.qparams(out)[0][0])
        if abs(so - np.float32(1.0 / 32768)) > np.float32(0.001) * np.float32(1.0 / 32768):
            raise ctx.unsupported("an int16 softmax needs output scale 1/32768, got %g"
                                  % float(so))
        return call("qnn.softmax", ctx.expr(0), *ctx.qscalar(x), *ctx.qscalar(out), axis=-1,
                    beta=beta, out_dtype="int16")
    raise ctx.unsupported("%s -> %s is not supported (float32, int8 -> int8 or int16, "
                          "int16 -> int16)" % (x.dtype, out.dtype))


def _s16_zero_points(ctx: _Ctx, x: _Tensor, out: _Tensor) -> None:
    """TFLite Micro's int16 LOGISTIC, TANH and SOFTMAX take zero point 0
    in and out."""
    zx, zo = int(ctx.qparams(x)[1][0]), int(ctx.qparams(out)[1][0])
    if zx != 0 or zo != 0:
        raise ctx.unsupported("int16 input and output must have zero point 0, got %d and %d"
                              % (zx, zo))


# QUANTIZE's integer pairs TFLite Micro runs (quantize_common.cc): each is
# its Requantize, with multiplier double(s_in) / double(s_out).
_REQUANTIZE_PAIRS = {("int8", "int8"), ("int8", "uint8"), ("uint8", "int8"),
                     ("int8", "int16"), ("int8", "int32"), ("int16", "int8"),
                     ("int16", "int16"), ("int16", "int32"), ("int32", "int8"),
                     ("int32", "int16"), ("uint8", "uint8")}


def _stored(t: _Tensor) -> str:
    """t's dtype in the file (uint8 for a shifted tensor)."""
    return "uint8" if t.shifted else t.dtype


def _quantize(ctx: _Ctx) -> ir.Expr:
    x, out = ctx.t(0), ctx.out
    if x.dtype == "float32":
        if _stored(out) not in ("int8", "int16"):
            raise ctx.unsupported("quantizing float32 to %s is not supported (int8 or int16)"
                                  % _stored(out))
        so, zo = ctx.qparams(out)
        return call("qnn.quantize", ctx.expr(0), vector_or_scalar(so, "float32"),
                    vector_or_scalar(zo, "int32"), axis=out.qdim - len(out.shape)
                    if so.size > 1 else -1, out_dtype=out.dtype)
    if (_stored(x), _stored(out)) in _REQUANTIZE_PAIRS:
        return call("qnn.requantize", ctx.expr(0), *ctx.qscalar(x), *ctx.qscalar(out),
                    out_dtype=out.dtype)
    raise ctx.unsupported("quantizing %s to %s is not supported (float32 to int8 or int16, "
                          "or %s)" % (_stored(x), _stored(out), ", ".join(
                              "%s to %s" % p for p in sorted(_REQUANTIZE_PAIRS))))


def _densify_op(ctx: _Ctx) -> _Result:
    """DENSIFY: its input, a sparse constant, was made dense when read; the
    output is that constant (so DEQUANTIZE of float16 weights after it
    folds too)."""
    x, out = ctx.t(0), ctx.out
    dense = ctx.const(0, "the sparse tensor")
    if list(out.shape) != list(x.shape) or out.dtype != x.dtype:
        raise ctx.error("output %s %s differs from the input %s %s"
                        % (out.shape, out.dtype, x.shape, x.dtype))
    return dense


def _dequantize(ctx: _Ctx) -> _Result:
    """qnn.dequantize; a constant is dequantized here (and the converter's
    float16 weights widened, exactly), so that the layers reading it see a
    constant filter."""
    x = ctx.t(0)
    if x.dtype == "float16" and x.data is not None:
        return x.data.astype(np.float32)
    if x.dtype not in ("int8", "uint8", "int16"):
        raise ctx.unsupported("dequantizing %s is not supported (int8, uint8 or int16, or a "
                              "float16 constant)" % x.dtype)
    s, z = ctx.qparams(x)
    if x.data is not None:  # a constant: dequantize it here
        axis = x.qdim if s.size > 1 else 0
        shape = [1] * x.data.ndim
        if s.size > 1:
            shape[axis] = s.size
        real = (x.data.astype(np.float32) - z.reshape(shape).astype(np.float32)) * \
            s.reshape(shape).astype(np.float32)
        return real.astype(np.float32)
    return call("qnn.dequantize", ctx.expr(0), vector_or_scalar(s, "float32"),
                vector_or_scalar(z, "int32"), axis=x.qdim - len(x.shape) if s.size > 1 else -1)


def _unary_act(ctx: _Ctx, act: int) -> ir.Expr:
    """RELU, RELU6, RELU_N1_TO_1 as operators: a clip, after TFLite's
    rescale when int8 scales differ."""
    x, out = ctx.t(0), ctx.out
    if x.dtype == "float32":
        return _activation(ctx, ctx.expr(0), act, out)
    if x.dtype == out.dtype == "int8":
        xe = ctx.expr(0)
        if act == _RELU6:
            # TFLite Micro's RELU6 clamps in the input's quantization and
            # does not rescale (its converter gives both the same)
            r = _act_range_q(ctx, act, x)
            assert r is not None
            return call("clip", xe, a_min=float(r[0]), a_max=float(r[1]))
        if not _same_quant(ctx, x, out):
            xe = call("qnn.requantize", xe, *ctx.qscalar(x), *ctx.qscalar(out), out_dtype="int8")
        r = _act_range_q(ctx, act, out)
        assert r is not None
        return call("clip", xe, a_min=float(r[0]), a_max=float(r[1]))
    raise ctx.unsupported("%s -> %s is not supported" % (x.dtype, out.dtype))


def _logistic_tanh(ctx: _Ctx, kind: str) -> ir.Expr:
    x, out = ctx.t(0), ctx.out
    if x.dtype == "float32":
        return call(kind, ctx.expr(0))
    if x.dtype == out.dtype == "int8":
        return call("qnn." + kind, ctx.expr(0), *ctx.qscalar(x), *ctx.qscalar(out))
    if x.dtype == out.dtype == "int16":
        # TFLite Micro's: zero points 0, output scale 2^-15 (its CheckedLog2:
        # within 1e-3 of -15 in the log); the input scale is free
        _s16_zero_points(ctx, x, out)
        so = float(np.float32(ctx.qparams(out)[0][0]))
        if not so > 0 or abs(np.log2(so) + 15) >= 1e-3:
            raise ctx.unsupported("an int16 %s needs output scale 2^-15, got %g"
                                  % ("tanh" if kind == "tanh" else "logistic", so))
        return call("qnn." + kind, ctx.expr(0), *ctx.qscalar(x), *ctx.qscalar(out))
    raise ctx.unsupported("%s -> %s is not supported (float32, int8, int16)"
                          % (x.dtype, out.dtype))


def _fused_act(ctx: _Ctx, table: str) -> int:
    o = ctx.imp.r.options(ctx.op, table)
    return int(o.FusedActivationFunction()) if o is not None else _NONE


def _sub(ctx: _Ctx) -> ir.Expr:
    """SUB: subtract (float32, int32) or qnn.subtract (int8, TFLite's
    rescaled difference), then the fused activation."""
    act = _fused_act(ctx, "SubOptions")
    a, b, out = ctx.t(0), ctx.t(1), ctx.out
    if a.dtype == b.dtype == out.dtype and a.dtype in ("float32", "int32"):
        return _activation(ctx, call("subtract", ctx.expr(0), ctx.expr(1)), act, out)
    if a.dtype == b.dtype == out.dtype == "int8":
        return _activation(ctx, _qbinary(ctx, "subtract"), act, out)
    raise ctx.unsupported("operand types %s, %s -> %s are not supported"
                          % (a.dtype, b.dtype, out.dtype))


def _qbinary(ctx: _Ctx, name: str) -> ir.Expr:
    """qnn.<name> of inputs 0 and 1, each with its per-tensor
    quantization, and the output's."""
    return call("qnn." + name, ctx.expr(0), ctx.expr(1), *ctx.qscalar(ctx.t(0)),
                *ctx.qscalar(ctx.t(1)), *ctx.qscalar(ctx.out))


def _div(ctx: _Ctx) -> ir.Expr:
    act = _fused_act(ctx, "DivOptions")
    a, b, out = ctx.t(0), ctx.t(1), ctx.out
    if a.dtype == b.dtype == out.dtype == "float32":
        return _activation(ctx, call("divide", ctx.expr(0), ctx.expr(1)), act, out)
    if a.dtype == b.dtype == out.dtype == "int8":
        # TFLite Micro's reciprocal-and-multiply; a divisor at its zero
        # point gives what the installed build computes (see mm_s16.c)
        return _activation(ctx, _qbinary(ctx, "divide"), act, out)
    raise ctx.unsupported("operand types %s, %s -> %s are not supported (float32, int8)"
                          % (a.dtype, b.dtype, out.dtype))


def _prelu(ctx: _Ctx) -> ir.Expr:
    x, alpha, out = ctx.t(0), ctx.t(1), ctx.out
    if x.dtype == alpha.dtype == out.dtype == "float32":
        return call("nn.prelu", ctx.expr(0), ctx.expr(1))
    if x.dtype == alpha.dtype == out.dtype == "int8":
        return _qbinary(ctx, "prelu")
    raise ctx.unsupported("data, alpha types %s, %s -> %s are not supported (float32, int8)"
                          % (x.dtype, alpha.dtype, out.dtype))


def _min_max(ctx: _Ctx, kind: str) -> ir.Expr:
    """MAXIMUM, MINIMUM: TFLite compares the stored values whatever the
    quantization (int8 included), so the plain operator serves them all."""
    a, b, out = ctx.t(0), ctx.t(1), ctx.out
    if a.dtype == b.dtype == out.dtype and a.dtype in ("float32", "int8", "int32"):
        return call(kind, ctx.expr(0), ctx.expr(1))
    raise ctx.unsupported("operand types %s, %s -> %s are not supported"
                          % (a.dtype, b.dtype, out.dtype))


def _squared_difference(ctx: _Ctx) -> ir.Expr:
    a, b, out = ctx.t(0), ctx.t(1), ctx.out
    if a.dtype == b.dtype == out.dtype and a.dtype in ("float32", "int32"):
        d = call("subtract", ctx.expr(0), ctx.expr(1))  # TFLite: d * d
        return call("multiply", d, d)
    if a.dtype == b.dtype == out.dtype == "int8":
        return _qbinary(ctx, "squared_difference")
    raise ctx.unsupported("operand types %s, %s -> %s are not supported (float32, int32, int8)"
                          % (a.dtype, b.dtype, out.dtype))


# what TFLite Micro's CAST converts from and to
_CAST_FROM = ("float32", "int8", "int16", "int32", "bool", "uint8")
_CAST_TO = ("float32", "int8", "int16", "int32")


def _cast(ctx: _Ctx) -> ir.Expr:
    """CAST converts stored values (no quantization is applied)."""
    x, out = ctx.t(0), ctx.out
    if x.dtype not in _CAST_FROM or out.dtype not in _CAST_TO:
        raise ctx.unsupported("casting %s to %s is not supported" % (x.dtype, out.dtype))
    if x.dtype == out.dtype:
        return ctx.expr(0)
    return call("cast", ctx.expr(0), dtype=out.dtype)


def _leaky_relu(ctx: _Ctx) -> ir.Expr:
    o = ctx.imp.r.options(ctx.op, "LeakyReluOptions")
    alpha = float(o.Alpha()) if o is not None else 0.0
    x, out = ctx.t(0), ctx.out
    if x.dtype == out.dtype == "float32":
        return call("nn.leaky_relu", ctx.expr(0), alpha=alpha)
    if x.dtype == out.dtype == "int8":
        return call("qnn.leaky_relu", ctx.expr(0), *ctx.qscalar(x), *ctx.qscalar(out),
                    alpha=alpha)
    raise ctx.unsupported("%s -> %s is not supported" % (x.dtype, out.dtype))


# the float operators of _math's kinds that live in nn
_FLOAT_NAME = {"elu": "nn.elu", "hard_swish": "nn.hard_swish"}


def _math(ctx: _Ctx, kind: str, quantized: bool) -> ir.Expr:
    """A float32 unary operator; `quantized` when TFLite has its int8
    form too (qnn.<kind>)."""
    x, out = ctx.t(0), ctx.out
    if x.dtype == out.dtype == "float32":
        return call(_FLOAT_NAME.get(kind, kind), ctx.expr(0))
    if quantized and x.dtype == out.dtype == "int8":
        return call("qnn." + kind, ctx.expr(0), *ctx.qscalar(x), *ctx.qscalar(out))
    raise ctx.unsupported("%s -> %s is not supported (float32%s)"
                          % (x.dtype, out.dtype, " or int8" if quantized else ""))


def _pad(ctx: _Ctx) -> ir.Expr:
    x, out = ctx.t(0), ctx.out
    p = ctx.const(1, "the paddings")
    if p.shape != (len(x.shape), 2):
        raise ctx.error("paddings must have shape [%d, 2], got %s" % (len(x.shape), list(p.shape)))
    value = 0.0
    if x.dtype in ("int8", "int16") and x.quantized:
        if not _same_quant(ctx, x, out):
            raise ctx.error("an %s pad must keep its scale and zero point" % x.dtype)
        value = float(ctx.qparams(x)[1][0])
    if ctx.has(2):  # PADV2's constant value
        cv = ctx.const(2, "the pad value").reshape(-1)
        if cv.size != 1:
            raise ctx.error("the pad value must be a scalar")
        value = float(cv[0])
    return call("nn.pad", ctx.expr(0), pad_width=[[int(a), int(b)] for a, b in p],
                pad_value=value)


def _concat(ctx: _Ctx) -> ir.Expr:
    o = ctx.options("ConcatenationOptions")
    out = ctx.out
    axis = int(o.Axis())
    xs = []
    for n in range(len(ctx.ins)):
        t = ctx.t(n)
        e = ctx.expr(n)
        if out.dtype == "int8" and not _same_quant(ctx, t, out):
            if t.shifted or out.shifted:
                # LiteRT rescales uint8 parts in float, not as a requantize
                raise ctx.unsupported("uint8 parts must have the output's scale and zero "
                                      "point")
            e = call("qnn.requantize", e, *ctx.qscalar(t), *ctx.qscalar(out), out_dtype="int8")
        xs.append(e)
    y = call("concatenate", ir.Tuple(xs), axis=axis)
    return _activation(ctx, y, int(o.FusedActivationFunction()), out)


def _transpose(ctx: _Ctx) -> ir.Expr:
    perm = ctx.const(1, "the permutation").reshape(-1)
    return call("transpose", ctx.expr(0), axes=[int(a) for a in perm])


def _mean(ctx: _Ctx) -> ir.Expr:
    o = ctx.imp.r.options(ctx.op, "ReducerOptions")
    keep = bool(o.KeepDims()) if o is not None else False
    x, out = ctx.t(0), ctx.out
    rank = len(x.shape)
    raw = [int(a) for a in ctx.const(1, "the axes").reshape(-1)]
    if any(not -rank <= a < rank for a in raw):
        raise ctx.error("axes %s are out of range for a rank-%d input" % (raw, rank))
    axes = sorted({a % rank for a in raw})
    if not axes:  # TFLite: no axes, no reduction (the IR's empty axis means all)
        if x.dtype == out.dtype and x.dtype in ("int8", "int16") and \
                not _same_quant(ctx, x, out):
            return call("qnn.requantize", ctx.expr(0), *ctx.qscalar(x), *ctx.qscalar(out),
                        out_dtype=x.dtype)
        return ctx.expr(0)
    if x.dtype == "float32":
        return call("mean", ctx.expr(0), axis=axes, keepdims=keep)
    if x.dtype == out.dtype and x.dtype in ("int8", "int16"):
        return call("qnn.mean", ctx.expr(0), *ctx.qscalar(x), *ctx.qscalar(out), axis=axes,
                    keepdims=keep)
    raise ctx.unsupported("%s -> %s is not supported" % (x.dtype, out.dtype))


def _slice_spec(ctx: _Ctx) -> Tuple[List[int], List[int], List[int], int]:
    """STRIDED_SLICE's begin, end and strides with its begin, end and
    shrink masks resolved to numpy's slicing (TFLite's StartForAxis and
    StopForAxis clamp as numpy does), and the shrink mask."""
    o = ctx.options("StridedSliceOptions")
    x = ctx.t(0)
    rank = len(x.shape)
    begin = [int(v) for v in ctx.const(1, "begin").reshape(-1)]
    end = [int(v) for v in ctx.const(2, "end").reshape(-1)]
    strides = [int(v) for v in ctx.const(3, "strides").reshape(-1)] if ctx.has(3) else [1] * rank
    if not len(begin) == len(end) == len(strides) == rank:
        raise ctx.error("begin, end and strides must each have %d values" % rank)
    if int(o.EllipsisMask()) or int(o.NewAxisMask()):
        raise ctx.unsupported("ellipsis and new-axis masks are not supported (TFLite Micro "
                              "ignores them)")
    if hasattr(o, "Offset") and bool(o.Offset()):
        raise ctx.unsupported("offset slices are not supported (TFLite Micro ignores them)")
    bm, em, sm = int(o.BeginMask()), int(o.EndMask()), int(o.ShrinkAxisMask())
    for i in range(rank):
        n = x.shape[i]
        if strides[i] == 0:
            raise ctx.error("the stride of axis %d is 0" % i)
        if sm >> i & 1:
            b = begin[i] + n if begin[i] < 0 else begin[i]
            if not 0 <= b < n:
                raise ctx.error("shrunk axis %d takes index %d of %d" % (i, begin[i], n))
            begin[i], end[i], strides[i] = b, b + 1, 1
            continue
        if bm >> i & 1:
            begin[i] = 0 if strides[i] > 0 else n - 1
        if em >> i & 1:
            end[i] = n if strides[i] > 0 else -n - 1
    return begin, end, strides, sm


def _strided_slice(ctx: _Ctx) -> ir.Expr:
    begin, end, strides, sm = _slice_spec(ctx)
    y = call("strided_slice", ctx.expr(0), begin=begin, end=end, strides=strides)
    if sm:
        y = call("reshape", y, newshape=list(ctx.out.shape))
    return y


def _resize(ctx: _Ctx, method: str) -> ir.Expr:
    """RESIZE_BILINEAR / RESIZE_NEAREST_NEIGHBOR: image.resize2d with the
    file's flags; int8 values are resized as they are (TFLite Micro keeps
    the quantization and does no rescaling)."""
    table = "ResizeBilinearOptions" if method == "linear" else "ResizeNearestNeighborOptions"
    o = ctx.imp.r.options(ctx.op, table)
    align = bool(o.AlignCorners()) if o is not None else False
    half = bool(o.HalfPixelCenters()) if o is not None else False
    x = ctx.t(0)
    if len(x.shape) != 4:
        raise ctx.error("expects a 4-d NHWC input, got %s" % x.shape)
    size = [int(v) for v in ctx.const(1, "the size").reshape(-1)]
    if len(size) != 2:
        raise ctx.error("the size must have 2 values (height, width), got %d" % len(size))
    if align and half:
        raise ctx.error("align_corners and half_pixel_centers cannot both be set")
    if x.shifted and method == "linear":
        return _resize_bilinear_u8(ctx, size, align, half)
    ok = ("float32", "int8") if method == "linear" else ("float32", "int8", "int16")
    if x.dtype not in ok or ctx.out.dtype != x.dtype or x.shifted != ctx.out.shifted:
        raise ctx.unsupported("%s -> %s is not supported (%s)" % (x.dtype, ctx.out.dtype,
                                                                  ", ".join(ok)))
    return call("image.resize2d", ctx.expr(0), size=size, method=method, align_corners=align,
                half_pixel_centers=half, layout="NHWC")


def _resize_bilinear_u8(ctx: _Ctx, size: List[int], align: bool, half: bool) -> ir.Expr:
    """uint8 RESIZE_BILINEAR as LiteRT's reference computes it: the float
    interpolation of the uint8 values, + 0.5, truncated (unlike the int8
    form's fixed point); here on the shifted values moved back to 0..255
    in float32, and the result shifted again."""
    if not ctx.out.shifted:
        raise ctx.unsupported("uint8 -> %s is not supported (uint8)" % ctx.out.dtype)
    f = call("add", call("cast", ctx.expr(0), dtype="float32"), scalar(_UINT8_SHIFT, "float32"))
    y = call("image.resize2d", f, size=size, method="linear", align_corners=align,
             half_pixel_centers=half, layout="NHWC")
    y = call("cast", call("add", y, scalar(0.5, "float32")), dtype="int32")
    return call("cast", call("subtract", y, scalar(_UINT8_SHIFT, "int32")), dtype="int8")


def _batch_matmul(ctx: _Ctx) -> ir.Expr:
    """BATCH_MATMUL: nn.batch_matmul (float32), or qnn.batch_matmul and a
    requantize by input_scale * filter_scale / output_scale in double, as
    TFLite Micro computes its multiplier (int8, and int16 with int64 sums)."""
    o = ctx.imp.r.options(ctx.op, "BatchMatMulOptions")
    adj_x = bool(o.AdjX()) if o is not None else False
    adj_y = bool(o.AdjY()) if o is not None else False
    a, b, out = ctx.t(0), ctx.t(1), ctx.out
    for t in (a, b):
        if not 2 <= len(t.shape) <= 5:
            raise ctx.error("operands must have 2 to 5 dimensions, got %s" % t.shape)
    if a.dtype == b.dtype == out.dtype == "float32":
        return call("nn.batch_matmul", ctx.expr(0), ctx.expr(1), adj_x=adj_x, adj_y=adj_y)
    if a.dtype == b.dtype == out.dtype and a.dtype in ("int8", "int16"):
        # int16 (16x8): zero points 0 and int64 sums, as TFLite Micro checks
        # and accumulates them
        if a.dtype == "int16" and any(int(ctx.qparams(t)[1][0]) != 0 for t in (a, b, out)):
            raise ctx.error("int16 operands and output must have zero point 0")
        sa, za = ctx.qscalar(a)
        sb, zb = ctx.qscalar(b)
        so, zo = ctx.qscalar(out)
        y = call("qnn.batch_matmul", ctx.expr(0), ctx.expr(1), za, zb, sa, sb, adj_x=adj_x,
                 adj_y=adj_y)
        acc = np.float64(ctx.qparams(a)[0][0]) * np.float64(ctx.qparams(b)[0][0])
        return call("qnn.requantize", y, scalar(acc, "float64"), scalar(0, "int32"), so, zo,
                    out_dtype=a.dtype)
    raise ctx.unsupported("operand types %s, %s -> %s are not supported (float32, int8 or "
                          "int16)" % (a.dtype, b.dtype, out.dtype))


def _tconv_pad(ctx: _Ctx, padding: int, out: int, k: int, stride: int) -> int:
    """TFLite's padding of a transposed convolution: that of the forward
    convolution from its output back to its input (the leading half)."""
    if padding == 0:  # SAME
        n = (out + stride - 1) // stride
    elif padding == 1:  # VALID
        n = (out + stride - k) // stride
    else:
        raise ctx.error("padding %d is neither SAME nor VALID" % padding)
    return max((n - 1) * stride + k - out, 0) // 2


def _transpose_conv(ctx: _Ctx) -> ir.Expr:
    """TRANSPOSE_CONV (inputs: output shape, OHWI filter, input, bias):
    nn.conv2d_transpose (float32), or qnn.conv2d_transpose, the int32 bias
    and a per-channel requantize by input_scale * filter_scale[c] in
    double (int8; int16 data with an int8 filter sums in int64 with an int64
    bias), as TFLite Micro computes it."""
    o = ctx.options("TransposeConvOptions")
    act = int(o.FusedActivationFunction()) if hasattr(o, "FusedActivationFunction") else _NONE
    # the output shape input may be computed; the output tensor's is static
    shape = ([int(v) for v in ctx.const(0, "the output shape").reshape(-1)]
             if ctx.t(0).data is not None else list(ctx.out.shape))
    wd = ctx.const(1, "the filter")
    x, w, out = ctx.t(2), ctx.t(1), ctx.out
    if len(x.shape) != 4 or wd.ndim != 4 or len(shape) != 4:
        raise ctx.error("expects a 4-d NHWC input, a 4-d OHWI filter and a 4-value output "
                        "shape, got %s, %s and %s" % (x.shape, list(wd.shape), shape))
    if shape != list(out.shape) or wd.shape[3] != x.shape[3] or wd.shape[0] != shape[3]:
        raise ctx.error("input %s, filter %s and output %s do not fit together"
                        % (x.shape, list(wd.shape), shape))
    strides = [int(o.StrideH()), int(o.StrideW())]
    _positive(ctx, "strides", *strides)
    pad = [_tconv_pad(ctx, int(o.Padding()), shape[1 + i], int(wd.shape[1 + i]), strides[i])
           for i in range(2)]
    attrs = dict(strides=strides, padding=pad, output_size=shape[1:3])
    cout = int(wd.shape[0])
    bias = ctx.const(3, "the bias") if ctx.has(3) else None
    if bias is not None and bias.size != cout:
        raise ctx.error("bias has %d values for %d output channels" % (bias.size, cout))
    if x.dtype == w.dtype == out.dtype == "float32":
        y = call("nn.conv2d_transpose", ctx.expr(2), ir.const(wd), **attrs)
        if bias is not None:
            y = call("nn.bias_add", y, ir.const(bias.astype(np.float32)), axis=3)
        return _activation(ctx, y, act, out)
    # int8, or TFLite's 16x8: int16 data, int8 filter, int64 sums and bias
    sx, zx, sw, so, zo = _int8_layer_qparams(ctx, x, w, out, cout, int16=True)
    wide = x.dtype == "int16"
    if wide and (zx[0] != 0 or zo[0] != 0):
        raise ctx.error("int16 input and output must have zero point 0, got %d and %d"
                        % (zx[0], zo[0]))
    y = call("qnn.conv2d_transpose", ctx.expr(2), ir.const(wd), scalar(zx[0], "int32"),
             scalar(0, "int32"), scalar(sx[0], "float32"), vector_or_scalar(sw, "float32"),
             **attrs)
    if bias is not None:
        # TFLite Micro widens an int16 bias of a 16x8 layer to int64
        ok = (np.int64, np.int16) if wide else (np.int32,)
        if bias.dtype not in ok:
            raise ctx.unsupported("an %s layer's bias must be %s, got %s" % (
                x.dtype, " or ".join(np.dtype(t).name for t in ok), bias.dtype))
        y = call("nn.bias_add", y, ir.const(bias.astype(ok[0])), axis=3)
    acc = np.float64(sx[0]) * sw.astype(np.float64)
    y = call("qnn.requantize", y, vector_or_scalar(acc, "float64"), scalar(0, "int32"),
             scalar(so[0], "float32"), scalar(zo[0], "int32"), axis=3, out_dtype=x.dtype)
    return _activation(ctx, y, act, out)


# ---- reductions, data movement and shapes ----------------------------------
# The data-movement operators are built from strided_slice, concatenate,
# reshape and transpose, which move elements of any size; int8 and int16
# tensors move unchanged, as TFLite Micro moves them (its kernels copy
# bytes and never requantize). An operator whose inputs are all constants
# is evaluated here (see _FOLD), and SHAPE always is: the importer's shapes
# are static, so shape arithmetic never reaches the compiled program.


def _axes(ctx: _Ctx, n: int, rank: int) -> Tuple[List[int], bool]:
    """A reducer's constant axes in [0, rank), sorted, and its keep_dims."""
    o = ctx.imp.r.options(ctx.op, "ReducerOptions")
    keep = bool(o.KeepDims()) if o is not None else False
    raw = [int(a) for a in ctx.const(n, "the axes").reshape(-1)]
    if any(not -rank <= a < rank for a in raw):
        raise ctx.error("axes %s are out of range for a rank-%d input" % (raw, rank))
    return sorted({a % rank for a in raw}), keep


def _reduce_attrs(axes: List[int], keep: bool, rank: int) -> Dict[str, Any]:
    # TFLite reduces nothing for no axes; the IR's empty axis means all, so
    # every axis is listed and excluded instead
    if not axes:
        return dict(axis=list(range(rank)), keepdims=keep, exclude=True)
    return dict(axis=axes, keepdims=keep)


def _sum(ctx: _Ctx) -> ir.Expr:
    x, out = ctx.t(0), ctx.out
    axes, keep = _axes(ctx, 1, len(x.shape))
    attrs = _reduce_attrs(axes, keep, len(x.shape))
    if x.dtype in ("float32", "int32") and out.dtype == x.dtype:
        return call("sum", ctx.expr(0), **attrs)
    if x.dtype == out.dtype and x.dtype in ("int8", "int16"):
        return call("qnn.sum", ctx.expr(0), *ctx.qscalar(x), *ctx.qscalar(out), **attrs)
    raise ctx.unsupported("%s -> %s is not supported (float32, int32, int8, int16)"
                          % (x.dtype, out.dtype))


def _extreme(ctx: _Ctx, kind: str) -> ir.Expr:
    x, out = ctx.t(0), ctx.out
    axes, keep = _axes(ctx, 1, len(x.shape))
    if x.dtype != out.dtype or x.dtype not in ("float32", "int8", "int32"):
        raise ctx.unsupported("%s -> %s is not supported (float32, int8, int32)"
                              % (x.dtype, out.dtype))
    if x.dtype == "int8" and not _same_quant(ctx, x, out):
        raise ctx.error("an int8 %s needs the same scale and zero point in and out "
                        "(as TFLite Micro)" % ctx.name)
    return call(kind, ctx.expr(0), **_reduce_attrs(axes, keep, len(x.shape)))


def _arg(ctx: _Ctx, kind: str) -> ir.Expr:
    x, out = ctx.t(0), ctx.out
    if x.dtype not in ("float32", "int8", "int32"):
        raise ctx.unsupported("%s input is not supported (float32, int8, int32)" % x.dtype)
    a = ctx.const(1, "the axis").reshape(-1)
    if a.size != 1:
        raise ctx.error("the axis must be one value, got %d" % a.size)
    axis = int(a[0])
    if not -len(x.shape) <= axis < len(x.shape):
        raise ctx.error("axis %d is out of range for a rank-%d input" % (axis, len(x.shape)))
    y = call(kind, ctx.expr(0), axis=axis)
    if out.dtype == "int64":
        return call("cast", y, dtype="int64")
    if out.dtype != "int32":
        raise ctx.unsupported("%s output is not supported (int32, int64)" % out.dtype)
    return y


def _gather(ctx: _Ctx) -> ir.Expr:
    o = ctx.imp.r.options(ctx.op, "GatherOptions")
    axis = int(o.Axis()) if o is not None else 0
    if o is not None and int(o.BatchDims()) != 0:
        raise ctx.unsupported("batch_dims %d is not supported (0)" % int(o.BatchDims()))
    x, idx = ctx.t(0), ctx.t(1)
    if not -len(x.shape) <= axis < len(x.shape):
        raise ctx.error("axis %d is out of range for a rank-%d input" % (axis, len(x.shape)))
    if idx.data is not None:
        n = x.shape[axis]
        if np.any(idx.data < -n) or np.any(idx.data >= n):
            raise ctx.error("an index is out of range for the %d entries of axis %d"
                            % (n, axis))
        ie: ir.Expr = ir.const(np.where(idx.data < 0, idx.data + n, idx.data).astype(np.int32))
    elif idx.dtype == "int32":
        ie = ctx.expr(1)
    else:
        raise ctx.unsupported("%s indices are not supported (int32)" % idx.dtype)
    return call("take", ctx.expr(0), ie, axis=axis)


def _concat_many(xs: List[ir.Expr], axis: int) -> ir.Expr:
    """concatenate of any number of parts (a call takes at most 16)."""
    while len(xs) > 16:
        xs = [xs[i] if len(xs[i:i + 16]) == 1 else call("concatenate", ir.Tuple(xs[i:i + 16]),
                                                        axis=axis)
              for i in range(0, len(xs), 16)]
    return xs[0] if len(xs) == 1 else call("concatenate", ir.Tuple(xs), axis=axis)


def _tile(ctx: _Ctx) -> ir.Expr:
    x = ctx.t(0)
    m = [int(v) for v in ctx.const(1, "the multiples").reshape(-1)]
    if len(m) != len(x.shape) or any(v < 0 for v in m):
        raise ctx.error("multiples %s must be %d values >= 0" % (m, len(x.shape)))
    y = ctx.expr(0)
    if 0 in m:
        raise ctx.unsupported("a multiple of 0 (an empty result) is not supported")
    for d, k in enumerate(m):
        if k > 1:
            y = _concat_many([y] * k, d)
    return y


def _to_shape(ctx: _Ctx) -> ir.Expr:
    """EXPAND_DIMS and the like: the same elements in the output's shape."""
    return call("reshape", ctx.expr(0), newshape=list(ctx.out.shape))


def _slice_parts(ctx: _Ctx, x: _Tensor, e: ir.Expr, axis: int,
                 sizes: List[int]) -> List[ir.Expr]:
    """e cut along axis into consecutive parts of `sizes`."""
    rank = len(x.shape)
    if not -rank <= axis < rank:
        raise ctx.error("axis %d is out of range for a rank-%d input" % (axis, rank))
    axis %= rank
    if sum(sizes) != x.shape[axis] or any(v < 0 for v in sizes):
        raise ctx.error("sizes %s do not split the %d entries of axis %d"
                        % (sizes, x.shape[axis], axis))
    parts, at = [], 0
    for v in sizes:
        parts.append(call("strided_slice", e, begin=[at], end=[at + v], strides=[1],
                          axes=[axis]))
        at += v
    return parts


def _split(ctx: _Ctx) -> List[ir.Expr]:
    o = ctx.options("SplitOptions")
    n = int(o.NumSplits())
    axis = int(ctx.const(0, "the axis").reshape(-1)[0])
    x = ctx.t(1)
    if n < 1 or n != len(ctx.outs):
        raise ctx.error("num_splits %d for %d outputs" % (n, len(ctx.outs)))
    size = x.shape[axis % len(x.shape)] if x.shape else 0
    if size % n:
        raise ctx.error("%d entries do not split into %d equal parts" % (size, n))
    return _slice_parts(ctx, x, ctx.expr(1), axis, [size // n] * n)


def _split_v(ctx: _Ctx) -> List[ir.Expr]:
    x = ctx.t(0)
    sizes = [int(v) for v in ctx.const(1, "the size splits").reshape(-1)]
    axis = int(ctx.const(2, "the axis").reshape(-1)[0])
    if len(sizes) != len(ctx.outs):
        raise ctx.error("%d size splits for %d outputs" % (len(sizes), len(ctx.outs)))
    if sizes.count(-1) > 1:
        raise ctx.error("size splits %s infer more than one size" % sizes)
    if -1 in sizes and x.shape:
        sizes[sizes.index(-1)] = x.shape[axis % len(x.shape)] - sum(v for v in sizes if v != -1)
    return _slice_parts(ctx, x, ctx.expr(0), axis, sizes)


def _unpack(ctx: _Ctx) -> List[ir.Expr]:
    o = ctx.options("UnpackOptions")
    x = ctx.t(0)
    axis = int(o.Axis())
    rank = len(x.shape)
    if not -rank <= axis < rank:
        raise ctx.error("axis %d is out of range for a rank-%d input" % (axis, rank))
    n = x.shape[axis % rank]
    if n != len(ctx.outs):
        raise ctx.error("%d entries along axis %d for %d outputs" % (n, axis, len(ctx.outs)))
    shape = [d for i, d in enumerate(x.shape) if i != axis % rank]
    return [call("reshape", p, newshape=shape)
            for p in _slice_parts(ctx, x, ctx.expr(0), axis, [1] * n)]


def _pack(ctx: _Ctx) -> ir.Expr:
    o = ctx.options("PackOptions")
    out = ctx.out
    axis = int(o.Axis()) % len(out.shape)
    parts = [call("expand_dims", ctx.expr(n), axis=axis) for n in range(len(ctx.ins))]
    return _concat_many(parts, axis)


def _slice(ctx: _Ctx) -> ir.Expr:
    x = ctx.t(0)
    begin = [int(v) for v in ctx.const(1, "begin").reshape(-1)]
    size = [int(v) for v in ctx.const(2, "size").reshape(-1)]
    if not len(begin) == len(size) == len(x.shape):
        raise ctx.error("begin and size must each have %d values" % len(x.shape))
    end = []
    for b, v, n in zip(begin, size, x.shape):
        e = n if v == -1 else b + v
        if b < 0 or e > n or e < b:
            raise ctx.error("begin %s and size %s leave the shape %s" % (begin, size, x.shape))
        end.append(e)
    return call("strided_slice", ctx.expr(0), begin=begin, end=end, strides=[1] * len(begin))


def _depth_space(ctx: _Ctx, to_depth: bool) -> ir.Expr:
    o = ctx.options("SpaceToDepthOptions" if to_depth else "DepthToSpaceOptions")
    b = int(o.BlockSize())
    x = ctx.t(0)
    if len(x.shape) != 4:
        raise ctx.error("expects a 4-d NHWC input, got %s" % x.shape)
    _positive(ctx, "the block size", b)
    n, h, w, c = x.shape
    if to_depth:
        if h % b or w % b:
            raise ctx.error("height %d and width %d must be multiples of %d" % (h, w, b))
        inner = [n, h // b, b, w // b, b, c]
    else:
        if c % (b * b):
            raise ctx.error("depth %d must be a multiple of %d" % (c, b * b))
        inner = [n, h, w, b, b, c // (b * b)]
    y = call("reshape", ctx.expr(0), newshape=inner)
    y = call("transpose", y, axes=[0, 1, 3, 2, 4, 5])
    return call("reshape", y, newshape=list(ctx.out.shape))


def _backwards(y: ir.Expr, d: int, n: int, first: int, count: int) -> ir.Expr:
    """Entries first, first - 1, ..., first - count + 1 of axis d (of n)."""
    stop = first - count  # numpy's end; below 0 it must count from -n - 1
    return call("strided_slice", y, begin=[first], end=[stop if stop >= 0 else stop - n],
                strides=[-1], axes=[d])


def _mirror_pad(ctx: _Ctx) -> ir.Expr:
    o = ctx.options("MirrorPadOptions")
    symmetric = int(o.Mode()) == 1
    x = ctx.t(0)
    p = ctx.const(1, "the paddings")
    if p.shape != (len(x.shape), 2):
        raise ctx.error("paddings must have shape [%d, 2], got %s" % (len(x.shape), list(p.shape)))
    y = ctx.expr(0)
    for d, (before, after) in enumerate(p.tolist()):
        n = x.shape[d]
        limit = n if symmetric else n - 1
        if not (0 <= before <= limit and 0 <= after <= limit):
            raise ctx.error("padding (%d, %d) of axis %d is more than %s allows for %d entries"
                            % (before, after, d, "SYMMETRIC" if symmetric else "REFLECT", n))
        skip = 0 if symmetric else 1  # REFLECT leaves out the edge entry
        parts = [_backwards(y, d, n, skip + before - 1, before)] if before else []
        parts.append(y)
        if after:
            parts.append(_backwards(y, d, n, n - 1 - skip, after))
        if len(parts) > 1:
            y = call("concatenate", ir.Tuple(parts), axis=d)
    return y


def _shape(ctx: _Ctx) -> np.ndarray:
    out = ctx.out
    if out.dtype not in ("int32", "int64"):
        raise ctx.unsupported("%s output is not supported (int32, int64)" % out.dtype)
    return np.array(ctx.t(0).shape, dtype=out.np_dtype)


# Operators evaluated at import when all their inputs are constants (shape
# arithmetic: SHAPE's results and the slices, stacks and reshapes of them).
def _fold_strided_slice(ctx: _Ctx, xs: List[np.ndarray]) -> List[np.ndarray]:
    begin, end, strides, _ = _slice_spec(ctx)
    return [xs[0][tuple(slice(b, e, s) for b, e, s in zip(begin, end, strides))]]


def _fold_pack(ctx: _Ctx, xs: List[np.ndarray]) -> List[np.ndarray]:
    return [np.stack(xs, axis=int(ctx.options("PackOptions").Axis()))]


def _fold_concat(ctx: _Ctx, xs: List[np.ndarray]) -> List[np.ndarray]:
    return [np.concatenate(xs, axis=int(ctx.options("ConcatenationOptions").Axis()))]


def _fold_gather(ctx: _Ctx, xs: List[np.ndarray]) -> List[np.ndarray]:
    o = ctx.imp.r.options(ctx.op, "GatherOptions")
    return [np.take(xs[0], xs[1], axis=int(o.Axis()) if o is not None else 0)]


def _fold_slice(ctx: _Ctx, xs: List[np.ndarray]) -> List[np.ndarray]:
    b, v = xs[1].reshape(-1).tolist(), xs[2].reshape(-1).tolist()
    return [xs[0][tuple(slice(s, None if n == -1 else s + n) for s, n in zip(b, v))]]


def _fold_reshape(ctx: _Ctx, xs: List[np.ndarray]) -> List[np.ndarray]:
    return [xs[0]]  # the output's shape is applied on storing


_FOLD: Dict[str, Callable[[_Ctx, List[np.ndarray]], List[np.ndarray]]] = {
    "STRIDED_SLICE": _fold_strided_slice,
    "PACK": _fold_pack,
    "CONCATENATION": _fold_concat,
    "GATHER": _fold_gather,
    "SLICE": _fold_slice,
    "RESHAPE": _fold_reshape,
    "SQUEEZE": _fold_reshape,
    "EXPAND_DIMS": _fold_reshape,
    "FILL": _lg.fold_fill,
    "BROADCAST_TO": _lg.fold_broadcast_to,
    "BROADCAST_ARGS": _lg.fold_broadcast_args,
}


def _l2_normalization(ctx: _Ctx) -> ir.Expr:
    """L2_NORMALIZATION over the last axis: nn.l2_normalize with TFLite's
    epsilon 1e-6 (float32), qnn.l2_normalize into 1/128, 0 (int8)."""
    o = ctx.imp.r.options(ctx.op, "L2NormOptions")
    act = int(o.FusedActivationFunction()) if o is not None else _NONE
    x, out = ctx.t(0), ctx.out
    if x.dtype == out.dtype == "float32":
        return _activation(ctx, call("nn.l2_normalize", ctx.expr(0), eps=1e-6, axis=-1), act, out)
    if x.dtype == out.dtype == "int8":
        if act != _NONE:
            raise ctx.unsupported("a fused activation on the int8 form is not supported")
        return call("qnn.l2_normalize", ctx.expr(0), *ctx.qscalar(x), *ctx.qscalar(out))
    raise ctx.unsupported("%s -> %s is not supported (float32 or int8)" % (x.dtype, out.dtype))


def _log_softmax(ctx: _Ctx) -> ir.Expr:
    """LOG_SOFTMAX over the last axis: nn.log_softmax (float32),
    qnn.log_softmax into 16/256, 127 (int8)."""
    x, out = ctx.t(0), ctx.out
    if x.dtype == out.dtype == "float32":
        return call("nn.log_softmax", ctx.expr(0), axis=-1)
    if x.dtype == out.dtype == "int8":
        return call("qnn.log_softmax", ctx.expr(0), *ctx.qscalar(x), *ctx.qscalar(out))
    raise ctx.unsupported("%s -> %s is not supported (float32 or int8)" % (x.dtype, out.dtype))


# UNIDIRECTIONAL_SEQUENCE_LSTM's optional inputs TFLite Micro's LSTM refuses.
_LSTM_ABSENT = {9: "cell-to-input peephole weights", 10: "cell-to-forget peephole weights",
                11: "cell-to-output peephole weights", 16: "projection weights",
                17: "projection bias", 20: "input layer-norm coefficients",
                21: "forget layer-norm coefficients", 22: "cell layer-norm coefficients",
                23: "output layer-norm coefficients"}


def _lstm(ctx: _Ctx) -> ir.Expr:
    """nn.lstm (float32) or qnn.lstm (int8 with int32 bias, or TFLite's 16x8:
    int16 with int8 weights and int64 bias; int16 cell state either way). The
    hidden (input 18) and cell state (input 19) are variable tensors: the
    module's states, passed in and assigned the sequence's last step and
    the final cell state (a second call of the same operator with
    emit="cell")."""
    o = ctx.options("UnidirectionalSequenceLSTMOptions")
    if len(ctx.ins) != 24:
        raise ctx.error("expects 24 inputs, got %d" % len(ctx.ins))
    for i, what in _LSTM_ABSENT.items():
        if ctx.has(i):
            raise ctx.unsupported("%s (input %d) are not supported (TFLite Micro's LSTM has "
                                  "none)" % (what, i))
    if not ctx.has(1):
        raise ctx.unsupported("coupled input and forget gates (no input gate weights) are "
                              "not supported")
    act = int(o.FusedActivationFunction())
    if act != 4:
        raise ctx.unsupported("cell activation %s is not supported (TANH only, as in TFLite "
                              "Micro)" % _ACT_NAMES.get(act, act))
    clip = float(np.float32(o.CellClip()))
    if not clip >= 0 or not math.isfinite(clip):
        raise ctx.error("cell_clip must be a finite number >= 0, got %r" % clip)
    time_major = bool(o.TimeMajor())
    x, h_t, c_t = ctx.t(0), ctx.t(18), ctx.t(19)
    if len(x.shape) != 3:
        raise ctx.error("input must be 3-d, got %s" % x.shape)
    batch, steps = (x.shape[1], x.shape[0]) if time_major else (x.shape[0], x.shape[1])
    w = [ctx.const(i, "the weights") for i in range(1, 9)]
    units = int(w[0].shape[0]) if w[0].ndim == 2 else -1
    for i in range(8):
        want = [units, x.shape[2]] if i < 4 else [units, units]
        if list(w[i].shape) != want:
            raise ctx.error("weights (input %d) must be %s, got %s"
                            % (i + 1, want, list(w[i].shape)))
    b = [ctx.const(i, "the gate bias") for i in range(12, 16)]
    for i, v in enumerate(b):
        if list(v.shape) != [units]:
            raise ctx.error("gate bias (input %d) must be [%d], got %s"
                            % (12 + i, units, list(v.shape)))
    for t in (h_t, c_t):
        if int(np.prod(t.shape)) != batch * units:
            raise ctx.error("state '%s' %s must hold batch x units = %d x %d values"
                            % (t.name, t.shape, batch, units))
    wt = {str(v.dtype) for v in w}
    kinds = (x.dtype, wt.pop() if len(wt) == 1 else "mixed", str(b[0].dtype), h_t.dtype,
             c_t.dtype)
    h, c = ctx.imp.states.variable(h_t), ctx.imp.states.variable(c_t)
    if list(h_t.shape) != [batch, units]:
        h = call("reshape", h, newshape=[batch, units])
    if list(c_t.shape) != [batch, units]:
        c = call("reshape", c, newshape=[batch, units])
    args: List[ir.Expr] = [ctx.expr(0), ir.const(np.stack(w[:4])), ir.const(np.stack(w[4:])),
                           ir.const(np.stack(b)), h, c]
    if kinds == ("float32",) * 5:
        op = "nn.lstm"
    elif kinds in (("int8", "int8", "int32", "int8", "int16"),
                   ("int16", "int8", "int64", "int16", "int16")):
        op = "qnn.lstm"
        if x.dtype == "int16":
            for i, what in ((0, "input"), (18, "hidden state")):
                if int(ctx.qparams(ctx.t(i))[1][0]) != 0:
                    raise ctx.unsupported("the int16 %s (input %d) must have zero point 0 "
                                          "(TFLite's 16x8 quantization is symmetric)"
                                          % (what, i))
        scales = []
        for i in range(1, 9):
            s, z = ctx.qparams(ctx.t(i))
            if s.size != 1 or int(z[0]) != 0:
                raise ctx.unsupported("weights (input %d) must be quantized per tensor with "
                                      "zero point 0" % i)
            scales.append(float(s[0]))
        cs, _ = ctx.qparams(c_t)
        if cs.size != 1:
            raise ctx.error("the cell state must be quantized per tensor")
        args += [*ctx.qscalar(x), ir.const(np.array(scales, np.float32)), *ctx.qscalar(h_t),
                 scalar(cs[0], "float32")]
    else:
        raise ctx.unsupported("input, weights, bias, hidden and cell state of types %s are "
                              "not supported (float32 throughout, int8 with int32 bias "
                              "and int16 cell state, or int16 with int8 weights, int64 "
                              "bias and int16 cell state)" % ", ".join(kinds))
    opts = dict(time_major=time_major, cell_clip=clip)
    seq = call(op, *args, emit="sequence", **opts)
    cell = call(op, *args, emit="cell", **opts)
    if time_major:
        last = call("strided_slice", seq, begin=[steps - 1, 0, 0], end=[steps, batch, units])
    else:
        last = call("strided_slice", seq, begin=[0, steps - 1, 0], end=[batch, steps, units])
    ctx.imp.states.assign(h_t, call("reshape", last, newshape=list(h_t.shape)))
    if list(c_t.shape) != [batch, units]:
        cell = call("reshape", cell, newshape=list(c_t.shape))
    ctx.imp.states.assign(c_t, cell)
    if list(ctx.out.shape) != [x.shape[0], x.shape[1], units]:
        raise ctx.error("output must be %s, got %s" % ([x.shape[0], x.shape[1], units],
                                                       ctx.out.shape))
    return seq


def _svdf(ctx: _Ctx) -> ir.Expr:
    """SVDF: a rank-`rank` filter bank over the last `memory` steps, its
    state a TFLite variable tensor (input 4, [batch, memory * filters]).

    The operator gives two values: the new state (nn.svdf_state), each
    filter's row shifted one step older with the feature x . weights_feature
    as its newest entry (requantized to the state's int16 or int8 in the
    integer form), which becomes the state's value for the next run (the
    generated C updates it in place); and the output, a function of that
    new state only: nn.svdf_time's per-filter dot products of the rows
    (less the state's zero point) with weights_time, summed over each
    unit's `rank` filters, plus the bias, then the activation (float32) or
    the rescale into the output (int8; TFLite Micro applies no activation
    there).
    Multipliers as TFLite Micro takes them: float products
    input * feature / state and state * time / output, then double."""
    o = ctx.options("SVDFOptions")
    rank = int(o.Rank())
    x, wf_t, wt_t, st = ctx.t(0), ctx.t(1), ctx.t(2), ctx.t(4)
    out = ctx.out
    wf, wt = ctx.const(1, "weights_feature"), ctx.const(2, "weights_time")
    if len(x.shape) != 2 or wf.ndim != 2 or wt.ndim != 2:
        raise ctx.error("expects a 2-d input and 2-d weights, got %s, %s and %s"
                        % (x.shape, list(wf.shape), list(wt.shape)))
    batch, n_in = x.shape
    filters, memory = wt.shape
    if rank < 1 or filters % rank or wf.shape != (filters, n_in):
        raise ctx.error("weights_feature %s and weights_time %s do not fit a %d-wide input "
                        "at rank %d" % (list(wf.shape), list(wt.shape), n_in, rank))
    units = filters // rank
    if list(st.shape) != [batch, memory * filters]:
        raise ctx.error("the state must have shape %s, got %s"
                        % ([batch, memory * filters], st.shape))
    if list(out.shape) != [batch, units]:
        raise ctx.error("the output must have shape %s, got %s" % ([batch, units], out.shape))
    bias = ctx.const(3, "the bias") if ctx.has(3) else None
    if bias is not None and bias.size != units:
        raise ctx.error("bias has %d values for %d units" % (bias.size, units))
    quantized = x.dtype == "int8"
    if quantized:
        if wf_t.dtype != "int8" or wt_t.dtype not in ("int16", "int8") or \
                st.dtype != wt_t.dtype or out.dtype != "int8" or \
                (bias is not None and bias.dtype != np.int32):
            raise ctx.unsupported(
                "input, weights_feature, weights_time, state, bias and output types %s, %s, "
                "%s, %s, %s, %s are not supported (int8, int8, int16 or int8, the same as "
                "weights_time, int32, int8)" % (x.dtype, wf_t.dtype, wt_t.dtype, st.dtype,
                                               bias.dtype if bias is not None else "none",
                                               out.dtype))
    elif not (x.dtype == wf_t.dtype == wt_t.dtype == st.dtype == out.dtype == "float32"):
        raise ctx.unsupported("input, weights and state types %s, %s, %s, %s -> %s are not "
                              "supported (float32, or int8 with int16 state)"
                              % (x.dtype, wf_t.dtype, wt_t.dtype, st.dtype, out.dtype))
    states = ctx.imp.states
    state = call("reshape", states.variable(st), newshape=[batch, filters, memory])
    if quantized:
        sx, zx = ctx.qscalar(x)
        f32 = np.float32
        s_in, s_wf, s_wt = (f32(ctx.qparams(t)[0][0]) for t in (x, wf_t, wt_t))
        s_st, z_st = ctx.qparams(st)
        s_out, z_out = ctx.qparams(out)
        if ctx.qparams(wf_t)[1][0] != 0 or ctx.qparams(wt_t)[1][0] != 0 or \
                (st.dtype == "int16" and z_st[0] != 0):
            raise ctx.unsupported("the weights and an int16 state must have zero point 0, "
                                  "got %d, %d and %d" % (ctx.qparams(wf_t)[1][0],
                                                         ctx.qparams(wt_t)[1][0], z_st[0]))
        eff1 = float(s_in * s_wf / f32(s_st[0]))
        eff2 = float(f32(s_st[0]) * s_wt / f32(s_out[0]))
        feat = call("qnn.dense", ctx.expr(0), ir.const(wf), zx, scalar(0, "int32"), sx,
                    scalar(s_wf, "float32"), units=filters, out_dtype="int32")
        feat = call("qnn.requantize", feat, scalar(eff1, "float64"), scalar(0, "int32"),
                    scalar(1.0, "float32"), scalar(int(z_st[0]), "int32"), out_dtype=st.dtype)
    else:
        feat = call("nn.dense", ctx.expr(0), ir.const(wf), units=filters)
    new = call("nn.svdf_state", state, feat)
    states.assign(st, call("reshape", new, newshape=[batch, memory * filters]))
    y = call("nn.svdf_time", new, ir.const(wt), rank=rank,
             zero_point=int(z_st[0]) if quantized else 0)
    if bias is not None:
        y = call("add", y, ir.const(bias))
    if quantized:
        return call("qnn.requantize", y, scalar(eff2, "float64"), scalar(0, "int32"),
                    scalar(1.0, "float32"), scalar(int(z_out[0]), "int32"), out_dtype="int8")
    return _activation(ctx, y, int(o.FusedActivationFunction()), out)


# ---- space/batch moves, GATHER_ND, EMBEDDING_LOOKUP, L2_POOL_2D -------------

def _moved(ctx: _Ctx, what: str) -> _Tensor:
    """The input of an operator that only moves values (float32 or int8,
    the output of the same type and, for int8, quantization)."""
    x, out = ctx.t(0), ctx.out
    if x.dtype not in ("float32", "int8") or x.shifted or out.dtype != x.dtype:
        raise ctx.unsupported("%s %s -> %s is not supported (float32 or int8)"
                              % (what, "uint8" if x.shifted else x.dtype,
                                 "uint8" if out.shifted else out.dtype))
    if x.dtype == "int8" and not _same_quant(ctx, x, out):
        raise ctx.error("an int8 %s must keep its scale and zero point" % what)
    return x


def _prod(v: Sequence[int]) -> int:
    return int(np.prod(v, dtype=np.int64))


def _space_batch(ctx: _Ctx, to_batch: bool) -> ir.Expr:
    """SPACE_TO_BATCH_ND / BATCH_TO_SPACE_ND (3-d NHC or 4-d NHWC, as TFLite
    Micro takes them): a pad (int8 with the zero point, TFLite's
    output_offset) or crop around a reshape/transpose/reshape that moves
    each block of the spatial axes into the batch or back."""
    x = _moved(ctx, "input")
    shp = list(x.shape)
    if not 3 <= len(shp) <= 4:
        raise ctx.error("expects a 3-d or 4-d input, got %s" % shp)
    block = [int(v) for v in ctx.const(1, "the block shape").reshape(-1)]
    m = len(block)
    what = "paddings" if to_batch else "crops"
    edges = ctx.const(2, "the " + what)
    if m != len(shp) - 2 or edges.shape != (m, 2):
        raise ctx.error("a rank-%d input needs %d block sizes and %s of shape [%d, 2], got %d "
                        "and %s" % (len(shp), len(shp) - 2, what, len(shp) - 2, m,
                                    list(edges.shape)))
    _positive(ctx, "block sizes", *block)
    if np.any(edges < 0):
        raise ctx.error("%s must not be negative, got %s" % (what, edges.tolist()))
    rest = shp[m + 1:]
    keep = list(range(2 * m + 1, 2 * m + 1 + len(rest)))
    y = ctx.expr(0)
    if to_batch:
        n = shp[0]
        space = [shp[1 + d] + int(edges[d][0]) + int(edges[d][1]) for d in range(m)]
        for d in range(m):
            if space[d] % block[d]:
                raise ctx.error("padded extent %d of axis %d is not a multiple of block size %d"
                                % (space[d], d + 1, block[d]))
        if np.any(edges):
            value = float(ctx.qparams(x)[1][0]) if x.dtype == "int8" else 0.0
            pads = [[0, 0]] + [[int(a), int(b)] for a, b in edges] + [[0, 0]] * len(rest)
            y = call("nn.pad", y, pad_width=pads, pad_value=value)
        split = [n]
        for d in range(m):
            split += [space[d] // block[d], block[d]]
        y = call("reshape", y, newshape=split + rest)
        order = [2 + 2 * d for d in range(m)] + [0] + [1 + 2 * d for d in range(m)]
        y = call("transpose", y, axes=order + keep)
        return call("reshape", y, newshape=[n * _prod(block)] +
                    [space[d] // block[d] for d in range(m)] + rest)
    if shp[0] % _prod(block):
        raise ctx.error("batch %d is not a multiple of the block sizes' product %d"
                        % (shp[0], _prod(block)))
    n = shp[0] // _prod(block)
    y = call("reshape", y, newshape=block + [n] + shp[1:])
    order = [m]
    for d in range(m):
        order += [m + 1 + d, d]
    y = call("transpose", y, axes=order + keep)
    full = [shp[1 + d] * block[d] for d in range(m)]
    y = call("reshape", y, newshape=[n] + full + rest)
    if np.any(edges):
        begin = [int(edges[d][0]) for d in range(m)]
        end = [full[d] - int(edges[d][1]) for d in range(m)]
        if any(b >= e for b, e in zip(begin, end)):
            raise ctx.error("crops %s leave nothing of %s" % (edges.tolist(), full))
        y = call("strided_slice", y, begin=begin, end=end, strides=[1] * m,
                 axes=list(range(1, m + 1)))
    return y


def _gather_nd(ctx: _Ctx) -> ir.Expr:
    """GATHER_ND (float32 or int8 values, int32 indices): values are
    copied, an int8 output keeps the input's numbers as TFLite Micro does."""
    x, idx = ctx.t(0), ctx.t(1)
    if x.dtype not in ("float32", "int8") or x.shifted or ctx.out.dtype != x.dtype:
        raise ctx.unsupported("params %s -> %s is not supported (float32 or int8)"
                              % (x.dtype, ctx.out.dtype))
    if idx.dtype != "int32":
        raise ctx.unsupported("%s indices are not supported (int32)" % idx.dtype)
    shp, ishp = list(x.shape), list(idx.shape)
    if not shp or not ishp or not 1 <= ishp[-1] <= len(shp):
        raise ctx.error("indices of shape %s do not address params of shape %s" % (ishp, shp))
    if idx.data is not None:
        lim = np.array(shp[:ishp[-1]])
        if np.any(idx.data < 0) or np.any(idx.data >= lim):
            raise ctx.error("an index is out of range for params of shape %s" % shp)
    return gather_nd(ctx.expr(0), ctx.expr(1), shp, ishp)


def _embedding_lookup(ctx: _Ctx) -> ir.Expr:
    """EMBEDDING_LOOKUP: rows of the value table at int32 ids; int8 rows
    are copied to an int8 output or dequantized (scale only, zero point 0)
    to a float32 one, TFLite Micro's hybrid form."""
    ids, table, out = ctx.t(0), ctx.t(1), ctx.out
    if ids.dtype != "int32" or len(ids.shape) != 1:
        raise ctx.error("the ids must be a 1-d int32 tensor, got %s %s" % (ids.dtype, ids.shape))
    if len(table.shape) < 2:
        raise ctx.error("the value table must have 2 or more dimensions, got %s" % table.shape)
    pair = ("uint8" if table.shifted else table.dtype, "uint8" if out.shifted else out.dtype)
    if pair not in (("float32", "float32"), ("int8", "int8"), ("int8", "float32")):
        raise ctx.unsupported("values %s -> %s are not supported (float32 -> float32, int8 -> "
                              "int8 or int8 -> float32)" % pair)
    if ids.data is not None and (np.any(ids.data < 0) or np.any(ids.data >= table.shape[0])):
        raise ctx.error("an id is out of range for the %d rows of the table" % table.shape[0])
    y = call("take", ctx.expr(1), ctx.expr(0), axis=0)
    if pair == ("int8", "float32"):
        s, z = ctx.qparams(table)
        if s.size != 1 or z[0] != 0:
            raise ctx.error("an int8 table read as float32 must have one scale and zero point "
                            "0, got %d scales and zero point %d" % (s.size, int(z[0])))
        y = call("multiply", call("cast", y, dtype="float32"), scalar(float(s[0]), "float32"))
    return y


def _l2_pool(ctx: _Ctx) -> ir.Expr:
    """L2_POOL_2D (float32): the square root of the mean of the squares over
    the window's valid elements, then the fused activation."""
    x = ctx.t(0)
    if x.dtype != "float32" or ctx.out.dtype != "float32":
        raise ctx.unsupported("%s -> %s is not supported (float32)" % (x.dtype, ctx.out.dtype))
    o, k, s, pad = _pool_window(ctx)
    sq = call("multiply", ctx.expr(0), ctx.expr(0))
    y = call("sqrt", call("nn.avg_pool2d", sq, pool_size=k, strides=s, padding=pad,
                          layout="NHWC"))
    return _activation(ctx, y, int(o.FusedActivationFunction()), ctx.out)


# Operators a called subgraph may not hold: state lives in main only.
_SUBGRAPH_REFUSED = tflite_state.STATE_OPS + ("UNIDIRECTIONAL_SEQUENCE_LSTM", "SVDF")

# WHILE loops are unrolled at import, at most this many times.
_WHILE_LIMIT = 1024


def _constant_value(e: ir.Expr) -> Optional[np.ndarray]:
    """The value of an expression that reads no input (folded here), or
    None when it depends on one."""
    from .. import transform

    if isinstance(e, ir.Constant):
        return np.asarray(e.data)
    try:
        mod = ir.IRModule.from_expr(ir.Function([], e))
        ir.well_formed(mod)
        body = transform.FoldConstant()(transform.InferType()(mod))["main"].body
    except (ValueError, TypeError, RuntimeError):
        return None
    return np.asarray(body.data) if isinstance(body, ir.Constant) else None


def _if(ctx: _Ctx) -> _Result:
    """IF: the branch subgraphs converted in line. A condition known at
    import (a constant, or computed from constants) keeps the branch taken
    only; otherwise both branches run and each output is selected by the
    condition (as 0/1 blends, so an infinity or NaN in the branch not taken
    spreads into a float32 result)."""
    o = ctx.options("IfOptions")
    cond = ctx.t(0)
    if cond.dtype != "bool" or int(np.prod(cond.shape)) != 1:
        raise ctx.error("the condition must be one bool, got %s %s" % (cond.dtype, cond.shape))
    args = [ctx.expr(i) for i in range(1, len(ctx.ins))]
    then_i, else_i = int(o.ThenSubgraphIndex()), int(o.ElseSubgraphIndex())
    known = _constant_value(ctx.expr(0))
    if known is not None:
        return ctx.imp.call_subgraph(ctx, then_i if bool(known.reshape(-1)[0]) else else_i, args)
    a = ctx.imp.call_subgraph(ctx, then_i, args)
    b = ctx.imp.call_subgraph(ctx, else_i, args)
    c = call("reshape", ctx.expr(0), newshape=[])
    outs: List[ir.Expr] = []
    for k, (x, y) in enumerate(zip(a, b)):
        t = ctx.imp.r.tensors[ctx.outs[k]]
        if t.dtype not in ("float32", "int8", "int16", "int32", "bool"):
            raise ctx.unsupported("output %d of type %s is not supported when the condition "
                                  "is known only at run time (float32, int8, int16, int32, "
                                  "bool)" % (k, t.dtype))
        if t.dtype == "bool":
            outs.append(call("cast", select(c, call("cast", x, dtype="int32"),
                                            call("cast", y, dtype="int32"), "int32"),
                             dtype="bool"))
        else:
            outs.append(select(c, x, y, t.dtype))
    return outs


def _while(ctx: _Ctx) -> _Result:
    """WHILE: unrolled at import. The condition subgraph must be known at
    import at every turn (a loop counted by constants, as the converter
    writes fixed-length loops); the body's outputs are the next turn's
    inputs, and the loop's outputs are the last ones."""
    o = ctx.options("WhileOptions")
    cond_i, body_i = int(o.CondSubgraphIndex()), int(o.BodySubgraphIndex())
    xs = [ctx.expr(i) for i in range(len(ctx.ins))]
    for _ in range(_WHILE_LIMIT):
        c = ctx.imp.call_subgraph(ctx, cond_i, xs)
        if len(c) != 1:
            raise ctx.error("the condition subgraph %d has %d outputs, expected 1"
                            % (cond_i, len(c)))
        known = _constant_value(c[0])
        if known is None or known.size != 1:
            raise ctx.unsupported("the loop condition depends on the model's inputs; only "
                                  "loops whose every turn is known at import are supported "
                                  "(they are unrolled)")
        if not bool(known.reshape(-1)[0]):
            return xs
        xs = ctx.imp.call_subgraph(ctx, body_i, xs)
        if len(xs) != len(ctx.ins):
            raise ctx.error("the body subgraph %d has %d outputs for %d loop values"
                            % (body_i, len(xs), len(ctx.ins)))
    raise ctx.unsupported("the loop runs more than %d turns (it is unrolled at import)"
                          % _WHILE_LIMIT)


# A converter returns the output's expression; a list of them for an
# operator of several outputs; or a numpy array for an output computed here.
_Result = Union[ir.Expr, List[ir.Expr], np.ndarray]
_CONVERTERS: Dict[str, Callable[[_Ctx], _Result]] = {
    "CONV_2D": lambda c: _conv(c, False),
    "DEPTHWISE_CONV_2D": lambda c: _conv(c, True),
    "FULLY_CONNECTED": _fully_connected,
    "AVERAGE_POOL_2D": lambda c: _pool(c, "avg_pool2d"),
    "MAX_POOL_2D": lambda c: _pool(c, "max_pool2d"),
    "ADD": lambda c: _binary(c, "add"),
    "MUL": lambda c: _binary(c, "multiply"),
    "RESHAPE": _reshape,
    "SQUEEZE": _squeeze,
    "SOFTMAX": _softmax,
    "QUANTIZE": _quantize,
    "DENSIFY": _densify_op,
    "DEQUANTIZE": _dequantize,
    "RELU": lambda c: _unary_act(c, _RELU),
    "RELU6": lambda c: _unary_act(c, _RELU6),
    "RELU_N1_TO_1": lambda c: _unary_act(c, _RELU_N1_TO_1),
    "LOGISTIC": lambda c: _logistic_tanh(c, "sigmoid"),
    "TANH": lambda c: _logistic_tanh(c, "tanh"),
    "PAD": _pad,
    "PADV2": _pad,
    "CONCATENATION": _concat,
    "MEAN": _mean,
    "STRIDED_SLICE": _strided_slice,
    "TRANSPOSE": _transpose,
    "RESIZE_BILINEAR": lambda c: _resize(c, "linear"),
    "RESIZE_NEAREST_NEIGHBOR": lambda c: _resize(c, "nearest_neighbor"),
    "BATCH_MATMUL": _batch_matmul,
    "TRANSPOSE_CONV": _transpose_conv,
    "SUM": _sum,
    "REDUCE_MAX": lambda c: _extreme(c, "max"),
    "REDUCE_MIN": lambda c: _extreme(c, "min"),
    "ARG_MAX": lambda c: _arg(c, "argmax"),
    "ARG_MIN": lambda c: _arg(c, "argmin"),
    "GATHER": _gather,
    "TILE": _tile,
    "EXPAND_DIMS": _to_shape,
    "SPLIT": _split,
    "SPLIT_V": _split_v,
    "UNPACK": _unpack,
    "PACK": _pack,
    "SLICE": _slice,
    "SPACE_TO_DEPTH": lambda c: _depth_space(c, True),
    "DEPTH_TO_SPACE": lambda c: _depth_space(c, False),
    "MIRROR_PAD": _mirror_pad,
    "SHAPE": _shape,
    "SUB": _sub,
    "DIV": _div,
    "MAXIMUM": lambda c: _min_max(c, "maximum"),
    "MINIMUM": lambda c: _min_max(c, "minimum"),
    "SQUARED_DIFFERENCE": _squared_difference,
    "CAST": _cast,
    "LEAKY_RELU": _leaky_relu,
    "ABS": lambda c: _math(c, "abs", True),
    "RSQRT": lambda c: _math(c, "rsqrt", True),
    "SQRT": lambda c: _math(c, "sqrt", False),
    "LOG": lambda c: _math(c, "log", False),
    "EXP": lambda c: _math(c, "exp", False),
    "NEG": lambda c: _math(c, "negative", False),
    "ELU": lambda c: _math(c, "elu", True),
    "HARD_SWISH": lambda c: _math(c, "hard_swish", True),
    "PRELU": _prelu,
    "L2_NORMALIZATION": _l2_normalization,
    "LOG_SOFTMAX": _log_softmax,
    "UNIDIRECTIONAL_SEQUENCE_LSTM": _lstm,
    "SVDF": _svdf,
    "SPACE_TO_BATCH_ND": lambda c: _space_batch(c, True),
    "BATCH_TO_SPACE_ND": lambda c: _space_batch(c, False),
    "GATHER_ND": _gather_nd,
    "EMBEDDING_LOOKUP": _embedding_lookup,
    "L2_POOL_2D": _l2_pool,
    "EQUAL": _lg.compare,
    "NOT_EQUAL": _lg.compare,
    "GREATER": _lg.compare,
    "GREATER_EQUAL": _lg.compare,
    "LESS": _lg.compare,
    "LESS_EQUAL": _lg.compare,
    "LOGICAL_AND": lambda c: _lg.logical(c, "and"),
    "LOGICAL_OR": lambda c: _lg.logical(c, "or"),
    "LOGICAL_NOT": lambda c: _lg.logical(c, "not"),
    "SELECT_V2": _lg.select_v2,
    "FLOOR": lambda c: _lg.rounding(c, "floor"),
    "CEIL": lambda c: _lg.rounding(c, "ceil"),
    "ROUND": lambda c: _lg.rounding(c, "round"),
    "FLOOR_DIV": _lg.floor_div,
    "FLOOR_MOD": _lg.floor_mod,
    "SQUARE": _lg.square,
    "SIN": lambda c: _lg.trig(c, "sin"),
    "COS": lambda c: _lg.trig(c, "cos"),
    "ZEROS_LIKE": _lg.zeros_like,
    "FILL": _lg.fill,
    "BROADCAST_TO": _lg.broadcast_to,
    "BROADCAST_ARGS": _lg.broadcast_args,
    "ADD_N": _lg.add_n,
    "CUMSUM": _lg.cumsum,
    "RELU_0_TO_1": _lg.relu_0_to_1,
    "IF": _if,
    "WHILE": _while,
}


# The operators whose int8 form computes LiteRT's uint8 one on shifted
# tensors (see the module's notes), and those that only move values (the
# shift commutes with a move); any other is refused on uint8 data rather
# than computed with int8 arithmetic that may round differently.
_UINT8_OPS = ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "AVERAGE_POOL_2D",
              "MAX_POOL_2D", "ADD", "MUL", "SOFTMAX", "RESHAPE", "SQUEEZE", "CONCATENATION",
              "PAD", "QUANTIZE", "DEQUANTIZE", "SPLIT", "SPLIT_V", "UNPACK", "PACK", "SLICE",
              "STRIDED_SLICE", "TRANSPOSE", "EXPAND_DIMS", "GATHER", "TILE", "SPACE_TO_DEPTH",
              "DEPTH_TO_SPACE", "RESIZE_BILINEAR", "ARG_MAX", "ARG_MIN")


def supported_operators() -> List[str]:
    """The TFLite builtin operators this importer maps."""
    return sorted(set(_CONVERTERS) | set(tflite_state.STATE_OPS))


def _shift_edge(t: _Tensor, e: ir.Expr, to: str) -> ir.Expr:
    """A shifted tensor t at the model's edge: its uint8 values in as int8
    (to "int8"), or its int8 values out as uint8 (to "uint8")."""
    if t.scale is None or t.scale.size != 1:
        raise ModelImportError("%s: uint8 tensor '%s' at the model's edge must be quantized "
                               "per tensor" % (WHO, t.name))
    zp = t.zero_point if t.zero_point is not None else np.zeros(1, np.int64)
    s = scalar(float(t.scale[0]), "float32")
    z8 = scalar(int(zp[0]), "int32")
    zu = scalar(int(zp[0]) + _UINT8_SHIFT, "int32")
    if to == "int8":
        return call("qnn.requantize", e, s, zu, s, z8, out_dtype="int8")
    return call("qnn.requantize", e, s, z8, s, zu, out_dtype="uint8")


class _Importer:
    def __init__(self, r: _Reader, depth: int = 0) -> None:
        self.r = r
        self.depth = depth  # of IF/WHILE subgraphs calling subgraphs
        self.exprs: Dict[int, ir.Expr] = {}
        self.consts: Dict[int, ir.Expr] = {}

    def expr(self, t: _Tensor) -> ir.Expr:
        e = self.exprs.get(t.index)
        if e is not None:
            return e
        if t.data is not None:
            c = self.consts.get(t.index)
            if c is None:
                c = self.consts[t.index] = ir.const(t.data)
            return c
        raise ModelImportError("%s: tensor %d '%s' is read before any operator computes it"
                               % (WHO, t.index, t.name))

    def fold(self, ctx: _Ctx) -> Optional[List[np.ndarray]]:
        """The outputs of an operator of _FOLD whose inputs are all
        constants and whose outputs are not quantized, computed here; None
        for any other."""
        f = _FOLD.get(ctx.name)
        r = self.r
        if f is None or any(i >= 0 and r.tensors[i].data is None for i in ctx.ins) or \
                any(r.tensors[i].quantized for i in ctx.outs):
            return None
        values: List[np.ndarray] = []
        for i in ctx.ins:
            d = r.tensors[i].data if i >= 0 else None
            if d is not None:
                values.append(d)
        return f(ctx, values)

    def set_constant(self, ctx: _Ctx, t: _Tensor, value: np.ndarray) -> None:
        if t.np_dtype is None or int(np.prod(t.shape)) != value.size:
            raise ctx.error("the computed %s value of %d elements does not fit tensor '%s' %s"
                            % (value.dtype, value.size, t.name, t.shape))
        t.data = np.asarray(value).astype(t.np_dtype).reshape(t.shape)
        self.consts.pop(t.index, None)

    def convert_ops(self) -> None:
        """Every operator of the subgraph, in order, into self.exprs."""
        r, states = self.r, self.states
        for k, op in enumerate(r.ops):
            if states.handles(k):
                states.convert(k)
                continue
            name = r.op_name(k)
            ctx = _Ctx(self, k, op, name)
            if name not in _UINT8_OPS and any(
                    i >= 0 and r.tensors[i].shifted and r.tensors[i].data is None
                    for i in ctx.ins + ctx.outs):
                raise ctx.unsupported("uint8 operands are not supported here (uint8 models "
                                      "run %s)" % ", ".join(_UINT8_OPS))
            y: Any
            try:
                y = self.fold(ctx)
                if y is None:
                    y = _CONVERTERS[name](ctx)
            except ModelImportError:
                raise
            except (ValueError, TypeError, NotImplementedError, KeyError, IndexError,
                    struct.error) as e:
                # our builders' errors name the operator and argument; a
                # corrupt options table surfaces here as a reader error
                raise ctx.error(str(e)) from None
            ys = y if isinstance(y, list) else [y]
            if len(ys) != len(ctx.outs):
                raise ctx.error("has %d outputs; %d were computed" % (len(ctx.outs), len(ys)))
            for i, value in zip(ctx.outs, ys):
                if isinstance(value, np.ndarray):
                    self.set_constant(ctx, r.tensors[i], value)
                else:
                    self.exprs[i] = value

    def call_subgraph(self, ctx: _Ctx, index: int, args: Sequence[ir.Expr]) -> List[ir.Expr]:
        """The outputs of subgraph `index` (an IF branch, a WHILE condition
        or body) given the expressions of its inputs: its operators are
        converted in line."""
        if self.depth >= 16:
            raise ctx.error("subgraphs call each other more than 16 deep")
        if not 0 < index < self.r.model.SubgraphsLength() or index == self.r.subgraph:
            raise ctx.error("subgraph %d is not a subgraph it may call (the model has %d)"
                            % (index, self.r.model.SubgraphsLength()))
        sub = _Importer(_Reader(self.r.buf, index), self.depth + 1)
        names = sorted({sub.r.op_name(k) for k in range(len(sub.r.ops))})
        bad = [n for n in names if n not in _CONVERTERS or n in _SUBGRAPH_REFUSED]
        if bad:
            raise ctx.unsupported("subgraph %d uses %s, not supported inside a subgraph"
                                  % (index, ", ".join(bad)))
        sub.states = tflite_state.States(sub)  # none: state operators are refused
        if len(args) != len(sub.r.inputs):
            raise ctx.error("subgraph %d takes %d inputs, got %d"
                            % (index, len(sub.r.inputs), len(args)))
        for i, a in zip(sub.r.inputs, args):
            t = sub.r.tensors[i]
            got = a.checked_type if hasattr(a, "checked_type") else None
            if got is not None and ([int(d) for d in got.shape] != list(t.shape)
                                    or str(got.dtype) != t.dtype):
                raise ctx.error("subgraph %d input '%s' is %s %s, given %s %s"
                                % (index, t.name, t.shape, t.dtype,
                                   [int(d) for d in got.shape], got.dtype))
            sub.exprs[i] = a
        sub.convert_ops()
        return [sub.expr(sub.r.tensors[i]) for i in sub.r.outputs]

    def run(self, source: str) -> ir.IRModule:
        r = self.r
        # every operator is checked before anything is built, and every
        # missing type is named at once: its count and its first node
        states = self.states = tflite_state.States(self)
        missing: Dict[str, Dict[str, Any]] = {}
        for k in range(len(r.ops)):
            name = r.op_name(k)
            if name in _CONVERTERS or states.handles(k):
                continue
            if name in missing:
                missing[name]["count"] += 1
                continue
            out = r.ops[k].outputs[0] if r.ops[k].outputs else -1
            oname = r.tensors[out].name if 0 <= out < len(r.tensors) else "?"
            missing[name] = {"operator": name, "count": 1, "first": k, "output": oname}
        if missing:
            listed = "; ".join(
                "%s (%d node%s, first: operator %d, output '%s')"
                % (m["operator"], m["count"], "" if m["count"] == 1 else "s", m["first"],
                   m["output"]) for m in missing.values())
            raise missing_operators(WHO, list(missing.values()), listed, supported_operators())
        used: Dict[str, int] = {}
        params = []
        for i in r.inputs:
            t = r.tensors[i]
            if t.dtype not in ("float32", "int8", "int32", "uint8", "int16", "bool", "int64"):
                raise UnsupportedOperatorError("%s: input '%s' has unsupported type %s"
                                       % (WHO, t.name, t.dtype))
            v = ir.var(var_name(t.name, used), shape=t.shape,
                       dtype="uint8" if t.shifted else t.dtype)
            self.exprs[i] = _shift_edge(t, v, "int8") if t.shifted else v
            params.append(v)
        states.begin(used)
        self.convert_ops()
        outs = [_shift_edge(r.tensors[i], self.expr(r.tensors[i]), "uint8")
                if r.tensors[i].shifted else self.expr(r.tensors[i]) for i in r.outputs]
        mod = finish(params + states.params(), outs + states.results(),
                     [r.tensors[i].info() for i in r.inputs],
                     [r.tensors[i].info() for i in r.outputs], source, WHO)
        return states.attach(mod, len(params), len(outs))


def from_tflite(model: Union[str, bytes, bytearray, memoryview, Any]) -> ir.IRModule:
    """Import a TFLite model (a path, or the file's bytes) as an IRModule
    whose "main" takes the model's inputs and returns its outputs.

    The module attributes "inputs" and "outputs" list each tensor's name,
    shape, dtype and, when quantized, its scales, zero points and
    quantized dimension. Raises ModelImportError (a ValueError) for an
    operator or option that cannot be mapped, or a corrupt file."""
    if isinstance(model, (bytes, bytearray, memoryview)):
        buf, source = bytes(model), "tflite"
    else:
        path = str(model)
        with open(path, "rb") as f:
            buf = f.read()
        import os

        source = "tflite:" + os.path.basename(path)
    return _Importer(_Reader(buf)).run(source)
