"""Wrong results of issue 18, continued: DataType checked at construction
and readable for every type the C side makes; tensors numpy cannot take
refused with BufferError naming the dtype; tuple and NaN map keys found."""
import importlib.util
import pickle
from typing import Any, Optional

import numpy as np
import pytest

import tvmnode as tn

echo = tn.get_global_func("testing.echo")

# ---------------------------------------------------------------------------
# DataType

# text -> canonical text, type_code (DLPack's), bits, lanes, itemsize (None: ValueError)
DTYPES = [
    ("int8", "int8", 0, 8, 1, 1),
    ("i8", "int8", 0, 8, 1, 1),
    ("i16", "int16", 0, 16, 1, 2),
    ("i32", "int32", 0, 32, 1, 4),
    ("i64", "int64", 0, 64, 1, 8),
    ("int", "int32", 0, 32, 1, 4),
    ("u8", "uint8", 1, 8, 1, 1),
    ("uint64", "uint64", 1, 64, 1, 8),
    ("f16", "float16", 2, 16, 1, 2),
    ("f32", "float32", 2, 32, 1, 4),
    ("f64", "float64", 2, 64, 1, 8),
    ("float", "float32", 2, 32, 1, 4),
    ("float8", "float8", 2, 8, 1, 1),
    ("f8x4", "float8x4", 2, 8, 4, 4),
    ("bf16", "bfloat16", 4, 16, 1, 2),
    ("bfloat16x8", "bfloat16x8", 4, 16, 8, 16),
    ("c64", "complex64", 5, 64, 1, 8),
    ("complex128", "complex128", 5, 128, 1, 16),
    ("int4", "int4", 0, 4, 1, None),
    ("u4", "uint4", 1, 4, 1, None),
    ("uint1", "uint1", 1, 1, 1, None),
    ("int4x2", "int4x2", 0, 4, 2, 1),
    ("int4x3", "int4x3", 0, 4, 3, None),
    ("float32x4", "float32x4", 2, 32, 4, 16),
    ("f32x4", "float32x4", 2, 32, 4, 16),
    ("uint8x16", "uint8x16", 1, 8, 16, 16),
    ("bool", "bool", 6, 8, 1, 1),
    ("boolx4", "boolx4", 6, 8, 4, 4),
    ("handle", "handle", 3, 64, 1, 8),
    ("void", "void", 3, 0, 0, None),
]


@pytest.mark.parametrize("text,canon,code,bits,lanes,itemsize", DTYPES)
def test_dtype_parts(text: str, canon: str, code: int, bits: int, lanes: int,
                     itemsize: Optional[int]) -> None:
    d = tn.DataType(text)
    assert type(d) is tn.DataType and d == canon and str(d) == canon
    assert repr(d) == "dtype(%r)" % canon
    assert (d.type_code, d.bits, d.lanes) == (code, bits, lanes)
    if itemsize is None:
        with pytest.raises(ValueError, match="bits|size"):
            d.itemsize
    else:
        assert d.itemsize == itemsize
    # the canonical text is one the C parser reads back as the same type
    assert tn.DataType(str(d)) == d
    assert tn.DataType.from_dlpack_data_type(d.dlpack_data_type) == d
    back = echo(d)
    assert type(back) is tn.DataType and back == d
    assert pickle.loads(pickle.dumps(d)) == d


@pytest.mark.parametrize("bad", ["garbage", "", "float7", "int0", "int256", "i", "x4",
                                 "int8x0", "int8x", "int8x65536", "bfloat32", "complex32",
                                 "float32 ", " float32", "Float32", "f7", "bf8", "i8x0",
                                 "float32\0", "int8-", "voidx2"])
def test_dtype_rejects_bad_text_at_construction(bad: str) -> None:
    with pytest.raises(ValueError) as e:
        tn.DataType(bad)
    if "\0" not in bad and bad:
        assert repr(bad) in str(e.value) or ("'%s'" % bad) in str(e.value)


def test_dtype_rejects_other_types() -> None:
    bad: Any
    for bad in (None, 3, 1.5, b"int8", ["int8"]):
        with pytest.raises(TypeError, match="DataType"):
            tn.DataType(bad)


