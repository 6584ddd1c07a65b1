"""Access paths: where in an object graph a value sits.

`get_first_structural_mismatch` returns a pair of these (one into each
side) naming the first place two values differ. A path is a chain of steps
from the root: an attribute (`.body`), an array item (`[2]`), a map item
(`["key"]`), or one of those that is missing on its side. Paths are
immutable values: they print as `<root>.body.args[1]`, compare and hash by
their steps, and `is_prefix_of` tells whether one leads into another.
The names and methods are apache-tvm-ffi's (`tvm_ffi.access_path`); here the
classes are plain Python values rather than C objects.
"""
from __future__ import annotations

from enum import IntEnum
from typing import Any, List, Optional, Tuple


class AccessKind(IntEnum):
    """Kinds of steps in an access path."""

    ATTR = 0
    ARRAY_ITEM = 1
    MAP_ITEM = 2
    ATTR_MISSING = 3
    ARRAY_ITEM_MISSING = 4
    MAP_ITEM_MISSING = 5


class AccessStep:
    """One step of an access path: `kind` (an AccessKind) and `key` (the
    attribute name, the index, or the map key)."""

    __slots__ = ("kind", "key")
    kind: AccessKind
    key: Any

    def __init__(self, kind: int, key: Any) -> None:
        object.__setattr__(self, "kind", AccessKind(kind))
        object.__setattr__(self, "key", key)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("AccessStep is immutable")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AccessStep):
            return NotImplemented
        return self.kind == other.kind and _same_key(self.key, other.key)

    def __ne__(self, other: object) -> bool:
        r = self.__eq__(other)
        return r if r is NotImplemented else not r

    def __hash__(self) -> int:
        try:
            return hash((int(self.kind), self.key))
        except TypeError:
            return hash((int(self.kind), type(self.key).__name__))

    def __repr__(self) -> str:
        k, key = self.kind, self.key
        if k == AccessKind.ATTR:
            return ".%s" % key
        if k == AccessKind.ATTR_MISSING:
            return ".<missing %s>" % key
        if k == AccessKind.ARRAY_ITEM:
            return "[%d]" % key
        if k == AccessKind.ARRAY_ITEM_MISSING:
            return "[<missing %d>]" % key
        if k == AccessKind.MAP_ITEM:
            return "[%r]" % (key,)
        return "[<missing %r>]" % (key,)


def _same_key(a: Any, b: Any) -> bool:
    if type(a) is not type(b) and not (isinstance(a, int) and isinstance(b, int)):
        return False
    try:
        return bool(a == b)
    except Exception:  # a key whose == fails is only equal to itself
        return a is b


class AccessPath:
    """A path from a root value to a nested attribute or item.

    Build one from `AccessPath.root()` with `attr`, `array_item`,
    `map_item` and their `_missing` forms; read it with `parent`, `step`,
    `depth` and `to_steps()`.
    """

    __slots__ = ("parent", "step", "depth")
    parent: Optional["AccessPath"]
    step: Optional[AccessStep]
    depth: int

    def __init__(self) -> None:
        raise ValueError("AccessPath can't be initialized directly: use "
                         "AccessPath.root() and extend it")

    @classmethod
    def _make(cls, parent: Optional["AccessPath"], step: Optional[AccessStep]) -> "AccessPath":
        p = object.__new__(cls)
        object.__setattr__(p, "parent", parent)
        object.__setattr__(p, "step", step)
        object.__setattr__(p, "depth", 0 if parent is None else parent.depth + 1)
        return p

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("AccessPath is immutable")

    @staticmethod
    def root() -> "AccessPath":
        """The path to the root value itself."""
        return AccessPath._make(None, None)

    @staticmethod
    def from_steps(steps: Any) -> "AccessPath":
        """The path made of `steps` (AccessSteps or (kind, key) pairs)."""
        p = AccessPath.root()
        for s in steps:
            if not isinstance(s, AccessStep):
                s = AccessStep(*s)
            p = p.extend(s)
        return p

    def extend(self, step: AccessStep) -> "AccessPath":
        """This path followed by `step`."""
        if not isinstance(step, AccessStep):
            raise TypeError("AccessPath.extend: step must be an AccessStep, not %s"
                            % type(step).__name__)
        return AccessPath._make(self, step)

    def attr(self, attr_key: str) -> "AccessPath":
        """The path to attribute `attr_key` of this path's value."""
        if not isinstance(attr_key, str):
            raise TypeError("AccessPath.attr: attr_key must be a str, not %s"
                            % type(attr_key).__name__)
        return self.extend(AccessStep(AccessKind.ATTR, attr_key))

    def attr_missing(self, attr_key: str) -> "AccessPath":
        """An attribute `attr_key` that this side lacks."""
        if not isinstance(attr_key, str):
            raise TypeError("AccessPath.attr_missing: attr_key must be a str, not %s"
                            % type(attr_key).__name__)
        return self.extend(AccessStep(AccessKind.ATTR_MISSING, attr_key))

    def array_item(self, index: int) -> "AccessPath":
        """The path to item `index` of this path's sequence."""
        return self.extend(AccessStep(AccessKind.ARRAY_ITEM, _index(index, "array_item")))

    def array_item_missing(self, index: int) -> "AccessPath":
        """An item `index` that this side's sequence lacks."""
        return self.extend(AccessStep(AccessKind.ARRAY_ITEM_MISSING,
                                      _index(index, "array_item_missing")))

    def map_item(self, key: Any) -> "AccessPath":
        """The path to the value under `key` in this path's map."""
        return self.extend(AccessStep(AccessKind.MAP_ITEM, key))

    def map_item_missing(self, key: Any) -> "AccessPath":
        """A key that this side's map lacks."""
        return self.extend(AccessStep(AccessKind.MAP_ITEM_MISSING, key))

    def to_steps(self) -> List[AccessStep]:
        """The steps from the root, outermost first."""
        out: List[AccessStep] = []
        p: Optional[AccessPath] = self
        while p is not None and p.step is not None:
            out.append(p.step)
            p = p.parent
        out.reverse()
        return out

    def is_prefix_of(self, other: "AccessPath") -> bool:
        """Whether `other` starts with every step of this path."""
        if not isinstance(other, AccessPath):
            raise TypeError("AccessPath.is_prefix_of: expected an AccessPath, got %s"
                            % type(other).__name__)
        if self.depth > other.depth:
            return False
        p: Optional[AccessPath] = other
        while p is not None and p.depth > self.depth:
            p = p.parent
        return p is not None and p._key() == self._key()

    def _key(self) -> Tuple[AccessStep, ...]:
        return tuple(self.to_steps())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AccessPath):
            return False
        return self.depth == other.depth and self._key() == other._key()

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return "<root>" + "".join(repr(s) for s in self.to_steps())


def _index(index: Any, who: str) -> int:
    if isinstance(index, bool) or not hasattr(index, "__index__"):
        raise TypeError("AccessPath.%s: index must be an int, not %s"
                        % (who, type(index).__name__))
    return int(index.__index__())


__all__ = ["AccessKind", "AccessPath", "AccessStep"]
