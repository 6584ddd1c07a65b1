"""Objects: classes from the reflection table, fields, identity, containers,
register_object (attach and declare), JSON, pickling."""
import gc
import pickle
import sys
from typing import Any

import pytest

import tvmnode as tn
from tvmnode import _ffi, ir

echo = tn.get_global_func("testing.echo")
type_info = tn.get_global_func("tn.type_info")
assert echo is not None and type_info is not None


def test_classes_follow_type_keys() -> None:
    x = ir.var("x", shape=(2, 3))
    y = ir.op.nn.relu(x)
    assert type(y) is ir.Call and isinstance(y, ir.Expr) and isinstance(y, tn.Object)
    assert y._type_key == "ir.Call"
    assert type(y.op) is ir.Op and y.op.name == "nn.relu"
    assert y.args[0] == x and y.args[0].name_hint == "x"
    assert isinstance(y.checked_type, ir.TensorType)
    assert y.checked_type.shape == (2, 3) and y.checked_type.dtype == "float32"
    assert y.attrs is None


def test_generated_class_for_attrs_node() -> None:
    x = ir.var("x", shape=(1, 4))
    w = ir.var("w", shape=(8, 4))
    d = ir.op.nn.dense(x, w, units=8)
    attrs = d.attrs
    assert isinstance(attrs, ir.Attrs)
    assert type(attrs).__name__ == "DenseAttrs" and type(attrs).__module__ == "tvmnode.ir"
    assert attrs.units == 8 and attrs.out_dtype == "void"
    assert attrs["units"] == 8 and attrs.keys() == ["units", "out_dtype", "weight_layout"]
    with pytest.raises(KeyError):
        attrs["nope"]


def test_fields_are_descriptors_from_reflection() -> None:
    f = ir.Call.__dict__["op"]
    assert isinstance(f, tn._ffi.Field) and f.name == "op"
    assert f.flags & _ffi.FIELD_READONLY
    names = [fd.name for fd in _ffi._type_fields(_ffi.type_index("ir.Call"))]
    assert names == ["checked_type", "op", "args", "attrs"]


def test_readonly_field_cannot_be_set() -> None:
    x = ir.var("x")
    with pytest.raises(AttributeError, match="name_hint.*read-only"):
        x.name_hint = "y"
    with pytest.raises(AttributeError, match="cannot be deleted"):
        del x.name_hint


def test_identity_equality_and_hash() -> None:
    x = ir.var("x")
    a = ir.Tuple([x, x])
    assert a.fields[0] == a.fields[1] == x  # same C object, different proxies
    assert a.fields[0] is not a.fields[1]
    assert hash(a.fields[0]) == hash(x)
    assert x.same_as(a.fields[1])
    assert ir.var("x") != x  # same name, different variable
    assert x != 1 and not (x == "x")
    d = {x: 1}
    assert d[a.fields[0]] == 1


def test_repr_uses_the_printers() -> None:
    arr = tn.convert([1, "a"])
    assert repr(arr) == '[1, "a"]'
    x = ir.var("x", shape=(1,))
    assert repr(ir.op.negative(x)).startswith("negative(%x)")
    assert repr(ir.TensorType((1, 2))) == "Tensor[(1, 2), float32]"


def test_list_and_dict_are_mutable() -> None:
    from tvmnode import _ffi as f
    lst = f.load_json('{"tvmnode.json": 1, "root": {"$node": 0}, '
                      '"nodes": [{"type": "tn.List", "items": [1]}]}')
    assert lst._type_key == "tn.List"
    lst.append(2)
    lst[0] = 10
    assert list(lst) == [10, 2]
    del lst[0]
    assert list(lst) == [2]
    d = f.load_json('{"tvmnode.json": 1, "root": {"$node": 0}, '
                    '"nodes": [{"type": "tn.Dict", "items": [["a", 1]]}]}')
    d["b"] = 2
    del d["a"]
    assert list(d.items()) == [("b", 2)]
    with pytest.raises(KeyError):
        del d["zz"]


def test_shape_compares_by_value() -> None:
    t = ir.TensorType((1, 640))
    s = t.shape
    assert isinstance(s, tn.Shape)
    assert s == (1, 640) and s == [1, 640] and s != (640, 1)
    assert len(s) == 2 and s[1] == 640 and list(s) == [1, 640]
    assert hash(s) == hash((1, 640))
    assert repr(s) == "Shape((1, 640))"


def test_unregistered_type_gets_a_generated_class() -> None:
    info = type_info("ir.Call")
    assert isinstance(info, tn.Map)
    assert info["type_key"] == "ir.Call" and [f["name"] for f in info["fields"]][1] == "op"


def test_empty_proxy_is_reported() -> None:
    v = ir.Var.__new__(ir.Var)
    with pytest.raises(ValueError, match="no handle"):
        v.name_hint
    with pytest.raises(ValueError, match="no handle"):
        echo(v)


