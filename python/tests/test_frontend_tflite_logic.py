"""The TFLite comparisons (EQUAL, NOT_EQUAL, GREATER, GREATER_EQUAL, LESS,
LESS_EQUAL), LOGICAL_AND/OR/NOT, SELECT_V2, FLOOR, CEIL, ROUND, FLOOR_DIV,
FLOOR_MOD, SQUARE, SIN, COS, ZEROS_LIKE, FILL, BROADCAST_TO,
BROADCAST_ARGS, ADD_N and CUMSUM, one operator per model (tflite_build),
in each type the tflite-micro package runs them in, against it on the same
bytes (RELU_0_TO_1, which the wheel lacks, against LiteRT's reference
kernels): integer and bool outputs identical on every element, float32 within
1e-6 of the output's range; each through the executor unfused and after
FuseOps."""
from typing import Any, List, Sequence, Tuple

import numpy as np
import pytest

pytest.importorskip("tflite")
pytest.importorskip("tflite_micro")

import tvmnode as tn  # noqa: E402
from tvmnode import codegen, frontend, ir, transform  # noqa: E402
from tvmnode.frontend.tflite_logic import multiplier_below_one, rescale_table  # noqa: E402
from aot_util import HostModel  # noqa: E402
from tflite_build import (Node, TensorSpec, builtin_options, chain_model,  # noqa: E402
                          run_tflite_micro, single_op_model)
from test_frontend_tflite_elementwise import check  # noqa: E402
from test_frontend_tflite_ops import const, f32, fl, q8, run_litert_ref  # noqa: E402

RNG = np.random.default_rng(77)



@pytest.fixture(scope="module", autouse=True)
def made_once() -> None:
    """What the library makes once and keeps for the operators these
    tests use (their kernels' entries), made before the leak fixture's
    first baseline."""
    m, xs = chain()
    mod = frontend.from_tflite(m)
    for how in (mod, transform.FuseOps()(mod)):
        tn.runtime.Executor(how)(*xs)


COMPARISONS = ["EQUAL", "NOT_EQUAL", "GREATER", "GREATER_EQUAL", "LESS", "LESS_EQUAL"]


def spec(shape: Sequence[int], dtype: str) -> TensorSpec:
    return TensorSpec(shape, dtype)


def ints(dtype: str, lo: int, hi: int, *shape: int) -> np.ndarray:
    return RNG.integers(lo, hi, shape).astype(dtype)


def bools(*shape: int) -> np.ndarray:
    return RNG.integers(0, 2, shape).astype(bool)


def ties(*shape: int) -> np.ndarray:
    """float32 values with many repeats and exact halves (ties)."""
    return (RNG.integers(-12, 12, shape) * 0.5).astype(np.float32)


# ---- comparisons ------------------------------------------------------------------------------

@pytest.mark.parametrize("op", COMPARISONS)
def test_compare_float_and_int(op: str) -> None:
    m = single_op_model(op, [f32((2, 3, 4)), f32((3, 1))], [spec((2, 3, 4), "bool")])
    check(m, ties(2, 3, 4), ties(3, 1))
    m = single_op_model(op, [spec((3, 4), "int32"), spec((4,), "int32")],
                        [spec((3, 4), "bool")])
    a = ints("int32", -5, 5, 3, 4)
    a[0] = [2 ** 31 - 1, -2 ** 31, -2 ** 31, 2 ** 31 - 1]  # differences beyond int32
    a[1, :2] = [-1, 0]
    b = ints("int32", -5, 5, 4)
    b[:] = [-2 ** 31, 2 ** 31 - 1, -2 ** 31, 2 ** 31 - 1]
    check(m, a, b)


@pytest.mark.parametrize("op", COMPARISONS)
def test_compare_int8_rescaled(op: str) -> None:
    # scales a little apart: values that are equal in real terms compare
    # as TFLite Micro's rounding makes them
    m = single_op_model(op, [q8((4, 16), 0.05, -3), q8((4, 16), 0.0501, 4)],
                        [spec((4, 16), "bool")])
    a = np.repeat(np.arange(-128, 128, dtype=np.int8).reshape(16, 16), 1, 0)[:4]
    b = np.clip(a.astype(np.int32) - 7, -128, 127).astype(np.int8)
    check(m, a, b)
    m = single_op_model(op, [q8((2, 8), 0.02, 0), const(np.arange(-4, 4, dtype=np.int8),
                                                        quant=(0.04, 1))],
                        [spec((2, 8), "bool")])
    check(m, ints("int8", -128, 128, 2, 8))


