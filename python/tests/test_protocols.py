"""Values of user classes crossing into C: the __tvmnode_*__ protocols, and
any other Python object as an opaque handle that comes back as itself."""
import gc
import sys
import threading
from typing import Any, List

import pytest

import tvmnode as tn

echo = tn.get_global_func("testing.echo")


class AsObject:
    def __init__(self) -> None:
        self.obj = tn.convert([1, 2, 3])

    def __tvmnode_object__(self) -> Any:
        return self.obj


class AsInt:
    def __tvmnode_int__(self) -> int:
        return 42


class AsFloat:
    def __tvmnode_float__(self) -> float:
        return 2.5


class AsValue:
    def __tvmnode_value__(self) -> Any:
        return {"k": "a string longer than seven bytes"}


class Fresh:
    """Returns a new object each time: only the call keeps it alive."""

    def __tvmnode_object__(self) -> Any:
        return tn.convert(["fresh"])


class Plain:
    pass


def test_object_protocol() -> None:
    a = AsObject()
    r = echo(a)
    assert isinstance(r, tn.Array) and r.same_as(a.obj)
    assert list(echo(Fresh())) == ["fresh"]
    assert tn.convert([a])[0].same_as(a.obj)


def test_number_and_value_protocols() -> None:
    assert echo(AsInt()) == 42 and type(echo(AsInt())) is int
    assert echo(AsFloat()) == 2.5
    v = echo(AsValue())
    assert isinstance(v, tn.Map) and v["k"] == "a string longer than seven bytes"
    assert list(tn.convert([AsInt(), AsFloat()])) == [42, 2.5]


def test_protocol_errors() -> None:
    class Bad:
        def __tvmnode_object__(self) -> Any:
            return 5

    class Raises:
        def __tvmnode_int__(self) -> int:
            raise KeyError("inside")

    class Self:
        def __tvmnode_value__(self) -> Any:
            return self

    class Endless:
        def __tvmnode_value__(self) -> Any:
            return Endless()

    with pytest.raises(TypeError, match=r"argument 0: .*__tvmnode_object__\(\) returned int"):
        echo(Bad())
    with pytest.raises(KeyError, match="inside"):
        echo(Raises())
    with pytest.raises(TypeError, match="returned the object itself"):
        echo(Self())
    with pytest.raises(RecursionError):
        echo(Endless())


def test_opaque_round_trip_keeps_identity() -> None:
    p = Plain()
    before = sys.getrefcount(p)
    assert echo(p) is p
    arr = tn.convert([p, 1, p])
    assert arr[0] is p and arr[2] is p
    m = tn.convert({"x": p})
    assert m["x"] is p
    assert tn.convert(p) is p
    assert sys.getrefcount(p) > before  # the containers hold it
    del arr, m
    gc.collect()
    assert sys.getrefcount(p) == before


def test_opaque_through_python_callback() -> None:
    p = Plain()
    seen: List[Any] = []
    def keep(x: Any) -> Any:
        seen.append(x)
        return x
    f = tn.convert(keep)
    call = tn.get_global_func("testing.call")
    assert call(f, p) is p
    assert seen[0] is p
    before = sys.getrefcount(p)
    seen.clear()
    del f
    gc.collect()
    assert sys.getrefcount(p) == before - 1


def test_opaque_released_on_another_thread() -> None:
    p = Plain()
    before = sys.getrefcount(p)
    holder = [tn.convert([p])]

    def drop() -> None:
        holder.clear()
    t = threading.Thread(target=drop)
    t.start()
    t.join()
    gc.collect()
    assert sys.getrefcount(p) == before


def test_opaque_in_structural_equality_and_json() -> None:
    # an opaque handle is a unique instance: equal to itself only (each
    # conversion makes a new handle)
    p, q = Plain(), Plain()
    a = tn.convert([p])
    assert tn.ir.structural_equal(a, a)
    assert not tn.ir.structural_equal(a, tn.convert([q]))
    with pytest.raises(Exception):
        tn.load_json(tn.save_json(tn.convert([p])))


def test_sets_and_complex_still_refused() -> None:
    with pytest.raises(TypeError, match="cannot convert set"):
        echo({1, 2})
    with pytest.raises(TypeError, match="complex"):
        echo(1j)


def test_protocol_added_to_a_class_after_conversions_is_seen() -> None:
    """A type seen without a protocol is remembered (so values of it skip
    the lookups), but a protocol given to the class later, or to a base of
    it, is still honoured."""
    class Late:
        pass

    class Base:
        pass

    class Derived(Base):
        pass

    late, derived = Late(), Derived()
    for _ in range(3):  # remembered as without a protocol
        assert echo(late) is late
        assert echo(derived) is derived
    Late.__tvm_ffi_int__ = lambda self: 11  # type: ignore[attr-defined]
    Base.__tvmnode_float__ = lambda self: 1.5  # type: ignore[attr-defined]
    assert echo(late) == 11
    assert echo(derived) == 1.5
    del Late.__tvm_ffi_int__  # type: ignore[attr-defined]
    assert echo(late) is late
