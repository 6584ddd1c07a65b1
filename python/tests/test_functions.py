"""Packed functions from Python: the registry, calls, conversions, errors
both ways, callbacks, threads and reference counts."""
import gc
import sys
import threading
import traceback
from typing import Any, List

import pytest

import tvmnode as tn
from tvmnode import _ffi

nop = tn.get_global_func("testing.nop")
echo = tn.get_global_func("testing.echo")
add = tn.get_global_func("testing.add_i64")
call = tn.get_global_func("testing.call")
raise_ = tn.get_global_func("testing.raise")
assert nop is not None and echo is not None and add is not None
assert call is not None and raise_ is not None


# ---- the registry -----------------------------------------------------------

def test_get_global_func_and_name() -> None:
    f = tn.get_global_func("testing.add_i64")
    assert isinstance(f, tn.Function)
    assert f.name == "testing.add_i64"
    assert f(40, 2) == 42
    assert not f.is_python


def test_missing_function() -> None:
    assert tn.get_global_func("no.such.function", allow_missing=True) is None
    with pytest.raises(ValueError, match="no.such.function"):
        tn.get_global_func("no.such.function")


def test_list_global_func_names() -> None:
    names = tn.list_global_func_names()
    assert names == sorted(names)
    for n in ("testing.nop", "testing.call", "transform.InferType", "tn.type_info"):
        assert n in names
    lister = tn.get_global_func("tn.list_global_func_names")
    assert lister is not None
    assert list(lister()) == names


def test_register_func_forms() -> None:
    @tn.register_func("pytest.double")
    def double(x: int) -> int:
        return 2 * x

    def triple(x: int) -> int:
        return 3 * x

    tn.register_func("pytest.triple", triple)

    @tn.register_func
    def pytest_square(x: int) -> int:
        return x * x

    try:
        assert double(4) == 8  # the decorator returns the Python function
        f = tn.get_global_func("pytest.double")
        assert f is not None and f.is_python and f(21) == 42
        assert call(tn.get_global_func("pytest.triple"), 5) == 15
        assert tn.get_global_func("pytest_square")(7) == 49
        with pytest.raises(ValueError, match="pytest.double"):
            tn.register_func("pytest.double", triple)
        tn.register_func("pytest.double", triple, override=True)
        assert tn.get_global_func("pytest.double")(2) == 6
        assert f(2) == 4  # an old handle keeps its function
    finally:
        for n in ("pytest.double", "pytest.triple", "pytest_square"):
            tn.remove_global_func(n)
    with pytest.raises(KeyError):
        tn.remove_global_func("pytest.double")
    with pytest.raises(TypeError, match="register_func"):
        tn.register_func(12)  # type: ignore[arg-type]


# ---- calls and values --------------------------------------------------------

def test_nop_arities() -> None:
    assert nop() is None
    assert nop(1) is None
    assert nop(1, 2, 3) is None
    assert nop(*range(20)) is None  # more than the on-stack argument slots


@pytest.mark.parametrize("value", [
    0, 1, -1, 2**63 - 1, -2**63, 1.5, -0.0, float("inf"), True, False, None,
    "", "short", "exactly7", "a longer string than seven bytes", "ünïcødé ✓",
    "nul\0inside but long", "nul\0", b"", b"bytes", b"longer bytes \x00\xff value",
])
def test_echo_roundtrip(value: Any) -> None:
    out = echo(value)
    assert out == value and type(out) is type(value)


def test_echo_nan() -> None:
    out = echo(float("nan"))
    assert out != out


def test_containers_roundtrip() -> None:
    arr = echo([1, "two", 3.0, None, [4, 5], {"k": 6}])
    assert isinstance(arr, tn.Array)
    assert len(arr) == 6 and arr[0] == 1 and arr[1] == "two" and arr[3] is None
    assert list(arr[4]) == [4, 5] and arr[5]["k"] == 6
    assert arr[-1]["k"] == 6
    assert [v for v in arr][:2] == [1, "two"]
    assert arr[1:3] == ["two", 3.0]
    with pytest.raises(IndexError):
        arr[6]
    m = echo({"a": 1, 2: "b"})
    assert isinstance(m, tn.Map)
    assert m["a"] == 1 and m[2] == "b" and "a" in m and "z" not in m
    assert m.get("z", 9) == 9 and m.get("a") == 1
    assert list(m.keys()) == ["a", 2] and list(m.values()) == [1, "b"]
    assert list(m) == ["a", 2]
    assert list(m.items()) == [("a", 1), (2, "b")]
    with pytest.raises(KeyError):
        m["z"]
    with pytest.raises(TypeError, match="immutable"):
        arr[0] = 1
    t = echo((1, 2))
    assert isinstance(t, tn.Array) and list(t) == [1, 2]


