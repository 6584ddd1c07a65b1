"""What apache-tvm-ffi's own tests showed missing after the first slices
(python/tools/tvm_ffi_tests.py measures it): frozen and non-frozen
py_classes deriving from each other, a field annotated `object` refused,
the class attribute `__tvm_ffi_type_info__`, and `MISSING` with the
container classes at tvm-ffi's places (`tvmnode.MISSING`,
`tvmnode.container`)."""
from __future__ import annotations

import itertools
from typing import Any, Optional

import pytest

import tvmnode as tn
from tvmnode import ir
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
    class ThawedChild(FrozenBase):  # type: ignore[misc]
        b: int

    c = ThawedChild(1, 2)
    assert (c.a, c.b) == (1, 2)
    c.b = 20
    assert c.b == 20
    # the parent's field stays frozen, in Python and in C
    with pytest.raises(FrozenInstanceError, match="field 'a' of frozen ThawedChild"):
        c.a = 10  # type: ignore[misc]
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
    class FrozenChild(MutableBase):  # type: ignore[misc]
        b: int

    c = FrozenChild(1, 2)
    c.a = 10  # type: ignore[misc]
    assert c.a == 10
    with pytest.raises(FrozenInstanceError, match="field 'b' of frozen FrozenChild"):
        c.b = 20  # type: ignore[misc]
    with pytest.raises(FrozenInstanceError):
        del c.b
    with pytest.raises(FrozenInstanceError):
        c.nope = 1  # type: ignore[attr-defined]
    assert (c.a, c.b) == (10, 2)
    # a bad value for the mutable field is still checked
    with pytest.raises(TypeError):
        c.a = "x"  # type: ignore[assignment, misc]
    assert c.a == 10


def test_three_levels_alternating_frozen() -> None:
    @py_class(_key("L1"), frozen=True)
    class L1(tn.Object):
        a: int

    @py_class(_key("L2"))
    class L2(L1):  # type: ignore[misc]
        b: int

    @py_class(_key("L3"), frozen=True)
    class L3(L2):  # type: ignore[misc]
        c: int

    x = L3(1, 2, 3)
    x.b = 20  # type: ignore[misc]
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


# ---- cls.__tvm_ffi_type_info__ -----------------------------------------------------

def test_tvm_ffi_type_info_class_attribute() -> None:
    @py_class(_key("Info"))
    class Info(tn.Object):
        a: int
        b: str = "s"

    @py_class(_key("InfoChild"))
    class InfoChild(Info):
        c: float = 0.0

    ti = Info.__tvm_ffi_type_info__  # type: ignore[attr-defined]
    assert isinstance(ti, tn.TypeInfo)
    assert ti.type_key == tn.get_type_info(Info).type_key == Info._tn_type_key
    assert [f.name for f in ti.fields] == ["a", "b"]
    assert Info(1).__tvm_ffi_type_info__.type_index == ti.type_index
    child = InfoChild.__tvm_ffi_type_info__  # type: ignore[attr-defined]
    assert child.type_key == InfoChild._tn_type_key
    assert child.parent_type_info.type_key == ti.type_key
    # classes made from the reflection table and attached ones have it too
    assert ir.Var.__tvm_ffi_type_info__.type_key == "ir.Var"  # type: ignore[attr-defined]
    var_cls: Any = type(ir.var("x"))
    assert var_cls.__tvm_ffi_type_info__.type_key == "ir.Var"


# ---- MISSING and tvmnode.container ---------------------------------------------------

def test_missing_at_top_level_and_in_container() -> None:
    from tvmnode import container, dataclasses

    assert tn.MISSING is dataclasses.MISSING is container.MISSING
    assert repr(tn.MISSING) == "MISSING"
    m = tn.Map({"a": 1})
    assert m.get("b", tn.MISSING) is tn.MISSING
    assert m.get("a", tn.MISSING) == 1
    assert (container.Array, container.List, container.Map, container.Dict) == \
        (tn.Array, tn.List, tn.Map, tn.Dict)

    @py_class(_key("Req"))
    class Req(tn.Object):
        a: int = field(default=tn.MISSING)

    with pytest.raises(TypeError, match="a"):
        Req()
    assert Req(3).a == 3


