"""_metadata.py: what is known about a function's or a type's types.

A function registered from C through the libffi bridge (tn_func_from_c,
tn_func_register_c, tvmnode.cpp.load_inline) carries the signature it was
made with, so its parameter and return types are real; a Python callable or
a packed C function says nothing about its types. Node types describe each
field in the reflection table (storage kind, required type key,
optional-ness), which gives a field its type.

Types are written as tvm-ffi writes them: a TypeSchema, stored in metadata
as JSON ({"type": origin, "args": [...]}; a function's "args" are the return
type followed by the parameters) and printed in Python typing syntax
("Callable[[int, float], float]", "Array[int] | None").
"""
from __future__ import annotations

import json
import re
from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple, Union

from . import _ffi

# Origins as stored in JSON -> as printed (tvm-ffi's spellings).
_ORIGIN_NAMES = {
    "Variant": "Union", "ffi.Function": "Callable", "ffi.Array": "Array",
    "ffi.List": "List", "ffi.Map": "Map", "ffi.Dict": "Dict", "ffi.Object": "Object",
    "ffi.Tensor": "Tensor", "DLTensor*": "Tensor", "void*": "ctypes.c_void_p",
    "ffi.Bytes": "bytes", "const char*": "str", "ffi.String": "str",
    "DataType": "dtype", "ffi.Shape": "Shape",
}

# tvmnode's built-in type keys -> the JSON origin tvm-ffi uses for the same type.
_KEY_ORIGINS = {
    "tn.Object": "ffi.Object", "tn.String": "ffi.String", "tn.Bytes": "ffi.Bytes",
    "tn.Function": "ffi.Function", "tn.Tensor": "ffi.Tensor", "tn.Array": "ffi.Array",
    "tn.List": "ffi.List", "tn.Map": "ffi.Map", "tn.Dict": "ffi.Dict",
    "tn.Shape": "ffi.Shape",
}

# C signature types (tvmnode/function.h) -> JSON origins.
_SIG_ORIGINS = {
    "void": "None", "bool": "bool", "f32": "float", "f64": "float", "ptr": "void*",
    "str": "const char*", "obj": "ffi.Object", "obj+": "ffi.Object", "any": "Any",
    "any*": "Any", "dltensor": "DLTensor*", "dtype": "DataType", "device": "Device",
    "i8": "int", "i16": "int", "i32": "int", "i64": "int",
    "u8": "int", "u16": "int", "u32": "int", "u64": "int",
}


class TypeSchema:
    """A type: an origin ("int", "Array", "Callable", "ir.Var", ...) and its
    type arguments. For "Callable" the first argument is the return type and
    the rest are the parameters; a Callable without arguments takes anything
    ("Callable[..., Any]"). str() prints Python typing syntax."""

    __slots__ = ("origin", "args")

    def __init__(self, origin: str, args: Sequence["TypeSchema"] = ()) -> None:
        if not isinstance(origin, str):
            raise TypeError("TypeSchema: argument 'origin' expected a str, got %s"
                            % type(origin).__name__)
        args = tuple(args)
        for a in args:
            if not isinstance(a, TypeSchema):
                raise TypeError("TypeSchema: argument 'args' expected TypeSchema items, "
                                "got %s" % type(a).__name__)
        if origin == "Optional" and len(args) != 1:
            raise ValueError("TypeSchema: Optional takes exactly one argument, got %d"
                             % len(args))
        if origin == "Union" and len(args) < 2:
            raise ValueError("TypeSchema: Union takes at least two arguments, got %d"
                             % len(args))
        if origin in ("Array", "List") and not args:
            args = (TypeSchema("Any"),)
        if origin in ("Map", "Dict") and not args:
            args = (TypeSchema("Any"), TypeSchema("Any"))
        self.origin = origin
        self.args: Tuple[TypeSchema, ...] = args

    @staticmethod
    def from_json_obj(obj: Dict[str, Any]) -> "TypeSchema":
        """The schema of a parsed JSON object {"type": ..., "args": [...]}."""
        if not isinstance(obj, dict) or not isinstance(obj.get("type"), str):
            raise TypeError("TypeSchema.from_json_obj: expected a dict with a str 'type', "
                            "got %r" % (obj,))
        kind: str = obj["type"]
        origin = _ORIGIN_NAMES.get(kind, kind)
        raw = obj.get("args", ())
        if not isinstance(raw, (list, tuple)):
            raise TypeError("TypeSchema.from_json_obj: 'args' must be a list, got %s"
                            % type(raw).__name__)
        return TypeSchema(origin, [TypeSchema.from_json_obj(a) for a in raw])

    @staticmethod
    def from_json_str(text: str) -> "TypeSchema":
        """The schema stored in metadata["type_schema"]."""
        return TypeSchema.from_json_obj(json.loads(text))

    def to_json(self) -> Dict[str, Any]:
        """The JSON object of the schema (printed origins, which read back
        the same)."""
        out: Dict[str, Any] = {"type": self.origin}
        if self.args:
            out["args"] = [a.to_json() for a in self.args]
        return out

    def repr(self, ty_map: Optional[Callable[[str], str]] = None) -> str:
        """Python typing syntax; `ty_map` renames origins ("Array" ->
        "Sequence", say) before printing."""
        name = ty_map(self.origin) if ty_map is not None else self.origin
        if self.origin == "Optional":
            return "%s | None" % self.args[0].repr(ty_map)
        if self.origin == "Union":
            return " | ".join(a.repr(ty_map) for a in self.args)
        if self.origin == "Callable":
            if not self.args:
                return "%s[..., Any]" % name
            params = ", ".join(a.repr(ty_map) for a in self.args[1:])
            return "%s[[%s], %s]" % (name, params, self.args[0].repr(ty_map))
        if self.args:
            return "%s[%s]" % (name, ", ".join(a.repr(ty_map) for a in self.args))
        return name

    def __str__(self) -> str:
        return self.repr()

    def __repr__(self) -> str:
        return self.repr()

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, TypeSchema) and other.origin == self.origin
                and other.args == self.args)

    def __hash__(self) -> int:
        return hash((self.origin, self.args))


