"""The `tvmnode` command line.

    tvmnode import MODEL -o OUT.tn      a model as the text format
    tvmnode info MODEL                  inputs, outputs, operators, MACs, bytes
    tvmnode run MODEL [--input X.npy]   run it through the host executor
    tvmnode compile MODEL -o OUT/       C in the Model Library Format (or OUT.tar);
                                        --shared LIB.so also builds it
    tvmnode build OUT/ -o LIB.so        an exported archive (or .tar) as a shared
                                        library that tvmnode.runtime.load_module opens
    tvmnode plan MODEL --svg PLAN.svg   the static memory plan, drawn

MODEL is a .tflite or .onnx file, or a module in the text format (.tn) or
JSON (.json).
"""
from __future__ import annotations

import argparse
import collections
import sys
import time
from typing import Any, Dict, List, Optional, Sequence

import numpy as np


def load(path: str) -> Any:
    """An IRModule from a model file or a saved module."""
    from . import frontend, ir, load_json, transform

    low = path.lower()
    if low.endswith((".tflite", ".onnx")):
        return frontend.load_model(path)
    with open(path, "r", encoding="utf-8") as f:
        text = f.read()
    mod = load_json(text) if low.endswith(".json") else ir.parse(text)
    return transform.InferType()(mod)


def summary(mod: Any) -> Dict[str, Any]:
    """What `tvmnode info` prints, as data: inputs and outputs, operator
    counts, constant (parameter) bytes, and the executor's MACs, kernel
    calls and arena bytes after FuseOps."""
    from . import frontend, ir, runtime, transform

    ops: Dict[str, int] = collections.Counter()
    consts: Dict[int, int] = {}

    def visit(e: Any) -> None:
        if isinstance(e, ir.Call) and isinstance(e.op, ir.Op):
            ops[str(e.op.name)] += 1
        elif isinstance(e, ir.Constant):
            consts[e._handle] = int(np.asarray(e.data).nbytes)

    ir.post_order_visit(mod["main"].body, visit)
    io = frontend.model_io(mod)
    ex = runtime.Executor(transform.FuseOps()(mod))
    if not io["inputs"]:
        io["inputs"] = [dict(i, shape=list(i["shape"])) for i in ex.inputs]
        io["outputs"] = [dict(o, shape=list(o["shape"])) for o in ex.outputs]
    st = ex.stats()
    return {"inputs": io["inputs"], "outputs": io["outputs"], "operators": dict(ops),
            "parameter_bytes": sum(consts.values()), "constants": len(consts),
            "macs": st.get("macs", 0), "kernel_calls": st.get("steps", 0),
            "arena_bytes": st.get("arena_bytes", 0)}


def _tensor_line(t: Dict[str, Any]) -> str:
    s = "  %-28s %-16s %s" % (t["name"], "x".join(str(d) for d in t["shape"]) or "scalar",
                               t["dtype"])
    if t.get("scale"):
        sc = t["scale"]
        s += "  scale %s zero point %s" % (
            ("%.6g" % sc[0]) if len(sc) == 1 else "[%d per channel]" % len(sc),
            t["zero_point"][0] if len(t["zero_point"]) == 1 else "[per channel]")
    return s


def cmd_info(args: argparse.Namespace) -> int:
    mod = load(args.model)
    s = summary(mod)
    print("model        %s" % args.model)
    print("inputs")
    for t in s["inputs"]:
        print(_tensor_line(t))
    print("outputs")
    for t in s["outputs"]:
        print(_tensor_line(t))
    print("operators    %d calls" % sum(s["operators"].values()))
    for name, n in sorted(s["operators"].items(), key=lambda kv: (-kv[1], kv[0])):
        print("  %-28s %d" % (name, n))
    print("MACs         %d" % s["macs"])
    print("parameters   %d bytes in %d constants" % (s["parameter_bytes"], s["constants"]))
    print("executor     %d kernel calls, %d arena bytes" % (s["kernel_calls"],
                                                           s["arena_bytes"]))
    attrs = mod.attrs
    states = list(attrs["states"]) if attrs is not None and "states" in attrs else []
    if states:
        nbytes = sum(int(np.prod([int(d) for d in st["shape"]])) *
                     np.dtype(str(st["dtype"])).itemsize for st in states)
        print("stateful     %d states kept between runs, %d bytes: %s"
              % (len(states), nbytes, ", ".join(str(st["name"]) for st in states)))
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from . import save_json

    mod = load(args.model)
    out = args.output
    data = save_json(mod) if out.lower().endswith(".json") else mod.astext(show_meta_data=True)
    if out == "-":
        sys.stdout.write(data)
    else:
        with open(out, "w", encoding="utf-8") as f:
            f.write(data)
        print("wrote %s (%d bytes)" % (out, len(data)))
    return 0


def _random_input(info: Dict[str, Any], rng: np.random.Generator) -> np.ndarray:
    shape, dtype = tuple(info["shape"]), str(info["dtype"])
    if dtype.startswith("int") or dtype.startswith("uint"):
        ii = np.iinfo(dtype)
        return rng.integers(ii.min, ii.max + 1, shape, dtype=dtype)
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    return rng.standard_normal(shape).astype(dtype)


