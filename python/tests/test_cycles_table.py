"""firmware/common/cycles.py, the Cortex-M4 timing table of the cycle
estimate, on instructions as arm-none-eabi-objdump prints them (no
toolchain needed)."""
from __future__ import annotations

import importlib.machinery
import os
import types
from typing import Any

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _cycles() -> Any:
    path = os.path.join(ROOT, "firmware", "common", "cycles.py")
    mod = types.ModuleType("firmware_cycles")
    mod.__file__ = path
    importlib.machinery.SourceFileLoader(mod.__name__, path).exec_module(mod)
    return mod


C = _cycles()


@pytest.mark.parametrize("mnemonic,operands,after,want", [
    ("adds", "r0, r1, r2", False, ("alu", 1, 0)),
    ("add.w", "r0, r1, #4", False, ("alu", 1, 0)),
    ("ldr", "r3, [r1, #4]", False, ("load", 2, 0)),
    ("ldr.w", "r3, [r1, #4]", True, ("load", 1, 0)),    # pipelined after a load/store
    ("ldrsb.w", "r3, [r1], #1", False, ("load", 2, 0)),
    ("str", "r3, [r1]", False, ("store", 1, 0)),
    ("ldrd", "r2, r3, [r0]", False, ("pair", 3, 0)),
    ("push", "{r4, r5, r6, r7, lr}", False, ("multi", 6, 0)),
    ("pop", "{r4-r7, pc}", False, ("multi", 8, 0)),     # 1 + 5 registers + refill
    ("ldmia.w", "r0!, {r2, r3}", False, ("multi", 3, 0)),
    ("smlad", "r0, r1, r2, r0", False, ("mul", 1, 0)),
    ("smlabb", "r0, r1, r2, r0", False, ("mul", 1, 0)),
    ("mul", "r0, r1, r0", False, ("mul", 1, 0)),
    ("sdiv", "r0, r1, r2", False, ("div", 7, 0)),
    ("bne.n", "8000 <f+0x10>", False, ("branch", 1, 2)),
    ("bl", "8000 <g>", False, ("branch", 1, 2)),
    ("cbz", "r0, 8000 <f+0x10>", False, ("branch", 1, 2)),
    ("tbb", "[pc, r3]", False, ("branch", 2, 2)),
    ("bx", "lr", False, ("branch", 1, 2)),
    ("vmla.f32", "s0, s1, s2", False, ("fpmac", 3, 0)),
    ("vdiv.f32", "s0, s1, s2", False, ("fpdiv", 14, 0)),
    ("vldr", "s0, [r0, #4]", False, ("fpload", 2, 0)),
    ("vpush", "{d8-d9}", False, ("fpmulti", 3, 0)),
    ("vadd.f32", "s0, s0, s1", False, ("fp", 1, 0)),
    ("ldr.w", "pc, [sp], #4", False, ("load", 4, 0)),    # a load of pc refills
])
def test_prices(mnemonic: str, operands: str, after: bool, want: Any) -> None:
    assert C.price(mnemonic, operands, after) == want


def test_condition_suffixes_are_read() -> None:
    assert C.classify("ldreq") == "load" and C.classify("moveq") == "alu"
    assert C.classify("smlaltt") == "mul" and C.classify("subs.w") == "alu"


def test_estimate_sums_classes_functions_and_operators(tmp_path: Any) -> None:
    counts = tmp_path / "cycles.txt"
    # region 1 (op0): a load, a multiply, a taken branch 3 of 5 times;
    # region 2 (op1): the same code again once; region 0: a push
    counts.write_text("1 100 2 5 0\n1 102 4 5 0\n1 106 2 5 3\n"
                      "2 100 2 1 0\n2 102 4 1 0\n2 106 2 1 1\n0 200 2 1 0\n")
    insns = {0x100: ("ldr", "r0, [r1]"), 0x102: ("smlad", "r0, r1, r2, r0"),
             0x106: ("bne.n", "100 <k>"), 0x200: ("push", "{r4, lr}")}
    funcs = [(0x100, "k"), (0x200, "run")]
    est = C.estimate(C.read_counts(str(counts)), insns, funcs, ["op0", "op1"])
    assert est["instructions"] == 19 and est["taken_branches"] == 4
    # load 2 + smlad 1 + branch 1 per pass, 2 more per taken branch; push 3
    assert est["cycles"] == 6 * 4 + 4 * 2 + 3
    assert [(r["operator"], r["cycles"]) for r in est["operators"]] == [
        ("(outside the operators)", 3), ("op0", 5 * 4 + 6), ("op1", 4 + 2)]
    assert est["functions"][0] == {"function": "k", "instructions": 18, "cycles": 32}