def test_convert() -> None:
    assert tn.convert(3) == 3
    assert tn.convert("s") == "s"
    assert isinstance(tn.convert([1]), tn.Array)
    assert isinstance(tn.convert({"a": 1}), tn.Map)
    f = tn.convert(lambda a, b: a - b)
    assert isinstance(f, tn.Function) and f.is_python and f(5, 3) == 2
    with pytest.raises(TypeError, match="cannot convert set"):
        tn.convert({1, 2})
    with pytest.raises(TypeError, match="item 1: cannot convert set"):
        tn.convert([1, {2}])


def test_dtype_and_device_values() -> None:
    dt = echo(tn.DataType("float32"))
    assert isinstance(dt, tn.DataType) and dt == "float32" and dt.bits == 32
    assert tn.DataType("int8x4").lanes == 4 and tn.DataType("uint8").type_code == 1
    dev = echo(tn.cpu(0))
    assert isinstance(dev, tn.Device) and dev == tn.Device("cpu", 0)
    assert str(dev) == "cpu:0" and repr(dev) == "device(type='cpu', index=0)"


def test_numpy_scalars_and_int_subclasses() -> None:
    np = pytest.importorskip("numpy")
    import enum

    class Color(enum.IntEnum):
        RED = 3

    assert add(np.int64(2), np.int32(3)) == 5
    assert echo(np.float32(1.5)) == 1.5
    assert add(Color.RED, 1) == 4


# ---- bad input: the mapped exception names the function and argument ----------

def test_wrong_argument_type_from_c() -> None:
    with pytest.raises(TypeError, match=r"testing\.add_i64: argument 1: expected int"):
        add(1, "x")


def test_wrong_argument_count_from_c() -> None:
    with pytest.raises(TypeError, match=r"testing\.add_i64 takes 2 arguments, got 3"):
        add(1, 2, 3)


def test_unconvertible_argument_names_index() -> None:
    with pytest.raises(TypeError, match=r"testing\.nop: argument 2: cannot convert set"):
        nop(1, 2, {3})
    with pytest.raises(OverflowError, match=r"testing\.nop: argument 0:"):
        nop(2**64)
    with pytest.raises(TypeError, match="takes no keyword arguments"):
        nop(a=1)  # type: ignore[call-arg]


def test_callback_argument_errors() -> None:
    # a Python function called from C with the wrong number of arguments
    with pytest.raises(TypeError, match="positional argument"):
        call(lambda a: a, 1, 2)
    with pytest.raises(TypeError, match="expected tn.Function, got int"):
        call(1)


def test_callback_result_that_cannot_cross() -> None:
    with pytest.raises(TypeError, match="returned a value tvmnode cannot hold: cannot "
                                        "convert set"):
        call(lambda: {1})


# ---- errors both ways --------------------------------------------------------

@pytest.mark.parametrize("kind,cls", [
    ("TypeError", TypeError), ("ValueError", ValueError), ("IndexError", IndexError),
    ("KeyError", KeyError), ("RuntimeError", RuntimeError), ("AttributeError", AttributeError),
    ("OverflowError", OverflowError), ("MemoryError", MemoryError),
])
def test_error_kinds_map_to_builtins(kind: str, cls: type) -> None:
    with pytest.raises(cls) as info:
        raise_(kind, "it broke")
    assert type(info.value) is cls
    assert "it broke" in str(info.value)


def test_unknown_kind_is_tvmnode_error_subclass() -> None:
    with pytest.raises(tn.TVMNodeError) as info:
        raise_("InternalError", "bad state")
    assert type(info.value).__name__ == "InternalError"
    assert isinstance(info.value, RuntimeError)
    with pytest.raises(type(info.value)):
        raise_("InternalError", "again")


def test_register_error_both_ways() -> None:
    @tn.register_error
    class PyTestError(Exception):
        pass

    with pytest.raises(PyTestError, match="from C"):
        raise_("PyTestError", "from C")

    def boom() -> None:
        raise PyTestError("from Python")

    text = _ffi._format_python_error(boom)
    assert text is not None and "PyTestError: from Python" in text


def test_python_exception_crosses_c_and_comes_back_identical() -> None:
    class Custom(Exception):
        def __init__(self, code: int) -> None:
            super().__init__("custom %d" % code)
            self.code = code

    original: List[BaseException] = []

    def callback() -> None:
        e = Custom(7)
        original.append(e)
        raise e

    with pytest.raises(Custom) as info:
        call(callback)
    assert info.value is original[0] and info.value.code == 7
    text = "".join(traceback.format_exception(info.type, info.value, info.tb))
    # Python frames of the callback and of the caller ...
    assert "in callback" in text and "test_python_exception_crosses" in text
    # ... and the C frames in between
    assert "libtvmnode" in text
    order = [text.index("test_python_exception_crosses"), text.index("libtvmnode"),
             text.index("in callback")]
    assert order == sorted(order)


def test_python_exception_seen_from_c_has_python_frames() -> None:
    def inner() -> None:
        raise ValueError("deep")

    def outer() -> None:
        inner()

    text = _ffi._format_python_error(outer)
    assert text is not None
    assert "ValueError: deep" in text
    assert "in inner" in text and "in outer" in text and "test_functions.py" in text


