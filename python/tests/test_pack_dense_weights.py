"""PackDenseWeights: the fused int8 dense layer (qnn.requantize of
nn.bias_add of qnn.dense) with constant weights and bias gets its [N, K]
weight packed as tn_crt_dense_s8_pack lays it out (weight_layout "N16K4"),
its input zero point set to -128 and the difference folded into the bias;
or, with the option "PackDenseWeights.layout" "N4K4", as
tn_crt_dense_s8_pack4 lays it out for the Cortex-M DSP form, its input zero
point set to 0. The outputs stay the same integers, through the executor
and through the compiled C, and what the pass must not take it leaves
alone. codegen.compile runs it for "host" (N16K4) and "cortex-m" (N4K4)."""
from typing import Any, Callable, List, Tuple

import numpy as np
import pytest

from tvmnode import codegen, ir, runtime, transform
from tvmnode.ir import op

from test_fold_input_offset import INT8_MODELS, _c, _inputs, _layer, bundled_model  # noqa: E402


def pack_reference(w: np.ndarray, block: int = 16) -> np.ndarray:
    """The packed bytes of w [N, K], written from the layout's description:
    blocks of 16 features (N16K4; 4 for N4K4), inputs in groups of 4, a
    group's features one after another with their (up to) 4 weights in a
    row."""
    n, k = w.shape
    out: List[int] = []
    for j0 in range(0, n, block):
        for i0 in range(0, k, 4):
            out.extend(w[j0:j0 + block, i0:i0 + 4].reshape(-1).tolist())
    return np.array(out, "int8").reshape(n, k)


#: each layout's block of features and the input zero point it leaves
LAYOUTS = {"N16K4": (16, -128), "N4K4": (4, 0)}


def _pack(mod: ir.IRModule, layout: str = "") -> ir.IRModule:
    seq = transform.Sequential([transform.InferType(), transform.PackDenseWeights(),
                                transform.InferType()])
    if not layout:
        return seq(mod)
    with transform.PassContext(config={"PackDenseWeights.layout": layout}):
        return seq(mod)


def packed_layer(mod: ir.IRModule, calls: Callable[[ir.IRModule], List[Any]],
                 layout: str = "N16K4") -> Tuple[ir.IRModule, Any, Any, np.ndarray]:
    """mod packed (in `layout`), its one layer (found by `calls`) before and
    after, and the weight before; the layer after must be packed."""
    out = _pack(mod, layout)
    [before] = calls(transform.InferType()(mod))
    [after] = calls(out)
    assert str(after.attrs.weight_layout) == layout
    return out, before, after, np.array(before.args[1].data, copy=True)


def _dense_calls(mod: ir.IRModule, name: str = "qnn.dense") -> List[Any]:
    found: List[Any] = []

    def visit(e: Any) -> None:
        if isinstance(e, ir.Call) and isinstance(e.op, ir.Op) and str(e.op.name) == name:
            found.append(e)
    ir.post_order_visit(mod["main"], visit)
    return found


def _bias_of(mod: ir.IRModule) -> np.ndarray:
    found: List[np.ndarray] = []

    def visit(e: Any) -> None:
        if isinstance(e, ir.Call) and str(e.op.name) == "nn.bias_add":
            found.append(np.array(e.args[1].data, copy=True))
    ir.post_order_visit(mod["main"], visit)
    [b] = found
    return b


def _exec(mod: ir.IRModule, x: np.ndarray) -> np.ndarray:
    """The module run by the executor, with no compile pipeline."""
    passes = transform.Sequential([transform.InferType(), transform.FuseOps(),
                                   transform.InferType()])
    return np.array(runtime.Executor(passes(mod))(x), copy=True)


