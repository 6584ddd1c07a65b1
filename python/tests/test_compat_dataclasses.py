"""py_class as a tvm-ffi user writes it: user-written __init__, the
generated signature, @method, c_class, init_property, Field.set,
copy.replace, default_factory checks, nested element types, Enum types,
and two regressions (Optional[Any]; a field of the class's own type under
postponed annotations)."""
from __future__ import annotations

import copy
import inspect
import itertools
import json
import sys
from typing import Any, ClassVar, Dict, List, Optional, Tuple

import pytest

import tvmnode as tn
from tvmnode import _ffi, ir
from tvmnode.dataclasses import (KW_ONLY, Enum, EnumAttrMap, Field, FrozenInstanceError, IntEnum,
                                 StrEnum, auto, c_class, entry, field, fields, init_property,
                                 method, py_class, replace)

_n = itertools.count()


def _key(name: str) -> str:
    return "pytest.compat_dc.%s.%d" % (name, next(_n))


# ---- 1. a user-written __init__ sets fields --------------------------------------

def test_init_false_user_init_assigns_fields() -> None:
    @py_class(_key("UserInit"), init=False)
    class UserInit(tn.Object):
        a: int
        b: str

        def __init__(self, val: int) -> None:
            self.a = val
            self.b = "v%d" % val

    o = UserInit(42)
    assert (o.a, o.b) == (42, "v42")
    assert type(o) is UserInit


def test_user_init_in_body_is_kept_with_init_true() -> None:
    @py_class(_key("Kept"))
    class Kept(tn.Object):
        a: int

        def __init__(self, a: int, twice: bool = False) -> None:
            self.a = a * 2 if twice else a

    assert Kept(3, twice=True).a == 6


def test_super_init_then_field_assignments() -> None:
    @py_class(_key("Base"))
    class Base(tn.Object):
        pass

    @py_class(_key("Child"), init=False)
    class Child(Base):
        x: int
        y: str

        def __init__(self, x: int, y: str) -> None:
            super().__init__()
            self.x = x
            self.y = y

    o = Child(1, "hello")
    assert (o.x, o.y) == (1, "hello")


def test_super_init_chain_through_user_inits() -> None:
    @py_class(_key("A"))
    class A(tn.Object):
        pass

    @py_class(_key("B"), init=False)
    class B(A):
        x: int

        def __init__(self, x: int) -> None:
            super().__init__()
            self.x = x

    @py_class(_key("C"), init=False)
    class C(B):
        y: str

        def __init__(self, x: int, y: str) -> None:
            super().__init__(x)
            self.y = y

    o = C(10, "w")
    assert (o.x, o.y) == (10, "w")
    assert B(4).x == 4


def test_super_init_into_generated_init_fills_parent_fields() -> None:
    @py_class(_key("Mid"))
    class Mid(tn.Object):
        a: int
        b: int = 5

    @py_class(_key("Leaf"), init=False)
    class Leaf(Mid):
        c: str  # type: ignore[misc]

        def __init__(self, a: int, c: str) -> None:
            super().__init__(a)
            self.c = c

    o = Leaf(7, "z")
    assert (o.a, o.b, o.c) == (7, 5, "z")
    # the generated __init__ of the parent still makes parents
    assert Mid(1, 2).b == 2
    # and a subclass with a generated __init__ below one with a user __init__
    @py_class(_key("Below"))
    class Below(Leaf):  # type: ignore[misc]
        d: int = 0

    assert Below(a=1, c="q", d=3).d == 3


def test_unset_fields_start_zero_or_default() -> None:
    @py_class(_key("Zero"), init=False)
    class Zero(tn.Object):
        a: int
        b: float
        c: bool
        d: Any
        e: str = "dflt"
        f: List[int] = field(default_factory=lambda: [1, 2])

        def __init__(self) -> None:
            pass

    o = Zero()
    assert (o.a, o.b, o.c, o.d, o.e, list(o.f)) == (0, 0.0, False, None, "dflt", [1, 2])


def test_user_init_leaving_a_required_object_field_unset_is_an_error() -> None:
    @py_class(_key("Lazy"), init=False)
    class Lazy(tn.Object):
        name: str

        def __init__(self) -> None:
            pass

    with pytest.raises(TypeError, match=r"Lazy.__init__\(\) left required field 'name' unset"):
        Lazy()


