"""Data types and devices as a tvm-ffi program uses them (issue 33): the
DLPack 1.1 float8/float6/float4 DataTypes, their short spellings, integer
type codes and is_* predicates, numpy and ml_dtypes interop (tensors
included), dtype literals, DLDeviceType and tvmnode.device."""
import operator
import pickle
from typing import Any, List, Tuple

import numpy as np
import pytest

import tvmnode as tn

echo = tn.get_global_func("testing.echo")

# name, DLPack code, bits
SMALL_FLOATS: List[Tuple[str, int, int]] = [
    ("float8_e3m4", 7, 8),
    ("float8_e4m3", 8, 8),
    ("float8_e4m3b11fnuz", 9, 8),
    ("float8_e4m3fn", 10, 8),
    ("float8_e4m3fnuz", 11, 8),
    ("float8_e5m2", 12, 8),
    ("float8_e5m2fnuz", 13, 8),
    ("float8_e8m0fnu", 14, 8),
    ("float6_e2m3fn", 15, 6),
    ("float6_e3m2fn", 16, 6),
    ("float4_e2m1fn", 17, 4),
]


# ---------------------------------------------------------------------------
# DataType: parse, print, parts

@pytest.mark.parametrize("name,code,bits", SMALL_FLOATS)
def test_small_float_dtypes(name: str, code: int, bits: int) -> None:
    d = tn.DataType(name)
    assert type(d) is tn.DataType and d == name and str(d) == name
    assert d.dlpack_data_type == (code, bits, 1)
    assert (d.type_code, d.bits, d.lanes) == (code, bits, 1)
    assert type(d.type_code) is int
    assert d.is_float and not d.is_integer and not d.is_bool and not d.is_handle
    assert tn.DataType.from_dlpack_data_type((code, bits, 1)) == name
    assert tn.DataType.from_dlpack_data_type((code, bits, 4)) == name + "x4"
    v = d.with_lanes(4)
    assert v == name + "x4" and (v.type_code, v.bits, v.lanes) == (code, bits, 4)
    assert tn.DataType(name + "x4") == v
    # through C and back, and through pickle
    back = echo(d)
    assert type(back) is tn.DataType and back == d
    assert pickle.loads(pickle.dumps(v)) == v
    # the width is part of the code: any other is not a data type
    with pytest.raises(ValueError, match="not a data type"):
        tn.DataType.from_dlpack_data_type((code, 16 if bits != 16 else 8, 1))


@pytest.mark.parametrize("alias,canon", [
    ("f8_e3m4", "float8_e3m4"), ("fp8_e3m4", "float8_e3m4"),
    ("f8_e4m3", "float8_e4m3"), ("fp8_e4m3", "float8_e4m3"),
    ("f8_e4m3b11fnuz", "float8_e4m3b11fnuz"), ("fp8_e4m3b11fnuz", "float8_e4m3b11fnuz"),
    ("f8_e4m3fn", "float8_e4m3fn"), ("fp8_e4m3fn", "float8_e4m3fn"),
    ("f8_e4m3fnuz", "float8_e4m3fnuz"), ("fp8_e4m3fnuz", "float8_e4m3fnuz"),
    ("f8_e5m2", "float8_e5m2"), ("fp8_e5m2", "float8_e5m2"),
    ("f8_e5m2fnuz", "float8_e5m2fnuz"), ("fp8_e5m2fnuz", "float8_e5m2fnuz"),
    ("f8_e8m0fnu", "float8_e8m0fnu"), ("fp8_e8m0fnu", "float8_e8m0fnu"),
    ("f6_e2m3fn", "float6_e2m3fn"), ("fp6_e2m3fn", "float6_e2m3fn"),
    ("f6_e3m2fn", "float6_e3m2fn"), ("fp6_e3m2fn", "float6_e3m2fn"),
    ("f4_e2m1fn", "float4_e2m1fn"), ("fp4_e2m1fn", "float4_e2m1fn"),
    ("f8_e4m3x4", "float8_e4m3x4"), ("f8_e4m3fnx4", "float8_e4m3fnx4"),
    ("fp8_e5m2x4", "float8_e5m2x4"), ("f6_e2m3fnx4", "float6_e2m3fnx4"),
    ("f4_e2m1fnx2", "float4_e2m1fnx2"), ("f4_e2m1fn_x2", "float4_e2m1fnx2"),
    ("fp4_e2m1fnx2", "float4_e2m1fnx2"), ("fp4_e2m1fn_x2", "float4_e2m1fnx2"),
    ("float4_e2m1fn_x2", "float4_e2m1fnx2"),
    # the short forms that were already read
    ("i8", "int8"), ("u16", "uint16"), ("f16", "float16"), ("bf16", "bfloat16"),
    ("f32x4", "float32x4"),
])
def test_aliases_read_as_the_canonical_name(alias: str, canon: str) -> None:
    d = tn.DataType(alias)
    # tvmnode keeps the canonical spelling (tvm-ffi keeps the alias text)
    assert d == canon and str(d) == canon
    assert d.dlpack_data_type == tn.DataType(canon).dlpack_data_type


