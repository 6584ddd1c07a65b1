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
    DataTypeCode,
    Device,
    DLDeviceType,
    Function,
    Map,
    Object,
    Shape,
    TVMNodeError,
    convert,
    cpu,
    device,
    get_global_func,
    init_ffi_api,
    list_global_func_names,
    load_json,
    register_error,
    register_func,
    register_global_func,
    register_object,
    remove_global_func,
    save_json,
)
from ._metadata import (
    TypeField,
    TypeInfo,
    TypeMethod,
    TypeSchema,
    get_global_func_metadata,
    get_type_info,
)
from ._dtypes import (  # noqa: A004 (tvmnode.bool is a DataType, as tvm_ffi.bool)
    bfloat16,
    bool,
    float4_e2m1fn,
    float4_e2m1fn_x2,
    float4_e2m1fnx2,
    float6_e2m3fn,
    float6_e3m2fn,
    float8_e3m4,
    float8_e4m3,
    float8_e4m3b11fnuz,
    float8_e4m3fn,
    float8_e4m3fnuz,
    float8_e5m2,
    float8_e5m2fnuz,
    float8_e8m0fnu,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
)
from ._paths import _crt_dir, _include_dir
from .access_path import AccessKind, AccessPath, AccessStep
from .structural import get_first_structural_mismatch, structural_equal, structural_hash
from ._tensor import Tensor, empty, from_dlpack

__version__ = "0.1.0"

# tvm-ffi's name for the class: tvmnode.dtype("float32") is DataType("float32")
dtype = DataType

__all__ = [
    "Array", "DataType", "DataTypeCode", "Device", "DLDeviceType", "Dict", "Function", "List",
    "Map", "Object", "Shape", "TVMNodeError",
    "Tensor", "convert", "cpu", "device", "dtype", "empty", "from_dlpack", "get_global_func",
    "list_global_func_names", "load_json", "register_error", "register_func",
    "register_object", "remove_global_func", "save_json", "live_object_count", "ir",
    "transform", "instrument", "runtime", "dataclasses",
    "TypeField", "TypeInfo", "TypeMethod", "TypeSchema", "get_global_func_metadata",
    "get_type_info", "init_ffi_api", "register_global_func", "registry", "cpp",
    "AccessKind", "AccessPath", "AccessStep", "get_first_structural_mismatch",
    "structural_equal", "structural_hash", "access_path", "structural",
]


def live_object_count() -> int:
    """tvmnode objects alive now, over all threads (tn_object_live_count)."""
    return _ffi.live_object_count()


from . import (access_path, container, cpp, dataclasses, instrument, ir, registry,  # noqa: E402
               runtime, structural, transform)
from .dataclasses import MISSING, method  # noqa: E402  (tvm_ffi.MISSING, tvm_ffi.method)

__all__ += ["MISSING", "container", "method"]
