#!/usr/bin/env python3
"""fuzz_models.py: hostile model files through the whole path a user's file
takes: import, the standard pipeline, the C code generator and the host
executor. Structure-aware mutations of seed models:

  .tflite  the fields a reader trusts, found through the flatbuffer's own
           tables: tensor shapes, types and buffer indexes, zero points and
           scales, quantized dimensions, operator opcode and tensor indexes
           (graph cycles, dangling and repeated tensors), builtin options,
           subgraph inputs and outputs; set to the edge values of their
           width (0, -1, 2^31 - 1, 2^31, 2^32 + 89, 2^62, inf, nan, ...),
           plus a few stray bytes;
  .onnx    integer and float attributes at the same edges, initializer
           dimensions, zero points and scales, graph input dimensions,
           node inputs renamed to a later node's output (a cycle) or to
           nothing.

Each mutant is imported, compiled (codegen.compile: the passes, lowering,
the memory plan and the C) and, when its working memory is modest, run by
the executor on random inputs. The outcome is one of: refused (an error of
the library's documented kinds, which name what is wrong), ran, or a
finding: another exception (a bug in an importer or a pass), or the process
dying (a crash, or a sanitizer's report when the library is built with
ASan: ./dev fuzz runs this under build-asan). Cases run in a child process
that is restarted after a death; the case that killed it is kept as
OUT/<seed>-crash-<n>.<ext> with the child's last output.

    python3 fuzz/fuzz_models.py [--seconds S] [--seed N] [--out DIR] SEED_MODEL...

Prints one line per seed and a summary
    fuzz models: N executions, R refused, K ran, F findings
and exits 1 when there was a finding.
"""
from __future__ import annotations

import argparse
import math
import os
import random
import struct
import subprocess
import sys
import tempfile
import time
from typing import Any, List, Optional, Sequence, Tuple, Type

EDGE_I32 = [0, 1, -1, 2, 7, 127, 128, -128, -129, 255, 256, 65535, 2**31 - 1, -2**31,
            2**30, -2**30 - 1]
EDGE_I64 = [0, -1, 1, 127, -129, 255, 2**31, -2**31, 2**32 + 89, 2**62, -2**63, 2**63 - 1]
EDGE_F32 = [0.0, -0.0, -1.0, 1e-45, 1e38, float("inf"), float("-inf"), float("nan"), 0.5]
MAX_ARENA = 256 << 20  # run the executor only below this much working memory

# ---- TFLite: the byte slots a reader trusts ----------------------------------------

Slot = Tuple[int, str]  # (absolute offset, struct format)


def _field(tab: Any, vt: int) -> int:
    """Absolute position of a table's scalar field (vtable offset vt), or 0."""
    o = tab.Offset(vt)
    return tab.Pos + o if o else 0


def _vector(tab: Any, vt: int, width: int, fmt: str) -> List[Slot]:
    o = tab.Offset(vt)
    if not o:
        return []
    n, start = tab.VectorLen(o), tab.Vector(o)
    return [(start + k * width, fmt) for k in range(min(n, 64))]


def tflite_slots(buf: bytes) -> List[Slot]:
    import tflite  # noqa: F401  (the generated schema readers)
    from tflite.Model import Model

    m = Model.GetRootAsModel(buf, 0)
    slots: List[Slot] = []
    for o in range(m.OperatorCodesLength()):
        c = m.OperatorCodes(o)
        for vt, fmt in ((4, "<b"), (10, "<i")):  # deprecated_builtin_code, builtin_code
            p = _field(c._tab, vt)
            if p:
                slots.append((p, fmt))
    for gi in range(m.SubgraphsLength()):
        g = m.Subgraphs(gi)
        slots += _vector(g._tab, 6, 4, "<i") + _vector(g._tab, 8, 4, "<i")
        for ti in range(min(g.TensorsLength(), 512)):
            t = g.Tensors(ti)
            slots += _vector(t._tab, 4, 4, "<i")  # shape
            for vt, fmt in ((6, "<b"), (8, "<I")):  # type, buffer
                p = _field(t._tab, vt)
                if p:
                    slots.append((p, fmt))
            q = t.Quantization()
            if q is not None:
                slots += _vector(q._tab, 8, 4, "<f") + _vector(q._tab, 10, 8, "<q")
                p = _field(q._tab, 16)
                if p:
                    slots.append((p, "<i"))
        for oi in range(min(g.OperatorsLength(), 512)):
            op = g.Operators(oi)
            p = _field(op._tab, 4)
            if p:
                slots.append((p, "<I"))
            slots += _vector(op._tab, 6, 4, "<i") + _vector(op._tab, 8, 4, "<i")
            opts = op.BuiltinOptions()
            if opts is not None:  # every field of the options table, as 4 or 1 bytes
                vt_pos = opts.Pos - struct.unpack_from("<i", buf, opts.Pos)[0]
                vt_len = struct.unpack_from("<H", buf, vt_pos)[0]
                for f in range(4, vt_len, 2):
                    off = struct.unpack_from("<H", buf, vt_pos + f)[0]
                    if off:
                        slots.append((opts.Pos + off, "<i" if off % 4 == 0 else "<b"))
    return [s for s in slots if 0 <= s[0] <= len(buf) - struct.calcsize(s[1])]


