"""tvmnode.runtime.Executor: every operator's kernel against numpy, through
the executor (numpy in, numpy out), and the executor's errors."""
from typing import Any, Callable, Sequence

import numpy as np
import pytest

import tvmnode as tn
from tvmnode import ir, transform
from tvmnode.ir import op

RNG = np.random.default_rng(7)


def run(build: Callable[..., Any], *arrays: np.ndarray, fuse: bool = False) -> Any:
    """Build fn(x0, x1, ...) over vars of the arrays' types and run it."""
    params = [ir.var("x%d" % i, shape=a.shape, dtype=str(a.dtype)) for i, a in enumerate(arrays)]
    mod = ir.IRModule.from_expr(ir.Function(params, build(*params)))
    if fuse:
        mod = transform.FuseOps()(transform.InferType()(mod))
    return tn.runtime.Executor(mod)(*arrays)


def f32(*shape: int) -> np.ndarray:
    return RNG.uniform(-2, 2, size=shape).astype("float32")


@pytest.mark.parametrize("name,ref", [
    ("add", np.add), ("subtract", np.subtract), ("multiply", np.multiply),
    ("maximum", np.maximum), ("minimum", np.minimum)])
@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((2, 3, 4), (4,)), ((2, 1, 4), (3, 1)),
                                    ((1,), (5, 2)), ((2, 3, 1, 5), (1, 3, 4, 1))])
def test_binary_broadcasting(name: str, ref: Callable[..., Any], shapes: Sequence[Any]) -> None:
    a, b = f32(*shapes[0]), f32(*shapes[1])
    got = run(lambda x, y: getattr(op, name)(x, y), a, b)
    np.testing.assert_allclose(got, ref(a, b), rtol=1e-6)


def test_divide_and_int32() -> None:
    a, b = f32(4, 5), f32(4, 5) + 3
    np.testing.assert_allclose(run(op.divide, a, b), a / b, rtol=1e-6)
    i, j = RNG.integers(-100, 100, (3, 4), dtype="int32"), RNG.integers(-9, 9, (4,), dtype="int32")
    np.testing.assert_array_equal(run(op.add, i, j), i + j)
    np.testing.assert_array_equal(run(op.maximum, i, j), np.maximum(i, j))


@pytest.mark.parametrize("name,ref", [
    ("negative", np.negative), ("exp", np.exp), ("tanh", np.tanh),
    ("sigmoid", lambda x: 1 / (1 + np.exp(-x)))])
def test_unary(name: str, ref: Callable[..., Any]) -> None:
    a = f32(3, 7)
    np.testing.assert_allclose(run(getattr(op, name), a), ref(a), rtol=2e-6, atol=1e-7)


def test_relu_clip_cast() -> None:
    a = f32(5, 6)
    np.testing.assert_array_equal(run(op.nn.relu, a), np.maximum(a, 0))
    np.testing.assert_array_equal(run(lambda x: op.clip(x, a_min=-0.5, a_max=0.75), a),
                                  np.clip(a, -0.5, 0.75))
    got = run(lambda x: op.cast(x, dtype="int32"), a * 50)
    np.testing.assert_array_equal(got, np.trunc(a * 50).astype("int32"))
    q = RNG.integers(-128, 128, (9,), dtype="int8")
    np.testing.assert_array_equal(run(lambda x: op.clip(x, a_min=-10, a_max=20), q),
                                  np.clip(q, -10, 20))


def test_shape_operators() -> None:
    a = f32(2, 3, 4)
    np.testing.assert_array_equal(run(lambda x: op.reshape(x, newshape=[4, 6]), a),
                                  a.reshape(4, 6))
    np.testing.assert_array_equal(run(lambda x: op.transpose(x, axes=[2, 0, 1]), a),
                                  a.transpose(2, 0, 1))
    np.testing.assert_array_equal(run(op.transpose, a), a.transpose())
    np.testing.assert_array_equal(run(lambda x: op.expand_dims(x, axis=1), a), a[:, None])
    b, c = f32(2, 5, 4), f32(2, 1, 4)
    np.testing.assert_array_equal(run(lambda x, y, z: op.concatenate([x, y, z], axis=1), a, b, c),
                                  np.concatenate([a, b, c], axis=1))
    np.testing.assert_array_equal(run(lambda x: op.squeeze(x, axis=[1]), c), c[:, 0])
    got = run(lambda x: op.nn.pad(x, pad_width=[[0, 1], [2, 0], [1, 1]], pad_value=7.0), a)
    np.testing.assert_array_equal(got, np.pad(a, [[0, 1], [2, 0], [1, 1]], constant_values=7))


