"""What apache-tvm-ffi's own tests showed missing after the first slices
(python/tools/tvm_ffi_tests.py measures it): frozen and non-frozen
py_classes deriving from each other, and a field annotated `object`
refused."""
from __future__ import annotations

import itertools
from typing import Any, Optional

import pytest

import tvmnode as tn
from tvmnode.dataclasses import FrozenInstanceError, field, fields, py_class

_n = itertools.count()


def _key(name: str) -> str:
    return "pytest.compat_parity.%s.%d" % (name, next(_n))


# ---- frozen and non-frozen classes derive from each other ----------------------

def test_non_frozen_class_derived_from_frozen_one() -> None:
    @py_class(_key("FrozenBase"), frozen=True)
    class FrozenBase(tn.Object):
        a: int

    @py_class(_key("ThawedChild"))
    class ThawedChild(FrozenBase):
        b: int

    c = ThawedChild(1, 2)
    assert (c.a, c.b) == (1, 2)
    c.b = 20
    assert c.b == 20
    # the parent's field stays frozen, in Python and in C
    with pytest.raises(FrozenInstanceError, match="field 'a' of frozen ThawedChild"):
        c.a = 10
    with pytest.raises(AttributeError, match="read-only"):
        FrozenBase.__dict__["a"].__set__(c, 10)
    with pytest.raises(FrozenInstanceError):
        del c.a
    assert c.a == 1
    # the escape hatch still writes it
    next(f for f in fields(ThawedChild) if f.name == "a").set(c, 5)
    assert c.a == 5
    assert [(f.name, f.frozen) for f in fields(ThawedChild)] == [("a", True), ("b", False)]
    # a name that is no field is refused as before
    with pytest.raises(AttributeError):
        c.nope = 1  # type: ignore[attr-defined]


def test_frozen_class_derived_from_non_frozen_one() -> None:
    @py_class(_key("MutableBase"))
    class MutableBase(tn.Object):
        a: int

    @py_class(_key("FrozenChild"), frozen=True)
    class FrozenChild(MutableBase):
        b: int

    c = FrozenChild(1, 2)
    c.a = 10
    assert c.a == 10
    with pytest.raises(FrozenInstanceError, match="field 'b' of frozen FrozenChild"):
        c.b = 20
    with pytest.raises(FrozenInstanceError):
        del c.b
    with pytest.raises(FrozenInstanceError):
        c.nope = 1  # type: ignore[attr-defined]
    assert (c.a, c.b) == (10, 2)
    # a bad value for the mutable field is still checked
    with pytest.raises(TypeError):
        c.a = "x"  # type: ignore[assignment]
    assert c.a == 10


def test_three_levels_alternating_frozen() -> None:
    @py_class(_key("L1"), frozen=True)
    class L1(tn.Object):
        a: int

    @py_class(_key("L2"))
    class L2(L1):
        b: int

    @py_class(_key("L3"), frozen=True)
    class L3(L2):
        c: int

    x = L3(1, 2, 3)
    x.b = 20
    for name in ("a", "c"):
        with pytest.raises(FrozenInstanceError):
            setattr(x, name, 0)
    assert (x.a, x.b, x.c) == (1, 20, 3)
    assert tn.structural_equal(x, L3(1, 20, 3))


# ---- a field annotated `object` ----------------------------------------------------

def test_field_annotated_object_is_refused() -> None:
    key = _key("ObjField")
    with pytest.raises(TypeError, match="field 'x' of Bad is annotated 'object'.*typing.Any"):
        @py_class(key)
        class Bad(tn.Object):
            x: object

    with pytest.raises(TypeError, match="field 'y' of Bad2 is annotated 'object'"):
        @py_class(_key("ObjField2"))
        class Bad2(tn.Object):
            y: Optional[object] = None

    # nothing was registered: the key can be used again
    @py_class(key)
    class Good(tn.Object):
        x: Any
        y: int = 0

    g = Good("any")
    assert g.x == "any" and g.y == 0
    assert tn.get_type_info(key).type_key == key
