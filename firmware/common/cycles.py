"""An estimate of Cortex-M4 cycles from executed instructions.

cycles_plugin.c counts, per instruction address, how often the
instruction ran and how often it branched away (taken). This module reads
those counts, names each address's instruction from the firmware's
disassembly (arm-none-eabi-objdump -d), prices it with the Cortex-M4
timings, and sums per instruction class and per function (each generated
operator is one function: the plugin attributes everything from one
operator's entry to the next one's, the crt kernels it calls included, to
that operator, which is the per-layer profile).

The timings are those of ARM's Cortex-M4 Technical Reference Manual
(DDI 0439, section 3.3.1, table 3-1, with its notes on pipelined loads
and stores), as this table applies them:

    class   instructions                                   cycles
    alu     data processing, moves, shifts, compares,      1
            extends, bit fields, saturation, SIMD add/sub,
            IT, NOP
    mul     every multiply and multiply-accumulate,        1
            SIMD (SMLAD, SMUAD, ...) and long (SMLAL)
    div     SDIV, UDIV                                     7 (2-12 by operands:
                                                           the middle)
    load    LDR, LDRB/H, LDRSB/H, LDREX                    2, or 1 after another
                                                           load or store
    store   STR, STRB/H, STREX                             1
    pair    LDRD, STRD                                     3 (1 + 2)
    multi   LDM, STM, PUSH, POP                            1 + registers
    branch  B, BL, BX, BLX, CBZ, CBNZ; TBB, TBH            1 not taken, 1 + 2 taken
                                                           (TBB/TBH 2 + 2);
            loads and POPs that write pc                   + 2 (the refill)
    fp      VADD, VSUB, VMUL, VNEG, VABS, VCMP, VCVT,      1
            VMOV, VMRS
    fpmac   VMLA, VMLS, VNMLA, VNMLS, VFMA, VFMS           3
    fpdiv   VDIV, VSQRT                                    14
    fpload  VLDR, VSTR                                     2
    fpmulti VLDM, VSTM, VPUSH, VPOP                        1 + registers

"After another load or store" is read from the program: the instruction
before it in memory, within the same function. The pipeline refill P is
1-3 cycles in the manual (it depends on the target's alignment and width,
and on speculation); 2 is used throughout. What the table leaves out:
flash wait states (a 120 MHz part runs its flash with wait states that
the ART accelerator or a cache hides, or not), bus contention between
instruction fetch and data, unaligned accesses, and interrupt entry (12
cycles). So this is an estimate for code running from zero-wait-state
memory, and the instruction count beside it is exact.
"""
from __future__ import annotations

import bisect
import re
import subprocess
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

REFILL = 2

#: The cores (qemu -cpu) whose runs this table prices: the M4's own, and the
#: M33's, where it stands for M4 cycles of the M33's code (the two cores
#: issue one instruction at a time down a 3-stage pipeline). Not the M7,
#: which issues up to two instructions a cycle down six stages, with
#: branch prediction and caches, nor the M55, whose MVE instructions run
#: in beats that overlap the next one's (and which this objdump names
#: only in part): a table of M4 timings would price either far from the
#: core, so run.py --cycles refuses them and their figures are
#: instructions alone.
PRICED_CPUS = ("cortex-m4", "cortex-m33")

_CONDS = ("eq", "ne", "cs", "cc", "hs", "lo", "mi", "pl", "vs", "vc", "hi", "ls", "ge", "lt",
          "gt", "le", "al")

_LOAD = {"ldr", "ldrb", "ldrh", "ldrsb", "ldrsh", "ldrex", "ldrexb", "ldrexh", "ldrt",
         "ldrbt", "ldrht", "ldrsbt", "ldrsht"}
_STORE = {"str", "strb", "strh", "strex", "strexb", "strexh", "strt", "strbt", "strht"}
_PAIR = {"ldrd", "strd"}
_MULTI = {"ldm", "ldmia", "ldmdb", "ldmfd", "ldmea", "stm", "stmia", "stmdb", "stmfd",
          "stmea", "push", "pop"}