@pytest.mark.parametrize("bad", ["float8_", "float8_e4m3fnu", "float8_e2m1fn", "float6_e4m3fn",
                                 "float4_e2m3fn", "fp8_E4M3FN", "float8_e4m3fn_x2",
                                 "float4_e2m1fn_", "float4_e2m1fn_x", "float8_e5m2x0",
                                 "float8_e5m2x70000", "float8_e5m2 ", "float8_e5m216",
                                 "fp16", "f8_", "float4_e2m1fnx", "float8_e4m3fnx2x2"])
def test_bad_small_float_text(bad: str) -> None:
    with pytest.raises(ValueError) as e:
        tn.DataType(bad)
    assert repr(bad) in str(e.value) or ("'%s'" % bad) in str(e.value)
    assert not tn.DataType.is_dtype(bad)


@pytest.mark.parametrize("text,size", [
    ("float32", 4), ("float32x4", 16), ("float8_e5m2", 1), ("float8_e5m2x4", 4),
    ("float6_e2m3fnx4", 3), ("float4_e2m1fnx4", 2), ("float4_e2m1fnx2", 1), ("uint8", 1),
    ("bool", 1),
])
def test_itemsize(text: str, size: int) -> None:
    assert tn.DataType(text).itemsize == size


@pytest.mark.parametrize("text", ["float4_e2m1fn", "float6_e3m2fn", "float6_e2m3fnx3",
                                  "float4_e2m1fnx3"])
def test_itemsize_of_a_part_byte_is_an_error(text: str) -> None:
    # tvm-ffi rounds up; an element that is not whole bytes has no byte size
    with pytest.raises(ValueError, match="bits"):
        tn.DataType(text).itemsize


def test_type_code_is_dlpacks_int() -> None:
    codes = {"int8": 0, "uint8": 1, "float32": 2, "handle": 3, "void": 3, "bfloat16": 4,
             "complex64": 5, "bool": 6, "float8_e4m3fn": 10, "float4_e2m1fnx2": 17}
    for text, code in codes.items():
        d = tn.DataType(text)
        assert type(d.type_code) is int and d.type_code == code, text
        assert d.type_code == d.dlpack_data_type[0]
    assert tn.DataTypeCode(10) is tn.DataTypeCode.Float8E4M3FN
    assert tn.DataType("float8_e4m3fn").type_code == tn.DataTypeCode.Float8E4M3FN
    assert [int(c) for c in tn.DataTypeCode] == list(range(18))


@pytest.mark.parametrize("text,flags", [
    # bool, integer, int, uint, float, complex, handle, void
    ("bool", "B......."),
    ("int8", ".II....."),
    ("int4x2", ".II....."),
    ("uint32", ".I.U...."),
    ("float32", "....F..."),
    ("float16x4", "....F..."),
    ("bfloat16", "....F..."),
    ("float8_e5m2", "....F..."),
    ("float6_e2m3fn", "....F..."),
    ("float4_e2m1fnx2", "....F..."),
    ("complex64", ".....C.."),
    ("handle", "......H."),
    ("void", "......HV"),
])
def test_predicates(text: str, flags: str) -> None:
    d = tn.DataType(text)
    got = [d.is_bool, d.is_integer, d.is_int, d.is_uint, d.is_float, d.is_complex,
           d.is_handle, d.is_void]
    assert got == [c != "." for c in flags], text
    assert all(type(x) is bool for x in got)


