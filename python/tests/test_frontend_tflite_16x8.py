"""TFLite's int8 DIV and its 16x8 BATCH_MATMUL and TRANSPOSE_CONV (int16
activations; int8 filters, int64 bias and per-channel scales for the
transposed convolution), one operator per model (tflite_build), against
TFLite Micro on the same bytes: every output element identical, through
the executor unfused and after FuseOps.

DIV is checked on every int8 dividend against every int8 divisor at once
(a [256, 1] by [1, 256] broadcast), the divisor's zero point included,
for quantizations that reach the shifts TFLite Micro leaves undefined (a
dividend of 0 or -1, a zero divisor, multipliers above 2^22)."""
import importlib
from typing import Any, List, Optional

import numpy as np
import pytest

pytest.importorskip("tflite")
pytest.importorskip("tflite_micro")

import tvmnode as tn  # noqa: E402
from tvmnode import frontend, transform  # noqa: E402
from tflite_build import TensorSpec, builtin_options, single_op_model  # noqa: E402
from test_frontend_tflite_ops import _error, const, i8, q8  # noqa: E402

RNG = np.random.default_rng(1608)


def run_micro(model: bytes, *xs: np.ndarray) -> np.ndarray:
    """TFLite Micro's output, with an arena large enough for the sweeps."""
    rt: Any = importlib.import_module("tflite_micro.python.tflite_micro.runtime")
    interp = rt.Interpreter.from_bytes(model, arena_size=1 << 20)
    for i, x in enumerate(xs):
        interp.set_input(x, i)
    interp.invoke()
    return np.array(interp.get_output(0), copy=True)


def check(model: bytes, *xs: np.ndarray) -> None:
    want = run_micro(model, *xs)
    mod = frontend.from_tflite(model)
    for how, m in (("unfused", mod), ("fused", transform.FuseOps()(mod))):
        got = np.asarray(tn.runtime.Executor(m)(*xs))
        assert got.shape == want.shape and got.dtype == want.dtype, (how, got.shape, want.shape)
        bad = np.flatnonzero(got != want)
        assert bad.size == 0, "%s: %d of %d differ, first at %d: %d vs %d" % (
            how, bad.size, got.size, bad[0], got.flat[bad[0]], want.flat[bad[0]])


def q16(shape: Any, scale: float) -> TensorSpec:
    return TensorSpec(shape, "int16", quant=(scale, 0))


def i16(*shape: int, bound: int = 32768) -> np.ndarray:
    return RNG.integers(-bound, bound, shape).astype(np.int16)


# ---- DIV (int8) ----------------------------------------------------------------

ALL = np.arange(-128, 128, dtype=np.int8)
# (lhs scale, zp, rhs scale, zp, out scale, zp): ordinary, a divisor zero
# point at either end, and multipliers large enough that the final shift
# turns left
DIV_QUANT = [(0.05, -3, 0.02, 7, 0.1, 1), (0.02, 10, 0.3, 0, 0.5, -128),
             (0.003, -128, 0.07, 127, 2.0, 5), (1.0, 5, 0.002, -1, 0.0001, 0),
             (1.0, 0, 0.0001, 0, 0.0001, 3)]


@pytest.mark.parametrize("q", DIV_QUANT)
def test_div_int8_every_pair(q: Any) -> None:
    opts = builtin_options("DivOptions", fusedActivationFunction=0)
    model = single_op_model("DIV", [q8((256, 1), q[0], q[1]), q8((1, 256), q[2], q[3])],
                            [q8((256, 256), q[4], q[5])], opts)
    check(model, ALL.reshape(256, 1), ALL.reshape(1, 256))


@pytest.mark.parametrize("act", [1, 2, 3])
def test_div_int8_fused_activation(act: int) -> None:
    opts = builtin_options("DivOptions", fusedActivationFunction=act)
    model = single_op_model("DIV", [q8((256, 1), 0.05, -3), q8((1, 256), 0.02, 7)],
                            [q8((256, 256), 0.03, -20)], opts)
    check(model, ALL.reshape(256, 1), ALL.reshape(1, 256))


def test_div_int8_same_shape_and_constant() -> None:
    opts = builtin_options("DivOptions", fusedActivationFunction=0)
    model = single_op_model("DIV", [q8((2, 3, 4), 0.05, -3), q8((2, 3, 4), 0.02, 7)],
                            [q8((2, 3, 4), 0.1, 1)], opts)
    check(model, i8(2, 3, 4), i8(2, 3, 4))
    c = const(i8(4), quant=(0.04, 2))
    model = single_op_model("DIV", [q8((3, 4), 0.5, -1), c], [q8((3, 4), 0.6, 2)], opts)
    check(model, i8(3, 4))
    # the constant as the dividend, broadcast over a rank-4 divisor
    model = single_op_model("DIV", [c, q8((2, 1, 3, 4), 0.01, 0)], [q8((2, 1, 3, 4), 0.9, 0)],
                            opts)
    check(model, i8(2, 1, 3, 4))


# ---- BATCH_MATMUL (int16) ------------------------------------------------------

# (lhs shape, rhs shape, adj_x, adj_y)
BMM16 = [((3, 4), (4, 5), False, False), ((2, 3, 6), (6, 2), False, False),
         ((2, 1, 4, 3), (3, 5, 4), True, True), ((1, 2, 5, 3), (2, 4, 3), False, True)]


def bmm_out(sa: Any, sb: Any, adj_x: bool, adj_y: bool) -> Any:
    ea, eb = np.zeros(sa), np.zeros(sb)
    return ((np.swapaxes(ea, -1, -2) if adj_x else ea) @
            (np.swapaxes(eb, -1, -2) if adj_y else eb)).shape


