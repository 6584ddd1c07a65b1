"""Containers, conversion protocols and structural functions as an
apache-tvm-ffi user writes them (issue 33): content `==` and `hash` of
Array/List/Map/Dict, List slices and the list/dict methods, the
`__tvm_ffi_*__` conversion protocols, and `structural_equal` /
`structural_hash` / `get_first_structural_mismatch` at the top level."""
import dataclasses
import random
import threading
import time
from typing import Any, List

import pytest

import tvmnode as tn
from tvmnode import ir
from tvmnode.access_path import AccessKind, AccessPath, AccessStep

echo = tn.get_global_func("testing.echo")


# ---- == and hash -----------------------------------------------------------


def test_array_eq_by_content() -> None:
    a, b, c = tn.Array([1, 2, 3]), tn.Array([1, 2, 3]), tn.Array([1, 2, 4])
    assert a == b and not (a != b)
    assert a != c and not (a == c)
    assert tn.Array([]) == tn.Array([])
    assert tn.Array([1, 2]) != tn.Array([1, 2, 3])
    nested = tn.Array([tn.Array([1, 2]), {"k": "v"}, "s", 1.5, None])
    assert nested == tn.Array([tn.Array([1, 2]), {"k": "v"}, "s", 1.5, None])
    assert nested != tn.Array([tn.Array([1, 2]), {"k": "w"}, "s", 1.5, None])


def test_array_eq_python_sequences() -> None:
    a = tn.Array([1, 2, 3])
    assert a == [1, 2, 3] and [1, 2, 3] == a
    assert a == (1, 2, 3) and (1, 2, 3) == a
    assert not (a != [1, 2, 3])
    assert a != [1, 2] and a != (1, 2, 4)
    assert tn.Array([[1, 2], [3]]) == [(1, 2), [3]]
    assert a.__eq__("hello") is NotImplemented
    assert a.__eq__({1: 2}) is NotImplemented
    assert a != "hello" and a != 3
    # items that are not tvmnode values: unequal, not an error
    assert a != [1, 2, {3}]


def test_array_and_list_compare_equal() -> None:
    assert tn.Array([1, 2]) == tn.List([1, 2])
    assert tn.List([1, 2]) == tn.Array([1, 2])
    assert tn.List([1, 2]) != tn.Array([2, 1])


def test_contains_pairs() -> None:
    k, v = "BLOCK_SIZE", 128
    assert (k, v) in tn.Array([[k, v]])
    assert (k, v) in tn.Array([(k, v)])
    assert [k, v] in tn.List([(k, v)])
    assert (k, 64) not in tn.Array([[k, v]])
    assert 3 in tn.Array([1, 2, 3]) and 4 not in tn.Array([1, 2, 3])


def test_container_hash() -> None:
    a, b = tn.Array([1, 2, 3]), tn.Array([1, 2, 3])
    assert hash(a) == hash(b)
    assert len({a, b}) == 1
    assert {a: "value"}[b] == "value"
    assert hash(tn.Array([1, 2, 3])) != hash(tn.Array([1, 2, 4]))
    assert hash(tn.List([1, 2])) == hash(tn.List([1, 2]))
    m1, m2 = tn.Map({"x": 1, "y": 2}), tn.Map({"y": 2, "x": 1})
    assert hash(m1) == hash(m2) and len({m1, m2}) == 1
    assert hash(tn.Dict({"x": 1})) == hash(tn.Dict({"x": 1}))
    assert hash(tn.Array([tn.Map({"a": [1]})])) == hash(tn.Array([tn.Map({"a": [1]})]))
    assert hash(a) == tn.structural_hash(a) or hash(a) == tn.structural_hash(a) - 2**64


def test_list_hash_follows_content() -> None:
    lst = tn.List([1])
    h = hash(lst)
    lst.append(2)
    assert hash(lst) != h and hash(lst) == hash(tn.List([1, 2]))


def test_map_and_dict_eq() -> None:
    assert tn.Map({"x": 1, "y": 2}) == tn.Map({"y": 2, "x": 1})
    assert tn.Map({"x": 1}) != tn.Map({"x": 2})
    assert tn.Map({}) == tn.Map({})
    assert tn.Dict({"x": 1, "y": 2}) == tn.Dict({"x": 1, "y": 2})
    assert tn.Dict({"x": 1}) != tn.Dict({"x": 3})
    assert tn.Map({"x": 1}).__eq__({"x": 1}) is NotImplemented
    assert tn.Dict({"x": 1}).__eq__({"x": 1}) is NotImplemented
    assert tn.Map({"x": 1}) != {"x": 1}
    # as tvm-ffi: a Map and a Dict are different types, so not equal
    assert tn.Map({"a": 1}) != tn.Dict({"a": 1})


