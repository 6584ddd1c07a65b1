"""Extreme attribute values through the Python builders (issue 13): type
inference refuses them with a TypeError naming the operator, the attribute
and the value, and never crashes or gives a wrapped shape. The C suite
test_ir_extreme sweeps every operator; these check the binding's path."""
import re

import pytest

import tvmnode as tn
from tvmnode import ir
from tvmnode.ir import op

I64_MAX = 2**63 - 1
I64_MIN = -2**63


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
    assert op.nn.conv2d(x, w, strides=[I64_MAX, I64_MAX]).checked_type.shape == (1, 1, 1, 1)
    with pytest.raises(TypeError, match=r"nn\.conv2d: strides must be positive"):
        op.nn.conv2d(x, w, strides=[I64_MIN, 1])


def test_pool_ceil_mode_huge_stride() -> None:
    x = ir.var("x", shape=(1, 1, 4, 4), dtype="float32")
    y = op.nn.max_pool2d(x, pool_size=[1, 1], strides=[I64_MAX, I64_MAX], ceil_mode=True)
    assert y.checked_type.shape == (1, 1, 2, 2)
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
