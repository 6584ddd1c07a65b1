"""mean, qnn.mean and strided_slice: type inference, the executor (fused
and unfused) and FoldConstant against numpy, and qnn.mean against TFLite
Micro itself, bit for bit, on one-operator MEAN models built with
tflite_build (skipped when the tflite and tflite-micro packages are not
installed)."""
from typing import Any, List, Optional, Sequence, Tuple

import numpy as np
import pytest

import tvmnode as tn
from tvmnode import ir, transform
from tvmnode.ir import op

from exec_util import executor, run_both

RNG = np.random.default_rng(2024)


def fold(expr: Any) -> np.ndarray:
    """The value FoldConstant computes for a closed expression."""
    mod = transform.FoldConstant()(transform.InferType()(
        ir.IRModule.from_expr(ir.Function([], expr))))
    body = mod["main"].body
    assert isinstance(body, ir.Constant), body
    return np.asarray(body.data.numpy())


def qconst(v: Any, dtype: str = "float32") -> Any:
    return ir.const(np.array(v, dtype=dtype))


# ---- mean (float32, int32) --------------------------------------------------

MEAN_CASES: List[Tuple[Tuple[int, ...], Optional[Sequence[int]], bool, bool]] = [
    ((2, 3, 4), None, False, False),
    ((2, 3, 4), [1], False, False),
    ((2, 3, 4), [0, 2], True, False),
    ((2, 3, 4), [-1], True, False),
    ((1, 7, 7, 16), [1, 2], True, False),
    ((1, 7, 7, 16), [1, 2], False, False),
    ((3, 5, 2, 6), [0, 2], False, False),
    ((3, 5, 2, 6), [1], False, True),      # exclude: every axis but 1
    ((3, 5, 2, 6), [1, 3], True, True),
    ((5,), [0], False, False),
    ((), None, False, False),
]


def np_axes(shape: Tuple[int, ...], axis: Optional[Sequence[int]], exclude: bool) -> Tuple[int, ...]:
    if not axis:
        return tuple(range(len(shape)))
    norm = {a % len(shape) for a in axis}
    return tuple(a for a in range(len(shape)) if (a in norm) != exclude)


@pytest.mark.parametrize("shape,axis,keepdims,exclude", MEAN_CASES)
def test_mean_float32(shape: Tuple[int, ...], axis: Optional[Sequence[int]], keepdims: bool,
                      exclude: bool) -> None:
    x = RNG.standard_normal(shape).astype(np.float32)
    want = np.mean(x.astype(np.float64), axis=np_axes(shape, axis, exclude), keepdims=keepdims)
    got = run_both(lambda v: op.mean(v, axis=axis, keepdims=keepdims, exclude=exclude), x)
    assert got.shape == np.shape(want) and got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    # folded: the same kernel, so the same bits
    np.testing.assert_array_equal(
        fold(op.mean(ir.const(x), axis=axis, keepdims=keepdims, exclude=exclude)), got)


def test_mean_float32_sums_in_input_order() -> None:
    # TFLite's float MEAN adds in the input's order in float32 and then
    # divides by the count as a float; the kernel does the same additions
    x = RNG.uniform(-1e4, 1e4, (2, 37, 5)).astype(np.float32)
    got = run_both(lambda v: op.mean(v, axis=[1]), x)
    acc = np.zeros((2, 5), np.float32)
    for i in range(37):
        acc = acc + x[:, i, :]
    np.testing.assert_array_equal(got, acc / np.float32(37))


@pytest.mark.parametrize("shape,axis,keepdims", [((1, 7, 5, 6), [1, 2], True),
                                                ((1, 7, 5, 6), [2, 1], False),
                                                ((3, 4, 5), [0, -1], True)])
