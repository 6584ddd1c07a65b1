"""Enum types whose members are node objects (tvm-ffi's `Enum`, `IntEnum`,
`StrEnum`, `entry`, `auto`).

A subclass given a type key (`class Color(Enum, type_key="my.Color")`)
is declared as a frozen node type whose structural equality is identity,
and each member named in its body is one node of it, made once: a member
can be a field value of any node type, is found again by its integer or
string index, and loading a JSON graph gives back the same member. Every
member has the fields `_int_index` (its ordinal, or for an IntEnum its
value) and `_str_index` (its name, or for a StrEnum its value), plus the
fields the body declares.
"""
from __future__ import annotations

import typing
from typing import Any, ClassVar, Dict, Iterator, List, Optional, Tuple, Union

from . import _ffi
from ._core import Object
from .dataclasses import MISSING, _all_fields, _EnumBase, _init_order, _readers

__all__ = ["Enum", "IntEnum", "StrEnum", "EnumAttrMap", "auto", "entry"]

_INT64_MIN = -(1 << 63)
_INT64_MAX = (1 << 63) - 1
_STATE = "__tvmnode_enum__"


class _EnumEntry:
    __slots__ = ("args", "kwargs")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.args = args
        self.kwargs = kwargs

    def __repr__(self) -> str:
        parts = [repr(a) for a in self.args]
        parts += ["%s=%r" % kv for kv in self.kwargs.items()]
        return "entry(%s)" % ", ".join(parts)


def entry(*args: Any, **kwargs: Any) -> Any:
    """A member of an Enum body, with values for the fields the body
    declares (positional in __init__ order, or by name)."""
    return _EnumEntry(*args, **kwargs)


def auto() -> Any:
    """A member of an Enum body whose fields all take their defaults."""
    return _EnumEntry()


class _State:
    """The members of one enum type: in definition order, by index, and
    the attributes `def_attr` keeps."""
    __slots__ = ("entries", "indexes", "attrs")

    def __init__(self) -> None:
        self.entries: List[Any] = []
        self.indexes: Dict[Union[int, str], Any] = {}
        self.attrs: Dict[str, Dict[Any, Any]] = {}


def _state(cls: type) -> Optional[_State]:
    for c in cls.__mro__:
        st = c.__dict__.get(_STATE)
        if st is not None:
            return typing.cast(_State, st)
    return None


def _normalize_index(index: Any) -> Union[int, str]:
    if isinstance(index, bool):
        return int(index)
    if isinstance(index, int):
        if not _INT64_MIN <= index <= _INT64_MAX:
            raise OverflowError("enum index %d is outside the int64 range" % index)
        return index
    if isinstance(index, str):
        return index
    raise TypeError("enum index must be an int or a str, got %s" % type(index).__name__)


class _EnumMeta(type):
    def __new__(mcs, name: str, bases: Tuple[type, ...], ns: Dict[str, Any],
                **kwargs: Any) -> Any:
        # members are proxies of C nodes: no __dict__ (and no class rebuild)
        ns.setdefault("__slots__", ())
        return super().__new__(mcs, name, bases, ns, **kwargs)

    def __iter__(cls) -> Iterator[Any]:
        st = _state(cls)
        return iter(list(st.entries) if st else [])

    def __len__(cls) -> int:
        st = _state(cls)
        return len(st.entries) if st else 0

    def __contains__(cls, member: Any) -> bool:
        st = _state(cls)
        return st is not None and isinstance(member, cls) and any(
            m.same_as(member) for m in st.entries)

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        if len(args) == 1 and not kwargs:
            v = args[0]
            if isinstance(v, cls):
                return v
            if isinstance(v, (int, str)):
                try:
                    return cls.get(v)  # type: ignore[attr-defined]
                except KeyError:
                    raise ValueError("%r is not a valid %s" % (v, cls.__name__)) from None
        raise TypeError("%s(): members are declared in the class body; call it with one "
                        "int or str index to find one" % cls.__name__)


