"""Every operator's generated C, against the executor.

For each operator that has a kernel, in each dtype its kernel takes, at
least two one-operator modules with different attributes are compiled to
an archive, built with -Wall -Wextra -Werror from nothing but the archive's
own files, and run through their C interface: the outputs must equal the
host executor's byte for byte (int8 and float alike: both run the same
kernel with the same parameters). The tables below must name every
operator with a kernel and, between them, reach every kernel form of the
crt (kernel.Forms), so a new operator or form without a case fails here."""
from __future__ import annotations

import hashlib
import os
import subprocess
from typing import Any, Callable, Dict, List, Sequence, Set, Tuple

import numpy as np
import pytest

import tvmnode as tn
from tvmnode import codegen, ir, runtime

from aot_util import STRICT, HostModel

R = np.random.default_rng(7)
Build = Callable[..., Any]


def f32(*shape: int) -> np.ndarray:
    return R.standard_normal(shape).astype(np.float32)


def s8(*shape: int) -> np.ndarray:
    return R.integers(-128, 128, shape).astype(np.int8)


def i32(*shape: int) -> np.ndarray:
    return R.integers(-1000, 1000, shape).astype(np.int32)


def c(v: Any, dtype: str = "float32") -> Any:
    return ir.const(np.asarray(v, dtype=dtype))


O, NN, Q = ir.op, ir.op.nn, ir.op.qnn

# (case id, operator, inputs, build(*vars)); ids name operator, dtype and
# variant.
CASES: List[Tuple[str, str, Sequence[np.ndarray], Build]] = []


def case(op: str, label: str, inputs: Sequence[np.ndarray], build: Build) -> None:
    CASES.append(("%s-%s" % (op, label), op, inputs, build))


for name in ("add", "subtract", "multiply", "maximum", "minimum"):
    fn = getattr(O, name)
    case(name, "f32-same", [f32(2, 3), f32(2, 3)], fn)
    case(name, "f32-broadcast", [f32(2, 1, 4), f32(3, 1)], fn)
    case(name, "i32-broadcast", [i32(4, 1), i32(1, 5)], fn)
case("divide", "f32-same", [f32(2, 3), f32(2, 3) + 4], O.divide)
case("divide", "f32-broadcast", [f32(2, 1, 4), f32(3, 1) + 4], O.divide)
case("divide", "i32", [i32(3, 4), np.full((4,), 7, np.int32)], O.divide)
for name in ("negative", "exp", "sigmoid", "tanh"):
    case(name, "f32-vec", [f32(7)], getattr(O, name))
    case(name, "f32-4d", [f32(1, 2, 3, 4)], getattr(O, name))
case("negative", "i32", [i32(5)], O.negative)
case("nn.relu", "f32", [f32(3, 5)], NN.relu)
case("nn.relu", "i32", [i32(2, 6)], NN.relu)
case("nn.leaky_relu", "f32", [f32(3, 5)], lambda x: NN.leaky_relu(x))
case("nn.leaky_relu", "f32-alpha", [f32(11)], lambda x: NN.leaky_relu(x, 0.3))
case("clip", "f32", [f32(4, 4)], lambda x: O.clip(x, -0.5, 0.75))
case("clip", "f32-inf", [f32(9)], lambda x: O.clip(x, 0.0, float("inf")))
case("clip", "i32", [i32(8)], lambda x: O.clip(x, -100, 300))
case("clip", "s8", [s8(2, 8)], lambda x: O.clip(x, -20, 90))
case("clip", "s8-wide", [s8(6)], lambda x: O.clip(x, -1000, 1000))
case("cast", "f32-s8", [f32(10) * 50], lambda x: O.cast(x, "int8"))
case("cast", "i32-f32", [i32(3, 3)], lambda x: O.cast(x, "float32"))
case("cast", "s8-i32", [s8(6)], lambda x: O.cast(x, "int32"))
case("reshape", "f32", [f32(2, 6)], lambda x: O.exp(O.reshape(x, [3, 4])))
case("reshape", "s8", [s8(2, 6)], lambda x: O.clip(O.reshape(x, [12]), -5, 5))
case("squeeze", "f32", [f32(1, 4, 1)], lambda x: O.exp(O.squeeze(x, [0, 2])))
case("squeeze", "f32-all", [f32(1, 3)], lambda x: O.exp(O.squeeze(x)))
case("expand_dims", "f32", [f32(4)], lambda x: O.exp(O.expand_dims(x, 0)))
case("expand_dims", "f32-2", [f32(2, 3)], lambda x: O.exp(O.expand_dims(x, 1, 2)))
case("transpose", "f32", [f32(2, 3, 4)], lambda x: O.transpose(x, [2, 0, 1]))
case("transpose", "s8-rev", [s8(3, 5)], lambda x: O.transpose(x))
case("concatenate", "f32-axis1", [f32(2, 3), f32(2, 5)], lambda a, b: O.concatenate([a, b], 1))
case("concatenate", "s8-axis0", [s8(1, 4), s8(3, 4), s8(2, 4)],
     lambda a, b, x: O.concatenate([a, b, x], 0))
case("nn.pad", "f32", [f32(1, 3, 3, 2)],
     lambda x: NN.pad(x, [[0, 0], [1, 2], [2, 1], [0, 0]], 0.5))
case("nn.pad", "s8", [s8(2, 5)], lambda x: NN.pad(x, [[1, 0], [0, 3]], -7))
case("strided_slice", "f32", [f32(4, 6)], lambda x: O.strided_slice(x, [1, 0], [3, 6], [1, 2]))
case("strided_slice", "s8-neg", [s8(2, 8)], lambda x: O.strided_slice(x, [0, 7], [2, 0], [1, -3]))
case("mean", "f32", [f32(2, 3, 4)], lambda x: O.mean(x, [1]))
case("mean", "f32-keep", [f32(2, 3, 4)], lambda x: O.mean(x, [0, 2], keepdims=True))
case("mean", "i32", [i32(3, 4)], lambda x: O.mean(x, [1]))
case("nn.bias_add", "f32-nchw", [f32(1, 3, 2, 2)], lambda x: NN.bias_add(x, c(f32(3)), 1))
case("nn.bias_add", "f32-last", [f32(2, 5)], lambda x: NN.bias_add(x, c(f32(5)), -1))
case("nn.bias_add", "i32", [i32(2, 4)], lambda x: NN.bias_add(x, c(i32(4), "int32"), 1))
case("nn.dense", "f32", [f32(2, 8)], lambda x: NN.dense(x, c(f32(5, 8))))
case("nn.dense", "f32-fused", [f32(3, 6)],
     lambda x: NN.relu(NN.bias_add(NN.dense(x, c(f32(4, 6))), c(f32(4)), -1)))
# 37 outputs: two whole blocks of the packed layout (PackDenseWeights, host) and a tail
case("nn.dense", "f32-blocks", [f32(2, 20)],
     lambda x: NN.relu(NN.bias_add(NN.dense(x, c(f32(37, 20))), c(f32(37)), -1)))
