"""PackDenseWeights on convolutions: the fused int8 1x1 convolution of one
group, stride 1, unpadded, NHWC (qnn.requantize of nn.bias_add of
qnn.conv2d) with constant weights and bias is a dense layer over its
pixels, and gets its [out, in] matrix packed as tn_crt_dense_s8_pack lays
it out (weight_layout "N16K4", the weight's shape and kernel_layout kept),
its input zero point set to -128 and the difference folded into the bias;
a larger window of one group, NHWC, gets its [out, k_h * k_w * in] matrix
packed the same way, its input zero point kept (the padding's value); the
outputs stay the same integers through the executor, through the
compiled C of every target, and what the pass must not take it leaves
alone."""
import contextlib
from typing import Any, Iterator, List, Tuple

import numpy as np
import pytest

from tvmnode import codegen, ir, runtime, transform
from tvmnode.ir import op

from test_fold_input_offset import INT8_MODELS, _c, _inputs, _layer, bundled_model  # noqa: E402
from test_pack_dense_weights import (_bias_of, _exec, _pack, pack_reference,  # noqa: E402
                                     packed_layer)


def _conv_calls(mod: ir.IRModule) -> List[Any]:
    found: List[Any] = []

    def visit(e: Any) -> None:
        if isinstance(e, ir.Call) and isinstance(e.op, ir.Op) and \
                str(e.op.name) == "qnn.conv2d":
            found.append(e)
    ir.post_order_visit(mod["main"], visit)
    return found


def _matrix(w: np.ndarray, layout: str) -> np.ndarray:
    """The [out, in] matrix of the 1x1 weight w in kernel layout `layout`."""
    return np.ascontiguousarray(
        w.transpose([layout.index(c) for c in "OIHW"])[:, :, 0, 0])


@pytest.mark.parametrize("zx", [-128, 5, 127])
@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("layout", ["HWIO", "OHWI", "OIHW"])
@pytest.mark.parametrize("cin,cout", [(8, 6), (64, 16), (37, 70), (64, 96), (3, 1)])
def test_a_1x1_convolution_is_packed_and_gives_the_same_outputs(
        cin: int, cout: int, layout: str, per_channel: bool, zx: int) -> None:
    mod, shape, b = _layer("conv", cin=cin, cout=cout, zx=zx, layout=layout,
                           per_channel=per_channel, seed=cin * cout + zx + 128)
    out, before, after, w = packed_layer(mod, _conv_calls)
    assert str(before.attrs.weight_layout) == ""
    assert str(after.attrs.kernel_layout) == layout
    packed = np.array(after.args[1].data)
    assert packed.shape == w.shape
    m = _matrix(w, layout)
    np.testing.assert_array_equal(packed.reshape(cout, cin), pack_reference(m))
    assert int(np.asarray(after.args[2].data)) == -128
    assert b is not None
    want = (b.astype(np.int64) + (-zx - 128) * m.astype(np.int64).sum(1) + 2**31) \
        % 2**32 - 2**31
    np.testing.assert_array_equal(_bias_of(out), want.astype("int32"))
    for x in _inputs(shape):
        np.testing.assert_array_equal(_exec(out, x), _exec(mod, x))


def _window_matrix(w: np.ndarray, layout: str) -> np.ndarray:
    """The [out, k_h * k_w * in] matrix of the weight w in kernel layout
    `layout`: a row the window's rows, columns, then input channels."""
    ohwi = w.transpose([layout.index(c) for c in "OHWI"])
    return np.ascontiguousarray(ohwi.reshape(ohwi.shape[0], -1))


@pytest.mark.parametrize("k,cin,cout", [(3, 4, 40), (2, 8, 48), (3, 1824, 16)])
def test_a_window_where_packing_does_not_pay_is_left_alone(k: int, cin: int, cout: int) -> None:
    """Fewer than 16 input channels (KWS's 10x4 first layer has one), or a
    window too large for the kernel's stack buffer (TN_CRT_CONV_PACKED_STACK,
    16,384 B: 3x3x1824 needs 16,416): unpacked."""
    mod, _, _ = _layer("conv", k=k, cin=cin, cout=cout, padding=[1, 1, 1, 1])
    assert _packed_count(_pack(mod)) == (0, 1)