def test_nodes_keep_identity() -> None:
    x, y = ir.var("x", shape=(1,)), ir.var("x", shape=(1,))
    assert x == x and x != y
    assert hash(x) != hash(y) or x is not y
    assert tn.Array([x]) == tn.Array([x])
    assert tn.Array([x]) != tn.Array([y])  # free variables by identity


def test_self_containing_list() -> None:
    lst = tn.List([1])
    lst.append(lst)
    other = tn.List([1])
    other.append(other)
    try:
        assert lst == lst
        assert not (lst != lst)
        with pytest.raises(ValueError, match="contains itself|recurs|cycle"):
            lst == other
        with pytest.raises(ValueError):
            hash(lst)
        assert isinstance(repr(lst), str)
        assert lst != [1, 2]  # differs before the cycle is reached
    finally:
        lst.clear()
        other.clear()


def test_deep_nesting_compares_without_recursion() -> None:
    def deep(n: int) -> Any:
        v: Any = [0]
        for _ in range(n):
            v = [v]
        return v

    a, b = tn.Array(deep(100000)), tn.Array(deep(100000))
    assert a == b
    assert hash(a) == hash(b)
    c = tn.Array(deep(99999))
    assert a != c


# ---- List ------------------------------------------------------------------


def test_list_slices_read() -> None:
    lst = tn.List([0, 1, 2, 3, 4])
    assert lst[1:3] == [1, 2] and isinstance(lst[1:3], list)
    assert lst[:] == [0, 1, 2, 3, 4]
    assert lst[::-1] == [4, 3, 2, 1, 0]
    assert lst[-2:] == [3, 4]
    assert lst[::2] == [0, 2, 4]
    assert lst[10:] == []


def _random_slice(rnd: random.Random, n: int) -> slice:
    def bound() -> Any:
        return rnd.choice([None, rnd.randint(-n - 2, n + 2)])
    return slice(bound(), bound(), rnd.choice([None, 1, 1, 2, -1, -2, 3]))


def test_list_slice_assign_and_delete_match_python() -> None:
    rnd = random.Random(33)
    for _ in range(400):
        model: List[Any] = list(range(rnd.randint(0, 8)))
        lst = tn.List(model)
        s = _random_slice(rnd, len(model))
        if rnd.random() < 0.5:
            del model[s]
            del lst[s]
        else:
            repl = [100 + i for i in range(rnd.randint(0, 4))]
            try:
                model[s] = repl
            except ValueError:
                with pytest.raises(ValueError, match="extended slice"):
                    lst[s] = repl
                continue
            lst[s] = repl
        assert list(lst) == model, s


def test_list_slice_tvm_ffi_cases() -> None:
    lst = tn.List(list(range(10)))
    lst[2:6] = [20, 21]
    assert tuple(lst) == (0, 1, 20, 21, 6, 7, 8, 9)
    lst[3:3] = [30, 31]
    assert tuple(lst) == (0, 1, 20, 30, 31, 21, 6, 7, 8, 9)
    lst[1:9:2] = [101, 102, 103, 104]
    assert tuple(lst) == (0, 101, 20, 102, 31, 103, 6, 104, 8, 9)
    with pytest.raises(ValueError):
        lst[0:6:2] = [1, 2]
    del lst[1:8:2]
    assert tuple(lst) == (0, 20, 31, 6, 8, 9)
    lst = tn.List([0, 1, 2, 3, 4])
    lst[3:1] = [9]
    assert tuple(lst) == (0, 1, 2, 9, 3, 4)
    lst = tn.List([0, 1, 2, 3, 4])
    lst[1:3] = lst
    assert tuple(lst) == (0, 0, 1, 2, 3, 4, 3, 4)


def test_list_item_assign_and_delete() -> None:
    lst = tn.List([0, 1, 2, 3, 4, 5])
    lst[1] = 10
    lst[-1] = [60]
    assert lst[-1] == [60]
    del lst[2]
    del lst[-1]
    assert tuple(lst) == (0, 10, 3, 4)
    with pytest.raises(IndexError):
        lst[4] = 0
    with pytest.raises(IndexError):
        del lst[-5]


