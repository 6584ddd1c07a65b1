"""tvmnode.ir: the tensor IR, as TVM's Relay Python API presents it.

Every class here is attached to the C node type of the same name, so nodes
built in C, Rust or Go come to Python as these classes, and nodes built here
are the C nodes (the builders type each call as it is made, and a shape or
dtype mismatch is a TypeError naming the operator and the argument).
Operators are functions generated from the operator registry, in
`tvmnode.ir.op`, `.op.nn` and `.op.qnn`.
"""
from __future__ import annotations

import keyword
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Union

from .. import _ffi
from .._core import Array, DataType, Map, Object, Shape, get_global_func, register_object
from .._tensor import Tensor

ExprVisitor = _ffi.ExprVisitor
ExprMutator = _ffi.ExprMutator


def _text(node: Any) -> str:
    return _ffi.astext(node, False).rstrip("\n")


@register_object("ir.Type")
class Type(Object):
    """Base of IR types."""

    __slots__ = ()

    def __repr__(self) -> str:
        return _text(self)


@register_object("ir.TensorType")
class TensorType(Type):
    """Tensor[(d0, d1, ...), dtype]."""

    __slots__ = ()
    shape: Shape
    dtype: DataType

    def __init__(self, shape: Sequence[int], dtype: str = "float32") -> None:
        self._move_handle_from(_ffi.ir_tensor_type(tuple(shape), str(dtype)))

    @property
    def concrete_shape(self) -> tuple:
        """The shape as a tuple of ints."""
        return tuple(self.shape)


@register_object("ir.TupleType")
class TupleType(Type):
    """(T0, T1, ...)."""

    __slots__ = ()
    fields: Array

    def __init__(self, fields: Sequence[Type]) -> None:
        self._move_handle_from(_ffi.ir_tuple_type(list(fields)))


@register_object("ir.FuncType")
class FuncType(Type):
    """fn (T0, ...) -> R."""

    __slots__ = ()
    arg_types: Array
    ret_type: Type

    def __init__(self, arg_types: Sequence[Type], ret_type: Type) -> None:
        self._move_handle_from(_ffi.ir_func_type(list(arg_types), ret_type))


@register_object("ir.Expr")
class Expr(Object):
    """Base of expressions. `checked_type` is the type inference gave it:
    builders type calls whose arguments are typed at once, InferType the
    rest; reading it before then is a ValueError, as in TVM."""

    __slots__ = ()

    @property
    def checked_type(self) -> Type:
        """The inferred type (ValueError if there is none yet)."""
        t = _CHECKED_TYPE.__get__(self)
        if t is None:
            raise ValueError("the type of %s is not known yet: run InferType first"
                             % self._type_key)
        return t

    def __repr__(self) -> str:
        return _text(self)

    def astext(self, show_meta_data: bool = False) -> str:
        """The text format."""
        return _ffi.astext(self, show_meta_data)

    def _binary(self, name: str, other: Any, reverse: bool = False) -> "Call":
        o = _as_expr(other, self)
        a, b = (o, self) if reverse else (self, o)
        return _ffi.ir_call_op(name, (a, b), (), ())

    def __add__(self, other: Any) -> "Call":
        return self._binary("add", other)

    def __radd__(self, other: Any) -> "Call":
        return self._binary("add", other, True)

    def __sub__(self, other: Any) -> "Call":
        return self._binary("subtract", other)

    def __rsub__(self, other: Any) -> "Call":
        return self._binary("subtract", other, True)

    def __mul__(self, other: Any) -> "Call":
        return self._binary("multiply", other)

    def __rmul__(self, other: Any) -> "Call":
        return self._binary("multiply", other, True)

    def __truediv__(self, other: Any) -> "Call":
        return self._binary("divide", other)

    def __rtruediv__(self, other: Any) -> "Call":
        return self._binary("divide", other, True)

    def __neg__(self) -> "Call":
        return _ffi.ir_call_op("negative", (self,), (), ())


