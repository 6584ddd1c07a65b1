"""Node types declared from Python with dataclass conventions.

`@py_class` turns an annotated class body into a tvmnode node type whose
fields live in C, typed from the annotations (int, float, bool, str,
DataType, Device, a node class, List[T], Dict[K, V], Optional[...]), so C
code, JSON graphs and structural equality see it like a type declared in
C, and gives it what `dataclasses.dataclass` gives a Python class:
`__init__` (positional and keyword, defaults, default factories,
`__post_init__`), `__repr__`, `__eq__`/`__hash__`, ordering, `copy` and
`deepcopy`, with `field`, `fields`, `asdict`, `astuple`, `replace` and
`is_dataclass` beside it. The spellings are apache-tvm-ffi's
(`tvm_ffi.dataclasses`), so code written for it ports by changing the
import. What differs is where behaviour lives: equality is C's structural
equality (so `field(compare=False)` also leaves a field out of
`structural_equal` and `structural_hash`), frozen fields are read-only in C
(no language can change them; `Field.set` is the type's own escape hatch),
and defaults that are plain numbers are recorded in C, while other defaults
and factories stay in Python (a C caller of `tn_node_new` must then give
the field). `c_class`, `method`, `init_property` and the enum types
(`Enum`, `IntEnum`, `StrEnum`, `entry`, `auto`) are tvm-ffi's too.
"""
from __future__ import annotations

import collections.abc as _abc
import copy as _copy
import dataclasses as _std_dataclasses
import inspect
import reprlib
import sys
import types
import typing
from typing import Any, Callable, Dict, List, Optional, Tuple, Type, TypeVar, Union, overload

from . import _ffi, _metadata
from ._core import TYPE_INFO_ATTR, DataType, Device, Object, _add_fields

if sys.version_info >= (3, 11):
    from typing import dataclass_transform
else:  # pragma: no cover
    try:
        from typing_extensions import dataclass_transform
    except ImportError:
        def dataclass_transform(**kwargs: Any) -> Callable[[Any], Any]:
            return lambda f: f

__all__ = ["MISSING", "KW_ONLY", "Field", "FrozenInstanceError", "field", "fields", "py_class",
           "c_class", "method", "init_property", "asdict", "astuple", "replace", "is_dataclass"]

_T = TypeVar("_T")
_C = TypeVar("_C", bound=type)

# The C reflection constants (reflect.h).
_ANY, _OBJ, _INT, _FLOAT, _BOOL, _STR, _DTYPE, _DEVICE = range(8)
_READONLY, _NO_SEQ, _HAS_DEFAULT, _OPTIONAL, _DEF = 1, 2, 4, 8, 16
_STRUCTURAL_KINDS = {"tree": _ffi.NODE_TREE, "const-tree": _ffi.NODE_TREE, "dag": _ffi.NODE_DAG,
                     "var": _ffi.NODE_VAR, "unique": _ffi.NODE_UNIQUE,
                     "singleton": _ffi.NODE_UNIQUE, None: _ffi.NODE_UNIQUE}
_FIELD_STRUCTURAL = {None: 0, "ignore": _NO_SEQ, "def": _DEF, "def-recursive": _DEF,
                     "def-non-recursive": _DEF}

FrozenInstanceError = _std_dataclasses.FrozenInstanceError


class _MissingType:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"

    def __reduce__(self) -> str:
        return "MISSING"


MISSING: Any = _MissingType()
"""No default: the field must be given."""


if sys.version_info >= (3, 10):
    # the standard marker itself, so type checkers read `_: KW_ONLY` too
    KW_ONLY = _std_dataclasses.KW_ONLY
else:  # pragma: no cover
    class KW_ONLY:
        """Annotate a pseudo-field with it (`_: KW_ONLY`): the fields after
        it are keyword-only in `__init__`."""


class Field:
    """One field of a node type: what `field()` returns in a class body,
    and what `fields()` reports (name and type filled in)."""

    __slots__ = ("name", "type", "default", "default_factory", "init", "repr", "hash",
                 "compare", "kw_only", "frozen", "structural_eq", "doc", "_check", "_deep",
                 "_descr", "_conv")

    def __init__(self, default: Any = MISSING, default_factory: Any = MISSING,
                 init: bool = True, repr: bool = True, hash: Optional[bool] = None,
                 compare: bool = True, kw_only: Optional[bool] = None, frozen: bool = False,
                 structural_eq: Optional[str] = None, doc: Optional[str] = None) -> None:
        _check_factory("Field", default, default_factory)
        self.name: str = ""
        self.type: Any = None
        self.default = default
        self.default_factory = default_factory
        self.init = init
        self.repr = repr
        self.hash = hash
        self.compare = compare
        self.kw_only = kw_only
        self.frozen = frozen
        self.structural_eq = structural_eq
        self.doc = doc
        self._check: Any = None  # a class or tuple Python checks (Any slots)
        self._deep: Any = None  # (annotation, owner): element types C does not check
        self._descr: Any = None  # the C field descriptor (set and frozen writes)
        self._conv: Any = None  # an Enum class: ints and strs name its members

    def set(self, obj: Any, value: Any) -> None:
        """Write this field of `obj`, even when it is frozen: the escape
        hatch for a type's own constructing code (`__init__`,
        `__post_init__`, a translation pass). The value is checked as any
        store is. `type(obj).name.set(obj, value)` does the same."""
        d = self._descr
        if d is None:
            cls = type(obj)
            d = _readers(cls).get(self.name) if _is_node(obj) else None
            if d is None:
                raise TypeError("Field.set: argument 'obj' expects a node object with field "
                                "'%s', got %s" % (self.name, cls.__name__))
        if self._deep is not None:
            _check_deep(type(obj).__name__, self, value)
        if self._conv is not None and isinstance(value, (int, str)) and \
                not isinstance(value, Object):
            value = _enum_value(type(obj).__name__, self, value)
        d.set(obj, value)

    def __repr__(self) -> str:
        return ("Field(name=%r, type=%r, default=%r, default_factory=%r, init=%r, repr=%r, "
                "compare=%r, kw_only=%r, frozen=%r)"
                % (self.name, self.type, self.default, self.default_factory, self.init,
                   self.repr, self.compare, self.kw_only, self.frozen))


def field(*, default: Any = MISSING, default_factory: Any = MISSING, init: bool = True,
          repr: bool = True, hash: Optional[bool] = None, compare: bool = True,
          kw_only: Optional[bool] = None, frozen: bool = False,
          structural_eq: Optional[str] = None, doc: Optional[str] = None) -> Any:
    """Customize a field of a `@py_class`: `default` or `default_factory`
    (a function of no arguments called for each new object), `init=False`
    (not an `__init__` parameter), `repr=False`, `compare=False` (left out
    of `==`, hashing and structural equality), `kw_only`, `frozen`
    (read-only after construction), `structural_eq` ("ignore", or "def" for
    a field that defines variables) and `doc`."""
    _check_factory("field", default, default_factory)
    if structural_eq not in _FIELD_STRUCTURAL:
        raise ValueError("field(): structural_eq must be one of %s, not %r"
                         % (sorted(k for k in _FIELD_STRUCTURAL if k), structural_eq))
    return Field(default, default_factory, init, repr, hash, compare, kw_only, frozen,
                 structural_eq, doc)