def test_user_init_values_are_checked() -> None:
    @py_class(_key("Checked"), init=False)
    class Checked(tn.Object):
        a: int

        def __init__(self, v: Any) -> None:
            self.a = v

    with pytest.raises(TypeError, match="a"):
        Checked("not an int")


def test_calling_init_again_makes_a_new_node_not_a_frozen_write() -> None:
    @py_class(_key("Again"), frozen=True)
    class Again(tn.Object):
        a: int

    o = Again(1)
    before = tn.load_json(tn.save_json(o))
    o.__init__(2)  # type: ignore[misc]
    assert o.a == 2 and before.a == 1


def test_post_init_sets_fields() -> None:
    @py_class(_key("Post"))
    class Post(tn.Object):
        x: int
        doubled: int = field(init=False, default=0)

        def __post_init__(self) -> None:
            self.doubled = self.x * 2

    assert Post(4).doubled == 8


# ---- 2. required fields first: a valid __signature__ ------------------------------

def test_required_fields_come_before_defaulted_ones() -> None:
    @py_class(_key("Reorder"))
    class Reorder(tn.Object):
        a: int = 0
        b: int  # type: ignore[misc]
        c: int = 1
        d: int  # type: ignore[misc]
        _: KW_ONLY
        e: int = 2
        f: int

    sig = inspect.signature(Reorder)
    assert list(sig.parameters) == ["b", "d", "a", "c", "f", "e"]
    assert sig.parameters["f"].kind is inspect.Parameter.KEYWORD_ONLY
    assert inspect.signature(Reorder.__init__).parameters["self"]
    o = Reorder(10, 20, f=5)  # type: ignore[call-arg]
    assert (o.a, o.b, o.c, o.d, o.e, o.f) == (0, 10, 1, 20, 2, 5)
    # the signature is what the generated __init__ accepts
    bound = sig.bind(1, 2, 3, f=4)
    o = Reorder(*bound.args, **bound.kwargs)
    assert (o.b, o.d, o.a, o.f) == (1, 2, 3, 4)


def test_reordering_spans_inheritance_and_factories() -> None:
    @py_class(_key("G"))
    class G(tn.Object):
        a: int

    @py_class(_key("P"))
    class P(G):
        b: List[int] = field(default_factory=list)

    @py_class(_key("K"))
    class K(P):
        c: int  # type: ignore[misc]

    assert list(inspect.signature(K).parameters) == ["a", "c", "b"]
    o = K(1, 3)  # type: ignore[call-arg, arg-type]
    assert (o.a, list(o.b), o.c) == (1, [], 3)


def test_post_init_sees_reordered_fields() -> None:
    seen: Dict[str, int] = {}

    @py_class(_key("PostReorder"))
    class PostReorder(tn.Object):
        x: int = 0
        y: int  # type: ignore[misc]

        def __post_init__(self) -> None:
            seen.update(x=self.x, y=self.y)

    PostReorder(10, x=20)  # type: ignore[misc, call-arg]
    assert seen == {"x": 20, "y": 10}


# ---- 3. @method -------------------------------------------------------------------

@py_class(_key("WithMethods"))
class WithMethods(tn.Object):
    k: int

    @method
    def plus(self, v: int) -> int:
        return self.k + v

    @method
    @staticmethod
    def twice(v: int) -> int:
        return v * 2

    def not_registered(self) -> int:
        return 0


@py_class(_key("Registered"))
class Registered(tn.Object):
    x: int


_ffi.type_register_method(Registered._tn_type_index, "get_x", lambda o: o.x)


def test_method_is_registered_on_the_c_type() -> None:
    t = WithMethods._tn_type_index
    assert set(_ffi.type_methods(t)) == {"plus", "twice"}
    plus = _ffi.type_get_method(t, "plus")
    assert plus(WithMethods(2), 5) == 7
    assert _ffi.type_get_method(t, "twice")(21) == 42
    # still an ordinary method from Python
    assert WithMethods(1).plus(1) == 2 and WithMethods.twice(3) == 6
    # tvm-ffi's TypeMethod.is_static: a staticmethod takes no object
    methods = {m.name: m for m in tn.get_type_info(WithMethods).methods}
    assert methods["plus"].is_static is False and methods["twice"].is_static is True
    assert methods["twice"].func(4) == 8
    # a method registered through the registry (as C, Rust or Go do) takes
    # the object first
    (m,) = tn.get_type_info(Registered).methods
    assert m.name == "get_x" and m.is_static is False and m.func(Registered(5)) == 5


