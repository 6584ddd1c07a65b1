"""test_tvm_ffi_style.py: programs written for apache-tvm-ffi run unchanged
through an import alias.

Each test is a short program in tvm-ffi's style and spellings (its guide's
examples and the habits its own tests show), with only the import line
changed to `import tvmnode as tvm_ffi`. What a program needs that only
tvm-ffi's test library registers (its testing.* functions) is registered
here first, from Python or from C with load_inline.
"""
import copy
from typing import Any, Dict, List, Optional

import numpy as np
import pytest

import tvmnode as tvm_ffi
from tvmnode import dataclasses as tvm_ffi_dataclasses


def test_functions_and_callbacks() -> None:
    fecho = tvm_ffi.get_global_func("testing.echo")
    assert fecho(1) == 1

    @tvm_ffi.register_global_func("example.add_one")
    def add_one(a: int) -> int:
        return a + 1

    try:
        assert tvm_ffi.get_global_func("example.add_one")(1) == 2
        f = tvm_ffi.convert(lambda x: x * 2)
        assert isinstance(f, tvm_ffi.Function) and f(21) == 42
        assert tvm_ffi.get_global_func("example.missing", allow_missing=True) is None
        assert "example.add_one" in tvm_ffi.registry.list_global_func_names()
    finally:
        tvm_ffi.remove_global_func("example.add_one")


def test_containers() -> None:
    arr = tvm_ffi.convert([1, 2, 3, 4])
    assert isinstance(arr, tvm_ffi.Array) and len(arr) == 4 and arr[0] == 1
    with pytest.raises(TypeError):
        arr[0] = 10
    assert tvm_ffi.Array([1, 2]) == tvm_ffi.Array([1, 2])
    assert hash(tvm_ffi.Array([1, 2])) == hash(tvm_ffi.Array([1, 2]))
    assert ("k", 1) in tvm_ffi.Array([["k", 1]])

    lst = tvm_ffi.List([1, 2, 3])
    lst.append(4)
    lst[0] = 10
    assert list(lst) == [10, 2, 3, 4] and lst[1:3] == [2, 3]
    lst.reverse()
    assert list(lst) == [4, 3, 2, 10]
    assert tvm_ffi.List([1, 2]) == tvm_ffi.List([1, 2]) == [1, 2]

    m = tvm_ffi.convert({"a": 1, "b": 2})
    assert isinstance(m, tvm_ffi.Map) and m["a"] == 1 and len(m) == 2
    assert m == tvm_ffi.Map({"b": 2, "a": 1})
    d = tvm_ffi.Dict({"a": 1, "b": 2})
    d["c"] = 3
    del d["a"]
    d.update({"e": 5})
    assert dict(d.items()) == {"b": 2, "c": 3, "e": 5}

    t = tvm_ffi.convert((1, "hello", 3.14))
    assert isinstance(t, tvm_ffi.Array)


def test_tensor_dtype_device() -> None:
    np_data = np.array([1, 2, 3, 4], dtype=np.float32)
    x = tvm_ffi.from_dlpack(np_data)
    assert np.from_dlpack(x).tolist() == [1, 2, 3, 4]
    assert x.dtype == tvm_ffi.float32 == tvm_ffi.dtype("float32")
    assert tvm_ffi.dtype("float32").bits == 32 and tvm_ffi.dtype("int8").itemsize == 1
    assert np.dtype(tvm_ffi.dtype("float32")) == np.float32
    assert tvm_ffi.dtype("float8_e4m3fn").bits == 8
    dev = tvm_ffi.device("cpu", 0)
    assert dev.dlpack_device_type() == tvm_ffi.DLDeviceType.kDLCPU
    assert x.device == dev


class Workspace:
    def __init__(self, value: int) -> None:
        self.value = value

    def __tvm_ffi_int__(self) -> int:
        return self.value


def test_conversion_protocols() -> None:
    assert tvm_ffi.get_global_func("testing.echo")(Workspace(7)) == 7


@tvm_ffi_dataclasses.py_class("tvm_ffi_style.Point")
class Point(tvm_ffi.Object):
    x: int
    y: int = 0


def test_py_class_and_structural() -> None:
    p = Point(1, y=2)
    assert (p.x, p.y) == (1, 2)
    assert tvm_ffi.structural_equal(Point(1, 2), Point(1, 2))
    assert tvm_ffi.structural_hash(Point(1, 2)) == tvm_ffi.structural_hash(Point(1, 2))
    assert tvm_ffi.get_first_structural_mismatch(Point(1, 2), Point(1, 2)) is None
    mismatch = tvm_ffi.get_first_structural_mismatch(Point(1, 2), Point(1, 3))
    assert mismatch is not None
    lhs, rhs = mismatch
    assert "y" in str(lhs)


def test_load_inline(tmp_path: Any) -> None:
    mod = tvm_ffi.cpp.load_inline(
        name="tvm_ffi_style_add_one",
        build_directory=str(tmp_path),
        c_sources=r"""
            void add_one_cpu(DLTensor *x, DLTensor *y) {
              for (int64_t i = 0; i < x->shape[0]; ++i)
                ((float *)y->data)[i] = ((float *)x->data)[i] + 1;
            }
        """,
        functions="add_one_cpu")
    x = np.array([1, 2, 3, 4, 5], dtype=np.float32)
    y = np.empty_like(x)
    mod.add_one_cpu(x, y)
    np.testing.assert_equal(x + 1, y)


@tvm_ffi_dataclasses.py_class("tvm_ffi_style.Graph")
class Graph(tvm_ffi.Object):
    name: str
    nodes: List[int] = tvm_ffi_dataclasses.field(default_factory=list)
    attrs: Dict[str, int] = tvm_ffi_dataclasses.field(default_factory=dict)
    parent: Optional["Graph"] = None

    @tvm_ffi.method
    def size(self) -> int:
        return len(self.nodes)


class Color(tvm_ffi_dataclasses.IntEnum, type_key="tvm_ffi_style.Color"):
    RED = 0
    GREEN = 1


def test_dataclass_program() -> None:
    g = Graph("g", nodes=[1, 2, 3], attrs={"depth": 2})
    child = Graph("child", parent=g)
    assert child.parent is not None and child.parent.same_as(g)
    assert g.size() == 3 and list(g.nodes) == [1, 2, 3] and g.attrs["depth"] == 2
    assert [f.name for f in tvm_ffi_dataclasses.fields(Graph)] == ["name", "nodes", "attrs",
                                                                    "parent"]
    h = copy.copy(g)
    assert tvm_ffi.structural_equal(g, h) and not h.same_as(g)
    back = tvm_ffi.load_json(tvm_ffi.save_json(g))
    assert tvm_ffi.structural_equal(g, back)
    nested: Any = [["not an int"]]
    with pytest.raises(TypeError, match="nodes"):
        Graph("bad", nodes=nested)
    green: Any = Color.GREEN
    assert Color(1).same_as(green) and green == 1 and green.name == "GREEN"


def test_type_metadata() -> None:
    info = tvm_ffi.get_type_info(Graph)
    assert info.type_key == "tvm_ffi_style.Graph"
    assert [f.name for f in info.fields] == ["name", "nodes", "attrs", "parent"]
    assert tvm_ffi.get_global_func_metadata("testing.echo") == {}
    mod = tvm_ffi.get_type_info(tvm_ffi.ir.IRModule)
    assert "functions" in [f.name for f in mod.fields]


def test_errors() -> None:
    with pytest.raises(ValueError, match="message"):
        tvm_ffi.get_global_func("testing.raise")("ValueError", "message")
