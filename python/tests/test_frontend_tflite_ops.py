"""Every TFLite operator the importer maps, one operator per model (built
with tflite_build), against TFLite Micro run on the same bytes: int8
outputs identical on every element, float32 within 1e-5 of the output's
range; each through the executor unfused and after FuseOps."""
from typing import Any, List, Sequence

import numpy as np
import pytest

pytest.importorskip("tflite")
pytest.importorskip("tflite_micro")

import tvmnode as tn  # noqa: E402
from tvmnode import frontend, transform  # noqa: E402
from tflite_build import (TensorSpec, builtin_options, run_tflite_micro,  # noqa: E402
                          single_op_model, tflite)

RNG = np.random.default_rng(2024)


def q8(shape: Sequence[int], scale: float = 0.05, zp: int = -3, name: str = "") -> TensorSpec:
    return TensorSpec(shape, "int8", quant=(scale, zp), name=name)


def f32(shape: Sequence[int]) -> TensorSpec:
    return TensorSpec(shape, "float32")


def const(a: np.ndarray, quant: Any = None, qdim: int = 0) -> TensorSpec:
    return TensorSpec(a.shape, str(a.dtype), quant=quant, data=a, quantized_dimension=qdim)


def i8(*shape: int) -> np.ndarray:
    return RNG.integers(-128, 128, shape, dtype=np.int8)


def fl(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def run_litert_ref(model: bytes, *xs: np.ndarray) -> np.ndarray:
    """LiteRT with its reference kernels, for operators TFLite Micro lacks."""
    litert = pytest.importorskip("ai_edge_litert.interpreter")
    it = litert.Interpreter(model_content=model, num_threads=1,
                            experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF)
    it.allocate_tensors()
    for d, x in zip(it.get_input_details(), xs):
        it.set_tensor(d["index"], x)
    it.invoke()
    return np.array(it.get_tensor(it.get_output_details()[0]["index"]))


def check(model: bytes, *xs: np.ndarray, reference: str = "tflite-micro") -> None:
    want = (run_tflite_micro(model, *xs)[0] if reference == "tflite-micro"
            else run_litert_ref(model, *xs))
    mod = frontend.from_tflite(model)
    for how, m in (("unfused", mod), ("fused", transform.FuseOps()(mod))):
        got = np.asarray(tn.runtime.Executor(m)(*xs))
        assert got.shape == want.shape and got.dtype == want.dtype, (how, got.shape, want.shape)
        if want.dtype == np.float32:
            scale = max(float(np.abs(want).max()), 1e-6)
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-5 * scale, err_msg=how)
        else:
            bad = np.flatnonzero(got != want)
            assert bad.size == 0, "%s: %d of %d differ, first %d vs %d" % (
                how, bad.size, got.size, got.flat[bad[0]], want.flat[bad[0]])


def conv_options(table: str, act: int, stride: int, padding: int, **extra: Any) -> Any:
    return builtin_options(table, padding=padding, strideW=stride, strideH=stride,
                           fusedActivationFunction=act, dilationWFactor=1, dilationHFactor=1,
                           **extra)


@pytest.mark.parametrize("act", [0, 1, 3])
@pytest.mark.parametrize("padding,stride", [(0, 1), (0, 2), (1, 2)])
def test_conv2d_int8_per_channel(act: int, padding: int, stride: int) -> None:
    cin, cout = 3, 5
    sw = RNG.uniform(0.002, 0.02, cout).astype(np.float32)
    w = const(i8(cout, 3, 3, cin), quant=(list(sw), [0] * cout))
    b = const(RNG.integers(-2000, 2000, cout).astype(np.int32),
              quant=(list(np.float32(0.05) * sw), [0] * cout))
    model = single_op_model("CONV_2D", [q8((1, 9, 8, cin), 0.05, 4), w, b],
                            [q8((1, 9 if stride == 1 else (5 if padding == 0 else 4),
                                 8 if stride == 1 else (4 if padding == 0 else 3), cout), 0.1, -7)],
                            conv_options("Conv2DOptions", act, stride, padding))
    check(model, i8(1, 9, 8, cin))


@pytest.mark.parametrize("mult", [1, 2])
def test_depthwise_int8(mult: int) -> None:
    cin = 4
    cout = cin * mult
    sw = RNG.uniform(0.002, 0.02, cout).astype(np.float32)
    w = const(i8(1, 3, 3, cout), quant=(list(sw), [0] * cout), qdim=3)
    b = const(RNG.integers(-500, 500, cout).astype(np.int32),
              quant=(list(np.float32(0.04) * sw), [0] * cout))
    model = single_op_model("DEPTHWISE_CONV_2D", [q8((1, 6, 7, cin), 0.04, 10), w, b],
                            [q8((1, 6, 7, cout), 0.08, -1)],
                            conv_options("DepthwiseConv2DOptions", 1, 1, 0, depthMultiplier=mult))
    check(model, i8(1, 6, 7, cin))


