"""A tn.List or tn.Dict that contains itself: structural hashing and equality
raise ValueError naming where the value recurs, instead of walking for ever.

Lists and dicts come from JSON (a Python list converts to an immutable
tn.Array); each test breaks its cycles again, as reference counting cannot.
"""
from typing import Any

import pytest

import tvmnode as tn
from tvmnode import ir


def _load(kind: str, items: str) -> Any:
    return tn.load_json('{"tvmnode.json": 1, "root": {"$node": 0}, '
                        '"nodes": [{"type": "%s", "items": %s}]}' % (kind, items))


def test_list_that_contains_itself() -> None:
    lst, other = _load("tn.List", "[1]"), _load("tn.List", "[1]")
    lst.append(lst)
    other.append(other)
    try:
        with pytest.raises(ValueError, match=r"tn_structural_hash: value contains "
                           r"itself at root\[1\] \(the tn.List at root\)"):
            ir.structural_hash(lst)
        with pytest.raises(ValueError, match=r"lhs contains itself at root\[1\]"):
            ir.structural_equal(lst, other)
        with pytest.raises(ValueError, match=r"lhs contains itself at root\[1\]"):
            ir.assert_structural_equal(lst, other)
        # The same object is equal to itself without a walk, as in Python.
        assert ir.structural_equal(lst, lst)
    finally:
        del lst[1]
        del other[1]
    assert ir.structural_equal(lst, other)
    assert ir.structural_hash(lst) == ir.structural_hash(other)


def test_dict_and_list_that_hold_each_other() -> None:
    d = _load("tn.Dict", '[["a", 1]]')
    lst = _load("tn.List", "[]")
    d["back"] = lst
    lst.append(d)
    try:
        with pytest.raises(ValueError, match=r"value contains itself at "
                           r"root\['back'\]\[0\] \(the tn.Dict at root\)"):
            ir.structural_hash(d)
        with pytest.raises(ValueError, match=r"at root\[0\]\['back'\] "
                           r"\(the tn.List at root\)"):
            ir.structural_hash(lst)
    finally:
        del d["back"]
    same = tn.load_json('{"tvmnode.json": 1, "root": {"$node": 1}, "nodes": ['
                        '{"type": "tn.Dict", "items": [["a", 1]]}, '
                        '{"type": "tn.List", "items": [{"$node": 0}]}]}')
    assert ir.structural_equal(lst, same)
    assert ir.structural_hash(lst) == ir.structural_hash(same)