def conv_ref(x: np.ndarray, w: np.ndarray, stride: int, pad: Sequence[int], dil: int,
             groups: int) -> np.ndarray:
    """NHWC x HWIO, straightforward loops (float64)."""
    n, h, wd, ci = x.shape
    kh, kw, cig, co = w.shape
    xp = np.pad(x.astype("float64"), [[0, 0], [pad[0], pad[2]], [pad[1], pad[3]], [0, 0]])
    oh = (h + pad[0] + pad[2] - dil * (kh - 1) - 1) // stride + 1
    ow = (wd + pad[1] + pad[3] - dil * (kw - 1) - 1) // stride + 1
    out = np.zeros((n, oh, ow, co))
    cog = co // groups
    for g in range(groups):
        for i in range(kh):
            for j in range(kw):
                patch = xp[:, i * dil: i * dil + stride * (oh - 1) + 1: stride,
                           j * dil: j * dil + stride * (ow - 1) + 1: stride,
                           g * cig:(g + 1) * cig]
                out[..., g * cog:(g + 1) * cog] += patch @ w[i, j, :, g * cog:(g + 1) * cog]
    return out


@pytest.mark.parametrize("case", [
    dict(shape=(1, 9, 8, 3), k=(3, 3), co=4, stride=1, pad=(1, 1, 1, 1), dil=1, groups=1),
    dict(shape=(2, 10, 7, 4), k=(3, 2), co=6, stride=2, pad=(0, 1, 2, 0), dil=1, groups=2),
    dict(shape=(1, 8, 8, 4), k=(3, 3), co=8, stride=1, pad=(2, 2, 2, 2), dil=2, groups=4),
    dict(shape=(1, 7, 5, 2), k=(1, 1), co=3, stride=3, pad=(0, 0, 0, 0), dil=1, groups=1)])
