"""tvmnode.registry: the global function registry and type registration
under the module name tvm-ffi gives them (tvm_ffi.registry), for programs
that spell them that way. The same objects as at the top level."""
from __future__ import annotations

from ._core import (
    get_global_func,
    init_ffi_api,
    list_global_func_names,
    register_func,
    register_global_func,
    register_object,
    remove_global_func,
)
from ._metadata import get_global_func_metadata, get_type_info

__all__ = ["get_global_func", "get_global_func_metadata", "get_type_info", "init_ffi_api",
           "list_global_func_names", "register_func", "register_global_func",
           "register_object", "remove_global_func"]
