"""tvmnode.transform: passes, written in Python or C, run in one pipeline.

A pass is an ir.Pass node: the C pass infrastructure runs it, whichever
language its function is written in, so `Sequential([my_python_pass,
InferType(), FuseOps()])` is one C Sequential whose Python member is called
back through a tn.Function. Decorators follow TVM:

    @tvmnode.transform.function_pass(opt_level=1)
    def fold_scale(func, mod, ctx):
        return MyMutator().visit(func)

A pass that returns something other than a Function (function passes) or
an IRModule (module passes) fails with a TypeError naming the pass, and the
module it was given is left as it was.
"""
from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, Dict, List, Optional, Sequence, Union

from . import _ffi
from ._core import Array, Map, Object, get_global_func, register_object
from .ir import Function, IRModule


@register_object("ir.PassInfo")
class PassInfo(Object):
    """A pass's name, opt level and the passes it requires."""

    __slots__ = ()
    name: str
    opt_level: int
    required: Array


@register_object("ir.Pass")
class Pass(Object):
    """A pass: call it on a module to get a new module."""

    __slots__ = ()
    info: PassInfo

    def __call__(self, mod: IRModule) -> IRModule:
        return _ffi.pass_run(self, mod, None)

    @property
    def name(self) -> str:
        """The pass's name."""
        return self.info.name

    @property
    def opt_level(self) -> int:
        """The lowest context opt_level that runs it."""
        return self.info.opt_level

    def __repr__(self) -> str:
        return "Pass(%s, opt_level=%d)" % (self.info.name, self.info.opt_level)


class ModulePass(Pass):
    """A pass over a whole module: func(mod, ctx) -> mod."""

    __slots__ = ()


class FunctionPass(Pass):
    """A pass over each non-primitive function: func(f, mod, ctx) -> f."""

    __slots__ = ()


class Sequential(Pass):
    """Run passes in order (each skipped or run as the context says)."""

    __slots__ = ()

    def __init__(self, passes: Optional[Sequence[Pass]] = None, opt_level: int = 0,
                 name: str = "sequential", required: Optional[Sequence[str]] = None) -> None:
        if required:
            raise NotImplementedError("Sequential(required=...) is not supported; "
                                      "give the member passes their requirements")
        self._move_handle_from(_ffi.pass_sequential(list(passes or []), name, opt_level))


@register_object("ir.PassInstrument")
class PassInstrument(Object):
    """Hooks run before and after every pass of a context."""

    __slots__ = ()
    name: str


@register_object("ir.PassContext")
class PassContext(Object):
    """How passes run: the opt level, config options, required and
    disabled passes, instruments. A context manager: passes called inside
    `with PassContext(...)` run under it (contexts nest, per thread)."""

    __slots__ = ()
    opt_level: int
    config: Map
    required: Array
    disabled: Array
    instruments: Array

    def __init__(self, opt_level: int = 2, required_pass: Optional[Sequence[str]] = None,
                 disabled_pass: Optional[Sequence[str]] = None,
                 instruments: Optional[Sequence[PassInstrument]] = None,
                 config: Optional[Dict[str, Any]] = None) -> None:
        self._move_handle_from(_ffi.pass_context_new(
            opt_level, config, list(required_pass) if required_pass is not None else None,
            list(disabled_pass) if disabled_pass is not None else None,
            list(instruments) if instruments is not None else None))

    def __enter__(self) -> "PassContext":
        _ffi.pass_context_enter(self)
        entered: List[Any] = []
        try:
            for inst in self.instruments:
                py = _PY_INSTRUMENTS.get(inst._handle)
                if py is not None and hasattr(py, "enter_pass_ctx"):
                    py.enter_pass_ctx()
                    entered.append(py)
        except BaseException:
            for py in reversed(entered):
                if hasattr(py, "exit_pass_ctx"):
                    py.exit_pass_ctx()
            _ffi.pass_context_exit()
            raise
        return self

    def __exit__(self, *exc: Any) -> None:
        try:
            for inst in reversed(list(self.instruments)):
                py = _PY_INSTRUMENTS.get(inst._handle)
                if py is not None and hasattr(py, "exit_pass_ctx"):
                    py.exit_pass_ctx()
        finally:
            _ffi.pass_context_exit()

    @staticmethod
    def current() -> "PassContext":
        """The innermost context entered on this thread (or the default)."""
        return _ffi.pass_context_current()


# Python objects behind instruments made by @pass_instrument, by handle
# address (the C instrument holds the hooks, which hold the object).
_PY_INSTRUMENTS: Dict[int, Any] = {}


def _pass_name(name: Optional[str], obj: Any) -> str:
    return name or getattr(obj, "__name__", None) or type(obj).__name__


def _required(required: Optional[Sequence[str]]) -> Optional[List[str]]:
    return list(required) if required else None