def test_is_dtype() -> None:
    assert tn.DataType.is_dtype("float32") and tn.DataType.is_dtype(tn.DataType("int8"))
    assert tn.DataType.is_dtype("fp8_e4m3fn") and tn.DataType.is_dtype(np.float16)
    assert tn.dtype.is_dtype(np.dtype("int32"))
    for bad in ("not_a_dtype", "", "float7", None, 3, b"int8", ["int8"]):
        assert tn.DataType.is_dtype(bad) is False


def test_dtype_is_the_class_and_literals() -> None:
    assert tn.dtype is tn.DataType
    assert tn.dtype("float32") == tn.float32 and isinstance(tn.float32, tn.dtype)
    want = {"bool": (6, 8, 1), "int8": (0, 8, 1), "int16": (0, 16, 1), "int32": (0, 32, 1),
            "int64": (0, 64, 1), "uint8": (1, 8, 1), "uint16": (1, 16, 1),
            "uint32": (1, 32, 1), "uint64": (1, 64, 1), "float16": (2, 16, 1),
            "float32": (2, 32, 1), "float64": (2, 64, 1), "bfloat16": (4, 16, 1),
            "float4_e2m1fnx2": (17, 4, 2), "float4_e2m1fn_x2": (17, 4, 2)}
    want.update({name: (code, bits, 1) for name, code, bits in SMALL_FLOATS})
    for name, parts in want.items():
        lit = getattr(tn, name)
        assert type(lit) is tn.DataType, name
        assert (lit.type_code, lit.bits, lit.lanes) == parts, name
        assert echo(lit) == lit
    assert tn.float4_e2m1fn_x2 == "float4_e2m1fnx2"
    # literals are attributes, not in __all__: `from tvmnode import *`
    # must not replace the builtin bool
    assert "bool" not in tn.__all__ and "float32" not in tn.__all__
    for name in ("dtype", "device", "DLDeviceType", "DataTypeCode"):
        assert name in tn.__all__ and hasattr(tn, name)


# ---------------------------------------------------------------------------
# numpy and ml_dtypes

@pytest.mark.parametrize("text", ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16",
                                  "uint32", "uint64", "float16", "float32", "float64",
                                  "complex64", "complex128"])
def test_numpy_dtype_of_a_datatype(text: str) -> None:
    d = tn.DataType(text)
    assert np.dtype(d) == np.dtype(text)
    assert tn.DataType(np.dtype(d)) == d
    a = np.zeros(3, dtype=d)
    assert a.dtype == d


def test_numpy_takes_the_literals() -> None:
    x = np.array([1, 2, 3], dtype=tn.float32)
    assert x.dtype == tn.float32 and x.dtype == np.float32
    assert np.arange(4, dtype=tn.int8).dtype == np.int8
    assert np.zeros(2, dtype=tn.bool).dtype == np.bool_


ML_NAMES = [name for name, _, _ in SMALL_FLOATS] + ["bfloat16", "int4", "uint4", "int2", "uint2"]


def _ml_type(name: str) -> Any:
    ml_dtypes = pytest.importorskip("ml_dtypes")
    tp = getattr(ml_dtypes, name, None)
    if tp is None:
        pytest.skip("this ml_dtypes has no %s" % name)
    return tp


@pytest.mark.parametrize("name", ML_NAMES)
def test_ml_dtypes_types_convert(name: str) -> None:
    tp = _ml_type(name)
    d = tn.DataType(np.dtype(tp))
    assert d == name and tn.DataType(tp) == name
    # with ml_dtypes imported numpy knows the name, so np.dtype takes a DataType
    assert np.dtype(tn.DataType(name)) == np.dtype(tp)
    assert echo(d) == d