_CHECKED_TYPE: Any = _ffi._type_fields(_ffi.type_index("ir.Expr"))[0]


def _as_expr(v: Any, like: Optional[Expr] = None) -> Expr:
    if isinstance(v, Expr):
        return v
    if isinstance(v, (bool, int, float)):
        dtype = None
        t = _CHECKED_TYPE.__get__(like) if like is not None else None
        if isinstance(t, TensorType):
            dtype = str(t.dtype)
        return const(v, dtype)
    raise TypeError("expected an ir.Expr or a number, got %s" % type(v).__name__)


@register_object("ir.Var")
class Var(Expr):
    """A variable. Its name is for printing only: two variables with the
    same name are different variables."""

    __slots__ = ()
    name_hint: str
    type_annotation: Optional[Type]

    def __init__(self, name_hint: str, type_annotation: Optional[Type] = None) -> None:
        self._move_handle_from(_ffi.ir_var(name_hint, type_annotation))


@register_object("ir.Constant")
class Constant(Expr):
    """A constant tensor."""

    __slots__ = ()
    data: Tensor

    def __init__(self, data: Any) -> None:
        self._move_handle_from(_ffi.ir_constant(data))


@register_object("ir.Op")
class Op(Expr):
    """A registered operator (`Op.get("nn.relu")`)."""

    __slots__ = ()
    name: str
    num_inputs: int
    attrs_type: Optional[str]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("operators come from the registry: use Op.get(name)")

    @staticmethod
    def get(name: str) -> "Op":
        """The operator registered as `name` (KeyError if none)."""
        return _ffi.ir_op(name)

    def get_attr(self, attr: str) -> Any:
        """The operator attribute `attr` (its type inference, pattern, doc,
        input names, or anything a binding attached), or None."""
        return _ffi.op_get_attr(self, attr)

    def set_attr(self, attr: str, value: Any, override: bool = False) -> None:
        """Attach `value` as attribute `attr`, visible from every language.
        A set attribute is a ValueError unless `override`; the attributes
        the library reads ("infer_type", "pattern", "doc", "input_names")
        are checked."""
        _ffi.op_set_attr(self, attr, value, override)

    @property
    def pattern(self) -> int:
        """How FuseOps may group it (a value of OP_PATTERNS)."""
        p = self.get_attr("pattern")
        return OP_PATTERNS["opaque"] if p is None else int(p)

    @property
    def input_names(self) -> List[str]:
        """The names of its inputs (the "input_names" attribute; arg0,
        arg1, ... when it has none)."""
        names = self.get_attr("input_names")
        if names is not None:
            return [str(n) for n in names]
        if self.num_inputs == 1:
            return ["data"]
        return ["arg%d" % i for i in range(max(self.num_inputs, 0))]

    @property
    def description(self) -> Optional[str]:
        """Its one-line doc (the "doc" attribute), or None."""
        d = self.get_attr("doc")
        return None if d is None else str(d)


@register_object("ir.Call")
class Call(Expr):
    """op(args...) with the operator's attributes."""

    __slots__ = ()
    op: Expr
    args: Array
    attrs: Any  # the op's Attrs node, or None

    def __init__(self, op: Expr, args: Sequence[Expr], attrs: Optional["Attrs"] = None) -> None:
        self._move_handle_from(_ffi.ir_call(op, list(args), attrs))


@register_object("ir.Tuple")
class Tuple(Expr):
    """(e0, e1, ...)."""

    __slots__ = ()
    fields: Array

    def __init__(self, fields: Sequence[Expr]) -> None:
        self._move_handle_from(_ffi.ir_tuple(list(fields)))

    def __getitem__(self, index: int) -> Expr:
        return self.fields[index]

    def __len__(self) -> int:
        return len(self.fields)