def _check_factory(who: str, default: Any, default_factory: Any) -> None:
    if default_factory is MISSING:
        return
    if default is not MISSING:
        raise ValueError("%s(): cannot specify both default and default_factory" % who)
    if not callable(default_factory):
        raise TypeError("%s(): default_factory must be a callable of no arguments, got %s"
                        % (who, type(default_factory).__name__))


# ---------------------------------------------------------------------------
# Annotations -> C field kinds

def _type_key_of(tp: Any) -> Optional[str]:
    """The C type key of a node class (None for Object itself)."""
    if isinstance(tp, type) and issubclass(tp, Object) and tp is not Object:
        key = tp.__dict__.get("_tn_type_key") or getattr(tp, "_tn_type_key", None)
        return key if isinstance(key, str) else None
    return None


def _elem_key(tp: Any, owner: type) -> str:
    if tp is int or tp is bool:
        return "int"
    if tp is float:
        return "float"
    if tp is str:
        return "tn.String"
    if tp is not owner:
        key = _type_key_of(tp)
        if key is not None:
            return key
    return "any"


def _is_optional(tp: Any) -> Tuple[bool, Any]:
    origin = typing.get_origin(tp)
    union_type = getattr(types, "UnionType", None)
    if origin is Union or (union_type is not None and isinstance(tp, union_type)):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(args) < len(typing.get_args(tp)):
            return True, (args[0] if len(args) == 1 else Union[tuple(args)])
    return False, tp


def _spec(tp: Any, owner: type) -> Tuple[int, Optional[str], bool, Any]:
    """(kind, type_key, optional, class Python checks) for an annotation."""
    if tp is Any or tp is object:
        return _ANY, None, True, None
    if tp is None or tp is type(None):
        return _ANY, None, True, type(None)
    optional, tp = _is_optional(tp)
    if tp is Any or tp is object:  # Optional[Any]: typing.Any is a class on 3.11+
        return _ANY, None, True, None
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    scalar = {int: _INT, float: _FLOAT, bool: _BOOL}
    if tp in scalar:
        if optional:  # C int/float/bool slots cannot hold None
            return _ANY, None, True, (int, float) if tp is float else tp
        return scalar[tp], None, False, None
    if tp is str:
        return _STR, None, optional, None
    if isinstance(tp, type) and issubclass(tp, DataType):
        return (_ANY, None, True, str) if optional else (_DTYPE, None, False, None)
    if isinstance(tp, type) and issubclass(tp, Device):
        return (_ANY, None, True, Device) if optional else (_DEVICE, None, False, None)
    if tp is owner:  # a field of the type being declared: not registered yet
        return _OBJ, None, optional, owner
    if isinstance(tp, type) and issubclass(tp, Object):
        return _OBJ, _type_key_of(tp), optional, None
    seq = (list, tuple, typing.List, typing.Sequence, typing.Tuple)
    import collections.abc as abc
    if origin in (list, tuple, abc.Sequence) or tp in seq:
        if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
            return _OBJ, "tn.Array", optional, None
        elem = _elem_key(args[0], owner) if args else "any"
        return _OBJ, "tn.Array<%s>" % elem if elem != "any" else "tn.Array", optional, None
    if origin in (dict, abc.Mapping) or tp in (dict, typing.Dict, typing.Mapping):
        if len(args) == 2:
            k, v = _elem_key(args[0], owner), _elem_key(args[1], owner)
            if (k, v) != ("any", "any"):
                return _OBJ, "tn.Map<%s, %s>" % (k, v), optional, None
        return _OBJ, "tn.Map", optional, None
    if isinstance(tp, type) and tp is not object:
        return _ANY, None, True, tp  # a Python class: crosses opaque, checked here
    return _ANY, None, True, None


# Element types C does not check: C checks one level (tn.Array<int>,
# tn.Map<K, V> with scalar or node K and V); deeper ones (List[List[int]],
# Dict[str, List[int]], List[Optional[int]]) are checked here, before the
# value is converted, with the path to the bad element.

_SEQ_ORIGINS = (list, tuple, _abc.Sequence)
_MAP_ORIGINS = (dict, _abc.Mapping)


def _is_generic_container(tp: Any) -> bool:
    o = typing.get_origin(tp)
    return (o in _SEQ_ORIGINS or o in _MAP_ORIGINS) and bool(typing.get_args(tp))


def _needs_deep(tp: Any) -> bool:
    """Whether an annotation holds element types C leaves unchecked."""
    _, tp = _is_optional(tp)
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in _SEQ_ORIGINS and args:
        if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
            return any(a is not Any for a in args)
        a = args[0]
        return _is_generic_container(a) or typing.get_origin(a) is Union or (
            _is_optional(a)[0] and _is_optional(a)[1] is not Any)
    if origin in _MAP_ORIGINS and len(args) == 2:
        return any(_is_generic_container(a) or _is_optional(a)[0]
                   or typing.get_origin(a) is Union for a in args)
    return False


_LEAF_PROTOCOLS = ("__tvmnode_object__", "__tvmnode_int__", "__tvmnode_float__",
                   "__tvmnode_value__")


def _deep_mismatch(tp: Any, v: Any, path: str,
                   owner: Tuple[type, type]) -> Optional[Tuple[str, Any, Any]]:
    """None when `v` fits `tp`, else (path, expected annotation, value)."""
    if tp is Any or tp is object:
        return None
    if any(hasattr(type(v), p) for p in _LEAF_PROTOCOLS):
        return None  # converts through its protocol: C checks the result
    origin = typing.get_origin(tp)
    union_type = getattr(types, "UnionType", None)
    if origin is Union or (union_type is not None and isinstance(tp, union_type)):
        args = typing.get_args(tp)
        if v is None and type(None) in args:
            return None
        for a in args:
            if a is not type(None) and _deep_mismatch(a, v, path, owner) is None:
                return None
        return path, tp, v
    args = typing.get_args(tp)
    if origin in _SEQ_ORIGINS or tp in (list, tuple, typing.List, typing.Sequence):
        if isinstance(v, (str, bytes)) or not isinstance(v, (list, tuple, _ffi.Array)):
            return path, tp, v
        if not args:
            return None
        if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
            if len(args) != len(v):
                return path, tp, v
            elems = list(zip(args, list(v)))
        else:
            elems = [(args[0], x) for x in list(v)]
        for i, (a, x) in enumerate(elems):
            bad = _deep_mismatch(a, x, "%s[%d]" % (path, i), owner)
            if bad is not None:
                return bad
        return None
    if origin in _MAP_ORIGINS or tp in (dict, typing.Dict, typing.Mapping):
        if not isinstance(v, (dict, _ffi.Map)):
            return path, tp, v
        if len(args) != 2:
            return None
        for k, x in list(v.items()):
            bad = (_deep_mismatch(args[0], k, "%s key %r" % (path, k), owner)
                   or _deep_mismatch(args[1], x, "%s[%r]" % (path, k), owner))
            if bad is not None:
                return bad
        return None
    if tp is owner[0]:
        tp = owner[1]  # the class before it was rebuilt with slots
    if tp is float:
        ok = isinstance(v, (int, float))
    elif tp is int:
        ok = isinstance(v, int)
    elif isinstance(tp, type):
        if issubclass(tp, DataType):
            ok = isinstance(v, (DataType, str))
        else:
            ok = isinstance(v, tp)
    else:
        ok = True  # an annotation this check does not understand: C decides
    return None if ok else (path, tp, v)