case("matmul", "f32", [f32(3, 4), f32(4, 5)], lambda a, b: O.matmul(a, b))
case("matmul", "f32-tt", [f32(2, 4, 3), f32(5, 4)],
     lambda a, b: O.matmul(a, b, transpose_a=True, transpose_b=True))
case("nn.conv2d", "f32-nchw", [f32(1, 2, 6, 6)],
     lambda x: NN.conv2d(x, c(f32(3, 2, 3, 3)), strides=[2, 1], padding=[1, 0, 1, 2]))
case("nn.conv2d", "f32-nhwc-dw-fused", [f32(1, 5, 5, 4)],
     lambda x: O.clip(NN.bias_add(NN.conv2d(x, c(f32(3, 3, 1, 4)), padding=[1, 1], groups=4,
                                            dilation=[1, 1], data_layout="NHWC",
                                            kernel_layout="HWIO"), c(f32(4)), 3), 0.0, 6.0))
for pool in ("max_pool2d", "avg_pool2d"):
    case("nn." + pool, "f32", [f32(1, 2, 5, 5)], lambda x, p=pool: getattr(NN, p)(x, [2, 2], [2, 2]))
    case("nn." + pool, "f32-nhwc-pad", [f32(1, 4, 4, 3)],
         lambda x, p=pool: getattr(NN, p)(x, [3, 3], [1, 1], [1, 1, 1, 1], layout="NHWC"))
    case("nn." + pool, "s8-nhwc", [s8(1, 6, 6, 2)],
         lambda x, p=pool: getattr(NN, p)(x, [2, 2], [2, 2], layout="NHWC"))
    case("nn." + pool, "s8-pad", [s8(1, 3, 5, 5)],
         lambda x, p=pool: getattr(NN, p)(x, [3, 3], [2, 2], [1, 1, 1, 1]))
case("nn.global_avg_pool2d", "f32", [f32(1, 3, 4, 4)], lambda x: NN.global_avg_pool2d(x))
case("nn.global_avg_pool2d", "f32-nhwc", [f32(2, 3, 3, 5)],
     lambda x: NN.global_avg_pool2d(x, layout="NHWC"))
case("nn.global_avg_pool2d", "s8-nhwc", [s8(1, 4, 4, 8)],
     lambda x: NN.global_avg_pool2d(x, layout="NHWC"))
case("nn.global_avg_pool2d", "s8", [s8(1, 2, 3, 3)], lambda x: NN.global_avg_pool2d(x))
case("nn.softmax", "f32", [f32(3, 10)], lambda x: NN.softmax(x))
case("nn.softmax", "f32-axis1", [f32(2, 4, 3)], lambda x: NN.softmax(x, 1))

S = lambda v: c(v, "float32")  # noqa: E731
Z = lambda v: c(v, "int32")  # noqa: E731
case("qnn.quantize", "tensor", [f32(4, 5)], lambda x: Q.quantize(x, S(0.02), Z(3)))
case("qnn.quantize", "channel", [f32(2, 3)],
     lambda x: Q.quantize(x, S([0.01, 0.02, 0.05]), Z([0, -4, 9]), axis=1))
# exact ties (k + 0.5 steps): half to even, as ONNX rounds
case("qnn.quantize", "even", [(np.arange(-12, 12, dtype=np.float32) + 0.5) * np.float32(0.25)],
     lambda x: Q.quantize(x, S(0.25), Z(1), rounding="EVEN"))
case("qnn.dequantize", "tensor", [s8(7)], lambda x: Q.dequantize(x, S(0.1), Z(-3)))
case("qnn.dequantize", "channel", [s8(3, 2)],
     lambda x: Q.dequantize(x, S([0.5, 0.25, 0.125]), Z([1, 2, 3]), axis=0))
case("qnn.requantize", "s32", [i32(2, 6) * 40],
     lambda x: Q.requantize(x, S(0.01), Z(0), S(0.3), Z(-5)))
case("qnn.requantize", "s32-channel", [i32(1, 3) * 40],
     lambda x: Q.requantize(x, S([0.01, 0.02, 0.004]), Z(0), S(0.2), Z(3), axis=1))
case("qnn.requantize", "s8", [s8(10)], lambda x: Q.requantize(x, S(0.05), Z(4), S(0.1), Z(-2)))
case("qnn.requantize", "s8-channel", [s8(2, 2)],
     lambda x: Q.requantize(x, S([0.05, 0.5]), Z(1), S(0.1), Z(0), axis=1))


def qconv(x: Any, w: np.ndarray, fused: bool, **kw: Any) -> Any:
    acc = Q.conv2d(x, c(w, "int8"), Z(-3), Z(0), S(0.05), S(0.02), **kw)
    if not fused:
        return acc
    co = w.shape[3] if kw.get("kernel_layout") == "HWIO" else w.shape[0]
    axis = 3 if kw.get("data_layout") == "NHWC" else 1
    acc = NN.bias_add(acc, c(i32(co), "int32"), axis)
    scale = S(np.linspace(0.0005, 0.002, co).astype(np.float32))
    return O.clip(Q.requantize(acc, scale, Z(0), S(0.05), Z(2), axis=axis), -128, 100)


case("qnn.conv2d", "s32", [s8(1, 2, 5, 5)], lambda x: qconv(x, s8(3, 2, 3, 3), False))
case("qnn.conv2d", "s32-stride", [s8(1, 6, 6, 2)],
     lambda x: qconv(x, s8(2, 2, 2, 4), False, strides=[2, 2], data_layout="NHWC",
                     kernel_layout="HWIO"))
case("qnn.conv2d", "s8-fused-nhwc", [s8(1, 6, 6, 3)],
     lambda x: qconv(x, s8(3, 3, 3, 5), True, padding=[1, 1], data_layout="NHWC",
                     kernel_layout="HWIO"))
# 589,824 multiply-adds: a host archive calls it through the crt's
# tn_crt_call_split (split.c), which runs it whole with no parallel hook set
case("qnn.conv2d", "s8-fused-nhwc-split", [s8(1, 16, 16, 16)],
     lambda x: qconv(x, s8(3, 3, 16, 16), True, padding=[1, 1], data_layout="NHWC",
                     kernel_layout="HWIO"))
case("qnn.conv2d", "s8-fused-dw", [s8(1, 5, 5, 4)],
     lambda x: qconv(x, s8(3, 3, 1, 4), True, padding=[1, 1], groups=4, data_layout="NHWC",
                     kernel_layout="HWIO"))


def qdense(x: Any, w: np.ndarray, fused: bool) -> Any:
    acc = Q.dense(x, c(w, "int8"), Z(5), Z(0), S(0.05), S(0.02))
    if not fused:
        return acc
    acc = NN.bias_add(acc, c(i32(w.shape[0]), "int32"), -1)
    return Q.requantize(acc, S(0.002), Z(0), S(0.04), Z(-10))