def test_list_bad_input_changes_nothing() -> None:
    lst = tn.List([1, 2, 3])
    with pytest.raises(TypeError, match="List slice assignment: expected an iterable, got int"):
        lst[0:1] = 5
    with pytest.raises(TypeError, match="item 1"):
        lst[0:1] = [4, {5}]
    with pytest.raises(TypeError, match="List indices must be integers or slices, not str"):
        lst["a"] = 1  # type: ignore[index]
    assert tuple(lst) == (1, 2, 3)
    arr = tn.Array([1, 2])
    with pytest.raises(TypeError, match="immutable"):
        arr[0:1] = [3]
    with pytest.raises(TypeError, match="immutable"):
        del arr[0]
    with pytest.raises(AttributeError):
        arr.reverse()


def test_list_methods() -> None:
    lst = tn.List([3, 1, 2, 1])
    lst.reverse()
    assert tuple(lst) == (1, 2, 1, 3)
    assert lst.index(1) == 0 and lst.index(1, 1) == 2 and lst.index(3, -1) == 3
    with pytest.raises(ValueError, match="not in"):
        lst.index(1, 3)
    assert lst.count(1) == 2 and lst.count(9) == 0
    lst.remove(1)
    assert tuple(lst) == (2, 1, 3)
    with pytest.raises(ValueError):
        lst.remove(9)
    lst.insert(-100, 0)
    lst.insert(100, 4)
    assert tuple(lst) == (0, 2, 1, 3, 4)
    assert lst.pop() == 4 and lst.pop(0) == 0
    lst.extend([5, 6])
    assert tuple(lst) == (2, 1, 3, 5, 6)
    lst.clear()
    assert len(lst) == 0
    lst.reverse()
    single = tn.List([[1, 2]])
    single.reverse()
    assert single[0] == (1, 2)
    assert tn.Array([[1, 2], 3]).index((1, 2)) == 0
    assert tn.Array([1, 2]).count(2) == 1


def test_list_iadd_extends_in_place() -> None:
    lst = tn.List([1])
    alias = lst
    lst += [2, 3]
    assert alias is lst and tuple(alias) == (1, 2, 3)
    lst += lst
    assert tuple(lst) == (1, 2, 3, 1, 2, 3)
    arr = tn.Array([1])
    before = arr
    arr += [2]
    assert tuple(arr) == (1, 2) and tuple(before) == (1,)
    with pytest.raises(TypeError):
        lst += 5  # type: ignore[arg-type]


def test_list_changed_by_user_code_mid_operation() -> None:
    lst = tn.List([1, 2, 3, 4])

    def gen() -> Any:
        lst.clear()  # runs while the new items are read
        yield 7
        yield 8

    lst[1:3] = gen()  # resolved against the list as it is afterwards
    assert tuple(lst) == (7, 8)

    class Clears:
        def __eq__(self, other: object) -> bool:
            lst.clear()
            return False

        __hash__ = None  # type: ignore[assignment]

    lst.extend([1, 2, 3])
    assert lst.count(Clears()) == 0 and len(lst) == 0
    lst.extend([1, 2, 3])
    with pytest.raises(ValueError):
        lst.index(Clears())
    lst.extend([1, 2, 3])
    with pytest.raises(ValueError):
        lst.remove(Clears())
    assert tn.List([1]) != [Clears()]  # crosses as an opaque object: unequal