@pytest.mark.parametrize("op", ["EQUAL", "NOT_EQUAL"])
def test_compare_bool(op: str) -> None:
    m = single_op_model(op, [spec((2, 5), "bool"), spec((5,), "bool")], [spec((2, 5), "bool")])
    check(m, bools(2, 5), bools(5))


def test_rescale_table_matches_the_fixed_point_formula() -> None:
    # 0.05 = 0.8 * 2^-4: multiplier round(0.8 * 2^31), shift -4
    assert multiplier_below_one(0.05) == (int(round(0.8 * 2 ** 31)), -4)
    assert multiplier_below_one(0.5) == (1 << 30, 0)

    class Ctx:
        def qparams(self, t: Any) -> Any:
            return np.array([0.5], np.float32), np.array([-2])

    t = type("T", (), {"name": "x"})()
    table = rescale_table(Ctx(), t)
    # scale 1/2: (v + 2) * 256 / 2 exactly
    assert table.dtype == np.int32 and table.shape == (256,)
    assert np.array_equal(table, (np.arange(-128, 128) + 2) * 128)


def test_compare_errors() -> None:
    m = single_op_model("GREATER", [spec((3,), "bool"), spec((3,), "bool")], [spec((3,), "bool")])
    with pytest.raises(frontend.ModelImportError, match="GREATER.*bool"):
        frontend.from_tflite(m)
    m = single_op_model("LESS", [q8((3,), 1.5, 0), q8((3,), 0.5, 0)], [spec((3,), "bool")])
    with pytest.raises(frontend.ModelImportError, match="scale 1.5"):
        frontend.from_tflite(m)


# ---- logic and selection ------------------------------------------------------------------

@pytest.mark.parametrize("op", ["LOGICAL_AND", "LOGICAL_OR"])
def test_logical_binary(op: str) -> None:
    m = single_op_model(op, [spec((3, 4), "bool"), spec((3, 1), "bool")], [spec((3, 4), "bool")])
    check(m, bools(3, 4), bools(3, 1))


def test_logical_not() -> None:
    m = single_op_model("LOGICAL_NOT", [spec((2, 7), "bool")], [spec((2, 7), "bool")])
    check(m, bools(2, 7))
    m = single_op_model("LOGICAL_NOT", [f32((3,))], [f32((3,))])
    with pytest.raises(frontend.ModelImportError, match="LOGICAL_NOT.*bool"):
        frontend.from_tflite(m)


def test_select_v2_broadcast() -> None:
    m = single_op_model("SELECT_V2", [spec((2, 1, 4), "bool"), f32((3, 1)), f32((1, 3, 4))],
                        [f32((2, 3, 4))])
    check(m, bools(2, 1, 4), fl(3, 1), fl(1, 3, 4))
    m = single_op_model("SELECT_V2", [spec((4,), "bool"), q8((3, 4)), q8((3, 4))], [q8((3, 4))])
    check(m, bools(4), ints("int8", -128, 128, 3, 4), ints("int8", -128, 128, 3, 4))
    i16 = TensorSpec((2, 3), "int16", quant=(0.01, 0))
    m = single_op_model("SELECT_V2", [spec((2, 3), "bool"), i16,
                                      TensorSpec((2, 3), "int16", quant=(0.01, 0))],
                        [TensorSpec((2, 3), "int16", quant=(0.01, 0))])
    check(m, bools(2, 3), ints("int16", -32768, 32768, 2, 3), ints("int16", -32768, 32768, 2, 3))


# ---- rounding and float arithmetic ------------------------------------------------------------

@pytest.mark.parametrize("op", ["FLOOR", "CEIL", "ROUND", "SQUARE", "SIN", "COS"])
def test_float_unary(op: str) -> None:
    m = single_op_model(op, [f32((4, 6))], [f32((4, 6))])
    x = np.concatenate([ties(2, 6), fl(2, 6) * 4]).astype(np.float32)
    check(m, x)


