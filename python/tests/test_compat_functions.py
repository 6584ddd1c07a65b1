"""Function and type metadata, the registry spellings of tvm-ffi, and
load_inline: C source given as a string, compiled with the system compiler,
loaded, and its functions called with real parameter and return types."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import types
from typing import Any, Iterator

import numpy as np
import pytest

import tvmnode
import tvmnode as tvm_ffi
from tvmnode import cpp
from tvmnode import ir
from tvmnode import TypeSchema

HAVE_CC = shutil.which(os.environ.get("CC", "cc")) is not None
HAVE_CXX = shutil.which(os.environ.get("CXX", "c++")) is not None
needs_cc = pytest.mark.skipif(not HAVE_CC, reason="no C compiler")


@pytest.fixture(scope="module")
def build_dir(tmp_path_factory: Any) -> str:
    return str(tmp_path_factory.mktemp("inline"))


def schema_of(meta: Any) -> str:
    return str(TypeSchema.from_json_str(meta["type_schema"]))


# ---------------------------------------------------------------------------
# register_global_func and the registry module

def test_register_global_func_as_decorator_returns_the_registered_function() -> None:
    @tvm_ffi.register_global_func("compat.echo")
    def echo(x: Any) -> Any:
        return x

    try:
        f = tvm_ffi.get_global_func("compat.echo")
        assert isinstance(echo, tvm_ffi.Function)
        assert f.same_as(echo)
        assert f(1) == 1 and echo("a") == "a"
        assert "compat.echo" in tvm_ffi.registry.list_global_func_names()
    finally:
        tvm_ffi.registry.remove_global_func("compat.echo")
    assert "compat.echo" not in tvm_ffi.registry.list_global_func_names()
    assert tvm_ffi.get_global_func("compat.echo", allow_missing=True) is None
    del echo, f


def test_register_global_func_direct_bare_and_override() -> None:
    f = tvm_ffi.register_global_func("compat.add_one", lambda x: x + 1)
    try:
        assert f(1) == 2
        with pytest.raises(ValueError, match="compat.add_one"):
            tvm_ffi.register_global_func("compat.add_one", lambda x: x + 2)
        g = tvm_ffi.register_global_func("compat.add_one", lambda x: x + 2, override=True)
        assert tvm_ffi.get_global_func("compat.add_one")(1) == 3 and g(1) == 3
    finally:
        tvm_ffi.remove_global_func("compat.add_one")

    def compat_bare(a: int, b: int) -> int:
        return a * b

    h = tvm_ffi.register_global_func(compat_bare)
    try:
        assert tvm_ffi.get_global_func("compat_bare")(6, 7) == 42 and h(2, 3) == 6
    finally:
        tvm_ffi.remove_global_func("compat_bare")
    del f, g, h


def test_register_global_func_bad_arguments() -> None:
    with pytest.raises(TypeError, match="register_global_func.*'func_name'.*int"):
        tvm_ffi.register_global_func(3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="register_global_func.*'func_name'"):
        tvm_ffi.register_global_func(len, len)
    with pytest.raises(TypeError, match="callable"):
        tvm_ffi.register_global_func("compat.not_callable", 5)  # type: ignore[arg-type]
    assert tvm_ffi.get_global_func("compat.not_callable", allow_missing=True) is None
    with pytest.raises(ValueError):
        tvm_ffi.register_global_func("compat.\0nul", lambda: 0)


def test_registry_module_spells_what_tvm_ffi_spells() -> None:
    from tvmnode import registry
    assert registry.register_global_func is tvmnode.register_global_func
    assert registry.get_global_func is tvmnode.get_global_func
    assert registry.get_global_func_metadata is tvmnode.get_global_func_metadata
    assert registry.init_ffi_api is tvmnode.init_ffi_api
    for name in ("register_global_func", "get_global_func_metadata", "init_ffi_api",
                 "TypeSchema", "get_type_info", "cpp", "registry"):
        assert name in tvmnode.__all__


def test_init_ffi_api_sets_one_level_of_a_namespace() -> None:
    made = [tvm_ffi.register_global_func("compatns.double", lambda x: 2 * x),
            tvm_ffi.register_global_func("compatns.inner.skip", lambda: 0),
            tvm_ffi.register_global_func("compatnsx.other", lambda: 0)]
    mod = types.ModuleType("compat_ffi_api_test")
    sys.modules[mod.__name__] = mod
    try:
        tvm_ffi.init_ffi_api("compatns", mod.__name__)
        assert mod.double(21) == 42
        assert not hasattr(mod, "skip") and not hasattr(mod, "inner")
        assert not hasattr(mod, "other")
        # a "tvm." prefix is dropped, as tvm-ffi does
        mod2 = types.ModuleType("compat_ffi_api_test2")
        sys.modules[mod2.__name__] = mod2
        tvm_ffi.init_ffi_api("tvm.compatns", mod2.__name__)
        assert mod2.double(1) == 2
        with pytest.raises(ValueError, match="not imported"):
            tvm_ffi.init_ffi_api("compatns", "no_such_module_here")
        with pytest.raises(TypeError, match="'namespace'"):
            tvm_ffi.init_ffi_api(1)  # type: ignore[arg-type]
    finally:
        sys.modules.pop("compat_ffi_api_test", None)
        sys.modules.pop("compat_ffi_api_test2", None)
        for n in ("compatns.double", "compatns.inner.skip", "compatnsx.other"):
            tvm_ffi.remove_global_func(n)
    del made, mod, mod2


# ---------------------------------------------------------------------------
# Metadata of functions

def test_metadata_is_empty_for_python_and_packed_functions() -> None:
    @tvm_ffi.register_global_func("compat.python_func_no_metadata")
    def simple(x: int) -> int:
        return x + 1

    try:
        assert tvm_ffi.get_global_func_metadata("compat.python_func_no_metadata") == {}
    finally:
        tvm_ffi.remove_global_func("compat.python_func_no_metadata")
    # the library's own functions are packed: their types are not known
    assert tvm_ffi.get_global_func_metadata("testing.raise") == {}
    del simple


def test_metadata_of_a_c_function_registered_by_signature() -> None:
    # a C function with no compiler involved: libc's labs and strlen
    import ctypes
    import ctypes.util
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    labs = ctypes.cast(libc.labs, ctypes.c_void_p).value or 0
    strlen = ctypes.cast(libc.strlen, ctypes.c_void_p).value or 0
    tvm_ffi.register_global_func("compat.labs", tvmnode._ffi._func_from_c(labs, "i64(i64)",
                                                                          "labs"))
    tvm_ffi.register_global_func("compat.strlen",
                                 tvmnode._ffi._func_from_c(strlen, " u64 ( str ) ", "strlen"))
    try:
        assert tvm_ffi.get_global_func("compat.labs")(-5) == 5
        assert tvm_ffi.get_global_func("compat.strlen")("four") == 4
        meta = tvm_ffi.get_global_func_metadata("compat.labs")
        assert set(meta) == {"type_schema", "c_signature"}
        assert meta["c_signature"] == "i64(i64)"
        assert json.loads(meta["type_schema"]) == {
            "type": "ffi.Function", "args": [{"type": "int"}, {"type": "int"}]}
        assert schema_of(meta) == "Callable[[int], int]"
        meta = tvm_ffi.get_global_func_metadata("compat.strlen")
        assert meta["c_signature"] == "u64(str)"
        assert schema_of(meta) == "Callable[[str], int]"
    finally:
        tvm_ffi.remove_global_func("compat.labs")
        tvm_ffi.remove_global_func("compat.strlen")


@pytest.mark.parametrize("sig,expected", [
    ("void()", "Callable[[], None]"),
    ("bool(i8,i16,i32,u8,u16,u32,u64)", "Callable[[int, int, int, int, int, int, int], bool]"),
    ("f32(f64)", "Callable[[float], float]"),
    ("ptr(ptr)", "Callable[[ctypes.c_void_p], ctypes.c_void_p]"),
    ("str(str)", "Callable[[str], str]"),
    ("obj(obj)", "Callable[[Object], Object]"),
    ("obj+(any*)", "Callable[[Any], Object]"),
    ("obj<ir.Var>(obj<tn.String>,obj<tn.Array>)", "Callable[[str, Array[Any]], ir.Var]"),
    ("obj<tn.Function>(obj<tn.Map>)", "Callable[[Map[Any, Any]], Callable[..., Any]]"),
    ("any(dltensor,dtype,device)", "Callable[[Tensor, dtype, Device], Any]"),
])
def test_every_signature_type_has_a_schema(sig: str, expected: str) -> None:
    from tvmnode._metadata import signature_schema
    assert str(TypeSchema.from_json_obj(signature_schema(sig))) == expected


def test_metadata_bad_names() -> None:
    with pytest.raises(ValueError, match="cannot find global function 'compat.none'"):
        tvm_ffi.get_global_func_metadata("compat.none")
    with pytest.raises(TypeError, match="get_global_func_metadata.*'name'.*int"):
        tvm_ffi.get_global_func_metadata(5)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        tvmnode._ffi._func_c_signature("not a function")  # type: ignore[arg-type]


@pytest.mark.parametrize("text,expected", [
    ('{"type":"int"}', "int"),
    ('{"type":"Optional","args":[{"type":"int"}]}', "int | None"),
    ('{"type":"ffi.Map","args":[{"type":"ffi.String"},'
     '{"type":"ffi.Array","args":[{"type":"int"}]}]}',
     "Map[str, Array[int]]"),
    ('{"type":"Variant","args":[{"type":"int"},{"type":"ffi.String"}]}', "int | str"),
    ('{"type":"ffi.Function"}', "Callable[..., Any]"),
    ('{"type":"ffi.Function","args":[{"type":"None"}]}', "Callable[[], None]"),
    ('{"type":"ffi.Function","args":[{"type":"float"},{"type":"DLTensor*"},{"type":"DataType"}]}',
     "Callable[[Tensor, dtype], float]"),
    ('{"type":"ffi.Array"}', "Array[Any]"),
    ('{"type":"ir.Var"}', "ir.Var"),
])
def test_type_schema_reads_tvm_ffi_json(text: str, expected: str) -> None:
    s = TypeSchema.from_json_str(text)
    assert str(s) == expected and repr(s) == expected
    assert TypeSchema.from_json_obj(s.to_json()) == s
    seq = {"Array": "Sequence", "Map": "Mapping"}
    assert s.repr(lambda t: seq.get(t, t)) == expected.replace("Array", "Sequence").replace(
        "Map", "Mapping")


def test_type_schema_rejects_bad_input() -> None:
    with pytest.raises(TypeError, match="'type'"):
        TypeSchema.from_json_obj({"args": []})
    with pytest.raises(TypeError, match="'args' must be a list"):
        TypeSchema.from_json_obj({"type": "int", "args": 3})
    with pytest.raises(ValueError, match="Optional takes exactly one"):
        TypeSchema("Optional")
    with pytest.raises(ValueError, match="Union takes at least two"):
        TypeSchema("Union", [TypeSchema("int")])
    with pytest.raises(TypeError, match="'origin'"):
        TypeSchema(3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="'args'"):
        TypeSchema("Array", ["int"])  # type: ignore[list-item]
    with pytest.raises(json.JSONDecodeError):
        TypeSchema.from_json_str("{")


# ---------------------------------------------------------------------------
# Metadata of types

def test_type_info_of_a_node_type() -> None:
    info = tvm_ffi.get_type_info("ir.Var")
    assert info.type_key == "ir.Var"
    assert info.type_index == tvmnode._ffi.type_index("ir.Var")
    fields = {f.name: f for f in info.fields}
    assert str(fields["name_hint"].ty) == "str"
    assert schema_of(fields["type_annotation"].metadata) == "ir.Type | None"
    assert fields["name_hint"].frozen and not fields["checked_type"].frozen
    parent = info.parent_type_info
    assert parent is not None and parent.type_key == "ir.Expr"
    assert [f.name for f in parent.fields] == [f.name for f in info.fields][:len(parent.fields)]
    root = parent
    while root.parent_type_info is not None:
        root = root.parent_type_info
    assert root.type_key == "tn.Object" and root.fields == []
    # by class and by object, the same type
    x = ir.var("x", shape=(1,))
    assert tvm_ffi.get_type_info(type(x)).type_key == "ir.Var"
    assert tvm_ffi.get_type_info(x).type_key == "ir.Var"
    assert tvm_ffi.get_type_info(tvmnode.Array).type_key == "tn.Array"
    assert tvm_ffi.get_type_info(tvmnode.List).type_key == "tn.List"
    del x


def test_type_info_field_kinds_from_a_python_declared_type() -> None:
    key = "compat.MetaPoint"
    try:
        cls = tvmnode._ffi.class_for(tvmnode._ffi.type_index(key))
    except KeyError:
        @tvmnode.register_object(key)
        class MetaPoint(tvmnode.Object):
            x: int
            label: str = "p"
        cls = MetaPoint
    info = tvm_ffi.get_type_info(cls)
    assert [f.name for f in info.fields] == ["x", "label"]
    # declared from Python: fields are stored as Any
    assert all(str(f.ty) == "Any" for f in info.fields)
    assert all(not f.frozen for f in info.fields)


def test_type_info_typed_fields_and_methods() -> None:
    # ir.Call: an object field of a given key, a typed Array and a Map or Any
    info = tvm_ffi.get_type_info("ir.Call")
    by = {f.name: str(f.ty) for f in info.fields}
    assert by["args"] == "Array[ir.Expr]"
    assert by["op"] == "ir.Expr" and by["attrs"] == "ir.Attrs | None"
    mod = {f.name: str(f.ty) for f in tvm_ffi.get_type_info("ir.IRModule").fields}
    assert mod == {"functions": "Map[str, ir.Function]", "attrs": "Map[str, Any] | None"}
    op = {f.name: f for f in tvm_ffi.get_type_info("ir.Op").fields}
    assert str(op["num_inputs"].ty) == "int" and str(op["name"].ty) == "str"
    assert json.loads(op["name"].metadata["type_schema"]) == {"type": "ffi.String"}
    for m in info.methods:
        assert isinstance(m.func, tvmnode.Function) and isinstance(m.metadata, dict)


@pytest.fixture(scope="module")
def type_with_methods() -> str:
    # made once, before the leak check's baseline: a method stays registered
    key = "compat.WithMethods"
    try:
        tvmnode._ffi.type_index(key)
    except KeyError:
        @tvmnode.register_object(key)
        class WithMethods(tvmnode.Object):
            n: int
        t = tvmnode._ffi.type_index(key)
        tvmnode._ffi.type_register_method(t, "twice", lambda self: 2 * self.n, True)
    return key


def test_type_info_methods(type_with_methods: str) -> None:
    info = tvm_ffi.get_type_info(type_with_methods)
    assert [m.name for m in info.methods] == ["twice"]
    m = info.methods[0]
    assert isinstance(m.func, tvmnode.Function) and m.metadata == {}
    obj = tvmnode._ffi.class_for(info.type_index)(n=4)
    assert m.func(obj) == 8
    del obj, m, info


def test_type_info_bad_input() -> None:
    with pytest.raises(KeyError):
        tvm_ffi.get_type_info("compat.NoSuchType")
    with pytest.raises(TypeError, match="get_type_info"):
        tvm_ffi.get_type_info(3)
    with pytest.raises(TypeError, match="get_type_info"):
        tvm_ffi.get_type_info(int)


# ---------------------------------------------------------------------------
# load_inline

SOURCE = r"""
#include <math.h>
#include <string.h>

