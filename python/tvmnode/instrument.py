"""tvmnode.instrument: pass instruments, in C or Python.

An instrument is an ir.PassInstrument node whose before/after hooks the C
pass infrastructure calls around every pass of the context it is in.
`@pass_instrument` turns a Python class with run_before_pass(mod, info)
and/or run_after_pass(mod, info) into one (enter_pass_ctx / exit_pass_ctx
run when a PassContext holding it is entered and left, as in TVM);
PassTimingInstrument is the C timing instrument.
"""
from __future__ import annotations

from typing import Any, Callable, Optional, Type, TypeVar

from . import _ffi
from .transform import _PY_INSTRUMENTS, PassInstrument, _present_as

T = TypeVar("T")


class PassTimingInstrument(PassInstrument):
    """Times every pass it sees; render() gives the table."""

    __slots__ = ()

    def __init__(self) -> None:
        self._move_handle_from(_ffi.pass_timing_instrument())

    def render(self) -> str:
        """The timing table of the passes run so far."""
        return _ffi.pass_timing_report(self)


def pass_instrument(pi_cls: Optional[type] = None, name: Optional[str] = None) -> Any:
    """Class decorator: instances of the decorated class are PassInstruments
    whose hooks call the instance's run_before_pass / run_after_pass."""

    def wrap(cls: type) -> type:
        iname = name or cls.__name__

        class PyPassInstrument(PassInstrument):
            __slots__ = ("_inst",)

            def __init__(self, *args: Any, **kwargs: Any) -> None:
                inst = cls(*args, **kwargs)
                before = getattr(inst, "run_before_pass", None)
                after = getattr(inst, "run_after_pass", None)
                self._move_handle_from(_ffi.pass_instrument(iname, before, after))
                self._inst = inst
                _PY_INSTRUMENTS[self._handle] = inst

            def __getattr__(self, attr: str) -> Any:
                if attr == "_inst":
                    raise AttributeError(attr)
                return getattr(self._inst, attr)

            def __del__(self) -> None:
                # the handle may live on in a context; the entry is only a
                # route to enter/exit hooks, dropped with the Python object
                _PY_INSTRUMENTS.pop(self._handle, None)

        return _present_as(PyPassInstrument, cls)

    if pi_cls is not None:
        return wrap(pi_cls)
    return wrap


__all__ = ["PassInstrument", "PassTimingInstrument", "pass_instrument"]