def _enum_value(clsname: str, f: "Field", v: Any) -> Any:
    """The member of an Enum field's class an int or str index names."""
    try:
        return f._conv.get(v)
    except OverflowError:
        raise TypeError("%s: field '%s' expects %s, got int %d outside the int64 range"
                        % (clsname, f.name, f._conv.__name__, v)) from None
    except KeyError:
        raise TypeError("%s: field '%s' expects %s, which has no member %r"
                        % (clsname, f.name, f._conv.__name__, v)) from None


def _check_deep(clsname: str, f: "Field", value: Any) -> None:
    tp, owner = f._deep
    bad = _deep_mismatch(tp, value, "", owner)
    if bad is not None:
        path, want, got = bad
        raise TypeError("%s: field '%s' expects %s, got %s%s"
                        % (clsname, f.name, _type_name(tp),
                           "%s at %s%s" % (type(got).__name__, f.name, path) if path
                           else type(got).__name__,
                           " (element expects %s)" % _type_name(want) if path else ""))


def _defining_scope_locals() -> Dict[str, Any]:
    """The local names where the class statement being declared runs (the
    first frame outside this package's declaring code): a class declared
    inside a function may name the function's other classes."""
    f = sys._getframe(1)
    ours = (__name__, __name__.rsplit(".", 1)[0] + "._enum")
    while f is not None and f.f_globals.get("__name__") in ours:
        f = f.f_back  # type: ignore[assignment]
    return dict(f.f_locals) if f is not None else {}


def _hints(cls: type) -> Dict[str, Any]:
    ann = cls.__dict__.get("__annotations__", {})
    module = sys.modules.get(cls.__module__)
    globalns = dict(vars(module)) if module else {}
    localns = {cls.__name__: cls, "KW_ONLY": KW_ONLY}
    scope: Optional[Dict[str, Any]] = None
    out: Dict[str, Any] = {}
    for name, a in ann.items():
        if isinstance(a, str):
            try:
                a = eval(a, globalns, localns)  # noqa: S307 (annotations are code)
            except NameError:
                if scope is None:
                    scope = _defining_scope_locals()
                    scope.update(localns)
                try:
                    a = eval(a, globalns, scope)  # noqa: S307
                except Exception:
                    a = _unresolved(a)
            except Exception:
                a = _unresolved(a)
        out[name] = a
    return out


def _unresolved(a: str) -> Any:
    return typing.ClassVar if a.replace(" ", "").startswith(
        ("ClassVar", "typing.ClassVar")) else Any


def _is_classvar(tp: Any) -> bool:
    return tp is typing.ClassVar or typing.get_origin(tp) is typing.ClassVar


# ---------------------------------------------------------------------------
# Fields of C types (parents declared in C or with register_object)

def _c_fields(type_index: int) -> List[Field]:
    out = []
    for d in _ffi._type_fields(type_index):
        f = Field(default=d.default if d.has_default else MISSING)
        f.name = d.name
        f.frozen = bool(d.flags & _READONLY)
        f.compare = not d.flags & _NO_SEQ
        # fields left out of comparison (checked_type, spans) are caches:
        # keyword-only, and not shown
        f.repr = f.compare
        f.kw_only = not f.compare
        if f.default is MISSING and d.flags & _OPTIONAL:
            f.default = None
        out.append(f)
    return out


def _all_fields(cls: type) -> Tuple[Field, ...]:
    fs = cls.__dict__.get("__tvmnode_fields__")
    if fs is not None:
        return tuple(fs)
    t = getattr(cls, "_tn_type_index", None)
    if t is None or not _ffi.type_is_node(t):
        return tuple(getattr(cls, "__tvmnode_fields__", ()))
    return tuple(_c_fields(t))


# ---------------------------------------------------------------------------
# The generated methods

def _rebuild_with_slots(cls: type) -> type:
    """The class again with `__slots__ = ()`: proxies then have no
    `__dict__` (a misspelt field is an AttributeError, not a value lost on
    the way through C) and stay the small non-GC objects wrapping makes."""
    ns = dict(cls.__dict__)
    ns.pop("__dict__", None)
    ns.pop("__weakref__", None)
    ns["__slots__"] = ()
    new = type(cls)(cls.__name__, cls.__bases__, ns)
    new.__qualname__ = cls.__qualname__
    # zero-argument super() in methods refers to the class through a cell
    for v in ns.values():
        for fn in (v, getattr(v, "__func__", None), getattr(v, "fget", None),
                   getattr(v, "fset", None)):
            for cell in getattr(fn, "__closure__", None) or ():
                try:
                    if cell.cell_contents is cls:
                        cell.cell_contents = new
                except ValueError:
                    pass
    return new


def _has_default(f: Field) -> bool:
    return f.default is not MISSING or f.default_factory is not MISSING


def _init_order(flds: Tuple[Field, ...]) -> List[Field]:
    """The positional parameters of the generated __init__: required fields
    first, then those with a default, each group in declaration order
    (inherited first), as tvm-ffi orders them."""
    pos = [f for f in flds if f.init and not f.kw_only]
    return [f for f in pos if not _has_default(f)] + [f for f in pos if _has_default(f)]