def test_round_half_to_even() -> None:
    m = single_op_model("ROUND", [f32((8,))], [f32((8,))])
    x = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5, 1e9 + 0.5], np.float32)
    want = run_tflite_micro(m, x)[0]
    assert np.array_equal(want, np.round(x))
    check(m, x)


@pytest.mark.parametrize("op", ["FLOOR_DIV", "FLOOR_MOD"])
def test_floor_div_mod(op: str) -> None:
    m = single_op_model(op, [f32((3, 5)), f32((5,))], [f32((3, 5))])
    b = fl(5)
    b[np.abs(b) < 0.1] = 0.5
    b[0] = -2.0
    check(m, fl(3, 5) * 5, b)


@pytest.mark.parametrize("op", ["FLOOR_DIV", "FLOOR_MOD"])
def test_floor_div_mod_int32(op: str) -> None:
    """int32 (movenet's FLOOR_DIV): TFLite Micro refuses it, so against
    LiteRT's reference kernels; every sign pair, exact multiples, the int32
    extremes and a broadcast divisor."""
    m = single_op_model(op, [spec((4, 6), "int32"), spec((6,), "int32")], [spec((4, 6), "int32")])
    a = np.array([[7, -7, 7, -7, 0, 6], [-6, 1, -1, 2147483647, -2147483648, 5],
                  [-2147483648, 2147483647, 13, -13, 12, -12], [100, -100, 3, -3, 1, -1]],
                 np.int32)
    b = np.array([2, 2, -2, -2, 3, -2147483648], np.int32)
    want = run_litert_ref(m, a, b)
    got = np.asarray(tn.runtime.Executor(frontend.from_tflite(m))(a, b))
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(
        got, np.floor_divide(a.astype(np.int64), b) if op == "FLOOR_DIV"
        else np.mod(a.astype(np.int64), b))


def test_float_only_errors() -> None:
    m = single_op_model("FLOOR_DIV", [spec((3,), "int8"), spec((3,), "int8")],
                        [spec((3,), "int8")])
    with pytest.raises(frontend.ModelImportError, match="FLOOR_DIV.*float32"):
        frontend.from_tflite(m)


# ---- fill and broadcast ------------------------------------------------------------------------

def test_zeros_like() -> None:
    for dt in ("float32", "int32", "int64"):
        m = single_op_model("ZEROS_LIKE", [spec((2, 3), dt)], [spec((2, 3), dt)])
        check(m, ints(dt, -9, 9, 2, 3))
    m = single_op_model("ZEROS_LIKE", [q8((2, 3))], [q8((2, 3))])
    check(m, ints("int8", -128, 128, 2, 3))


def test_fill() -> None:
    dims = const(np.array([2, 3, 2], np.int32))
    for dt, v in (("float32", fl(1).reshape(())), ("int32", np.array(-7, np.int32))):
        m = single_op_model("FILL", [dims, spec((), dt)], [spec((2, 3, 2), dt)])
        check(m, v)
    m = single_op_model("FILL", [const(np.array([4], np.int64)), TensorSpec((), "int8",
                                                                            quant=(0.1, 0))],
                        [q8((4,), 0.1, 0)])
    check(m, np.array(-100, np.int8))


def test_fill_folds_constants() -> None:
    # checked against tflite-micro with the value as a graph input (it
    # aborts on a model of constants only)
    v = np.array(2.5, np.float32)
    want = run_tflite_micro(single_op_model("FILL", [const(np.array([2, 2], np.int32)),
                                                     f32(())], [f32((2, 2))]), v)[0]
    m = single_op_model("FILL", [const(np.array([2, 2], np.int32)), const(v)], [f32((2, 2))])
    mod = frontend.from_tflite(m)
    assert isinstance(mod["main"].body, ir.Constant), str(mod)
    got = np.asarray(tn.runtime.Executor(mod)())
    assert got.dtype == want.dtype and np.array_equal(got, want), (got, want)


def test_broadcast_to() -> None:
    for dt in ("float32", "int8", "int16", "int32", "int64", "bool"):
        q = (0.1, 0) if dt in ("int8", "int16") else None
        m = single_op_model("BROADCAST_TO", [TensorSpec((3, 1), dt, quant=q),
                                             const(np.array([2, 3, 4], np.int32))],
                            [TensorSpec((2, 3, 4), dt, quant=q)])
        x = bools(3, 1) if dt == "bool" else ints(dt, -100, 100, 3, 1)
        check(m, x)