@pytest.mark.parametrize("zx", [-128, 5, 127])
@pytest.mark.parametrize("layout", ["HWIO", "OHWI", "OIHW"])
@pytest.mark.parametrize("k,cin,cout,padding", [
    (3, 16, 32, [1, 1, 1, 1]), (3, 32, 16, [0, 0, 0, 0]), (3, 20, 40, [1, 1, 1, 1]),
    (2, 24, 48, [1, 0, 0, 1]), (3, 64, 24, [1, 1, 1, 1]), (3, 120, 24, [1, 1, 1, 1])])
def test_a_larger_window_is_packed_and_gives_the_same_outputs(
        k: int, cin: int, cout: int, padding: List[int], layout: str, zx: int) -> None:
    # its input zero point is kept (the padding's value) and (io - 128) *
    # sum(w) goes into the bias; at AVX-512 VNNI its blocks of 16 channels
    # are read where they lie, the rest (and every other CPU) unpacked (a
    # 3x3x120 window: 15 channels a chunk, 16 windows being 17,280 bytes)
    mod, shape, b = _layer("conv", k=k, cin=cin, cout=cout, zx=zx, layout=layout,
                           padding=padding, per_channel=zx == 5, seed=k * cin + cout)
    out, before, after, w = packed_layer(mod, _conv_calls)
    assert str(before.attrs.weight_layout) == ""
    assert str(after.attrs.weight_layout) == "N16K4"
    assert str(after.attrs.kernel_layout) == layout
    packed = np.array(after.args[1].data)
    assert packed.shape == w.shape
    m = _window_matrix(w, layout)
    np.testing.assert_array_equal(packed.reshape(m.shape), pack_reference(m))
    assert int(np.asarray(after.args[2].data)) == zx
    assert b is not None
    want = (b.astype(np.int64) + (-zx - 128) * m.astype(np.int64).sum(1) + 2**31) \
        % 2**32 - 2**31
    np.testing.assert_array_equal(_bias_of(out), want.astype("int32"))
    with _windows_packed():
        host = codegen.compile(mod, name="m")
    assert _packed_count(host.module) == (1, 1)
    for x in _inputs(shape):
        want_x = _exec(mod, x)
        np.testing.assert_array_equal(_exec(out, x), want_x)
        np.testing.assert_array_equal(np.array(runtime.Executor(host.module)(x)), want_x)


@pytest.mark.parametrize("case", ["3x3", "padded", "grouped", "strided", "NCHW",
                                  "parameter weights", "no bias", "packed already"])
def test_what_must_stay_is_left_alone(case: str) -> None:
    if case == "packed already":
        mod = _pack(_layer("conv")[0])
    elif case == "NCHW" or case == "strided":
        x = ir.var("x", shape=(1, 8, 5, 6) if case == "NCHW" else (1, 5, 6, 8), dtype="int8")
        y = op.qnn.conv2d(x, ir.const(np.ones((6, 8, 1, 1), "int8")), _c(3, "int32"),
                          _c(0, "int32"), _c(0.05), _c(0.01), channels=6, kernel_size=[1, 1],
                          strides=[1, 1] if case == "NCHW" else [2, 2],
                          data_layout="NCHW" if case == "NCHW" else "NHWC",
                          kernel_layout="OIHW", out_dtype="int32")
        ax = 1 if case == "NCHW" else 3
        y = op.nn.bias_add(y, ir.const(np.arange(6, dtype="int32")), axis=ax)
        y = op.qnn.requantize(y, _c(0.0005), _c(0, "int32"), _c(0.4), _c(3, "int32"),
                              axis=ax)
        mod = ir.IRModule.from_expr(ir.Function([x], y))
    else:
        # "3x3": 6 output channels (fewer than a block of 16)
        kw: Any = {"k": 3} if case == "3x3" else \
            {"padding": [1, 1, 1, 1], "k": 1} if case == "padded" else \
            {"groups": 2} if case == "grouped" else \
            {"const_weight": False} if case == "parameter weights" else {"bias": None}
        mod = _layer("conv", **kw)[0]
    before = transform.InferType()(mod)
    out = _pack(mod)
    assert out["main"].same_as(before["main"])