case("qnn.dense", "s32", [s8(2, 9)], lambda x: qdense(x, s8(4, 9), False))
case("qnn.dense", "s32-wide", [s8(1, 33)], lambda x: qdense(x, s8(7, 33), False))
case("qnn.dense", "s8-fused", [s8(3, 16)], lambda x: qdense(x, s8(6, 16), True))
case("qnn.dense", "s8-fused-odd", [s8(1, 5)], lambda x: qdense(x, s8(9, 5), True))
for name in ("add", "mul"):
    fn = getattr(Q, name)
    case("qnn." + name, "same", [s8(3, 4), s8(3, 4)],
         lambda a, b, f=fn: f(a, b, S(0.05), Z(2), S(0.04), Z(-3), S(0.08), Z(1)))
    case("qnn." + name, "broadcast", [s8(2, 1, 4), s8(3, 1)],
         lambda a, b, f=fn: f(a, b, S(0.1), Z(0), S(0.02), Z(5), S(0.2), Z(-7)))
    # a clip after it: its activation range once fused (TFLite's RELU)
    case("qnn." + name, "clip", [s8(2, 45), s8(2, 45)],
         lambda a, b, f=fn: O.clip(f(a, b, S(0.05), Z(2), S(0.04), Z(-3), S(0.08), Z(-5)),
                                   -5, 127))
case("qnn.softmax", "rows", [s8(3, 10)],
     lambda x: Q.softmax(x, S(0.1), Z(4), S(1 / 256), Z(-128)))
case("qnn.softmax", "beta", [s8(1, 2, 7)],
     lambda x: Q.softmax(x, S(0.05), Z(-10), S(1 / 256), Z(-128), beta=0.5))
case("qnn.sigmoid", "a", [s8(20)], lambda x: Q.sigmoid(x, S(0.1), Z(3), S(1 / 256), Z(-128)))
case("qnn.sigmoid", "b", [s8(2, 5)], lambda x: Q.sigmoid(x, S(0.02), Z(-9), S(1 / 256), Z(-128)))
case("qnn.tanh", "a", [s8(20)], lambda x: Q.tanh(x, S(0.05), Z(0), S(1 / 128), Z(0)))
case("qnn.tanh", "b", [s8(4, 3)], lambda x: Q.tanh(x, S(0.2), Z(12), S(1 / 128), Z(0)))
case("qnn.mean", "axis", [s8(2, 3, 4)], lambda x: Q.mean(x, S(0.1), Z(1), S(0.05), Z(-2), [1]))
case("qnn.mean", "keep", [s8(1, 4, 4, 3)],
     lambda x: Q.mean(x, S(0.05), Z(-5), S(0.05), Z(-5), [1, 2], keepdims=True))
case("sum", "f32", [f32(2, 3, 4)], lambda x: O.sum(x, [1]))
case("sum", "f32-keep", [f32(2, 3, 4)], lambda x: O.sum(x, [0, 2], keepdims=True))
case("sum", "i32-all", [i32(3, 4)], lambda x: O.sum(x))
case("max", "f32", [f32(2, 3, 4)], lambda x: O.max(x, [2]))
case("max", "s8-keep", [s8(2, 3, 4)], lambda x: O.max(x, [0, 1], keepdims=True))
case("max", "i32", [i32(5, 3)], lambda x: O.max(x, [0]))
case("min", "f32-all", [f32(3, 4)], lambda x: O.min(x))
case("min", "s8", [s8(4, 2, 3)], lambda x: O.min(x, [1]))
case("min", "i32-keep", [i32(2, 6)], lambda x: O.min(x, [1], keepdims=True))
case("argmax", "f32", [f32(3, 5)], lambda x: O.argmax(x, 1))
case("argmax", "s8-keep", [s8(2, 4, 3)], lambda x: O.argmax(x, 1, keepdims=True))
case("argmax", "i32", [i32(4, 2)], lambda x: O.argmax(x, 0))
case("argmin", "f32-keep", [f32(2, 3, 4)], lambda x: O.argmin(x, -1, keepdims=True))
case("argmin", "s8", [s8(6)], lambda x: O.argmin(x, 0))
case("argmin", "i32", [i32(3, 3)], lambda x: O.argmin(x, 1))
case("qnn.sum", "axis", [s8(2, 3, 4)], lambda x: Q.sum(x, S(0.1), Z(1), S(0.5), Z(-2), [1]))
case("qnn.sum", "keep", [s8(1, 4, 4, 3)],
     lambda x: Q.sum(x, S(0.05), Z(-5), S(0.4), Z(3), [1, 2], keepdims=True))
case("take", "f32", [f32(5, 3)], lambda x: O.take(x, c([4, 0, -1, 2], "int32")))
case("take", "s8-axis1", [s8(2, 6, 3)], lambda x: O.take(x, c([[5, 1], [0, 3]], "int32"), 1))
case("take", "i32-input-indices", [i32(4, 2), np.array([3, 1, 0], np.int32)],
     lambda x, i: O.take(x, i, 0))

IMG = ir.op.image
case("image.resize2d", "f32-linear", [f32(1, 3, 4, 2)], lambda x: IMG.resize2d(x, [5, 7]))
case("image.resize2d", "f32-linear-half", [f32(2, 6, 5, 3)],
     lambda x: IMG.resize2d(x, [4, 3], half_pixel_centers=True))
case("image.resize2d", "s8-linear-align", [s8(1, 4, 4, 5)],
     lambda x: IMG.resize2d(x, [7, 6], align_corners=True))
case("image.resize2d", "s8-linear-half", [s8(1, 3, 5, 2)],
     lambda x: IMG.resize2d(x, [6, 2], half_pixel_centers=True))
case("image.resize2d", "s8-nearest", [s8(1, 3, 3, 4)],
     lambda x: IMG.resize2d(x, [6, 5], method="nearest_neighbor", half_pixel_centers=True))
case("image.resize2d", "f32-nearest-align", [f32(2, 5, 4, 1)],
     lambda x: IMG.resize2d(x, [3, 8], method="nearest_neighbor", align_corners=True))
case("nn.batch_matmul", "f32", [f32(2, 3, 4), f32(2, 4, 5)], lambda a, b: NN.batch_matmul(a, b))
case("nn.batch_matmul", "f32-adj-broadcast", [f32(2, 1, 4, 3), f32(3, 5, 4)],
     lambda a, b: NN.batch_matmul(a, b, adj_x=True, adj_y=True))
case("qnn.batch_matmul", "s32", [s8(3, 4), s8(2, 4, 6)],
     lambda a, b: Q.batch_matmul(a, b, Z(3), Z(-2), S(0.05), S(0.02)))
case("qnn.batch_matmul", "s8-adj", [s8(2, 5, 3), s8(2, 4, 5)],
     lambda a, b: Q.requantize(Q.batch_matmul(a, b, Z(-7), Z(0), S(0.05), S(0.02), adj_x=True,
                                              adj_y=True),
                               c(0.001, "float64"), Z(0), S(0.1), Z(4)))