_BRANCH = {"b", "bl", "bx", "blx", "cbz", "cbnz"}
_TABLE = {"tbb", "tbh"}
_DIV = {"sdiv", "udiv"}
_FPMAC = {"vmla", "vmls", "vnmla", "vnmls", "vfma", "vfms", "vfnma", "vfnms"}
_FPDIV = {"vdiv", "vsqrt"}
_FPLOAD = {"vldr", "vstr"}
_FPMULTI = {"vldm", "vldmia", "vldmdb", "vstm", "vstmia", "vstmdb", "vpush", "vpop"}
_MUL_RE = re.compile(r"^(mul|mla|mls|umull|umlal|smull|smlal\w*|umaal|smul\w*|smla\w*|"
                     r"smlsl?d\w*|smuad\w*|smusd\w*|smmul\w*|smmla\w*|smmls\w*|"
                     r"smlad\w*|smlsd\w*)$")
CLASSES = ("alu", "mul", "div", "load", "store", "pair", "multi", "branch", "fp", "fpmac",
           "fpdiv", "fpload", "fpmulti")


def base_mnemonic(m: str) -> str:
    """The mnemonic without its width (.w/.n), data type (.f32) or
    condition suffix, nor the flag-setting s where that leaves a known one."""
    m = m.lower().split(".")[0]
    known = (_LOAD | _STORE | _PAIR | _MULTI | _BRANCH | _TABLE | _DIV | _FPMAC | _FPDIV |
             _FPLOAD | _FPMULTI)
    if m in known or _MUL_RE.match(m):
        return m
    for c in _CONDS:
        if m.endswith(c) and len(m) > len(c):
            stem = m[:-len(c)]
            if stem in known or _MUL_RE.match(stem) or stem in ("mov", "add", "sub", "cmp"):
                return stem
    return m


def classify(mnemonic: str) -> str:
    m = base_mnemonic(mnemonic)
    if m in _LOAD:
        return "load"
    if m in _STORE:
        return "store"
    if m in _PAIR:
        return "pair"
    if m in _MULTI:
        return "multi"
    if m in _BRANCH or m in _TABLE:
        return "branch"
    if m in _DIV:
        return "div"
    if m in _FPMAC:
        return "fpmac"
    if m in _FPDIV:
        return "fpdiv"
    if m in _FPLOAD:
        return "fpload"
    if m in _FPMULTI:
        return "fpmulti"
    if m.startswith("v"):
        return "fp"
    if _MUL_RE.match(m):
        return "mul"
    return "alu"


def _registers(operands: str) -> int:
    """Registers in a {r4, r5-r7, lr} list."""
    m = re.search(r"\{([^}]*)\}", operands)
    if m is None:
        return 1
    n = 0
    for part in m.group(1).split(","):
        part = part.strip()
        r = re.match(r"^[rsd](\d+)\s*-\s*[rsd](\d+)$", part)
        n += int(r.group(2)) - int(r.group(1)) + 1 if r else (1 if part else 0)
    return max(n, 1)


def _writes_pc(mnemonic: str, operands: str) -> bool:
    m = base_mnemonic(mnemonic)
    ops = operands.replace(" ", "")
    if m in _MULTI or m in _LOAD:
        return "pc" in ops.split("[")[0] or (m in _MULTI and "pc}" in ops)
    return ops.startswith("pc,") and m in ("mov", "add")


def price(mnemonic: str, operands: str, after_memory: bool) -> Tuple[str, int, int]:
    """(class, cycles when it falls through, extra cycles when taken)."""
    cls = classify(mnemonic)
    m = base_mnemonic(mnemonic)
    pc = _writes_pc(mnemonic, operands)
    if cls == "load":
        return cls, (1 if after_memory else 2) + (REFILL if pc else 0), 0
    if cls == "multi":
        return cls, 1 + _registers(operands) + (REFILL if pc else 0), 0
    if cls == "fpmulti":
        return cls, 1 + _registers(operands), 0
    if cls == "branch":
        if m in _TABLE:
            return cls, 2, REFILL
        return cls, 1, REFILL
    cost = {"alu": 1, "mul": 1, "div": 7, "store": 1, "pair": 3, "fp": 1, "fpmac": 3,
            "fpdiv": 14, "fpload": 2}[cls]
    return cls, cost + (REFILL if pc else 0), 0