def test_subclass_of_fast_class_is_safe() -> None:
    # a Python subclass that is never registered keeps CPython's GC layout
    # while its base was made a plain type: allocation and freeing must
    # still pair up
    class MyVar(ir.Var):
        def hello(self) -> str:
            return "hi " + self.name_hint

    for _ in range(100):
        v = MyVar("v")
        assert v.hello() == "hi v"
        v.extra = 1  # type: ignore[attr-defined]
        del v
    gc.collect()


# ---- register_object -----------------------------------------------------------

def test_register_object_attaches_to_existing_type() -> None:
    old = _ffi._registered_class(_ffi.type_index("ir.GlobalVar"))
    try:
        @tn.register_object("ir.GlobalVar")
        class MyGlobalVar(ir.GlobalVar):
            __slots__ = ()

            def at_name(self) -> str:
                return "@" + self.name_hint

        gv = echo(ir.GlobalVar("main"))
        assert type(gv) is MyGlobalVar and gv.at_name() == "@main"
    finally:
        assert old is not None
        _ffi._register_class(_ffi.type_index("ir.GlobalVar"), old)


@tn.register_object("pytest.Point")
class Point(tn.Object):
    x: int
    y: float = 0.5
    label: str = "p"


@tn.register_object("pytest.Point3", kind="dag")
class Point3(Point):
    z: Any = None


def test_declare_node_type_from_python() -> None:
    p = Point(1, 2.0)
    assert (p.x, p.y, p.label) == (1, 2.0, "p")
    q = Point(x=3)
    assert (q.x, q.y) == (3, 0.5)
    p.x = 10
    assert p.x == 10
    t = _ffi.type_index("pytest.Point")
    assert Point._tn_type_index == t and _ffi.type_is_node(t)
    info = type_info("pytest.Point")
    assert [f["name"] for f in info["fields"]] == ["x", "y", "label"]
    assert [f["kind"] for f in info["fields"]] == ["any"] * 3


def test_declared_type_errors() -> None:
    with pytest.raises(TypeError, match="missing required field 'x'"):
        Point()
    with pytest.raises(TypeError, match="field 'x' expects int, got str"):
        Point("one")
    with pytest.raises(TypeError, match="given twice"):
        Point(1, x=2)
    with pytest.raises(TypeError, match="at most 3"):
        Point(1, 2.0, "a", 4)
    with pytest.raises((TypeError, AttributeError), match="nope"):
        Point(1, nope=2)


def test_declared_type_used_from_c() -> None:
    p3 = Point3(1, 2.0, "a", z=tn.convert([1, 2]))
    assert type(p3).__mro__[1] is Point and p3.z[1] == 2
    # C builds one from JSON and reads its fields (tn_node_new / tn_node_get)
    text = tn.save_json(p3)
    back = tn.load_json(text)
    assert type(back) is Point3 and back.x == 1 and back.label == "a"
    assert ir.structural_equal(back, p3) and not back.same_as(p3)
    assert ir.structural_hash(back) == ir.structural_hash(p3)
    assert not ir.structural_equal(Point(1), Point(2))
    assert repr(Point(1)) == 'pytest.Point(x=1, y=0.5, label="p")'


def test_pickle_goes_through_json() -> None:
    x = ir.var("x", shape=(1, 3))
    f = ir.Function([x], ir.op.nn.relu(x))
    g = pickle.loads(pickle.dumps(f))
    assert type(g) is ir.Function and not g.same_as(f)
    assert ir.structural_equal(f, g)
    p = pickle.loads(pickle.dumps(Point(4)))
    assert p.x == 4


def test_save_load_json_keeps_sharing() -> None:
    x = ir.var("x", shape=(2,))
    y = ir.op.add(x, x)
    z = ir.op.multiply(y, y)
    text = tn.save_json(z, 1)
    back = tn.load_json(text)
    assert back.args[0] == back.args[1]
    assert not ir.structural_equal(back, z)  # a loaded variable is a new one
    assert ir.structural_equal(back, z, map_free_vars=True)
    with pytest.raises(ValueError, match="line 1"):
        tn.load_json("{not json")


def test_structural_equal_binds_function_params() -> None:
    a, b = ir.var("a", shape=(1,)), ir.var("b", shape=(1,))
    fa = ir.Function([a], ir.op.exp(a))
    fb = ir.Function([b], ir.op.exp(b))
    assert ir.structural_equal(fa, fb)
    assert ir.structural_hash(fa) == ir.structural_hash(fb)
    free = ir.Function([b], ir.op.exp(a))
    assert not ir.structural_equal(fa, free)
    with pytest.raises(ValueError, match="structural mismatch at"):
        ir.assert_structural_equal(fa, free)
    assert ir.structural_equal(ir.op.exp(a), ir.op.exp(b), map_free_vars=True)


def test_refcount_of_proxies_in_containers() -> None:
    x = ir.var("x")
    before = sys.getrefcount(x)
    arr = tn.convert([x, x, x])
    assert sys.getrefcount(x) == before
    assert x._use_count == 4
    del arr
    assert x._use_count == 1