@register_object("ir.TupleGetItem")
class TupleGetItem(Expr):
    """tuple.index."""

    __slots__ = ()
    index: int

    def __init__(self, tuple_value: Expr, index: int) -> None:
        self._move_handle_from(_ffi.ir_tuple_get_item(tuple_value, index))

    @property
    def tuple_value(self) -> Expr:
        """The tuple (TVM's name for the C field `tuple`)."""
        t: Expr = self.tuple
        return t


@register_object("ir.Let")
class Let(Expr):
    """let var = value; body."""

    __slots__ = ()
    var: Var
    value: Expr
    body: Expr

    def __init__(self, var: Var, value: Expr, body: Expr) -> None:
        self._move_handle_from(_ffi.ir_let(var, value, body))


@register_object("ir.Function")
class Function(Expr):
    """fn (params) -> ret_type { body }."""

    __slots__ = ()
    params: Array
    body: Expr
    ret_type: Optional[Type]
    attrs: Any  # a Map, or None

    def __init__(self, params: Sequence[Var], body: Expr, ret_type: Optional[Type] = None,
                 attrs: Optional[Mapping[str, Any]] = None) -> None:
        self._move_handle_from(_ffi.ir_function(list(params), body, ret_type,
                                                dict(attrs) if attrs is not None else None))

    def with_attr(self, key: str, value: Any) -> "Function":
        """A copy with one more attribute."""
        attrs = dict(self.attrs.items()) if self.attrs is not None else {}
        attrs[key] = value
        return Function(list(self.params), self.body, self.ret_type, attrs)


@register_object("ir.GlobalVar")
class GlobalVar(Expr):
    """@name: a global function of a module."""

    __slots__ = ()
    name_hint: str

    def __init__(self, name_hint: str) -> None:
        self._move_handle_from(_ffi.ir_global_var(name_hint))


@register_object("ir.Attrs")
class Attrs(Object):
    """Base of operator attribute nodes (`call.attrs.units`)."""

    __slots__ = ()

    def keys(self) -> List[str]:
        """The attribute names."""
        return [f.name for f in _ffi._type_fields(self._type_index)]

    def __getitem__(self, name: str) -> Any:
        if name not in self.keys():
            raise KeyError(name)
        return getattr(self, name)


@register_object("ir.IRModule")
class IRModule(Object):
    """Named global functions. `mod["main"]` reads one; `mod["f"] = fn`
    makes this Python object refer to a new module with it (C modules are
    immutable values, as passes see them)."""

    __slots__ = ()
    functions: Map
    attrs: Optional[Map]

    def __init__(self, functions: Optional[Mapping[Any, Function]] = None) -> None:
        mod = _ffi.module_new()
        for name, fn in (functions or {}).items():
            mod = _ffi.module_with(mod, _gv_name(name), fn)
        self._move_handle_from(mod)

    @staticmethod
    def from_expr(expr: Expr) -> "IRModule":
        """A module whose "main" is `expr` (a function, or an expression
        whose free variables become the parameters)."""
        return _ffi.module_from_expr(expr)

    def __getitem__(self, name: Union[str, GlobalVar]) -> Function:
        return _ffi.module_get(self, _gv_name(name))

    def __setitem__(self, name: Union[str, GlobalVar], func: Function) -> None:
        self._move_handle_from(_ffi.module_with(self, _gv_name(name), func))

    def __contains__(self, name: Union[str, GlobalVar]) -> bool:
        return _gv_name(name) in self.functions

    def __iter__(self) -> Iterator[str]:
        return iter(self.functions.keys())

    def __len__(self) -> int:
        return len(self.functions)

    def get_global_vars(self) -> List[GlobalVar]:
        """A GlobalVar for each function, by name."""
        return [GlobalVar(n) for n in self.functions.keys()]

    def with_attr(self, key: str, value: Any) -> "IRModule":
        """A new module with module attribute `key` set to `value` (plain
        data: numbers, strings, dtypes, lists and dicts of them)."""
        return _module_with_attr(self, key, value)

    def astext(self, show_meta_data: bool = True) -> str:
        """The text format; with show_meta_data the constants follow, so
        `parse(mod.astext())` gives an equal module."""
        return _ffi.astext(self, show_meta_data)

    def __repr__(self) -> str:
        return _text(self)

    def __str__(self) -> str:
        return _text(self)


