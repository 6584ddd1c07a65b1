"""Extreme attribute values through the Python builders (issue 13): type
inference refuses them with a TypeError naming the operator, the attribute
and the value, and never crashes or gives a wrapped shape. The C suite
test_ir_extreme sweeps every operator; these check the binding's path."""
import re
from typing import Any, Dict

import numpy as np
import pytest

import tvmnode as tn
from tvmnode import ir
from tvmnode.ir import op

I64_MAX = 2**63 - 1
I64_MIN = -2**63
I32_MAX = 2**31 - 1


@pytest.mark.parametrize("n", [I64_MAX, I64_MAX - 1, 2**62, 2**32, 16, I64_MIN])
def test_expand_dims_huge_num_newaxis(n: int) -> None:
    # The rank check overflowed and inference wrote past a 16-slot array.
    x = ir.var("x", shape=(1,), dtype="float32")
    with pytest.raises(TypeError, match=r"expand_dims: num_newaxis %s is out of range"
                       % re.escape(str(n))):
        op.expand_dims(x, axis=0, num_newaxis=n)


def test_expand_dims_up_to_16_dimensions() -> None:
    x = ir.var("x", shape=(1,), dtype="float32")
    assert op.expand_dims(x, axis=0, num_newaxis=15).checked_type.shape == (1,) * 16


def test_pad_huge() -> None:
    x = ir.var("x", shape=(1, 2), dtype="float32")
    with pytest.raises(TypeError, match=r"nn\.pad: attribute 'pad_width' = %d: dimension 0"
                       % I64_MAX):
        op.nn.pad(x, pad_width=[[0, I64_MAX], [0, 0]])
    # two widths that wrapped to a small positive size before
    with pytest.raises(TypeError, match=r"nn\.pad: attribute 'pad_width'"):
        op.nn.pad(x, pad_width=[[I64_MAX, I64_MAX], [0, 0]])
    y = op.nn.pad(x, pad_width=[I64_MAX - 1, 0, 0, 0])
    assert y.checked_type.shape == (I64_MAX, 2)


def test_conv2d_huge() -> None:
    x = ir.var("x", shape=(1, 1, 4, 4), dtype="float32")
    w = ir.var("w", shape=(1, 1, 3, 3), dtype="float32")
    with pytest.raises(TypeError, match=r"nn\.conv2d: attribute 'padding' = %d" % I64_MAX):
        op.nn.conv2d(x, w, padding=[I64_MAX, 0])
    with pytest.raises(TypeError, match=r"nn\.conv2d: attribute 'dilation' = %d" % 2**62):
        op.nn.conv2d(x, w, dilation=[2**62, 1])
    assert op.nn.conv2d(x, w, strides=[I32_MAX, I32_MAX]).checked_type.shape == (1, 1, 1, 1)
    with pytest.raises(TypeError, match=r"nn\.conv2d: attribute 'strides' = %d: the "
                       r"kernels take it as int32" % I64_MAX):
        op.nn.conv2d(x, w, strides=[I64_MAX, I64_MAX])
    with pytest.raises(TypeError, match=r"nn\.conv2d: strides must be positive"):
        op.nn.conv2d(x, w, strides=[I64_MIN, 1])


# Issue 32: the lowering stored these as int32, so a stride of 2^32 + 1
# computed a stride-1 convolution (and 2^32 a stride of 0, which failed on
# every run); type inference refuses them now, naming the attribute.
@pytest.mark.parametrize("attr,value", [
    ("strides", [2**32 + 1, 1]), ("strides", [1, 2**32]), ("strides", [2**31, 1]),
    ("padding", [2**32, 0, 0, 0]), ("padding", [0, 0, 0, 2**31]),
    ("dilation", [2**32, 1]), ("dilation", [1, 2**31 + 1]),
])
@pytest.mark.parametrize("quantized", [False, True])
def test_conv2d_beyond_int32(attr: str, value: list, quantized: bool) -> None:
    dt = "int8" if quantized else "float32"
    x = ir.var("x", shape=(1, 8, 8, 4), dtype=dt)
    w = ir.const(np.ones((3, 3, 4, 4), dt))
    kw: Dict[str, Any] = dict(data_layout="NHWC", kernel_layout="HWIO")
    kw[attr] = value
    bad = max(value)
    name = "qnn.conv2d" if quantized else "nn.conv2d"
    with pytest.raises(TypeError, match=r"%s: attribute '%s' = %d: the kernels take it as "
                       r"int32" % (re.escape(name), attr, bad)):
        if quantized:
            op.qnn.conv2d(x, w, ir.const(np.int32(0)), ir.const(np.int32(0)),
                          ir.const(np.float32(1)), ir.const(np.float32(1)), **kw)
        else:
            op.nn.conv2d(x, w, **kw)


