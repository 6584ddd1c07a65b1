"""TFLite's reductions (SUM, REDUCE_MAX, REDUCE_MIN, ARG_MAX, ARG_MIN),
data movement (GATHER, TILE, EXPAND_DIMS, SQUEEZE, SPLIT, SPLIT_V, SLICE,
STRIDED_SLICE, PACK, UNPACK, SPACE_TO_DEPTH, DEPTH_TO_SPACE, MIRROR_PAD,
PAD/PADV2) and SHAPE, one operator per model in every type TFLite Micro
runs them in, against TFLite Micro on the same bytes (LiteRT's reference
kernels for TILE, which TFLite Micro lacks): integers identical, float32
within 1e-5 of the output's range, through the executor unfused and after
FuseOps. Also: shape arithmetic on static shapes is computed at import."""
from typing import Any, List, Optional, Sequence

import numpy as np
import pytest

pytest.importorskip("tflite")
pytest.importorskip("tflite_micro")

import tvmnode as tn  # noqa: E402
from tvmnode import codegen, frontend, transform  # noqa: E402
from tflite_build import (Node, TensorSpec, builtin_options, chain_model,  # noqa: E402
                          run_tflite_micro, single_op_model)
from test_frontend_tflite_ops import (collect_ops, const, f32, fl, i8, q8,  # noqa: E402
                                      run_litert_ref)

RNG = np.random.default_rng(77)
DTYPES = ["float32", "int8", "int16", "int32"]


def spec(shape: Sequence[int], dtype: str, name: str = "") -> TensorSpec:
    """A tensor of `dtype`; int8 and int16 get a per-tensor quantization
    (int16 with zero point 0, as TFLite's int16 kernels require)."""
    if dtype == "int8":
        return q8(shape, 0.05, -3, name)
    if dtype == "int16":
        return TensorSpec(shape, "int16", quant=(0.01, 0), name=name)
    return TensorSpec(shape, dtype, name=name)


def data(shape: Sequence[int], dtype: str) -> np.ndarray:
    if dtype == "float32":
        return fl(*shape)
    if dtype == "int8":
        return i8(*shape)
    info = np.iinfo(dtype)
    return RNG.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)


def ints(*v: int) -> TensorSpec:
    return const(np.array(v, np.int32))


def check_all(model: bytes, *xs: np.ndarray, reference: str = "tflite-micro",
              outputs: int = 1) -> None:
    """Every output of the imported model against the reference's."""
    if reference == "tflite-micro":
        want = run_tflite_micro(model, *xs, outputs=outputs)
    else:
        want = [run_litert_ref(model, *xs)]  # (single-output models only)
    mod = frontend.from_tflite(model)
    for how, m in (("unfused", mod), ("fused", transform.FuseOps()(mod))):
        got = tn.runtime.Executor(m)(*xs)
        got = list(got) if isinstance(got, (list, tuple)) else [got]
        assert len(got) == len(want), how
        for k, (g, w) in enumerate(zip(got, want)):
            g = np.asarray(g)
            assert g.shape == w.shape and g.dtype == w.dtype, (how, k, g.shape, g.dtype,
                                                               w.shape, w.dtype)
            if w.dtype == np.float32:
                scale = max(float(np.abs(w).max()) if w.size else 0.0, 1e-6)
                np.testing.assert_allclose(g, w, rtol=0, atol=1e-5 * scale,
                                           err_msg="%s output %d" % (how, k))
            else:
                bad = np.flatnonzero(g != w)
                assert bad.size == 0, "%s output %d: %d of %d differ, first %d vs %d" % (
                    how, k, bad.size, g.size, g.flat[bad[0]], w.flat[bad[0]])


def one(op: str, inputs: Sequence[Optional[TensorSpec]], outputs: Sequence[TensorSpec],
        options: Any = None) -> bytes:
    return single_op_model(op, inputs, outputs, options)


# ---- reductions --------------------------------------------------------------


def reducer(keep: bool) -> Any:
    return builtin_options("ReducerOptions", keepDims=keep)