@pytest.mark.parametrize("name", [n for n in ML_NAMES if n not in ("int2", "uint2")])
def test_tensor_to_ml_dtypes_shares_memory(name: str) -> None:
    tp = _ml_type(name)
    t = tn.empty((2, 3), name)
    assert t.dtype == name and t.shape == (2, 3)
    a = t.numpy()
    assert a.dtype == np.dtype(tp) and a.shape == (2, 3)
    assert a.__array_interface__["data"][0] == t.data_ptr  # no copy
    a[1, 2] = 1.0 if name not in ("int4", "uint4") else 1
    # the write is in the tensor's memory: read it again as bytes
    b = t.numpy()
    assert b[1, 2] == a[1, 2]
    raw = b.view(np.uint8)
    # zero-filled, and the bytes of one element changed
    assert 1 <= np.count_nonzero(raw) <= b.itemsize and np.count_nonzero(raw[0]) == 0
    assert np.asarray(t).dtype == np.dtype(tp)
    assert np.array(t, dtype=np.float32)[1, 2] == 1.0
    del a, b, raw, t


@pytest.mark.parametrize("name", [n for n in ML_NAMES if n not in ("int2", "uint2")])
def test_ml_dtypes_array_round_trips_through_from_dlpack(name: str) -> None:
    tp = _ml_type(name)
    values = [0.5, -2.0, 1.5, 3.0, -0.5, 1.0] if not name.startswith(("int", "uint")) \
        else [1, 2, 3, 0, 1, 2]
    if name in ("float8_e8m0fnu",):  # powers of two, no sign
        values = [0.5, 2.0, 1.0, 4.0, 0.25, 1.0]
    if name.endswith("fnu") or name.startswith("uint"):
        values = [abs(v) for v in values]
    x = np.array(values, dtype=tp).reshape(2, 3)
    t = tn.from_dlpack(x)
    assert type(t) is tn.Tensor and t.dtype == name and t.shape == (2, 3)
    assert t.data_ptr == x.__array_interface__["data"][0]  # no copy
    y = t.numpy()
    assert y.dtype == x.dtype
    assert y.view(np.uint8).tobytes() == x.view(np.uint8).tobytes()
    assert np.array_equal(y.astype(np.float32), x.astype(np.float32))
    # strided and read-only views keep their layout and flag
    s = tn.from_dlpack(x[:, ::2])
    assert s.shape == (2, 2) and np.array_equal(s.numpy().astype(np.float32),
                                                x[:, ::2].astype(np.float32))
    ro = x.copy()
    ro.setflags(write=False)
    r = tn.from_dlpack(ro).numpy()
    assert not r.flags.writeable and np.array_equal(r.astype(np.float32),
                                                    x.astype(np.float32))
    # the tensor keeps the array's memory alive
    del x, y, ro
    assert tn.from_dlpack(t).numpy().shape == (2, 3)
    del t, s, r


def test_ml_dtypes_layouts() -> None:
    ml_dtypes = pytest.importorskip("ml_dtypes")
    arrays = [np.array(1.5, ml_dtypes.float8_e5m2),                       # 0-d
              np.zeros((0, 3), ml_dtypes.bfloat16),                       # empty
              np.asfortranarray(np.ones((2, 3), ml_dtypes.float8_e4m3fn)),  # column-major
              np.arange(16, dtype=np.float32).astype(ml_dtypes.bfloat16).reshape(4, 4)[::2, 1::2]]
    for a in arrays:
        t = tn.from_dlpack(a)
        assert t.shape == a.shape and t.dtype == a.dtype.name
        b = t.numpy()
        assert b.dtype == a.dtype and b.strides == a.strides
        assert np.array_equal(a.astype(np.float32), b.astype(np.float32))
        del t, b
    assert tn.empty((), "bfloat16").numpy().shape == ()
    # a function argument takes them too, once numpy's own DLPack refuses
    # (test_compat_parity has the details)
    echo_arg: Any = np.zeros(2, ml_dtypes.float8_e4m3fn)
    assert echo(echo_arg).dtype == "float8_e4m3fn"
    assert echo(tn.from_dlpack(echo_arg)).dtype == "float8_e4m3fn"


