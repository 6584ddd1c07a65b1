"""The int8 operators through the executor, against numpy written from
TFLite's published integer semantics (QuantizeMultiplier, the saturating
rounding doubling high multiply, rounding right shifts). The kernel suites
in C check every kernel in depth; these check that the lowering hands the
kernels the right parameters (scales, zero points, per-channel multipliers,
fused activations), fused by FuseOps and unfused."""
import math
from typing import Any, Tuple

import numpy as np
import pytest

from tvmnode import ir
from tvmnode.ir import op

from exec_util import executor, run_both

RNG = np.random.default_rng(11)


def quantize_multiplier(m: float) -> Tuple[int, int]:
    """TFLite's QuantizeMultiplier (its default, double-rounding build):
    m == q * 2^(shift - 31)."""
    if m == 0:
        return 0, 0
    q, shift = math.frexp(m)
    qf = int(math.floor(abs(q) * (1 << 31) + 0.5)) * (1 if q >= 0 else -1)
    if qf == 1 << 31:
        qf //= 2
        shift += 1
    if shift < -31:
        return 0, 0
    return qf, shift


def srdhm(a: np.ndarray, b: int) -> np.ndarray:
    ab = a.astype(np.int64) * np.int64(b)
    nudge = np.where(ab >= 0, 1 << 30, 1 - (1 << 30))
    s = ab + nudge
    out = np.where(s >= 0, s >> 31, -((-s) >> 31))  # C division truncates
    both_min = (a == -(1 << 31)) & (b == -(1 << 31))
    return np.where(both_min, (1 << 31) - 1, out).astype(np.int64)


def rdbpot(x: np.ndarray, e: int) -> np.ndarray:
    mask = (1 << e) - 1
    rem = x & mask
    thr = (mask >> 1) + (x < 0)
    return (x >> e) + (rem > thr)


def mbqm(x: np.ndarray, m: int, shift: int) -> np.ndarray:
    left, right = max(shift, 0), max(-shift, 0)
    return rdbpot(srdhm(x.astype(np.int64) * (1 << left), m), right)


def qconst(v: Any, dtype: str = "float32") -> Any:
    return ir.const(np.array(v, dtype=dtype))


def i8(*shape: int) -> np.ndarray:
    return RNG.integers(-128, 128, shape, dtype=np.int8)


@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("zp_in", [-128, 0, 5, 127])
def test_fused_conv_bias_requantize_clip(per_channel: bool, zp_in: int) -> None:
    n, h, w, ci, co = 1, 7, 6, 3, 4
    x, k = i8(n, h, w, ci), i8(3, 3, ci, co)
    bias = RNG.integers(-3000, 3000, co, dtype=np.int32)
    s_in, s_out = np.float32(0.05), np.float32(0.11)
    s_w = (RNG.uniform(0.002, 0.02, co) if per_channel else np.full(co, 0.01)).astype(np.float32)
    zp_out = -7
    acc_scale = (s_in * s_w).astype(np.float32)

    def net(v: Any) -> Any:
        c = op.qnn.conv2d(v, ir.const(k), qconst(zp_in, "int32"), qconst(0, "int32"),
                          qconst(s_in), ir.const(s_w if per_channel else s_w[:1].reshape(())),
                          padding=[1, 1], data_layout="NHWC", kernel_layout="HWIO",
                          out_dtype="int32")
        c = op.nn.bias_add(c, ir.const(bias), axis=3)
        r = op.qnn.requantize(c, ir.const(acc_scale if per_channel else acc_scale[:1].reshape(())),
                              qconst(0, "int32"), qconst(s_out), qconst(zp_out, "int32"),
                              axis=3)
        return op.clip(r, a_min=-100.0, a_max=90.0)

    got = run_both(net, x)
    # reference: int32 accumulators, then TFLite's requantization per channel
    xp = np.pad(x.astype(np.int64) - zp_in, [[0, 0], [1, 1], [1, 1], [0, 0]])
    acc = np.zeros((n, h, w, co), np.int64)
    for i in range(3):
        for j in range(3):
            acc += xp[:, i:i + h, j:j + w, :] @ k[i, j].astype(np.int64)
    acc += bias
    want = np.empty_like(acc)
    for c in range(co):
        m, s = quantize_multiplier(float(acc_scale[c]) / float(s_out))
        want[..., c] = mbqm(acc[..., c], m, s)
    want = np.clip(want + zp_out, -100, 90)
    np.testing.assert_array_equal(got, want.astype(np.int8))


