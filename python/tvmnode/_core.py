"""The pure-Python half of the binding: policy on top of the _ffi mechanism.

_ffi (the C extension) converts values, calls functions and reads fields; it
asks this module which Python class stands for a type index it has not seen
yet, which exception class an error kind maps to, and what DataType and
Device values look like. Classes for C types are made here from the
reflection table (one per type key, subclassing the class of the parent
type, a descriptor per field), and `register_object` lets Python code attach
its own class to a C type, or declare a new node type whose fields live in
C so C code can build and read it.
"""
from __future__ import annotations

import builtins
import ctypes
import enum
import operator
import re
import sys
from typing import Any, Callable, Dict, Optional, Sequence, Tuple, Type, TypeVar, Union, overload

if sys.version_info >= (3, 8):
    from typing import Literal
else:  # pragma: no cover
    from typing_extensions import Literal

from . import _ffi

Object = _ffi.Object
Function = _ffi.Function
Array = _ffi.Array
Map = _ffi.Map


class _TypeInfoAttr:
    """`cls.__tvm_ffi_type_info__`, tvm-ffi's class attribute: the class's
    TypeInfo (as get_type_info(cls)), on every class made or registered for
    a type key, read from instances too."""

    def __get__(self, obj: Any, owner: type) -> Any:
        from ._metadata import get_type_info
        return get_type_info(owner)


TYPE_INFO_ATTR = _TypeInfoAttr()
Shape = _ffi.Shape

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])

# ---------------------------------------------------------------------------
# Values

class DataTypeCode(enum.IntEnum):
    """DLPack's DLDataTypeCode: what DataType.type_code returns (an int)."""

    INT = 0
    UINT = 1
    FLOAT = 2
    HANDLE = 3
    BFLOAT = 4
    COMPLEX = 5
    BOOL = 6
    Float8E3M4 = 7
    Float8E4M3 = 8
    Float8E4M3B11FNUZ = 9
    Float8E4M3FN = 10
    Float8E4M3FNUZ = 11
    Float8E5M2 = 12
    Float8E5M2FNUZ = 13
    Float8E8M0FNU = 14
    Float6E2M3FN = 15
    Float6E3M2FN = 16
    Float4E2M1FN = 17


# bfloat16 and the DLPack 1.1 float8/float6/float4 codes
_FLOAT_CODES = frozenset([2, 4]) | frozenset(range(7, 18))
# Short spellings count bits, as Rust, MLIR and TVMScript do: "i8" is int8
# (not numpy's 8-byte "i8"), "f32" float32, "bf16" bfloat16, "c64" complex64;
# lanes may follow ("f32x4"). The C parser reads only the long names, so the
# alias is expanded here and the DataType holds the long name.
_DTYPE_ALIASES = {"i": "int", "u": "uint", "f": "float", "bf": "bfloat", "c": "complex"}
_DTYPE_ALIAS_RE = re.compile(r"(bf|i|u|f|c)([0-9]+(?:x[0-9]+)?)\Z")