def test_conv2d_float() -> None:
    w, b = const(fl(4, 3, 3, 2)), const(fl(4))
    model = single_op_model("CONV_2D", [f32((1, 7, 7, 2)), w, b], [f32((1, 4, 4, 4))],
                            conv_options("Conv2DOptions", 1, 2, 0))
    check(model, fl(1, 7, 7, 2))
    model = single_op_model("DEPTHWISE_CONV_2D", [f32((1, 5, 5, 3)), const(fl(1, 3, 3, 3)),
                                                  const(fl(3))], [f32((1, 5, 5, 3))],
                            conv_options("DepthwiseConv2DOptions", 3, 1, 0, depthMultiplier=1))
    check(model, fl(1, 5, 5, 3))


def test_fully_connected() -> None:
    w = const(i8(6, 8), quant=(0.01, 0))
    b = const(RNG.integers(-300, 300, 6).astype(np.int32), quant=(0.03 * 0.01, 0))
    model = single_op_model("FULLY_CONNECTED", [q8((2, 3, 8), 0.03, 2), w, b],
                            [q8((6, 6), 0.05, 3)],
                            builtin_options("FullyConnectedOptions", fusedActivationFunction=1))
    check(model, i8(2, 3, 8))
    model = single_op_model("FULLY_CONNECTED", [f32((3, 8)), const(fl(5, 8)), None],
                            [f32((3, 5))],
                            builtin_options("FullyConnectedOptions", fusedActivationFunction=0))
    check(model, fl(3, 8))


@pytest.mark.parametrize("kind", ["AVERAGE_POOL_2D", "MAX_POOL_2D"])
@pytest.mark.parametrize("dtype", ["int8", "float32"])
def test_pools(kind: str, dtype: str) -> None:
    spec = q8 if dtype == "int8" else (lambda s: f32(s))
    opts = builtin_options("Pool2DOptions", padding=0, strideW=2, strideH=2, filterWidth=3,
                           filterHeight=3, fusedActivationFunction=0)
    model = single_op_model(kind, [spec((1, 7, 6, 3))], [spec((1, 4, 3, 3))], opts)
    check(model, i8(1, 7, 6, 3) if dtype == "int8" else fl(1, 7, 6, 3))


@pytest.mark.parametrize("kind,table", [("ADD", "AddOptions"), ("MUL", "MulOptions")])
def test_add_mul(kind: str, table: str) -> None:
    opts = builtin_options(table, fusedActivationFunction=1)
    model = single_op_model(kind, [q8((1, 4, 4, 3), 0.05, -3), q8((1, 4, 4, 3), 0.02, 7)],
                            [q8((1, 4, 4, 3), 0.07, 1)], opts)
    check(model, i8(1, 4, 4, 3), i8(1, 4, 4, 3))
    model = single_op_model(kind, [f32((2, 3)), f32((2, 3))], [f32((2, 3))], opts)
    check(model, fl(2, 3), fl(2, 3))


def test_reshape_squeeze_transpose() -> None:
    shape = const(np.array([4, 6], np.int32))
    model = single_op_model("RESHAPE", [q8((1, 4, 6)), shape], [q8((4, 6))])
    check(model, i8(1, 4, 6))

    def squeeze_options(b: Any) -> int:
        dims = b.CreateNumpyVector(np.array([0, 2], np.int32))
        tflite.SqueezeOptionsStart(b)
        tflite.SqueezeOptionsAddSqueezeDims(b, dims)
        return int(tflite.SqueezeOptionsEnd(b))
    model = single_op_model("SQUEEZE", [q8((1, 5, 1, 2))], [q8((5, 2))],
                            (int(tflite.BuiltinOptions.SqueezeOptions), squeeze_options))
    check(model, i8(1, 5, 1, 2))
    perm = const(np.array([0, 3, 1, 2], np.int32))
    model = single_op_model("TRANSPOSE", [f32((1, 2, 3, 4)), perm], [f32((1, 4, 2, 3))])
    check(model, fl(1, 2, 3, 4))


