"""Tensors: zero-copy exchange with numpy through DLPack (both ways, versioned
and legacy), the buffer protocol, lifetimes."""
import gc
import sys

import numpy as np
import pytest

import tvmnode as tn

echo = tn.get_global_func("testing.echo")
nop = tn.get_global_func("testing.nop")
assert echo is not None and nop is not None


def test_numpy_argument_is_a_zero_copy_tensor() -> None:
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = echo(a)
    assert isinstance(t, tn.Tensor)
    assert t.shape == (3, 4) and t.dtype == "float32" and t.ndim == 2
    assert t.device == tn.cpu(0)
    assert t.data_ptr == a.ctypes.data
    a[1, 2] = 100.0
    assert t.numpy()[1, 2] == 100.0
    t.numpy()[0, 0] = -1.0
    assert a[0, 0] == -1.0


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int32", "int64", "uint64",
                                   "float16", "float32", "float64", "bool"])
def test_dtypes(dtype: str) -> None:
    a = np.zeros((2, 2), dtype=dtype)
    t = tn.from_dlpack(a)
    assert t.dtype == dtype
    back = t.numpy()
    assert back.dtype == np.dtype(dtype) and back.ctypes.data == a.ctypes.data


def test_strided_view() -> None:
    a = np.arange(20, dtype=np.int32).reshape(4, 5)
    v = a[::2, 1:4]
    t = tn.from_dlpack(v)
    assert t.shape == (2, 3) and t.strides == (10, 1)
    assert np.array_equal(t.numpy(), v)


def test_read_only_array() -> None:
    a = np.arange(3, dtype=np.float64)
    a.setflags(write=False)
    t = tn.from_dlpack(a)
    assert t.shape == (3,)
    out = np.from_dlpack(t)
    assert np.array_equal(out, a)


def test_non_native_byte_order_falls_back_to_dlpack() -> None:
    a = np.arange(3, dtype=">f4")
    with pytest.raises(BufferError):
        tn.from_dlpack(a)  # numpy itself refuses to export big-endian data


def test_dlpack_versioned_and_legacy_capsules() -> None:
    t = tn.empty((2, 3), "float32")
    cap = t.__dlpack__(max_version=(1, 0))
    assert "dltensor_versioned" in repr(cap)
    t2 = tn.from_dlpack(cap)
    assert t2.shape == (2, 3) and t2.data_ptr == t.data_ptr
    legacy = t.__dlpack__()
    assert "dltensor" in repr(legacy) and "versioned" not in repr(legacy)
    t3 = tn.from_dlpack(legacy)
    assert t3.data_ptr == t.data_ptr
    with pytest.raises(ValueError, match="unconsumed"):
        tn.from_dlpack(legacy)  # a capsule is consumed once
    assert t.__dlpack_device__() == (1, 0)
    unused = t.__dlpack__(max_version=(1, 0))
    del unused  # an unconsumed capsule releases its reference
    with pytest.raises(BufferError, match="copy=True"):
        t.__dlpack__(copy=True)


def test_numpy_consumes_our_tensor() -> None:
    t = tn.empty((4,), "int32")
    a = np.from_dlpack(t)
    a[:] = [1, 2, 3, 4]
    assert list(np.asarray(t)) == [1, 2, 3, 4]
    m = memoryview(t)
    assert m.format == "i" and m.shape == (4,) and m.tolist() == [1, 2, 3, 4]
    m.release()


def test_tensor_keeps_numpy_memory_alive() -> None:
    a = np.arange(1000, dtype=np.float64)
    before = sys.getrefcount(a)
    t = tn.from_dlpack(a)
    assert sys.getrefcount(a) > before  # the buffer export holds the array
    del a
    gc.collect()
    assert t.numpy()[999] == 999.0
    del t
    gc.collect()


def test_array_refcount_restored_after_call() -> None:
    a = np.ones(5, dtype=np.float32)
    b = a.copy()
    before = (sys.getrefcount(a), sys.getrefcount(b))
    for _ in range(100):
        nop(a, b, a)
    assert (sys.getrefcount(a), sys.getrefcount(b)) == before


def test_tensor_through_containers() -> None:
    a = np.arange(4, dtype=np.int64)
    arr = tn.convert([a, {"w": a}])
    assert isinstance(arr[0], tn.Tensor) and arr[1]["w"].shape == (4,)


def test_not_a_tensor() -> None:
    with pytest.raises(TypeError, match="not a DLPack producer"):
        tn.from_dlpack(3)


def test_tensor_repr_and_empty() -> None:
    t = tn.empty([2], "int8")
    assert repr(t) == "tvmnode.Tensor(shape=(2,), dtype=int8)"
    with pytest.raises(ValueError, match="bad_dtype"):
        tn.empty([2], "bad_dtype")


def test_numpy_fast_path_layout_is_checked() -> None:
    from tvmnode import _tensor

    # the direct read of numpy's array struct is trusted only after this
    assert _tensor._numpy_layout_matches()
    for dt in ("complex64", "complex128"):
        a = np.ones((2, 2), dtype=dt)
        t = tn.from_dlpack(a)
        assert t.dtype == dt and t.data_ptr == a.ctypes.data
