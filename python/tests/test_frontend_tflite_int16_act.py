"""The 16x8 mode's int16 activations, one operator per model, against
TFLite Micro on the same bytes, identical on every element (executor
unfused and after FuseOps): LOGISTIC and TANH (TFLite's 256-entry sigmoid
table with interpolation, its power-of-two input scales by 3 * 2^k
exactly), SOFTMAX with int16 input (the exp and 1 / (1 + x) tables built
as TFLite builds them at prepare) and SUM. The elementwise operators see
every int16 value at once."""
import importlib
from typing import Any, Sequence

import numpy as np
import pytest

pytest.importorskip("tflite")
pytest.importorskip("tflite_micro")

import tvmnode as tn  # noqa: E402
from tvmnode import frontend, transform  # noqa: E402
from test_frontend_tflite_ops import const  # noqa: E402
from tflite_build import Node, TensorSpec, builtin_options, chain_model, single_op_model  # noqa: E402,E501

RNG = np.random.default_rng(1617)


def check(model: bytes, *xs: np.ndarray) -> None:
    """test_frontend_tflite_ops.check with an arena for the whole-range
    tensors (TFLite Micro's default is ten times the model's bytes)."""
    runtime: Any = importlib.import_module("tflite_micro.python.tflite_micro.runtime")
    arena = 4 * sum(x.nbytes for x in xs) + (1 << 16)
    interp = runtime.Interpreter.from_bytes(model, arena_size=arena)
    for i, x in enumerate(xs):
        interp.set_input(x, i)
    interp.invoke()
    want = np.array(interp.get_output(0), copy=True)
    mod = frontend.from_tflite(model)
    for how, m in (("unfused", mod), ("fused", transform.FuseOps()(mod))):
        got = np.asarray(tn.runtime.Executor(m)(*xs))
        assert got.shape == want.shape and got.dtype == want.dtype, (how, got.shape, want.shape)
        bad = np.flatnonzero(got != want)
        assert bad.size == 0, "%s: %d of %d differ, first at %d: %d vs %d (input %s)" % (
            how, bad.size, got.size, bad[0], got.flat[bad[0]], want.flat[bad[0]],
            xs[0].flat[bad[0]] if xs[0].size == got.size else "-")


def q16(shape: Sequence[int], scale: float, zp: int = 0) -> TensorSpec:
    return TensorSpec(shape, "int16", quant=(scale, zp))


def every_int16() -> np.ndarray:
    """All 65536 int16 values, shuffled, as [256, 256]."""
    return RNG.permutation(np.arange(-32768, 32768)).astype(np.int16).reshape(256, 256)


def ints16(*shape: int, lo: int = -32768, hi: int = 32767) -> np.ndarray:
    return RNG.integers(lo, hi, shape, endpoint=True).astype(np.int16)


# input scales: TFLite's power-of-two cases (2^-12 for both, 2^-11 for
# TANH alone), powers of two it rescales, one within its 1e-3 tolerance of
# 2^-12 (treated as 2^-12), and general ones, small to the largest it takes
ACT_SCALES = [2.0 ** -12, 2.0 ** -11, 2.0 ** -10, 2.0 ** -15, 2.0 ** -12 * 1.0004,
              1 / 3276.8, 0.0003, 0.00071, 0.004, 0.1, 2.5]


@pytest.mark.parametrize("scale", ACT_SCALES)
@pytest.mark.parametrize("op", ["LOGISTIC", "TANH"])
def test_logistic_tanh_int16_every_value(op: str, scale: float) -> None:
    model = single_op_model(op, [q16((256, 256), scale)], [q16((256, 256), 1 / 32768)])
    check(model, every_int16())


@pytest.mark.parametrize("op", ["LOGISTIC", "TANH"])
def test_logistic_tanh_int16_after_add(op: str) -> None:
    """After an int16 ADD, so that FuseOps has a producer to group with."""
    a, b, s = q16((4, 64), 0.0004), q16((4, 64), 0.0007), q16((4, 64), 0.0009)
    y = q16((4, 64), 1 / 32768)
    model = chain_model([Node("ADD", [a, b], [s], builtin_options("AddOptions")),
                         Node(op, [s], [y])], [y])
    check(model, ints16(4, 64), ints16(4, 64))