def test_method_refuses_classmethods_and_non_functions() -> None:
    # tvm-ffi's words in each message
    with pytest.raises(TypeError, match="method: @classmethod is not supported"):
        method(classmethod(lambda cls: 0))
    with pytest.raises(TypeError, match="method: expected a callable, got int"):
        method(3)
    with pytest.raises(TypeError, match="MarkedFirst.maker is marked with @method but "
                                        "wrapped by @classmethod"):
        @py_class(_key("MarkedFirst"))
        class MarkedFirst(tn.Object):
            @classmethod
            @method
            def maker(cls) -> int:
                return 0

    def by_hand(cls: type) -> int:
        return 0

    by_hand.__ffi_method__ = True  # type: ignore[attr-defined]
    with pytest.raises(TypeError, match="wrapped by @classmethod"):
        @py_class(_key("ByHand"))
        class ByHand(tn.Object):
            maker = classmethod(by_hand)  # type: ignore[var-annotated]


def _size(self: Any) -> int:
    return 3


_size.__ffi_method__ = True  # type: ignore[attr-defined]


@py_class(_key("FfiMarked"))
class FfiMarked(tn.Object):
    x: int
    sized = _size


def test_tvm_ffi_method_mark_registers_too() -> None:
    assert _ffi.type_get_method(FfiMarked._tn_type_index, "sized")(FfiMarked(1)) == 3


# ---- 4. c_class and init_property ------------------------------------------------

def test_c_class_gives_a_c_type_the_dataclass_methods() -> None:
    t = _ffi.type_index("ir.GlobalVar")
    old = _ffi._registered_class(t)
    try:
        @c_class("ir.GlobalVar", eq=True, unsafe_hash=True)
        class GV(ir.GlobalVar):
            __slots__ = ()
            name_hint: str

        g = GV("main")
        assert type(g) is GV and repr(g).endswith("GV(name_hint='main')")
        assert list(inspect.signature(GV).parameters) == ["name_hint", "checked_type"]
        assert g == GV("main") and g != GV("f") and hash(g) == hash(GV("main"))
        assert "name_hint" in [f.name for f in fields(GV)]
        assert replace(g, name_hint="f").name_hint == "f"
        assert copy.copy(g).name_hint == "main"
    finally:
        assert old is not None
        _ffi._register_class(t, old)


def test_c_class_errors() -> None:
    with pytest.raises(TypeError, match="no type 'pytest.nope' is declared in C"):
        c_class("pytest.nope")(type("X", (tn.Object,), {}))
    with pytest.raises(TypeError, match="'tn.String' is not a node type"):
        c_class("tn.String")(type("Y", (tn.Object,), {}))
    with pytest.raises(TypeError, match="type_key"):
        c_class(3)  # type: ignore[arg-type]


def test_init_property_is_computed_once_and_stored_in_c() -> None:
    calls = []

    @py_class(_key("IP"))
    class IP(tn.Object):
        x: int = 0

        @init_property
        def doubled(self) -> int:
            calls.append(1)
            return self.x * 2

    o = IP(x=5)
    assert o.doubled == 10 and o.doubled == 10 and len(calls) == 1
    f = {f.name: f for f in fields(IP)}["doubled"]
    assert not f.init and f.structural_eq == "ignore"
    assert "doubled" not in inspect.signature(IP).parameters
    # in C: a copy carries it, and JSON too
    assert tn.load_json(tn.save_json(o)).doubled == 10


def test_init_property_inherited_and_with_a_user_init() -> None:
    @py_class(_key("IPBase"))
    class IPBase(tn.Object):
        x: int

        @init_property
        def plus_one(self) -> int:
            return self.x + 1

    @py_class(_key("IPChild"), init=False)
    class IPChild(IPBase):
        @init_property
        def plus_two(self) -> int:
            return self.plus_one + 1

        def __init__(self, x: int) -> None:
            self.x = x

    o = IPChild(1)
    assert (o.plus_one, o.plus_two) == (2, 3)


