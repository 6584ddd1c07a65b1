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


def structural_equal(lhs: Any, rhs: Any, map_free_vars: bool = False,
                     skip_tensor_content: bool = False) -> bool:
    """Whether `lhs` and `rhs` are equal by content. Variables defined in
    binding positions are matched to each other (alpha-equivalence); other
    variables compare by identity unless `map_free_vars`. With
    `skip_tensor_content`, tensors compare by dtype, shape and device only."""
    return bool(_ffi.structural_equal(lhs, rhs, bool(map_free_vars), False,
                                      bool(skip_tensor_content)))


def structural_hash(value: Any, map_free_vars: bool = False,
                    skip_tensor_content: bool = False) -> int:
    """A 64-bit unsigned hash consistent with structural_equal (called with
    the same flags)."""
    return int(_ffi.structural_hash(value, bool(map_free_vars), bool(skip_tensor_content)))


def get_first_structural_mismatch(
        lhs: Any, rhs: Any, map_free_vars: bool = False,
        skip_tensor_content: bool = False) -> Optional[Tuple[AccessPath, AccessPath]]:
    """None when `lhs` and `rhs` are structurally equal, else the pair
    (lhs_path, rhs_path) of AccessPaths to the first place they differ.
    The two paths have the same steps except the last when one side lacks
    an item: a sequence shorter than the other ends in
    `array_item_missing(len)` on its side, a map without a key the other
    has in `map_item_missing(key)`."""
    steps = _ffi._structural_mismatch(lhs, rhs, bool(map_free_vars),
                                      bool(skip_tensor_content))
    if steps is None:
        return None
    lp = rp = AccessPath.root()
    for lkind, rkind, key in steps:
        lp = lp.extend(AccessStep(lkind, key))
        rp = rp.extend(AccessStep(rkind, key))
    return lp, rp


__all__ = ["get_first_structural_mismatch", "structural_equal", "structural_hash"]