def cmd_run(args: argparse.Namespace) -> int:
    from . import runtime, transform

    mod = load(args.model)
    ex = runtime.Executor(transform.FuseOps()(mod))
    rng = np.random.default_rng(args.seed)
    if args.input and len(args.input) != len(ex.inputs):
        print("tvmnode run: the model has %d inputs (%s), %d --input given"
              % (len(ex.inputs), ", ".join(i["name"] for i in ex.inputs), len(args.input)),
              file=sys.stderr)
        return 2
    xs: List[np.ndarray] = []
    for k, info in enumerate(ex.inputs):
        if args.input:
            x = np.load(args.input[k], allow_pickle=False)
            if tuple(x.shape) != tuple(info["shape"]) or str(x.dtype) != info["dtype"]:
                print("tvmnode run: %s holds %s %s, input '%s' is %s %s"
                      % (args.input[k], x.dtype, list(x.shape), info["name"], info["dtype"],
                         list(info["shape"])), file=sys.stderr)
                return 2
        else:
            x = _random_input(info, rng)
        xs.append(x)
    outs = ex(*xs)
    outs = list(outs) if isinstance(outs, tuple) else [outs]
    times: List[float] = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        ex(*xs)
        times.append(time.perf_counter() - t0)
    from .frontend import model_io

    described = model_io(mod)["outputs"]
    for k, (info, y) in enumerate(zip(ex.outputs, outs)):
        name = described[k]["name"] if k < len(described) else info["name"]
        print("%s %s %s" % (name, y.dtype, list(y.shape)))
        with np.printoptions(threshold=64, edgeitems=8, precision=6):
            print(y)
    if times:
        print("latency      median %.3f ms over %d runs" % (1e3 * float(np.median(times)),
                                                          len(times)))
    if args.output:
        if len(outs) == 1:
            np.save(args.output, outs[0])
        else:
            np.savez(args.output, *outs)
        print("wrote %s" % args.output)
    return 0


def _compile_options(args: argparse.Namespace) -> Dict[str, Any]:
    pools = []
    for spec in args.pool or []:
        name, _, rest = spec.partition(":")
        limit, _, kinds = rest.partition(":")
        pool: Dict[str, Any] = {"name": name, "limit": _bytes(limit) if limit else 0}
        if kinds:
            pool["accepts"] = kinds.split(",")
        pools.append(pool)
    devices: Dict[str, List[str]] = {}
    for spec in args.device or []:
        name, sep, ops = spec.partition(":")
        if not sep or not ops:
            raise ValueError("--device expects NAME:OP[,OP...], got '%s'" % spec)
        devices.setdefault(name, []).extend(o for o in ops.split(",") if o)
    return {"name": args.name, "alignment": args.alignment, "interface": args.interface,
            "io_in_pool": args.io_in_pool, "constants_in_pool": args.constants_in_pool,
            "pools": pools or None, "devices": devices or None}


def _bytes(text: str) -> int:
    t = text.strip().lower()
    mult = 1
    for suffix, m in (("kib", 1024), ("kb", 1000), ("k", 1024), ("mib", 1 << 20), ("m", 1 << 20)):
        if t.endswith(suffix):
            t, mult = t[:-len(suffix)], m
            break
    return int(t) * mult


def cmd_compile(args: argparse.Namespace) -> int:
    from . import codegen

    t0 = time.perf_counter()
    arch = codegen.compile(load(args.model), **_compile_options(args))
    arch.export(args.output)
    elapsed = time.perf_counter() - t0
    info = arch.info
    mem = info["memory"]
    for p in mem["pools"]:
        limit = " (limit %d)" % p["limit_bytes"] if p["limit_bytes"] else ""
        print("pool %-20s %8d bytes%s" % (p["name"], p["size_bytes"], limit))
    print("lower bound          %8d bytes" % mem["workspace_lower_bound_bytes"])
    print("constants            %8d bytes (%s)" % (
        mem["functions"]["main"][0]["constants_size_bytes"],
        "constant pool" if info["interface"]["constants_in_pool"] else "flash"))
    print("inputs + outputs     %8d bytes%s" % (
        sum(t["size_bytes"] for t in info["inputs"] + info["outputs"]),
        " (in the workspace pool)" if info["interface"]["io_in_pool"] else ""))
    print("operators            %8d" % len(mem["functions"]["operator_functions"]))
    print("wrote %s in %.2f s" % (args.output, elapsed))
    if args.svg:
        _write_svg(arch, args.svg)
    if args.shared:
        return _build(args.output, args.shared, None, None)
    return 0


