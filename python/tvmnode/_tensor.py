"""tvmnode.Tensor: the Python face of tn.Tensor.

The C type (_ffi.Tensor) does the work: DLPack capsules both ways, the
buffer protocol, shape and dtype read from the DLTensor. This subclass adds
what needs numpy, imported only when asked for.
"""
from __future__ import annotations

import sys
from typing import Any, Optional, Sequence

from . import _ffi
from ._core import DataType, register_object


@register_object("tn.Tensor")
class Tensor(_ffi.Tensor):
    """An n-dimensional array, shared with numpy and other DLPack users
    without copying."""

    __slots__ = ()

    def numpy(self) -> Any:
        """A numpy array over the same memory (no copy). bfloat16, the
        float8/float6/float4 variants and int2/int4/uint2/uint4 come as
        ml_dtypes arrays when ml_dtypes is installed. BufferError naming
        the dtype for one numpy has no type for (see _check_numpy)."""
        import numpy

        try:
            _check_numpy(self)
        except BufferError:
            a = _ml_dtypes_array(self)
            if a is None:
                raise
            return a
        return numpy.from_dlpack(self)

    def __array__(self, dtype: Any = None, copy: Optional[bool] = None) -> Any:
        # numpy.asarray(t) reads the buffer protocol first; it gets here
        # when that fails, and would otherwise wrap the tensor in a 0-d
        # object array without a word.
        a = self.numpy()
        if dtype is not None:
            a = a.astype(dtype, copy=False)
        if copy:
            a = a.copy()
        return a

    def __repr__(self) -> str:
        return "tvmnode.Tensor(shape=%s, dtype=%s)" % (self.shape, self.dtype)


# (code, bits) numpy has a type for: bool, int/uint 8 to 64, float16/32/64,
# complex64/128. Not bfloat16 or float8 (those need ml_dtypes), handles,
# sub-byte widths or vector lanes.
_NUMPY_TYPES = {(6, 8)} | {(c, b) for c in (0, 1) for b in (8, 16, 32, 64)} | {
    (2, 16), (2, 32), (2, 64), (5, 64), (5, 128)}


def _check_numpy(t: "Tensor") -> None:
    dtype = t.dtype
    code, bits, lanes = dtype.dlpack_data_type
    if lanes != 1 or (code, bits) not in _NUMPY_TYPES:
        why = ("vector lanes" if lanes != 1 else "a sub-byte width" if bits % 8
               else "no numpy type")
        raise BufferError("a tvmnode.Tensor of dtype %s cannot be exported to numpy (%s)"
                          % (dtype, why))


# (code, bits) of a scalar ml_dtypes has a numpy type for, by its name there.
# ml_dtypes keeps an element narrower than a byte in a byte of its own (the
# value in the low bits), as a tvmnode tensor does.
_ML_DTYPES = {(4, 16): "bfloat16", (7, 8): "float8_e3m4", (8, 8): "float8_e4m3",
              (9, 8): "float8_e4m3b11fnuz", (10, 8): "float8_e4m3fn",
              (11, 8): "float8_e4m3fnuz", (12, 8): "float8_e5m2", (13, 8): "float8_e5m2fnuz",
              (14, 8): "float8_e8m0fnu", (15, 6): "float6_e2m3fn", (16, 6): "float6_e3m2fn",
              (17, 4): "float4_e2m1fn", (0, 4): "int4", (1, 4): "uint4", (0, 2): "int2",
              (1, 2): "uint2"}


def _ml_dtype(name: str) -> Any:
    """ml_dtypes' numpy dtype called `name`, or None (no ml_dtypes, or an
    older one without it)."""
    try:
        import ml_dtypes
        import numpy
    except ImportError:
        return None
    tp = getattr(ml_dtypes, name, None)
    return None if tp is None else numpy.dtype(tp)


def _ml_dtypes_array(t: "Tensor") -> Any:
    """The tensor as an ml_dtypes array over the same memory: exported as
    the unsigned integer of the element's size (which numpy takes through
    DLPack) and viewed as the ml_dtypes type; None when there is none."""
    code, bits, lanes = t.dtype.dlpack_data_type
    name = _ML_DTYPES.get((code, bits)) if lanes == 1 else None
    dt = None if name is None else _ml_dtype(name)
    if dt is None:
        return None
    import numpy

    raw = _ffi._tensor_reinterpret(t, "uint%d" % (8 * dt.itemsize))
    return numpy.from_dlpack(raw).view(dt)


def _from_ml_dtypes(x: Any) -> Optional[Tensor]:
    """A Tensor over a numpy array of an ml_dtypes type (numpy's __dlpack__
    refuses them): the same memory as unsigned integers of the element's
    size, read back as the DataType of the same name. None for anything
    else."""
    np = sys.modules.get("numpy")
    if np is None or not isinstance(x, np.ndarray):
        return None
    name = x.dtype.name
    if name not in _ML_DTYPES.values() or _ml_dtype(name) != x.dtype:
        return None
    raw = _ffi.from_dlpack(x.view("uint%d" % (8 * x.dtype.itemsize)))
    out: Tensor = _ffi._tensor_reinterpret(raw, name)
    return out


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
# an ml_dtypes array as a function argument, to convert() or from_dlpack:
# tried only once numpy's own __dlpack__ has refused it
_ffi._set_dlpack_fallback(_from_ml_dtypes)


def from_dlpack(x: Any) -> Tensor:
    """A Tensor viewing a DLPack producer (a numpy array, a capsule, ...)
    without copying; a numpy array of an ml_dtypes type (bfloat16,
    float8_e4m3fn, ...) too, which numpy itself cannot export."""
    return _ffi.from_dlpack(x)


def empty(shape: Sequence[int], dtype: str = "float32") -> Tensor:
    """A new zero-filled CPU tensor."""
    return _ffi.empty(tuple(shape), DataType(dtype))