def _make_init(cls: type, flds: Tuple[Field, ...], type_index: int) -> Callable[..., None]:
    ordered = _init_order(flds)
    positional = [f.name for f in ordered]
    init_names = {f.name for f in flds if f.init}
    by_name = {f.name: f for f in flds}
    name = cls.__name__
    post_init = "__post_init__"

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if self._handle != 0 and type(self) is not cls:
            # made by __new__ for a subclass whose own __init__ calls
            # super().__init__(...): fill in the fields given here
            if len(args) > len(positional):
                raise TypeError("%s.__init__() takes %d positional argument%s but %d were "
                                "given" % (name, len(positional),
                                           "" if len(positional) == 1 else "s", len(args)))
            given = dict(zip(positional, args))
            for k, v in kwargs.items():
                if k not in init_names or k in given:
                    raise TypeError("%s.__init__() got an unexpected or repeated keyword "
                                    "argument '%s'" % (name, k))
                given[k] = v
            for k, v in given.items():
                by_name[k].set(self, v)
            return
        if len(args) > len(positional):
            raise TypeError("%s.__init__() takes %d positional argument%s but %d were given"
                            % (name, len(positional), "" if len(positional) == 1 else "s",
                               len(args)))
        values = dict(zip(positional, args))
        for k, v in kwargs.items():
            if k not in init_names:
                raise TypeError("%s.__init__() got an unexpected keyword argument '%s'"
                                % (name, k))
            if k in values:
                raise TypeError("%s.__init__() got multiple values for argument '%s'"
                                % (name, k))
            values[k] = v
        obj = _construct(cls, flds, type_index, values, init=True)
        self._move_handle_from(obj)
        _run_init_properties(self)
        hook = getattr(self, post_init, None)
        if hook is not None:
            hook()

    __init__.__qualname__ = cls.__qualname__ + ".__init__"
    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    kw: List[inspect.Parameter] = []
    kw_fields = [f for f in flds if f.init and f.kw_only]
    kw_fields = ([f for f in kw_fields if not _has_default(f)]
                 + [f for f in kw_fields if _has_default(f)])
    for f in ordered + kw_fields:
        default = (f.default if f.default is not MISSING else
                   inspect.Parameter.empty if f.default_factory is MISSING else
                   _FactoryDefault(f.default_factory))
        p = inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY if f.kw_only
                              else inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default)
        (kw if f.kw_only else params).append(p)
    __init__.__signature__ = inspect.Signature(params + kw)  # type: ignore[attr-defined]
    return __init__


def _run_init_properties(self: Any) -> None:
    """Compute the init_property fields of a new object, base classes first."""
    props = type(self).__dict__.get("__tvmnode_init_props__")
    if props is None:
        props = {}
        for c in reversed(type(self).__mro__):
            props.update(c.__dict__.get("__tvmnode_own_init_props__", {}))
        try:
            type.__setattr__(type(self), "__tvmnode_init_props__", props)
        except (AttributeError, TypeError):
            pass
    if props:
        rd = _readers(type(self))
        for n, fn in props.items():
            rd[n].set(self, fn(self))


def _blank_new(klass: Any, *args: Any, **kwargs: Any) -> Any:
    """__new__ of a node type with a user-written __init__: the object
    already has its C node, fields zero (None) or at their defaults, so that
    __init__ can assign them (tvm-ffi's py_class does the same)."""
    owner = _declaring(klass)
    obj = _ffi.node_alloc(owner._tn_type_index)
    self = _wrap_as(klass, obj)
    for f in _all_fields(owner):
        if f.default_factory is not MISSING:
            _readers(klass)[f.name].set(self, f.default_factory())
        elif f.default is not MISSING and f.default is not None and \
                not _readers(klass)[f.name].has_default:
            _readers(klass)[f.name].set(self, f.default)
    return self


def _plain_new(klass: Any, *args: Any, **kwargs: Any) -> Any:
    return Object.__new__(klass)


def _declaring(klass: type) -> Any:
    """The nearest @py_class class of `klass` (itself, or what it derives)."""
    return next(c for c in klass.__mro__ if "__tvmnode_fields__" in c.__dict__)


def _wrap_user_init(cls: type, user_init: Callable[..., None]) -> Callable[..., None]:
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        user_init(self, *args, **kwargs)
        if _declaring(type(self)) is cls:  # the outermost __init__ of a chain
            _run_init_properties(self)
            _check_required(self)

    __init__.__qualname__ = getattr(user_init, "__qualname__", cls.__qualname__ + ".__init__")
    __init__.__doc__ = user_init.__doc__
    __init__.__wrapped__ = user_init  # type: ignore[attr-defined]
    return __init__


def _check_required(self: Any) -> None:
    """A user-written __init__ must set every required object or str field."""
    unset = [d.name for d in _readers(type(self)).values()
             if d.kind in (_OBJ, _STR) and not d.flags & _OPTIONAL
             and d.__get__(self, type(self)) is None]
    if unset:
        raise TypeError("%s.__init__() left required field%s %s unset"
                        % (type(self).__name__, "" if len(unset) == 1 else "s",
                           " and ".join("'%s'" % n for n in unset)))


class _FactoryDefault:
    __slots__ = ("factory",)

    def __init__(self, factory: Callable[[], Any]) -> None:
        self.factory = factory

    def __repr__(self) -> str:
        return "<factory %s>" % getattr(self.factory, "__name__", self.factory)


def _construct(cls: type, flds: Tuple[Field, ...], type_index: int, values: Dict[str, Any],
               init: bool, make: Callable[[int, Tuple[str, ...], Tuple[Any, ...]], Any]
               = _ffi.node_new) -> Any:
    """A new C node of `cls` from field values; defaults fill the rest."""
    missing = []
    for f in flds:
        if f.name in values:
            continue
        if f.default is not MISSING:
            values[f.name] = f.default
        elif f.default_factory is not MISSING:
            values[f.name] = f.default_factory()
        elif f.init or not init:
            missing.append(f.name)
    if missing:
        raise TypeError("%s.__init__() missing %d required argument%s: %s"
                        % (cls.__name__, len(missing), "" if len(missing) == 1 else "s",
                           " and ".join("'%s'" % m for m in missing)))
    for f in flds:
        chk = f._check
        if chk is not None:
            v = values.get(f.name)
            if v is not None and not isinstance(v, chk):
                raise TypeError("%s: field '%s' expects %s, got %s"
                                % (cls.__name__, f.name, _type_name(f.type),
                                   type(v).__name__))
        if f._deep is not None:
            _check_deep(cls.__name__, f, values.get(f.name))
        if f._conv is not None:
            v = values.get(f.name)
            if isinstance(v, (int, str)) and not isinstance(v, Object):
                values[f.name] = _enum_value(cls.__name__, f, v)
    try:
        return make(type_index, tuple(values), tuple(values.values()))
    except TypeError as e:
        for f in flds:  # say it in Python's words when a scalar is wrong
            want = _SCALAR_CHECKS.get(f.type)
            v = values.get(f.name)
            if want is not None and not isinstance(v, want):
                raise TypeError("%s: field '%s' expects %s, got %s"
                                % (cls.__name__, f.name, _type_name(f.type),
                                   type(v).__name__)) from None
        raise TypeError("%s: %s" % (cls.__name__, e)) from None


_SCALAR_CHECKS: Dict[Any, Any] = {int: int, float: (int, float), bool: bool, str: str}


