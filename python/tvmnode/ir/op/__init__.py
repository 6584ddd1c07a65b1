"""tvmnode.ir.op: one function per registered operator.

Top-level operators (add, reshape, ...) live here, `nn.*` in
tvmnode.ir.op.nn and `qnn.*` in tvmnode.ir.op.qnn, each generated from the
C operator registry when the module is imported (see _gen.py).
"""
from __future__ import annotations

import sys
import types
from typing import Any, Dict, List

from ._gen import namespaces as _namespaces
from ._gen import populate as _populate

__all__: List[str] = _populate(globals(), "")

from . import nn, qnn  # noqa: E402

# What refresh() generated, per namespace, so it can drop the functions of
# operators that were unregistered since.
_made: Dict[str, List[str]] = {"": list(__all__), "nn": list(nn.__all__), "qnn": list(qnn.__all__)}


def _namespace(prefix: str, create: bool = True) -> Dict[str, Any]:
    """The globals of tvmnode.ir.op.<prefix>, made as a module if new.
    ValueError if a part of the prefix is already something else (an
    operator function of that name)."""
    d: Dict[str, Any] = globals()
    path = __name__
    for part in prefix.split(".") if prefix else []:
        path += "." + part
        mod = d.get(part)
        if mod is None and create:
            mod = types.ModuleType(path, "Operators %s.*, registered at run time." % prefix)
            sys.modules[path] = mod
            d[part] = mod
        elif not isinstance(mod, types.ModuleType):
            raise ValueError("operator namespace %s: %s is already %r" % (prefix, path, mod))
        d = mod.__dict__
    return d


def check_name(name: str) -> None:
    """ValueError unless an operator called `name` can have a function in
    this package (its namespace must not be the name of an operator)."""
    parts = name.split(".")
    if not all(p.isidentifier() for p in parts):
        raise ValueError("operator name %r: each dotted part must be an identifier" % name)
    d: Dict[str, Any] = globals()
    for part in parts[:-1]:
        v = d.get(part)
        if v is None:
            return
        if not isinstance(v, types.ModuleType):
            raise ValueError("operator name %r: %s is an operator, not a namespace"
                             % (name, part))
        d = v.__dict__


def refresh() -> None:
    """Generate the functions again, after operators were registered or
    removed at run time (tvmnode.ir.register_op calls this); the namespace
    `custom` of an operator `custom.scale` becomes the module
    tvmnode.ir.op.custom."""
    for prefix in sorted(set(_namespaces()) | set(_made)):
        d = _namespace(prefix)
        for stale in _made.get(prefix, []):
            d.pop(stale, None)
        _made[prefix] = d["__all__"] = _populate(d, prefix)