_well_formed = get_global_func("ir.WellFormed")
_module_with_attr = get_global_func("ir.ModuleWithAttr")


def _gv_name(name: Any) -> str:
    if isinstance(name, GlobalVar):
        return name.name_hint
    if isinstance(name, str):
        return name
    raise TypeError("expected a function name or a GlobalVar, got %s" % type(name).__name__)


# ---------------------------------------------------------------------------
# Builders

def var(name_hint: str, type_annotation: Optional[Type] = None,
        shape: Optional[Sequence[int]] = None, dtype: str = "float32") -> Var:
    """A variable, annotated Tensor[shape, dtype] when a shape is given."""
    if type_annotation is None and shape is not None:
        type_annotation = TensorType(shape, dtype)
    elif isinstance(type_annotation, str):
        type_annotation = TensorType((), type_annotation)
    return _ffi.ir_var(name_hint, type_annotation)


def const(value: Any, dtype: Optional[str] = None) -> Constant:
    """A constant from a number, a nested list, a numpy array or a Tensor.
    Numbers default to int32 / float32 / bool, as in TVM. Array data is
    copied into storage the C library owns."""
    if isinstance(value, Tensor) and dtype is None:
        return _ffi.ir_constant(value)
    if isinstance(value, (bool, int, float)) and not hasattr(value, "dtype"):
        if dtype is None:
            dtype = "bool" if isinstance(value, bool) else "int32" if isinstance(value, int) else "float32"
        return _ffi.ir_scalar(float(value), dtype)
    import numpy as np

    arr = np.asarray(value, dtype=dtype)
    if dtype is None and arr.dtype == np.float64 and not hasattr(value, "dtype"):
        arr = arr.astype("float32")
    t = _ffi.empty(arr.shape, str(arr.dtype))
    np.asarray(t)[...] = arr
    return _ffi.ir_constant(t)


def tuple_get_item(tuple_value: Expr, index: int) -> TupleGetItem:
    """tuple_value.index."""
    return _ffi.ir_tuple_get_item(tuple_value, index)


def structural_equal(lhs: Any, rhs: Any, map_free_vars: bool = False) -> bool:
    """Equality by content (alpha-equivalent functions are equal)."""
    return _ffi.structural_equal(lhs, rhs, map_free_vars)


def structural_hash(node: Any, map_free_vars: bool = False) -> int:
    """A hash consistent with structural_equal."""
    return _ffi.structural_hash(node, map_free_vars)


def assert_structural_equal(lhs: Any, rhs: Any, map_free_vars: bool = False) -> None:
    """Raise ValueError naming the first difference unless equal."""
    path = _ffi.structural_equal(lhs, rhs, map_free_vars, True)
    if path is not None:
        raise ValueError("structural mismatch at %s:\nlhs:\n%s\nrhs:\n%s" % (path, lhs, rhs))


def parse(text: str) -> IRModule:
    """A module from the text format (ValueError with line and column)."""
    return _ffi.parse(text)


def astext(node: Any, show_meta_data: bool = False) -> str:
    """The text format of a module, expression or type."""
    return _ffi.astext(node, show_meta_data)


def well_formed(node: Any) -> None:
    """Check that a module, function or expression is well formed (typed
    arrays, operator arity and attrs, variables bound once and defined
    before use, saved types equal to inferred ones); ValueError naming the
    function and the place if not. Loading an IRModule from JSON runs it."""
    _well_formed(node)