def test_broadcast_args_folds() -> None:
    # tflite-micro computes it on graph inputs (the wheel aborts on shapes
    # of different lengths); the importer folds the constant form
    a, b = np.array([1, 3, 1], np.int32), np.array([4, 1, 5], np.int32)
    m = single_op_model("BROADCAST_ARGS", [spec((3,), "int32"), spec((3,), "int32")],
                        [spec((3,), "int32")])
    want = run_tflite_micro(m, a, b)[0]
    m = single_op_model("BROADCAST_ARGS", [const(a), const(b)], [spec((3,), "int32")])
    mod = frontend.from_tflite(m)
    assert isinstance(mod["main"].body, ir.Constant)
    got = np.asarray(tn.runtime.Executor(mod)())
    assert got.dtype == want.dtype and np.array_equal(got, want), (got, want)
    m = single_op_model("BROADCAST_ARGS", [spec((2,), "int32"), spec((2,), "int32")],
                        [spec((2,), "int32")])
    with pytest.raises(frontend.ModelImportError, match="BROADCAST_ARGS.*constants"):
        frontend.from_tflite(m)


# ---- sums ------------------------------------------------------------------------------------

def test_add_n_float() -> None:
    m = single_op_model("ADD_N", [f32((2, 5)), f32((2, 5)), f32((2, 5))], [f32((2, 5))])
    check(m, fl(2, 5), fl(2, 5), fl(2, 5))


@pytest.mark.parametrize("exclusive,reverse", [(False, False), (True, False), (False, True),
                                               (True, True)])
def test_cumsum_float(exclusive: bool, reverse: bool) -> None:
    opts = builtin_options("CumsumOptions", exclusive=exclusive, reverse=reverse)
    for axis in (1, -1):
        m = single_op_model("CUMSUM", [f32((2, 5, 3)), const(np.array(axis, np.int32))],
                            [f32((2, 5, 3))], opts)
        check(m, fl(2, 5, 3))


# ---- the generated C ---------------------------------------------------------------------------

def chain() -> Tuple[bytes, List[np.ndarray]]:
    """One model of the compositions (int8 tables, int32 sign split,
    logic, selection, rounding, take-based fill and broadcast, int8 and
    float sums) and its inputs."""
    a8, b8 = q8((2, 4), 0.05, -3), q8((2, 4), 0.04, 2)
    a32, b32 = spec((2, 4), "int32"), spec((4,), "int32")
    lt, ge, both = spec((2, 4), "bool"), spec((2, 4), "bool"), spec((2, 4), "bool")
    fa, fb, sel, md, rd, sn = (f32((2, 4)) for _ in range(6))
    cs, bt = f32((2, 4)), f32((2, 4))
    fillv, filled = spec((), "int32"), spec((2, 4), "int32")
    s8 = q8((2, 4), 0.1, 1)
    nodes = [
        Node("LESS", [a8, b8], [lt]),
        Node("GREATER_EQUAL", [a32, b32], [ge]),
        Node("LOGICAL_AND", [lt, ge], [both]),
        Node("SELECT_V2", [both, fa, fb], [sel]),
        Node("FLOOR_MOD", [sel, fb], [md]),
        Node("ROUND", [md], [rd]),
        Node("SIN", [rd], [sn]),
        Node("CUMSUM", [sn, const(np.array(1, np.int32))], [cs],
             builtin_options("CumsumOptions", exclusive=True, reverse=False)),
        Node("BROADCAST_TO", [f32((4,)), const(np.array([2, 4], np.int32))], [bt]),
        Node("FILL", [const(np.array([2, 4], np.int32)), fillv], [filled]),
        Node("ADD_N", [a8, a8, a8], [s8]),
    ]
    m = chain_model(nodes, [both, cs, bt, filled, s8])
    b = fl(2, 4)
    b[np.abs(b) < 0.2] = 0.7
    xs = [ints("int8", -128, 128, 2, 4), ints("int8", -128, 128, 2, 4),
          ints("int32", -2 ** 31, 2 ** 31 - 1, 2, 4), ints("int32", -2 ** 31, 2 ** 31 - 1, 4),
          fl(2, 4) * 4, b, fl(4), np.array(-9, np.int32)]
    return m, xs