def _type_name(tp: Any) -> str:
    return tp.__name__ if isinstance(tp, type) else str(tp).replace("typing.", "")


def _readers(cls: type) -> Dict[str, Any]:
    """name -> the C field descriptor: values are read from the C layout,
    past any Python property of the same name (Expr.checked_type raises
    before type inference)."""
    r = cls.__dict__.get("__tvmnode_readers__")
    if r is None:
        r = {d.name: d for d in _ffi._type_fields(getattr(cls, "_tn_type_index"))}
        try:
            setattr(cls, "__tvmnode_readers__", r)
        except (AttributeError, TypeError):
            pass
    return r


def _get(obj: Any, name: str) -> Any:
    return _readers(type(obj))[name].__get__(obj, type(obj))


def _field_values(obj: Any, flds: Tuple[Field, ...]) -> Dict[str, Any]:
    return {f.name: _get(obj, f.name) for f in flds}


def _make_repr(flds: Tuple[Field, ...]) -> Callable[[Any], str]:
    shown = [f.name for f in flds if f.repr]

    @reprlib.recursive_repr()
    def __repr__(self: Any) -> str:
        if self._handle == 0:
            return "<%s without a handle>" % type(self).__qualname__
        return "%s(%s)" % (type(self).__qualname__,
                           ", ".join("%s=%r" % (n, _get(self, n)) for n in shown))
    return __repr__


def _eq(self: Any, other: Any) -> Any:
    if other.__class__ is not self.__class__:
        return NotImplemented
    if self.same_as(other):
        return True
    return bool(_ffi.structural_equal(self, other))


def _ne(self: Any, other: Any) -> Any:
    r = _eq(self, other)
    return r if r is NotImplemented else not r


def _hash(self: Any) -> int:
    return int(_ffi.structural_hash(self)) & sys.maxsize


def _make_order(flds: Tuple[Field, ...]) -> Dict[str, Callable[[Any, Any], Any]]:
    names = [f.name for f in flds if f.compare]

    def key(o: Any) -> Tuple[Any, ...]:
        return tuple(_get(o, n) for n in names)

    def make(op: Callable[[Any, Any], bool], name: str) -> Callable[[Any, Any], Any]:
        def cmp(self: Any, other: Any) -> Any:
            if other.__class__ is not self.__class__:
                return NotImplemented
            return op(key(self), key(other))
        cmp.__name__ = name
        return cmp
    import operator as o
    return {"__lt__": make(o.lt, "__lt__"), "__le__": make(o.le, "__le__"),
            "__gt__": make(o.gt, "__gt__"), "__ge__": make(o.ge, "__ge__")}


def _is_mutable_field(cls: type, name: str) -> bool:
    """A field of `cls` that is not frozen: one a non-frozen class in a
    mixed hierarchy declared (a frozen class's fields are all frozen)."""
    return any(f.name == name and not f.frozen for f in _all_fields(cls))


def _frozen_setattr(self: Any, name: str, value: Any) -> None:
    if _is_mutable_field(type(self), name):
        Object.__setattr__(self, name, value)
        return
    raise FrozenInstanceError("cannot assign to field '%s' of frozen %s"
                              % (name, type(self).__name__))


def _frozen_delattr(self: Any, name: str) -> None:
    if _is_mutable_field(type(self), name):
        Object.__delattr__(self, name)
        return
    raise FrozenInstanceError("cannot delete field '%s' of frozen %s"
                              % (name, type(self).__name__))


def _copy_node(self: Any) -> Any:
    cls = type(self)
    flds = _all_fields(cls)
    return _wrap_as(cls, _construct(cls, flds, cls._tn_type_index, _field_values(self, flds),
                                    init=False))


def _deepcopy_value(v: Any, memo: Dict[Any, Any]) -> Any:
    if v is None or isinstance(v, (int, float, str, bytes)):
        return v
    if not isinstance(v, Object):
        return _copy.deepcopy(v, memo)
    # A proxy is made at each field read, so its id says nothing: objects
    # are remembered by handle (sharing is kept), and the proxy is kept
    # alive as copy.deepcopy does for what it remembers.
    key = ("tvmnode", v._handle)
    hit = memo.get(key)
    if hit is not None:
        return hit
    if isinstance(v, _ffi.List):
        r: Any = _ffi.List([_deepcopy_value(x, memo) for x in v])
    elif isinstance(v, _ffi.Array):
        r = _ffi.Array([_deepcopy_value(x, memo) for x in v])
    elif isinstance(v, _ffi.Dict):
        r = _ffi.Dict({_deepcopy_value(k, memo): _deepcopy_value(x, memo) for k, x in v.items()})
    elif isinstance(v, _ffi.Map):
        r = _ffi.Map({_deepcopy_value(k, memo): _deepcopy_value(x, memo) for k, x in v.items()})
    elif _is_node(v) and not _ffi.type_node_kind(type(v)._tn_type_index) == _ffi.NODE_UNIQUE:
        cls = type(v)
        flds = _all_fields(cls)
        values = {f.name: _deepcopy_value(_get(v, f.name), memo) for f in flds}
        r = _wrap_as(cls, _construct(cls, flds, cls._tn_type_index, values, init=False))
    else:
        r = v  # functions, operators, tensors...: shared, as deepcopy does for classes
    memo[key] = r
    memo.setdefault(id(memo), []).append(v)
    return r


def _deepcopy_node(self: Any, memo: Dict[Any, Any]) -> Any:
    return _deepcopy_value(self, memo)


def _wrap_as(cls: type, obj: Any) -> Any:
    if type(obj) is cls:
        return obj
    new: Any = Object.__new__(cls)
    new._move_handle_from(obj)
    return new


# ---------------------------------------------------------------------------
# The decorator

@overload
@dataclass_transform(eq_default=False, order_default=False, field_specifiers=(Field, field))
def py_class(cls_or_type_key: _C, /, *, type_key: Optional[str] = ..., frozen: bool = ...,
             init: bool = ..., repr: bool = ..., eq: bool = ..., order: bool = ...,
             unsafe_hash: bool = ..., match_args: bool = ..., kw_only: bool = ...,
             structural_eq: Optional[str] = ..., slots: bool = ...) -> _C: ...


@overload
@dataclass_transform(eq_default=False, order_default=False, field_specifiers=(Field, field))
def py_class(cls_or_type_key: Optional[str] = ..., /, *, type_key: Optional[str] = ...,
             frozen: bool = ..., init: bool = ..., repr: bool = ..., eq: bool = ...,
             order: bool = ..., unsafe_hash: bool = ..., match_args: bool = ...,
             kw_only: bool = ..., structural_eq: Optional[str] = ...,
             slots: bool = ...) -> Callable[[_C], _C]: ...