def test_c_error_inside_callback_comes_back() -> None:
    def cb() -> None:
        add("x", 1)

    with pytest.raises(TypeError, match="testing.add_i64: argument 0") as info:
        call(cb)
    text = "".join(traceback.format_exception(info.type, info.value, info.tb))
    assert "in cb" in text


def test_nested_callbacks_two_levels() -> None:
    def level2(x: int) -> int:
        if x > 2:
            raise KeyError("too big")
        return x * 10

    def level1(x: int) -> int:
        return call(level2, x) + 1

    assert call(level1, 2) == 21
    with pytest.raises(KeyError, match="too big"):
        call(level1, 3)


def test_kept_errors_are_released() -> None:
    for _ in range(100):
        with pytest.raises(ValueError):
            call(lambda: (_ for _ in ()).throw(ValueError("x")))
    gc.collect()
    assert _ffi._kept_error_count() == 0


# ---- reference counts of values passed through --------------------------------

def test_refcounts_of_arguments_are_restored() -> None:
    s = "a string longer than seven bytes " + str(id(test_refcounts_of_arguments_are_restored))
    lst = [1, 2, 3]
    obj = tn.convert([1])
    cb = lambda v: v  # noqa: E731
    before = [sys.getrefcount(x) for x in (s, lst, obj, cb)]
    for _ in range(50):
        echo(s)
        echo(lst)
        echo(obj)
        call(cb, s)
        call(cb, obj)
    gc.collect()
    assert [sys.getrefcount(x) for x in (s, lst, obj, cb)] == before


def test_python_objects_inside_callbacks_are_released() -> None:
    seen: List[Any] = []
    payload = object()
    f = tn.convert(lambda: payload)
    before = sys.getrefcount(payload)
    assert call(f) is payload  # crosses as an opaque handle, comes back itself
    assert sys.getrefcount(payload) == before
    g = tn.convert(lambda x: seen.append(x))
    del f, g
    gc.collect()
    assert sys.getrefcount(payload) == before


def test_handle_use_counts() -> None:
    arr = tn.convert([1, 2])
    assert arr._use_count == 1
    same = echo(arr)
    assert same == arr and same is not arr and arr._use_count == 2
    del same
    assert arr._use_count == 1


def test_function_releases_callable() -> None:
    class Callable:
        def __call__(self) -> int:
            return 1

    c = Callable()
    before = sys.getrefcount(c)
    f = tn.Function(c)
    assert sys.getrefcount(c) == before + 1
    assert f() == 1
    del f
    assert sys.getrefcount(c) == before


# ---- threads and the GIL ------------------------------------------------------

def test_c_threads_call_python_concurrently() -> None:
    lock = threading.Lock()
    seen = set()

    def work(thread: int, i: int) -> int:
        with lock:
            seen.add(threading.get_ident())
        return thread * 1000 + i

    nthreads, ncalls = 4, 500
    total, failures, first = _ffi._call_from_threads(work, nthreads, ncalls)
    expected = sum(t * 1000 * ncalls + ncalls * (ncalls - 1) // 2 for t in range(nthreads))
    assert (total, failures, first) == (expected, 0, None)
    assert threading.get_ident() not in seen and len(seen) >= 1


def test_c_threads_see_python_errors() -> None:
    def work(thread: int, i: int) -> int:
        if i % 2:
            raise ValueError("odd %d" % i)
        return 1

    total, failures, first = _ffi._call_from_threads(work, 3, 10)
    assert total == 15 and failures == 15
    assert first is not None and first.startswith("ValueError: odd")


def test_registered_function_called_from_c_threads() -> None:
    tn.register_func("pytest.threaded", lambda t, i: 1)
    try:
        f = tn.get_global_func("pytest.threaded")
        assert f is not None
        total, failures, _ = _ffi._call_from_threads(f, 8, 200)
        assert (total, failures) == (1600, 0)
    finally:
        tn.remove_global_func("pytest.threaded")


def test_python_threads_calling_c_calling_python() -> None:
    results: List[int] = []
    errors: List[BaseException] = []

    def worker(k: int) -> None:
        try:
            for i in range(200):
                results.append(call(lambda a, b: a + b, k, i))
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(results) == 800
    assert sum(results) == sum(k + i for k in range(4) for i in range(200))


def test_python_function_freed_on_foreign_thread() -> None:
    class Tracked:
        def __call__(self) -> None:
            return None

    t = Tracked()
    before = sys.getrefcount(t)
    f = tn.Function(t)
    assert sys.getrefcount(t) == before + 1
    _ffi._release_in_thread(f)  # the last reference dies on a C thread
    assert sys.getrefcount(t) == before
    with pytest.raises(ValueError, match="no handle"):
        f()


def test_release_gil_flag() -> None:
    f = tn.get_global_func("testing.add_i64")
    assert f is not None and f.release_gil is False
    f.release_gil = True
    assert f(1, 2) == 3 and f.release_gil is True