def test_dense_requantize() -> None:
    x, wt = i8(3, 20), i8(5, 20)
    s_in, s_w, s_out = np.float32(0.02), np.float32(0.03), np.float32(0.2)

    def net(v: Any) -> Any:
        d = op.qnn.dense(v, ir.const(wt), qconst(3, "int32"), qconst(0, "int32"),
                         qconst(s_in), qconst(s_w), out_dtype="int32")
        return op.qnn.requantize(d, qconst(s_in * s_w), qconst(0, "int32"), qconst(s_out),
                                 qconst(-2, "int32"))

    got = run_both(net, x)
    acc = (x.astype(np.int64) - 3) @ wt.astype(np.int64).T
    m, s = quantize_multiplier(float(np.float32(s_in * s_w)) / float(s_out))
    want = np.clip(mbqm(acc, m, s) - 2, -128, 127)
    np.testing.assert_array_equal(got, want.astype(np.int8))


def test_qnn_add_and_mul() -> None:
    a, b = i8(2, 3, 4), i8(4)
    sa, za, sb, zb, so, zo = 0.05, -3, 0.02, 7, 0.07, 1

    def args() -> Tuple[Any, ...]:
        return (qconst(sa), qconst(za, "int32"), qconst(sb), qconst(zb, "int32"), qconst(so),
                qconst(zo, "int32"))

    got = run_both(lambda x, y: op.qnn.add(x, y, *args()), a, b)
    # TFLite's ADD: both inputs rescaled to twice the larger scale << 20
    f = np.float32
    twice = 2 * max(float(f(sa)), float(f(sb)))
    ma, sha = quantize_multiplier(float(f(sa)) / twice)
    mb, shb = quantize_multiplier(float(f(sb)) / twice)
    mo, sho = quantize_multiplier(twice / ((1 << 20) * float(f(so))))
    ra = rdbpot(srdhm((a.astype(np.int64) - za) * (1 << 20), ma), -sha)
    rb = rdbpot(srdhm((b.astype(np.int64) - zb) * (1 << 20), mb), -shb)
    want = np.clip(rdbpot(srdhm(ra + rb, mo), -sho) + zo, -128, 127)
    np.testing.assert_array_equal(got, want.astype(np.int8))

    got = run_both(lambda x, y: op.qnn.mul(x, y, *args()), a, b)
    mm, shm = quantize_multiplier(float(f(sa)) * float(f(sb)) / float(f(so)))
    prod = (a.astype(np.int64) - za) * (b.astype(np.int64) - zb)
    want = np.clip(mbqm(prod, mm, shm) + zo, -128, 127)
    np.testing.assert_array_equal(got, want.astype(np.int8))


