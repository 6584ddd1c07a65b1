"""tvmnode.container: the container classes under apache-tvm-ffi's module
name (`tvm_ffi.container`), with the `MISSING` sentinel that marks an
absent value (`Map.get(key, MISSING)`, a field with no default)."""
from ._core import Array, Map
from ._ffi import Dict, List
from .dataclasses import MISSING

__all__ = ["Array", "Dict", "List", "Map", "MISSING"]