def test_fold_input_offset_leaves_a_packed_convolution_alone() -> None:
    mod, shape, _ = _layer("conv", cin=37, cout=70, zx=5, per_channel=True, seed=11)
    packed = _pack(mod)
    both = transform.Sequential([transform.FoldInputOffset(), transform.InferType()])(packed)
    [after] = _conv_calls(both)
    assert str(after.attrs.weight_layout) == "N16K4"
    np.testing.assert_array_equal(_bias_of(both), _bias_of(packed))
    for x in _inputs(shape):
        np.testing.assert_array_equal(_exec(both, x), _exec(mod, x))



@pytest.mark.parametrize("to", ["OHWI", "OIHW"])
def test_convert_kernel_layout_leaves_a_packed_convolution_alone(to: str) -> None:
    # its bytes are the [out, in] matrix's N16K4 order, not kernel_layout's:
    # transposed as if they were, every output would be wrong
    mod, shape, _ = _layer("conv", cin=40, cout=20, layout="HWIO", zx=5, seed=3)
    packed = _pack(mod)
    with transform.PassContext(config={"ConvertKernelLayout.layout": to}):
        conv = transform.Sequential([transform.ConvertKernelLayout(),
                                     transform.InferType()])(packed)
    [before], [after] = _conv_calls(packed), _conv_calls(conv)
    assert str(after.attrs.kernel_layout) == "HWIO"
    np.testing.assert_array_equal(np.array(after.args[1].data), np.array(before.args[1].data))
    for x in _inputs(shape):
        np.testing.assert_array_equal(_exec(conv, x), _exec(mod, x))


def test_a_packed_module_compiled_for_cortex_m_keeps_its_outputs() -> None:
    # codegen's cortex-m pipeline converts kernel layouts to OHWI
    mod, shape, _ = _layer("conv", cin=40, cout=20, layout="HWIO", zx=5, seed=3)
    dev = codegen.compile(_pack(mod), name="m", target="cortex-m")
    for x in _inputs(shape):
        np.testing.assert_array_equal(np.array(runtime.Executor(dev.module)(x)), _exec(mod, x))

