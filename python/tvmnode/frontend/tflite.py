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
from .common import ModelImportError, TensorInfo, UnsupportedOperatorError, call, finish, scalar, var_name, vector_or_scalar

WHO = "from_tflite"

# TensorType of the schema -> (our dtype, numpy dtype)
_DTYPES = {0: ("float32", np.float32), 2: ("int32", np.int32), 3: ("uint8", np.uint8),
           4: ("int64", np.int64), 6: ("bool", np.bool_), 7: ("int16", np.int16),
           9: ("int8", np.int8), 10: ("float64", np.float64)}

_NONE, _RELU, _RELU_N1_TO_1, _RELU6 = 0, 1, 2, 3
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


class _Tensor:
    __slots__ = ("index", "name", "shape", "dtype", "np_dtype", "scale", "zero_point",
                 "qdim", "data")

    def __init__(self, index: int, name: str, shape: List[int], dtype: str, np_dtype: Any,
                 scale: Optional[np.ndarray], zero_point: Optional[np.ndarray], qdim: int,
                 data: Optional[np.ndarray]) -> None:
        self.index, self.name, self.shape, self.dtype = index, name, shape, dtype
        self.np_dtype, self.scale, self.zero_point, self.qdim = np_dtype, scale, zero_point, qdim
        self.data = data

    @property
    def quantized(self) -> bool:
        return self.scale is not None

    def info(self) -> TensorInfo:
        return TensorInfo(self.name, list(self.shape), self.dtype,
                          [float(s) for s in self.scale] if self.scale is not None else [],
                          [int(z) for z in self.zero_point] if self.zero_point is not None
                          else [], self.qdim)


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

    def __init__(self, buf: bytes) -> None:
        tfl = _tfl()
        self.tfl = tfl
        self.buf = buf
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
        g = m.Subgraphs(0)
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
        if w.dtype == "int8" and w.quantized:
            # a hybrid layer (float activations, int8 weights): the weights
            # are dequantized here and the layer computes in float32
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
    if (x.dtype != "int8" and not wide) or w.dtype != "int8" or out.dtype != x.dtype:
        raise ctx.unsupported("input, filter and output types %s, %s, %s are not supported "
                        "(float32, int8, or int16 with an int8 filter)"
                        % (x.dtype, w.dtype, out.dtype))
    sx, zx = ctx.qparams(x)
    sw, zw = ctx.qparams(w)
    so, zo = ctx.qparams(out)
    if sw.size not in (1, cout):
        raise ctx.error("the filter has %d scales for %d output channels" % (sw.size, cout))
    if np.any(zw != 0):
        raise ctx.error("int8 filters must have zero point 0")
    per_channel = sw.size > 1
    if kind == "conv2d" or per_channel:
        # TFLite: double(input_scale) * double(filter_scale[c])
        acc_scale = np.float64(sx[0]) * sw.astype(np.float64)
    else:
        # TFLite's fully-connected: the product in float, then double
        acc_scale = np.array([np.float32(sx[0]) * np.float32(sw[0])], np.float64)
    acc = "int64" if wide else "int32"
    if wide and (zx[0] != 0 or zo[0] != 0):
        raise ctx.error("int16 input and output must have zero point 0, got %d and %d"
                        % (zx[0], zo[0]))
    y = call("qnn." + kind, xe, ir.const(kern), scalar(zx[0], "int32"), scalar(0, "int32"),
             scalar(sx[0], "float32"), vector_or_scalar(sw, "float32"), out_dtype=acc,
             **attrs)
    if bias is not None:
        if bias.dtype != np.dtype(acc):
            raise ctx.error("an %s layer's bias must be %s, got %s" % (x.dtype, acc, bias.dtype))
        y = call("nn.bias_add", y, ir.const(bias), axis=axis)
    y = call("qnn.requantize", y, vector_or_scalar(acc_scale, "float64"), scalar(0, "int32"),
             scalar(so[0], "float32"), scalar(zo[0], "int32"), axis=axis, out_dtype=x.dtype)
    return _activation(ctx, y, act, out)


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