case("nn.conv2d_transpose", "f32", [f32(1, 3, 4, 2)],
     lambda x: NN.conv2d_transpose(x, c(f32(3, 3, 3, 2)), strides=[2, 2], padding=[1, 1],
                                   output_size=[6, 8]))
case("nn.conv2d_transpose", "f32-fused", [f32(2, 3, 3, 3)],
     lambda x: NN.relu(NN.bias_add(NN.conv2d_transpose(x, c(f32(2, 2, 3, 3)), strides=[1, 2],
                                                       output_size=[4, 7]), c(f32(2)), 3)))


def qtconv(x: Any, w: np.ndarray, fused: bool, **kw: Any) -> Any:
    co = w.shape[0]
    acc = Q.conv2d_transpose(x, c(w, "int8"), Z(4), Z(0), S(0.05),
                             S(np.linspace(0.005, 0.02, co).astype(np.float32)), **kw)
    if not fused:
        return acc
    acc = NN.bias_add(acc, c(i32(co), "int32"), 3)
    return Q.requantize(acc, S(np.linspace(0.0005, 0.002, co).astype(np.float32)), Z(0),
                        S(0.05), Z(2), axis=3)


case("qnn.conv2d_transpose", "s32", [s8(1, 3, 3, 2)],
     lambda x: qtconv(x, s8(4, 3, 3, 2), False, strides=[2, 2], padding=[1, 1],
                      output_size=[5, 5]))
case("qnn.conv2d_transpose", "s8-requant", [s8(2, 2, 4, 3)],
     lambda x: qtconv(x, s8(3, 2, 3, 3), True, strides=[3, 1], output_size=[6, 6]))
case("nn.l2_normalize", "f32", [f32(3, 8)], lambda x: NN.l2_normalize(x))
case("nn.l2_normalize", "f32-eps", [f32(2, 2, 5) * 1e-4], lambda x: NN.l2_normalize(x, eps=0.01))
case("qnn.l2_normalize", "s8", [s8(4, 6)],
     lambda x: Q.l2_normalize(x, S(0.05), Z(3), S(1 / 128), Z(0)))
case("qnn.l2_normalize", "s8-4d", [s8(1, 2, 3, 9)],
     lambda x: Q.l2_normalize(x, S(0.2), Z(-20), S(1 / 128), Z(0)))
case("nn.log_softmax", "f32", [f32(3, 10)], lambda x: NN.log_softmax(x))
case("nn.log_softmax", "f32-4d", [f32(1, 2, 3, 4)], lambda x: NN.log_softmax(x, -1))
case("qnn.log_softmax", "s8", [s8(3, 10)],
     lambda x: Q.log_softmax(x, S(0.1), Z(3), S(16 / 256), Z(127)))
case("qnn.log_softmax", "s8-wide", [s8(1, 2, 40)],
     lambda x: Q.log_softmax(x, S(0.03), Z(-9), S(16 / 256), Z(127)))

for name in ("abs", "sqrt", "rsqrt", "log"):
    pos = name in ("sqrt", "rsqrt", "log")
    case(name, "f32-vec", [np.abs(f32(9)) + 0.1 if pos else f32(9)], getattr(O, name))
    case(name, "f32-3d", [np.abs(f32(2, 3, 4)) + 0.1 if pos else f32(2, 3, 4)],
         getattr(O, name))
for name in ("maximum", "minimum"):
    case(name, "s8-same", [s8(3, 5), s8(3, 5)], getattr(O, name))
    case(name, "s8-broadcast", [s8(2, 1, 4), s8(3, 1)], getattr(O, name))
case("qnn.subtract", "same", [s8(3, 4), s8(3, 4)],
     lambda a, b: Q.subtract(a, b, S(0.05), Z(2), S(0.04), Z(-3), S(0.08), Z(1)))
case("qnn.subtract", "broadcast", [s8(2, 1, 4), s8(3, 1)],
     lambda a, b: Q.subtract(a, b, S(0.1), Z(0), S(0.02), Z(5), S(0.2), Z(-7)))
case("qnn.leaky_relu", "a", [s8(20)],
     lambda x: Q.leaky_relu(x, S(0.05), Z(-3), S(0.03), Z(10), alpha=0.2))
case("qnn.leaky_relu", "neg-alpha", [s8(3, 4)],
     lambda x: Q.leaky_relu(x, S(0.1), Z(5), S(0.1), Z(5), alpha=-0.5))
case("qnn.abs", "same", [s8(12)], lambda x: Q.abs(x, S(0.05), Z(-3), S(0.05), Z(-3)))
case("qnn.abs", "rescale", [s8(2, 6)], lambda x: Q.abs(x, S(0.05), Z(10), S(0.04), Z(-128)))
case("qnn.rsqrt", "a", [s8(16)], lambda x: Q.rsqrt(x, S(0.05), Z(-128), S(0.02), Z(-100)))
case("qnn.rsqrt", "b", [s8(2, 8)], lambda x: Q.rsqrt(x, S(1.5), Z(0), S(0.004), Z(0)))
for name in ("squared_difference", "prelu"):
    case("qnn." + name, "same", [s8(3, 4), s8(3, 4)],
         lambda a, b, n=name: getattr(Q, n)(a, b, S(0.05), Z(2), S(0.04), Z(-3), S(0.08), Z(1)))
    case("qnn." + name, "broadcast", [s8(2, 1, 4), s8(3, 1)],
         lambda a, b, n=name: getattr(Q, n)(a, b, S(0.1), Z(0), S(0.02), Z(5), S(0.2), Z(-7)))
case("nn.prelu", "f32-channel", [f32(2, 3, 4)], lambda x: NN.prelu(x, c(f32(4))))
case("nn.prelu", "f32-same", [f32(3, 5), f32(3, 5)], NN.prelu)
for name in ("elu", "hard_swish"):
    case("nn." + name, "f32-vec", [f32(9) * 4], getattr(NN, name))
    case("nn." + name, "f32-3d", [f32(2, 3, 4) * 4], getattr(NN, name))
    case("qnn." + name, "a", [s8(20)],
         lambda x, n=name: getattr(Q, n)(x, S(0.05), Z(-3), S(0.03), Z(-20)))
    case("qnn." + name, "b", [s8(2, 6)],
         lambda x, n=name: getattr(Q, n)(x, S(0.02), Z(40), S(0.01), Z(5)))


def s16(*shape: int) -> np.ndarray:
    return R.integers(-32768, 32768, shape).astype(np.int16)


def u8(*shape: int) -> np.ndarray:
    return R.integers(0, 256, shape).astype(np.uint8)


# quant16.c: float32 <-> int16, uint8 -> float32, the integer pairs
case("qnn.quantize", "s16", [f32(3, 5) * 30], lambda x: Q.quantize(x, S(0.001), Z(0),
                                                                   out_dtype="int16"))