def test_float8_crosses_dlpack_with_its_code() -> None:
    t = tn.empty((4,), "float8_e5m2")
    cap = t.__dlpack__()
    back = tn.from_dlpack(cap)
    assert back.dtype == "float8_e5m2" and back.data_ptr == t.data_ptr
    legacy = tn.from_dlpack(t.__dlpack__(max_version=(0, 8)))
    assert legacy.dtype == "float8_e5m2"
    # numpy's from_dlpack knows float8 only when ml_dtypes registers it
    # (numpy 2.5 and later): it then reads the same memory as that type;
    # an older numpy refuses with its own error, never SystemError
    try:
        a = np.from_dlpack(t)
    except SystemError:
        raise
    except Exception:
        a = None
    if a is not None:
        assert (a.dtype.name, a.shape) == ("float8_e5m2", (4,))
        assert a.__array_interface__["data"][0] == t.data_ptr
    del t, cap, back, legacy, a


@pytest.mark.parametrize("text", ["float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fnx3"])
def test_part_byte_tensors_do_not_cross_dlpack(text: str) -> None:
    t = tn.empty((2, 3), text)
    with pytest.raises(BufferError, match="dtype %s" % text):
        t.__dlpack__()
    with pytest.raises(BufferError, match="dtype %s" % text):
        memoryview(t)
    del t


def test_reinterpret_checks_its_arguments() -> None:
    t = tn.empty((2,), "float8_e4m3fn")
    u = tn._ffi._tensor_reinterpret(t, "uint8")
    assert u.dtype == "uint8" and u.data_ptr == t.data_ptr
    with pytest.raises(ValueError, match="float8_e4m3fn element is 1 bytes and a float32 one 4"):
        tn._ffi._tensor_reinterpret(t, "float32")
    with pytest.raises(ValueError, match="void"):
        tn._ffi._tensor_reinterpret(t, "void")
    with pytest.raises(ValueError, match="nope"):
        tn._ffi._tensor_reinterpret(t, "nope")
    bad: Any = [1]
    with pytest.raises(TypeError, match="argument 'tensor' must be a tvmnode.Tensor, not list"):
        tn._ffi._tensor_reinterpret(bad, "uint8")
    del t, u


def test_from_dlpack_still_refuses_other_arrays() -> None:
    for x in (np.array(["a", "b"]), np.array([object()]), np.zeros(2, "V3")):
        with pytest.raises((BufferError, TypeError, ValueError)):
            tn.from_dlpack(x)


def test_small_float_values_in_json_and_fields() -> None:
    d = tn.DataType("float8_e4m3fnx2")
    assert tn.load_json(tn.save_json(d)) == d
    t = tn.empty((3,), "float8_e5m2")
    back = tn.load_json(tn.save_json(t))
    assert back.dtype == "float8_e5m2" and back.shape == (3,)
    del t, back


def _dtype_proto(parts: Any) -> Any:
    """An object whose __dlpack_data_type__() returns `parts`."""
    return type("_DTypeProto", (), {"__dlpack_data_type__": lambda self: parts})()


def _device_proto(parts: Any) -> Any:
    """An object whose __dlpack_device__() returns `parts`."""
    return type("_DeviceProto", (), {"__dlpack_device__": lambda self: parts})()


def test_dlpack_data_type_protocol_is_a_datatype() -> None:
    for parts, text in [((2, 32, 1), "float32"), ((10, 8, 1), "float8_e4m3fn"),
                        ((0, 8, 4), "int8x4"), ((17, 4, 2), "float4_e2m1fnx2")]:
        got = echo(_dtype_proto(parts))
        assert type(got) is tn.DataType and got == text, parts
        got = tn.convert(_dtype_proto(parts))
        assert type(got) is tn.DataType and got == text, parts
    with pytest.raises(ValueError, match=r"_DTypeProto.__dlpack_data_type__\(\) returned "
                                         r"\(99, 8, 1\), which is not a data type"):
        echo(_dtype_proto((99, 8, 1)))
    with pytest.raises(ValueError, match="returned \\(2, 300, 1\\)"):
        echo(_dtype_proto((2, 300, 1)))
    for bad in [(2, 32), "float32", (2, 32.0, 1), None]:
        with pytest.raises(TypeError, match=r"__dlpack_data_type__\(\) must return a tuple of 3 ints"):
            echo(_dtype_proto(bad))