def _edge(fmt: str, rng: random.Random) -> Any:
    if fmt == "<f":
        return rng.choice(EDGE_F32)
    if fmt == "<q":
        return rng.choice(EDGE_I64)
    if fmt == "<b":
        return rng.randrange(-128, 128)
    v = rng.choice(EDGE_I32 + [rng.randrange(-4, 64)])
    return v & 0xFFFFFFFF if fmt == "<I" else v


def mutate_tflite(buf: bytes, slots: List[Slot], rng: random.Random) -> bytes:
    b = bytearray(buf)
    for _ in range(rng.choice((1, 1, 2, 3))):
        pos, fmt = rng.choice(slots)
        struct.pack_into(fmt, b, pos, _edge(fmt, rng))
    if rng.random() < 0.1:  # a stray byte anywhere
        b[rng.randrange(len(b))] = rng.randrange(256)
    return bytes(b)


# ---- ONNX: through its object model -----------------------------------------------

def mutate_onnx(data: bytes, rng: random.Random) -> bytes:
    import onnx

    m = onnx.ModelProto()
    m.ParseFromString(data)
    g = m.graph
    for _ in range(rng.choice((1, 1, 2))):
        kind = rng.randrange(5)
        if kind == 0 and g.node:  # an attribute at an edge
            n = rng.choice(g.node)
            if n.attribute:
                a = rng.choice(n.attribute)
                if a.type == onnx.AttributeProto.INT:
                    a.i = rng.choice(EDGE_I64)
                elif a.type == onnx.AttributeProto.INTS and len(a.ints):
                    a.ints[rng.randrange(len(a.ints))] = rng.choice(EDGE_I64)
                elif a.type == onnx.AttributeProto.FLOAT:
                    a.f = rng.choice(EDGE_F32)
        elif kind == 1 and g.initializer:  # an initializer's dims or values
            t = rng.choice(g.initializer)
            if t.dims and rng.random() < 0.5:
                t.dims[rng.randrange(len(t.dims))] = rng.choice(EDGE_I64 + [0, 1, 2, 3])
            elif t.raw_data:
                raw = bytearray(t.raw_data)
                raw[rng.randrange(len(raw))] = rng.randrange(256)
                t.raw_data = bytes(raw)
        elif kind == 2 and g.input:  # a graph input's dimension
            i = rng.choice(g.input)
            dims = i.type.tensor_type.shape.dim
            if len(dims):
                dims[rng.randrange(len(dims))].dim_value = rng.choice([0, 1, 2**31, 2**40, 3])
        elif kind == 3 and len(g.node) > 1:  # an input renamed: a cycle
            k = rng.randrange(len(g.node) - 1)
            later = g.node[rng.randrange(k + 1, len(g.node))]
            if g.node[k].input and later.output:
                g.node[k].input[rng.randrange(len(g.node[k].input))] = later.output[0]
        elif kind == 4 and g.node:  # an input that nothing defines
            n = rng.choice(g.node)
            if n.input:
                n.input[rng.randrange(len(n.input))] = "nowhere_%d" % rng.randrange(9)
    return m.SerializeToString()


# ---- one case, in the child --------------------------------------------------------