# ---- 5. Field.set: the frozen-field escape hatch --------------------------------

def test_field_set_writes_frozen_fields() -> None:
    @py_class(_key("Frozen"), frozen=True)
    class Frozen(tn.Object):
        a: int
        tags: List[str] = field(default_factory=list)

        def __post_init__(self) -> None:
            type(self).tags.set(self, ["made"])  # type: ignore[attr-defined]

    o = Frozen(1)
    assert list(o.tags) == ["made"]
    with pytest.raises(FrozenInstanceError):
        o.a = 2  # type: ignore[misc]
    Frozen.a.set(o, 2)  # type: ignore[attr-defined]
    assert o.a == 2
    fields(Frozen)[0].set(o, 3)
    assert o.a == 3
    with pytest.raises(TypeError, match="'a'"):
        Frozen.a.set(o, "x")  # type: ignore[attr-defined]
    assert o.a == 3


def test_field_fget_and_fset_as_a_property() -> None:
    @py_class(_key("FrozenPt"), frozen=True)
    class FrozenPt(tn.Object):
        x: int

    @py_class(_key("MutablePt"))
    class MutablePt(tn.Object):
        x: int
        rows: List[List[int]] = field(default_factory=list)

    assert FrozenPt.__dict__["x"].fset is None
    f = FrozenPt(1)
    assert FrozenPt.__dict__["x"].fget(f) == 1
    m = MutablePt(1)
    fset = MutablePt.__dict__["x"].fset
    fset(m, 5)
    assert m.x == 5 and MutablePt.__dict__["x"].fget(m) == 5
    with pytest.raises(TypeError, match="'x'"):
        fset(m, "no")
    with pytest.raises(TypeError, match="takes 2 arguments, 1 given"):
        fset(m)
    with pytest.raises(TypeError, match="field 'x' read from a int"):
        MutablePt.__dict__["x"].fget(3)
    # a field Python checks keeps its check through fset
    rows = MutablePt.__dict__["rows"]
    rows.fset(m, [[1, 2]])
    assert [list(r) for r in rows.fget(m)] == [[1, 2]]
    with pytest.raises(TypeError, match="rows"):
        rows.fset(m, [["x"]])


def test_field_set_errors() -> None:
    @py_class(_key("FS"), frozen=True)
    class FS(tn.Object):
        a: int

    with pytest.raises(TypeError, match="expects a tvmnode object"):
        FS.a.set(3, 1)  # type: ignore[attr-defined]
    with pytest.raises(TypeError, match="argument 'obj' expects a tvmnode object with field 'a'"):
        fields(FS)[0].set(3, 1)
    with pytest.raises(TypeError, match=r"Field.set\(obj, value\) takes 2 arguments"):
        FS.a.set(FS(1))  # type: ignore[attr-defined]
    other = tn.load_json(tn.save_json(ir.GlobalVar("g")))
    with pytest.raises(TypeError, match="written to a ir.GlobalVar"):
        FS.a.set(other, 1)  # type: ignore[attr-defined]
    # a read-only field of a type declared in C stays read-only
    with pytest.raises(AttributeError, match="declared in C"):
        type(other).name_hint.set(other, "h")
    assert other.name_hint == "g"


def test_node_alloc_only_makes_python_declared_types() -> None:
    with pytest.raises(TypeError, match="not a node type declared from Python"):
        _ffi.node_alloc(_ffi.type_index("ir.GlobalVar"))
    with pytest.raises(TypeError, match="expects an int"):
        _ffi.node_alloc("x")  # type: ignore[arg-type]


# ---- 6. copy.replace -------------------------------------------------------------

@py_class(_key("Rep"))
class Rep(tn.Object):
    a: int
    b: str = "b"


def test_replace_method_and_function() -> None:
    r = Rep(1)
    assert Rep.__replace__(r, a=2).a == 2  # type: ignore[attr-defined]
    assert replace(r, b="c").b == "c"
    with pytest.raises(TypeError, match="no field 'zz'"):
        replace(r, zz=1)