class DataType(str):
    """An element type such as "float32"; a str, so it compares with strings.

    DataType(text) checks the text at once (ValueError naming it) and holds
    the canonical spelling, the one the C library prints: DataType("i8") ==
    "int8", DataType("float") == "float32". Accepted: int<bits>, uint<bits>,
    float8/16/32/64, bfloat16, complex64/128, bool, handle, void, the
    DLPack 1.1 small floats float8_e3m4, float8_e4m3, float8_e4m3b11fnuz,
    float8_e4m3fn, float8_e4m3fnuz, float8_e5m2, float8_e5m2fnuz,
    float8_e8m0fnu, float6_e2m3fn, float6_e3m2fn, float4_e2m1fn (also
    spelled fp8_/f8_, fp6_/f6_, fp4_/f4_), each with an optional "x<lanes>"
    ("float32x4", "int4", "uint8x16", "float4_e2m1fnx2"); the short forms
    i<bits>, u<bits>, f<bits>, bf16, c<bits>; a numpy dtype or scalar type
    (ml_dtypes' too). `tvmnode.dtype` is this class.
    """

    __slots__ = ()

    def __new__(cls, dtype: Any) -> "DataType":
        if type(dtype) is cls:
            return dtype
        if isinstance(dtype, str):
            text = str(dtype)
        else:
            np = sys.modules.get("numpy")
            if np is not None and (isinstance(dtype, np.dtype) or (
                    isinstance(dtype, type) and issubclass(dtype, np.generic))):
                text = np.dtype(dtype).name
            else:
                raise TypeError("DataType expects a str or a numpy dtype, not %s"
                                % type(dtype).__name__)
        m = _DTYPE_ALIAS_RE.match(text)
        if m is None:
            parts = _ffi._dtype_parse(text)
        else:
            long_form = _DTYPE_ALIASES[m.group(1)] + m.group(2)
            try:
                parts = _ffi._dtype_parse(long_form)
            except ValueError as e:
                raise ValueError("cannot parse %r (read as %r) as a DataType: %s"
                                 % (text, long_form, e)) from None
        return str.__new__(cls, parts[0])

    @staticmethod
    def from_dlpack_data_type(dltype: Tuple[int, int, int]) -> "DataType":
        """The DataType of a DLPack (code, bits, lanes) triple; ValueError
        for one tvmnode cannot name."""
        code, bits, lanes = dltype
        return DataType(_ffi._dtype_from_parts(code, bits, lanes)[0])

    @property
    def dlpack_data_type(self) -> Tuple[int, int, int]:
        """The DLPack (code, bits, lanes) triple."""
        _, code, bits, lanes = _ffi._dtype_parse(self)
        return code, bits, lanes

    @property
    def bits(self) -> int:
        """Bits per lane (0 for void)."""
        return int(_ffi._dtype_parse(self)[2])

    @property
    def lanes(self) -> int:
        """Vector lanes (1 for scalars, 0 for void)."""
        return int(_ffi._dtype_parse(self)[3])

    @property
    def type_code(self) -> int:
        """DLPack's type code of the element, an int (DataTypeCode): 0 int,
        1 uint, 2 float, 3 handle (and void), 4 bfloat, 5 complex, 6 bool,
        7 to 17 the float8/float6/float4 variants."""
        return int(_ffi._dtype_parse(self)[1])

    @property
    def is_bool(self) -> builtins.bool:
        """Whether the element is a bool."""
        return self.type_code == 6

    @property
    def is_integer(self) -> builtins.bool:
        """Whether the element is a signed or unsigned integer."""
        return self.type_code in (0, 1)

    @property
    def is_int(self) -> builtins.bool:
        """Whether the element is a signed integer."""
        return self.type_code == 0

    @property
    def is_uint(self) -> builtins.bool:
        """Whether the element is an unsigned integer."""
        return self.type_code == 1

    @property
    def is_float(self) -> builtins.bool:
        """Whether the element is a floating-point number: float, bfloat or
        one of the float8/float6/float4 variants (not complex)."""
        return self.type_code in _FLOAT_CODES

    @property
    def is_complex(self) -> builtins.bool:
        """Whether the element is a complex number."""
        return self.type_code == 5

    @property
    def is_handle(self) -> builtins.bool:
        """Whether the element is an opaque handle (void included)."""
        return self.type_code == 3

    @property
    def is_void(self) -> builtins.bool:
        """Whether this is void (no element: 0 bits, 0 lanes)."""
        return str.__eq__(self, "void")

    @staticmethod
    def is_dtype(arg: Any) -> builtins.bool:
        """Whether `arg` is a DataType or text (or a numpy dtype) that makes
        one; never raises."""
        if isinstance(arg, DataType):
            return True
        try:
            DataType(arg)
        except (TypeError, ValueError):
            return False
        return True

    @property
    def itemsize(self) -> int:
        """Bytes per element (all lanes): bits * lanes / 8. ValueError when
        that is not a whole number of bytes (int4, uint1x4, ...: such
        elements are packed, so no byte size describes one; use .bits and
        .lanes) and for void."""
        _, _, bits, lanes = _ffi._dtype_parse(self)
        total = bits * lanes
        if total == 0:
            raise ValueError("DataType('void') has no size")
        if total % 8:
            raise ValueError("DataType(%r): an element is %d bits, not a whole number of bytes"
                             % (str(self), total))
        return int(total // 8)

    def with_lanes(self, lanes: int) -> "DataType":
        """The same element type with `lanes` lanes ("float32" -> "float32x4");
        ValueError outside 1 to 65535 and for void."""
        n = operator.index(lanes)
        _, code, bits, old = _ffi._dtype_parse(self)
        if old == 0 or not 1 <= n <= 65535:
            raise ValueError("DataType(%r).with_lanes(%d): lanes must be 1 to 65535 "
                             "(and void has none)" % (str(self), n))
        return DataType(_ffi._dtype_from_parts(code, bits, n)[0])

    def __repr__(self) -> str:
        return "dtype(%r)" % str(self)


class DLDeviceType(enum.IntEnum):
    """DLPack's device types, with DLPack's names and numbers (what
    Device.dlpack_device_type() returns)."""

    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLOpenCL = 4
    kDLVulkan = 7
    kDLMetal = 8
    kDLVPI = 9
    kDLROCM = 10
    kDLROCMHost = 11
    kDLExtDev = 12
    kDLCUDAManaged = 13
    kDLOneAPI = 14
    kDLWebGPU = 15
    kDLHexagon = 16
    kDLMAIA = 17
    kDLTrn = 18


_DEVICE_NAMES = {1: "cpu", 2: "cuda", 3: "cuda_host", 4: "opencl", 7: "vulkan", 8: "metal",
                 9: "vpi", 10: "rocm", 11: "rocm_host", 12: "ext_dev", 13: "cuda_managed",
                 14: "oneapi", 15: "webgpu", 16: "hexagon", 17: "maia", 18: "trn"}
# what Device("...") reads: the names above and a few other spellings
_DEVICE_TYPES = dict({v: k for k, v in _DEVICE_NAMES.items()},
                     llvm=1, c=1, gpu=2, mps=8, wgpu=15)


class Device:
    """A DLPack device: (device_type, device_id).

    Device("cuda", 1), Device("cuda:1"), Device(DLDeviceType.kDLCUDA, 1) and
    Device(2, 1) are the same device; `tvmnode.device` makes one too.
    """

    __slots__ = ("device_type", "device_id")

    def __init__(self, device_type: Union[int, str], device_id: Optional[int] = None) -> None:
        if isinstance(device_type, str):
            # "cpu", "cuda:1", "ext_dev:0" (an id after ':' only if none is given)
            name, sep, num = device_type.partition(":")
            if name.strip() not in _DEVICE_TYPES:
                raise ValueError("unknown device %r (expected one of %s, optionally with "
                                 "':<id>')" % (device_type, ", ".join(sorted(_DEVICE_TYPES))))
            if sep:
                if device_id is not None:
                    raise ValueError("device %r: the id is given twice" % device_type)
                try:
                    device_id = int(num)
                except ValueError:
                    raise ValueError("device %r: bad device id %r" % (device_type, num)) from None
            device_type = _DEVICE_TYPES[name.strip()]
        elif isinstance(device_type, builtins.bool) or not hasattr(device_type, "__index__"):
            raise TypeError("Device: argument 'device_type' must be a str or an int, not %s"
                            % type(device_type).__name__)
        if device_id is None:
            i = 0
        elif isinstance(device_id, builtins.bool) or not hasattr(device_id, "__index__"):
            raise TypeError("Device: argument 'device_id' must be an int, not %s"
                            % type(device_id).__name__)
        else:
            i = operator.index(device_id)
        t = operator.index(device_type)
        if not (0 <= t <= 0x7FFFFFFF and 0 <= i <= 0x7FFFFFFF):
            raise ValueError("device (%d, %d) out of range (type and id are 0 to 2**31-1)"
                             % (t, i))
        self.device_type = t
        self.device_id = i

    @property
    def type(self) -> str:
        """The device type's name: "cpu", "cuda", ... (the number as text
        for a type DLPack does not name)."""
        return _DEVICE_NAMES.get(self.device_type, str(self.device_type))

    @property
    def index(self) -> int:
        """The device id."""
        return self.device_id

    def dlpack_device_type(self) -> int:
        """The DLPack device type: a DLDeviceType (a plain int for a type
        DLPack does not name)."""
        try:
            return DLDeviceType(self.device_type)
        except ValueError:
            return self.device_type

    def __eq__(self, other: object) -> builtins.bool:
        return (isinstance(other, Device) and other.device_type == self.device_type
                and other.device_id == self.device_id)

    def __hash__(self) -> int:
        return hash((self.device_type, self.device_id))

    def __str__(self) -> str:
        return "%s:%d" % (self.type, self.device_id)

    def __repr__(self) -> str:
        return "device(type=%r, index=%d)" % (self.type, self.device_id)

    def __reduce__(self) -> Any:
        return (type(self), (self.device_type, self.device_id))


def device(device_type: Union[int, str], index: Optional[int] = None) -> Device:
    """A Device: device("cpu"), device("cuda:1"), device("cuda", 1),
    device(DLDeviceType.kDLCUDA, 1)."""
    return Device(device_type, index)


def cpu(device_id: int = 0) -> Device:
    """The CPU device."""
    return Device(1, device_id)


# ---------------------------------------------------------------------------
# Errors

class TVMNodeError(RuntimeError):
    """Base of the exception classes for error kinds that are not Python
    builtins (a C library may raise any kind it likes)."""

    _tn_kind = "TVMNodeError"


_ERROR_CLASSES: Dict[str, type] = {}


def register_error(kind: Union[str, type, None] = None,
                   cls: Optional[type] = None) -> Any:
    """Map an error kind to an exception class, both ways: a C error of that
    kind is raised as `cls`, and `cls` raised in a callback crosses C with
    that kind. Usable as a decorator: @register_error or
    @register_error("MyKind")."""
    def attach(c: type, name: str) -> type:
        if not (isinstance(c, type) and issubclass(c, BaseException)):
            raise TypeError("register_error: %r is not an exception class" % (c,))
        _ERROR_CLASSES[name] = c
        c._tn_kind = name  # type: ignore[attr-defined]
        return c

    if isinstance(kind, type):
        return attach(kind, kind.__name__)
    if cls is not None:
        return attach(cls, kind or cls.__name__)
    return lambda c: attach(c, kind or c.__name__)


def _kind_to_class(kind: str) -> type:
    cls = _ERROR_CLASSES.get(kind)
    if cls is not None:
        return cls
    b = getattr(builtins, kind, None)
    # Only Exception subclasses map by name: an error from C of kind
    # SystemExit, KeyboardInterrupt or GeneratorExit must not end or
    # interrupt the interpreter; it becomes a TVMNodeError with that kind.
    if isinstance(b, type) and issubclass(b, Exception):
        return b
    if not kind.isidentifier() or kind == "TVMNodeError":
        return TVMNodeError
    cls = type(kind, (TVMNodeError,), {"_tn_kind": kind, "__module__": "tvmnode.error"})
    _ERROR_CLASSES[kind] = cls
    return cls


# ---------------------------------------------------------------------------
# Classes for type keys

_NODE_KINDS = {"tree": _ffi.NODE_TREE, "dag": _ffi.NODE_DAG, "var": _ffi.NODE_VAR,
               "unique": _ffi.NODE_UNIQUE}


def _fields(type_index: int) -> list:
    return _ffi._type_fields(type_index)


def _generic_init(self: Any, *args: Any, **kwargs: Any) -> None:
    """Build the C node from field values: positional in field order
    (inherited first), or by name. Defaults fill the rest."""
    cls = type(self)
    t = cls._tn_type_index
    fields = [f.name for f in _fields(t)]
    if len(args) > len(fields):
        raise TypeError("%s takes at most %d field values, got %d"
                        % (cls.__name__, len(fields), len(args)))
    values = dict(zip(fields, args))
    for k, v in kwargs.items():
        if k in values:
            raise TypeError("%s: field '%s' given twice" % (cls.__name__, k))
        values[k] = v
    defaults = cls.__dict__.get("_tn_py_defaults")
    if defaults is not None:
        # declared from Python: C stores Any slots without defaults, so the
        # defaults and the required fields are enforced here
        for k, v in defaults.items():
            values.setdefault(k, v)
        for k in fields:
            if k not in values:
                raise TypeError("%s: missing required field '%s'" % (cls._tn_type_key, k))
        _check_annotations(cls, values)
    obj = _ffi.node_new(t, tuple(values), tuple(values.values()))
    self._move_handle_from(obj)


_SIMPLE_TYPES: Dict[Any, Any] = {"int": int, "float": (int, float), "str": str, "bool": bool,
                                 int: int, float: (int, float), str: str, bool: bool}


def _check_annotations(cls: type, values: Dict[str, Any]) -> None:
    ann = cls.__dict__.get("_tn_py_types") or {}
    for k, v in values.items():
        a = ann.get(k)
        want = _SIMPLE_TYPES.get(a)
        if want is not None and v is not None and not isinstance(v, want):
            raise TypeError("%s: field '%s' expects %s, got %s"
                            % (getattr(cls, "_tn_type_key"), k, getattr(a, "__name__", a),
                               type(v).__name__))


def _method(name: str, func: Any) -> Callable[..., Any]:
    def call(self: Any, *args: Any) -> Any:
        return func(self, *args)
    call.__name__ = name
    return call


def _add_fields(cls: type, type_index: int) -> None:
    """Give `cls` a descriptor for every field not yet reachable from it."""
    for f in _fields(type_index):
        found = None
        for base in cls.__mro__:
            if f.name in base.__dict__:
                found = base.__dict__[f.name]
                break
        if found is None or (isinstance(found, _ffi.Field) and found.index != f.index):
            setattr(cls, f.name, f)


def _make_class(type_index: int) -> type:
    """The class factory _ffi calls for a type index it has no class for."""
    key = _ffi.type_key(type_index)
    parent = _ffi.type_parent(type_index)
    base = _ffi.class_for(parent) if parent >= 0 else Object
    name = key.rsplit(".", 1)[-1]
    ns: Dict[str, Any] = {
        "__slots__": (),
        "__module__": "tvmnode." + key.rsplit(".", 1)[0] if "." in key else "tvmnode",
        "__qualname__": name,
        "_tn_type_index": type_index,
        "_tn_type_key": key,
        "_tn_generated": True,
    }
    if _ffi.type_is_node(type_index) and "__init__" not in base.__dict__:
        ns["__init__"] = _generic_init
    try:
        for m in _ffi.type_methods(type_index):
            ns.setdefault(m, _method(m, _ffi.type_get_method(type_index, m)))
    except Exception:
        pass
    ns["__tvm_ffi_type_info__"] = TYPE_INFO_ATTR
    cls = type(name, (base,), ns)
    _add_fields(cls, type_index)
    _ffi._register_class(type_index, cls)
    return cls


def _declare(cls: type, type_key: str, kind: str) -> int:
    """Declare a new node type from a Python class's annotations."""
    parent = None
    for b in cls.__mro__[1:]:
        if "_tn_type_index" in b.__dict__ or b is Object:
            parent = b.__dict__.get("_tn_type_index", _ffi.TYPE_OBJECT)
            break
    if parent is None:
        raise TypeError("register_object: %s does not derive from tvmnode.Object" % cls.__name__)
    ann = cls.__dict__.get("__annotations__", {})
    names = list(ann)
    defaults = {n: cls.__dict__[n] for n in names if n in cls.__dict__}
    if kind not in _NODE_KINDS:
        raise ValueError("register_object: kind must be one of %s" % sorted(_NODE_KINDS))
    t = _ffi.node_register(type_key, parent, _NODE_KINDS[kind], names)
    for n in names:
        if n in cls.__dict__:
            delattr(cls, n)
    setattr(cls, "_tn_py_defaults", defaults)
    setattr(cls, "_tn_py_types", dict(ann))
    if "__init__" not in cls.__dict__:
        cls.__init__ = _generic_init  # type: ignore[misc]
    return t


@overload
def register_object(type_key: str, *, kind: str = ...) -> Callable[[Type[T]], Type[T]]: ...
@overload
def register_object(type_key: Type[T]) -> Type[T]: ...


def register_object(type_key: Any = None, *, kind: str = "tree") -> Any:
    """Attach a Python class to a C type key: every object of that type (or
    of a subtype without a class of its own) comes to Python as an instance
    of it, fields included. When the key is not registered yet, the class
    declares it: its annotated attributes become fields stored in C (values
    given as class attributes are their defaults), so C code, JSON and
    structural equality see it like any other node type.

        @register_object("my.Point")
        class Point(tvmnode.Object):
            x: int
            y: float = 0.0
    """
    def attach(cls: Type[T]) -> Type[T]:
        key = type_key if isinstance(type_key, str) else cls.__name__
        if not (isinstance(cls, type) and issubclass(cls, Object)):
            raise TypeError("register_object: %r is not a subclass of tvmnode.Object" % (cls,))
        try:
            t = _ffi.type_index(key)
            declared = _ffi.type_is_node(t) or t < 128
        except KeyError:
            t, declared = -1, False
        if not declared:
            t = _declare(cls, key, kind)
        cls._tn_type_index = t
        cls._tn_type_key = key
        _add_fields(cls, t)
        cls.__tvm_ffi_type_info__ = TYPE_INFO_ATTR  # type: ignore[attr-defined]
        _ffi._register_class(t, cls)
        return cls

    if isinstance(type_key, type):
        return attach(type_key)
    return attach


# ---------------------------------------------------------------------------
# Functions

@overload
def get_global_func(name: str, allow_missing: Literal[False] = ...) -> Function: ...
@overload
def get_global_func(name: str, allow_missing: bool) -> Optional[Function]: ...


def get_global_func(name: str, allow_missing: bool = False) -> Optional[Function]:
    """The function registered as `name`; None if absent and allow_missing,
    else ValueError."""
    return _ffi.get_global_func(name, allow_missing)


def register_func(func_name: Union[str, Callable[..., Any], None] = None,
                  f: Optional[Callable[..., Any]] = None,
                  override: bool = False) -> Any:
    """Register a Python callable as a global function C code can call:
    register_func("my.add", f), @register_func("my.add") or @register_func
    (the function's own name). Returns the callable (so it stays usable
    from Python as it was)."""
    if callable(func_name) and f is None:
        fn = func_name
        _ffi._register_func(fn.__name__, fn, override)
        return fn
    if not isinstance(func_name, str):
        raise TypeError("register_func: expected a name or a callable, got %s"
                        % type(func_name).__name__)
    name = func_name

    def register(fn: F) -> F:
        _ffi._register_func(name, fn, override)
        return fn

    if f is not None:
        return register(f)
    return register


def register_global_func(func_name: Union[str, Callable[..., Any]],
                         f: Optional[Callable[..., Any]] = None,
                         override: bool = False) -> Any:
    """tvm-ffi's spelling of register_func, with its result: the registered
    Function (not the Python callable). register_global_func("my.add", f),
    @register_global_func("my.add") or @register_global_func (the
    function's own name). A taken name is a ValueError unless override."""
    if not isinstance(func_name, str):
        if f is not None or not callable(func_name):
            raise TypeError("register_global_func: argument 'func_name' expected a str or "
                            "a callable, got %s" % type(func_name).__name__)
        f = func_name
        func_name = getattr(f, "__name__", None)  # type: ignore[assignment]
        if not isinstance(func_name, str):
            raise TypeError("register_global_func: %r has no __name__ to register it by; "
                            "give a name" % (f,))
    name = func_name

    def register(fn: Callable[..., Any]) -> Function:
        _ffi._register_func(name, fn, override)
        return _ffi.get_global_func(name, False)

    if f is not None:
        return register(f)
    return register


def init_ffi_api(namespace: str, target_module_name: Optional[str] = None) -> None:
    """Set every global function "<namespace>.<name>" (one level below
    `namespace`, which may start with "tvm.", dropped as tvm-ffi does) as
    attribute <name> of the module `target_module_name` (default: the
    module named `namespace`), which must already be imported:
    init_ffi_api("mypkg", __name__) in mypkg/_ffi_api.py."""
    if not isinstance(namespace, str):
        raise TypeError("init_ffi_api: argument 'namespace' expected a str, got %s"
                        % type(namespace).__name__)
    target_name = target_module_name or namespace
    target = sys.modules.get(target_name)
    if target is None:
        raise ValueError("init_ffi_api: module %r is not imported" % target_name)
    prefix = namespace[4:] if namespace.startswith("tvm.") else namespace
    for full in list_global_func_names():
        if not full.startswith(prefix + "."):
            continue
        short = full[len(prefix) + 1:]
        if "." in short:
            continue
        f = _ffi.get_global_func(full, True)
        if f is None:  # removed since the listing
            continue
        setattr(target, short, f)


def remove_global_func(name: str) -> None:
    """Unregister a global function (KeyError if absent)."""
    _ffi.remove_global_func(name)


def list_global_func_names() -> list:
    """Every registered global function name, sorted."""
    return _ffi.list_global_func_names()


def convert(value: Any) -> Any:
    """A Python value as tvmnode holds it: lists and tuples become Array,
    dicts Map, callables Function, numpy arrays and other DLPack producers
    Tensor (zero copy); numbers, strings and None stay what they are."""
    return _ffi.convert(value)


def save_json(value: Any, indent: int = 0) -> str:
    """The JSON graph of a value (docs/json.md); sharing is kept."""
    return _ffi.save_json(value, indent)


def load_json(text: str) -> Any:
    """A value from its JSON graph."""
    return _ffi.load_json(text)


def _object_reduce(self: Any) -> Tuple[Any, Tuple[str]]:
    return (load_json, (save_json(self),))


_ffi._set_hooks(class_factory=_make_class, error_hook=_kind_to_class,
                dtype_class=DataType, device_class=Device, opaque_class=ctypes.c_void_p)