class Enum(_EnumBase, metaclass=_EnumMeta):
    """Base of enum types whose members are node singletons:

        class Activation(Enum, type_key="my.Activation"):
            arity: int = 0
            relu = entry(arity=1)
            add = entry(arity=2)
            noop = auto()

    `Activation.relu` is a node; `Activation.get(0)`, `Activation("relu")`,
    `list(Activation)` and `len(Activation)` find members. A subclass
    without a type key declares nothing (a base for further enums)."""

    _int_index: int
    _str_index: str

    def __init_subclass__(cls, *, type_key: Optional[str] = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if type_key is None:
            return
        if not isinstance(type_key, str):
            raise TypeError("%s: type_key expects a str, got %s"
                            % (cls.__name__, type(type_key).__name__))
        payload = int if issubclass(cls, IntEnum) else str if issubclass(cls, StrEnum) else None
        binders, decls = _collect(cls, payload)
        if payload is int and binders:
            raise TypeError("%s.%s: an IntEnum member needs an int value"
                            % (cls.__name__, binders[0]))
        plan = [(alias, _indices(cls, alias, 0, d, payload)) for alias, d in decls.items()]
        del plan  # the declarations are well formed: declare the type
        _declare_enum(cls, type_key)
        if payload is not None:
            _install_payload(cls, payload)
        _resolve(cls, binders, decls, payload)
        # generic construction and JSON loading give the existing member
        _ffi.node_set_make(cls._tn_type_index, _make_hook(cls, type_key))

    @classmethod
    def get(cls, index: Union[int, str]) -> Any:
        """The member at an int or str index (KeyError if none)."""
        index = _normalize_index(index)
        st = _state(cls)
        if st is not None and index in st.indexes:
            return st.indexes[index]
        raise KeyError(index)

    @classmethod
    def all_entries(cls) -> Iterator[Any]:
        """The members in definition order."""
        return iter(list(cls))

    @classmethod
    def def_attr(cls, name: str, *, default: Any = MISSING) -> "EnumAttrMap":
        """A per-member attribute table (`attr[member] = value`)."""
        return EnumAttrMap(cls, name, default=default)

    def __copy__(self) -> Any:
        return self  # a member is a singleton

    def __deepcopy__(self, memo: Dict[Any, Any]) -> Any:
        return self

    def __reduce__(self) -> Any:
        return (_member, (type(self), self._str_index))


def _member(cls: Any, str_index: str) -> Any:
    return cls.get(str_index)


class IntEnum(Enum):
    """An Enum whose members are declared as ints (`LOW = 1`): `value` is
    the int, the int index; `name` the attribute name. Members compare and
    hash as their value."""

    if typing.TYPE_CHECKING:
        @property
        def value(self) -> int: ...
        @property
        def name(self) -> str: ...

    def __init_subclass__(cls, **kwargs: Any) -> None:
        _reject_value_field(cls, "IntEnum")
        super().__init_subclass__(**kwargs)


class StrEnum(Enum):
    """An Enum whose members are declared as strs (`SMEM = "smem"`):
    `value` and `name` are the str, the str index. Members compare and hash
    as their value."""

    if typing.TYPE_CHECKING:
        @property
        def value(self) -> str: ...
        @property
        def name(self) -> str: ...

    def __init_subclass__(cls, **kwargs: Any) -> None:
        _reject_value_field(cls, "StrEnum")
        super().__init_subclass__(**kwargs)


class EnumAttrMap:
    """A mutable per-member table of one extra attribute of an enum type."""

    __slots__ = ("_cls", "_name", "_default")

    def __init__(self, enum_cls: type, name: str, *, default: Any = MISSING) -> None:
        self._cls = enum_cls
        self._name = name
        self._default = default

    @property
    def name(self) -> str:
        return self._name

    def _key(self, member: Any) -> int:
        if not isinstance(member, self._cls):
            raise TypeError("%s attribute '%s': expected a %s member, got %s"
                            % (self._cls.__name__, self._name, self._cls.__name__,
                               type(member).__name__))
        return int(getattr(member, "_int_index"))

    def _column(self, create: bool) -> Optional[Dict[Any, Any]]:
        st = _state(self._cls)
        if st is None:
            return None
        col = st.attrs.get(self._name)
        if col is None and create:
            col = st.attrs[self._name] = {}
        return col

    def __setitem__(self, member: Any, value: Any) -> None:
        k = self._key(member)
        col = self._column(True)
        assert col is not None
        col[k] = value

    def __getitem__(self, member: Any) -> Any:
        k = self._key(member)
        col = self._column(False)
        if col is not None and k in col:
            return col[k]
        if self._default is not MISSING:
            return self._default
        raise KeyError("%r has no attribute %r" % (member, self._name))

    def __contains__(self, member: Any) -> bool:
        if not isinstance(member, self._cls):
            return False
        col = self._column(False)
        return col is not None and int(getattr(member, "_int_index")) in col

    def get(self, member: Any, default: Any = None) -> Any:
        return self[member] if member in self else default


# ---------------------------------------------------------------------------

def _own_annotations(cls: type) -> Dict[str, Any]:
    return dict(cls.__dict__.get("__annotations__", {}))


def _is_class_var(a: Any) -> bool:
    if a is ClassVar or typing.get_origin(a) is ClassVar:
        return True
    return isinstance(a, str) and a.replace(" ", "").startswith(("ClassVar", "typing.ClassVar"))


def _reject_value_field(cls: type, base: str) -> None:
    if "value" in cls.__dict__ or "value" in _own_annotations(cls):
        raise TypeError("%s reserves `value` as its index: %s cannot declare it"
                        % (base, cls.__name__))


def _collect(cls: type, payload: Optional[type]) -> Tuple[List[str], Dict[str, _EnumEntry]]:
    ann = _own_annotations(cls)
    binders = [n for n, a in ann.items()
               if not n.startswith("_") and _is_class_var(a) and n not in cls.__dict__]
    field_names = {n for n, a in ann.items() if not _is_class_var(a)}
    decls: Dict[str, _EnumEntry] = {}
    for n, v in list(cls.__dict__.items()):
        if n.startswith("_") or n in field_names:
            continue
        if isinstance(v, _EnumEntry):
            decls[n] = v
        elif payload is not None and not (
                isinstance(v, (staticmethod, classmethod, property)) or callable(v)):
            decls[n] = _EnumEntry(value=v)
        else:
            continue
        delattr(cls, n)
    for n in binders:  # `ready: ClassVar[Status]` declares a member too
        ann.pop(n, None)
    return binders, decls


def _declare_enum(cls: Any, type_key: str) -> None:
    from .dataclasses import _declare
    _declare(cls, type_key, frozen=True, init=True, repr=False, eq=False, order=False,
             unsafe_hash=False, match_args=False, kw_only=False, structural_eq="unique",
             slots=True, no_create=True)
    setattr(cls, _STATE, _State())
    if "__repr__" not in cls.__dict__:
        if issubclass(cls, (IntEnum, StrEnum)):
            cls.__repr__ = lambda self: "%s.%s" % (type(self).__name__, self.name)
        else:
            cls.__repr__ = lambda self: "%s.%s" % (type(self)._tn_type_key, self._str_index)


def _make_hook(cls: Any, type_key: str) -> Any:
    index = "_int_index" if issubclass(cls, IntEnum) else "_str_index"

    def make(values: Any) -> Any:
        st = _state(cls)
        idx = values.get(index)
        if st is None or not isinstance(idx, (int, str)) or idx not in st.indexes:
            raise KeyError("%s has no member with index %r" % (type_key, idx))
        return st.indexes[idx]
    return make


def _alloc_member(cls: Any) -> Any:
    def make(t: int, names: Tuple[str, ...], values: Tuple[Any, ...]) -> Any:
        obj = _ffi.node_alloc(t)
        rd = _readers(cls)
        for k, v in zip(names, values):
            rd[k].set(obj, v)
        return obj
    return make


def _install_payload(cls: Any, payload: type) -> None:
    def eq(self: Any, other: Any) -> Any:
        if isinstance(other, type(self)):
            return self.value == other.value
        if isinstance(other, payload) and not isinstance(other, Object):
            return self.value == other
        return NotImplemented

    def ne(self: Any, other: Any) -> Any:
        r = eq(self, other)
        return r if r is NotImplemented else not r

    index = "_int_index" if payload is int else "_str_index"
    defaults: Dict[str, Any] = {
        "__eq__": eq, "__ne__": ne,
        "__str__": lambda self: str(self.value),
        "__hash__": lambda self: hash(self.value),
        "value": property(lambda self: getattr(self, index)),
        "name": property(lambda self: str(self._str_index)),
    }
    for k, v in defaults.items():
        if k not in cls.__dict__:
            setattr(cls, k, v)


def _resolve(cls: Any, binders: List[str], decls: Dict[str, _EnumEntry],
             payload: Optional[type]) -> None:
    st = _state(cls)
    assert st is not None
    for alias in binders:
        inst = st.indexes.get(alias)
        if inst is None:
            if payload is int:
                raise TypeError("%s.%s: an IntEnum member needs an int value"
                                % (cls.__name__, alias))
            inst = _create(cls, len(st.entries), alias, _EnumEntry())
            _register(st, inst)
        type.__setattr__(cls, alias, inst)
    for alias, d in decls.items():
        int_index, str_index, rest = _indices(cls, alias, len(st.entries), d, payload)
        inst = st.indexes.get(int_index if payload is int else str_index)
        if inst is None:
            if int_index in st.indexes or str_index in st.indexes:
                raise ValueError("%s.%s: duplicate enum index" % (cls.__name__, alias))
            inst = _create(cls, int_index, str_index, rest)
            _register(st, inst)
        type.__setattr__(cls, alias, inst)


def _indices(cls: type, alias: str, ordinal: int, d: _EnumEntry,
             payload: Optional[type]) -> Tuple[int, str, _EnumEntry]:
    kwargs = dict(d.kwargs)
    if "_int_index" in kwargs or "_str_index" in kwargs:
        raise TypeError("%s.%s: enum indices are not given, they follow from the "
                        "declaration" % (cls.__name__, alias))
    if payload is None:
        return ordinal, alias, d
    if "value" not in kwargs:
        raise TypeError("%s.%s needs a %s value" % (cls.__name__, alias, payload.__name__))
    value: Any = kwargs.pop("value")
    if type(value) is not payload:
        raise TypeError("%s.%s: the value must be a %s, got %s"
                        % (cls.__name__, alias, payload.__name__, type(value).__name__))
    if payload is int:
        return int(_normalize_index(value)), alias, _EnumEntry(*d.args, **kwargs)
    return ordinal, str(value), _EnumEntry(*d.args, **kwargs)


def _create(cls: Any, int_index: int, str_index: str, d: _EnumEntry) -> Any:
    flds = [f for f in _all_fields(cls) if f.name not in ("_int_index", "_str_index")]
    positional = [f.name for f in _init_order(tuple(flds))]
    if len(d.args) > len(positional):
        raise TypeError("%s.%s: entry() takes %d positional value%s, got %d"
                        % (cls.__name__, str_index, len(positional),
                           "" if len(positional) == 1 else "s", len(d.args)))
    values: Dict[str, Any] = dict(zip(positional, d.args))
    for k, v in d.kwargs.items():
        if k in values or k not in {f.name for f in flds if f.init}:
            raise TypeError("%s.%s: entry() got an unexpected or repeated field '%s'"
                            % (cls.__name__, str_index, k))
        values[k] = v
    values["_int_index"] = int_index
    values["_str_index"] = str_index
    from .dataclasses import _construct, _wrap_as
    try:
        obj = _construct(cls, _all_fields(cls), cls._tn_type_index, values, init=True,
                         make=_alloc_member(cls))
    except (TypeError, ValueError) as e:
        raise TypeError("%s.%s: invalid enum entry: %s" % (cls.__name__, str_index, e)) from None
    return _wrap_as(cls, obj)


def _register(st: _State, inst: Any) -> None:
    st.entries.append(inst)
    st.indexes[int(inst._int_index)] = inst
    st.indexes[str(inst._str_index)] = inst


def _declare_base() -> None:
    """Enum is a node type too: the index fields live there."""
    from .dataclasses import _declare
    _declare(Enum, "tvmnode.Enum", frozen=True, init=True, repr=False, eq=False, order=False,
             unsafe_hash=False, match_args=False, kw_only=False, structural_eq="unique",
             slots=True, no_create=True)


_declare_base()
