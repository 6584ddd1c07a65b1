"""Structural equality, hashing and the first mismatch, at the top level.

The spellings are apache-tvm-ffi's (`tvm_ffi.structural_equal`,
`structural_hash`, `get_first_structural_mismatch`); the work is C's
(tn_structural_equal, tn_structural_hash, tn_structural_mismatch), the same
that `tvmnode.ir.structural_equal` and container `==` use.
"""
from __future__ import annotations

from typing import Any, Optional, Tuple

from . import _ffi
from .access_path import AccessKind, AccessPath, AccessStep


def _no_skip(who: str, skip_tensor_content: bool) -> None:
    if skip_tensor_content:
        raise NotImplementedError(
            "%s: skip_tensor_content=True is not supported (tensors always "
            "compare by dtype, shape, device and content)" % who)


def structural_equal(lhs: Any, rhs: Any, map_free_vars: bool = False,
                     skip_tensor_content: bool = False) -> bool:
    """Whether `lhs` and `rhs` are equal by content. Variables defined in
    binding positions are matched to each other (alpha-equivalence); other
    variables compare by identity unless `map_free_vars`."""
    _no_skip("structural_equal", skip_tensor_content)
    return bool(_ffi.structural_equal(lhs, rhs, bool(map_free_vars)))


def structural_hash(value: Any, map_free_vars: bool = False,
                    skip_tensor_content: bool = False) -> int:
    """A 64-bit unsigned hash consistent with structural_equal."""
    _no_skip("structural_hash", skip_tensor_content)
    return int(_ffi.structural_hash(value, bool(map_free_vars)))


def get_first_structural_mismatch(
        lhs: Any, rhs: Any, map_free_vars: bool = False,
        skip_tensor_content: bool = False) -> Optional[Tuple[AccessPath, AccessPath]]:
    """None when `lhs` and `rhs` are structurally equal, else the pair
    (lhs_path, rhs_path) of AccessPaths to the first place they differ.
    The paths are the same on both sides except when the lhs map has a key
    the rhs lacks: then the rhs path ends in a map_item_missing step. When
    two sequences or maps differ in length, the paths lead to them."""
    _no_skip("get_first_structural_mismatch", skip_tensor_content)
    steps = _ffi._structural_mismatch(lhs, rhs, bool(map_free_vars))
    if steps is None:
        return None
    lp = rp = AccessPath.root()
    for kind, key in steps:
        if kind == AccessKind.MAP_ITEM_MISSING:
            lp = lp.extend(AccessStep(AccessKind.MAP_ITEM, key))
            rp = rp.extend(AccessStep(AccessKind.MAP_ITEM_MISSING, key))
        else:
            step = AccessStep(kind, key)
            lp, rp = lp.extend(step), rp.extend(step)
    return lp, rp


__all__ = ["get_first_structural_mismatch", "structural_equal", "structural_hash"]