def test_mean_float32_is_tflite_micros(shape: Tuple[int, ...], axis: List[int],
                                       keepdims: bool) -> None:
    # bit for bit, both TFLite Micro's special 4-d (axes 1 and 2) path and
    # its generic one
    tb = pytest.importorskip("tflite_build")
    pytest.importorskip("tflite_micro")
    x = RNG.uniform(-100, 100, shape).astype(np.float32)
    got = run_both(lambda v: op.mean(v, axis=axis, keepdims=keepdims), x)
    model = tb.single_op_model(
        "MEAN", inputs=[tb.TensorSpec(shape, "float32"),
                        tb.TensorSpec((len(axis),), "int32", data=np.array(axis))],
        outputs=[tb.TensorSpec(got.shape, "float32")],
        options=tb.builtin_options("ReducerOptions", keepDims=keepdims))
    np.testing.assert_array_equal(got, tb.run_tflite_micro(model, x)[0])


def test_mean_int32_truncates() -> None:
    x = RNG.integers(-1000, 1000, (4, 6, 5), dtype=np.int32)
    got = run_both(lambda v: op.mean(v, axis=[0, 2]), x)
    s = x.astype(np.int64).sum(axis=(0, 2))
    want = np.where(s >= 0, s // 20, -((-s) // 20))  # C division
    np.testing.assert_array_equal(got, want.astype(np.int32))


def test_mean_after_an_elementwise_op_fuses_and_still_agrees() -> None:
    x = RNG.standard_normal((2, 8, 3)).astype(np.float32)
    got = run_both(lambda v: op.nn.relu(op.mean(op.negative(v), axis=[1])), x)
    np.testing.assert_allclose(got, np.maximum(-x.mean(axis=1), 0), rtol=1e-5, atol=1e-6)


def test_mean_type_errors() -> None:
    x = ir.var("x", shape=(2, 3))
    assert op.mean(x, axis=[0], keepdims=True).checked_type.shape == (1, 3)
    assert op.mean(x).checked_type.shape == ()
    with pytest.raises(TypeError, match="mean: .*axis 2 is out of range"):
        op.mean(x, axis=[2])
    with pytest.raises(TypeError, match="mean: attribute 'axis' lists axis 1 twice"):
        op.mean(x, axis=[1, -1])
    with pytest.raises(TypeError, match="expected a float or integer tensor"):
        op.mean(ir.var("b", shape=(3,), dtype="bool"))
    y = ir.var("y", shape=(3,), dtype="float64")
    with pytest.raises(NotImplementedError, match="mean.*no kernel"):
        tn.runtime.Executor(ir.IRModule.from_expr(ir.Function([y], op.mean(y))))


# ---- strided_slice ------------------------------------------------------------

def random_slice(shape: Tuple[int, ...]) -> Tuple[List[int], List[int], List[int], List[int]]:
    """Random python slices on a random subset of axes: negative indices,
    ends past the dims, negative steps, now and then huge values."""
    nd = len(shape)
    axes = sorted(RNG.choice(nd, size=int(RNG.integers(1, nd + 1)), replace=False).tolist())
    RNG.shuffle(axes)
    begin, end, strides = [], [], []
    for a in axes:
        n = shape[a]
        step = int(RNG.choice([1, 1, 2, 3, -1, -2]))
        pick = RNG.integers(0, 8)
        b = int(RNG.integers(-n - 2, n + 3))
        e = int(RNG.integers(-n - 2, n + 3))
        if pick == 0:
            b, e = (-(1 << 62), 1 << 62) if step > 0 else (1 << 62, -(1 << 62))
        begin.append(b)
        end.append(e)
        strides.append(step)
    return begin, end, strides, axes


@pytest.mark.parametrize("dtype", ["float32", "int8", "int32", "int16", "int64", "uint8"])
def test_strided_slice_matches_numpy(dtype: str) -> None:
    for case in range(25):
        shape = tuple(int(d) for d in RNG.integers(1, 6, int(RNG.integers(1, 5))))
        x = (RNG.standard_normal(shape) * 50).astype(dtype)
        begin, end, strides, axes = random_slice(shape)
        index: List[Any] = [slice(None)] * len(shape)
        for b, e, s, a in zip(begin, end, strides, axes):
            index[a] = slice(b, e, s)
        want = x[tuple(index)]
        call = lambda v: op.strided_slice(v, begin=begin, end=end, strides=strides, axes=axes)
        assert tuple(call(ir.var("t", shape=shape, dtype=dtype)).checked_type.shape) == want.shape
        if want.size == 0:
            continue
        got = run_both(call, x)
        np.testing.assert_array_equal(got, want, err_msg="case %d: %r" % (case, index))
        np.testing.assert_array_equal(fold(call(ir.const(x))), want)


def test_strided_slice_defaults_and_errors() -> None:
    x = np.arange(5 * 6 * 7, dtype=np.float32).reshape(5, 6, 7)
    # begin/end shorter than the rank slice the leading axes; strides None is 1
    got = run_both(lambda v: op.strided_slice(v, begin=[1, -2], end=[4, 100]), x)
    np.testing.assert_array_equal(got, x[1:4, -2:])
    got = run_both(lambda v: op.strided_slice(v, begin=[6], end=[-100], strides=[-3],
                                              axes=[2]), x)
    np.testing.assert_array_equal(got, x[:, :, 6::-3])
    v = ir.var("v", shape=(5, 6, 7))
    assert op.strided_slice(v, begin=[9], end=[10]).checked_type.shape == (0, 6, 7)
    with pytest.raises(TypeError, match="strided_slice: attribute 'strides\\[1\\]' = 0"):
        op.strided_slice(v, begin=[0, 0], end=[1, 1], strides=[1, 0])
    with pytest.raises(TypeError, match="strided_slice: begin has 2 values but end has 1"):
        op.strided_slice(v, begin=[0, 0], end=[1])
    with pytest.raises(TypeError, match="strided_slice: attribute 'axes' lists axis 2 twice"):
        op.strided_slice(v, begin=[0, 0], end=[1, 1], axes=[2, -1])
    with pytest.raises(TypeError, match="strided_slice: .*axis 3 is out of range"):
        op.strided_slice(v, begin=[0], end=[1], axes=[3])
    with pytest.raises(TypeError, match="begin has 4 values for 3 dimensions"):
        op.strided_slice(v, begin=[0] * 4, end=[1] * 4)


# ---- qnn.mean against TFLite Micro ---------------------------------------------

def tflite_mean(x: np.ndarray, axis: Sequence[int], keepdims: bool, s_in: float, zp_in: int,
                s_out: float, zp_out: int) -> np.ndarray:
    """TFLite Micro's int8 MEAN of x on a one-operator model."""
    tb = pytest.importorskip("tflite_build")
    shape = x.shape
    out_shape = tuple(1 if i in [a % len(shape) for a in axis] else d
                      for i, d in enumerate(shape))
    if not keepdims:
        out_shape = tuple(d for i, d in enumerate(shape) if i not in [a % len(shape) for a in axis])
    model = tb.single_op_model(
        "MEAN",
        inputs=[tb.TensorSpec(shape, "int8", quant=(s_in, zp_in)),
                tb.TensorSpec((len(axis),), "int32", data=np.array(axis, np.int32))],
        outputs=[tb.TensorSpec(out_shape, "int8", quant=(s_out, zp_out))],
        options=tb.builtin_options("ReducerOptions", keepDims=keepdims))
    out: np.ndarray = tb.run_tflite_micro(model, x)[0]
    return out


def ours_mean(x: np.ndarray, axis: Sequence[int], keepdims: bool, s_in: float, zp_in: int,
              s_out: float, zp_out: int) -> np.ndarray:
    return run_both(lambda v: op.qnn.mean(v, qconst(s_in), qconst(zp_in, "int32"), qconst(s_out),
                                          qconst(zp_out, "int32"), axis=axis,
                                          keepdims=keepdims), x)


QMEAN_CASES = [
    # shape, axis, keepdims, s_in, zp_in, s_out, zp_out
    ((1, 7, 7, 16), [1, 2], True, 0.05, -3, 0.02, 5),
    ((1, 7, 7, 16), [1, 2], False, 0.05, -3, 0.02, 5),
    ((1, 7, 7, 16), [1, 2], True, 0.05, -3, 0.05, -3),    # same quantization
    ((1, 7, 7, 16), [1, 2], False, 0.05, -3, 0.05, -3),
    ((2, 5, 3, 8), [1, 2], True, 0.0123, 17, 0.0031, -128),
    ((2, 5, 3, 8), [2, 1], False, 0.5, 0, 0.125, 0),       # output scale below: saturates
    ((1, 4, 6, 3), [1, 2], True, 0.1, 127, 0.9, -20),      # output scale above
    ((1, 10, 10, 4), [1, 2], True, 0.02, -128, 0.02, -128),
    ((3, 4, 5), [-1], False, 0.07, 3, 0.05, 2),
    ((3, 4, 5), [0, 2], True, 0.07, 3, 0.07, 3),
    ((2, 3, 4, 5), [0, 1, 2, 3], False, 0.03, -7, 0.01, 9),
    ((1, 33, 1, 2), [1], True, 0.25, 1, 0.25, 1),         # count 33: not a power of two
]


@pytest.mark.parametrize("shape,axis,keepdims,s_in,zp_in,s_out,zp_out", QMEAN_CASES)
def test_qnn_mean_matches_tflite_micro(shape: Tuple[int, ...], axis: List[int], keepdims: bool,
                                        s_in: float, zp_in: int, s_out: float,
                                        zp_out: int) -> None:
    pytest.importorskip("tflite")
    pytest.importorskip("tflite_micro")
    for seed in range(3):
        x = np.random.default_rng(seed).integers(-128, 128, shape, dtype=np.int8)
        want = tflite_mean(x, axis, keepdims, s_in, zp_in, s_out, zp_out)
        got = ours_mean(x, axis, keepdims, s_in, zp_in, s_out, zp_out)
        assert got.shape == want.shape and got.dtype == np.int8
        np.testing.assert_array_equal(got, want, err_msg="seed %d" % seed)


def test_qnn_mean_random_against_tflite_micro() -> None:
    # random shapes, axis sets, scale ratios over 2^-10..2^10 and zero points
    pytest.importorskip("tflite")
    pytest.importorskip("tflite_micro")
    rng = np.random.default_rng(77)
    for case in range(30):
        nd = int(rng.integers(1, 5))
        shape = tuple(int(d) for d in rng.integers(1, 9, nd))
        k = int(rng.integers(1, nd + 1))
        axis = [int(a) - (nd if rng.integers(0, 2) else 0)
                for a in rng.choice(nd, size=k, replace=False)]
        keepdims = bool(rng.integers(0, 2))
        s_in = float(np.float32(2.0 ** rng.uniform(-9, -1)))
        s_out = s_in if case % 5 == 0 else float(np.float32(s_in * 2.0 ** rng.uniform(-10, 10)))
        zp_in = int(rng.integers(-128, 128))
        zp_out = zp_in if case % 5 == 0 else int(rng.integers(-128, 128))
        x = rng.integers(-128, 128, shape, dtype=np.int8)
        want = tflite_mean(x, axis, keepdims, s_in, zp_in, s_out, zp_out)
        got = ours_mean(x, axis, keepdims, s_in, zp_in, s_out, zp_out)
        np.testing.assert_array_equal(
            got, want, err_msg="case %d: %s axis=%s keepdims=%s (%g, %d) -> (%g, %d)" % (
                case, shape, axis, keepdims, s_in, zp_in, s_out, zp_out))


def test_qnn_mean_double_rounding_and_fold() -> None:
    # (10 + 20 + 30 + 41) / 4 = 25.25 comes out 26: TFLite's double
    # rounding (51 / 2 rounds half away from zero); checked against TFLite
    # Micro above, pinned here without it
    x = np.array([10, 20, 30, 41], np.int8).reshape(1, 2, 2, 1)
    got = ours_mean(x, [1, 2], True, 0.5, 0, 0.5, 0)
    assert got.reshape(-1).tolist() == [26]
    folded = fold(op.qnn.mean(ir.const(x), qconst(0.5), qconst(0, "int32"), qconst(0.5),
                              qconst(0, "int32"), axis=[1, 2]))
    assert folded.shape == (1, 1) and folded.reshape(-1).tolist() == [26]


def test_qnn_mean_errors() -> None:
    v = ir.var("v", shape=(1, 4, 4, 2), dtype="int8")
    with pytest.raises(TypeError, match="qnn.mean: argument 1 \\(input_scale\\)"):
        op.qnn.mean(v, qconst(1, "int32"), qconst(0, "int32"), qconst(0.5), qconst(0, "int32"))
    with pytest.raises(TypeError, match="qnn.mean: argument 0 \\(data\\).*expected int8"):
        op.qnn.mean(ir.var("f", shape=(2,)), qconst(0.5), qconst(0, "int32"), qconst(0.5),
                    qconst(0, "int32"))
    bad = op.qnn.mean(v, qconst(1e30), qconst(0, "int32"), qconst(1e-30), qconst(0, "int32"),
                      axis=[1, 2])
    with pytest.raises(ValueError, match="qnn.mean: .*ratio cannot be represented"):
        tn.runtime.Executor(ir.IRModule.from_expr(ir.Function([v], bad)))


# ---- tflite_build itself ---------------------------------------------------------

def test_tflite_build_round_trips_through_the_schema() -> None:
    tflite = pytest.importorskip("tflite")
    tb = pytest.importorskip("tflite_build")
    w = np.arange(2 * 3, dtype=np.int8).reshape(2, 3)
    model = tb.single_op_model(
        "FULLY_CONNECTED",
        inputs=[tb.TensorSpec((1, 3), "int8", quant=(0.1, -1)),
                tb.TensorSpec((2, 3), "int8", quant=([0.01, 0.02], [0, 0]), data=w),
                None],
        outputs=[tb.TensorSpec((1, 2), "int8", quant=(0.5, 3), name="y")],
        options=tb.builtin_options("FullyConnectedOptions", keepNumDims=False))
    m = tflite.Model.GetRootAsModel(model, 0)
    g = m.Subgraphs(0)
    assert m.OperatorCodes(0).BuiltinCode() == tflite.BuiltinOperator.FULLY_CONNECTED
    o = g.Operators(0)
    assert o.InputsAsNumpy().tolist() == [0, 1, -1] and o.OutputsAsNumpy().tolist() == [2]
    assert g.InputsAsNumpy().tolist() == [0] and g.OutputsAsNumpy().tolist() == [2]
    assert o.BuiltinOptionsType() == tflite.BuiltinOptions.FullyConnectedOptions
    wt = g.Tensors(1)
    assert wt.ShapeAsNumpy().tolist() == [2, 3] and wt.Type() == tflite.TensorType.INT8
    q = wt.Quantization()
    assert q.ScaleAsNumpy().tolist() == pytest.approx([0.01, 0.02])
    assert q.ZeroPointAsNumpy().tolist() == [0, 0]
    data = m.Buffers(wt.Buffer()).DataAsNumpy()
    np.testing.assert_array_equal(np.frombuffer(data.tobytes(), np.int8).reshape(2, 3), w)
    assert m.Buffers(g.Tensors(0).Buffer()).DataLength() == 0
    assert g.Tensors(2).Name() == b"y"