def _build(archive: str, output: str, cc: Optional[str], cflags: Optional[str]) -> int:
    """Build `archive` (a folder, or a .tar extracted to a temporary one)
    into the shared library `output`."""
    import shlex
    import tarfile
    import tempfile

    from . import codegen

    opts: Dict[str, Any] = {"cc": cc}
    if cflags is not None:
        opts["cflags"] = shlex.split(cflags)
    t0 = time.perf_counter()
    try:
        if archive.endswith(".tar"):
            with tempfile.TemporaryDirectory(prefix="tvmnode-build-") as tmp:
                with tarfile.open(archive) as tar:
                    if hasattr(tarfile, "data_filter"):  # no paths out of tmp
                        tar.extractall(tmp, filter="data")
                    else:  # pragma: no cover (Python before 3.8.17)
                        tar.extractall(tmp)
                codegen.build_library(tmp, output, **opts)
        else:
            codegen.build_library(archive, output, **opts)
    except RuntimeError as e:
        print("tvmnode build: %s" % e, file=sys.stderr)
        return 1
    print("wrote %s in %.2f s" % (output, time.perf_counter() - t0))
    return 0


def cmd_build(args: argparse.Namespace) -> int:
    return _build(args.archive, args.output, args.cc, args.cflags)


def _write_svg(arch: Any, path: str) -> None:
    from ._plan_svg import render_svg

    with open(path, "w", encoding="utf-8") as f:
        f.write(render_svg(arch.plan))
    print("wrote %s" % path)


def cmd_plan(args: argparse.Namespace) -> int:
    from . import codegen

    arch = codegen.compile(load(args.model), **_compile_options(args))
    plan = arch.plan
    names = plan["step_names"]
    print("%-16s %-12s %8s %8s  %s" % ("buffer", "kind", "offset", "size", "steps"))
    for b in sorted(plan["buffers"], key=lambda b: (b["pool"], b["offset"])):
        span = "%d-%d" % (b["first"], b["last"])
        first = names[b["first"]] if b["first"] < len(names) else "end"
        print("%-16s %-12s %8d %8d  %s (%s)" % (b["name"], b["kind"], b["offset"], b["size"],
                                              span, first))
    for p in plan["pools"]:
        print("pool %s: %d bytes%s" % (p["name"], p["size"],
                                      ", limit %d" % p["limit"] if p["limit"] else ""))
    print("lower bound: %d bytes" % plan["lower_bound"])
    if args.svg:
        _write_svg(arch, args.svg)
    return 0


def _add_compile_args(c: argparse.ArgumentParser) -> None:
    c.add_argument("model")
    c.add_argument("--name", default="default", help="model name, a C identifier")
    c.add_argument("--alignment", type=int, default=16, help="bytes (a power of two)")
    c.add_argument("--interface", default="c", help="c or c,rust")
    c.add_argument("--io-in-pool", action="store_true",
                   help="place inputs and outputs in the workspace pool")
    c.add_argument("--constants-in-pool", action="store_true",
                   help="constants in a pool the application supplies")
    c.add_argument("--pool", action="append", metavar="NAME[:LIMIT[:KINDS]]",
                   help="a workspace pool (in order of preference), e.g. sram:64k, or "
                        "sram:8k:intermediate,scratch (the kinds of buffer it takes: "
                        "intermediate, input, output, scratch)")
    c.add_argument("--device", action="append", metavar="NAME:OP[,OP...]",
                   help="hand these operators to an external device")
    c.add_argument("--svg", metavar="PLAN.svg", help="draw the memory plan")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tvmnode", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    i = sub.add_parser("import", help="import a model and write its IR (text, or .json)")
    i.add_argument("model")
    i.add_argument("-o", "--output", required=True, help="OUT.tn, OUT.json or - for stdout")
    i.set_defaults(fn=cmd_import)
    n = sub.add_parser("info", help="inputs, outputs, operators, MACs, parameter bytes")
    n.add_argument("model")
    n.set_defaults(fn=cmd_info)
    r = sub.add_parser("run", help="run through the host executor")
    r.add_argument("model")
    r.add_argument("--input", action="append", metavar="FILE.npy",
                   help="one per model input, in order (default: random, --seed)")
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--repeat", type=int, default=0, help="time this many more runs")
    r.add_argument("--output", metavar="FILE.npy", help="save the output(s)")
    r.set_defaults(fn=cmd_run)
    c = sub.add_parser("compile", help="compile to C in the Model Library Format")
    _add_compile_args(c)
    c.add_argument("-o", "--output", required=True, help="OUT/ (a folder) or OUT.tar")
    c.add_argument("--shared", metavar="LIB.so",
                   help="also build the archive into a shared library (see build)")
    c.set_defaults(fn=cmd_compile)
    b = sub.add_parser("build", help="build an exported archive into a shared library "
                                     "that tvmnode.runtime.load_module opens")
    b.add_argument("archive", help="OUT/ or OUT.tar, as compile wrote it")
    b.add_argument("-o", "--output", required=True, metavar="LIB.so")
    b.add_argument("--cc", help="the C compiler (default: $CC or cc)")
    b.add_argument("--cflags", help="compiler flags, one string (default: -O2)")
    b.set_defaults(fn=cmd_build)
    pl = sub.add_parser("plan", help="print (and draw) the static memory plan")
    _add_compile_args(pl)
    pl.set_defaults(fn=cmd_plan)
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parser().parse_args(argv)
    from .frontend import ModelImportError

    try:
        return int(args.fn(args))
    except (ModelImportError, OSError, ValueError) as e:
        print("tvmnode %s: %s" % (args.command, e), file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