@pytest.mark.skipif(sys.version_info < (3, 13), reason="copy.replace is new in Python 3.13")
def test_copy_replace() -> None:
    r = Rep(1)
    r2 = copy.replace(r, b="z")  # type: ignore[attr-defined]
    assert type(r2) is Rep and (r2.a, r2.b) == (1, "z") and (r.a, r.b) == (1, "b")


# ---- 7. default_factory must be callable -----------------------------------------

def test_non_callable_default_factory_is_refused() -> None:
    with pytest.raises(TypeError, match=r"field\(\): default_factory must be a callable.*got int"):
        field(default_factory=3)
    with pytest.raises(TypeError, match="got NoneType"):
        Field(default_factory=None)
    with pytest.raises(ValueError, match="cannot specify both default and default_factory"):
        field(default=1, default_factory=list)
    f = field(default_factory=list)
    f.default_factory = "oops"
    with pytest.raises(TypeError, match="py_class: field 'xs'.*must be a callable"):
        @py_class(_key("BadFactory"))
        class BadFactory(tn.Object):
            xs: List[int] = f


# ---- 8. nested element types ------------------------------------------------------

@py_class(_key("Nested"))
class Nested(tn.Object):
    xss: List[List[int]] = field(default_factory=list)
    by_name: Dict[str, List[float]] = field(default_factory=dict)
    maybe: List[Optional[int]] = field(default_factory=list)
    pairs: List[Tuple[int, str]] = field(default_factory=list)


NestedAny: Any = Nested  # bad values on purpose


def test_nested_element_types_are_checked_with_a_path() -> None:
    with pytest.raises(TypeError, match=r"Nested: field 'xss' expects List\[List\[int\]\], "
                                        r"got str at xss\[0\]\[0\]"):
        NestedAny([["x"]])
    with pytest.raises(TypeError, match=r"field 'xss'.*got int at xss\[1\]"):
        NestedAny([[1], 2])
    with pytest.raises(TypeError, match=r"field 'by_name'.*got str at by_name\['a'\]\[1\]"):
        NestedAny(by_name={"a": [1.0, "no"]})
    with pytest.raises(TypeError, match=r"field 'by_name'.*got int at by_name key 3"):
        NestedAny(by_name={3: [1.0]})
    with pytest.raises(TypeError, match=r"field 'maybe'.*got str at maybe\[2\]"):
        NestedAny(maybe=[1, None, "x"])
    with pytest.raises(TypeError, match=r"field 'pairs'.*got int at pairs\[0\]\[1\]"):
        NestedAny(pairs=[(1, 2)])
    with pytest.raises(TypeError, match=r"field 'xss'"):
        Field.set(fields(Nested)[0], Nested(), [["x"]])


def test_nested_element_types_are_checked_on_assignment() -> None:
    n: Any = Nested([[1]])
    with pytest.raises(TypeError, match=r"field 'xss'.*got str at xss\[0\]\[1\]"):
        n.xss = [[1, "x"]]
    assert [list(x) for x in n.xss] == [[1]]
    n.xss = [[2, 3]]
    assert list(n.xss[0]) == [2, 3]
    with pytest.raises(TypeError, match=r"xss\[0\]\[0\]"):
        type(n).xss.set(n, [["y"]])
    assert type(n).xss.name == "xss"


def test_nested_element_types_accept_good_values() -> None:
    n = Nested([[1, 2], []], {"a": [1, 2.5]}, [1, None], [(1, "a")])
    assert [list(x) for x in n.xss] == [[1, 2], []]
    assert list(n.by_name["a"]) == [1.0, 2.5]
    assert list(n.maybe) == [1, None]
    assert replace(n, xss=[[3]]).xss[0][0] == 3
    # a tvmnode Array of Arrays is checked the same way
    assert NestedAny(tn.Array([tn.Array([5])])).xss[0][0] == 5
    with pytest.raises(TypeError, match=r"xss\[0\]\[0\]"):
        NestedAny(tn.Array([tn.Array(["s"])]))


def test_nested_check_on_a_self_containing_list_ends() -> None:
    loop: List[Any] = []
    loop.append(loop)
    with pytest.raises(TypeError, match=r"got list at xss\[0\]\[0\]"):
        NestedAny(loop)


