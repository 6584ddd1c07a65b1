"""tvmnode.dataclasses: node types declared from Python with dataclass
conventions (apache-tvm-ffi's py_class spellings)."""
import copy
import pickle
from typing import Any, Dict, List, Optional, cast

import pytest

import tvmnode as tn
from tvmnode import ir
from tvmnode.dataclasses import (KW_ONLY, MISSING, FrozenInstanceError, asdict, astuple, field,
                                 fields, is_dataclass, py_class, replace)


@py_class("testdc.Point")
class Point(tn.Object):
    x: int
    y: float = 0.0
    name: str = "origin point"
    tags: List[str] = field(default_factory=list, compare=False, repr=False)


@py_class("testdc.Frozen", frozen=True, eq=True)
class FrozenPair(tn.Object):
    a: int
    b: Optional[str] = None


@py_class("testdc.Point3", eq=True)
class Point3(Point):
    z: int = 0


@py_class("testdc.Tree", eq=True, unsafe_hash=True)
class Tree(tn.Object):
    label: str
    children: List["Tree"] = field(default_factory=list)
    weights: Dict[str, float] = field(default_factory=dict)


@py_class("testdc.Neg", eq=True)
class Neg(ir.Expr):
    value: ir.Expr


@py_class("testdc.KwOnly")
class KwOnly(tn.Object):
    a: int
    _: KW_ONLY
    b: int = 2
    c: int = field(default=3, init=False)