def run_case(path: str, rng: Any) -> str:
    """'refused: ...', 'ran', or 'finding: ...' for one model file."""
    import numpy as np

    import tvmnode as tn
    from tvmnode import codegen, frontend

    clean: Tuple[Type[BaseException], ...] = (frontend.ModelImportError, ValueError, TypeError,
                               NotImplementedError, ArithmeticError, LookupError, MemoryError)
    try:
        mod = frontend.load_model(path)
        codegen.compile(mod, "fz")
        ex = tn.runtime.Executor(mod)
        if ex.stats().get("arena_bytes", 0) > MAX_ARENA:
            return "ran (not executed: large)"
        xs = []
        for info in ex.inputs:
            shape, dt = info["shape"], np.dtype(info["dtype"])
            if int(np.prod(shape)) > (MAX_ARENA // max(dt.itemsize, 1)):
                return "ran (not executed: large input)"
            xs.append((rng.standard_normal(shape) * 50).astype(dt) if dt.kind == "f"
                      else rng.integers(-100, 100, shape).astype(dt))
        ex(*xs)
        return "ran"
    except clean as e:
        return "refused: %s: %s" % (type(e).__name__, str(e).splitlines()[0][:200] if str(e)
                                    else "")
    except Exception as e:  # noqa: BLE001 (anything else is what we look for)
        return "finding: %s: %s" % (type(e).__name__, str(e)[:300])


def child(argv: Sequence[str]) -> int:
    """Read case paths from stdin; answer each with one line."""
    import numpy as np

    for line in sys.stdin:
        path = line.strip()
        if not path:
            continue
        out = run_case(path, np.random.default_rng(len(path)))
        sys.stdout.write(out.replace("\n", " ") + "\n")
        sys.stdout.flush()
    return 0


# ---- the driver --------------------------------------------------------------------

class Child:
    def __init__(self) -> None:
        self.p = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--child"],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, bufsize=1)

    def ask(self, path: str, timeout: float) -> Optional[str]:
        assert self.p.stdin and self.p.stdout
        try:
            self.p.stdin.write(path + "\n")
            self.p.stdin.flush()
        except BrokenPipeError:
            return None
        import selectors
        sel = selectors.DefaultSelector()
        sel.register(self.p.stdout, selectors.EVENT_READ)
        if not sel.select(timeout):
            return "timeout"
        line = self.p.stdout.readline()
        return line.strip() if line else None

    def stderr_tail(self) -> str:
        self.p.kill()
        try:
            _, err = self.p.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            return ""
        err = err or ""
        at = err.find("==ERROR")  # a sanitizer's report: from its first line
        return err[at:at + 6000] if at >= 0 else err[-4000:]

    def close(self) -> None:
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("seeds", nargs="*", help=".tflite and .onnx seed models")
    ap.add_argument("--seconds", type=float, default=60.0, help="total, shared by the seeds")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default="build-fuzz", help="where findings are kept")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds one case may take")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        return child(argv or [])
    seeds = [s for s in args.seeds if s.endswith((".tflite", ".onnx")) and os.path.exists(s)]
    if not seeds:
        print("fuzz models: no seed models given", file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="fuzz_models_")
    totals = {"execs": 0, "refused": 0, "ran": 0, "findings": 0, "timeouts": 0}
    per_seed = args.seconds / len(seeds)
    ch = Child()
    try:
        for seed_path in seeds:
            rng = random.Random("%s:%d" % (os.path.basename(seed_path), args.seed))
            with open(seed_path, "rb") as f:
                data = f.read()
            ext = os.path.splitext(seed_path)[1]
            slots = tflite_slots(data) if ext == ".tflite" else []
            name = os.path.splitext(os.path.basename(seed_path))[0]
            if name == "model":  # ONNX node tests: test_<op>/model.onnx
                name = os.path.basename(os.path.dirname(os.path.abspath(seed_path)))
            stop = time.monotonic() + per_seed
            n = found = 0
            while time.monotonic() < stop:
                mutant = (mutate_tflite(data, slots, rng) if ext == ".tflite"
                          else mutate_onnx(data, rng))
                case = os.path.join(work, "case%s" % ext)
                with open(case, "wb") as f:
                    f.write(mutant)
                n += 1
                answer = ch.ask(case, args.timeout)
                if answer is None or answer == "timeout" or answer.startswith("finding"):
                    kind = ("timeout" if answer == "timeout" else
                            "crash" if answer is None else "finding")
                    keep = os.path.join(args.out, "%s-%s-%d%s" % (name, kind, n, ext))
                    with open(keep, "wb") as f:
                        f.write(mutant)
                    detail = answer if kind == "finding" else ch.stderr_tail()
                    if kind != "finding":  # the child is dead or stuck: a new one
                        ch.close()
                        ch = Child()
                    with open(keep + ".txt", "w") as f:
                        f.write(detail or "")
                    print("fuzz models: %s %s: %s" % (kind, keep, (detail or "")[-600:]),
                          file=sys.stderr)
                    if kind == "timeout":
                        totals["timeouts"] += 1
                    else:
                        totals["findings"] += 1
                        found += 1
                elif answer.startswith("refused"):
                    totals["refused"] += 1
                else:
                    totals["ran"] += 1
            totals["execs"] += n
            print("fuzz models %s: %d executions, %d findings" % (name, n, found), file=sys.stderr)
    finally:
        ch.close()
    print("fuzz models: %d executions, %d refused, %d ran, %d findings, %d timeouts"
          % (totals["execs"], totals["refused"], totals["ran"], totals["findings"],
             totals["timeouts"]))
    return 1 if totals["findings"] else 0


if __name__ == "__main__":
    sys.exit(main())