# ---- 9. Enum types ----------------------------------------------------------------

class Activation(Enum, type_key=_key("Activation")):
    arity: int = 0
    relu: ClassVar[Activation] = entry(arity=1)
    add = entry(arity=2)
    noop = auto()


class Status(Enum, type_key=_key("Status")):
    ready: ClassVar[Status]
    failed: ClassVar[Status]


class Priority(IntEnum, type_key=_key("Priority")):
    MIN = -(1 << 63)
    LOW = -9
    MAX = (1 << 63) - 1


class Opcode(StrEnum, type_key=_key("Opcode")):
    ADD = "+"
    PLUS = "+"
    MUL = "*"


@py_class(_key("Holder"))
class Holder(tn.Object):
    priority: Priority
    opcode: Opcode
    act: Optional[Activation] = None


COST = Priority.def_attr("cost", default=-1)
# members are declared with plain values: type checkers see those
P: Any = Priority
O: Any = Opcode
H: Any = Holder


def test_enum_members_indices_and_lookup() -> None:
    assert (Activation.relu._int_index, Activation.relu._str_index) == (0, "relu")
    assert (Activation.add._int_index, Activation.add._str_index) == (1, "add")
    assert Activation.relu.arity == 1 and Activation.noop.arity == 0
    assert list(Activation) == [Activation.relu, Activation.add, Activation.noop]
    assert len(Activation) == 3 and Activation.add in Activation
    assert Activation.get(0).same_as(Activation.relu)
    assert Activation("add").same_as(Activation.add) and Activation(2).same_as(Activation.noop)
    assert list(Activation.all_entries()) == list(Activation)
    assert [m._str_index for m in Status] == ["ready", "failed"]
    assert repr(Activation.relu) == Activation._tn_type_key + ".relu"
    with pytest.raises(AttributeError):
        Activation.relu.arity = 3
    with pytest.raises(ValueError, match="'nope' is not a valid Activation"):
        Activation("nope")
    with pytest.raises(KeyError):
        Activation.get(99)
    with pytest.raises(TypeError, match="members are declared in the class body"):
        Activation(arity=3)


def test_int_and_str_enums() -> None:
    assert P.MIN.value == P.MIN._int_index == -(1 << 63)
    assert P.LOW.name == "LOW" and Priority("LOW").same_as(P.LOW)
    assert Priority(-9).same_as(P.LOW) and P.LOW == -9 and P.LOW != 1
    assert hash(P.MAX) == hash((1 << 63) - 1) and str(P.LOW) == "-9"
    for bad in (-(1 << 63) - 1, 1 << 63):
        with pytest.raises(OverflowError):
            Priority(bad)
    assert O.ADD.same_as(O.PLUS) and list(Opcode) == [O.ADD, O.MUL]
    assert O.ADD.name == O.ADD.value == "+" and O.ADD == "+"
    assert Opcode.get(1).same_as(O.MUL) and repr(O.MUL) == "Opcode.*"
    with pytest.raises(KeyError):
        Opcode.get("ADD")


def test_enum_members_are_field_values_and_round_trip_json() -> None:
    h = H(priority=-9, opcode="*", act="relu")
    assert h.priority.same_as(P.LOW) and h.opcode.same_as(O.MUL)
    assert h.act is not None and h.act.same_as(Activation.relu)
    text = tn.save_json(h)
    back = tn.load_json(text)
    assert back.priority.same_as(P.LOW) and back.opcode.same_as(O.MUL)
    assert back.act.same_as(Activation.relu)
    assert _ffi.structural_equal(h, back)
    assert tn.load_json(tn.save_json(Status.failed)).same_as(Status.failed)
    # a member the type does not have is refused when loading
    graph = json.loads(tn.save_json(Status.ready))
    graph["nodes"][0]["fields"]["_str_index"] = "gone"
    with pytest.raises(Exception, match="no member"):
        tn.load_json(json.dumps(graph))
    with pytest.raises(TypeError, match="int64 range"):
        H(priority=1 << 64, opcode="+")
    with pytest.raises(TypeError, match="Opcode, which has no member '-'"):
        H(priority=-9, opcode="-")
    with pytest.raises(TypeError, match="priority"):
        H(priority=O.ADD, opcode="+")
    # assignment takes an index too, and checks it
    h.priority = "MAX"
    assert h.priority.same_as(P.MAX)
    with pytest.raises(TypeError, match="Priority, which has no member 'HUGE'"):
        h.priority = "HUGE"
    assert h.priority.same_as(P.MAX)