_FUNC = re.compile(r"^([0-9a-f]+) <([^>]+)>:$")


def disassemble(elf: str, objdump: str = "arm-none-eabi-objdump") -> Tuple[
        Dict[int, Tuple[str, str]], List[Tuple[int, str]]]:
    """({address: (mnemonic, operands)}, [(function start, name)] sorted)."""
    text = subprocess.run([objdump, "-d", "--no-show-raw-insn", elf], check=True,
                          capture_output=True, text=True).stdout
    insns: Dict[int, Tuple[str, str]] = {}
    funcs: List[Tuple[int, str]] = []
    for line in text.splitlines():
        f = _FUNC.match(line)
        if f:
            funcs.append((int(f.group(1), 16), f.group(2)))
            continue
        m = re.match(r"^\s*([0-9a-f]+):\s+(\S+)\s*(.*)$", line)
        if m and not m.group(2).startswith("."):
            ops = m.group(3).split(";")[0].split("@")[0].strip()
            insns[int(m.group(1), 16)] = (m.group(2), ops)
    funcs.sort()
    return insns, funcs


def _function_lookup(funcs: Sequence[Tuple[int, str]]) -> Callable[[int], str]:
    """pc -> the name of the function holding it ("?" before the first)."""
    starts = [f[0] for f in funcs]

    def func_of(pc: int) -> str:
        i = bisect.bisect_right(starts, pc) - 1
        return funcs[i][1] if i >= 0 else "?"
    return func_of


def price_at(pc: int, insns: Dict[int, Tuple[str, str]],
             func_of: Callable[[int], str]) -> Tuple[str, int, int]:
    """price() of the instruction at pc, "after another load or store" read
    from the one before it in the same function; an address the
    disassembly does not name is priced as one ALU cycle."""
    ins = insns.get(pc)
    if ins is None:
        return "alu", 1, 0
    prev = insns.get(pc - 2) or insns.get(pc - 4)
    after_mem = prev is not None and classify(prev[0]) in ("load", "store") and \
        func_of(pc - 2) == func_of(pc)
    return price(ins[0], ins[1], after_mem)


def write_prices(elf: str, path: str, mark: int,
                 objdump: str = "arm-none-eabi-objdump") -> None:
    """The price of every instruction of elf, for cycles_plugin.c's
    session mode (prices=PATH): a first line "mark ADDR" (hex; the plugin
    logs its running totals each time a block starting there runs), then
    one line per instruction, "pc cycles taken_extra" (hex pc, ascending),
    as estimate() prices them."""
    insns, funcs = disassemble(elf, objdump)
    func_of = _function_lookup(funcs)
    with open(path, "w") as f:
        f.write("mark %x\n" % mark)
        for pc in sorted(insns):
            _, base, extra = price_at(pc, insns, func_of)
            f.write("%x %d %d\n" % (pc, base, extra))


def read_counts(path: str) -> Dict[int, List[Tuple[int, int, int, int]]]:
    """cycles_plugin.c's lines: per region, [(pc, size, count, taken)]
    summed per pc."""
    acc: Dict[int, Dict[int, List[int]]] = {}
    with open(path) as f:
        for line in f:
            w = line.split()
            if len(w) != 5:
                continue
            r, pc, size, count, taken = int(w[0]), int(w[1], 16), int(w[2]), int(w[3]), int(w[4])
            a = acc.setdefault(r, {}).setdefault(pc, [size, 0, 0])
            a[1] += count
            a[2] += taken
    return {r: sorted((pc, a[0], a[1], a[2]) for pc, a in d.items()) for r, d in acc.items()}