@py_class("testdc.Post")
class Post(tn.Object):
    n: int
    seen: List[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.n < 0:
            raise ValueError("n must be >= 0")

    def double(self) -> int:
        return self.n * 2


@py_class("testdc.Ordered", eq=True, order=True, frozen=True)
class Ordered(tn.Object):
    major: int
    minor: int = 0


class Payload:
    """A plain Python class: a field of this type crosses C opaque."""


@py_class("testdc.Holder")
class Holder(tn.Object):
    payload: Payload
    anything: Any = None


def test_init_positional_keyword_defaults() -> None:
    p = Point(1, y=2.5, tags=["a"])
    assert (p.x, p.y, p.name, list(p.tags)) == (1, 2.5, "origin point", ["a"])
    q = Point(x=3)
    assert (q.x, q.y, q.name, len(q.tags)) == (3, 0.0, "origin point", 0)
    assert type(p) is Point and isinstance(p, tn.Object)
    assert p._type_key == "testdc.Point"


def test_default_factory_is_called_per_object() -> None:
    calls: List[int] = []

    def make() -> List[int]:
        calls.append(1)
        return [len(calls)]

    @py_class("testdc.Factory")
    class Factory(tn.Object):
        items: List[int] = field(default_factory=make)

    assert list(Factory().items) == [1]
    assert list(Factory().items) == [2]
    assert list(Factory(items=[9]).items) == [9]
    assert len(calls) == 2


def test_repr_skips_repr_false_fields() -> None:
    assert repr(Point(1, 2.0, tags=["x"])) == "Point(x=1, y=2.0, name='origin point')"
    assert repr(FrozenPair(1, "b")) == "FrozenPair(a=1, b='b')"


def test_missing_required_argument() -> None:
    with pytest.raises(TypeError, match=r"Point.__init__\(\) missing 1 required argument: 'x'"):
        cast(Any, Point)()
    with pytest.raises(TypeError, match="unexpected keyword argument 'w'"):
        cast(Any, Point)(1, w=2)
    with pytest.raises(TypeError, match="multiple values for argument 'x'"):
        cast(Any, Point)(1, x=2)
    with pytest.raises(TypeError, match="takes 4 positional arguments but 5 were given"):
        cast(Any, Point)(1, 2.0, "n", [], 5)


def test_wrong_field_type_names_the_field() -> None:
    with pytest.raises(TypeError, match="field 'x' expects int, got str"):
        Point(cast(Any, "one"))
    with pytest.raises(TypeError, match="field 'name' expects str, got int"):
        Point(1, name=cast(Any, 3))
    with pytest.raises(TypeError, match="field 'tags'"):
        Point(1, tags=cast(Any, [1, 2]))
    with pytest.raises(TypeError, match="field 'value'"):
        Neg(cast(Any, 1))
    with pytest.raises(TypeError, match="field 'payload' expects Payload, got int"):
        Holder(cast(Any, 5))
    # assignment is checked by C too
    p = Point(1)
    with pytest.raises(TypeError, match="x"):
        p.x = cast(Any, "no")
    assert p.x == 1


def test_assignment_and_typed_containers() -> None:
    p = Point(1)
    p.x = 5
    p.tags = ["a", "b"]
    assert p.x == 5 and list(p.tags) == ["a", "b"]
    t = Tree("root", [Tree("leaf")], {"w": 1.5})
    assert t.children[0].label == "leaf" and t.weights["w"] == 1.5


def test_frozen() -> None:
    f = FrozenPair(1)
    with pytest.raises(FrozenInstanceError):
        f.a = 2  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del f.a
    # read-only in C as well: the field descriptor refuses too
    with pytest.raises(AttributeError, match="read-only"):
        type(f).__dict__["a"].__set__(f, 3)
    assert f.a == 1
    # a non-frozen class may derive from it: its own fields are writable,
    # the inherited ones stay frozen (test_compat_parity has the details)
    @py_class("testdc.Thawed")
    class Thawed(FrozenPair):  # type: ignore[misc]
        c: int = 0

    t = Thawed(1)
    t.c = 2
    with pytest.raises(FrozenInstanceError):
        t.a = 2  # type: ignore[misc]
    assert (t.a, t.c) == (1, 2)


def test_eq_and_hash_are_structural() -> None:
    assert FrozenPair(1, "x") == FrozenPair(1, "x")
    assert FrozenPair(1, "x") != FrozenPair(2, "x")
    assert hash(FrozenPair(1, "x")) == hash(FrozenPair(1, "x"))
    assert len({FrozenPair(1), FrozenPair(1), FrozenPair(2)}) == 2
    # eq=False (the default): identity, as for every tvmnode object
    a, b = Point(1), Point(1)
    assert a != b and a == a
    assert ir.structural_equal(a, b)
    # compare=False leaves the field out of == and of structural equality
    assert ir.structural_equal(Point(1, tags=["a"]), Point(1, tags=["b"]))
    assert ir.structural_hash(Point(1, tags=["a"])) == ir.structural_hash(Point(1, tags=["b"]))
    assert not ir.structural_equal(Point(1), Point(2))
    # eq=True without frozen: unhashable, as in dataclasses
    with pytest.raises(TypeError):
        hash(Point3(1))
    assert Point3(1, z=2) == Point3(1, z=2) and Point3(1, z=2) != Point3(1, z=3)
    assert hash(Tree("a", [Tree("b")])) == hash(Tree("a", [Tree("b")]))
    assert Tree("a", [Tree("b")]) == Tree("a", [Tree("b")])
    assert Tree("a", [Tree("b")]) != Tree("a", [Tree("c")])


def test_order() -> None:
    assert Ordered(1, 2) < Ordered(1, 3) < Ordered(2)
    assert sorted([Ordered(2), Ordered(1, 5), Ordered(1)]) == [Ordered(1), Ordered(1, 5),
                                                               Ordered(2)]
    with pytest.raises(ValueError, match="order=True needs eq=True"):
        py_class("testdc.BadOrder", order=True)


def test_kw_only_init_false_post_init_and_methods() -> None:
    k = KwOnly(1, b=5)
    assert (k.a, k.b, k.c) == (1, 5, 3)
    with pytest.raises(TypeError, match="takes 1 positional argument"):
        cast(Any, KwOnly)(1, 5)
    with pytest.raises(TypeError, match="unexpected keyword argument 'c'"):
        cast(Any, KwOnly)(1, c=5)
    assert Post(4).double() == 8
    with pytest.raises(ValueError, match="n must be >= 0"):
        Post(-1)
    assert KwOnly.__match_args__ == ("a",)


def test_slots_no_stray_attributes() -> None:
    p = Point(1)
    with pytest.raises(AttributeError):
        p.typo = 1  # type: ignore[attr-defined]
    assert not hasattr(p, "__dict__")


def test_copy_and_deepcopy() -> None:
    inner = Point(1, tags=["a"])
    t = Tree("r", [Tree("c")], {"k": 2.0})
    c = copy.copy(t)
    assert c is not t and not c.same_as(t) and cast(Any, c.children).same_as(t.children)
    d = copy.deepcopy(t)
    assert not cast(Any, d.children).same_as(t.children)
    assert not d.children[0].same_as(t.children[0])
    assert d == t and ir.structural_equal(d, t)
    pc = copy.deepcopy(inner)
    assert type(pc) is Point and pc.x == 1 and list(pc.tags) == ["a"]
    # sharing is kept by deepcopy's memo
    leaf = Tree("leaf")
    shared = Tree("p", [leaf, leaf])
    ds = copy.deepcopy(shared)
    assert ds.children[0].same_as(ds.children[1])


def test_asdict_astuple_replace_fields() -> None:
    t = Tree("r", [Tree("c")], {"k": 2.0})
    assert asdict(t) == {"label": "r", "children": [{"label": "c", "children": [],
                                                      "weights": {}}],
                         "weights": {"k": 2.0}}
    assert astuple(Point(1, 2.0)) == (1, 2.0, "origin point", [])
    p = Point(1, 2.0, tags=["t"])
    p2 = replace(p, x=7)
    assert (p2.x, p2.y, list(p2.tags)) == (7, 2.0, ["t"]) and p.x == 1
    with pytest.raises(TypeError, match="no field 'nope'"):
        replace(p, nope=1)
    with pytest.raises(ValueError, match="init=False"):
        replace(KwOnly(1), c=2)
    names = [f.name for f in fields(Point3)]
    assert names == ["x", "y", "name", "tags", "z"]
    f = fields(Point)[3]
    assert f.compare is False and f.repr is False and f.default is MISSING
    assert f.default_factory is list
    assert is_dataclass(Point) and is_dataclass(Point(1)) and not is_dataclass(tn.Object)
    with pytest.raises(TypeError):
        asdict(Point)
    with pytest.raises(TypeError):
        fields(int)
    # replace and fields work on node types declared in C too
    x = ir.var("x", shape=(1, 2))
    assert [f.name for f in fields(type(x))] == ["checked_type", "name_hint", "type_annotation"]
    y = replace(x, name_hint="y")
    assert y.name_hint == "y" and isinstance(y, type(x))


def test_inheritance() -> None:
    p = Point3(1, 2.0, z=3)
    assert isinstance(p, Point) and (p.x, p.y, p.z) == (1, 2.0, 3)
    assert repr(p) == "Point3(x=1, y=2.0, name='origin point', z=3)"
    assert tn.load_json(tn.save_json(p)) == p


def test_inherit_from_c_declared_type() -> None:
    x = ir.var("x", shape=(1,))
    n = Neg(x)
    assert isinstance(n, ir.Expr) and n.value.same_as(x)
    assert repr(n).startswith("Neg(value=")
    assert Neg(x) == Neg(x)
    m = ir.IRModule.from_expr(ir.Function([x], ir.Tuple([x])))
    assert m is not None
    back = tn.load_json(tn.save_json(n))
    assert type(back) is Neg and back.value.name_hint == "x"
    assert asdict(n)["value"]["name_hint"] == "x"


def test_json_and_pickle_round_trip() -> None:
    t = Tree("r", [Tree("c"), Tree("d")], {"k": 2.0})
    text = tn.save_json(t)
    back = tn.load_json(text)
    assert type(back) is Tree and back == t and ir.structural_equal(back, t)
    assert type(back.children[1]) is Tree and back.children[1].label == "d"
    p = pickle.loads(pickle.dumps(Point(4, 1.0, tags=["x"])))
    assert type(p) is Point and p.x == 4 and list(p.tags) == ["x"]


def test_opaque_field_keeps_identity() -> None:
    payload = Payload()
    h = Holder(payload, anything=[1, 2])
    assert h.payload is payload and list(h.anything) == [1, 2]
    h.anything = payload
    assert h.anything is payload


def test_declaration_errors() -> None:
    with pytest.raises(TypeError, match="must derive from tvmnode.Object"):
        @py_class("testdc.NotObject")
        class NotObject:
            a: int
    with pytest.raises(ValueError, match="both default and default_factory"):
        field(default=1, default_factory=list)
    with pytest.raises(ValueError, match="structural_eq"):
        py_class("testdc.Bad", structural_eq="bogus")
    with pytest.raises(ValueError):
        @py_class("testdc.Point")  # the key is taken
        class Again(tn.Object):
            a: int


def test_structural_kinds_var_and_def() -> None:
    @py_class("testdc.Var", structural_eq="var")
    class V(tn.Object):
        name: str = field(compare=False)  # a hint, as ir.Var's name_hint

    @py_class("testdc.Lambda", eq=True)
    class Lam(tn.Object):
        param: V = field(structural_eq="def")
        body: tn.Object

    a, b = V("a"), V("b")
    assert not ir.structural_equal(a, b)  # free variables: by identity
    assert Lam(a, a) == Lam(b, b)  # bound where defined: alpha-equivalent
    assert Lam(a, a) != Lam(b, a)