@pytest.mark.parametrize("layout", ["NHWC", "NCHW"])
def test_conv2d(case: Any, layout: str) -> None:
    x = f32(*case["shape"])
    ci = case["shape"][3]
    w = f32(case["k"][0], case["k"][1], ci // case["groups"], case["co"])
    want = conv_ref(x, w, case["stride"], case["pad"], case["dil"], case["groups"])
    attrs = dict(strides=[case["stride"]] * 2, padding=list(case["pad"]),
                 dilation=[case["dil"]] * 2, groups=case["groups"])
    if layout == "NHWC":
        got = run(lambda a, b: op.nn.conv2d(a, b, data_layout="NHWC", kernel_layout="HWIO",
                                            **attrs), x, w)
    else:
        xn, wn = x.transpose(0, 3, 1, 2).copy(), w.transpose(3, 2, 0, 1).copy()
        got = run(lambda a, b: op.nn.conv2d(a, b, **attrs), xn, wn).transpose(0, 2, 3, 1)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_dense_matmul_bias_softmax() -> None:
    x, w, b = f32(3, 10), f32(7, 10), f32(7)
    np.testing.assert_allclose(run(op.nn.dense, x, w), x @ w.T, rtol=1e-5, atol=1e-5)
    got = run(lambda p, q, r: op.nn.bias_add(op.nn.dense(p, q), r, axis=1), x, w, b)
    np.testing.assert_allclose(got, x @ w.T + b, rtol=1e-5, atol=1e-5)
    m = f32(10, 4)
    np.testing.assert_allclose(run(op.matmul, x, m), x @ m, rtol=1e-5, atol=1e-5)
    s = f32(2, 5, 3) * 30
    e = np.exp(s - s.max(axis=1, keepdims=True))
    np.testing.assert_allclose(run(lambda v: op.nn.softmax(v, axis=1), s),
                               e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)


def test_pooling() -> None:
    x = f32(1, 6, 7, 3)
    got = run(lambda v: op.nn.max_pool2d(v, pool_size=[2, 2], strides=[2, 2], layout="NHWC"), x)
    np.testing.assert_array_equal(got, x[:, :6, :6].reshape(1, 3, 2, 3, 2, 3).max(axis=(2, 4)))
    got = run(lambda v: op.nn.avg_pool2d(v, pool_size=[3, 7], strides=[3, 7], layout="NHWC"), x)
    np.testing.assert_allclose(got, x[:, :6].reshape(1, 2, 3, 1, 7, 3).mean(axis=(2, 4)),
                               rtol=1e-5)
    got = run(lambda v: op.nn.global_avg_pool2d(v, layout="NHWC"), x)
    np.testing.assert_allclose(got, x.mean(axis=(1, 2), keepdims=True), rtol=1e-5)


def test_quantize_dequantize() -> None:
    x = f32(4, 8) * 3
    got = run(lambda v: op.qnn.quantize(v, ir.const(0.05), ir.const(3, "int32")), x)
    want = np.clip(np.sign(x / 0.05) * np.floor(np.abs(x / np.float32(0.05)) + 0.5) + 3,
                   -128, 127)
    np.testing.assert_array_equal(got, want.astype("int8"))
    q = RNG.integers(-128, 128, (5,), dtype="int8")
    got = run(lambda v: op.qnn.dequantize(v, ir.const(0.25), ir.const(-4, "int32")), q)
    np.testing.assert_array_equal(got, ((q.astype("float64") + 4) * 0.25).astype("float32"))


def test_fused_and_unfused_give_the_same_result() -> None:
    x, w, b = f32(1, 6, 6, 3), f32(3, 3, 3, 5), f32(5)

    def net(v: Any, k: Any, c: Any) -> Any:
        y = op.nn.conv2d(v, k, padding=[1, 1], data_layout="NHWC", kernel_layout="HWIO")
        return op.clip(op.nn.bias_add(y, c, axis=3), a_min=0.0, a_max=6.0)

    a = run(net, x, w, b)
    f = run(net, x, w, b, fuse=True)
    np.testing.assert_allclose(a, f, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(a, np.clip(conv_ref(x, w, 1, (1, 1, 1, 1), 1, 1) + b, 0, 6),
                               rtol=1e-4, atol=1e-4)


def test_named_inputs_and_errors() -> None:
    x = ir.var("image", shape=(2, 2))
    ex = tn.runtime.Executor(ir.IRModule.from_expr(ir.Function([x], op.nn.relu(x))))
    assert ex.inputs == [{"name": "image", "shape": (2, 2), "dtype": "float32"}]
    a = f32(2, 2)
    np.testing.assert_array_equal(ex.run(image=a), np.maximum(a, 0))
    with pytest.raises(TypeError, match="unknown input photo"):
        ex.run(photo=a)
    with pytest.raises(TypeError, match="expected 1 inputs"):
        ex()
    with pytest.raises(TypeError, match=r"input 0 \('image'\).*Tensor\[\(3,\), float32\]"):
        ex(f32(3))
    with pytest.raises(TypeError, match="int32"):
        ex(np.zeros((2, 2), "int32"))
    assert ex.stats()["steps"] == 1
    d = ir.var("d", shape=(2,), dtype="float64")
    with pytest.raises(NotImplementedError, match="exp.*no kernel"):
        tn.runtime.Executor(ir.IRModule.from_expr(ir.Function([d], op.exp(d))))


def test_operator_from_python_with_a_compute_function() -> None:
    ir.register_op("pytest.square", 1, lambda ts, a: ts[0], pattern="elemwise")
    try:
        def compute(inputs: Any, out: Any, attrs: Any) -> None:
            out.numpy()[...] = inputs[0].numpy() ** 2

        ir.Op.get("pytest.square").set_attr("compute", compute)
        ops: Any = getattr(op, "pytest")
        a = f32(3, 3)
        np.testing.assert_allclose(run(lambda v: op.add(ops.square(v), v), a), a * a + a,
                                   rtol=1e-6)
        c = ir.const(a)
        folded = transform.FoldConstant()(ir.IRModule.from_expr(ir.Function([], ops.square(c))))
        assert "pytest.square" not in folded.astext()
    finally:
        ir.unregister_op("pytest.square")