def test_list_concurrent_mutation() -> None:
    shared = tn.List(list(range(50)))
    stop = time.monotonic() + 1.0
    errors: List[str] = []

    def mutate() -> None:
        rnd = random.Random(1)
        try:
            while time.monotonic() < stop:
                op = rnd.randrange(5)
                if op == 0:
                    shared[rnd.randrange(10):rnd.randrange(10, 40)] = list(range(rnd.randrange(30)))
                elif op == 1:
                    shared.reverse()
                elif op == 2:
                    del shared[::3]
                elif op == 3:
                    shared.extend(range(20))
                else:
                    if len(shared) > 200:
                        shared.clear()
        except Exception as e:  # pragma: no cover - reported below
            errors.append(repr(e))

    def read() -> None:
        try:
            while time.monotonic() < stop:
                list(shared)
                shared[:]
                echo([shared, 1])
                shared == tn.List([1, 2])
                hash(shared)
                tn.structural_hash(shared)
                shared.count(3)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(repr(e))

    ts = [threading.Thread(target=mutate)] + [threading.Thread(target=read) for _ in range(3)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors[:3]
    shared.clear()


# ---- Dict ------------------------------------------------------------------


def test_dict_update() -> None:
    d = tn.Dict({"a": 1})
    d.update({"b": 2})
    d.update([("c", 3), ("a", 10)])
    d.update(e=5)
    d.update({"f": 6}, g=[7])
    d.update()
    assert dict(d.items()) == {"a": 10, "b": 2, "c": 3, "e": 5, "f": 6, "g": (7,)}
    d.update({(1, 2): "t"})
    d.update({(1, 2): "u"})  # the same Array key by value: replaced
    assert d[(1, 2)] == "u" and len(d) == 7


def test_dict_update_bad_input() -> None:
    d = tn.Dict({"a": 1})
    with pytest.raises(TypeError, match="Dict.update\\(\\) takes a mapping or an iterable of pairs, not int"):
        d.update(5)
    with pytest.raises(TypeError):
        d.update({"b": 2, "c": {3}})  # a set is no tvmnode value
    with pytest.raises(TypeError):
        d.update({"b": 1}, {"c": 2})  # type: ignore[call-arg]
    assert dict(d.items()) == {"a": 1}
    with pytest.raises(AttributeError):  # as tvm-ffi's Map: no update
        tn.Map({"a": 1}).update({"b": 2})


def test_dict_setdefault_get_pop() -> None:
    d = tn.Dict()
    assert d.setdefault("a", [1]) == (1,)
    assert d.setdefault("a", 5) == (1,)
    assert d.setdefault("n") is None and "n" in d
    assert d.get("missing", 3) == 3 and d.get("a") == (1,)
    assert d.pop("a") == (1,) and d.pop("a", 0) == 0
    with pytest.raises(KeyError):
        d.pop("a")


def test_dict_popitem() -> None:
    d = tn.Dict({"a": 1, "b": [2]})
    assert d.popitem() == ("b", (2,))
    assert d.popitem() == ("a", 1)
    with pytest.raises(KeyError, match="empty"):
        d.popitem()


# ---- conversion protocols --------------------------------------------------


class FfiObj:
    def __init__(self, obj: Any) -> None:
        self.obj = obj

    def __tvm_ffi_object__(self) -> Any:
        return self.obj


class FfiInt:
    def __tvm_ffi_int__(self) -> int:
        return 42


class FfiFloat:
    def __tvm_ffi_float__(self) -> float:
        return 2.5


class FfiValue:
    def __tvm_ffi_value__(self) -> Any:
        return [1, "two"]


class FfiPtr:
    def __tvm_ffi_opaque_ptr__(self) -> int:
        return 0x1234


class Both:
    def __tvmnode_int__(self) -> int:
        return 1

    def __tvm_ffi_int__(self) -> int:
        return 2


def test_tvm_ffi_protocols() -> None:
    arr = tn.Array([1, 2])
    assert echo(FfiObj(arr)).same_as(arr)
    assert echo(FfiInt()) == 42 and type(echo(FfiInt())) is int
    assert echo(FfiFloat()) == 2.5
    assert echo(FfiValue()) == [1, "two"]
    assert echo(Both()) == 1
    got = echo([FfiInt(), FfiFloat(), {"k": FfiObj(arr)}])
    assert tuple(got[:2]) == (42, 2.5) and got[2]["k"].same_as(arr)
    assert tn.convert(FfiValue()) == [1, "two"]
    p = echo(FfiPtr())
    assert p.value == 0x1234


@dataclasses.dataclass
class Wraps:
    value: Any

    def __tvm_ffi_value__(self) -> Any:
        return self.value


def test_value_protocol_results_of_the_same_class_convert() -> None:
    # tvm-ffi's nesting: a value that is another object of the same class
    assert echo(Wraps(Wraps(Wraps(10)))) == 10
    assert tuple(echo(Wraps([Wraps(1), Wraps(2), 3]))) == (1, 2, 3)
    assert tn.convert(Wraps(Wraps("s"))) == "s"


def test_tvm_ffi_protocol_errors() -> None:
    class BadObj:
        def __tvm_ffi_object__(self) -> Any:
            return 3

    class BadInt:
        def __tvm_ffi_int__(self) -> Any:
            return "x"

    class BadPtr:
        def __tvm_ffi_opaque_ptr__(self) -> Any:
            return "x"

    class Raises:
        def __tvm_ffi_float__(self) -> float:
            raise RuntimeError("boom")

    class Endless:
        def __tvm_ffi_value__(self) -> Any:
            return Endless()

    class Self:
        def __tvm_ffi_value__(self) -> Any:
            return self

    with pytest.raises(TypeError, match="BadObj.__tvm_ffi_object__\\(\\) returned int, not a tvmnode object"):
        echo(BadObj())
    with pytest.raises(TypeError):
        echo(BadInt())
    with pytest.raises(TypeError, match="BadPtr.__tvm_ffi_opaque_ptr__\\(\\) returned str"):
        echo(BadPtr())
    with pytest.raises(RuntimeError, match="boom"):
        echo(Raises())
    with pytest.raises(TypeError, match="Self.__tvm_ffi_value__\\(\\) returned the object itself"):
        echo(Self())
    with pytest.raises(RecursionError):
        echo(Endless())


# ---- structural functions --------------------------------------------------


def test_top_level_structural_functions() -> None:
    a, b, c = [1, {"k": (2, 3)}], [1, {"k": (2, 3)}], [1, {"k": (2, 4)}]
    assert tn.structural_equal(a, b) and not tn.structural_equal(a, c)
    assert tn.structural_hash(a) == tn.structural_hash(b) == ir.structural_hash(a)
    assert tn.structural_hash(a) != tn.structural_hash(c)
    assert 0 <= tn.structural_hash(a) < 2**64
    x, y = ir.var("x", shape=(2,)), ir.var("y", shape=(2,))
    assert not tn.structural_equal(x, y)
    assert tn.structural_equal(x, y, map_free_vars=True)
    assert tn.structural_equal(tn.Map({"a": 1}), tn.Map({"a": 1}))
    assert not tn.structural_equal(tn.Map({"a": 1}), tn.Dict({"a": 1}))



def test_skip_tensor_content() -> None:
    import numpy as np

    t1 = tn.from_dlpack(np.arange(6, dtype="float32").reshape(2, 3))
    t2 = tn.from_dlpack(np.zeros((2, 3), dtype="float32"))
    t3 = tn.from_dlpack(np.zeros((3, 2), dtype="float32"))
    t4 = tn.from_dlpack(np.zeros((2, 3), dtype="int32"))
    assert not tn.structural_equal(t1, t2)
    assert tn.structural_equal(t1, t2, skip_tensor_content=True)
    assert tn.structural_hash([t1], skip_tensor_content=True) == \
        tn.structural_hash([t2], skip_tensor_content=True)
    assert tn.structural_hash(t1) != tn.structural_hash(t2)
    assert not tn.structural_equal(t1, t3, skip_tensor_content=True)
    assert not tn.structural_equal(t2, t4, skip_tensor_content=True)
    assert tn.get_first_structural_mismatch([t1], [t2]) == \
        (AccessPath.root().array_item(0), AccessPath.root().array_item(0))
    assert tn.get_first_structural_mismatch([t1], [t2], skip_tensor_content=True) is None
    c1 = ir.const(np.ones((2,), "float32"))
    c2 = ir.const(np.full((2,), 5, "float32"))
    assert tn.structural_equal(c1, c2, skip_tensor_content=True)
    assert not tn.structural_equal(c1, c2)


def test_first_mismatch() -> None:
    assert tn.get_first_structural_mismatch([1, 2], [1, 2]) is None
    r = tn.get_first_structural_mismatch([1, [2, 3]], [1, [2, 4]])
    assert r is not None
    lp, rp = r
    assert lp == rp == AccessPath.root().array_item(1).array_item(1)
    assert repr(lp) == "<root>[1][1]"
    r = tn.get_first_structural_mismatch({"a": 1, "b": [2]}, {"a": 1, "b": [3]})
    assert r is not None and r[0] == AccessPath.root().map_item("b").array_item(0)
    r = tn.get_first_structural_mismatch({"a": 1}, {"b": 1})
    assert r is not None
    assert r[0] == AccessPath.root().map_item("a")
    assert r[1] == AccessPath.root().map_item_missing("a")
    r = tn.get_first_structural_mismatch({"a": 1}, {"a": 1, "z": 2})
    assert r == (AccessPath.root().map_item_missing("z"), AccessPath.root().map_item("z"))
    root = AccessPath.root()
    r = tn.get_first_structural_mismatch([1, 2], [1, 2, 3])
    assert r == (root.array_item_missing(2), root.array_item(2))
    r = tn.get_first_structural_mismatch([[1, 2, 3]], [[1, 2]])
    assert r == (root.array_item(0).array_item(2), root.array_item(0).array_item_missing(2))
    r = tn.get_first_structural_mismatch([1, 9], [1, 2, 3])  # the common part first
    assert r == (root.array_item(1), root.array_item(1))
    assert repr(r[0]) == "<root>[1]"
    assert repr(root.array_item_missing(2)) == "<root>[<missing 2>]"
    r = tn.get_first_structural_mismatch(1, "1")
    assert r == (AccessPath.root(), AccessPath.root())


def test_first_mismatch_in_ir() -> None:
    x = ir.var("x", shape=(1, 8))
    f1 = ir.Function([x], ir.op.nn.relu(x))
    x2 = ir.var("x", shape=(1, 9))
    f2 = ir.Function([x2], ir.op.nn.relu(x2))
    r = tn.get_first_structural_mismatch(f1, f2)
    assert r is not None
    steps = r[0].to_steps()
    assert steps[0] == AccessStep(AccessKind.ATTR, "params")
    assert steps[1] == AccessStep(AccessKind.ARRAY_ITEM, 0)
    assert steps[-1] == AccessStep(AccessKind.ATTR, "shape")  # (1, 8) vs (1, 9)
    assert all(s.kind in (AccessKind.ATTR, AccessKind.ARRAY_ITEM) for s in steps)
    assert tn.get_first_structural_mismatch(f1, f1) is None


def test_access_path() -> None:
    root = AccessPath.root()
    assert root.to_steps() == [] and root.depth == 0 and root.parent is None
    assert root == AccessPath.root() and hash(root) == hash(AccessPath.root())
    p = root.attr("foo").array_item(2).map_item("k")
    assert p.depth == 3 and p.parent == root.attr("foo").array_item(2)
    assert [s.kind for s in p.to_steps()] == [AccessKind.ATTR, AccessKind.ARRAY_ITEM,
                                                AccessKind.MAP_ITEM]
    assert p.step is not None and p.step.key == "k"
    assert repr(p) == "<root>.foo[2]['k']"
    assert root.is_prefix_of(root) and root.is_prefix_of(p)
    assert root.attr("foo").is_prefix_of(p) and not p.is_prefix_of(root.attr("foo"))
    assert not root.attr("bar").is_prefix_of(p)
    assert root.attr("foo") != root.attr("bar") and root.attr("foo") != "foo"
    assert root.array_item(1) != root.array_item_missing(1)
    assert root.map_item_missing("a").to_steps()[0].kind == AccessKind.MAP_ITEM_MISSING
    assert root.attr_missing("a").to_steps()[0].kind == AccessKind.ATTR_MISSING
    assert len({root.array_item(1), root.array_item(1)}) == 1
    with pytest.raises(ValueError):
        AccessPath()
    with pytest.raises(TypeError, match="index must be an int, not str"):
        root.array_item("1")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="attr_key must be a str"):
        root.attr(1)  # type: ignore[arg-type]
    with pytest.raises(AttributeError):
        root.depth = 3


def test_tvm_ffi_style_program() -> None:
    import tvmnode as tvm_ffi

    arr = tvm_ffi.convert([("BLOCK_SIZE", 128), ("NUM_WARPS", 4)])
    assert ("NUM_WARPS", 4) in arr
    cache = {tvm_ffi.Array([1, 2]): "hit"}
    assert cache[tvm_ffi.Array([1, 2])] == "hit"
    lst = tvm_ffi.List([1, 2, 3, 4])
    lst[1:3] = [20, 30, 40]
    del lst[::2]
    lst.reverse()
    assert lst == [40, 20]
    d = tvm_ffi.Dict({"a": 1})
    d.update({"b": 2})
    assert d == tvm_ffi.Dict({"a": 1, "b": 2})
    assert tvm_ffi.get_first_structural_mismatch(arr, [("BLOCK_SIZE", 128), ("NUM_WARPS", 4)]) is None
