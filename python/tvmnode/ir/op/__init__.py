"""tvmnode.ir.op: one function per registered operator.

Top-level operators (add, reshape, ...) live here, `nn.*` in
tvmnode.ir.op.nn and `qnn.*` in tvmnode.ir.op.qnn, each generated from the
C operator registry when the module is imported (see _gen.py).
"""
from __future__ import annotations

import sys
import threading
import types
from typing import Any, Dict, List

from ._gen import functions as _functions
from ._gen import namespaces as _namespaces
from ._gen import populate as _populate

__all__: List[str] = _populate(globals(), "")

from . import image, nn, qnn  # noqa: E402

# What refresh() generated, per namespace, so it can drop the functions of
# operators that were unregistered since.
_made: Dict[str, List[str]] = {"": list(__all__), "nn": list(nn.__all__), "qnn": list(qnn.__all__),
                               "image": list(image.__all__)}

# Held by refresh(), so refreshes from several threads do not interleave.
_refresh_lock = threading.Lock()


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
    tvmnode.ir.op.custom.

    Other threads may be calling operator functions meanwhile, so no name
    that stays registered is ever missing: every function is made first,
    then each namespace gets them (a name is replaced in one step), and
    only then are the functions of removed operators deleted."""
    with _refresh_lock:
        made = {prefix: _functions(prefix)
                for prefix in sorted(set(_namespaces()) | set(_made))}
        for prefix, fns in made.items():
            d = _namespace(prefix)
            d.update(fns)
            d["__all__"] = list(fns)
            for stale in set(_made.get(prefix, [])) - set(fns):
                d.pop(stale, None)
            _made[prefix] = list(fns)
