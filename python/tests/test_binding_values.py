"""Wrong results of issue 18, each pinned: NUL in names, constructors of
the containers, numpy bool and complex scalars, devices, unencodable
strings, and error kinds that are not Exceptions."""
from typing import Any

import numpy as np
import pytest

import tvmnode as tn

echo = tn.get_global_func("testing.echo")


def test_nul_in_names_is_refused() -> None:
    with pytest.raises(ValueError, match="NUL"):
        tn.get_global_func("testing.echo\0zz")
    with pytest.raises(ValueError, match="NUL"):
        tn.register_func("a.b\0c", lambda: 1)
    assert tn.get_global_func("a.b", allow_missing=True) is None
    with pytest.raises(ValueError, match="NUL"):
        tn.remove_global_func("testing.echo\0")
    with pytest.raises(ValueError, match="NUL"):
        echo(tn.DataType("float32\0junk"))
    with pytest.raises(ValueError):
        tn.register_object("my.Bad\0Key")(type("Bad", (tn.Object,), {"__annotations__": {"x": int}}))
    # values keep their NULs
    assert echo("a\0b") == "a\0b" and echo("a long string\0with a NUL") == "a long string\0with a NUL"


def test_constructors_build_at_once() -> None:
    a = tn.Array([1, 2, 3])
    assert type(a) is tn.Array and list(a) == [1, 2, 3] and a._type_key == "tn.Array"
    assert list(tn.Array()) == [] and list(tn.Array(range(3))) == [0, 1, 2]
    m = tn.Map({"a": 1, "b": [1, 2]})
    assert m["a"] == 1 and list(m["b"]) == [1, 2] and m._type_key == "tn.Map"
    assert tn.Map(a=1)["a"] == 1 and tn.Map([("x", 2)])["x"] == 2
    s = tn.Shape((1, 2))
    assert s == (1, 2) and s._type_key == "tn.Shape"
    bad_args: Any = (1, ["a"])
    for bad in (lambda: tn.Array(bad_args[0]), lambda: tn.Map(bad_args[0]),
                lambda: tn.Shape(bad_args[0]), lambda: tn.Shape(bad_args[1]),
                lambda: tn.Array([{1}])):
        with pytest.raises(TypeError):
            bad()


def test_list_and_dict_constructors() -> None:
    lst = tn.List([1, 2])
    assert type(lst) is tn.List and isinstance(lst, tn.Array) and lst._type_key == "tn.List"
    lst.append(3)
    lst.insert(0, 0)
    lst.extend([4, 5])
    assert list(lst) == [0, 1, 2, 3, 4, 5]
    assert lst.pop() == 5 and lst.pop(0) == 0 and list(lst) == [1, 2, 3, 4]
    lst.clear()
    assert len(lst) == 0
    d = tn.Dict({"a": 1}, b=2)
    assert type(d) is tn.Dict and d._type_key == "tn.Dict"
    d["c"] = 3
    assert d.pop("a") == 1 and d.pop("zz", None) is None and sorted(d.keys()) == ["b", "c"]
    with pytest.raises(KeyError):
        d.pop("zz")
    d.clear()
    assert len(d) == 0
    # what comes back from C is a List / Dict too
    assert type(echo(tn.List([1]))) is tn.List and type(echo(tn.Dict())) is tn.Dict
    with pytest.raises(TypeError, match="immutable"):
        tn.Array([1]).append(2)


def test_array_concatenation() -> None:
    a, b = tn.Array([1, 2]), tn.Array([3])
    assert list(a + b) == [1, 2, 3] and type(a + b) is tn.Array
    assert list(a + [9]) == [1, 2, 9] and list((0,) + a) == [0, 1, 2]
    assert type(tn.List([1]) + a) is tn.List
    with pytest.raises(TypeError):
        a + 1  # type: ignore[operator]


def test_numpy_bool_and_complex() -> None:
    assert echo(np.bool_(True)) is True and echo(np.bool_(False)) is False
    for v in (np.complex64(1 + 2j), np.complex128(1j), 1 + 2j):
        with pytest.raises(TypeError, match="complex"):
            echo(v)


def test_devices() -> None:
    for text, want in (("cuda:1", (2, 1)), ("cpu", (1, 0)), ("ext_dev:0", (12, 0))):
        d = tn.Device(text)
        assert (d.device_type, d.device_id) == want
        assert echo(d) == d
    with pytest.raises(ValueError, match="out of range"):
        tn.Device(1, 2 ** 31)
    with pytest.raises(ValueError):
        tn.Device("cuda:x")
    d = tn.Device(1)
    d.device_id = 2 ** 32 + 1  # wraps if not checked
    with pytest.raises(ValueError, match="out of range"):
        echo(d)


def test_lone_surrogate_error_comes_through() -> None:
    for arg in ("a\udc80b", ["x", "a\udc80b and more"]):
        with pytest.raises(UnicodeEncodeError):
            echo(arg)
    with pytest.raises(UnicodeEncodeError):
        tn.get_global_func("a\udc80")


def test_error_kinds_that_are_not_exceptions() -> None:
    raise_ = tn.get_global_func("testing.raise")
    for kind in ("SystemExit", "KeyboardInterrupt", "GeneratorExit"):
        with pytest.raises(tn.TVMNodeError) as info:
            raise_(kind, "from C")
        assert getattr(info.value, "_tn_kind") == kind and "from C" in str(info.value)
    with pytest.raises(ValueError):
        raise_("ValueError", "still mapped")