def _pool(ctx: _Ctx, kind: str) -> ir.Expr:
    o = ctx.options("Pool2DOptions")
    x = ctx.t(0)
    if len(x.shape) != 4:
        raise ctx.error("expects a 4-d NHWC input, got %s" % x.shape)
    k = [int(o.FilterHeight()), int(o.FilterWidth())]
    s = [int(o.StrideH()), int(o.StrideW())]
    _positive(ctx, "the window", *k)
    _positive(ctx, "strides", *s)
    if x.dtype in ("int8", "int16"):
        if not _same_quant(ctx, x, ctx.out):
            raise ctx.error("%s pooling needs the same scale and zero point in and out"
                            % x.dtype)
    elif x.dtype != "float32":
        raise ctx.unsupported("%s input is not supported (float32, int8 or int16)" % x.dtype)
    pad = _padding(ctx, int(o.Padding()), x.shape[1:3], k, s, [1, 1])
    y = call("nn." + kind, ctx.expr(0), pool_size=k, strides=s, padding=pad, layout="NHWC")
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
    if x.dtype == out.dtype == "int8":
        return call("qnn.softmax", ctx.expr(0), *ctx.qscalar(x), *ctx.qscalar(out), axis=-1,
                    beta=beta)
    raise ctx.unsupported("%s -> %s is not supported" % (x.dtype, out.dtype))


# QUANTIZE's integer pairs TFLite Micro runs (quantize_common.cc): each is
# its Requantize, with multiplier double(s_in) / double(s_out).
_REQUANTIZE_PAIRS = {("int8", "int8"), ("int8", "uint8"), ("uint8", "int8"),
                     ("int8", "int16"), ("int8", "int32"), ("int16", "int8"),
                     ("int16", "int16"), ("int16", "int32"), ("int32", "int8"),
                     ("int32", "int16")}


def _quantize(ctx: _Ctx) -> ir.Expr:
    x, out = ctx.t(0), ctx.out
    if x.dtype == "float32":
        if out.dtype not in ("int8", "int16"):
            raise ctx.unsupported("quantizing float32 to %s is not supported (int8 or int16)"
                                  % out.dtype)
        so, zo = ctx.qparams(out)
        return call("qnn.quantize", ctx.expr(0), vector_or_scalar(so, "float32"),
                    vector_or_scalar(zo, "int32"), axis=out.qdim - len(out.shape)
                    if so.size > 1 else -1, out_dtype=out.dtype)
    if (x.dtype, out.dtype) in _REQUANTIZE_PAIRS:
        return call("qnn.requantize", ctx.expr(0), *ctx.qscalar(x), *ctx.qscalar(out),
                    out_dtype=out.dtype)
    raise ctx.unsupported("quantizing %s to %s is not supported (float32 to int8 or int16, "
                          "or %s)" % (x.dtype, out.dtype, ", ".join(
                              "%s to %s" % p for p in sorted(_REQUANTIZE_PAIRS))))


def _dequantize(ctx: _Ctx) -> ir.Expr:
    x = ctx.t(0)
    if x.dtype not in ("int8", "uint8", "int16"):
        raise ctx.unsupported("dequantizing %s is not supported (int8, uint8 or int16)"
                              % x.dtype)
    s, z = ctx.qparams(x)
    if x.data is not None:  # a constant: dequantize it here
        axis = x.qdim if s.size > 1 else 0
        shape = [1] * x.data.ndim
        if s.size > 1:
            shape[axis] = s.size
        real = (x.data.astype(np.float32) - z.reshape(shape).astype(np.float32)) * \
            s.reshape(shape).astype(np.float32)
        return ir.const(real.astype(np.float32))
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
    raise ctx.unsupported("%s -> %s is not supported" % (x.dtype, out.dtype))


def _pad(ctx: _Ctx) -> ir.Expr:
    x, out = ctx.t(0), ctx.out
    p = ctx.const(1, "the paddings")
    if p.shape != (len(x.shape), 2):
        raise ctx.error("paddings must have shape [%d, 2], got %s" % (len(x.shape), list(p.shape)))
    value = 0.0
    if x.dtype == "int8":
        if not _same_quant(ctx, x, out):
            raise ctx.error("an int8 pad must keep its scale and zero point")
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


