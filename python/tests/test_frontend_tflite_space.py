"""TFLite's SPACE_TO_BATCH_ND, BATCH_TO_SPACE_ND, GATHER_ND,
EMBEDDING_LOOKUP (with TFLite Micro's hybrid int8 -> float32 form),
L2_POOL_2D and uint8 RESIZE_BILINEAR, one operator per model in each type
TFLite Micro runs them in, against TFLite Micro on the same bytes (LiteRT's
reference kernels for uint8 RESIZE_BILINEAR, which TFLite Micro lacks):
integers identical, float32 within 1e-5 of the output's range, through
the executor unfused and after FuseOps. Also bad inputs are named
errors."""
from typing import Any, Sequence

import numpy as np
import pytest

pytest.importorskip("tflite")
pytest.importorskip("tflite_micro")

from tvmnode import codegen, frontend  # noqa: E402
from aot_util import HostModel  # noqa: E402
from tflite_build import (Node, TensorSpec, builtin_options, chain_model,  # noqa: E402
                          run_tflite_micro, single_op_model)
from test_frontend_tflite_movement import check_all, data, spec  # noqa: E402
from test_frontend_tflite_ops import const, fl  # noqa: E402

RNG = np.random.default_rng(91)


def ints(a: Sequence) -> TensorSpec:
    return const(np.array(a, np.int32))