def test_generated_c_equals_tflite_micro(tmp_path: Any) -> None:
    """The chain compiled to C and run: every output equal to TFLite
    Micro's (floats within 1e-6 of their range)."""
    m, xs = chain()
    want = run_tflite_micro(m, *xs, outputs=5)
    arch = codegen.compile(frontend.from_tflite(m), "logic")
    got = HostModel(arch, str(tmp_path)).run(*xs)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        if w.dtype == np.float32:
            np.testing.assert_allclose(g, w, rtol=0, atol=1e-6 * max(float(np.abs(w).max()), 1e-6))
        else:
            assert np.array_equal(g, w)


def test_add_n_int8() -> None:
    ins = [q8((3, 4), 0.05, -3) for _ in range(4)]
    m = single_op_model("ADD_N", ins, [q8((3, 4), 0.09, 5)])
    check(m, *[ints("int8", -128, 128, 3, 4) for _ in range(4)])
    m = single_op_model("ADD_N", [q8((5,), 0.02, 10), q8((5,), 0.02, 10)], [q8((5,), 0.1, -20)])
    check(m, ints("int8", -128, 128, 5), np.full(5, 127, np.int8))


def test_add_n_int8_many_terms_wrap_as_tflite_micro() -> None:
    # 24 terms: TFLite's int32 sum of values shifted by 19 wraps (extremes
    # included, so it does), and ours wraps the same way
    ins = [q8((2, 6), 0.02, -9) for _ in range(24)]
    m = single_op_model("ADD_N", ins, [q8((2, 6), 0.3, 3)])
    xs = [ints("int8", -128, 128, 2, 6) for _ in range(24)]
    xs[0][0] = 127
    for x in xs[1:]:
        x[0, :3] = 127
    check(m, *xs)


def test_add_n_int8_errors() -> None:
    m = single_op_model("ADD_N", [q8((3,), 0.05, -3), q8((3,), 0.06, -3)], [q8((3,), 0.1, 0)])
    with pytest.raises(frontend.ModelImportError, match="ADD_N.*share one scale"):
        frontend.from_tflite(m)


@pytest.mark.parametrize("exclusive,reverse", [(False, False), (True, True)])
def test_cumsum_int8(exclusive: bool, reverse: bool) -> None:
    opts = builtin_options("CumsumOptions", exclusive=exclusive, reverse=reverse)
    m = single_op_model("CUMSUM", [q8((2, 6, 3), 0.03, 7), const(np.array(1, np.int32))],
                        [q8((2, 6, 3), 0.11, -4)], opts)
    check(m, ints("int8", -128, 128, 2, 6, 3))
    # past 15 values TFLite's shifted int32 sums wrap; ours wrap alike
    m = single_op_model("CUMSUM", [q8((40,), 0.03, 7), const(np.array(0, np.int32))],
                        [q8((40,), 0.11, -4)], opts)
    x = ints("int8", -128, 128, 40)
    x[:30] = 127
    check(m, x)


# ---- RELU_0_TO_1 (LiteRT's reference kernels: the tflite-micro wheel lacks it) -------------

def check_litert(model: bytes, *xs: np.ndarray) -> None:
    want = run_litert_ref(model, *xs)
    mod = frontend.from_tflite(model)
    for how, m in (("unfused", mod), ("fused", transform.FuseOps()(mod))):
        got = np.asarray(tn.runtime.Executor(m)(*xs))
        assert got.dtype == want.dtype and np.array_equal(got, want), (how, got, want)


def test_relu_0_to_1() -> None:
    m = single_op_model("RELU_0_TO_1", [f32((3, 5))], [f32((3, 5))])
    check_litert(m, fl(3, 5) * 2)
    x = ints("int8", -128, 128, 4, 8)
    m = single_op_model("RELU_0_TO_1", [q8((4, 8), 0.02, -3)], [q8((4, 8), 0.01, -100)])
    check_litert(m, x)
    m = single_op_model("RELU_0_TO_1", [q8((4, 8), 0.02, -3)], [q8((4, 8), 0.02, -3)])
    check_litert(m, x)