def _key_json(key: str) -> Dict[str, Any]:
    """A type key (maybe "tn.Array<T>" or "tn.Map<K, V>") as a JSON schema."""
    key = key.strip()
    m = re.match(r"(tn\.Array|tn\.Map)<(.*)>\Z", key)
    if m is not None:
        inner = [_key_json(k) for k in _split_args(m.group(2))]
        return {"type": _KEY_ORIGINS[m.group(1)], "args": inner}
    simple = {"int": "int", "float": "float", "bool": "bool", "any": "Any", "str": "ffi.String"}
    if key in simple:
        return {"type": simple[key]}
    return {"type": _KEY_ORIGINS.get(key, key)}


def _split_args(text: str) -> List[str]:
    """Split "A, tn.Map<B, C>" at the commas outside angle brackets."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def _sig_type_json(t: str) -> Dict[str, Any]:
    m = re.match(r"obj<(.*)>\Z", t)
    if m is not None:
        return _key_json(m.group(1))
    return {"type": _SIG_ORIGINS[t]}


def signature_schema(signature: str) -> Dict[str, Any]:
    """The JSON schema of a C signature ("i64(i64,f64)"), as
    {"type": "ffi.Function", "args": [return, params...]}."""
    sig = signature.replace(" ", "")
    ret, _, rest = sig.partition("(")
    params = rest[:-1]
    args = [_sig_type_json(ret)]
    if params:
        args += [_sig_type_json(p) for p in _split_args(params)]
    return {"type": "ffi.Function", "args": args}


def function_metadata(func: Any) -> Dict[str, Any]:
    """Metadata of a Function: {} when its types are not known."""
    sig = _ffi._func_c_signature(func)
    if sig is None:
        return {}
    return {"type_schema": json.dumps(signature_schema(sig)), "c_signature": sig}


def get_global_func_metadata(name: str) -> Dict[str, Any]:
    """Metadata of the global function `name`, as tvm-ffi gives it: a dict
    whose "type_schema" is the JSON of its TypeSchema, for a C function
    registered by signature (which also gives "c_signature", the signature
    it was registered with: "i64(i64,i64)"); {} for a Python callable or a
    packed C function, whose types are not known. ValueError when no
    function has that name."""
    if not isinstance(name, str):
        raise TypeError("get_global_func_metadata: argument 'name' expected a str, got %s"
                        % type(name).__name__)
    return function_metadata(_ffi.get_global_func(name, False))


# ---------------------------------------------------------------------------
# Types

_FIELD_KINDS = {0: "Any", 2: "int", 3: "float", 4: "bool", 5: "ffi.String", 6: "DataType",
                7: "Device"}


class TypeField:
    """A reflected field: `name`, `frozen` (set only when the object is
    made), `has_default` / `default`, and metadata["type_schema"], the JSON
    of its TypeSchema (`ty`)."""

    __slots__ = ("name", "frozen", "has_default", "default", "metadata", "ty")

    def __init__(self, f: Any) -> None:
        self.name: str = f.name
        self.frozen = bool(f.flags & _ffi.FIELD_READONLY)
        self.has_default = bool(f.has_default)
        self.default = f.default if f.has_default else None
        if f.kind == 1:
            schema = _key_json(f.type_key) if f.type_key else {"type": "ffi.Object"}
        else:
            schema = {"type": _FIELD_KINDS.get(f.kind, "Any")}
        if f.flags & _ffi.FIELD_OPTIONAL and schema["type"] != "Any":
            schema = {"type": "Optional", "args": [schema]}
        self.metadata: Dict[str, Any] = {"type_schema": json.dumps(schema)}
        self.ty = TypeSchema.from_json_obj(schema)

    def __repr__(self) -> str:
        return "TypeField(%s: %s)" % (self.name, self.ty)


# (type index, name) of the methods py_class registered from a
# staticmethod: C's method table does not say, and a method registered
# from C takes the object first.
STATIC_METHODS: Set[Tuple[int, str]] = set()


class TypeMethod:
    """A method registered for a type: `name` and `func`, the Function
    (metadata as for a global function: {} when its types are unknown),
    and `is_static`: True when it takes no object (a staticmethod
    registered with py_class's @method)."""

    __slots__ = ("name", "func", "metadata", "is_static")

    def __init__(self, name: str, func: Any, is_static: bool = False) -> None:
        self.name = name
        self.func = func
        self.metadata = function_metadata(func)
        self.is_static = is_static

    def __repr__(self) -> str:
        return "TypeMethod(%s)" % self.name


class TypeInfo:
    """A registered type: type_key, type_index, parent_type_info (None for
    tn.Object), `fields` (its own and inherited, inherited first, each a
    TypeField) and `methods` (TypeMethod)."""

    __slots__ = ("type_key", "type_index", "parent_type_info", "fields", "methods")

    def __init__(self, type_index: int) -> None:
        self.type_index = type_index
        self.type_key: str = _ffi.type_key(type_index)
        parent = _ffi.type_parent(type_index)
        self.parent_type_info = TypeInfo(parent) if parent >= 0 else None
        self.fields = [TypeField(f) for f in _ffi._type_fields(type_index)]
        self.methods: List[TypeMethod] = []
        try:
            for n in _ffi.type_methods(type_index):
                self.methods.append(TypeMethod(n, _ffi.type_get_method(type_index, n),
                                               (type_index, n) in STATIC_METHODS))
        except (KeyError, TypeError, ValueError):  # a type without a method table
            pass

    def __repr__(self) -> str:
        return "TypeInfo(%r, fields=%s)" % (self.type_key, [f.name for f in self.fields])


def get_type_info(type_: Union[str, type, Any]) -> TypeInfo:
    """The TypeInfo of a type key ("ir.Var"), a tvmnode class, or an
    object's type. KeyError for an unknown key; TypeError for anything
    else."""
    if isinstance(type_, str):
        return TypeInfo(_ffi.type_index(type_))
    index = None
    if isinstance(type_, type):
        builtin = {_ffi.Object: "tn.Object", _ffi.Function: "tn.Function",
                   _ffi.Array: "tn.Array", _ffi.List: "tn.List", _ffi.Map: "tn.Map",
                   _ffi.Dict: "tn.Dict", _ffi.Shape: "tn.Shape"}
        for base in type_.__mro__:
            if "_tn_type_index" in base.__dict__:
                index = base.__dict__["_tn_type_index"]
                break
            if base in builtin:
                index = _ffi.type_index(builtin[base])
                break
    elif isinstance(type_, _ffi.Object):
        index = _ffi.type_index(type_._type_key)
    if index is None:
        raise TypeError("get_type_info: expected a type key, a tvmnode class or object, got %r"
                        % (type_,))
    return TypeInfo(int(index))