@pytest.mark.parametrize("op", ["SUM", "REDUCE_MAX", "REDUCE_MIN"])
@pytest.mark.parametrize("axes,keep", [((1,), False), ((0, 2), True), ((-1,), False),
                                       ((0, 1, 2), False)])
def test_reduce_float(op: str, axes: Sequence[int], keep: bool) -> None:
    shape = (3, 5, 4)
    out = [1 if i in [a % 3 for a in axes] else d for i, d in enumerate(shape)]
    if not keep:
        out = [d for i, d in enumerate(shape) if i not in [a % 3 for a in axes]]
    model = one(op, [f32(shape), ints(*axes)], [f32(out)], reducer(keep))
    check_all(model, fl(*shape))


@pytest.mark.parametrize("axes,keep,oq", [((1,), False, (0.05, -3)), ((0, 2), True, (0.3, 7)),
                                          ((1, 2), False, (1.1, -100)), ((0,), True, (0.01, 2))])
def test_sum_int8_requantizes(axes: Sequence[int], keep: bool, oq: Any) -> None:
    shape = (2, 6, 5)
    out = [1 if i in axes else d for i, d in enumerate(shape)] if keep else \
        [d for i, d in enumerate(shape) if i not in axes]
    model = one("SUM", [q8(shape, 0.05, -3), ints(*axes)], [q8(out, *oq)], reducer(keep))
    check_all(model, i8(*shape))


@pytest.mark.parametrize("op", ["REDUCE_MAX", "REDUCE_MIN"])
@pytest.mark.parametrize("axes,keep", [((1,), True), ((0, 2), False), ((2,), False)])
def test_reduce_max_min_int8(op: str, axes: Sequence[int], keep: bool) -> None:
    shape = (3, 4, 5)
    out = [1 if i in axes else d for i, d in enumerate(shape)] if keep else \
        [d for i, d in enumerate(shape) if i not in axes]
    model = one(op, [q8(shape, 0.05, -3), ints(*axes)], [q8(out, 0.05, -3)], reducer(keep))
    check_all(model, i8(*shape))