def test_dlpack_device_protocol_is_a_device() -> None:
    got = echo(_device_proto((2, 1)))
    assert type(got) is tn.Device and got == tn.device("cuda:1")
    assert tn.convert(_device_proto((1, 0))) == tn.cpu(0)
    with pytest.raises(ValueError, match=r"__dlpack_device__\(\) returned \(-1, 0\)"):
        echo(_device_proto((-1, 0)))
    with pytest.raises(TypeError, match=r"__dlpack_device__\(\) must return a tuple of 2 ints"):
        echo(_device_proto((1, 0, 0)))
    # a DLPack producer also has __dlpack_device__, and stays a tensor
    t = echo(np.arange(3, dtype="int32"))
    assert isinstance(t, tn.Tensor) and t.numpy().tolist() == [0, 1, 2]


def test_numpy_dtypes_are_datatypes() -> None:
    for d, text in [(np.dtype("int8"), "int8"), (np.dtype(np.float16), "float16"),
                    (np.dtype("uint64"), "uint64"), (np.dtype(bool), "bool")]:
        got = echo(d)
        assert type(got) is tn.DataType and got == text
        assert type(tn.convert(d)) is tn.DataType and tn.convert(d) == text
    ml_dtypes = pytest.importorskip("ml_dtypes")
    for t, parts in [(ml_dtypes.bfloat16, (4, 16, 1)), (ml_dtypes.float8_e4m3fn, (10, 8, 1)),
                     (ml_dtypes.int4, (0, 4, 1))]:
        assert echo(np.dtype(t)).dlpack_data_type == parts
    with pytest.raises(ValueError, match="argument 0: .*cannot parse 'object' as a DataType"):
        echo(np.dtype(object))


# ---------------------------------------------------------------------------
# Devices

def test_dl_device_type() -> None:
    want = {"kDLCPU": 1, "kDLCUDA": 2, "kDLCUDAHost": 3, "kDLOpenCL": 4, "kDLVulkan": 7,
            "kDLMetal": 8, "kDLVPI": 9, "kDLROCM": 10, "kDLROCMHost": 11, "kDLExtDev": 12,
            "kDLCUDAManaged": 13, "kDLOneAPI": 14, "kDLWebGPU": 15, "kDLHexagon": 16,
            "kDLMAIA": 17, "kDLTrn": 18}
    assert {m.name: int(m) for m in tn.DLDeviceType} == want
    assert tn.DLDeviceType.kDLCUDA == 2 and isinstance(tn.DLDeviceType.kDLCPU, int)


@pytest.mark.parametrize("args,want", [
    (("cpu",), (1, 0)), (("cpu", 0), (1, 0)), (("cpu:0",), (1, 0)),
    (("cuda",), (2, 0)), (("cuda:3",), (2, 3)), (("cuda", 3), (2, 3)),
    (("metal:2",), (8, 2)), (("mps",), (8, 0)), (("ext_dev:0",), (12, 0)),
    (("webgpu",), (15, 0)), (("wgpu", 1), (15, 1)), (("trn",), (18, 0)),
    ((tn.DLDeviceType.kDLCUDA, 0), (2, 0)), ((tn.DLDeviceType.kDLMetal, 2), (8, 2)),
    (("cpu", np.int32(1)), (1, 1)), ((np.int64(2), np.uint8(5)), (2, 5)), ((1,), (1, 0)),
])
def test_device_constructor(args: Tuple[Any, ...], want: Tuple[int, int]) -> None:
    for dev in (tn.device(*args), tn.Device(*args)):
        assert type(dev) is tn.Device
        assert (dev.dlpack_device_type(), dev.index) == want
        assert (dev.device_type, dev.device_id) == want
        assert isinstance(dev.dlpack_device_type(), tn.DLDeviceType)
        assert echo(dev) == dev
        assert pickle.loads(pickle.dumps(dev)) == dev
        assert hash(dev) == hash(tn.Device(*want))