def _wrap_class(pass_cls: type, kind: str, opt_level: int, name: str,
                required: Optional[List[str]]) -> type:
    method = "transform_function" if kind == "function" else "transform_module"
    if not hasattr(pass_cls, method):
        raise TypeError("%s_pass: class %s has no %s method" % (kind, pass_cls.__name__, method))
    base = FunctionPass if kind == "function" else ModulePass
    make = _ffi.pass_function if kind == "function" else _ffi.pass_module

    class PyPass(base):  # type: ignore[valid-type,misc]
        __slots__ = ("_inst",)

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            inst = pass_cls(*args, **kwargs)
            self._move_handle_from(make(name, opt_level, required, getattr(inst, method)))
            self._inst = inst

        def __getattr__(self, attr: str) -> Any:
            if attr == "_inst":
                raise AttributeError(attr)
            return getattr(self._inst, attr)

    return _present_as(PyPass, pass_cls)


def _present_as(wrapper: Any, cls: Any) -> Any:
    """Give a wrapper class the name, docs, module and constructor signature
    of the user's class it wraps; returns it."""
    functools.update_wrapper(wrapper.__init__, cls.__init__)
    for attr in ("__name__", "__qualname__", "__doc__", "__module__"):
        setattr(wrapper, attr, getattr(cls, attr))
    return wrapper


def _decorator(kind: str, pass_func: Any, opt_level: int, name: Optional[str],
               required: Optional[Sequence[str]]) -> Any:
    if not isinstance(opt_level, int):
        raise TypeError("%s_pass: opt_level must be an int" % kind)

    def create(obj: Any) -> Any:
        pname = _pass_name(name, obj)
        req = _required(required)
        if inspect.isclass(obj):
            return _wrap_class(obj, kind, opt_level, pname, req)
        if not callable(obj):
            raise TypeError("%s_pass: expected a function or a class, got %s"
                            % (kind, type(obj).__name__))
        make = _ffi.pass_function if kind == "function" else _ffi.pass_module
        cls = FunctionPass if kind == "function" else ModulePass
        p = cls.__new__(cls)
        p._move_handle_from(make(pname, opt_level, req, obj))
        return p

    if pass_func is not None:
        return create(pass_func)
    return create


def function_pass(pass_func: Optional[Callable[..., Any]] = None, opt_level: int = 0,
                  name: Optional[str] = None, required: Optional[Sequence[str]] = None) -> Any:
    """Make a function pass from f(func, mod, ctx) -> func, or from a class
    with transform_function(self, func, mod, ctx). Use as @function_pass or
    @function_pass(opt_level=1, name=..., required=[...])."""
    return _decorator("function", pass_func, opt_level, name, required)


def module_pass(pass_func: Optional[Callable[..., Any]] = None, opt_level: int = 0,
                name: Optional[str] = None, required: Optional[Sequence[str]] = None) -> Any:
    """Make a module pass from f(mod, ctx) -> mod, or from a class with
    transform_module(self, mod, ctx)."""
    return _decorator("module", pass_func, opt_level, name, required)


def _builtin(pass_name: str) -> Callable[[], Pass]:
    def make() -> Pass:
        f = get_global_func("transform." + pass_name)
        assert f is not None
        p: Pass = f()
        return p

    make.__name__ = pass_name
    make.__qualname__ = pass_name
    make.__doc__ = "The built-in %s pass (global function transform.%s)." % (pass_name, pass_name)
    return make


InferType = _builtin("InferType")
SimplifyExpr = _builtin("SimplifyExpr")
FoldConstant = _builtin("FoldConstant")
DeadCodeElimination = _builtin("DeadCodeElimination")
FuseOps = _builtin("FuseOps")
ConvertKernelLayout = _builtin("ConvertKernelLayout")
FoldInputOffset = _builtin("FoldInputOffset")
PackDenseWeights = _builtin("PackDenseWeights")
PatchStages = _builtin("PatchStages")


def get_pass(name: str) -> Pass:
    """A pass from the pass registry by name."""
    return _ffi.pass_get(name)


def register_pass(p: Pass, override: bool = False) -> Pass:
    """Put a pass in the pass registry under its name (so other passes can
    require it)."""
    _ffi.pass_register(p, override)
    return p


def unregister_pass(name: str) -> None:
    """Remove a pass from the pass registry."""
    _ffi.pass_unregister(name)


def list_passes() -> List[str]:
    """Names in the pass registry."""
    return _ffi.pass_list()


def register_config(key: str, value_type: Union[type, int]) -> None:
    """Declare a PassContext config option and the type of its value
    (int, float, bool or str)."""
    codes = {int: _ffi.TYPE_INT, float: _ffi.TYPE_FLOAT, bool: _ffi.TYPE_BOOL,
             str: _ffi.TYPE_STRING}
    t = codes.get(value_type, value_type) if isinstance(value_type, type) else value_type
    if not isinstance(t, int):
        raise TypeError("register_config: unsupported value type %r" % (value_type,))
    _ffi.pass_config_register(key, t)


__all__ = [
    "ConvertKernelLayout", "DeadCodeElimination", "FoldConstant", "FoldInputOffset", "FunctionPass", "FuseOps", "InferType",
    "ModulePass", "PackDenseWeights", "Pass", "PassContext", "PassInfo", "PassInstrument", "PatchStages", "Sequential",
    "SimplifyExpr", "function_pass", "get_pass", "list_passes", "module_pass",
    "register_config", "register_pass", "unregister_pass",
]
