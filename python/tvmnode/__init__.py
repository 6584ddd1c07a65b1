"""tvmnode: the Python binding of the tvmnode C library.

Objects made in C come to Python as proxies whose classes are built from
the reflection table (`call.op`, `call.args[0]`, `var.name_hint` read the C
fields directly); functions in the global registry are called with
`get_global_func(name)(...)`; Python callables become functions C can call
with `register_func`. The tensor IR and its passes are in `tvmnode.ir` and
`tvmnode.transform`.
"""
from __future__ import annotations

from . import _ffi
from ._ffi import Dict, List
from ._core import (
    Array,
    DataType,
    Device,
    Function,
    Map,
    Object,
    Shape,
    TVMNodeError,
    convert,
    cpu,
    get_global_func,
    list_global_func_names,
    load_json,
    register_error,
    register_func,
    register_object,
    remove_global_func,
    save_json,
)
from ._paths import _crt_dir, _include_dir
from .access_path import AccessKind, AccessPath, AccessStep
from .structural import get_first_structural_mismatch, structural_equal, structural_hash
from ._tensor import Tensor, empty, from_dlpack

__version__ = "0.1.0"

__all__ = [
    "Array", "DataType", "Device", "Dict", "Function", "List", "Map", "Object", "Shape",
    "TVMNodeError",
    "Tensor", "convert", "cpu", "empty", "from_dlpack", "get_global_func",
    "list_global_func_names", "load_json", "register_error", "register_func",
    "register_object", "remove_global_func", "save_json", "live_object_count", "ir",
    "transform", "instrument", "runtime", "dataclasses",
    "AccessKind", "AccessPath", "AccessStep", "get_first_structural_mismatch",
    "structural_equal", "structural_hash", "access_path", "structural",
]


def live_object_count() -> int:
    """tvmnode objects alive now, over all threads (tn_object_live_count)."""
    return _ffi.live_object_count()


from . import access_path, dataclasses, instrument, ir, runtime, structural, transform  # noqa: E402