case("qnn.quantize", "s16-channel", [f32(2, 3)],
     lambda x: Q.quantize(x, S([1e-4, 2e-5, 0.5]), Z([0, 7, -3]), axis=1, out_dtype="int16"))
case("qnn.dequantize", "s16", [s16(9)], lambda x: Q.dequantize(x, S(0.0007), Z(0)))
case("qnn.dequantize", "s16-channel", [s16(2, 3)],
     lambda x: Q.dequantize(x, S([0.5, 0.001, 3e-5]), Z([0, 5, -9]), axis=1))
case("qnn.dequantize", "u8", [u8(4, 3)], lambda x: Q.dequantize(x, S(0.02), Z(128)))
for src, gen, dst in (("u8", u8(11), "int8"), ("s8", s8(11), "uint8"),
                      ("s8", s8(2, 6), "int16"), ("s8", s8(7), "int32"),
                      ("s16", s16(3, 4), "int8"), ("s16", s16(13), "int16"),
                      ("s16", s16(5), "int32"), ("s32", i32(2, 5) * 100, "int16")):
    case("qnn.requantize", "%s-%s" % (src, dst), [gen],
         lambda x, s=src, d=dst: Q.requantize(x, S(0.003), Z(128 if s == "u8" else 1), S(0.01),
                                              Z(128 if d == "uint8" else 0), out_dtype=d))
case("qnn.requantize", "s16-s8-channel", [s16(2, 3)],
     lambda x: Q.requantize(x, S([1e-3, 2e-4, 5e-3]), Z(0), S(0.05), Z(-2), axis=1,
                            out_dtype="int8"))


# conv_s16.c: TFLite's 16x8 layers (int16 x int8 -> int64, int64 bias,
# int64 -> int16 through requantize_int), and the fused forms of the chain
def q16(x: Any, w: np.ndarray, dense: bool, fused: bool = True, **kw: Any) -> Any:
    if dense:
        acc = Q.dense(x, c(w, "int8"), Z(0), Z(0), S(0.001), S(0.02), out_dtype="int64")
        co, axis = w.shape[0], -1
    else:
        acc = Q.conv2d(x, c(w, "int8"), Z(0), Z(0), S(0.001), S(0.02), out_dtype="int64",
                       data_layout="NHWC", kernel_layout="HWIO", **kw)
        co, axis = w.shape[3], 3
    if not fused:
        return acc
    acc = NN.bias_add(acc, c(R.integers(-(1 << 20), 1 << 20, co), "int64"), axis)
    scale = c(np.linspace(2e-5, 4e-5, co), "float64")
    return O.clip(Q.requantize(acc, scale, Z(0), S(0.003), Z(3), axis=axis, out_dtype="int16"),
                  -20000, 32767)


case("qnn.conv2d", "s16-s64", [s16(1, 5, 5, 3)], lambda x: q16(x, s8(3, 3, 3, 4), False, False))
case("qnn.conv2d", "s16-fused", [s16(1, 5, 5, 3)], lambda x: q16(x, s8(3, 3, 3, 4), False))
case("qnn.conv2d", "s16-fused-dw", [s16(1, 6, 6, 2)],
     lambda x: q16(x, s8(3, 3, 1, 4), False, padding=[1, 1], groups=2, strides=[2, 2]))
case("qnn.dense", "s16-fused", [s16(3, 10)], lambda x: q16(x, s8(5, 10), True))
case("qnn.dense", "s16-s64-row", [s16(1, 7)], lambda x: q16(x, s8(4, 7), True, False))
case("nn.bias_add", "i64", [s16(2, 4).astype(np.int64) << 20],
     lambda x: NN.bias_add(x, c(R.integers(-(1 << 40), 1 << 40, 4), "int64"), 1))
case("clip", "s16", [s16(3, 7)], lambda x: O.clip(x, -3000, 20000))
for pool in ("max_pool2d", "avg_pool2d"):
    case("nn." + pool, "s16-nhwc", [s16(1, 5, 6, 3)],
         lambda x, p=pool: getattr(NN, p)(x, [2, 3], [2, 2], [1, 1, 0, 1], layout="NHWC"))
    case("nn." + pool, "s16-nchw", [s16(2, 2, 4, 4)],
         lambda x, p=pool: getattr(NN, p)(x, [2, 2], [1, 1]))
for name in ("add", "mul"):
    fn = getattr(Q, name)
    case("qnn." + name, "s16-same", [s16(3, 4), s16(3, 4)],
         lambda a, b, f=fn: f(a, b, S(0.0005), Z(0), S(0.0002), Z(0), S(0.001), Z(0)))
    case("qnn." + name, "s16-broadcast", [s16(2, 1, 4), s16(3, 1)],
         lambda a, b, f=fn: f(a, b, S(0.001), Z(0), S(0.0004), Z(0), S(0.003), Z(0)))
case("qnn.mean", "s16-axis", [s16(2, 3, 4)], lambda x: Q.mean(x, S(0.001), Z(0), S(0.0004), Z(0),
                                                             [1]))
case("qnn.mean", "s16-keep", [s16(1, 4, 4, 3)],
     lambda x: Q.mean(x, S(0.0005), Z(0), S(0.0005), Z(0), [1, 2], keepdims=True))


# lstm.c: whole sequences from a given hidden and cell state, either result
def lstm_consts(units: int, n_in: int, q: bool) -> List[Any]:
    if q:
        return [c(s8(4, units, n_in), "int8"), c(s8(4, units, units), "int8"),
                c(R.integers(-3000, 3000, (4, units)), "int32")]
    return [c(f32(4, units, n_in) * 0.5), c(f32(4, units, units) * 0.5), c(f32(4, units))]


def qlstm(x: Any, h: Any, cell: Any, units: int, n_in: int, cell_scale: float, **kw: Any) -> Any:
    w, r, b = lstm_consts(units, n_in, True)
    return Q.lstm(x, w, r, b, h, cell, S(0.02), Z(-3), c(np.linspace(0.004, 0.012, 8)),
                  S(1 / 128), Z(2), S(cell_scale), **kw)


def flstm(x: Any, h: Any, cell: Any, units: int, n_in: int, **kw: Any) -> Any:
    w, r, b = lstm_consts(units, n_in, False)
    return NN.lstm(x, w, r, b, h, cell, **kw)


case("nn.lstm", "f32-sequence", [f32(2, 3, 5), f32(2, 4), f32(2, 4)],
     lambda x, h, cl: flstm(x, h, cl, 4, 5))
case("nn.lstm", "f32-cell-time-major-clip", [f32(3, 2, 5), f32(2, 3), f32(2, 3)],
     lambda x, h, cl: flstm(x, h, cl, 3, 5, emit="cell", time_major=True, cell_clip=0.5))