def test_enum_structural_semantics_are_identity() -> None:
    assert _ffi.structural_equal(Status.ready, Status.ready)
    assert not _ffi.structural_equal(Status.ready, Status.failed)
    assert copy.copy(Status.ready).same_as(Status.ready)
    assert copy.deepcopy(H(priority=-9, opcode="+")).priority.same_as(P.LOW)


def test_enum_attr_map() -> None:
    assert isinstance(COST, EnumAttrMap) and COST.name == "cost"
    assert COST[P.MIN] == -1 and P.MIN not in COST
    COST[P.MAX] = 7
    assert P.MAX in COST and COST.get(P.MAX) == 7
    assert COST[Priority(P.MAX._int_index)] == 7  # any proxy of the member
    with pytest.raises(TypeError, match="expected a Priority member, got Opcode"):
        COST[O.ADD] = 1
    no_default = Status.def_attr("x")
    with pytest.raises(KeyError):
        no_default[Status.ready]
    assert no_default.get(Status.ready, 3) == 3


def test_enum_declaration_errors() -> None:
    with pytest.raises(TypeError, match="reserves `value`"):
        class BadInt(IntEnum, type_key=_key("BadInt")):
            value: int
            ONE = 1
    with pytest.raises(TypeError, match="value must be a int, got str"):
        class BadLiteral(IntEnum, type_key=_key("BadLiteral")):
            BAD = "bad"
    with pytest.raises(TypeError, match="value must be a str, got int"):
        class BadStr(StrEnum, type_key=_key("BadStr")):
            BAD = 1
    with pytest.raises(TypeError, match="indices are not given"):
        class BadIndex(Enum, type_key=_key("BadIndex")):
            X = entry(_int_index=4)
    with pytest.raises(TypeError, match="BadField.X: invalid enum entry"):
        class BadField(Enum, type_key=_key("BadField")):
            n: int = 0
            X = entry(n="not an int")
    with pytest.raises(TypeError, match="unexpected or repeated field 'm'"):
        class BadName(Enum, type_key=_key("BadName")):
            n: int = 0
            X = entry(m=1)


def test_annotations_name_classes_local_to_a_function() -> None:
    @py_class(_key("LocalInner"))
    class LocalInner(tn.Object):
        v: int

    @py_class(_key("LocalOuter"))
    class LocalOuter(tn.Object):
        inner: LocalInner
        items: List[LocalInner] = field(default_factory=list)

    assert isinstance(LocalOuter.__annotations__["inner"], str)  # postponed here
    with pytest.raises(TypeError, match="inner"):
        LocalOuter(inner=Rep(1))  # type: ignore[arg-type]
    o = LocalOuter(LocalInner(1), [LocalInner(2)])
    assert o.inner.v == 1 and o.items[0].v == 2
    assert LocalOuter.inner.type_key == LocalInner._tn_type_key


# ---- 10. two regressions -----------------------------------------------------------

def test_optional_any_field() -> None:
    @py_class(_key("OptAny"))
    class OptAny(tn.Object):
        v: Optional[Any] = None

    assert OptAny().v is None
    assert OptAny(3).v == 3 and OptAny("s").v == "s"
    v: Any = OptAny([1, 2]).v
    assert list(v) == [1, 2]


@py_class(_key("SelfRef"))
class SelfRef(tn.Object):
    value: int
    next: Optional[SelfRef] = None
    kids: List[SelfRef] = field(default_factory=list)


def test_optional_self_reference_under_postponed_annotations() -> None:
    assert isinstance(SelfRef.__annotations__["next"], str)  # postponed here
    leaf = SelfRef(1)
    head = SelfRef(0, leaf, [leaf])
    assert head.next is not None and head.next.value == 1
    assert head.kids[0].value == 1
    with pytest.raises(TypeError, match="field 'next' expects Optional"):
        SelfRef(0, next=Rep(1))  # type: ignore[arg-type]