def _conv(weight_layout: str, k: int = 1, strides: Tuple[int, int] = (1, 1),
          groups: int = 1) -> Any:
    x = ir.var("x", shape=(1, 4, 4, 8), dtype="int8")
    return x, op.qnn.conv2d(x, ir.const(np.ones((6, 8 // groups, k, k), "int8")),
                            _c(3, "int32"), _c(0, "int32"), _c(0.05), _c(0.01), channels=6,
                            kernel_size=[k, k], strides=list(strides), groups=groups,
                            data_layout="NHWC", kernel_layout="OIHW", out_dtype="int32",
                            weight_layout=weight_layout)


def test_a_packed_weight_outside_the_fused_layer_is_refused() -> None:
    x, y = _conv("N16K4")
    mod = ir.IRModule.from_expr(ir.Function([x], y))
    with pytest.raises(NotImplementedError, match="weight_layout 'N16K4'"):
        _exec(mod, np.zeros((1, 4, 4, 8), "int8"))


def test_a_packed_weight_of_a_strided_layer_is_refused() -> None:
    x, y = _conv("N16K4", strides=(2, 2))
    y = op.nn.bias_add(y, ir.const(np.arange(6, dtype="int32")), axis=3)
    y = op.qnn.requantize(y, _c(0.0005), _c(0, "int32"), _c(0.4), _c(3, "int32"), axis=3)
    mod = ir.IRModule.from_expr(ir.Function([x], y))
    with pytest.raises(NotImplementedError, match="if 1x1 of stride 1, unpadded"):
        _exec(mod, np.zeros((1, 4, 4, 8), "int8"))


@pytest.mark.parametrize("case,match", [
    ("KN", "weight_layout must be '' or 'N16K4', got 'KN'"),
    ("grouped", "weight_layout 'N16K4' is a layer's of one group, got a 1x1 kernel in 2"),
    ("grouped 3x3", "weight_layout 'N16K4' is a layer's of one group, got a 3x3 kernel in 2")])
def test_a_weight_layout_it_cannot_take_is_a_type_error(case: str, match: str) -> None:
    with pytest.raises(TypeError, match=match):
        _conv("KN" if case == "KN" else "N16K4", k=3 if "3x3" in case else 1,
              groups=2 if "grouped" in case else 1)


@contextlib.contextmanager
def _no_target(name: str, targets: Tuple[str, ...] = ()) -> Iterator[None]:
    """codegen's target tuple `name` empty (or `targets`) for the duration."""
    saved = getattr(codegen, name)
    setattr(codegen, name, targets)
    try:
        yield
    finally:
        setattr(codegen, name, saved)


def _windows_packed() -> Any:
    """codegen.PACK_WINDOW_WEIGHTS holding "host" (the default) for the duration."""
    return _no_target("PACK_WINDOW_WEIGHTS", ("host",))


def _packed_count(mod: ir.IRModule) -> Tuple[int, int]:
    calls = _conv_calls(mod)
    return sum(str(c.attrs.weight_layout) == "N16K4" for c in calls), len(calls)


@pytest.mark.parametrize("fname", INT8_MODELS)
def test_every_bundled_int8_model_keeps_its_outputs_on_every_target(fname: str) -> None:
    """The pass through the executor, and the archives of host (packed),
    cortex-m and wasm32 (not packed): the same bytes out."""
    mod = bundled_model(fname)
    out = _pack(mod)
    packed, total = _packed_count(out)
    shape = tuple(int(d) for d in mod["main"].params[0].checked_type.shape)
    with _windows_packed():
        host = codegen.compile(mod, name="m")
    dev = codegen.compile(mod, name="m", target="cortex-m")
    wasm = codegen.compile(mod, name="m", target="wasm32")
    assert _packed_count(host.module)[0] == packed
    assert _packed_count(dev.module)[0] == 0 and _packed_count(wasm.module)[0] == 0
    for x in _inputs(shape, 2):
        want = _exec(mod, x)
        np.testing.assert_array_equal(_exec(out, x), want)
        for a in (host, dev, wasm):
            np.testing.assert_array_equal(np.array(runtime.Executor(a.module)(x)), want)
    if fname.startswith("kws") or fname.startswith("str_ww"):
        assert packed > 0  # their pointwise layers


def test_the_generated_c_gives_the_kernel_the_packed_flag() -> None:
    mod, shape, _ = _layer("conv", cin=40, cout=20)
    host = codegen.compile(mod, name="m")
    dev = codegen.compile(mod, name="m", target="cortex-m")
    src = "".join(v for k, v in host.files.items() if k.endswith(".c"))
    assert "tn_crt_call_conv2d_s8" in src and ".packed = 1" in src
    dsrc = "".join(v for k, v in dev.files.items() if k.endswith(".c"))
    assert ".packed = 1" not in dsrc and "tn_crt_call_conv2d_s8" in dsrc


def test_the_option_conv_0_packs_the_dense_layers_alone() -> None:
    """PackDenseWeights.conv = 0: for a runtime whose kernels read packed
    dense weights but not packed convolutions."""
    mod, shape, _ = _layer("conv", cin=40, cout=20)
    with transform.PassContext(config={"PackDenseWeights.conv": 0}):
        out = _pack(mod)
    assert _packed_count(out) == (0, 1)
    assert _packed_count(_pack(mod)) == (1, 1)
    with _no_target("PACK_CONV_WEIGHTS"):
        host = codegen.compile(mod, name="m")
    assert _packed_count(host.module) == (0, 1)
    for x in _inputs(shape, 2):
        np.testing.assert_array_equal(np.array(runtime.Executor(host.module)(x)), _exec(mod, x))


def test_the_option_conv_1_packs_the_1x1_layers_alone() -> None:
    """PackDenseWeights.conv = 1 (codegen.PACK_WINDOW_WEIGHTS without the
    target): for a runtime whose kernels read a packed 1x1 layer but not a
    packed larger window; the same outputs either way."""
    mod, shape, _ = _layer("conv", k=3, cin=16, cout=32, padding=[1, 1, 1, 1], zx=7)
    with transform.PassContext(config={"PackDenseWeights.conv": 1}):
        assert _packed_count(_pack(mod)) == (0, 1)
    assert _packed_count(_pack(mod)) == (1, 1)
    with _no_target("PACK_WINDOW_WEIGHTS"):  # 1x1 layers alone
        host1 = codegen.compile(mod, name="m")
    with _windows_packed():
        host = codegen.compile(mod, name="m")
    assert _packed_count(host1.module) == (0, 1) and _packed_count(host.module) == (1, 1)
    for x in _inputs(shape, 2):
        want = _exec(mod, x)
        for a in (host1, host):
            np.testing.assert_array_equal(np.array(runtime.Executor(a.module)(x)), want)