def _strided_slice(ctx: _Ctx) -> ir.Expr:
    o = ctx.options("StridedSliceOptions")
    x = ctx.t(0)
    rank = len(x.shape)
    begin = [int(v) for v in ctx.const(1, "begin").reshape(-1)]
    end = [int(v) for v in ctx.const(2, "end").reshape(-1)]
    strides = [int(v) for v in ctx.const(3, "strides").reshape(-1)] if ctx.has(3) else [1] * rank
    if not len(begin) == len(end) == len(strides) == rank:
        raise ctx.error("begin, end and strides must each have %d values" % rank)
    if int(o.EllipsisMask()) or int(o.NewAxisMask()):
        raise ctx.unsupported("ellipsis and new-axis masks are not supported (plain slices only)")
    if hasattr(o, "Offset") and bool(o.Offset()):
        raise ctx.unsupported("offset slices are not supported (plain slices only)")
    bm, em, sm = int(o.BeginMask()), int(o.EndMask()), int(o.ShrinkAxisMask())
    for i in range(rank):
        if strides[i] < 1:
            raise ctx.unsupported("stride %d of axis %d is not supported (positive strides only)"
                            % (strides[i], i))
        if bm >> i & 1:
            begin[i] = 0
        if em >> i & 1:
            end[i] = x.shape[i]
        if sm >> i & 1:
            b = begin[i] + x.shape[i] if begin[i] < 0 else begin[i]
            begin[i], end[i], strides[i] = b, b + 1, 1
    y = call("strided_slice", ctx.expr(0), begin=begin, end=end, strides=strides)
    if sm:
        y = call("reshape", y, newshape=list(ctx.out.shape))
    return y


_CONVERTERS: Dict[str, Callable[[_Ctx], ir.Expr]] = {
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
}


def supported_operators() -> List[str]:
    """The TFLite builtin operators this importer maps."""
    return sorted(_CONVERTERS)


class _Importer:
    def __init__(self, r: _Reader) -> None:
        self.r = r
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

    def run(self, source: str) -> ir.IRModule:
        r = self.r
        # every operator is checked before anything is built
        for k in range(len(r.ops)):
            name = r.op_name(k)
            if name not in _CONVERTERS:
                out = r.ops[k].outputs[0] if r.ops[k].outputs else -1
                oname = r.tensors[out].name if 0 <= out < len(r.tensors) else "?"
                raise UnsupportedOperatorError(
                    "%s: operator %d %s (output '%s') is not supported; supported: %s"
                    % (WHO, k, name, oname, ", ".join(supported_operators())))
        used: Dict[str, int] = {}
        params = []
        for i in r.inputs:
            t = r.tensors[i]
            if t.dtype not in ("float32", "int8", "int32", "uint8", "int16", "bool", "int64"):
                raise UnsupportedOperatorError("%s: input '%s' has unsupported type %s"
                                       % (WHO, t.name, t.dtype))
            v = ir.var(var_name(t.name, used), shape=t.shape, dtype=t.dtype)
            self.exprs[i] = v
            params.append(v)
        for k, op in enumerate(r.ops):
            name = r.op_name(k)
            ctx = _Ctx(self, k, op, name)
            try:
                y = _CONVERTERS[name](ctx)
            except ModelImportError:
                raise
            except (ValueError, TypeError, NotImplementedError, KeyError, IndexError,
                    struct.error) as e:
                # our builders' errors name the operator and argument; a
                # corrupt options table surfaces here as a reader error
                raise ctx.error(str(e)) from None
            if len(ctx.outs) != 1:
                raise ctx.unsupported("has %d outputs; one is supported" % len(ctx.outs))
            self.exprs[ctx.outs[0]] = y
        outs = [self.expr(r.tensors[i]) for i in r.outputs]
        return finish(params, outs, [r.tensors[i].info() for i in r.inputs],
                      [r.tensors[i].info() for i in r.outputs], source, WHO)


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