@pytest.mark.parametrize("beta", [1.0, 0.5])
def test_softmax(beta: float) -> None:
    opts = builtin_options("SoftmaxOptions", beta=beta)
    model = single_op_model("SOFTMAX", [q8((2, 10), 0.1, 3)], [q8((2, 10), 1 / 256, -128)], opts)
    check(model, i8(2, 10))
    model = single_op_model("SOFTMAX", [f32((2, 10))], [f32((2, 10))], opts)
    check(model, fl(2, 10))


def test_quantize_dequantize() -> None:
    model = single_op_model("QUANTIZE", [f32((3, 7))], [q8((3, 7), 0.02, 5)])
    check(model, fl(3, 7))
    model = single_op_model("QUANTIZE", [q8((3, 7), 0.05, -2)], [q8((3, 7), 0.03, 9)])
    check(model, i8(3, 7))
    model = single_op_model("DEQUANTIZE", [q8((3, 7), 0.05, -2)], [f32((3, 7))])
    check(model, i8(3, 7))


@pytest.mark.parametrize("kind", ["RELU", "RELU6", "RELU_N1_TO_1"])
def test_relus(kind: str) -> None:
    # TFLite Micro has no RELU_N1_TO_1: LiteRT's reference kernel then
    ref = "litert" if kind == "RELU_N1_TO_1" else "tflite-micro"
    model = single_op_model(kind, [q8((4, 9), 0.05, -3)], [q8((4, 9), 0.05, -3)])
    check(model, i8(4, 9), reference=ref)
    model = single_op_model(kind, [q8((4, 9), 0.05, -3)], [q8((4, 9), 0.03, -128)])
    check(model, i8(4, 9), reference=ref)
    model = single_op_model(kind, [f32((4, 9))], [f32((4, 9))])
    check(model, 4 * fl(4, 9), reference=ref)


def test_logistic_tanh() -> None:
    model = single_op_model("LOGISTIC", [q8((3, 8), 0.1, 2)], [q8((3, 8), 1 / 256, -128)])
    check(model, i8(3, 8))
    model = single_op_model("TANH", [q8((3, 8), 0.1, 2)], [q8((3, 8), 1 / 128, 0)])
    check(model, i8(3, 8))
    for kind in ("LOGISTIC", "TANH"):
        check(single_op_model(kind, [f32((3, 8))], [f32((3, 8))]), fl(3, 8))


def test_pad_and_concatenation() -> None:
    pads = const(np.array([[0, 0], [1, 2], [2, 1], [0, 0]], np.int32))
    model = single_op_model("PAD", [q8((1, 3, 3, 2), 0.05, 7), pads], [q8((1, 6, 6, 2), 0.05, 7)])
    check(model, i8(1, 3, 3, 2))
    model = single_op_model("PAD", [f32((1, 3, 3, 2)), pads], [f32((1, 6, 6, 2))])
    check(model, fl(1, 3, 3, 2))
    opts = builtin_options("ConcatenationOptions", axis=3, fusedActivationFunction=0)
    model = single_op_model("CONCATENATION", [q8((1, 2, 2, 3)), q8((1, 2, 2, 5))],
                            [q8((1, 2, 2, 8))], opts)
    check(model, i8(1, 2, 2, 3), i8(1, 2, 2, 5))
    opts = builtin_options("ConcatenationOptions", axis=-1, fusedActivationFunction=0)
    model = single_op_model("CONCATENATION", [f32((2, 3)), f32((2, 1))], [f32((2, 4))], opts)
    check(model, fl(2, 3), fl(2, 1))


@pytest.mark.parametrize("keep", [True, False])
@pytest.mark.parametrize("same_quant", [True, False])
def test_mean(keep: bool, same_quant: bool) -> None:
    axes = const(np.array([1, 2], np.int32))
    out = (1, 1, 1, 6) if keep else (1, 6)
    opts = builtin_options("ReducerOptions", keepDims=keep)
    q_out = q8(out, 0.05, -3) if same_quant else q8(out, 0.02, 6)
    model = single_op_model("MEAN", [q8((1, 5, 4, 6), 0.05, -3), axes], [q_out], opts)
    check(model, i8(1, 5, 4, 6))
    model = single_op_model("MEAN", [f32((1, 5, 4, 6)), axes], [f32(out)], opts)
    check(model, fl(1, 5, 4, 6))