int64_t square(int64_t x) { return x * x; }
float reciprocal(float x) { return 1.0f / x; }
bool negate(bool x) { return !x; }
double weighted_sum(int count, double weight) { return count * weight; }
const char *pick(int32_t which, const char *a, const char *b) { return which ? b : a; }
void double_tensor(DLTensor *in, DLTensor *out) {
  float *x = (float *)in->data, *y = (float *)out->data;
  for (int64_t i = 0; i < in->shape[0]; i++) y[i] = 2 * x[i];
}
int64_t itemsize(DLDataType t) { return t.bits * t.lanes / 8; }
uint8_t low_byte(uint64_t v) { return (uint8_t)v; }
TnObject *make_pair(int64_t a, int64_t b) {   /* a new reference */
  TnAny items[2] = {tn_any_int(a), tn_any_int(b)};
  return tn_array_new(items, 2);
}
int64_t count(TnObject *arr) { return tn_array_size(arr); }
TnAny identity(TnAny v) { return v; }
static int64_t hidden(int64_t x) { return x; }
int64_t uses_hidden(int64_t x) { return hidden(x) + 1; }
/* packed, so that it can fail */
int fails(void *self, const TnAny *args, int32_t nargs, TnAny *ret) {
  (void)self;
  if (nargs != 1 || args[0].v_int64 < 0)
    return tn_error_raise("ValueError", "fails: x is %lld", (long long)args[0].v_int64);
  *ret = args[0];
  return 0;
}
/* packed: any number of ints, summed */
int sum_all(void *self, const TnAny *args, int32_t nargs, TnAny *ret) {
  (void)self;
  int64_t s = 0;
  for (int32_t i = 0; i < nargs; i++) {
    if (args[i].type_index != TN_TYPE_INT)
      return tn_error_raise("TypeError", "sum_all: argument %d is not an int", i);
    s += args[i].v_int64;
  }
  *ret = tn_any_int(s);
  return 0;
}
"""

EXPECTED = {
    "square": ("i64(i64)", "Callable[[int], int]"),
    "reciprocal": ("f32(f32)", "Callable[[float], float]"),
    "negate": ("bool(bool)", "Callable[[bool], bool]"),
    "weighted_sum": ("f64(i32,f64)", "Callable[[int, float], float]"),
    "pick": ("str(i32,str,str)", "Callable[[int, str, str], str]"),
    "double_tensor": ("void(dltensor,dltensor)", "Callable[[Tensor, Tensor], None]"),
    "itemsize": ("i64(dtype)", "Callable[[dtype], int]"),
    "low_byte": ("u8(u64)", "Callable[[int], int]"),
    "make_pair": ("obj+(i64,i64)", "Callable[[int, int], Object]"),
    "count": ("i64(obj)", "Callable[[Object], int]"),
    "identity": ("any(any)", "Callable[[Any], Any]"),
    "uses_hidden": ("i64(i64)", "Callable[[int], int]"),
}


@pytest.fixture(scope="module")
def demo_path(build_dir: str) -> str:
    if not HAVE_CC:
        pytest.skip("no C compiler")
    return cpp.build_inline("demo", c_sources=SOURCE, build_directory=build_dir,
                            extra_ldflags=["-lm"])


@needs_cc
def test_load_inline_calls_typed_functions(build_dir: str, demo_path: str) -> None:
    mod = cpp.load_inline("demo", c_sources=SOURCE, functions=list(EXPECTED) + ["sum_all", "fails"],
                          build_directory=build_dir, extra_ldflags=["-lm"])
    assert mod.path == demo_path
    assert mod.square(5) == 25
    assert abs(mod.reciprocal(2.0) - 0.5) < 1e-6
    assert mod.negate(True) is False and mod.negate(False) is True
    assert mod.weighted_sum(10, 2.5) == 25.0
    assert mod.pick(0, "a", "b") == "a" and mod["pick"](1, "a", "b") == "b"
    x = np.array([1, 2, 3], dtype="float32")
    y = np.empty_like(x)
    mod.double_tensor(x, y)
    np.testing.assert_array_equal(y, x * 2)
    assert mod.itemsize("float32x4") == 16 and mod.itemsize(tvmnode.DataType("int8")) == 1
    assert mod.low_byte(0x1234) == 0x34
    pair = mod.make_pair(3, 4)
    assert list(pair) == [3, 4] and mod.count(pair) == 2
    assert mod.identity("s") == "s" and mod.identity(None) is None
    assert mod.uses_hidden(1) == 2
    assert mod.sum_all() == 0 and mod.sum_all(1, 2, 3, 4, 5) == 15
    # errors cross back as Python exceptions, named
    with pytest.raises(ValueError, match="fails: x is -1"):
        mod.fails(-1)
    assert mod.fails(7) == 7
    with pytest.raises(TypeError, match="sum_all: argument 1 is not an int"):
        mod.sum_all(1, "x")
    with pytest.raises(TypeError, match="'square' argument 0: expected i64, got tn"):
        mod.square("x")
    with pytest.raises(TypeError, match="square.*takes 1 argument"):
        mod.square(1, 2)
    with pytest.raises(OverflowError):
        mod.weighted_sum(2 ** 40, 1.0)
    with pytest.raises(AttributeError, match="no function 'nope'.*square"):
        mod.nope
    assert "square" in mod and "nope" not in mod and "square" in dir(mod)
    assert mod.implements_function("square") and not mod.implements_function("nope")
    assert mod.functions[:2] == ["square", "reciprocal"]
    del mod, pair, x, y


@needs_cc
def test_load_inline_metadata_and_docs(build_dir: str) -> None:
    docs = {n: ("doc of %s" % n if n == "square" else "") for n in EXPECTED}
    mod = cpp.load_inline("demo", c_sources=SOURCE, functions=docs, build_directory=build_dir,
                          extra_ldflags=["-lm"])
    for name, (sig, text) in EXPECTED.items():
        meta = mod.get_function_metadata(name)
        assert meta is not None and meta["c_signature"] == sig, name
        assert schema_of(meta) == text, name
    assert mod.get_function_doc("square") == "doc of square"
    assert mod.get_function_doc("reciprocal") is None
    assert mod.get_function_metadata("nope") is None
    # registered globally, a function keeps its types
    tvm_ffi.register_global_func("compat.square", mod.square)
    try:
        meta = tvm_ffi.get_global_func_metadata("compat.square")
        assert schema_of(meta) == "Callable[[int], int]" and meta["c_signature"] == "i64(i64)"
        assert tvm_ffi.get_global_func("compat.square")(9) == 81
    finally:
        tvm_ffi.remove_global_func("compat.square")
    del mod


@needs_cc
def test_packed_functions_have_empty_metadata(build_dir: str) -> None:
    mod = cpp.load_inline("demo", c_sources=SOURCE, functions="sum_all",
                          build_directory=build_dir, extra_ldflags=["-lm"])
    assert mod.functions == ["sum_all"]
    assert mod.get_function_metadata("sum_all") == {}
    del mod


@needs_cc
def test_builds_are_cached_by_content(tmp_path: Any) -> None:
    src = "int64_t one(void) { return 1; }\n"
    a = cpp.build_inline("cached", c_sources=src, build_directory=str(tmp_path))
    stamp = os.stat(a).st_mtime_ns
    b = cpp.build_inline("cached", c_sources=src, build_directory=str(tmp_path))
    assert a == b and os.stat(b).st_mtime_ns == stamp
    c = cpp.build_inline("cached", c_sources=src.replace("1;", "2;"),
                         build_directory=str(tmp_path))
    d = cpp.build_inline("cached", c_sources=src, extra_cflags=["-DX=1"],
                         build_directory=str(tmp_path))
    assert len({a, c, d}) == 3
    assert cpp.load_inline("cached", c_sources=src.replace("1;", "2;"), functions="one",
                           build_directory=str(tmp_path)).one() == 2
    # the environment variable names the cache when no directory is given
    old = os.environ.get("TVMNODE_CACHE_DIR")
    os.environ["TVMNODE_CACHE_DIR"] = str(tmp_path / "env")
    try:
        e = cpp.build_inline("cached", c_sources=src)
        assert e.startswith(str(tmp_path / "env"))
    finally:
        if old is None:
            del os.environ["TVMNODE_CACHE_DIR"]
        else:
            os.environ["TVMNODE_CACHE_DIR"] = old


@needs_cc
def test_concurrent_builds_of_one_source(tmp_path: Any) -> None:
    import threading
    src = "int64_t seven(void) { return 7; }\n"
    paths: list = []
    errors: list = []

    def run() -> None:
        try:
            paths.append(cpp.build_inline("race", c_sources=src, build_directory=str(tmp_path)))
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=run) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(set(paths)) == 1
    assert cpp.load(paths[0], "seven").seven() == 7
    leftovers = [p.name for p in tmp_path.rglob("*.tmp")]
    assert leftovers == []


@needs_cc
def test_compiler_errors_carry_the_compilers_message(tmp_path: Any) -> None:
    src = "int64_t ok(void) { return 1; }\nint64_t broken(void) { return undeclared_name; }\n"
    with pytest.raises(cpp.BuildError) as e:
        cpp.load_inline("broken", c_sources=src, functions="broken",
                        build_directory=str(tmp_path))
    assert "undeclared_name" in str(e.value) and "load_inline" not in e.value.output
    assert "broken.c:2" in e.value.output  # the user's line numbers
    assert e.value.command[0]
    assert isinstance(e.value, RuntimeError)
    # nothing half-built is left to be taken for a cached build
    assert not any(p.name.endswith(".so") for p in tmp_path.rglob("*"))


@needs_cc
def test_signatures_that_cannot_be_read_and_explicit_ones(tmp_path: Any) -> None:
    src = ("struct P { int a; };\n"
           "int64_t takes_struct(struct P p) { return p.a; }\n"
           "TnObject *first(TnObject *arr) { "
           "return tn_array_at(arr, 0)->v_obj; }\n"
           "static int64_t secret(int64_t x) { return x; }\n"
           "int64_t use(int64_t x) { return secret(x); }\n")
    d = str(tmp_path)
    with pytest.raises(ValueError, match="parameter 0 of 'takes_struct'.*struct P.*signatures"):
        cpp.load_inline("sigs", c_sources=src, functions="takes_struct", build_directory=d)
    with pytest.raises(ValueError, match="no definition of 'absent'"):
        cpp.load_inline("sigs", c_sources=src, functions="absent", build_directory=d)
    with pytest.raises(AttributeError, match="exports no function 'secret'.*static"):
        cpp.load_inline("sigs", c_sources=src, functions="secret", build_directory=d)
    with pytest.raises(ValueError, match="signatures names 'use2'"):
        cpp.load_inline("sigs", c_sources=src, functions="use", signatures={"use2": "i64()"},
                        build_directory=d)
    with pytest.raises(ValueError, match="position"):
        cpp.load_inline("sigs", c_sources=src, functions="use", signatures={"use": "i64(q)"},
                        build_directory=d)
    # an explicit signature: the returned object is borrowed ("obj", not "obj+")
    mod = cpp.load_inline("sigs", c_sources=src, functions=["first", "use"],
                          signatures={"first": "obj(obj<tn.Array>)"}, build_directory=d)
    inner = tvmnode.convert([[1, 2], [3]])
    got = mod.first(inner)
    assert list(got) == [1, 2] and got.same_as(inner[0])
    assert schema_of(mod.get_function_metadata("first")) == "Callable[[Array[Any]], Object]"
    with pytest.raises(TypeError, match="first.*expected obj<tn.Array>"):
        mod.first(tvmnode.convert({"a": 1}))
    assert mod.use(4) == 4
    del mod, inner, got


def test_load_inline_bad_arguments(tmp_path: Any) -> None:
    d = str(tmp_path)
    with pytest.raises(ValueError, match="c_sources or cpp_sources"):
        cpp.load_inline("x", build_directory=d)
    with pytest.raises(ValueError, match="c_sources or cpp_sources"):
        cpp.load_inline("x", c_sources="", cpp_sources="", build_directory=d)
    with pytest.raises(ValueError, match="c_sources or cpp_sources"):
        cpp.load_inline("x", c_sources="int a;", cpp_sources="int b;", build_directory=d)
    with pytest.raises(TypeError, match="load_inline.*'name'.*int"):
        cpp.load_inline(3, c_sources="")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="names files"):
        cpp.load_inline("../escape", c_sources="int a;", build_directory=d)
    with pytest.raises(TypeError, match="'c_sources'.*bytes"):
        cpp.load_inline("x", c_sources=b"int a;", build_directory=d)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="'extra_cflags'.*int"):
        cpp.load_inline("x", c_sources="int a;", extra_cflags=[1],  # type: ignore[list-item]
                        build_directory=d)
    with pytest.raises(TypeError, match="'functions'.*str -> int"):
        cpp.load_inline("x", c_sources="int a;", functions={"a": 1},  # type: ignore[dict-item]
                        build_directory=d)
    with pytest.raises(TypeError, match="'signatures'"):
        cpp.load_inline("x", c_sources="int a;", functions="a",
                        signatures=["i64()"], build_directory=d)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="'a b' is not a C identifier"):
        cpp.load_inline("x", c_sources="int a;", functions=["a b"], build_directory=d)
    with pytest.raises(TypeError, match="load_inline.*'build_directory'.*int"):
        cpp.load_inline("x", c_sources="int a;", build_directory=5)  # type: ignore[arg-type]
    assert not os.listdir(d)  # nothing was built for bad arguments


def test_a_missing_compiler_is_a_build_error(tmp_path: Any, monkeypatch: Any) -> None:
    monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
    with pytest.raises(cpp.BuildError, match="cannot run the compiler"):
        cpp.build_inline("nocc", c_sources="int a;", build_directory=str(tmp_path / "b"))
    assert not any(p.suffix in (".so", ".tmp") for p in (tmp_path / "b").rglob("*"))


@needs_cc
def test_a_library_may_register_global_functions_when_loaded(tmp_path: Any) -> None:
    src = r"""
    static int64_t add3(int64_t a, int64_t b, int64_t c) { return a + b + c; }
    __attribute__((constructor)) static void init(void) {
      tn_func_register_c("compat.lib.add3", (void *)add3, "i64(i64,i64,i64)", 1);
    }
    """
    mod = cpp.load_inline("registers", c_sources=src, build_directory=str(tmp_path))
    try:
        assert mod.functions == []
        assert tvm_ffi.get_global_func("compat.lib.add3")(1, 2, 3) == 6
        meta = tvm_ffi.get_global_func_metadata("compat.lib.add3")
        assert schema_of(meta) == "Callable[[int, int, int], int]"
    finally:
        tvm_ffi.remove_global_func("compat.lib.add3")
    del mod


@needs_cc
def test_build_and_load_a_source_file(tmp_path: Any) -> None:
    f = tmp_path / "tripler.c"
    f.write_text("#include <stdint.h>\nint64_t triple(int64_t x) { return 3 * x; }\n")
    so = cpp.build("tripler", sources=[str(f)], build_directory=str(tmp_path / "b"))
    assert so == cpp.build("tripler", sources=str(f), build_directory=str(tmp_path / "b"))
    mod = cpp.load(so, ["triple"], signatures={"triple": "i64(i64)"})
    assert mod.triple(5) == 15
    out = cpp.build("tripler", sources=[str(f)], output=str(tmp_path / "lib3.so"))
    assert out == str(tmp_path / "lib3.so") and os.path.exists(out)
    # the signature is read from the source beside the library
    inline = cpp.build_inline("tripler2", c_sources=f.read_text(),
                              build_directory=str(tmp_path / "b"))
    assert cpp.load(inline, "triple").triple(2) == 6
    with pytest.raises(FileNotFoundError, match="no source file"):
        cpp.build("x", sources=[str(tmp_path / "missing.c")])
    with pytest.raises(ValueError, match="neither C"):
        cpp.build("x", sources=[str(tmp_path / "a.f90")])
    with pytest.raises(ValueError, match="names no file"):
        cpp.build("x", sources=[])
    with pytest.raises(FileNotFoundError, match="no library"):
        cpp.load(str(tmp_path / "none.so"), "f")
    with pytest.raises(ValueError, match="no definition of 'triple'"):
        cpp.load(out, "triple")  # no source beside it, no signature given
    del mod


@pytest.mark.skipif(not HAVE_CXX, reason="no C++ compiler")
def test_cpp_sources_with_c_linkage(tmp_path: Any) -> None:
    src = r"""
    #include <string>
    extern "C" int64_t length_plus(const char *s, int64_t k) {
      return (int64_t)std::string(s).size() + k;
    }
    int64_t mangled(int64_t x) { return x; }
    """
    mod = cpp.load_inline("cxx", cpp_sources=src, functions="length_plus",
                          build_directory=str(tmp_path))
    assert mod.length_plus("abcd", 1) == 5
    assert schema_of(mod.get_function_metadata("length_plus")) == "Callable[[str, int], int]"
    with pytest.raises(AttributeError, match="extern \"C\""):
        cpp.load_inline("cxx", cpp_sources=src, functions="mangled",
                        build_directory=str(tmp_path))
    del mod


def test_library_path_is_the_loaded_libtvmnode() -> None:
    path = tvmnode._ffi._library_path()
    assert os.path.exists(path) and "libtvmnode" in os.path.basename(path)
    with open("/proc/self/maps") as f:
        maps = f.read()
    assert os.path.realpath(path) in maps or path in maps


def test_func_from_c_checks_its_arguments() -> None:
    with pytest.raises(TypeError, match="'address' expected an int"):
        tvmnode._ffi._func_from_c("0", "i64()", "f")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="'fnptr' is NULL"):
        tvmnode._ffi._func_from_c(0, "i64()", "f")
    with pytest.raises(ValueError, match="'address' is NULL"):
        tvmnode._ffi._func_from_packed(0, "f")
    with pytest.raises(TypeError, match="'address' expected an int"):
        tvmnode._ffi._func_from_packed(1.0, "f")  # type: ignore[arg-type]


@needs_cc
def test_program_in_tvm_ffi_style_runs_unchanged(tmp_path: Any) -> None:
    # written as a tvm-ffi user writes it, through the import alias
    mod = tvm_ffi.cpp.load_inline(
        name="style",
        c_sources="int64_t add_one(int64_t x) { return x + 1; }",
        functions=["add_one"],
        build_directory=str(tmp_path),
    )
    assert mod.add_one(1) == 2
    metadata = mod.get_function_metadata("add_one")
    assert metadata is not None
    assert str(tvm_ffi.TypeSchema.from_json_str(metadata["type_schema"])) == \
        "Callable[[int], int]"
    fn = tvm_ffi.register_global_func("style.add_one", mod.add_one, override=True)
    try:
        assert tvm_ffi.get_global_func("style.add_one")(41) == 42 and fn(0) == 1
    finally:
        tvm_ffi.remove_global_func("style.add_one")
    del mod, fn
