"""TFLite's control flow, IF and WHILE, whose subgraphs are converted in
line: an IF with a condition known only at run time runs both branches
and selects, one known at import keeps the branch taken; a WHILE is
unrolled at import when every turn of its condition is known there. Each
model against TFLite Micro, which runs the subgraphs itself."""
from typing import List, Optional

import numpy as np
import pytest

pytest.importorskip("tflite")
pytest.importorskip("tflite_micro")

import tvmnode as tn  # noqa: E402
from tvmnode import frontend, transform  # noqa: E402
from tflite_build import (GraphSpec, OpSpec, TensorSpec, builtin_options,  # noqa: E402
                          graph_model, run_tflite_micro)

RNG = np.random.default_rng(41)


def f32(*shape: int, name: str = "") -> TensorSpec:
    return TensorSpec(shape, "float32", name=name)


def branch(op: str, name: str, opts: str) -> GraphSpec:
    """y = x op x."""
    return GraphSpec([f32(2, 3, name="x"), f32(2, 3, name="y")], [0], [1],
                     [OpSpec(op, [0, 0], [1], builtin_options(opts))], name=name)


def if_model(cond_const: Optional[List[bool]] = None) -> bytes:
    """IF(cond, x): x + x when cond, else x * x; then 1 - the result."""
    cond = TensorSpec((1,), "bool", name="cond",
                      data=None if cond_const is None else np.array(cond_const, np.bool_))
    t = [cond, f32(2, 3, name="x"), f32(2, 3, name="r"),
         TensorSpec((1,), "float32", name="one", data=np.ones(1, np.float32)),
         f32(2, 3, name="out")]
    ops = [OpSpec("IF", [0, 1], [2], builtin_options("IfOptions", thenSubgraphIndex=1,
                                                     elseSubgraphIndex=2)),
           OpSpec("SUB", [3, 2], [4], builtin_options("SubOptions"))]
    ins = [1] if cond_const is not None else [0, 1]
    main = GraphSpec(t, ins, [4], ops, name="main")
    return graph_model([main, branch("ADD", "then", "AddOptions"),
                        branch("MUL", "else", "MulOptions")])


def run_ours(model: bytes, *xs: np.ndarray) -> np.ndarray:
    mod = frontend.from_tflite(model)
    outs = []
    for m in (mod, transform.FuseOps()(mod)):
        outs.append(np.asarray(tn.runtime.Executor(m)(*xs)))
    np.testing.assert_array_equal(outs[0], outs[1])
    return outs[0]


@pytest.mark.parametrize("c", [True, False])
def test_if_at_run_time(c: bool) -> None:
    model = if_model()
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    cond = np.array([c], np.bool_)
    want = run_tflite_micro(model, cond, x)[0]
    np.testing.assert_allclose(run_ours(model, cond, x), want, rtol=0, atol=1e-6)
    np.testing.assert_allclose(want, 1 - (x + x if c else x * x), rtol=1e-6)


@pytest.mark.parametrize("c", [True, False])
def test_if_known_at_import_keeps_one_branch(c: bool) -> None:
    model = if_model([c])
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    want = run_tflite_micro(model, x)[0]
    np.testing.assert_allclose(run_ours(model, x), want, rtol=0, atol=1e-6)
    text = frontend.from_tflite(model)["main"].astext()
    assert ("add(" in text) == c and ("multiply(" in text) == (not c), text


def while_model(limit: int, data_bound: bool = False) -> bytes:
    """i = 0; while i < limit: x = x * 1.5 + 1; i += 1. Outputs x."""
    i32 = lambda name, data=None: TensorSpec((), "int32", name=name, data=data)  # noqa: E731
    main = GraphSpec(
        [i32("i0", np.array(0, np.int32)), f32(1, 4, name="x"), i32("i_out"),
         f32(1, 4, name="y")] + ([i32("bound")] if data_bound else []),
        [1] + ([4] if data_bound else []), [3],
        [OpSpec("WHILE", [0, 1] + ([4] if data_bound else []), [2, 3] + ([4] if data_bound
                                                                         else []),
                builtin_options("WhileOptions", condSubgraphIndex=1, bodySubgraphIndex=2))],
        name="main")
    n_extra = 1 if data_bound else 0
    ct = [i32("i"), f32(1, 4, name="x"), TensorSpec((), "bool", name="go")]
    if data_bound:
        ct.append(i32("bound"))
        cond = GraphSpec(ct, [0, 1, 3], [2], [OpSpec("LESS", [0, 3], [2])], name="cond")
    else:
        ct.append(i32("limit", np.array(limit, np.int32)))
        cond = GraphSpec(ct, [0, 1], [2], [OpSpec("LESS", [0, 3], [2])], name="cond")
    bt = [i32("i"), f32(1, 4, name="x"), i32("one", np.array(1, np.int32)), i32("i2"),
          TensorSpec((1,), "float32", name="k", data=np.array([1.5], np.float32)),
          TensorSpec((1,), "float32", name="b", data=np.ones(1, np.float32)),
          f32(1, 4, name="xk"), f32(1, 4, name="x2")] + ([i32("bound")] if n_extra else [])
    body = GraphSpec(bt, [0, 1] + ([8] if n_extra else []), [3, 7] + ([8] if n_extra else []),
                     [OpSpec("ADD", [0, 2], [3], builtin_options("AddOptions")),
                      OpSpec("MUL", [1, 4], [6], builtin_options("MulOptions")),
                      OpSpec("ADD", [6, 5], [7], builtin_options("AddOptions"))], name="body")
    return graph_model([main, cond, body])


@pytest.mark.parametrize("limit", [0, 1, 5])
def test_while_counted_by_constants_is_unrolled(limit: int) -> None:
    model = while_model(limit)
    x = RNG.standard_normal((1, 4)).astype(np.float32)
    want = run_tflite_micro(model, x)[0]
    y = x.copy()
    for _ in range(limit):
        y = y * np.float32(1.5) + np.float32(1)
    np.testing.assert_allclose(want, y, rtol=1e-6)
    np.testing.assert_allclose(run_ours(model, x), want, rtol=0, atol=1e-6 * max(1, abs(want).max()))


def test_while_bounded_by_an_input_is_refused() -> None:
    with pytest.raises(frontend.ModelImportError, match="WHILE.*depends on the model's inputs"):
        frontend.from_tflite(while_model(0, data_bound=True))


def test_if_branch_calling_itself_is_an_error() -> None:
    t = [TensorSpec((1,), "bool", name="c"), f32(2, 3, name="x"), f32(2, 3, name="y")]
    loop = GraphSpec(t, [0, 1], [2], [OpSpec("IF", [0, 1], [2], builtin_options(
        "IfOptions", thenSubgraphIndex=0, elseSubgraphIndex=0))], name="main")
    with pytest.raises(frontend.ModelImportError, match="IF.*subgraph 0"):
        frontend.from_tflite(graph_model([loop]))