@dataclass_transform(eq_default=False, order_default=False, field_specifiers=(Field, field))
def py_class(cls_or_type_key: Any = None, /, *, type_key: Optional[str] = None,
             frozen: bool = False, init: bool = True, repr: bool = True, eq: bool = False,
             order: bool = False, unsafe_hash: bool = False, match_args: bool = True,
             kw_only: bool = False, structural_eq: Optional[str] = "tree",
             slots: bool = True) -> Any:
    """Declare a node type from an annotated subclass of tvmnode.Object
    (or of a node class declared in C or with py_class):

        @py_class("my.Point")
        class Point(tvmnode.Object):
            x: int
            y: float = 0.0
            tags: List[str] = field(default_factory=list, compare=False)

    The type key defaults to the module and class name. `structural_eq` is
    how structural equality treats the type: "tree" (by content), "dag"
    (content and sharing), "var" (a variable, bound where defined),
    "unique" / None (identity). `eq=True` makes `==` structural equality and,
    with `frozen=True` or `unsafe_hash=True`, `hash` the structural hash (a
    mutable type with eq=True is unhashable, as in dataclasses); without
    it `==` is identity, as for every tvmnode object. `frozen=True` makes
    every field read-only in C.
    """
    if order and not eq:
        raise ValueError("py_class: order=True needs eq=True")
    if structural_eq not in _STRUCTURAL_KINDS:
        raise ValueError("py_class: structural_eq must be one of %s or None, not %r"
                         % (sorted(k for k in _STRUCTURAL_KINDS if k), structural_eq))

    def wrap(cls: Any) -> Any:
        key = type_key or (cls_or_type_key if isinstance(cls_or_type_key, str) else None)
        return _declare(cls, key, frozen=frozen, init=init, repr=repr, eq=eq, order=order,
                        unsafe_hash=unsafe_hash, match_args=match_args, kw_only=kw_only,
                        structural_eq=structural_eq, slots=slots)

    if isinstance(cls_or_type_key, type):
        return wrap(cls_or_type_key)
    if cls_or_type_key is not None and not isinstance(cls_or_type_key, str):
        raise TypeError("py_class: expected a class or a type key, got %r" % (cls_or_type_key,))
    return wrap


def _declare(cls: Any, key: Optional[str], *, frozen: bool, init: bool, repr: bool, eq: bool,
             order: bool, unsafe_hash: bool, match_args: bool, kw_only: bool,
             structural_eq: Optional[str], slots: bool, no_create: bool = False) -> type:
    if not (isinstance(cls, type) and issubclass(cls, Object)):
        raise TypeError("py_class: %r must derive from tvmnode.Object (or a node class)"
                        % (cls,))
    if "_tn_type_index" in cls.__dict__:
        raise TypeError("py_class: %s is already a registered class" % cls.__name__)
    if key is None:
        key = "%s.%s" % (cls.__module__, cls.__qualname__)
    parent_cls = next(b for b in cls.__mro__[1:] if "_tn_type_index" in b.__dict__
                      or b is Object)
    parent = parent_cls.__dict__.get("_tn_type_index", _ffi.TYPE_OBJECT)
    if parent != _ffi.TYPE_OBJECT and not _ffi.type_is_node(parent):
        raise TypeError("py_class: the parent %s is not a node type (it has no fields)"
                        % parent_cls.__name__)
    # frozen and non-frozen classes may derive from each other: each field
    # stays as the class that declared it made it (read-only in C or not)
    inherited = list(_all_fields(parent_cls)) if parent != _ffi.TYPE_OBJECT else []

    init_props: Dict[str, Callable[[Any], Any]] = {}
    for n, v in list(cls.__dict__.items()):
        if isinstance(v, init_property):
            init_props[n] = v.func
    methods = _collect_methods(cls)
    hints = _hints(cls)
    own: List[Field] = []
    kw_only_rest = kw_only
    for name, tp in hints.items():
        if _is_classvar(tp):
            continue
        if tp is KW_ONLY:
            kw_only_rest = True
            continue
        value = cls.__dict__.get(name, MISSING)
        if isinstance(value, init_property):
            f = Field(init=False, structural_eq="ignore")
        else:
            f = value if isinstance(value, Field) else Field(default=value)
        _check_factory("py_class: field '%s'" % name, f.default, f.default_factory)
        if isinstance(f.default, Field):
            raise TypeError("py_class: field '%s' has a Field as its default" % name)
        f.name = name
        f.type = tp
        if f.kw_only is None:
            f.kw_only = kw_only_rest
        if f.hash is None:
            f.hash = f.compare
        f.frozen = f.frozen or frozen
        own.append(f)

    specs = []
    for f in own:
        if f.type is object or _is_optional(f.type)[1] is object:
            # as tvm-ffi: `object` says nothing a field could store or check
            raise TypeError("py_class: field '%s' of %s is annotated 'object', which is not a "
                            "field type: use typing.Any for a field holding any value"
                            % (f.name, cls.__name__))
        kind, tkey, optional, check = _spec(f.type, cls)
        f._check = check
        flags = _FIELD_STRUCTURAL[f.structural_eq]
        if f.frozen:
            flags |= _READONLY
        if not f.compare:
            flags |= _NO_SEQ
        if optional or (f.default is None):
            flags |= _OPTIONAL
        default = None
        # defaults C can hold without an object (so declaring a type makes
        # none) are recorded in C too; others stay in Python
        if (f.default is not MISSING and kind in (_INT, _FLOAT, _BOOL, _ANY)
                and (f.default is None or type(f.default) in (int, float, bool))):
            flags |= _HAS_DEFAULT
            default = f.default
        if not f.init and f.default is MISSING and f.default_factory is MISSING:
            flags |= _OPTIONAL  # set by __post_init__ (or left None)
            if kind in (_STR, _OBJ):
                pass
            elif kind != _ANY:
                kind, tkey = _ANY, None
        specs.append((f.name, kind, flags, tkey, default, f.doc))

    t = _ffi.node_register_fields(key, parent, _STRUCTURAL_KINDS[structural_eq], specs,
                                  no_create)

    for f in own:
        if f.name in cls.__dict__:
            delattr(cls, f.name)
    declared = cls
    if slots and "__slots__" not in cls.__dict__:
        cls = _rebuild_with_slots(cls)
    for f in own:
        if f._check is declared:  # a field of its own class: the rebuilt one
            f._check = cls
        if _needs_deep(f.type):
            f._deep = (f.type, (declared, cls))
        target = _is_optional(f.type)[1]
        if isinstance(target, type) and issubclass(target, _EnumBase):
            f._conv = target
    flds = tuple(inherited + own)
    cls.__tvmnode_fields__ = flds
    cls.__tvmnode_frozen__ = frozen
    cls._tn_type_index = t
    cls._tn_type_key = key
    cls.__tvmnode_own_init_props__ = init_props
    body = cls.__dict__
    if "__init__" in body:
        # a user-written __init__ assigns fields of an object __new__ made
        cls.__init__ = _wrap_user_init(cls, body["__init__"])
        if "__new__" not in body:
            cls.__new__ = _blank_new
    elif init:
        cls.__init__ = _make_init(cls, flds, t)
        if "__new__" not in body and any(
                c.__dict__.get("__new__") is _blank_new for c in cls.__mro__[1:]):
            cls.__new__ = _plain_new
    else:
        def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
            raise TypeError("%s cannot be constructed directly (init=False); define __init__"
                            % type(self).__name__)
        cls.__init__ = __init__
    _install_dunders(cls, flds, repr=repr, eq=eq, frozen=frozen, unsafe_hash=unsafe_hash,
                     order=order, match_args=match_args)
    _add_fields(cls, t)
    rd = _readers(cls)
    for f in flds:
        f._descr = rd.get(f.name)
    for f in own:
        if f._deep is not None or f._conv is not None:
            setattr(cls, f.name, _CheckedField(f))
    cls.__tvm_ffi_type_info__ = TYPE_INFO_ATTR
    _ffi._register_class(t, cls)
    for n, fn in methods:
        _ffi.type_register_method(t, n, fn)
        if isinstance(cls.__dict__.get(n), staticmethod):
            _metadata.STATIC_METHODS.add((t, n))
    return cls