@pytest.mark.parametrize("dtype", ["float32", "int8"])
@pytest.mark.parametrize("op,shape,block,edges", [
    ("SPACE_TO_BATCH_ND", (1, 4, 4, 3), [2, 2], [[0, 0], [0, 0]]),
    ("SPACE_TO_BATCH_ND", (2, 5, 3, 2), [2, 3], [[1, 0], [2, 1]]),
    ("SPACE_TO_BATCH_ND", (1, 5, 2), [3], [[2, 2]]),
    ("BATCH_TO_SPACE_ND", (4, 2, 2, 3), [2, 2], [[0, 0], [0, 0]]),
    ("BATCH_TO_SPACE_ND", (12, 3, 2, 2), [2, 3], [[1, 0], [2, 1]]),
    ("BATCH_TO_SPACE_ND", (6, 2, 2), [3], [[1, 2]]),
])
def test_space_batch(op: str, dtype: str, shape: Sequence[int], block: Sequence[int],
                     edges: Sequence[Sequence[int]]) -> None:
    m, nb = len(block), int(np.prod(block))
    if op == "SPACE_TO_BATCH_ND":
        out = [shape[0] * nb] + [(shape[1 + d] + sum(edges[d])) // block[d] for d in range(m)]
    else:
        out = [shape[0] // nb] + [shape[1 + d] * block[d] - sum(edges[d]) for d in range(m)]
    out += list(shape[1 + m:])
    model = single_op_model(op, [spec(shape, dtype), ints(block), ints(edges)],
                            [spec(out, dtype)])
    # TFLite Micro's SPACE_TO_BATCH_ND never sets its pad value (the
    # output_offset of a buffer its Init allocates and leaves as it finds
    # it), so the wheel pads with whatever that memory holds; padded cases
    # are compared with LiteRT's reference kernel, which pads with 0 (float)
    # or the zero point (int8)
    padded = op == "SPACE_TO_BATCH_ND" and np.any(edges)
    check_all(model, data(shape, dtype), reference="litert" if padded else "tflite-micro")


@pytest.mark.parametrize("dtype", ["float32", "int8"])
@pytest.mark.parametrize("shape,ishape", [((4, 3, 5), (2, 2)), ((4, 3, 5), (2, 3, 1)),
                                          ((6, 4), (5, 2))])
def test_gather_nd(dtype: str, shape: Sequence[int], ishape: Sequence[int]) -> None:
    k = ishape[-1]
    idx = np.stack([RNG.integers(0, shape[d], ishape[:-1]) for d in range(k)],
                   axis=-1).astype(np.int32)
    out = list(ishape[:-1]) + list(shape[k:])
    # indices as a graph input (computed at run time) and as a constant
    model = single_op_model("GATHER_ND", [spec(shape, dtype), TensorSpec(ishape, "int32")],
                            [spec(out, dtype)])
    check_all(model, data(shape, dtype), idx)
    model = single_op_model("GATHER_ND", [spec(shape, dtype), const(idx)], [spec(out, dtype)])
    check_all(model, data(shape, dtype))


def embedding(ids: np.ndarray, table: TensorSpec, out_dtype: str, quant=None) -> bytes:
    out = TensorSpec([ids.size] + list(table.shape[1:]), out_dtype, quant=quant)
    return single_op_model("EMBEDDING_LOOKUP", [TensorSpec(ids.shape, "int32"), table], [out])


@pytest.mark.parametrize("form", ["float32", "int8", "hybrid"])
def test_embedding_lookup(form: str) -> None:
    ids = np.array([3, 0, 3, 5, 1], np.int32)
    if form == "float32":
        table = const(fl(6, 2, 3))
        model = embedding(ids, table, "float32")
    elif form == "int8":
        table = const(RNG.integers(-128, 128, (6, 4), dtype=np.int8), quant=(0.1, 4))
        model = embedding(ids, table, "int8", quant=(0.1, 4))
    else:
        # TFLite Micro's hybrid form: int8 rows dequantized by the scale
        table = const(RNG.integers(-128, 128, (6, 3, 2), dtype=np.int8), quant=(0.037, 0))
        model = embedding(ids, table, "float32")
    check_all(model, ids)


@pytest.mark.parametrize("padding,k,stride,act", [(1, 2, 2, 0), (0, 3, 2, 1), (0, 2, 1, 3)])
def test_l2_pool(padding: int, k: int, stride: int, act: int) -> None:
    shape = (1, 5, 6, 3)
    o = builtin_options("Pool2DOptions", padding=padding, strideW=stride, strideH=stride,
                        filterWidth=k, filterHeight=k, fusedActivationFunction=act)
    if padding == 1:
        out = [1, (5 - k) // stride + 1, (6 - k) // stride + 1, 3]
    else:
        out = [1, -(-5 // stride), -(-6 // stride), 3]
    model = single_op_model("L2_POOL_2D", [TensorSpec(shape, "float32")],
                            [TensorSpec(out, "float32")], o)
    check_all(model, (fl(*shape) * 3).astype(np.float32))


def _import_error(model: bytes) -> str:
    with pytest.raises(frontend.ModelImportError) as e:
        frontend.from_tflite(model)
    return str(e.value)


def test_bad_inputs_are_named() -> None:
    # a block that does not divide the padded extent
    m = single_op_model("SPACE_TO_BATCH_ND", [TensorSpec((1, 5, 4, 1), "float32"), ints([2, 2]),
                                              ints([[0, 0], [0, 0]])],
                        [TensorSpec((4, 2, 2, 1), "float32")])
    msg = _import_error(m)
    assert "SPACE_TO_BATCH_ND" in msg and "block size 2" in msg
    # float16 values of GATHER_ND
    m = single_op_model("GATHER_ND", [TensorSpec((4, 3), "int16", quant=(0.1, 0)),
                                      ints([[1], [2]])], [TensorSpec((2, 3), "int16",
                                                                     quant=(0.1, 0))])
    msg = _import_error(m)
    assert "GATHER_ND" in msg and "int16" in msg and "float32 or int8" in msg
    # constant indices out of range
    m = single_op_model("GATHER_ND", [TensorSpec((4, 3), "float32"), ints([[4, 0]])],
                        [TensorSpec((1,), "float32")])
    assert "out of range" in _import_error(m)
    # a hybrid table with a zero point
    m = embedding(np.zeros(2, np.int32),
                  const(np.zeros((3, 2), np.int8), quant=(0.5, 3)), "float32")
    assert "zero point 0" in _import_error(m)
    # L2_POOL_2D in int8
    o = builtin_options("Pool2DOptions", padding=1, strideW=1, strideH=1, filterWidth=2,
                        filterHeight=2)
    m = single_op_model("L2_POOL_2D", [TensorSpec((1, 2, 2, 1), "int8", quant=(0.1, 0))],
                        [TensorSpec((1, 1, 1, 1), "int8", quant=(0.1, 0))], o)
    msg = _import_error(m)
    assert "L2_POOL_2D" in msg and "float32" in msg


@pytest.mark.parametrize("size,align,half", [((7, 5), False, False), ((8, 6), False, True),
                                             ((5, 7), True, False), ((3, 2), False, True)])
def test_resize_bilinear_uint8(size: Sequence[int], align: bool, half: bool) -> None:
    # TFLite Micro has no uint8 RESIZE_BILINEAR: LiteRT's reference kernel
    shape = (1, 4, 3, 3)
    o = builtin_options("ResizeBilinearOptions", alignCorners=align, halfPixelCenters=half)
    q = (0.07, 131)
    model = single_op_model("RESIZE_BILINEAR",
                            [TensorSpec(shape, "uint8", quant=q), ints(list(size))],
                            [TensorSpec((1, size[0], size[1], 3), "uint8", quant=q)], o)
    x = RNG.integers(0, 256, shape, dtype=np.uint8)
    check_all(model, x, reference="litert")


def test_compiled_c_runs_them(tmp_path: Any) -> None:
    """The generated C of the compositions (one model, to compile once)
    computes TFLite Micro's results."""
    x, a, b, c = (spec(sh, "float32") for sh in ((4, 2, 2, 3), (1, 3, 3, 3), (1, 3, 3, 3),
                                                  (9, 1, 1, 3)))
    params, g = spec((4, 3, 2), "int8"), spec((3, 2), "int8")
    idx, ids = TensorSpec((3, 2), "int32"), TensorSpec((3,), "int32")
    table = const(RNG.integers(-128, 128, (4, 5), dtype=np.int8), quant=(0.02, 0))
    e = TensorSpec((3, 5), "float32")
    pool = builtin_options("Pool2DOptions", padding=0, strideW=1, strideH=1, filterWidth=2,
                           filterHeight=2, fusedActivationFunction=0)
    model = chain_model([
        Node("BATCH_TO_SPACE_ND", [x, ints([2, 2]), ints([[1, 0], [0, 1]])], [a]),
        Node("L2_POOL_2D", [a], [b], pool),
        Node("SPACE_TO_BATCH_ND", [b, ints([3, 3]), ints([[0, 0], [0, 0]])], [c]),
        Node("GATHER_ND", [params, idx], [g]),
        Node("EMBEDDING_LOOKUP", [ids, table], [e]),
    ], [c, g, e])
    xs = [data((4, 2, 2, 3), "float32"), data((4, 3, 2), "int8"),
          np.array([[2, 1], [0, 2], [3, 0]], np.int32), np.array([1, 3, 0], np.int32)]
    want = run_tflite_micro(model, *xs, outputs=3)
    hm = HostModel(codegen.compile(frontend.from_tflite(model), name="space"), str(tmp_path))
    got = hm.run(*xs)
    for k, (gk, w) in enumerate(zip(got, want)):
        assert gk.dtype == w.dtype and gk.shape == w.shape, k
        if w.dtype == np.float32:
            np.testing.assert_allclose(gk, w, rtol=0, atol=1e-5 * float(np.abs(w).max()))
        else:
            np.testing.assert_array_equal(gk, w)


def test_uint8_requantize_and_arg_max() -> None:
    """The rest of the uint8 deeplab's operators: QUANTIZE uint8 -> uint8
    (a requantize) and ARG_MAX of uint8 values, against LiteRT's
    reference kernels."""
    shape = (1, 3, 4, 6)
    x = RNG.integers(0, 256, shape, dtype=np.uint8)
    model = single_op_model("QUANTIZE", [TensorSpec(shape, "uint8", quant=(0.05, 140))],
                            [TensorSpec(shape, "uint8", quant=(0.031, 97))])
    check_all(model, x, reference="litert")
    model = single_op_model("ARG_MAX", [TensorSpec(shape, "uint8", quant=(0.05, 140)), ints([3])],
                            [TensorSpec(shape[:3], "int64")],
                            builtin_options("ArgMaxOptions", outputType=4))
    check_all(model, x, reference="litert")


def test_cast_uint8_image_to_float() -> None:
    """movenet's first operator: CAST of a plain (unquantized) uint8 image
    to float32; TFLite Micro's CAST takes no uint8 input, so against
    LiteRT's reference kernel."""
    shape = (1, 4, 5, 3)
    model = single_op_model("CAST", [TensorSpec(shape, "uint8")], [TensorSpec(shape, "float32")])
    check_all(model, RNG.integers(0, 256, shape, dtype=np.uint8), reference="litert")
