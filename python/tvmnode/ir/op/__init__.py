"""tvmnode.ir.op: one function per registered operator.

Top-level operators (add, reshape, ...) live here, `nn.*` in
tvmnode.ir.op.nn and `qnn.*` in tvmnode.ir.op.qnn, each generated from the
C operator registry when the module is imported (see _gen.py).
"""
from __future__ import annotations

from typing import Any, List

from ._gen import populate as _populate

__all__: List[str] = _populate(globals(), "")

from . import nn, qnn  # noqa: E402


def refresh() -> None:
    """Generate the functions again (after operators were registered at run
    time)."""
    _populate(globals(), "")
    _populate(nn.__dict__, "nn")
    _populate(qnn.__dict__, "qnn")