def _archive_run(mod: ir.IRModule, x: np.ndarray) -> np.ndarray:
    return np.array(runtime.Executor(codegen.compile(mod, name="m").module)(x), copy=True)


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("zx", [-128, 5, 127])
@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("cin,cout", [(8, 6), (64, 16), (37, 70), (128, 128), (3, 1)])
def test_a_dense_layer_is_packed_and_gives_the_same_outputs(cin: int, cout: int,
                                                            per_channel: bool,
                                                            zx: int, layout: str) -> None:
    mod, shape, b = _layer("dense", cin=cin, cout=cout, zx=zx, per_channel=per_channel,
                           seed=cin * cout + zx + 128)
    out, before, after, w = packed_layer(mod, _dense_calls, layout)
    block, nzx = LAYOUTS[layout]
    assert str(before.attrs.weight_layout) == "NK"
    np.testing.assert_array_equal(np.array(after.args[1].data), pack_reference(w, block))
    assert int(np.asarray(after.args[2].data)) == nzx
    assert b is not None
    sums = w.astype(np.int64).sum(1)
    want = (b.astype(np.int64) + (nzx - zx) * sums + 2**31) % 2**32 - 2**31
    np.testing.assert_array_equal(_bias_of(out), want.astype("int32"))
    for x in _inputs(shape):
        np.testing.assert_array_equal(_exec(out, x), _exec(mod, x))


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_a_bias_that_wraps_gives_the_same_outputs(layout: str) -> None:
    mod, shape, b = _layer("dense", zx=127, cin=64,
                           bias=[2**31 - 5, -2**31 + 3, 2**31 - 1, 7, -2**31, 0])
    out = _pack(mod, layout)
    for x in _inputs(shape):
        np.testing.assert_array_equal(_exec(out, x), _exec(mod, x))


def test_fold_input_offset_leaves_a_packed_layer_alone() -> None:
    """FoldInputOffset after PackDenseWeights: the packed rows are not runs
    of one output's weights, so the fold must not touch the layer (a
    pipeline of both is the user's to write)."""
    mod, shape, _ = _layer("dense", cin=37, cout=70, zx=5, per_channel=True, seed=11)
    packed = _pack(mod)
    both = transform.Sequential([transform.FoldInputOffset(), transform.InferType()])(packed)
    [after] = _dense_calls(both)
    assert str(after.attrs.weight_layout) == "N16K4"
    assert int(np.asarray(after.args[2].data)) == -128
    np.testing.assert_array_equal(_bias_of(both), _bias_of(packed))
    for x in _inputs(shape):
        np.testing.assert_array_equal(_exec(both, x), _exec(mod, x))


def _no_requantize() -> ir.IRModule:
    x = ir.var("x", shape=(1, 8), dtype="int8")
    y = op.qnn.dense(x, ir.const(np.ones((4, 8), "int8")), _c(3, "int32"), _c(0, "int32"),
                     _c(0.05), _c(0.01), out_dtype="int32")
    y = op.nn.bias_add(y, ir.const(np.arange(4, dtype="int32")), axis=1)
    return ir.IRModule.from_expr(ir.Function([x], y))


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("case", ["parameter weights", "no bias", "no requantize",
                                  "a convolution", "packed already",
                                  "packed already the other way"])
def test_what_must_stay_is_left_alone(case: str, layout: str) -> None:
    if case == "no requantize":
        mod = _no_requantize()
    elif case.startswith("packed already"):
        other = [lt for lt in LAYOUTS if lt != layout][0]
        mod = _pack(_layer("dense")[0], other if case.endswith("way") else layout)
    else:
        kw: Any = {"const_weight": False} if case == "parameter weights" else \
            {"bias": None} if case == "no bias" else {}
        if case == "a convolution":  # a 3x3 one (a 1x1 one is packed)
            kw = {"k": 3}
        mod = _layer("conv" if case == "a convolution" else "dense", **kw)[0]
    before = transform.InferType()(mod)
    out = _pack(mod, layout)
    assert out["main"].same_as(before["main"])


def test_a_layout_it_does_not_know_is_a_value_error() -> None:
    mod = _layer("dense")[0]
    with pytest.raises(ValueError, match="'PackDenseWeights.layout' must be 'N16K4' or "
                                         "'N4K4', got 'N8K4'"):
        _pack(mod, "N8K4")


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_a_packed_weight_outside_the_fused_layer_is_refused(layout: str) -> None:
    # qnn.dense given a packed weight_layout by hand, with no requantize
    # after it: the unfused kernel reads [N, K] only, and says so
    x = ir.var("x", shape=(1, 8), dtype="int8")
    y = op.qnn.dense(x, ir.const(np.ones((4, 8), "int8")), _c(3, "int32"), _c(0, "int32"),
                     _c(0.05), _c(0.01), out_dtype="int32", weight_layout=layout)
    mod = ir.IRModule.from_expr(ir.Function([x], y))
    with pytest.raises(NotImplementedError, match="weight_layout '%s'\\) is read only by "
                                                  "the fused int8 layer" % layout):
        _exec(mod, np.zeros((1, 8), "int8"))