def test_dtype_is_a_str_and_takes_numpy_dtypes() -> None:
    assert tn.DataType("i8") == "int8" and tn.DataType("f32") != "f32"
    assert isinstance(tn.DataType("float32"), str)
    table: Any = {tn.DataType("f32"): 1}
    assert table["float32"] == 1
    assert tn.DataType(np.float32) == "float32"
    assert tn.DataType(np.dtype("int8")) == "int8"
    assert tn.DataType(np.dtype("complex128")) == "complex128"
    assert tn.DataType(np.bool_) == "bool"
    d = tn.DataType("uint8x4")
    assert tn.DataType(d) is d


def test_with_lanes() -> None:
    f32 = tn.DataType("float32")
    v = f32.with_lanes(4)
    assert type(v) is tn.DataType and v == "float32x4" and (v.bits, v.lanes) == (32, 4)
    assert v.with_lanes(1) == "float32" and v.itemsize == 16
    assert tn.DataType("int4").with_lanes(2).itemsize == 1
    assert tn.DataType("bool").with_lanes(8) == "boolx8"
    assert f32.with_lanes(65535).lanes == 65535
    for n in (0, -1, 65536):
        with pytest.raises(ValueError, match="lanes"):
            f32.with_lanes(n)
    with pytest.raises(ValueError):
        tn.DataType("void").with_lanes(2)
    bad: Any = "4"
    with pytest.raises(TypeError):
        f32.with_lanes(bad)


def test_dlpack_data_type() -> None:
    assert tn.DataType("float32").dlpack_data_type == (2, 32, 1)
    assert tn.DataType("int8x4").dlpack_data_type == (0, 8, 4)
    assert tn.DataType("void").dlpack_data_type == (3, 0, 0)
    assert tn.DataType.from_dlpack_data_type((4, 16, 1)) == "bfloat16"
    assert tn.DataType.from_dlpack_data_type((1, 4, 2)) == "uint4x2"
    for bad in ((18, 8, 1), (10, 16, 1), (17, 8, 1), (2, 7, 1), (4, 32, 1), (0, 0, 1),
                (0, 8, 0), (-1, 8, 1), (0, 256, 1), (0, 8, 1 << 16)):
        with pytest.raises(ValueError, match="not a data type"):
            tn.DataType.from_dlpack_data_type(bad)


@pytest.mark.parametrize("text", ["int8", "i16", "uint4", "int4x2", "float8", "bf16",
                                  "complex64", "complex128", "float32x4", "boolx4",
                                  "handle"])
def test_every_tensor_dtype_reads_back(text: str) -> None:
    t = tn.empty((2, 3), text)
    d = t.dtype
    assert type(d) is tn.DataType and d == tn.DataType(text)
    assert (d.bits, d.lanes) == (tn.DataType(text).bits, tn.DataType(text).lanes)
    del t


# ---------------------------------------------------------------------------
# Exporting tensors numpy has no type for

NOT_NUMPY = ["int4", "uint4", "uint1", "int4x2", "float32x4", "int8x4", "boolx4",
             "bfloat16", "float8", "handle"]
# numpy reads these as ml_dtypes types when ml_dtypes is installed
# (test_compat_dtype.py); without it they are refused like the rest
ML_DTYPES = {"int4", "uint4", "bfloat16"}


@pytest.mark.parametrize("text", NOT_NUMPY)
def test_export_refused_with_buffer_error(text: str) -> None:
    t = tn.empty((2, 3), text)
    name = str(t.dtype)
    with pytest.raises(BufferError, match="dtype %s" % name):
        memoryview(t)
    if text not in ML_DTYPES or importlib.util.find_spec("ml_dtypes") is None:
        with pytest.raises(BufferError, match="dtype %s" % name):
            np.asarray(t)
        with pytest.raises(BufferError, match="dtype %s" % name):
            np.array(t)
        with pytest.raises(BufferError, match="dtype %s" % name):
            t.numpy()
    if t.dtype.lanes != 1 or t.dtype.bits % 8:
        # no Python DLPack consumer takes vector lanes or sub-byte widths:
        # __dlpack__ refuses them with the protocol's BufferError before any
        # capsule exists (numpy would take one and raise RuntimeError)
        for export in (lambda: np.from_dlpack(t), lambda: t.__dlpack__(),
                       lambda: t.__dlpack__(max_version=(1, 0))):
            with pytest.raises(BufferError, match="dtype %s" % name):
                export()
    else:
        # bfloat16, float8, handle: the capsule is valid DLPack, which other
        # consumers take. numpy's from_dlpack raises its own error, never
        # SystemError, unless it knows the type: numpy 2.5 and later read
        # ml_dtypes' bfloat16 and float8 types, and must then see the
        # same memory under the same name
        try:
            got = np.from_dlpack(t)
        except SystemError:
            raise
        except Exception:
            got = None
        if got is not None:
            assert text in ML_DTYPES | {"float8"}, text
            assert (got.dtype.name, got.shape) == (name, (2, 3))
            assert got.__array_interface__["data"][0] == t.data_ptr
        del got
    del t