case("qnn.lstm", "s8-sequence-clip", [s8(2, 4, 6), s8(2, 5), s16(2, 5)],
     lambda x, h, cl: qlstm(x, h, cl, 5, 6, 2.0 ** -11, cell_clip=3.0))
case("qnn.lstm", "s8-cell-time-major", [s8(3, 2, 7), s8(2, 4), s16(2, 4)],
     lambda x, h, cl: qlstm(x, h, cl, 4, 7, 2.0 ** -13, emit="cell",
                                    time_major=True))


# svdf.c: the state's update (any element size) and the time filter
case("nn.svdf_state", "f32", [f32(2, 3, 4), f32(2, 3)], NN.svdf_state)
case("nn.svdf_state", "s16-memory1", [s16(1, 5, 1), s16(1, 5)], NN.svdf_state)
case("nn.svdf_state", "s8", [s8(1, 6, 7), s8(1, 6)], NN.svdf_state)
case("nn.svdf_time", "f32-rank2", [f32(2, 6, 4)],
     lambda x: NN.svdf_time(x, c(f32(6, 4)), rank=2))
case("nn.svdf_time", "s16", [s16(1, 4, 8)],
     lambda x: NN.svdf_time(x, c(s16(4, 8), "int16")))
case("nn.svdf_time", "s8-zero-point-rank3", [s8(2, 6, 5)],
     lambda x: NN.svdf_time(x, c(s8(6, 5), "int8"), rank=3, zero_point=-7))


def qlayer_filter_offset(x: Any, w: np.ndarray, dense: bool, **kw: Any) -> Any:
    """A fused int8 layer whose filter has a zero point (a uint8 model's,
    read as int8): the kernels' filter_offset."""
    if dense:
        acc = Q.dense(x, c(w, "int8"), Z(-11), Z(9), S(0.05), S(0.02))
        acc = NN.bias_add(acc, c(i32(w.shape[0]), "int32"), -1)
        return Q.requantize(acc, S(0.001), Z(0), S(0.04), Z(-10))
    acc = Q.conv2d(x, c(w, "int8"), Z(-3), Z(12), S(0.05), S(0.02), data_layout="NHWC",
                   kernel_layout="HWIO", **kw)
    acc = NN.bias_add(acc, c(i32(w.shape[3]), "int32"), 3)
    return Q.requantize(acc, S(0.0007), Z(0), S(0.6), Z(2), axis=3)


case("qnn.conv2d", "s8-fused-filter-offset", [s8(1, 5, 6, 3)],
     lambda x: qlayer_filter_offset(x, s8(3, 3, 3, 4), False, padding=[1, 1]))
case("qnn.conv2d", "s8-fused-dw-filter-offset", [s8(1, 5, 5, 4)],
     lambda x: qlayer_filter_offset(x, s8(3, 3, 1, 4), False, padding=[1, 1], groups=4))
case("qnn.dense", "s8-fused-filter-offset", [s8(2, 12)],
     lambda x: qlayer_filter_offset(x, s8(5, 12), True))
case("qnn.softmax", "s8-s16", [s8(3, 11)],
     lambda x: Q.softmax(x, S(0.07), Z(4), S(1 / 65536), Z(-32768), out_dtype="int16"))
case("qnn.softmax", "s8-s16-beta", [s8(2, 1, 40)],
     lambda x: Q.softmax(x, S(0.3), Z(0), S(1 / 65536), Z(-32768), beta=0.4,
                         out_dtype="int16"))

# ops_onnxq.c: qnn.lut maps each int8 byte through a constant table
case("qnn.lut", "s8-vec", [s8(300)],
     lambda x: Q.lut(x, c(R.integers(-128, 128, 256), "int8")))
case("qnn.lut", "s8-4d", [s8(1, 3, 4, 5)],
     lambda x: Q.lut(x, c(np.arange(256).astype(np.uint8).view(np.int8)[::-1].copy(), "int8")))
# qlinear_ort.c: onnxruntime's QLinearAdd and QLinearMul (int8; uint8 stored less 128)
for name in ("qlinear_add", "qlinear_mul"):
    fn = getattr(Q, name)
    case("qnn." + name, "s8-same", [s8(3, 40), s8(3, 40)],
         lambda a, b, f=fn: f(a, b, S(0.05), Z(3), S(0.02), Z(-7), S(0.04), Z(1), Z(0)))
    case("qnn." + name, "u8-broadcast", [s8(2, 3, 5), s8(3, 1)],
         lambda a, b, f=fn: f(a, b, S(0.3), Z(200), S(0.01), Z(0), S(0.07), Z(128), Z(128)))
    case("qnn." + name, "s8-scalar-lhs", [s8(1), s8(4, 9)],
         lambda a, b, f=fn: f(a, b, S(0.011), Z(-100), S(0.2), Z(5), S(0.09), Z(-3), Z(0)))
case("qnn.qlinear_avg_pool2d", "s8-pad", [s8(2, 3, 7, 6)],
     lambda x: Q.qlinear_avg_pool2d(x, S(0.05), Z(3), S(0.04), Z(-2), Z(0), pool_size=[3, 3],
                                    strides=[2, 1], padding=[1, 1, 1, 0]))
case("qnn.qlinear_softmax", "s8-inner", [s8(2, 9, 3)],
     lambda x: Q.qlinear_softmax(x, c(np.exp(-0.1 * np.arange(256) + 20)), S(1 / 256),
                                 Z(-128), Z(0)))
case("qnn.qlinear_softmax", "u8-rows", [s8(5, 30, 1)],
     lambda x: Q.qlinear_softmax(x, c(np.exp(-0.05 * np.arange(256) + 40)), S(1 / 255),
                                 Z(0), Z(128)))
case("qnn.qlinear_avg_pool2d", "u8-global", [s8(1, 4, 5, 5)],
     lambda x: Q.qlinear_avg_pool2d(x, S(0.3), Z(200), S(0.2), Z(128), Z(128),
                                    pool_size=[5, 5]))


# ONNX Runtime's requantization (rounding ONNX): float32 scale, ties to even
def onnx_rq(acc: Any, scale: Any, zp: int, axis: int = -1) -> Any:
    return Q.requantize(acc, S(scale), Z(0), S(0.05), Z(zp), axis=axis, rounding="ONNX")


case("qnn.requantize", "s32-onnx", [i32(2, 6) * 40], lambda x: onnx_rq(x, 0.0005, -5))
case("qnn.requantize", "s32-onnx-ties", [np.arange(-20, 20, dtype=np.int32).reshape(4, 10)],
     lambda x: onnx_rq(x, 0.025, 3))
case("qnn.requantize", "s32-onnx-channel", [i32(1, 3, 2) * 40],
     lambda x: onnx_rq(x, [0.0005, 0.001, 0.0002], 7, axis=1))
case("qnn.requantize", "s8-onnx", [s8(10)],
     lambda x: Q.requantize(x, S(0.05), Z(4), S(0.1), Z(-2), rounding="ONNX"))