@pytest.mark.parametrize("op", ["ARG_MAX", "ARG_MIN"])
@pytest.mark.parametrize("dtype", ["float32", "int8"])
@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("out_type", ["int32", "int64"])
def test_arg_max_min(op: str, dtype: str, axis: int, out_type: str) -> None:
    shape = (4, 3, 6)
    x = data(shape, dtype)
    if dtype == "int8":  # ties: the first index wins
        x = (x // 64).astype(np.int8)
    out = [d for i, d in enumerate(shape) if i != axis % 3]
    table = "ArgMaxOptions" if op == "ARG_MAX" else "ArgMinOptions"
    model = one(op, [spec(shape, dtype), ints(axis)], [TensorSpec(out, out_type)],
                builtin_options(table, outputType=2 if out_type == "int32" else 4))
    # TFLite Micro writes int32 indices only
    check_all(model, x, reference="tflite-micro" if out_type == "int32" else "litert")


# ---- gather, tile, expand_dims, squeeze ------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "int8", "int32"])
@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("constant", [True, False])
def test_gather(dtype: str, axis: int, constant: bool) -> None:
    shape = (4, 5, 3)
    n = shape[axis % 3]
    idx = RNG.integers(0, n, (2, 3)).astype(np.int32)
    out = list(shape[:axis % 3]) + [2, 3] + list(shape[axis % 3 + 1:])
    ispec = const(idx) if constant else TensorSpec((2, 3), "int32")
    model = one("GATHER", [spec(shape, dtype), ispec], [spec(out, dtype)],
                builtin_options("GatherOptions", axis=axis))
    # the TFLite Micro package's GATHER takes float32 and int8 only
    check_all(model, data(shape, dtype), *([] if constant else [idx]),
              reference="litert" if dtype == "int32" else "tflite-micro")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mult", [(1, 3), (2, 1), (2, 2), (1, 17)])
def test_tile(dtype: str, mult: Sequence[int]) -> None:
    shape = (2, 3)
    out = [d * m for d, m in zip(shape, mult)]
    model = one("TILE", [spec(shape, dtype), ints(*mult)], [spec(out, dtype)])
    check_all(model, data(shape, dtype), reference="litert")


@pytest.mark.parametrize("dtype", ["float32", "int8", "int16"])
@pytest.mark.parametrize("axis", [0, 2, -1])
def test_expand_dims(dtype: str, axis: int) -> None:
    shape = (3, 4)
    out = list(shape)
    out.insert(axis if axis >= 0 else len(out) + 1 + axis, 1)
    model = one("EXPAND_DIMS", [spec(shape, dtype), ints(axis)], [spec(out, dtype)])
    check_all(model, data(shape, dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_squeeze(dtype: str) -> None:
    model = one("SQUEEZE", [spec((1, 3, 1, 4), dtype)], [spec((3, 4), dtype)],
                builtin_options("SqueezeOptions"))
    check_all(model, data((1, 3, 1, 4), dtype))


# ---- split, split_v, unpack (several outputs), pack ---------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("axis,n", [(1, 3), (-1, 2), (0, 1)])
def test_split(dtype: str, axis: int, n: int) -> None:
    shape = (2, 6, 4)
    part = list(shape)
    part[axis % 3] //= n
    model = one("SPLIT", [ints(axis), spec(shape, dtype)],
                [spec(part, dtype, "o%d" % k) for k in range(n)],
                builtin_options("SplitOptions", numSplits=n))
    check_all(model, data(shape, dtype), outputs=n)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("sizes,axis", [((1, 4, 2), 1), ((2, -1), 0), ((3, 1), -1)])
def test_split_v(dtype: str, sizes: Sequence[int], axis: int) -> None:
    shape = [4, 7, 4]
    n = shape[axis % 3]
    real = [v if v != -1 else n - sum(s for s in sizes if s != -1) for v in sizes]
    outs = []
    for k, v in enumerate(real):
        part = list(shape)
        part[axis % 3] = v
        outs.append(spec(part, dtype, "o%d" % k))
    model = one("SPLIT_V", [spec(shape, dtype), ints(*sizes), ints(axis)], outs,
                builtin_options("SplitVOptions", numSplits=len(sizes)))
    check_all(model, data(shape, dtype), outputs=len(sizes))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_unpack(dtype: str, axis: int) -> None:
    shape = (3, 2, 4)
    n = shape[axis % 3]
    part = [d for i, d in enumerate(shape) if i != axis % 3]
    model = one("UNPACK", [spec(shape, dtype)], [spec(part, dtype, "o%d" % k) for k in range(n)],
                builtin_options("UnpackOptions", num=n, axis=axis))
    check_all(model, data(shape, dtype), outputs=n)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_pack(dtype: str, axis: int) -> None:
    shape = (2, 5)
    out = list(shape)
    out.insert(axis, 3)
    model = one("PACK", [spec(shape, dtype, "a"), spec(shape, dtype, "b"),
                         spec(shape, dtype, "c")], [spec(out, dtype)],
                builtin_options("PackOptions", valuesCount=3, axis=axis))
    check_all(model, data(shape, dtype), data(shape, dtype), data(shape, dtype))


# ---- slice, strided_slice ----------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("begin,size", [((0, 1, 2), (2, 3, 1)), ((1, 0, 0), (-1, 4, -1))])
def test_slice(dtype: str, begin: Sequence[int], size: Sequence[int]) -> None:
    shape = (3, 4, 5)
    out = [n - b if v == -1 else v for n, b, v in zip(shape, begin, size)]
    model = one("SLICE", [spec(shape, dtype), ints(*begin), ints(*size)], [spec(out, dtype)])
    check_all(model, data(shape, dtype))


SLICES = [  # begin, end, strides, begin mask, end mask, shrink mask, output shape
    ((0, 1, 0), (2, 4, 5), (1, 2, 1), 0, 0, 0, (2, 2, 5)),
    ((1, 0, 1), (0, 0, 0), (1, 1, 2), 2, 7, 0, (2, 4, 2)),
    ((2, -1, 4), (0, 0, 0), (-1, -1, -1), 0, 0, 0, (2, 3, 4)),
    ((0, 3, 4), (0, 0, 0), (1, -1, -2), 1, 7, 0, (3, 4, 3)),
    ((1, 0, -1), (2, 4, 0), (1, 1, 1), 0, 2, 5, (4,)),
    ((-1, 2, 0), (0, 3, 5), (1, 1, 1), 0, 0, 3, (5,)),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", range(len(SLICES)))
def test_strided_slice_masks(dtype: str, case: int) -> None:
    begin, end, strides, bm, em, sm, out = SLICES[case]
    shape = (3, 4, 5)
    model = one("STRIDED_SLICE", [spec(shape, dtype), ints(*begin), ints(*end), ints(*strides)],
                [spec(out, dtype)],
                builtin_options("StridedSliceOptions", beginMask=bm, endMask=em,
                                shrinkAxisMask=sm))
    check_all(model, data(shape, dtype))


# ---- space_to_depth, depth_to_space, mirror_pad, pad -----------------------------------


@pytest.mark.parametrize("dtype", ["float32", "int8"])
@pytest.mark.parametrize("block", [2, 3])
def test_space_depth(dtype: str, block: int) -> None:
    shape = (1, 2 * block, 3 * block, 2)
    deep = (1, 2, 3, 2 * block * block)
    model = one("SPACE_TO_DEPTH", [spec(shape, dtype)], [spec(deep, dtype)],
                builtin_options("SpaceToDepthOptions", blockSize=block))
    check_all(model, data(shape, dtype))
    model = one("DEPTH_TO_SPACE", [spec(deep, dtype)], [spec(shape, dtype)],
                builtin_options("DepthToSpaceOptions", blockSize=block))
    check_all(model, data(deep, dtype))


@pytest.mark.parametrize("dtype", ["float32", "int8", "int32"])
@pytest.mark.parametrize("mode", [0, 1])
@pytest.mark.parametrize("pads", [((1, 2), (0, 3)), ((2, 0), (3, 3)), ((0, 0), (1, 0))])
def test_mirror_pad(dtype: str, mode: int, pads: Any) -> None:
    shape = (3, 4)
    if mode == 0 and max(max(p) for p in pads) > 2:  # REFLECT takes at most n - 1
        pads = tuple((min(a, 2), min(b, 2)) for a, b in pads)
    out = [n + a + b for n, (a, b) in zip(shape, pads)]
    model = one("MIRROR_PAD", [spec(shape, dtype), const(np.array(pads, np.int32))],
                [spec(out, dtype)], builtin_options("MirrorPadOptions", mode=mode))
    # the TFLite Micro package's MIRROR_PAD takes float32 and int8 only
    check_all(model, data(shape, dtype), reference="litert" if dtype == "int32"
              else "tflite-micro")


@pytest.mark.parametrize("op", ["PAD", "PADV2"])
def test_pad_int16(op: str) -> None:
    pads = const(np.array([[1, 0], [2, 1], [0, 3]], np.int32))
    ins = [spec((2, 3, 4), "int16"), pads]
    if op == "PADV2":
        ins.append(TensorSpec((), "int16", quant=(0.01, 0), data=np.array(-77, np.int16)))
    model = one(op, ins, [spec((3, 6, 7), "int16")])
    check_all(model, data((2, 3, 4), "int16"))


# ---- shapes --------------------------------------------------------------------------


@pytest.mark.parametrize("out_type", ["int32", "int64"])
def test_shape_is_a_constant(out_type: str) -> None:
    model = one("SHAPE", [f32((2, 7, 3))], [TensorSpec((3,), out_type)],
                builtin_options("ShapeOptions", outType=2 if out_type == "int32" else 4))
    assert collect_ops(model) == []
    # TFLite Micro's SHAPE writes int32 only
    check_all(model, fl(2, 7, 3), reference="tflite-micro" if out_type == "int32" else "litert")


def kernels_of(mod: Any) -> List[str]:
    """The kernels of the compiled program, by name."""
    arch = codegen.compile(mod, "chain")
    return sorted({f["kernel"] for fs in arch.info["memory"]["functions"]
                   ["operator_functions"].values() for f in fs})


def test_shape_chain_folds_at_import() -> None:
    """SHAPE -> STRIDED_SLICE -> PACK -> RESHAPE (TensorFlow's flatten on
    a static batch) imports as one reshape: no shape arithmetic is left to
    run, and the result is TFLite Micro's."""
    x = f32((2, 3, 4))
    shp = TensorSpec((3,), "int32", name="shape")
    batch = TensorSpec((), "int32", name="batch")
    packed = TensorSpec((2,), "int32", name="packed")
    y = f32((2, 12))
    ops = [
        Node("SHAPE", [x], [shp], builtin_options("ShapeOptions", outType=2)),
        Node("STRIDED_SLICE", [shp, ints(0), ints(1), ints(1)], [batch],
               builtin_options("StridedSliceOptions", shrinkAxisMask=1)),
        Node("PACK", [batch, TensorSpec((), "int32", data=np.array(-1, np.int32))],
               [packed], builtin_options("PackOptions", valuesCount=2, axis=0)),
        Node("RESHAPE", [x, packed], [y]),
    ]
    model = chain_model(ops, [y])
    mod = frontend.from_tflite(model)
    assert collect_ops(model) == ["reshape"]
    assert set(kernels_of(mod)) <= {"view"}, kernels_of(mod)
    xs = fl(2, 3, 4)
    want = run_tflite_micro(model, xs)[0]
    got = np.asarray(tn.runtime.Executor(mod)(xs))
    assert got.shape == want.shape and np.array_equal(got, want)


# ---- errors -----------------------------------------------------------------------------


def test_bad_inputs_are_named() -> None:
    gather = one("GATHER", [f32((4, 3)), const(np.array([1, 4], np.int32))], [f32((2, 3))],
                 builtin_options("GatherOptions", axis=0))
    with pytest.raises(frontend.ModelImportError, match="GATHER.*out of range"):
        frontend.from_tflite(gather)
    split = one("SPLIT", [ints(1), f32((2, 5))], [f32((2, 2)), f32((2, 2))],
                builtin_options("SplitOptions", numSplits=2))
    with pytest.raises(frontend.ModelImportError, match="SPLIT.*5 entries do not split"):
        frontend.from_tflite(split)
    x = tn.ir.var("x", shape=[3, 4], dtype="float32")
    with pytest.raises(TypeError, match="take.*indices.*int32 or int64"):
        tn.ir.op.take(x, tn.ir.const(np.zeros(2, np.float32)))
    with pytest.raises(TypeError, match="argmax.*axis 2 is out of range"):
        tn.ir.op.argmax(x, 2)
    with pytest.raises(TypeError, match="qnn.sum.*data.*expected int8"):
        tn.ir.op.qnn.sum(x, *[tn.ir.const(np.array(v, d)) for v, d in
                              ((0.1, "float32"), (0, "int32"), (0.1, "float32"), (0, "int32"))])


def test_take_index_out_of_range_at_run_time() -> None:
    x = tn.ir.var("x", shape=[4, 3], dtype="float32")
    i = tn.ir.var("i", shape=[2], dtype="int32")
    mod = tn.ir.IRModule.from_expr(tn.ir.Function([x, i], tn.ir.op.take(x, i)))
    run = tn.runtime.Executor(mod)
    xs = fl(4, 3)
    np.testing.assert_array_equal(np.asarray(run(xs, np.array([-1, 2], np.int32))), xs[[3, 2]])
    with pytest.raises(ValueError, match="take.*INVALID_ARGUMENT"):
        run(xs, np.array([0, 4], np.int32))