@pytest.mark.parametrize("sa,sb,adj_x,adj_y", BMM16)
@pytest.mark.parametrize("const_b", [False, True])
def test_batch_matmul_int16(sa: Any, sb: Any, adj_x: bool, adj_y: bool, const_b: bool) -> None:
    opts = builtin_options("BatchMatMulOptions", adjX=adj_x, adjY=adj_y)
    out = bmm_out(sa, sb, adj_x, adj_y)
    k = sa[-2] if adj_x else sa[-1]
    # an output scale that keeps most sums inside int16, some saturating
    so = 0.0004 * 0.0007 * 3000.0 * 3000.0 * np.sqrt(k) / 20000.0
    bv = i16(*sb, bound=3000)
    b = const(bv, quant=(0.0007, 0)) if const_b else q16(sb, 0.0007)
    model = single_op_model("BATCH_MATMUL", [q16(sa, 0.0004), b], [q16(out, so)], opts)
    xs: List[np.ndarray] = [i16(*sa, bound=3000)] + ([] if const_b else [bv])
    check(model, *xs)


def test_batch_matmul_int16_full_range() -> None:
    opts = builtin_options("BatchMatMulOptions", adjX=False, adjY=False)
    model = single_op_model("BATCH_MATMUL", [q16((2, 3, 8), 0.001), q16((8, 4), 0.002)],
                            [q16((2, 3, 4), 0.9)], opts)
    check(model, i16(2, 3, 8), i16(8, 4))


# ---- TRANSPOSE_CONV (16x8) -----------------------------------------------------

def tconv_model(x: Any, w: Any, b: Optional[Any], out: Any, padding: int, stride: int,
                act: int = 0) -> bytes:
    opts = builtin_options("TransposeConvOptions", padding=padding, strideW=stride,
                           strideH=stride, fusedActivationFunction=act)
    ins = [const(np.array(out.shape, np.int32)), w, x] + ([b] if b is not None else [])
    return single_op_model("TRANSPOSE_CONV", ins, [out], opts)


# (input h, w, output h, w, kernel, stride, padding: 0 SAME, 1 VALID)
TCONV = [(3, 4, 6, 8, 3, 2, 0), (3, 3, 7, 7, 3, 2, 1), (4, 5, 4, 5, 3, 1, 0),
         (3, 3, 9, 9, 4, 3, 0)]


def tconv16(ih: int, iw: int, oh: int, ow: int, k: int, s: int, pad: int, bias: Optional[str],
            act: int = 0, cin: int = 3, cout: int = 4) -> bytes:
    sx, so = 0.0005, 0.002
    sw = RNG.uniform(0.002, 0.02, cout).astype(np.float32)
    w = const(i8(cout, k, k, cin), quant=(list(sw), [0] * cout))
    b = None
    if bias is not None:
        hi = 1 << 14 if bias == "int16" else 1 << 24
        b = const(RNG.integers(-hi, hi, cout).astype(bias),
                  quant=(list(np.float32(sx) * sw), [0] * cout))
    return tconv_model(q16((1, ih, iw, cin), sx), w, b, q16((1, oh, ow, cout), so), pad, s, act)


@pytest.mark.parametrize("ih,iw,oh,ow,k,s,pad", TCONV)
@pytest.mark.parametrize("bias", ["int64", None])
def test_transpose_conv_16x8(ih: int, iw: int, oh: int, ow: int, k: int, s: int, pad: int,
                             bias: Optional[str]) -> None:
    model = tconv16(ih, iw, oh, ow, k, s, pad, bias)
    check(model, i16(1, ih, iw, 3))


@pytest.mark.parametrize("act", [1, 3])
def test_transpose_conv_16x8_activation_and_int16_bias(act: int) -> None:
    model = tconv16(3, 3, 6, 6, 3, 2, 0, "int16", act=act, cin=2, cout=3)
    check(model, i16(1, 3, 3, 2))


def test_transpose_conv_16x8_per_tensor() -> None:
    w = const(i8(2, 3, 3, 2), quant=(0.01, 0))
    model = tconv_model(q16((1, 3, 3, 2), 0.001), w, None, q16((1, 6, 6, 2), 0.004), 0, 2)
    check(model, i16(1, 3, 3, 2))


# ---- refusals ----------------------------------------------------------------------

def test_16x8_refusals_are_named() -> None:
    w = const(i8(2, 3, 3, 2), quant=(0.01, 0))
    x = TensorSpec((1, 3, 3, 2), "int16", quant=(0.001, 4))
    model = tconv_model(x, w, None, q16((1, 6, 6, 2), 0.004), 0, 2)
    msg = _error(model, unsupported=False)
    assert "TRANSPOSE_CONV" in msg and "zero point 0" in msg
    b = const(np.zeros(2, np.int32), quant=([1e-5, 1e-5], [0, 0]))
    model = tconv_model(q16((1, 3, 3, 2), 0.001), w, b, q16((1, 6, 6, 2), 0.004), 0, 2)
    msg = _error(model)
    assert "TRANSPOSE_CONV" in msg and "int64" in msg and "int32" in msg
    opts = builtin_options("BatchMatMulOptions", adjX=False, adjY=False)
    model = single_op_model("BATCH_MATMUL", [q16((3, 4), 0.001), q8((4, 2), 0.01, 0)],
                            [q16((3, 2), 0.01)], opts)
    msg = _error(model)
    assert "BATCH_MATMUL" in msg and "int16" in msg and "int8" in msg