def post_order_visit(expr: Expr, fvisit: Callable[[Expr], Any]) -> None:
    """Call fvisit on every node under expr, children first, each once."""
    class _Visit(ExprVisitor):
        pass

    v = _Visit()
    for name in ("visit_var", "visit_constant", "visit_op", "visit_call", "visit_tuple",
                 "visit_tuple_getitem", "visit_let", "visit_function", "visit_global_var"):
        base = getattr(ExprVisitor, name)

        def hook(self: Any, node: Any, _base: Any = base) -> None:
            _base(self, node)
            fvisit(node)

        setattr(_Visit, name, hook)
    v.visit(expr)


# Fusion patterns of operators (Op.pattern), as FuseOps reads them.
OP_PATTERNS: Dict[str, int] = {
    "elemwise": 0, "broadcast": 1, "injective": 2, "reduce": 3, "out_fusable": 4,
    "opaque": 8,
}


def register_op(name: str, num_inputs: int, infer: Optional[Callable[..., Any]] = None, *,
                pattern: Union[str, int] = "opaque", attrs_type: Optional[str] = None,
                doc: Optional[str] = None,
                input_names: Optional[Sequence[str]] = None) -> Any:
    """Register an operator whose type inference is written in Python.

    `infer(arg_types, attrs)` gets the argument types (an Array of types)
    and the call's attrs node (or None) and returns the call's type; raise
    TypeError for arguments it does not accept. `num_inputs` is the arity
    (-1: any), `pattern` how FuseOps may group it (a key of OP_PATTERNS or
    its value), `attrs_type` the type key of an `ir.Attrs` node type whose
    fields are the attributes. Usable as a decorator on `infer`:

        @tvmnode.ir.register_op("custom.double", 1, pattern="elemwise")
        def _(arg_types, attrs):
            return arg_types[0]

    The operator is then built with `tvmnode.ir.op.custom.double(x)` (or
    `Call(Op.get(name), args, attrs)`), printed and parsed by name, and seen
    by passes in every language. A taken name is a ValueError.
    `input_names` name its inputs (the generated function's parameters);
    without them one input is "data" and several are arg0, arg1, ...
    """
    if input_names is not None:
        input_names = list(input_names)
        if num_inputs >= 0 and len(input_names) != num_inputs:
            raise ValueError("register_op: %s takes %d inputs but input_names has %d"
                             % (name, num_inputs, len(input_names)))
        for n in input_names:
            if not isinstance(n, str) or not n.isidentifier() or keyword.iskeyword(n):
                raise ValueError("register_op: input name %r is not an identifier" % (n,))
    if isinstance(pattern, str):
        if pattern not in OP_PATTERNS:
            raise ValueError("register_op: unknown pattern %r (known: %s)"
                             % (pattern, ", ".join(OP_PATTERNS)))
        pattern = OP_PATTERNS[pattern]

    op.check_name(name)

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        _ffi.op_register(name, num_inputs, attrs_type, pattern, fn,
                         doc if doc is not None else getattr(fn, "__doc__", None))
        if input_names is not None:
            try:
                Op.get(name).set_attr("input_names", input_names)
            except BaseException:
                _ffi.op_unregister(name)
                raise
        op.refresh()
        return fn

    if infer is None:
        return register
    register(infer)
    return None


def unregister_op(name: str) -> None:
    """Remove an operator from the registry (KeyError if there is none);
    calls already built keep it."""
    _ffi.op_unregister(name)
    op.refresh()


from . import op  # noqa: E402  (the op functions need the classes above)

__all__ = [
    "Attrs", "Call", "Constant", "Expr", "ExprMutator", "ExprVisitor", "FuncType", "Function",
    "GlobalVar", "IRModule", "Let", "OP_PATTERNS", "Op", "TensorType", "Tuple", "TupleGetItem",
    "TupleType", "Type", "Var", "assert_structural_equal", "astext", "const", "op", "parse",
    "post_order_visit", "register_op", "structural_equal", "structural_hash",
    "tuple_get_item", "unregister_op", "var", "well_formed",
]