def test_int8_pooling() -> None:
    x = i8(1, 5, 6, 3)
    got = run_both(lambda v: op.nn.max_pool2d(v, pool_size=[2, 2], strides=[2, 2],
                                              padding=[0, 0, 1, 0], layout="NHWC"), x)
    xp = np.pad(x.astype(np.int64), [[0, 0], [0, 1], [0, 0], [0, 0]], constant_values=-999)
    want = xp.reshape(1, 3, 2, 3, 2, 3).max(axis=(2, 4))
    np.testing.assert_array_equal(got, want.astype(np.int8))
    got = run_both(lambda v: op.nn.avg_pool2d(v, pool_size=[2, 3], strides=[2, 3],
                                              padding=[0, 0, 1, 0], layout="NHWC"), x)
    want = np.empty((1, 3, 2, 3), np.int64)
    for i in range(3):
        for j in range(2):
            win = x[0, 2 * i:2 * i + 2, 3 * j:3 * j + 3].astype(np.int64)  # in bounds only
            cnt = win.shape[0] * win.shape[1]
            s = win.sum(axis=(0, 1))
            want[0, i, j] = np.where(s > 0, (s + cnt // 2) // cnt, -((-s + cnt // 2) // cnt))
    np.testing.assert_array_equal(got, want.astype(np.int8))


def test_softmax_sigmoid_tanh_match_float_within_one_step() -> None:
    x = i8(4, 10)
    s_in, zp = 0.1, 3
    real = (x.astype(np.float64) - zp) * np.float32(s_in)

    def act(fn: Any, so: float, zo: int) -> Any:
        return lambda v: fn(v, qconst(s_in), qconst(zp, "int32"), qconst(so), qconst(zo, "int32"))

    got = run_both(act(op.qnn.softmax, 1 / 256, -128), x)
    e = np.exp(real - real.max(axis=1, keepdims=True))
    ref = e / e.sum(axis=1, keepdims=True)
    assert np.abs((got.astype(np.int64) + 128) / 256 - ref).max() <= 1.01 / 256
    got = run_both(act(op.qnn.sigmoid, 1 / 256, -128), x)
    assert np.abs((got.astype(np.int64) + 128) / 256 - 1 / (1 + np.exp(-real))).max() <= 1.01 / 256
    got = run_both(act(op.qnn.tanh, 1 / 128, 0), x)
    assert np.abs(got.astype(np.int64) / 128 - np.tanh(real)).max() <= 1.01 / 128
    # other output quantizations have no TFLite kernel: a clear error
    with pytest.raises(NotImplementedError, match="qnn.sigmoid.*1/256"):
        executor(act(op.qnn.sigmoid, 0.5, 0), x, fuse=False)


def test_int8_shape_operators_pass_through() -> None:
    a, b = i8(2, 3), i8(2, 5)
    np.testing.assert_array_equal(run_both(lambda x, y: op.concatenate([x, y], axis=1), a, b),
                                  np.concatenate([a, b], axis=1))
    np.testing.assert_array_equal(run_both(lambda x: op.reshape(x, newshape=[3, 2]), a),
                                  a.reshape(3, 2))


@pytest.mark.parametrize("kind", ["add", "mul"])
@pytest.mark.parametrize("lo,hi,folded", [(1.0, 127.0, True),  # TFLite's RELU at zero point 1
                                          (-20.5, 30.2, True),
                                          (-1000.0, 1000.0, True),
                                          (200.0, 300.0, True),  # every output 127
                                          (10.2, 10.8, False),  # no integer inside: every output 10
                                          (float("nan"), 10.0, False)])
def test_clip_after_qnn_binary_folds_into_its_range(kind: str, lo: float, hi: float,
                                                    folded: bool) -> None:
    """A clip after an int8 ADD or MUL runs inside it, as its activation
    range, when fused: one kernel call instead of two, the same bytes as
    the unfused pair (run_both) and as the formula; a clip whose range is
    empty or NaN stays its own call."""
    a, b = i8(3, 5, 7), i8(5, 7)
    sa, za, sb, zb, so, zo = 0.05, -3, 0.04, 7, 0.06, 1

    def net(x: Any, y: Any) -> Any:
        f = op.qnn.add if kind == "add" else op.qnn.mul
        v = f(x, y, qconst(sa), qconst(za, "int32"), qconst(sb), qconst(zb, "int32"),
              qconst(so), qconst(zo, "int32"))
        return op.clip(v, a_min=lo, a_max=hi)

    got = run_both(net, a, b)
    plain = run_both(lambda x, y: (op.qnn.add if kind == "add" else op.qnn.mul)(
        x, y, qconst(sa), qconst(za, "int32"), qconst(sb), qconst(zb, "int32"), qconst(so),
        qconst(zo, "int32")), a, b).astype(np.int64)
    if math.isnan(lo):
        want = np.minimum(np.maximum(plain, 0), 10)  # the clip kernel reads NaN as 0
    else:
        low = min(max(math.ceil(lo), -128), 127)
        high = min(max(math.floor(hi), -128), 127)
        want = np.minimum(np.maximum(plain, low), high)
    np.testing.assert_array_equal(got, want.astype(np.int8))
    steps = executor(net, a, b, fuse=True).stats()["steps"]
    assert steps == (1 if folded else 2)
    assert executor(net, a, b, fuse=False).stats()["steps"] == 2