def test_logistic_tanh_int16_refusals() -> None:
    model = single_op_model("LOGISTIC", [q16((4,), 0.001, 3)], [q16((4,), 1 / 32768)])
    with pytest.raises(frontend.ModelImportError, match="zero point 0"):
        frontend.from_tflite(model)
    model = single_op_model("TANH", [q16((4,), 0.001)], [q16((4,), 1 / 16384)])
    with pytest.raises(frontend.ModelImportError, match="2\\^-15"):
        frontend.from_tflite(model)
    model = single_op_model("TANH", [q16((4,), 0.001)],
                            [TensorSpec((4,), "int8", quant=(1 / 128, 0))])
    with pytest.raises(frontend.ModelImportError, match="int16 -> int8"):
        frontend.from_tflite(model)


# (input scale, beta): rows of one and many, betas that shift left and
# right, an input whose range is far beyond the table's [-10, 0]
SOFTMAX = [(1 / 3276.8, 1.0), (0.0005, 1.0), (0.00012, 2.5), (0.002, 0.3),
           (0.01, 1.0), (2.0 ** -12, 1.0), (0.00001, 1.0)]


@pytest.mark.parametrize("scale,beta", SOFTMAX)
def test_softmax_int16(scale: float, beta: float) -> None:
    opts = builtin_options("SoftmaxOptions", beta=beta)
    for shape in [(256, 256), (3, 1, 7), (2, 1000)]:
        model = single_op_model("SOFTMAX", [q16(shape, scale)], [q16(shape, 1 / 32768)], opts)
        x = every_int16() if shape == (256, 256) else ints16(*shape)
        if shape == (3, 1, 7):  # rows of equal values and of both extremes
            x[0, 0, :] = 1234
            x[1, 0, :] = [-32768, 32767, -32768, 0, 32767, -1, 1]
        check(model, x)


def test_softmax_int16_after_add() -> None:
    a, b, s = q16((6, 40), 0.0004), q16((6, 40), 0.0007), q16((6, 40), 0.0009)
    y = q16((6, 40), 1 / 32768)
    model = chain_model([Node("ADD", [a, b], [s], builtin_options("AddOptions")),
                         Node("SOFTMAX", [s], [y], builtin_options("SoftmaxOptions", beta=1.0))],
                        [y])
    check(model, ints16(6, 40), ints16(6, 40))


def test_softmax_int16_refusals() -> None:
    opts = builtin_options("SoftmaxOptions", beta=1.0)
    model = single_op_model("SOFTMAX", [q16((2, 5), 0.001)], [q16((2, 5), 1 / 65536)], opts)
    with pytest.raises(frontend.ModelImportError, match="1/32768"):
        frontend.from_tflite(model)
    model = single_op_model("SOFTMAX", [q16((2, 5), 0.001, 2)], [q16((2, 5), 1 / 32768)], opts)
    with pytest.raises(frontend.ModelImportError, match="zero point 0"):
        frontend.from_tflite(model)


@pytest.mark.parametrize("keep", [False, True])
@pytest.mark.parametrize("axes,si,zi,so,zo", [
    ([1, 2], 0.0005, 0, 0.004, 0),
    ([3], 0.001, 0, 0.0013, 0),
    ([0, 1, 2, 3], 0.0002, 0, 0.03, 0),
    ([2], 0.0007, 3, 0.0009, -5),
])
def test_sum_int16(axes: Sequence[int], si: float, zi: int, so: float, zo: int,
                   keep: bool) -> None:
    shape = (2, 5, 4, 6)
    out = [1 if a in axes else d for a, d in enumerate(shape)] if keep else \
        [d for a, d in enumerate(shape) if a not in axes]
    opts = builtin_options("ReducerOptions", keepDims=keep)
    model = single_op_model("SUM", [q16(shape, si, zi), const(np.array(axes, np.int32))],
                            [q16(out, so, zo)], opts)
    x = ints16(*shape)
    x.flat[:4] = [-32768, 32767, 0, -1]
    check(model, x)