case("qnn.conv2d", "s8-fused-onnx-nchw", [s8(1, 3, 6, 5)],
     lambda x: O.clip(onnx_rq(NN.bias_add(Q.conv2d(x, c(s8(4, 3, 3, 3), "int8"), Z(-3), Z(0),
                                                   S(0.05), S(0.02), padding=[1, 1]),
                                          c(i32(4), "int32"), 1),
                              np.linspace(0.0005, 0.002, 4).astype(np.float32), 2, axis=1),
                      -100, 127))
case("qnn.conv2d", "s8-fused-onnx-dw", [s8(1, 4, 5, 5)],
     lambda x: onnx_rq(Q.conv2d(x, c(s8(4, 1, 3, 3), "int8"), Z(5), Z(0), S(0.05), S(0.02),
                                padding=[1, 1], groups=4), 0.001, -1, axis=1))
case("qnn.dense", "s8-fused-onnx", [s8(3, 16)],
     lambda x: onnx_rq(NN.bias_add(Q.dense(x, c(s8(6, 16), "int8"), Z(5), Z(0), S(0.05),
                                           S(0.02)), c(i32(6), "int32"), -1),
                       np.linspace(0.0005, 0.002, 6).astype(np.float32), -10))

# mm_s16.c: TFLite's int8 DIV (every dividend against divisors that include
# the zero point), 16x8 BATCH_MATMUL and TRANSPOSE_CONV (int64 sums)
_DIV_ALL = np.repeat(np.arange(-128, 128), 4).astype(np.int8)
case("qnn.divide", "s8-pairs", [_DIV_ALL, np.tile(np.array([-128, -3, 7, 127], np.int8), 256)],
     lambda a, b: Q.divide(a, b, S(0.05), Z(-3), S(0.02), Z(7), S(0.1), Z(1)))
case("qnn.divide", "s8-broadcast-relu", [s8(2, 3, 5), s8(3, 1)],
     lambda a, b: O.clip(Q.divide(a, b, S(1.0), Z(0), S(0.0001), Z(0), S(0.0001), Z(3)),
                         3, 127))
# two kernel files with one companion (mm_s16.c and qelementwise.c both
# bring binary_walk.h): the archive carries it once
case("qnn.divide", "s8-then-subtract", [s8(3, 4), s8(3, 4)],
     lambda a, b: Q.subtract(Q.divide(a, b, S(0.05), Z(-3), S(0.02), Z(7), S(0.1), Z(1)), a,
                             S(0.1), Z(1), S(0.05), Z(-3), S(0.08), Z(0)))
case("qnn.batch_matmul", "s16-s64", [s16(2, 3, 5), s16(5, 4)],
     lambda a, b: Q.batch_matmul(a, b, Z(0), Z(0), S(0.001), S(0.002)))
case("qnn.batch_matmul", "s16-requant-adj", [s16(2, 1, 4, 3), s16(3, 5, 4)],
     lambda a, b: Q.requantize(Q.batch_matmul(a, b, Z(0), Z(0), S(0.001), S(0.002), adj_x=True,
                                              adj_y=True), c(np.float64(2e-6), "float64"),
                               Z(0), S(0.01), Z(0), out_dtype="int16"))
case("qnn.conv2d_transpose", "s16-s64", [s16(1, 3, 3, 2)],
     lambda x: Q.conv2d_transpose(x, c(s8(4, 3, 3, 2), "int8"), Z(0), Z(0), S(0.001), S(0.01),
                                  strides=[2, 2], padding=[1, 1], output_size=[5, 5]))
case("qnn.conv2d_transpose", "s16-requant", [s16(2, 2, 4, 3)],
     lambda x: Q.requantize(NN.bias_add(
         Q.conv2d_transpose(x, c(s8(3, 2, 3, 3), "int8"), Z(0), Z(0), S(0.001),
                            S(np.linspace(0.005, 0.02, 3).astype(np.float32)), strides=[3, 1],
                            output_size=[6, 6]),
         c(R.integers(-(1 << 30), 1 << 30, 3), "int64"), 3),
         c(np.linspace(5e-6, 2e-5, 3), "float64"), Z(0), S(0.003), Z(0), axis=3,
         out_dtype="int16"))


# lstm.c, TFLite's 16x8 form: int16 data and hidden state, int8 weights,
# int64 bias (int64 sums), int16 cell state
def qlstm16(x: Any, h: Any, cell: Any, units: int, n_in: int, cell_scale: float,
            **kw: Any) -> Any:
    w, r, _ = lstm_consts(units, n_in, True)
    b = c(R.integers(-300000, 300000, (4, units)), "int64")
    return Q.lstm(x, w, r, b, h, cell, S(2.0 ** -12), Z(0), c(np.linspace(0.004, 0.012, 8)),
                  S(2.0 ** -15), Z(0), S(cell_scale), **kw)


case("qnn.lstm", "s16-sequence-clip", [s16(2, 3, 5), s16(2, 4), s16(2, 4)],
     lambda x, h, cl: qlstm16(x, h, cl, 4, 5, 2.0 ** -11, cell_clip=2.0))
case("qnn.lstm", "s16-cell-time-major", [s16(3, 2, 6), s16(2, 3), s16(2, 3)],
     lambda x, h, cl: qlstm16(x, h, cl, 3, 6, 2.0 ** -13, emit="cell", time_major=True))
case("qnn.lstm", "s16-sequence-time-major", [s16(2, 3, 4), s16(3, 5), s16(3, 5)],
     lambda x, h, cl: qlstm16(x, h, cl, 5, 4, 2.0 ** -12, time_major=True))


# act_s16.c: TFLite's int16 LOGISTIC and TANH (power-of-two input scales
# and general ones) and its int16-in SOFTMAX; pool_s16.c: the int16 SUM
for name in ("sigmoid", "tanh"):
    fn = getattr(Q, name)
    case("qnn." + name, "s16-pot", [s16(3, 40)],
         lambda x, f=fn: f(x, S(2.0 ** -12), Z(0), S(2.0 ** -15), Z(0)))
    case("qnn." + name, "s16-scale", [s16(70)],
         lambda x, f=fn: f(x, S(0.00071), Z(0), S(2.0 ** -15), Z(0)))
case("qnn.tanh", "s16-pot-11", [s16(2, 9)],
     lambda x: Q.tanh(x, S(2.0 ** -11), Z(0), S(2.0 ** -15), Z(0)))
case("qnn.softmax", "s16-rows", [s16(3, 11)],
     lambda x: Q.softmax(x, S(0.0005), Z(0), S(1 / 32768), Z(0), out_dtype="int16"))
case("qnn.softmax", "s16-beta", [s16(2, 1, 40)],
     lambda x: Q.softmax(x, S(0.002), Z(0), S(1 / 32768), Z(0), beta=0.3, out_dtype="int16"))
