"""tvmnode.Tensor: the Python face of tn.Tensor.

The C type (_ffi.Tensor) does the work: DLPack capsules both ways, the
buffer protocol, shape and dtype read from the DLTensor. This subclass adds
what needs numpy, imported only when asked for.
"""
from __future__ import annotations

from typing import Any, Sequence

from . import _ffi
from ._core import register_object


@register_object("tn.Tensor")
class Tensor(_ffi.Tensor):
    """An n-dimensional array, shared with numpy and other DLPack users
    without copying."""

    __slots__ = ()

    def numpy(self) -> Any:
        """A numpy array over the same memory (no copy)."""
        import numpy

        return numpy.from_dlpack(self)

    def __repr__(self) -> str:
        return "tvmnode.Tensor(shape=%s, dtype=%s)" % (self.shape, self.dtype)


def _numpy_layout_matches() -> bool:
    """Whether _ffi reads numpy arrays the way numpy describes them: the
    fast path for array arguments is trusted only when this holds for every
    dtype it handles, on contiguous, strided, read-only and offset views."""
    try:
        import numpy as np
    except ImportError:
        return False
    codes = {"b": 6, "i": 0, "u": 1, "f": 2, "c": 5}
    try:
        for dt in ("bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64",
                   "uint64", "float16", "float32", "float64", "complex64", "complex128"):
            base = np.zeros((4, 6), dtype=dt)
            ro = base.copy()
            ro.setflags(write=False)
            for a in (base, base[1:, ::2], base.T, ro, np.zeros((), dtype=dt)):
                data, nd, shape, strides, code, bits, byteorder, writeable = _ffi._numpy_probe(a)
                if (data != a.__array_interface__["data"][0] or nd != a.ndim
                        or shape != a.shape or strides != a.strides
                        or code != codes[a.dtype.kind] or bits != a.dtype.itemsize * 8
                        or byteorder != a.dtype.byteorder
                        or bool(writeable) != a.flags.writeable):
                    return False
        return True
    except Exception:
        return False


_ffi._set_numpy_check(_numpy_layout_matches)


def from_dlpack(x: Any) -> Tensor:
    """A Tensor viewing a DLPack producer (a numpy array, a capsule, ...)
    without copying."""
    return _ffi.from_dlpack(x)


def empty(shape: Sequence[int], dtype: str = "float32") -> Tensor:
    """A new zero-filled CPU tensor."""
    return _ffi.empty(tuple(shape), dtype)