def _install_dunders(cls: Any, flds: Tuple[Field, ...], *, repr: bool, eq: bool, frozen: bool,
                     unsafe_hash: bool, order: bool, match_args: bool) -> None:
    """The dataclass methods the class body does not define itself."""
    body = cls.__dict__
    if repr and "__repr__" not in body:
        cls.__repr__ = _make_repr(flds)
    if eq and "__eq__" not in body:
        cls.__eq__ = _eq
        cls.__ne__ = _ne
    if "__hash__" not in body:
        if unsafe_hash or (eq and frozen):
            cls.__hash__ = _hash
        elif eq:
            cls.__hash__ = None
    if order:
        for n, fn in _make_order(flds).items():
            if n not in body:
                setattr(cls, n, fn)
    if frozen:
        if "__setattr__" not in body:
            cls.__setattr__ = _frozen_setattr
        if "__delattr__" not in body:
            cls.__delattr__ = _frozen_delattr
    if "__copy__" not in body:
        cls.__copy__ = _copy_node
    if "__deepcopy__" not in body:
        cls.__deepcopy__ = _deepcopy_node
    if "__replace__" not in body:
        cls.__replace__ = _replace_method
    if match_args and "__match_args__" not in body:
        setattr(cls, "__match_args__", tuple(f.name for f in flds if f.init and not f.kw_only))


@dataclass_transform(eq_default=False, order_default=False, field_specifiers=(Field, field))
def c_class(type_key: str, *, frozen: bool = False, init: bool = True, repr: bool = True,
            eq: bool = False, order: bool = False, unsafe_hash: bool = False,
            match_args: bool = True) -> Callable[[_C], _C]:
    """Attach a Python class to a node type declared in C (as
    `register_object` does) and give it the dataclass methods `py_class`
    gives, from the C reflection table: `__init__` (required fields first,
    C defaults), `__repr__`, `eq`/`order`/`unsafe_hash`, copy, `replace`,
    `fields()`. `frozen=True` makes assignment from Python refuse every field
    (C's own read-only fields refuse anyway). Methods written in the class
    body are kept."""
    if not isinstance(type_key, str):
        raise TypeError("c_class: argument 'type_key' expects a str, got %s"
                        % type(type_key).__name__)
    if order and not eq:
        raise ValueError("c_class: order=True needs eq=True")

    def wrap(klass: Any) -> Any:
        if not (isinstance(klass, type) and issubclass(klass, Object)):
            raise TypeError("c_class: %r must derive from tvmnode.Object" % (klass,))
        cls: Any = klass
        try:
            t = _ffi.type_index(type_key)
        except KeyError:
            raise TypeError("c_class: no type '%s' is declared in C (declare a type from "
                            "Python with py_class)" % type_key) from None
        if not _ffi.type_is_node(t):
            raise TypeError("c_class: '%s' is not a node type (it has no reflected fields)"
                            % type_key)
        for n in list(cls.__dict__.get("__annotations__", {})):
            if n in cls.__dict__ and not callable(cls.__dict__[n]):
                delattr(cls, n)  # annotations document C's fields; C holds them
        cls._tn_type_index = t
        cls._tn_type_key = type_key
        flds = tuple(_c_fields(t))
        hints = _hints(cls)
        for f in flds:
            f.type = hints.get(f.name)
            if frozen:
                f.frozen = True
        cls.__tvmnode_fields__ = flds
        cls.__tvmnode_frozen__ = frozen
        cls.__tvmnode_own_init_props__ = {}
        if init and "__init__" not in cls.__dict__:
            cls.__init__ = _make_init(cls, flds, t)
        _install_dunders(cls, flds, repr=repr, eq=eq, frozen=frozen, unsafe_hash=unsafe_hash,
                         order=order, match_args=match_args)
        _add_fields(cls, t)
        rd = _readers(cls)
        for f in flds:
            f._descr = rd.get(f.name)
        cls.__tvm_ffi_type_info__ = TYPE_INFO_ATTR
        _ffi._register_class(t, cls)
        return cls
    return wrap


class _CheckedField:
    """The attribute of a field whose values Python checks or converts
    before C stores them (nested element types, enum indices); reads go
    to C."""
    __slots__ = ("field", "descr")

    def __init__(self, f: Field) -> None:
        self.field = f
        self.descr = f._descr

    @property
    def name(self) -> str:
        return self.field.name

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        if obj is None:
            return self
        return self.descr.__get__(obj, owner)

    def _value(self, obj: Any, value: Any) -> Any:
        f = self.field
        if f._deep is not None:
            _check_deep(type(obj).__name__, f, value)
        if f._conv is not None and isinstance(value, (int, str)) and \
                not isinstance(value, Object):
            value = _enum_value(type(obj).__name__, f, value)
        return value

    def __set__(self, obj: Any, value: Any) -> None:
        self.descr.__set__(obj, self._value(obj, value))

    @property
    def fget(self) -> Any:
        return self.descr.fget

    @property
    def fset(self) -> Any:
        """As the C field's: None when read-only, else fset(obj, value)."""
        return None if self.descr.fset is None else self.__set__

    def set(self, obj: Any, value: Any) -> None:
        """Write the field, frozen or not (see Field.set)."""
        self.descr.set(obj, self._value(obj, value))


def _replace_method(self: Any, /, **changes: Any) -> Any:
    """copy.replace(obj, **changes) (Python 3.13): as replace()."""
    return replace(self, **changes)


# ---------------------------------------------------------------------------
# Methods and computed fields