# ---- keys() / values() / items() of Map and Dict are views ------------------------

def test_map_and_dict_views() -> None:
    import collections.abc as abc

    m = tn.Map({"a": 1, "b": 2})
    ks, vs, its = m.keys(), m.values(), m.items()
    assert isinstance(ks, abc.KeysView) and isinstance(vs, abc.ValuesView)
    assert isinstance(its, abc.ItemsView)
    assert list(ks) == ["a", "b"] and list(vs) == [1, 2]
    assert list(its) == [("a", 1), ("b", 2)]
    assert len(ks) == len(vs) == len(its) == 2
    assert "a" in ks and "z" not in ks and 2 in vs and 3 not in vs
    assert ("a", 1) in its and ("a", 2) not in its and ("z", 1) not in its
    # keys and items are sets, as a dict's
    assert ks == {"a", "b"} and ks & {"b", "c"} == {"b"} and ks | {"c"} == {"a", "b", "c"}
    assert its - {("a", 1)} == {("b", 2)}
    assert dict(its) == {"a": 1, "b": 2}

    d = tn.Dict({"x": 1})
    dk, di = d.keys(), d.items()
    d["y"] = 2
    del d["x"]
    # a view follows the Dict it was taken from
    assert list(dk) == ["y"] and list(di) == [("y", 2)] and len(dk) == 1
    d.clear()
    assert len(di) == 0 and list(d.values()) == []


# ---- an ml_dtypes array as an argument, to convert() and from_dlpack ------------

@pytest.mark.parametrize("name", ["bfloat16", "float8_e4m3fn", "float8_e5m2"])
def test_ml_dtypes_array_as_argument(name: str) -> None:
    np = pytest.importorskip("numpy")
    ml_dtypes = pytest.importorskip("ml_dtypes")
    tp = getattr(ml_dtypes, name, None)
    if tp is None:
        pytest.skip("this ml_dtypes has no %s" % name)
    x = np.array([[0.5, -2.0, 1.5], [3.0, -0.5, 1.0]], dtype=tp)
    echo = tn.get_global_func("testing.echo")
    for t in (echo(x), tn.convert(x), tn.from_dlpack(x)):
        assert type(t) is tn.Tensor and t.dtype == name and t.shape == (2, 3)
        assert t.data_ptr == x.__array_interface__["data"][0]  # no copy
        assert t.numpy().view(np.uint8).tobytes() == x.view(np.uint8).tobytes()
    # strided views keep their layout
    s = echo(x[:, ::2])
    assert s.shape == (2, 2)
    assert np.array_equal(s.numpy().astype(np.float32), x[:, ::2].astype(np.float32))
    # a C function taking a DLTensor reads the elements
    nbytes = tn.cpp.load_inline(
        "parity_ml_dtypes",
        c_sources="int64_t nbytes(DLTensor *t) {"
                  " return t->shape[0] * t->shape[1] * t->dtype.bits / 8; }",
        functions=["nbytes"]).nbytes
    assert nbytes(x) == 6 * x.dtype.itemsize
    del x, s, t


def test_dlpack_refusal_without_ml_dtypes_type_is_kept() -> None:
    np = pytest.importorskip("numpy")
    echo = tn.get_global_func("testing.echo")
    rec = np.zeros(2, dtype=[("a", "<f4"), ("b", "<i4")])
    # numpy's own BufferError, named for the argument, as before
    with pytest.raises(BufferError, match="testing.echo: argument 0"):
        echo(rec)
    with pytest.raises(BufferError):
        tn.from_dlpack(rec)