def estimate(counts: Dict[int, List[Tuple[int, int, int, int]]],
             insns: Dict[int, Tuple[str, str]], funcs: Sequence[Tuple[int, str]],
             regions: Sequence[str] = ()) -> Dict[str, Any]:
    """Instructions, estimated cycles, the per-class histogram, the
    per-function table (largest first) and, with `regions` (the names of
    regions 1, 2, ...: the generated operators), the per-operator table in
    the order they ran, each with the kernels it called."""
    func_of = _function_lookup(funcs)
    classes: Dict[str, Dict[str, int]] = {c: {"instructions": 0, "cycles": 0} for c in CLASSES}
    per_func: Dict[str, Dict[str, int]] = {}
    per_region: Dict[int, Dict[str, int]] = {}
    total_i = total_c = taken_total = unknown = 0
    for r, rows in counts.items():
        reg = per_region.setdefault(r, {"instructions": 0, "cycles": 0})
        for pc, size, count, taken in rows:
            if pc not in insns:
                unknown += count
            cls, base, extra = price_at(pc, insns, func_of)
            cyc = base * count + extra * taken
            classes[cls]["instructions"] += count
            classes[cls]["cycles"] += cyc
            f = per_func.setdefault(func_of(pc), {"instructions": 0, "cycles": 0})
            f["instructions"] += count
            f["cycles"] += cyc
            reg["instructions"] += count
            reg["cycles"] += cyc
            total_i += count
            total_c += cyc
            taken_total += taken
    table: List[Dict[str, Any]] = sorted(({"function": k, **v} for k, v in per_func.items()),
                                         key=lambda r: -per_func[r["function"]]["cycles"])
    ops = [{"operator": regions[r - 1] if 0 < r <= len(regions) else "(outside the operators)",
            **per_region[r]} for r in sorted(per_region)]
    return {"instructions": total_i, "cycles": total_c, "taken_branches": taken_total,
            "unknown_instructions": unknown, "classes": classes, "functions": table,
            "operators": ops}


def instructions_only(est: Dict[str, Any]) -> Dict[str, Any]:
    """`est` without its prices, for a core this table does not describe:
    the counts stand (they are the emulator's), the cycles are dropped and
    the tables ordered by instructions."""
    def strip(r: Dict[str, Any]) -> Dict[str, Any]:
        return {k: v for k, v in r.items() if k != "cycles"}
    return {"instructions": est["instructions"], "taken_branches": est["taken_branches"],
            "unknown_instructions": est["unknown_instructions"],
            "classes": {c: v["instructions"] for c, v in est["classes"].items()},
            "functions": sorted((strip(r) for r in est["functions"]),
                                key=lambda r: -r["instructions"]),
            "operators": [strip(r) for r in est["operators"]]}


def _format_counts(est: Dict[str, Any], top: Optional[int]) -> str:
    total = max(est["instructions"], 1)
    lines = ["instructions %d (counted, not priced), taken branches %d"
             % (est["instructions"], est["taken_branches"])]
    for title, key, rows in (("operator (with its kernels)", "operator", est["operators"]),
                             ("function", "function", est["functions"][:top])):
        if rows:
            lines += ["", "%-48s %14s %7s" % (title, "instructions", "share")]
            lines += ["%-48s %14d %6.1f%%" % (r[key][:48], r["instructions"],
                                              100.0 * r["instructions"] / total)
                      for r in rows]
    return "\n".join(lines)


def format_table(est: Dict[str, Any], top: Optional[int] = 20) -> str:
    if "cycles" not in est:
        return _format_counts(est, top)
    lines = ["instructions %d, estimated Cortex-M4 cycles %d (%.2f per instruction), "
             "taken branches %d" % (est["instructions"], est["cycles"],
                                    est["cycles"] / max(est["instructions"], 1),
                                    est["taken_branches"]), "",
             "%-10s %14s %14s" % ("class", "instructions", "cycles")]
    for c in CLASSES:
        v = est["classes"][c]
        if v["instructions"]:
            lines.append("%-10s %14d %14d" % (c, v["instructions"], v["cycles"]))
    if est.get("operators"):
        lines += ["", "%-48s %14s %14s %7s" % ("operator (with its kernels)", "instructions",
                                               "cycles", "share")]
        for r in est["operators"]:
            lines.append("%-48s %14d %14d %6.1f%%" % (
                r["operator"][:48], r["instructions"], r["cycles"],
                100.0 * r["cycles"] / max(est["cycles"], 1)))
    lines += ["", "%-48s %14s %14s %7s" % ("function", "instructions", "cycles", "share")]
    for r in est["functions"][:top]:
        lines.append("%-48s %14d %14d %6.1f%%" % (r["function"][:48], r["instructions"],
                                                   r["cycles"],
                                                   100.0 * r["cycles"] / max(est["cycles"], 1)))
    return "\n".join(lines)