def method(fn: _T) -> _T:
    """Mark a method (or staticmethod) of a @py_class body for registration
    as a method of the C type, so every language finds it by name
    (`tvmnode.Function` callable with the object first, or no object for a
    staticmethod); it stays an ordinary Python method too."""
    if isinstance(fn, classmethod):
        raise TypeError("method: @classmethod is not supported (a type method takes the "
                        "object first); use a plain method or a staticmethod")
    target = fn.__func__ if isinstance(fn, staticmethod) else fn
    if not callable(target):
        raise TypeError("method: expected a callable, got %s" % type(fn).__name__)
    try:
        setattr(target, "__tvmnode_method__", True)
    except (AttributeError, TypeError):
        raise TypeError("method: cannot mark %r" % (fn,)) from None
    return fn


def _marked_method(fn: Any) -> bool:
    # @method's mark, or tvm-ffi's for code that sets it by hand
    return any(getattr(fn, m, False) is True for m in ("__tvmnode_method__", "__ffi_method__"))


def _collect_methods(cls: type) -> List[Tuple[str, Any]]:
    out = []
    for n, v in cls.__dict__.items():
        if isinstance(v, classmethod):
            if _marked_method(v.__func__):
                raise TypeError("py_class: %s.%s is marked with @method but wrapped by "
                                "@classmethod; use a plain method or a staticmethod"
                                % (cls.__name__, n))
            continue
        fn = v.__func__ if isinstance(v, staticmethod) else v
        if _marked_method(fn):
            out.append((n, fn))
    return out


class init_property(typing.Generic[_T]):
    """A field computed once, right after the generated `__init__` (before
    `__post_init__`), from the decorated function: stored in C like any
    field (init=False, left out of structural equality), so every language
    reads it. The return annotation is the field's type."""

    def __init__(self, func: Callable[[Any], _T]) -> None:
        if not callable(func):
            raise TypeError("init_property: expected a function, got %s"
                            % type(func).__name__)
        self.func = func
        self.name: Optional[str] = None

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name
        ann = getattr(self.func, "__annotations__", {}).get("return", Any)
        if "__annotations__" not in owner.__dict__:
            owner.__annotations__ = {}
        owner.__dict__["__annotations__"][name] = ann

    @overload
    def __get__(self, obj: None, objtype: Any = ...) -> "init_property[_T]": ...
    @overload
    def __get__(self, obj: Any, objtype: Any = ...) -> _T: ...

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        return self


# ---------------------------------------------------------------------------
# Functions over node values

def is_dataclass(obj: Any) -> bool:
    """Whether `obj` is a @py_class class or an instance of one."""
    cls = obj if isinstance(obj, type) else type(obj)
    return any("__tvmnode_fields__" in c.__dict__ for c in cls.__mro__)


def fields(obj_or_cls: Any) -> Tuple[Field, ...]:
    """The fields of a node class or object, inherited first (for a type
    declared in C: what its reflection table says)."""
    cls = obj_or_cls if isinstance(obj_or_cls, type) else type(obj_or_cls)
    t = getattr(cls, "_tn_type_index", None)
    if not (issubclass(cls, Object) and isinstance(t, int) and _ffi.type_is_node(t)):
        raise TypeError("fields() expects a c_class or py_class node class or object, got %r"
                        % (obj_or_cls,))
    return _all_fields(cls)


def _is_node(v: Any) -> bool:
    if not isinstance(v, Object) or isinstance(v, (_ffi.Array, _ffi.Map)):
        return False
    t = getattr(type(v), "_tn_type_index", None)
    return isinstance(t, int) and bool(_ffi.type_is_node(t))


def _asdict_inner(v: Any, factory: Callable[[List[Tuple[str, Any]]], Any]) -> Any:
    if _is_node(v):
        return factory([(f.name, _asdict_inner(_get(v, f.name), factory))
                        for f in _all_fields(type(v))])
    if isinstance(v, (_ffi.Array, list)):
        return [_asdict_inner(x, factory) for x in v]
    if isinstance(v, tuple):
        return tuple(_asdict_inner(x, factory) for x in v)
    if isinstance(v, (_ffi.Map, dict)):
        return {_asdict_inner(k, factory): _asdict_inner(x, factory) for k, x in v.items()}
    return _copy.deepcopy(v)


def asdict(obj: Any, *, dict_factory: Callable[[List[Tuple[str, Any]]], Any] = dict) -> Any:
    """The fields of a node object as a dict, recursively: nodes become
    dicts, tn.Array/List lists and tn.Map/Dict dicts."""
    if isinstance(obj, type) or not _is_node(obj):
        raise TypeError("asdict() should be called on c_class / py_class instances, not %r"
                        % type(obj).__name__)
    return _asdict_inner(obj, dict_factory)


def astuple(obj: Any, *, tuple_factory: Callable[[List[Any]], Any] = tuple) -> Any:
    """The field values of a node object as a tuple, recursively."""
    if isinstance(obj, type) or not _is_node(obj):
        raise TypeError("astuple() should be called on c_class / py_class instances, not %r"
                        % type(obj).__name__)

    def inner(v: Any) -> Any:
        if _is_node(v):
            return tuple_factory([inner(_get(v, f.name)) for f in _all_fields(type(v))])
        if isinstance(v, (_ffi.Array, list)):
            return [inner(x) for x in v]
        if isinstance(v, (_ffi.Map, dict)):
            return {inner(k): inner(x) for k, x in v.items()}
        return _copy.deepcopy(v)
    return inner(obj)


def replace(obj: _T, /, **changes: Any) -> _T:
    """A new object of the same type with some fields changed (the others
    as in `obj`). For a @py_class type this goes through `__init__` (and
    `__post_init__`); a field with init=False cannot be changed."""
    cls = type(obj)
    if not _is_node(obj):
        raise TypeError("replace() should be called on node instances, not %r" % cls.__name__)
    flds = _all_fields(cls)
    names = {f.name for f in flds}
    for k in changes:
        if k not in names:
            raise TypeError("replace(): %s has no field '%s'" % (cls.__name__, k))
    if is_dataclass(cls):
        for f in flds:
            if not f.init:
                if f.name in changes:
                    raise ValueError("replace(): field '%s' is declared with init=False, it "
                                     "cannot be given" % f.name)
                continue
            if f.name not in changes:
                changes[f.name] = _get(obj, f.name)
        return cls(**changes)
    values = _field_values(obj, flds)
    values.update(changes)
    t = getattr(cls, "_tn_type_index")
    return typing.cast(_T, _wrap_as(cls, _ffi.node_new(t, tuple(values),
                                                      tuple(values.values()))))


class _EnumBase(Object):
    """What tvmnode.dataclasses.Enum derives (so fields know enum types)."""
    __slots__ = ()


from ._enum import Enum, EnumAttrMap, IntEnum, StrEnum, auto, entry  # noqa: E402

__all__ += ["Enum", "IntEnum", "StrEnum", "EnumAttrMap", "auto", "entry"]
