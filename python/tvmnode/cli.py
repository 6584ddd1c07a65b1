"""The `tvmnode` command line.

    tvmnode import MODEL -o OUT.tn      a model as the text format
    tvmnode info MODEL                  inputs, outputs, operators, MACs, bytes
    tvmnode run MODEL [--input X.npy]   run it through the host executor

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
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parser().parse_args(argv)
    from .frontend import ModelImportError

    try:
        return int(args.fn(args))
    except (ModelImportError, OSError) as e:
        print("tvmnode %s: %s" % (args.command, e), file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