def test_a_weight_layout_it_does_not_know_is_a_type_error() -> None:
    x = ir.var("x", shape=(1, 8), dtype="int8")
    with pytest.raises(TypeError, match="weight_layout must be 'NK', 'N16K4', 'N16K1' or "
                                        "'N4K4', got 'KN'"):
        op.qnn.dense(x, ir.const(np.ones((4, 8), "int8")), _c(3, "int32"), _c(0, "int32"),
                     _c(0.05), _c(0.01), out_dtype="int32", weight_layout="KN")


def _packed_count(mod: ir.IRModule, layout: str = "N16K4") -> Tuple[int, int]:
    calls = _dense_calls(mod)
    return sum(str(c.attrs.weight_layout) == layout for c in calls), len(calls)


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("fname", INT8_MODELS)
def test_every_bundled_int8_model_keeps_its_outputs(fname: str, layout: str) -> None:
    mod = bundled_model(fname)
    out = _pack(mod, layout)
    packed, total = _packed_count(out, layout)
    assert total > 0 and packed == total  # every dense layer of these models is fused
    shape = tuple(int(d) for d in mod["main"].params[0].checked_type.shape)
    for x in _inputs(shape, 2):
        np.testing.assert_array_equal(_exec(out, x), _exec(mod, x))


@pytest.mark.parametrize("fname", INT8_MODELS)
def test_every_bundled_int8_model_compiles_to_the_same_outputs_for_each_target(
        fname: str) -> None:
    """The archives of every target (host: N16K4; cortex-m: N4K4 after
    FoldInputOffset; wasm32: [N, K]) give the bytes of the model as
    imported, through the executor's lowering of each."""
    mod = bundled_model(fname)
    shape = tuple(int(d) for d in mod["main"].params[0].checked_type.shape)
    archives = {t: codegen.compile(mod, name="m", target=t) for t in ("host", "cortex-m",
                                                                      "wasm32")}
    assert _packed_count(archives["host"].module, "N16K4")[0] > 0
    packed, total = _packed_count(archives["cortex-m"].module, "N4K4")
    assert packed == total > 0
    assert _packed_count(archives["wasm32"].module, "NK")[0] > 0
    for x in _inputs(shape, 2):
        want = _exec(mod, x)
        for a in archives.values():
            np.testing.assert_array_equal(np.array(runtime.Executor(a.module)(x)), want)


def test_compile_packs_for_host_and_cortex_m() -> None:
    mod, shape, _ = _layer("dense", cin=40, cout=20)
    assert codegen.PACK_DENSE_WEIGHTS == {"host": "N16K4", "cortex-m": "N4K4"}
    host = codegen.compile(mod, name="m")
    dev = codegen.compile(mod, name="m", target="cortex-m")
    wasm = codegen.compile(mod, name="m", target="wasm32")
    assert _packed_count(host.module) == (1, 1)
    assert _packed_count(dev.module, "N4K4") == (1, 1)
    assert _packed_count(wasm.module, "NK") == (1, 1)
    [d] = _dense_calls(dev.module)
    assert int(np.asarray(d.args[2].data)) == 0  # the input zero point folded
    for x in _inputs(shape, 2):
        want = _exec(mod, x)
        for a in (host, dev, wasm):
            np.testing.assert_array_equal(np.array(runtime.Executor(a.module)(x)), want)
    # the generated C gives the kernel the layout (TN_CRT_DENSE_N16K4, _N4K4)
    src = "".join(v for k, v in host.files.items() if k.endswith(".c"))
    assert ".packed = 1" in src
    dsrc = "".join(v for k, v in dev.files.items() if k.endswith(".c"))
    assert ".packed = 2" in dsrc and "tn_crt_call_dense_s8" in dsrc
    wsrc = "".join(v for k, v in wasm.files.items() if k.endswith(".c"))
    assert ".packed = " not in wsrc and "tn_crt_call_dense_s8" in wsrc