case("qnn.sum", "s16-axis", [s16(2, 3, 4)],
     lambda x: Q.sum(x, S(0.001), Z(0), S(0.004), Z(0), [1]))
case("qnn.sum", "s16-keep-zp", [s16(1, 4, 4, 3)],
     lambda x: Q.sum(x, S(0.0005), Z(3), S(0.002), Z(-4), [1, 2], keepdims=True))


def module_of(inputs: Sequence[np.ndarray], build: Build) -> Any:
    params = [ir.var("x%d" % i, shape=a.shape, dtype=str(a.dtype)) for i, a in enumerate(inputs)]
    return ir.IRModule.from_expr(ir.Function(params, build(*params)))


class CachedBuild:
    """codegen.build_library for many small archives: each crt source is
    compiled once (by its text) with the same strict flags, and a model's
    library links exactly the objects of the sources its archive carries,
    with --no-undefined, so a form whose source the archive lacks fails to
    link here as it would in a user's build."""

    def __init__(self, workdir: str) -> None:
        self.dir = workdir
        self.objs: Dict[str, str] = {}

    def obj(self, src: str, includes: List[str]) -> str:
        with open(src, "rb") as f:
            key = hashlib.sha1(f.read()).hexdigest()[:16]
        if key not in self.objs:
            out = os.path.join(self.dir, key + ".o")
            subprocess.run(["cc", "-std=c99", "-c", "-fPIC", "-fvisibility=hidden", *STRICT,
                            *includes, src, "-o", out], check=True, capture_output=True, text=True)
            self.objs[key] = out
        return self.objs[key]

    def __call__(self, archive: str, output: str, cflags: Sequence[str] = STRICT,
                 cc: Any = None) -> str:
        inc = ["-I" + os.path.join(archive, "codegen", "host", "include"),
               "-I" + os.path.join(archive, "runtime", "include")]
        rt = os.path.join(archive, "runtime", "src")
        objs = [self.obj(os.path.join(rt, n), inc) for n in sorted(os.listdir(rt))
                if n.endswith(".c")]
        gen = os.path.join(archive, "codegen", "host", "src")
        models = os.path.join(archive, "models.c")
        with open(models, "w") as f:
            f.write(codegen.module_list_source(archive))
        srcs = [os.path.join(gen, n) for n in sorted(os.listdir(gen)) if n.endswith(".c")]
        proc = subprocess.run(["cc", "-std=c99", "-shared", "-fPIC", "-fvisibility=hidden",
                               *cflags, *inc, *srcs, models, *objs, "-o", output,
                               "-Wl,--no-undefined", "-lm"], capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError("building %s failed:\n%s" % (archive, proc.stderr))
        return output


@pytest.fixture(scope="module")
def builder(tmp_path_factory: Any) -> CachedBuild:
    return CachedBuild(str(tmp_path_factory.mktemp("crt-objects")))


@pytest.mark.parametrize("cid,op,inputs,build", CASES, ids=[x[0] for x in CASES])
def test_generated_c_equals_the_executor(cid: str, op: str, inputs: Sequence[np.ndarray],
                                         build: Build, tmp_path: Any,
                                         builder: CachedBuild, monkeypatch: Any) -> None:
    arch = codegen.compile(module_of(inputs, build), "m%d" % [x[0] for x in CASES].index(cid))
    monkeypatch.setattr(codegen, "build_library", builder)
    model = HostModel(arch, str(tmp_path))
    want = runtime.Executor(arch.module)(*inputs)
    got = model.run(*inputs)
    want = [np.asarray(w) for w in (want if isinstance(want, tuple) else (want,))]
    got = list(got) if isinstance(got, (list, tuple)) else [got]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        assert g.tobytes() == w.tobytes(), "%s: generated C differs from the executor" % cid
    kernels = {f["kernel"] for fs in arch.info["memory"]["functions"]["operator_functions"].values()
               for f in fs}
    USED.update(kernels)
    assert len(set(arch.runtime_sources)) == len(arch.runtime_sources), arch.runtime_sources
    FILES.update(arch.runtime_sources)
    COVERED.add(op)


USED: Set[str] = set()
FILES: Set[str] = set()
COVERED: Set[str] = set()


def library_ops() -> List[str]:
    """The library's operators (not those another language registers with
    a host compute function)."""
    from tvmnode import _ffi
    return sorted(str(n) for n in _ffi.op_list()
                  if ir.Op.get(str(n)).get_attr("compute") is None)


def test_every_operator_has_a_kernel_and_cases() -> None:
    ops = {x[1] for x in CASES}
    no_kernel = [o for o in library_ops() if ir.Op.get(o).get_attr("kernel") is None]
    assert not no_kernel, "operators without a lowering: %s" % no_kernel
    missing = [o for o in library_ops() if o not in ops]
    assert not missing, "operators with no case here: %s" % missing
    for o in ops:
        assert sum(1 for x in CASES if x[1] == o) >= 2, o


def test_every_kernel_form_is_reached() -> None:
    if len(COVERED) < len({x[1] for x in CASES}):
        pytest.skip("needs the whole table run (not a selection)")
    forms = {str(f["kernel"]) for f in tn.get_global_func("kernel.Forms")()}
    missing = sorted(forms - USED)
    assert not missing, "kernel forms no case reaches: %s" % missing


def test_every_crt_file_reaches_an_archive() -> None:
    """A crt source or header that no archive carries is a file the
    generated code's list (tvmnode/crt/calls.h) forgot."""
    if len(COVERED) < len({x[1] for x in CASES}):
        pytest.skip("needs the whole table run (not a selection)")
    from tvmnode._paths import _crt_dir
    crt = _crt_dir()
    files = {os.path.relpath(os.path.join(d, n), crt).replace(os.sep, "/")
             for sub in ("include", "src") for d, _, ns in os.walk(os.path.join(crt, sub))
             for n in ns if n.endswith((".c", ".h"))}
    # the constant-pool variant carries the parameter blob's source too
    # (tvmnode/crt/params.h); a case with a constant compiled so
    _, _, inputs, build = next(c for c in CASES if c[1] == "qnn.conv2d")
    cp = codegen.compile(module_of(inputs, build), "cp", constants_in_pool=True)
    assert "src/params.c" in cp.runtime_sources
    # the device session (its link, tvmnode/crt/frame.h, and its messages,
    # tvmnode/crt/session.h with nanopb's) belongs to a firmware's transport,
    # not to a model: no archive carries it, the harness and the serving side
    # build it (firmware/common/uart_link.c, go/serve/device)
    session = {"include/tvmnode/crt/frame.h", "src/frame.c",
               "include/tvmnode/crt/session.h", "src/session.c",
               "src/session_nanopb.c", "src/session_pb.h",
               "src/tvmnode_session.pb.c", "src/tvmnode_session.pb.h"}
    assert session <= files, sorted(session - files)
    missing = sorted(files - FILES - set(cp.runtime_sources) - session)
    assert not missing, "crt files no archive carries: %s" % missing