def test_strided_slice() -> None:
    begin = const(np.array([0, 1, 0, 2], np.int32))
    end = const(np.array([1, 4, 3, 6], np.int32))
    strides = const(np.array([1, 2, 1, 2], np.int32))
    opts = builtin_options("StridedSliceOptions", beginMask=0, endMask=4)
    model = single_op_model("STRIDED_SLICE", [q8((1, 5, 4, 7)), begin, end, strides],
                            [q8((1, 2, 4, 2))], opts)
    check(model, i8(1, 5, 4, 7))
    # shrink axis 0
    opts = builtin_options("StridedSliceOptions", shrinkAxisMask=1)
    model = single_op_model("STRIDED_SLICE", [f32((2, 5)), const(np.array([1, 1], np.int32)),
                                              const(np.array([2, 4], np.int32)),
                                              const(np.array([1, 1], np.int32))], [f32((3,))],
                            opts)
    check(model, fl(2, 5))


# ---- what cannot be mapped is named -----------------------------------------

def _error(model: bytes, unsupported: bool = True) -> str:
    """The import's error message; an unmappable form of a valid model is
    an UnsupportedOperatorError, a broken file a plain ModelImportError."""
    with pytest.raises(frontend.ModelImportError) as e:
        frontend.from_tflite(model)
    assert isinstance(e.value, frontend.UnsupportedOperatorError) == unsupported, e.value
    return str(e.value)


def test_unmappable_options_are_named() -> None:
    # a fused TANH activation has no clip form
    w = const(fl(2, 1, 1, 2))
    model = single_op_model("CONV_2D", [f32((1, 3, 3, 2)), w, None], [f32((1, 3, 3, 2))],
                            conv_options("Conv2DOptions", 4, 1, 0))
    assert "operator 0 CONV_2D (output 't2'): fused activation TANH is not supported" \
        in _error(model)
    # strided slice with an ellipsis
    opts = builtin_options("StridedSliceOptions", ellipsisMask=1)
    model = single_op_model("STRIDED_SLICE", [f32((2, 5)), const(np.array([0, 0], np.int32)),
                                              const(np.array([1, 1], np.int32)), None],
                            [f32((1, 1))], opts)
    assert "ellipsis and new-axis masks are not supported" in _error(model)
    # int16 activations
    model = single_op_model("RELU", [TensorSpec((4,), "int16", quant=(0.1, 0))],
                            [TensorSpec((4,), "int16", quant=(0.1, 0))])
    assert "operator 0 RELU" in _error(model) and "int16" in _error(model)


def test_constant_of_wrong_size_is_named() -> None:
    good = single_op_model("ADD", [f32((2, 3)), const(fl(2, 3))], [f32((2, 3))],
                           builtin_options("AddOptions", fusedActivationFunction=0))
    buf = bytearray(good)
    m = tflite.Model.GetRootAsModel(buf, 0)
    t = m.Subgraphs(0).Tensors(1)
    t.ShapeAsNumpy()[1] = 4  # the buffer holds 2x3 floats; the tensor now says 2x4
    assert "needs 32 bytes, its buffer has 24" in _error(bytes(buf), unsupported=False)


def collect_ops(model: bytes) -> List[str]:
    names: List[str] = []
    mod = frontend.from_tflite(model)

    def visit(e: Any) -> None:
        if isinstance(e, tn.ir.Call) and isinstance(e.op, tn.ir.Op):
            names.append(str(e.op.name))
    tn.ir.post_order_visit(mod["main"].body, visit)
    return names


def test_int8_conv_is_one_fused_kernel() -> None:
    cout = 4
    w = const(i8(cout, 1, 1, 2), quant=(0.01, 0))
    model = single_op_model("CONV_2D", [q8((1, 3, 3, 2)), w, None], [q8((1, 3, 3, cout))],
                            conv_options("Conv2DOptions", 3, 1, 0))
    assert collect_ops(model) == ["qnn.conv2d", "qnn.requantize", "clip"]
    mod = transform.FuseOps()(frontend.from_tflite(model))
    assert tn.runtime.Executor(mod).stats()["steps"] == 1


@pytest.mark.parametrize("beta,scale,n,out_scale", [
    (1.0, 0.1, 10, 1 / 65536), (0.5, 0.25, 37, 1 / 65536), (2.0, 0.02, 3, 1 / 65535),
    (1.0, 0.6, 200, 1 / 65535)])
def test_softmax_int8_to_int16(beta: float, scale: float, n: int, out_scale: float) -> None:
    opts = builtin_options("SoftmaxOptions", beta=beta)
    model = single_op_model("SOFTMAX", [q8((2, n), scale, -9)],
                            [TensorSpec((2, n), "int16", quant=(out_scale, -32768))], opts)
    x = i8(2, n)
    x[1, :] = 127  # a flat row: every output 1 / n
    check(model, x)