@pytest.mark.parametrize("text", ["bool", "int8", "uint16", "int32", "uint64", "float16",
                                  "float32", "float64", "complex64", "complex128"])
def test_numpy_types_export_without_copy(text: str) -> None:
    t = tn.empty((2, 3), text)
    for a in (np.asarray(t), t.numpy(), np.from_dlpack(t), np.asarray(memoryview(t))):
        assert a.dtype == np.dtype(text) and a.shape == (2, 3)
        assert a.__array_interface__["data"][0] == t.data_ptr
        del a
    want = "complex128" if text.startswith("complex") else "float64"
    assert np.array(t, dtype=want).dtype == np.dtype(want)
    del t


# ---------------------------------------------------------------------------
# Map keys

def test_tuple_keys_compare_by_value() -> None:
    m = tn.Map({(1, 2): "a", ("x", (3, 4.5)): "b", 7: "c"})
    assert m[(1, 2)] == "a" and m[("x", (3, 4.5))] == "b" and m[7] == "c"
    assert (1, 2) in m and (1, 3) not in m and (1, 2, 3) not in m and () not in m
    assert m.get((1, 2)) == "a" and m.get((2, 1)) is None and m.get((2, 1), 0) == 0
    assert m[(1.0, 2)] == "a"  # numbers by value, as a Python tuple compares
    assert m[tn.Array([1, 2])] == "a" and m[[1, 2]] == "a"
    (k, _), = [kv for kv in m.items() if kv[1] == "a"]
    assert type(k) is tn.Array and list(k) == [1, 2] and m[k] == "a"
    with pytest.raises(KeyError):
        m[(1, 2, 3)]
    with pytest.raises(KeyError):
        tn.Map({"a": 1})[("a",)]
    del k


def test_tuple_keys_in_a_dict() -> None:
    d = tn.Dict()
    d[(1, 2)] = 1
    d[(1, 2)] = 2  # the same key: replaced, not added
    d[(1, (2,))] = 3
    assert len(d) == 2 and d[(1, 2)] == 2 and d[(1, (2,))] == 3
    del d[(1, 2)]
    assert len(d) == 1 and (1, 2) not in d
    assert d.pop((1, (2,))) == 3 and len(d) == 0
    assert d.pop((9,), "gone") == "gone"
    with pytest.raises(KeyError):
        del d[(1, 2)]
    with pytest.raises(KeyError):
        d.pop((1, 2))


def test_deep_tuple_key() -> None:
    k: Any = ()
    for i in range(200):
        k = (i, k)
    m = tn.Map({k: "deep"})
    assert m[k] == "deep"
    k2: Any = ()
    for i in range(200):
        k2 = (i, k2)
    assert m[k2] == "deep"
    del m


def test_nan_keys() -> None:
    """Every NaN is one key in tvmnode (floats are values, not objects, so
    the identity a Python dict falls back on does not exist): the NaN a
    map was built with is found, and so is any other NaN."""
    nan = float("nan")
    m = tn.Map({nan: 1, 2.5: 2})
    assert m[nan] == 1 and nan in m and m.get(nan) == 1
    assert m[float("nan")] == 1 and m[np.float64("nan")] == 1 and m[-nan] == 1
    assert m[2.5] == 2
    # two distinct NaN objects are two keys in a dict, one here (the later wins)
    two = tn.Map({nan: 1, float("nan"): 2})
    assert len(two) == 1 and two[nan] == 2
    d = tn.Dict()
    d[nan] = 1
    d[nan] = 2
    assert len(d) == 1 and d[nan] == 2
    del d[nan]
    assert len(d) == 0 and nan not in d
    # inside tuple keys too
    t = tn.Map({(nan, 1): "x"})
    assert t[(nan, 1)] == "x" and t[(float("nan"), 1)] == "x"
    # JSON keeps it one key
    back = tn.load_json(tn.save_json(m))
    assert len(back) == 2 and back[nan] == 1
    del m, two, d, t, back