def test_device_text() -> None:
    dev = tn.device("cuda", 0)
    assert str(dev) == "cuda:0" and repr(dev) == "device(type='cuda', index=0)"
    assert dev.type == "cuda" and dev.index == 0
    assert dev.dlpack_device_type() == tn.DLDeviceType.kDLCUDA
    ext = tn.device("ext_dev:0")
    assert str(ext) == "ext_dev:0" and repr(ext) == "device(type='ext_dev', index=0)"
    assert tn.device("metal:1") == tn.device("mps", 1) and str(tn.device("mps")) == "metal:0"
    assert tn.cpu(2) == tn.device("cpu:2") and str(tn.cpu()) == "cpu:0"
    odd = tn.Device(99, 1)  # a type DLPack does not name
    assert odd.type == "99" and str(odd) == "99:1" and odd.dlpack_device_type() == 99
    assert type(odd.dlpack_device_type()) is int
    assert tn.empty((1,)).device == tn.device("cpu")


@pytest.mark.parametrize("args,err,match", [
    (("tpu",), ValueError, "unknown device 'tpu'"),
    (("cpu:0:0",), ValueError, "bad device id"),
    (("cpu:?",), ValueError, "bad device id"),
    (("cpu:",), ValueError, "bad device id"),
    (("cuda:1", 1), ValueError, "given twice"),
    (("cpu", "?"), TypeError, "argument 'device_id' must be an int, not str"),
    (("cpu", 1.5), TypeError, "argument 'device_id' must be an int, not float"),
    (("cpu", True), TypeError, "argument 'device_id' must be an int, not bool"),
    ((1.0, 0), TypeError, "argument 'device_type' must be a str or an int, not float"),
    ((None, 0), TypeError, "argument 'device_type' must be a str or an int, not NoneType"),
    (("cpu", -1), ValueError, "out of range"),
    ((1, 2 ** 31), ValueError, "out of range"),
    ((-2, 0), ValueError, "out of range"),
])
def test_device_errors(args: Tuple[Any, ...], err: type, match: str) -> None:
    with pytest.raises(err, match=match):
        tn.device(*args)


def test_device_index_that_lies() -> None:
    class Index:
        def __index__(self) -> int:
            raise RuntimeError("no index")

    bad: Any = Index()
    with pytest.raises(RuntimeError, match="no index"):
        tn.device("cpu", bad)
    assert tn.device("cpu", operator.index(3)).index == 3


# ---------------------------------------------------------------------------
# A program in tvm-ffi's style, unchanged but for the import

def test_tvm_ffi_style_program() -> None:
    import tvmnode as tvm_ffi

    f32 = tvm_ffi.dtype("float32")
    assert f32.bits == 32 and f32.itemsize == 4 and f32.lanes == 1
    v4 = f32.with_lanes(4)
    assert v4 == "float32x4" and v4.itemsize == 16
    assert tvm_ffi.dtype.from_dlpack_data_type((2, 16, 1)) == "float16"
    assert tvm_ffi.dtype("bool").type_code == 6
    assert tvm_ffi.dtype("fp8_e4m3fn").type_code == 10
    fp8 = tvm_ffi.float8_e4m3fn
    assert fp8.is_float and fp8.bits == 8 and fp8.itemsize == 1
    assert not tvm_ffi.int32.is_float and tvm_ffi.int32.is_integer
    x = np.array([1, 2, 3], dtype=tvm_ffi.float32)
    assert x.dtype == tvm_ffi.float32
    dev = tvm_ffi.device("cuda", 0)
    assert dev.dlpack_device_type() == tvm_ffi.DLDeviceType.kDLCUDA
    assert dev.index == 0 and str(dev) == "cuda:0" and dev.type == "cuda"
    assert tvm_ffi.device("cuda:0") == tvm_ffi.device("cuda", 0)
    assert tvm_ffi.device("cpu:0") == tvm_ffi.device("cpu", 0)
    t = tvm_ffi.from_dlpack(np.arange(6, dtype="float32").reshape(2, 3))
    assert t.dtype == tvm_ffi.float32 and t.device == tvm_ffi.device("cpu", 0)
    del t