def test_conv2d_beyond_int32_in_a_saved_module() -> None:
    # The module typed to (1, 2, 6, 4), and the executor,
    # FoldConstant and the generated C all returned 27 where 0 is right. A
    # saved module edited to hold it no longer loads.
    x = ir.var("x", shape=(1, 8, 8, 3), dtype="float32")
    w = ir.const(np.ones((3, 3, 3, 4), "float32"))
    y = op.nn.conv2d(x, w, strides=[3, 1], data_layout="NHWC", kernel_layout="HWIO")
    text = tn.save_json(ir.IRModule.from_expr(ir.Function([x], y)))
    assert text.count('"items": [3, 1]') == 1
    with pytest.raises(ValueError, match=r"nn\.conv2d: attribute 'strides' = 4294967297: "
                       r"the kernels take it as int32"):
        tn.load_json(text.replace('"items": [3, 1]', '"items": [4294967297, 1]'))


def test_onnx_conv_and_pool_beyond_int32() -> None:
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper

    from tvmnode.frontend import from_onnx

    def one(node: Any, wshape: tuple = ()) -> Any:
        inits = [numpy_helper.from_array(np.ones(wshape, "float32"), "w")] if wshape else []
        g = helper.make_graph(
            [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
        return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])

    conv = one(helper.make_node("Conv", ["x", "w"], ["y"], strides=[2**32 + 1, 1],
                                pads=[2**32, 0, 0, 0]), (4, 3, 3, 3))
    with pytest.raises(Exception, match=r"attribute 'strides' = 4294967297: the kernels take "
                       r"it as int32"):
        from_onnx(conv)
    pool = one(helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2],
                                strides=[1, 2**32]))
    with pytest.raises(Exception, match=r"attribute 'strides' = 4294967296: the kernels take "
                       r"it as int32"):
        from_onnx(pool)
    del onnx


def test_pool_ceil_mode_huge_stride() -> None:
    x = ir.var("x", shape=(1, 1, 4, 4), dtype="float32")
    y = op.nn.max_pool2d(x, pool_size=[1, 1], strides=[2**30, 2**30], ceil_mode=True)
    assert y.checked_type.shape == (1, 1, 2, 2)
    # the second window of ceil_mode would start past int32
    with pytest.raises(TypeError, match=r"nn\.max_pool2d: attribute 'strides' = %d: with "
                       r"ceil_mode" % I32_MAX):
        op.nn.max_pool2d(x, pool_size=[1, 1], strides=[I32_MAX, 1], ceil_mode=True)
    for attr, value in (("pool_size", [2**32, 1]), ("strides", [1, 2**32 + 1]),
                        ("padding", [2**31, 0, 0, 0])):
        with pytest.raises(TypeError, match=r"nn\.avg_pool2d: attribute '%s' = %d: the kernels "
                           r"take it as int32" % (attr, max(value))):
            op.nn.avg_pool2d(x, **{"pool_size": [1, 1], attr: value})
    with pytest.raises(TypeError, match=r"nn\.max_pool2d: .*pool_size must be positive"):
        op.nn.max_pool2d(x, pool_size=[I64_MIN, 1])


def test_reshape_overflowing_product() -> None:
    x = ir.var("x", shape=(4,), dtype="float32")
    with pytest.raises(TypeError, match=r"reshape: attribute 'newshape\[1\]' = 2: times the "
                       r"%d elements" % I64_MAX):
        op.reshape(x, newshape=[I64_MAX, 2])


def test_tensor_too_big_to_exist() -> None:
    # The strides of a shape with a 0 wrapped before; numpy refuses it too.
    with pytest.raises(OverflowError, match=r"tn_tensor_empty: shape: dimension 2"):
        tn.empty((0, 2**62, 2**62), "float32")
    with pytest.raises(OverflowError, match=r"tn_tensor_empty"):
        tn.empty((2**62,), "float32")
    assert tn.empty((0, 2**20, 2**20), "float32").shape == (0, 2**20, 2**20)


@pytest.mark.parametrize("shape", [(2**31,), (0, 2**31), (0, 2**20, 2**20), (2**16, 2**16)])
def test_lowering_refuses_tensors_past_int32(shape: tuple) -> None:
    # The kernels index in int32: a value past that (an empty dimension
    # counted as 1, since the row-major strides are still formed) is refused
    # by the lowering with the operator and the type, never truncated.
    x = ir.var("x", shape=shape, dtype="float32")
    mod = ir.IRModule.from_expr(ir.Function([x], op.nn.relu(x)))
    with pytest.raises(ValueError, match=r"nn\.relu: argument 0 has type Tensor\[.*: more than "
                       r"2147483647 elements .*too large for the kernels"):
        tn.runtime.Executor(mod)
