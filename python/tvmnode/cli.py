"""The `tvmnode` command line.

    tvmnode import MODEL -o OUT.tn      a model as the text format
    tvmnode info MODEL                  inputs, outputs, operators, MACs, bytes
    tvmnode run MODEL [--input X.npy]   run it through the host executor (a compiled
                                        LIB.so: as a runtime Module)
    tvmnode compile MODEL -o OUT/       C in the Model Library Format (or OUT.tar);
                                        --shared LIB.so also builds it
    tvmnode build OUT/ -o LIB.so        an exported archive (or .tar) as a shared
                                        library that tvmnode.runtime.load_module opens
    tvmnode plan MODEL --svg PLAN.svg   the static memory plan, drawn
    tvmnode check MODEL_OR_DIR...       the conformance table of .tflite and .onnx models:
                                        imports, runs, matches TFLite Micro or
                                        onnxruntime, compiles, RAM

MODEL is a .tflite or .onnx file, or a module in the text format (.tn) or
JSON (.json). --shape NAME=DIMS (repeatable; DIMS as 1,3,224,224 or
1x3x224x224) fixes an ONNX model's dynamic input shape; a dynamic leading
(batch) dimension alone is otherwise set to 1, with a note. --value
NAME=V[,V...] makes an ONNX model's input a constant (a sample rate, a
mode flag), so that an If it decides keeps only the branch taken.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import sys
import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np


def _parse_specs(flag: str, specs: Optional[Sequence[str]], usage: str,
                 read: Callable[[str, str], Any]) -> Optional[Dict[str, Any]]:
    """NAME=TEXT arguments of `flag` ({name: read(spec, TEXT)}; None for
    none). The name is what precedes the last '='."""
    if not specs:
        return None
    out: Dict[str, Any] = {}
    for spec in specs:
        name, sep, text = spec.rpartition("=")
        if not sep or not name:
            raise ValueError("%s expects %s, got '%s'" % (flag, usage, spec))
        if name in out:
            raise ValueError("%s gives input '%s' twice" % (flag, name))
        out[name] = read(spec, text)
    return out


def _read_dims(spec: str, dims: str) -> List[int]:
    parts = [p.strip() for p in dims.replace("x", ",").replace("X", ",").split(",")]
    try:
        return [int(p) for p in parts] if parts != [""] else []
    except ValueError:
        raise ValueError("--shape %s: the dimensions must be integers separated by ',' or "
                         "'x', got '%s'" % (spec, dims)) from None


def parse_shapes(specs: Optional[Sequence[str]]) -> Optional[Dict[str, List[int]]]:
    """--shape NAME=DIMS arguments ({name: dims}; None for none). DIMS are
    integers separated by commas or x ("1,3,224,224", "1x3x224x224"); an
    empty DIMS is a scalar."""
    return _parse_specs("--shape", specs, "NAME=DIMS (e.g. input=1,3,224,224)", _read_dims)


def _read_numbers(spec: str, text: str) -> np.ndarray:
    parts = [p.strip() for p in text.split(",")]
    if parts == [""]:
        raise ValueError("--value expects NAME=V[,V...] (e.g. sr=16000), got '%s'" % spec)
    for kind in (int, float):
        try:
            nums = [kind(p) for p in parts]
            return np.array(nums if len(nums) > 1 else nums[0])
        except ValueError:
            pass
    raise ValueError("--value %s: the values must be numbers separated by ',', got '%s'"
                     % (spec, text))


def parse_values(specs: Optional[Sequence[str]]) -> Optional[Dict[str, np.ndarray]]:
    """--value NAME=V[,V...] arguments ({name: array}; None for none): the
    numbers an input is fixed to (integers, or floats where one has a '.'
    or an exponent)."""
    return _parse_specs("--value", specs, "NAME=V[,V...] (e.g. sr=16000)", _read_numbers)


def _values(args: argparse.Namespace) -> Optional[Dict[str, np.ndarray]]:
    """The --value arguments of a command on one ONNX model."""
    values = parse_values(getattr(args, "value", None))
    if values and not args.model.lower().endswith(".onnx"):
        raise ValueError("--value applies to ONNX models only; '%s' is not one" % args.model)
    return values


def _shapes(args: argparse.Namespace) -> Optional[Dict[str, List[int]]]:
    """The --shape arguments of a command on one model, refused for a model
    whose shapes are fixed (TFLite, a saved module)."""
    shape = parse_shapes(args.shape)
    if shape and not args.model.lower().endswith(".onnx"):
        raise ValueError("--shape applies to ONNX models only; '%s' is %s, whose input shapes "
                         "are fixed" % (args.model, "a TFLite model"
                                        if args.model.lower().endswith(".tflite")
                                        else "a saved module"))
    return shape


def _import_noting(path: str, shape: Optional[Dict[str, List[int]]],
                   values: Optional[Dict[str, np.ndarray]] = None) -> Tuple[Any, List[str]]:
    """frontend.load_model(path, shape, values) and the notes
    (DynamicShapeWarning) the importer gave."""
    import warnings

    from . import frontend

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", frontend.DynamicShapeWarning)
        mod = frontend.load_model(path, shape, values)
    notes = [str(w.message) for w in caught if issubclass(w.category,
                                                           frontend.DynamicShapeWarning)]
    for w in caught:
        if not issubclass(w.category, frontend.DynamicShapeWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return mod, notes


def load(path: str, shape: Optional[Dict[str, List[int]]] = None,
         values: Optional[Dict[str, np.ndarray]] = None) -> Any:
    """An IRModule from a model file or a saved module; `shape` ({input
    name: dims}, --shape) fixes an ONNX model's dynamic input shapes, and
    `values` (--value) makes inputs constants. The importer's notes (a
    dynamic batch dimension set to 1) go to stderr."""
    from . import ir, load_json, transform

    low = path.lower()
    if low.endswith((".tflite", ".onnx")):
        mod, notes = _import_noting(path, shape, values)
        for n in notes:
            print("note: %s" % n, file=sys.stderr)
        return mod
    with open(path, "rb") as f:
        raw = f.read()
    if raw[4:8] == b"TFL3":  # a TFLite flatbuffer by another name
        raise ValueError("'%s' holds a TFLite model (its file identifier is TFL3); name it "
                         "*.tflite" % path)
    if shape:
        raise ValueError("--shape applies to ONNX models only; '%s' is a saved module, whose "
                         "shapes are fixed" % path)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError("'%s' is not a model this command reads: a .tflite or .onnx model, a "
                         "saved module (.json) or IR text (any other name, UTF-8; byte %d is "
                         "not)" % (path, e.start)) from None
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


# TFLite operators that keep state between runs: resource variables, and
# the operators whose state lives in variable tensors
RESOURCE_VARIABLE_OPS = ("VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE", "CALL_ONCE")
STATEFUL_OPS = RESOURCE_VARIABLE_OPS + ("UNIDIRECTIONAL_SEQUENCE_LSTM", "SVDF")


def tflite_operators(path: str) -> Dict[str, int]:
    """How often each operator type occurs in a .tflite file, over all of
    its subgraphs (the importer reads the first; a model with resource
    variables keeps its initializer in another, which CALL_ONCE runs)."""
    from .frontend import ModelImportError

    try:
        import tflite
    except ModuleNotFoundError as e:  # pragma: no cover - install hint
        raise ModuleNotFoundError("reading a .tflite file needs the 'tflite' package "
                                  "(pip install tflite)") from e
    with open(path, "rb") as f:
        buf = f.read()
    if len(buf) < 8 or buf[4:8] != b"TFL3":
        raise ModelImportError("'%s' is not a TFLite model" % path)
    names = {v: k for k, v in vars(tflite.BuiltinOperator).items() if not k.startswith("_")}
    ops: Dict[str, int] = collections.Counter()
    try:
        m = tflite.Model.GetRootAsModel(buf, 0)
        codes = []
        for i in range(m.OperatorCodesLength()):
            oc = m.OperatorCodes(i)
            code = max(int(oc.BuiltinCode()), int(oc.DeprecatedBuiltinCode()))
            name = names.get(code, "BUILTIN_%d" % code)
            if name == "CUSTOM" and oc.CustomCode():
                name = "CUSTOM(%s)" % oc.CustomCode().decode("utf-8", "replace")
            codes.append(name)
        for s in range(m.SubgraphsLength()):
            g = m.Subgraphs(s)
            for k in range(g.OperatorsLength()):
                idx = int(g.Operators(k).OpcodeIndex())
                ops[codes[idx] if 0 <= idx < len(codes) else "OPCODE_%d" % idx] += 1
    except Exception as e:  # the generated reader on a corrupt buffer
        raise ModelImportError("'%s' is corrupt or truncated (%s: %s)"
                               % (path, type(e).__name__, e)) from None
    return dict(ops)


def stateful_operators(ops: Dict[str, int]) -> List[str]:
    """The operator types among `ops` that make a model stateful."""
    return [o for o in STATEFUL_OPS if o in ops]


def _state_line(path: str) -> Optional[str]:
    if not path.lower().endswith(".tflite"):
        return None
    found = stateful_operators(tflite_operators(path))
    if not found:
        return "state        none (each run is independent of the last)"
    kinds = []
    if any(o in RESOURCE_VARIABLE_OPS for o in found):
        kinds.append("resource variables")
    if any(o not in RESOURCE_VARIABLE_OPS for o in found):
        kinds.append("state tensors")
    return "state        stateful: %s (%s kept between runs)" % (", ".join(found),
                                                               " and ".join(kinds))


def cmd_info(args: argparse.Namespace) -> int:
    shape, values = _shapes(args), _values(args)
    print("model        %s" % args.model)
    state = _state_line(args.model)
    if state:
        print(state)
    sys.stdout.flush()
    mod = load(args.model, shape, values)
    s = summary(mod)
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
    states, nbytes = _states_of(mod)
    if states:
        print("stateful     %d states kept between runs, %d bytes: %s"
              % (len(states), nbytes, ", ".join(str(st["name"]) for st in states)))
    return 0


def _states_of(mod: Any) -> Tuple[List[Any], int]:
    """A module's states (attribute "states") and their bytes, one copy."""
    attrs = mod.attrs
    states = list(attrs["states"]) if attrs is not None and "states" in attrs else []
    nbytes = sum(int(np.prod([int(d) for d in st["shape"]])) *
                 np.dtype(str(st["dtype"])).itemsize for st in states)
    return states, nbytes


def cmd_import(args: argparse.Namespace) -> int:
    from . import save_json

    mod = load(args.model, _shapes(args), _values(args))
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


def _host_executor(mod: Any) -> Any:
    """The host executor of mod, its weights packed as a host archive's
    are (PackDenseWeights): the same arithmetic as the compiled C (the
    float dense layers' packed chains round unlike [N, K]'s)."""
    from . import runtime, transform

    return runtime.Executor(transform.Sequential(
        [transform.InferType(), transform.PackDenseWeights(), transform.FuseOps()])(mod))


def _is_library(path: str) -> bool:
    """Whether path is a shared library (an ELF or Mach-O file), which
    `tvmnode run` opens as a compiled Module rather than importing."""
    try:
        with open(path, "rb") as f:
            magic = f.read(4)
    except OSError:
        return False
    return magic in (b"\x7fELF", b"\xcf\xfa\xed\xfe", b"\xce\xfa\xed\xfe")


def _runner(args: argparse.Namespace) -> Tuple[Any, List[Dict[str, Any]], List[str], Any]:
    """What `tvmnode run` runs: a compiled library (`tvmnode compile
    --shared`, `tvmnode build`) as a runtime Module, or a model through the
    host executor; either over --threads. Returns the callable, the input
    descriptions, the output names and what closes it (or None)."""
    from . import runtime

    if _is_library(args.model):
        if args.shape or args.value:
            raise ValueError("--shape and --value apply to models, not to the compiled "
                             "library '%s', whose inputs are fixed" % args.model)
        m = runtime.load_module(args.model, args.name, threads=args.threads)
        return m.run, m.inputs, [o["name"] for o in m.outputs], m
    if args.name is not None:
        raise ValueError("--name picks a model of a compiled library; '%s' is a model file"
                         % args.model)
    mod = load(args.model, _shapes(args), _values(args))
    ex = _host_executor(mod)
    if args.threads != 1:
        ex.set_threads(args.threads)
    from .frontend import model_io

    described = model_io(mod)["outputs"]
    names = [described[k]["name"] if k < len(described) else o["name"]
             for k, o in enumerate(ex.outputs)]
    return ex, ex.inputs, names, None


def cmd_run(args: argparse.Namespace) -> int:
    run, inputs, names, closing = _runner(args)
    try:
        return _run_and_print(args, run, inputs, names)
    finally:
        if closing is not None:
            closing.close()


def _run_and_print(args: argparse.Namespace, run: Any, inputs: List[Dict[str, Any]],
                   names: List[str]) -> int:
    rng = np.random.default_rng(args.seed)
    if args.input and len(args.input) != len(inputs):
        print("tvmnode run: the model has %d inputs (%s), %d --input given"
              % (len(inputs), ", ".join(i["name"] for i in inputs), len(args.input)),
              file=sys.stderr)
        return 2
    xs: List[np.ndarray] = []
    for k, info in enumerate(inputs):
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
    outs = run(*xs)
    outs = list(outs) if isinstance(outs, (tuple, list)) else [outs]
    times: List[float] = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        run(*xs)
        times.append(time.perf_counter() - t0)
    for name, y in zip(names, outs):
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
            "pools": pools or None, "devices": devices or None, "target": args.target,
            "constants_section": getattr(args, "constants_section", None),
            "workspace_section": getattr(args, "workspace_section", None),
            "constants_align": getattr(args, "constants_align", None),
            "patch_stages": getattr(args, "patch_stages", None),
            "shrink_scratch": not getattr(args, "fastest_scratch", False)}


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
    arch = codegen.compile(load(args.model, _shapes(args), _values(args)), **_compile_options(args))
    arch.export(args.output)
    elapsed = time.perf_counter() - t0
    info = arch.info
    mem = info["memory"]
    for p in mem["pools"]:
        limit = " (limit %d)" % p["limit_bytes"] if p["limit_bytes"] else ""
        print("pool %-20s %8d bytes%s" % (p["name"], p["size_bytes"], limit))
    iface = info["interface"]
    if iface.get("workspace_section"):
        print("workspace section    %s" % iface["workspace_section"])
    print("lower bound          %8d bytes" % mem["workspace_lower_bound_bytes"])
    where = "constant pool" if iface["constants_in_pool"] else "flash"
    if iface.get("constants_section"):
        where += ", section %s" % iface["constants_section"]
    if iface.get("constants_align", iface["alignment"]) != iface["alignment"]:
        where += ", aligned to %d" % iface["constants_align"]
    print("constants            %8d bytes (%s)" % (
        mem["functions"]["main"][0]["constants_size_bytes"], where))
    print("inputs + outputs     %8d bytes%s" % (
        sum(t["size_bytes"] for t in info["inputs"] + info["outputs"]),
        " (in the workspace pool)" if info["interface"]["io_in_pool"] else ""))
    ops = mem["functions"]["operator_functions"].values()
    print("kernel scratch       %8d bytes (the most one call takes, inside the pool; "
          "sized for %s)" % (max([o[0]["workspace_size_bytes"] for o in ops] or [0]),
                             iface.get("scratch_isa", "portable")))
    print("operators            %8d" % len(mem["functions"]["operator_functions"]))
    ps = info.get("patch_stages")
    if ps is not None:
        print("patch stages         %8d bands%s" % (ps["bands"], "" if ps["bands"] == 1 else
              " to %s #%d (plain plan %d bytes)" % (ps["end_op"], ps["end_index"],
                                                     ps["plain_bytes"])))
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


def _archive_file(archive: str, rel: str) -> bytes:
    """A file of an exported archive (a folder, or a .tar)."""
    if os.path.isdir(archive):
        with open(os.path.join(archive, rel), "rb") as f:
            return f.read()
    import tarfile
    with tarfile.open(archive) as tar:
        names = set(tar.getnames())
        for name in (rel, "./" + rel):
            member = tar.extractfile(name) if name in names else None
            if member is not None:
                return member.read()
    raise ValueError("%s has no %s" % (archive, rel))


def cmd_params(args: argparse.Namespace) -> int:
    from . import codegen

    meta = json.loads(_archive_file(args.archive, "metadata.json"))
    mods = meta.get("modules") or {}
    if len(mods) != 1:
        raise ValueError("%s: metadata.json holds %d models, expected one"
                         % (args.archive, len(mods)))
    name, info = next(iter(mods.items()))
    if args.weights:
        with open(args.weights, "rb") as f:
            data = f.read()
    else:
        data = _archive_file(args.archive, "parameters/%s.params" % name)
    blob = codegen.params_blob(info, codegen.load_params(data),
                               weights_version=args.weights_version)
    with open(args.output, "wb") as f:
        f.write(blob)
    p = info["params"]
    print("wrote %s: %d bytes for model %s (id %s), pool %s of %d bytes aligned "
          "to %d, weights version %d" % (args.output, len(blob), name, p["model_id"],
                                         p["pool"], p["size_bytes"], p["alignment"],
                                         args.weights_version))
    return 0


def _write_svg(arch: Any, path: str) -> None:
    from ._plan_svg import render_svg

    with open(path, "w", encoding="utf-8") as f:
        f.write(render_svg(arch.plan))
    print("wrote %s" % path)


def cmd_plan(args: argparse.Namespace) -> int:
    from . import codegen

    arch = codegen.compile(load(args.model, _shapes(args), _values(args)), **_compile_options(args))
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


# ---- tvmnode check: the conformance runner --------------------------------------------

CHECK_HELP = """For each .tflite or .onnx file (a folder stands for the .tflite and .onnx
files in it), in a child process of its own so that a crash is reported and
the run goes on:

  import   the model imports, or the operator types it lacks (all of them)
  run      the host executor runs it on deterministic random inputs (the
           whole range of an integer input, standard normal floats)
  match    its outputs against TFLite Micro's (the tflite-micro package), or
           LiteRT's reference kernels (BUILTIN_REF) for a model TFLite Micro
           cannot run; an ONNX model's against onnxruntime's (CPU, default
           session options, one thread): integer outputs must be equal,
           float ones within 1e-5 of the reference output's largest
           magnitude (at least 1); the largest difference is reported
  compile  compiled to C (inputs and outputs in the workspace pool), built
           into a library with the host C compiler ($CC or cc), run on the
           same inputs (a stateful model from its initial state): the
           generated C's outputs equal the executor's
  RAM      the planned workspace bytes with the inputs and outputs and a
           stateful model's state pool, over TFLite Micro's arena head
           (its tensors, inputs and outputs included) plus, for a stateful
           model, its states (which TFLite Micro keeps in the arena's
           tail), as a ratio; below 1 is less RAM than TFLite Micro
           (TFLite models only)

--shape NAME=DIMS fixes the dynamic input shape of the ONNX models that
have an input NAME ("shape" in the JSON); a dynamic leading (batch)
dimension alone is set to 1, noted in the JSON's "notes". A model whose state lives in resource variables or state tensors (LSTM,
SVDF) is marked stateful. --json FILE writes every result as data. The
exit status is 1 when any model crashed or gave a wrong result, else 0."""

_CHECK_COLUMNS = ("import", "run", "match", "compile", "c_equal")


def _check_write(path: str, res: Dict[str, Any]) -> None:
    import json

    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(res, f, indent=1, default=str)
    import os

    os.replace(tmp, path)


def _one_line(e: BaseException) -> str:
    return " ".join(str(e).split()) or type(e).__name__


def _capture_stderr(fn: Any) -> str:
    """What `fn()` writes to file descriptor 2 (C++ code's std::cerr too)."""
    import os
    import tempfile

    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            fn()
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
        tmp.seek(0)
        return tmp.read().decode("utf-8", "replace")


def _tflm_reference(path: str, xs: List[np.ndarray], nout: int) -> Dict[str, Any]:
    """TFLite Micro's outputs on xs and its arena (head, tail, total)."""
    import os
    import re

    from tflite_micro.python.tflite_micro import runtime as tflm

    arena = max(os.path.getsize(path) * 10, 32 << 20)
    made: List[Any] = []
    failed: List[BaseException] = []

    def make() -> None:
        try:
            made.append(tflm.Interpreter.from_file(path, arena_size=arena))
        except Exception as e:  # its reason went to stderr
            failed.append(e)

    said = _capture_stderr(make)
    if failed:
        why = [ln.strip() for ln in said.splitlines() if ln.strip()]
        raise RuntimeError("%s%s" % (_one_line(failed[0]), (": " + "; ".join(why[:2]))
                                     if why else ""))
    it = made[0]
    for k, x in enumerate(xs):
        it.set_input(x, k)
    it.invoke()
    outs = [np.array(it.get_output(k), copy=True) for k in range(nout)]
    text = _capture_stderr(it.print_allocations)
    got: Dict[str, Any] = {"outputs": outs}
    for key in ("total", "head", "tail"):
        m = re.search(r"Arena allocation %s (\d+) bytes" % key, text)
        if m:
            got["arena_%s_bytes" % key] = int(m.group(1))
    return got


def _litert_reference(path: str, xs: List[np.ndarray], nout: int) -> Dict[str, Any]:
    """LiteRT's reference kernels' outputs on xs."""
    from ai_edge_litert import interpreter as litert

    it = litert.Interpreter(model_path=path, num_threads=1,
                            experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF)
    it.allocate_tensors()
    for d, x in zip(it.get_input_details(), xs):
        it.set_tensor(d["index"], x)
    it.invoke()
    return {"outputs": [np.array(it.get_tensor(d["index"]), copy=True)
                        for d in it.get_output_details()[:nout]]}


def _reference_inputs(path: str) -> List[Dict[str, Any]]:
    """The model's inputs as TFLite Micro or LiteRT describe them (for a
    model that does not import)."""
    try:
        from ai_edge_litert import interpreter as litert

        it = litert.Interpreter(model_path=path, num_threads=1)
        return [{"name": d["name"], "shape": [int(v) for v in d["shape"]],
                 "dtype": np.dtype(d["dtype"]).name} for d in it.get_input_details()]
    except Exception:  # LiteRT refuses it too: no inputs to make
        return []


def _read_onnx(path: str) -> Any:
    from .frontend import ModelImportError

    import onnx

    try:
        return onnx.load(path, load_external_data=False)
    except Exception as e:
        raise ModelImportError("'%s' is not an ONNX model, or is corrupt (%s: %s)"
                               % (path, type(e).__name__, _one_line(e))) from None


def onnx_operators(model: Any) -> Dict[str, int]:
    """How often each operator type occurs in an ONNX model's graph (a path
    or an onnx.ModelProto; an operator of another domain as DOMAIN.TYPE)."""
    m = _read_onnx(model) if isinstance(model, str) else model
    ops: Dict[str, int] = collections.Counter()
    for node in m.graph.node:
        dom = node.domain if node.domain not in ("", "ai.onnx") else ""
        ops[(dom + "." if dom else "") + node.op_type] += 1
    return dict(ops)


def _onnx_input_names(m: Any) -> List[str]:
    inits = {t.name for t in m.graph.initializer}
    return [vi.name for vi in m.graph.input if vi.name not in inits]


def _ort_session(path: str) -> Any:
    """An onnxruntime session on the CPU, default options, one thread."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def _ort_reference(path: str, xs: List[np.ndarray], nout: int) -> Dict[str, Any]:
    """onnxruntime's outputs on xs (given in the order of the model's inputs)."""
    sess = _ort_session(path)
    feeds = {i.name: x for i, x in zip(sess.get_inputs(), xs)}
    outs = sess.run(None, feeds)
    return {"outputs": [np.array(o, copy=True) for o in outs[:nout]]}


_ORT_TYPES = {"tensor(float)": "float32", "tensor(double)": "float64", "tensor(int8)": "int8",
              "tensor(uint8)": "uint8", "tensor(int16)": "int16", "tensor(int32)": "int32",
              "tensor(int64)": "int64", "tensor(bool)": "bool"}


def _ort_inputs(path: str, shape: Optional[Dict[str, List[int]]]) -> List[Dict[str, Any]]:
    """The inputs of an ONNX model that does not import, as onnxruntime
    describes them, with `shape`'s overrides and a dynamic batch set to 1;
    empty when one stays dynamic or onnxruntime refuses the model."""
    try:
        sess = _ort_session(path)
    except Exception:
        return []
    out = []
    for i in sess.get_inputs():
        dims = [d if isinstance(d, int) and d > 0 else None for d in i.shape]
        if shape and i.name in shape:
            dims = list(shape[i.name])
        elif len(dims) >= 2 and dims[0] is None:
            dims[0] = 1
        if any(d is None for d in dims) or i.type not in _ORT_TYPES:
            return []
        out.append({"name": i.name, "shape": dims, "dtype": _ORT_TYPES[i.type]})
    return out


def _max_diff(got: List[np.ndarray], want: List[np.ndarray]) -> Tuple[float, bool, str]:
    """(largest absolute difference, within tolerance, why not)."""
    worst, ok, why = 0.0, True, ""
    if len(got) != len(want):
        return float("inf"), False, "%d outputs, the reference has %d" % (len(got), len(want))
    for k, (g, w) in enumerate(zip(got, want)):
        if g.size != w.size:
            return float("inf"), False, "output %d has %d elements, the reference %d" % (
                k, g.size, w.size)
        g64 = g.reshape(-1).astype(np.float64)
        w64 = w.reshape(-1).astype(np.float64)
        d = float(np.max(np.abs(g64 - w64))) if g.size else 0.0
        if np.isnan(g64).any() != np.isnan(w64).any():
            d = float("inf")
        worst = max(worst, d)
        if np.dtype(g.dtype).kind in "iub":
            if d != 0:
                ok, why = False, "output %d differs by %g (integers must be equal)" % (k, d)
        else:
            tol = 1e-5 * max(1.0, float(np.max(np.abs(w64))) if w.size else 1.0)
            if not d <= tol:
                ok, why = False, "output %d differs by %g (tolerance %g)" % (k, d, tol)
    return worst, ok, why


def check_model(path: str, result_path: str, seed: int = 0,
                shape: Optional[Dict[str, List[int]]] = None) -> Dict[str, Any]:
    """One model through every stage of `tvmnode check`, writing the result
    to `result_path` (JSON) before each stage, so that the caller can tell
    where a crash happened. `shape` fixes an ONNX model's dynamic inputs
    (--shape)."""
    import os
    import tempfile

    from . import codegen, frontend, runtime, transform

    res: Dict[str, Any] = {"model": path, "name": os.path.basename(path),
                           "bytes": os.path.getsize(path), "stage": "read"}
    for col in _CHECK_COLUMNS:
        res[col] = None
    _check_write(result_path, res)
    is_onnx = path.lower().endswith(".onnx")
    try:
        if is_onnx:
            proto = _read_onnx(path)
            ops = onnx_operators(proto)
            # the --shape entries that name this model's inputs
            names = set(_onnx_input_names(proto))
            shape = {k: v for k, v in (shape or {}).items() if k in names} or None
            if shape:
                res["shape"] = shape
            del proto
        else:
            ops = tflite_operators(path)
    except (frontend.ModelImportError, OSError) as e:
        res.update(stage="done", error=_one_line(e), **{"import": False})
        _check_write(result_path, res)
        return res
    res["operators"] = ops
    res["stateful"] = stateful_operators(ops)

    res["stage"] = "import"
    _check_write(result_path, res)
    mod = None
    try:
        mod, notes = _import_noting(path, shape)
        if notes:
            res["notes"] = notes
        res["import"] = True
        states, nbytes = _states_of(mod)
        if states:
            res["states_bytes"] = nbytes
    except frontend.ModelImportError as e:
        res["import"] = False
        res["error"] = _one_line(e)
        if getattr(e, "missing", None):
            res["missing"] = list(getattr(e, "missing"))

    rng = np.random.default_rng(seed)
    ours: Optional[List[np.ndarray]] = None
    xs: List[np.ndarray] = []
    if mod is not None:
        res["stage"] = "run"
        _check_write(result_path, res)
        try:
            ex = _host_executor(mod)
            res["inputs"] = [{"name": i["name"], "shape": list(i["shape"]),
                              "dtype": i["dtype"]} for i in ex.inputs]
            xs = [_random_input(i, rng) for i in ex.inputs]
            got = ex(*xs)
            ours = [np.array(o, copy=True) for o in (got if isinstance(got, tuple) else (got,))]
            res["outputs"] = [{"shape": list(o.shape), "dtype": str(o.dtype)} for o in ours]
            res["run"] = True
            del ex, got
        except Exception as e:
            res["run"] = False
            res["error"] = "run: " + _one_line(e)
    else:
        xs = [_random_input(i, rng) for i in (_ort_inputs(path, shape) if is_onnx
                                              else _reference_inputs(path))]

    if ours is not None:
        res["stage"] = "compile"
        _check_write(result_path, res)
        try:
            arch = codegen.compile(mod, name="check", io_in_pool=True)
            res["workspace_bytes"] = arch.workspace_bytes
            if arch.state_bytes:
                res["state_bytes"] = arch.state_bytes
            # what the application reserves: workspace, inputs and outputs
            # kept outside it, and the state pool
            res["ram_bytes"] = arch.workspace_bytes + arch.io_bytes + arch.state_bytes
            with tempfile.TemporaryDirectory(prefix="tvmnode-check-") as tmp:
                d = arch.export(os.path.join(tmp, "archive"))
                so = codegen.build_library(d, os.path.join(tmp, "libcheck.so"))
                res["compile"] = True
                res["stage"] = "run compiled"
                _check_write(result_path, res)
                with runtime.load_module(so) as m:
                    cs = m.run(*xs)
                d_c, _, _ = _max_diff(cs, ours)
                res["c_max_diff"] = d_c
                res["c_equal"] = bool(d_c == 0 and all(
                    c.dtype == o.dtype and c.shape == o.shape for c, o in zip(cs, ours)))
                del cs
            del arch
        except Exception as e:
            if res["compile"] is None:
                res["compile"] = False
            else:
                res["c_equal"] = False
            res["error"] = "compile: " + _one_line(e)

    res["stage"] = "reference"
    _check_write(result_path, res)
    nout = len(ours) if ours is not None else 1
    ref: Optional[Dict[str, Any]] = None
    if xs and is_onnx:
        try:
            ref = _ort_reference(path, xs, nout)
            res["reference"] = "onnxruntime"
        except Exception as e:
            res["ort_error"] = _one_line(e)
    elif xs:
        try:
            ref = _tflm_reference(path, xs, nout)
            res["reference"] = "tflite-micro"
        except Exception as e:
            res["tflm_error"] = _one_line(e)
            try:
                ref = _litert_reference(path, xs, nout)
                res["reference"] = "litert-ref"
            except Exception as e2:
                res["litert_error"] = _one_line(e2)
    if ref is not None:
        for key in ("arena_head_bytes", "arena_tail_bytes", "arena_total_bytes"):
            if key in ref:
                res["tflm_" + key] = ref[key]
        if ours is not None:
            worst, ok, why = _max_diff(ours, ref["outputs"])
            res["max_diff"] = worst
            res["match"] = ok
            if why:
                res["mismatch"] = why
    if res.get("ram_bytes") is not None and res.get("tflm_arena_head_bytes"):
        # TFLite Micro keeps variable tensors in its arena's tail: a
        # stateful model's comparison adds the states' bytes to its head
        tflm = res["tflm_arena_head_bytes"] + res.get("states_bytes", 0)
        res["ram_ratio"] = res["ram_bytes"] / float(tflm)
    res["stage"] = "done"
    _check_write(result_path, res)
    return res


def _check_child(argv: Sequence[str]) -> int:
    """The child process of `tvmnode check`: MODEL RESULT.json SEED
    [SHAPES.json]."""
    import json

    shape = json.loads(argv[3]) if len(argv) > 3 else None
    check_model(argv[0], argv[1], int(argv[2]), shape)
    return 0


def _check_files(paths: Sequence[str]) -> List[str]:
    import os

    out: List[str] = []
    for p in paths:
        if os.path.isdir(p):
            out += sorted(os.path.join(p, f) for f in os.listdir(p)
                          if f.lower().endswith((".tflite", ".onnx")))
        elif os.path.exists(p):
            out.append(p)
        else:
            raise OSError("%s: no such file or folder" % p)
    return out


def _check_isolated(path: str, seed: int, timeout: float,
                    shape: Optional[Dict[str, List[int]]] = None) -> Dict[str, Any]:
    """check_model in a child process: its result, with a crash or a time-out
    reported at the stage it happened in."""
    import json
    import os
    import signal
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory(prefix="tvmnode-check-") as tmp:
        out = os.path.join(tmp, "result.json")
        code = ("import sys; from tvmnode.cli import _check_child; "
                "sys.exit(_check_child(sys.argv[1:]))")
        t0 = time.perf_counter()
        try:
            argv = [sys.executable, "-c", code, path, out, str(seed)]
            if shape:
                argv.append(json.dumps(shape))
            proc = subprocess.run(argv,
                                  capture_output=True, text=True, timeout=timeout)
            rc: Optional[int] = proc.returncode
            tail = (proc.stderr or "").strip().splitlines()[-3:]
        except subprocess.TimeoutExpired:
            rc, tail = None, []
        elapsed = time.perf_counter() - t0
        res: Dict[str, Any] = {"model": path, "name": os.path.basename(path), "stage": "start"}
        if os.path.exists(out):
            with open(out, encoding="utf-8") as f:
                res = json.load(f)
    res["seconds"] = round(elapsed, 2)
    if res.get("stage") != "done":
        stage = res.get("stage", "start")
        if rc is None:
            what = "timed out after %g s" % timeout
        elif rc < 0:
            try:
                what = "crashed (%s)" % signal.Signals(-rc).name
            except ValueError:
                what = "crashed (signal %d)" % -rc
        else:
            what = "exited with status %d" % rc
        res["crash"] = "%s in stage '%s'%s" % (what, stage, (": " + " ".join(tail))
                                               if tail else "")
        col = {"import": "import", "run": "run", "compile": "compile",
               "run compiled": "c_equal", "reference": "match"}.get(stage)
        if col:
            res[col] = "crash"
    return res


def _mark(v: Any) -> str:
    return {True: "yes", False: "NO", None: "-", "crash": "CRASH"}.get(v, str(v))


def _reference_note(r: Dict[str, Any]) -> str:
    if r.get("reference") == "litert-ref" and r.get("tflm_error"):
        return " against LiteRT's reference kernels; TFLite Micro refuses it (%s)" % (
            r["tflm_error"][:120])
    return ""


def _short_names(msg: str) -> str:
    """An importer's message with long tensor names elided (TFLite names
    tensors by every layer that was folded into them)."""
    import re

    return re.sub(r"'([^']{40,})'", "'...'", msg)


def _check_note(r: Dict[str, Any]) -> str:
    if r.get("crash"):
        return r["crash"]
    if r.get("missing"):
        return "missing " + ", ".join("%s x%d" % (m["operator"], m["count"])
                                      for m in r["missing"])
    if r.get("mismatch"):
        return r["mismatch"] + _reference_note(r)
    if r.get("error"):
        return _short_names(r["error"])[:200]
    if r.get("run") and not r.get("reference"):
        return "no reference ran it (%s)" % ((r.get("tflm_error") or r.get("ort_error")
                                              or "")[:100])
    # the importer's notes, without their advice: "input 'x': dynamic
    # batch dimension set to 1"
    notes = [n.split(": ", 1)[-1].split(";")[0] for n in r.get("notes") or []]
    ref = _reference_note(r).strip()
    return "; ".join(([ref] if ref else []) + notes)


def check_table(results: Sequence[Dict[str, Any]]) -> str:
    """The results as the text table `tvmnode check` prints."""
    w = max([len(r["name"]) for r in results] + [5])
    head = "%-*s %-6s %-4s %-5s %-10s %-7s %-4s %-8s %9s %9s %6s  %s" % (
        w, "model", "import", "run", "match", "max diff", "compile", "C=ex", "ref",
        "RAM ours", "TFLM head", "ratio", "stateful / notes")
    lines = [head, "-" * len(head)]
    for r in results:
        diff = r.get("max_diff")
        notes = _check_note(r)
        head = r.get("tflm_arena_head_bytes", "-")
        if r.get("stateful"):
            notes = "stateful (%s)%s" % (",".join(r["stateful"]), "; " + notes if notes else "")
            if isinstance(head, int) and r.get("states_bytes"):
                notes += "; TFLM head %d + states %d" % (head, r["states_bytes"])
                head = head + r["states_bytes"]
        lines.append("%-*s %-6s %-4s %-5s %-10s %-7s %-4s %-8s %9s %9s %6s  %s" % (
            w, r["name"], _mark(r.get("import")), _mark(r.get("run")), _mark(r.get("match")),
            "-" if diff is None else "%.3g" % diff, _mark(r.get("compile")),
            _mark(r.get("c_equal")), {"tflite-micro": "tflm", "litert-ref": "litert",
                                              "onnxruntime": "ort"}.get(
                r.get("reference") or "", "-"),
            r.get("ram_bytes", r.get("workspace_bytes", "-")), head,
            "%.2f" % r["ram_ratio"] if r.get("ram_ratio") is not None else "-", notes))
    n = len(results)

    def count(col: str) -> int:
        return sum(1 for r in results if r.get(col) is True)

    ratios = [r["ram_ratio"] for r in results if r.get("ram_ratio") is not None]
    lines.append("")
    lines.append("%d models: %d import, %d run, %d match, %d compile, %d generated C equal "
                 "to the executor; %d crashed, %d wrong" % (
                     n, count("import"), count("run"), count("match"), count("compile"),
                     count("c_equal"), sum(1 for r in results if r.get("crash")),
                     sum(1 for r in results if r.get("match") is False
                         or r.get("c_equal") is False)))
    if ratios:
        lines.append("RAM ours / TFLM arena head: median %.2f, largest %.2f, over %d models"
                     % (float(np.median(ratios)), max(ratios), len(ratios)))
    return "\n".join(lines)


def cmd_check(args: argparse.Namespace) -> int:
    import json

    files = _check_files(args.models)
    if not files:
        print("tvmnode check: no .tflite or .onnx files in %s" % " ".join(args.models),
              file=sys.stderr)
        return 2
    shape = parse_shapes(args.shape)
    results = []
    for k, path in enumerate(files):
        r = _check_isolated(path, args.seed, args.timeout, shape)
        results.append(r)
        if args.verbose:
            print("[%d/%d] %s: %.1f s" % (k + 1, len(files), r["name"], r["seconds"]),
                  file=sys.stderr)
    unused = sorted(set(shape or {}) - {k for r in results for k in r.get("shape") or {}})
    if unused:
        print("tvmnode check: --shape names %s, an input of none of the ONNX models"
              % ", ".join("'%s'" % k for k in unused), file=sys.stderr)
    print(check_table(results))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"models": results}, f, indent=1, default=str)
        print("wrote %s" % args.json)
    bad = any(r.get("crash") or r.get("match") is False or r.get("c_equal") is False
              for r in results)
    return 1 if bad else 0


SHAPE_HELP = ("fix an ONNX model's input shape, e.g. input=1,3,224,224 or input=1x3x224x224 "
              "(repeatable, one per input); a dynamic batch dimension alone defaults to 1")


def _add_shape_arg(p: argparse.ArgumentParser, values: bool = True) -> None:
    p.add_argument("--shape", action="append", metavar="NAME=DIMS", help=SHAPE_HELP)
    if values:
        p.add_argument("--value", action="append", metavar="NAME=V[,V...]",
                       help="fix an ONNX model's input to a constant, e.g. sr=16000 (repeatable); "
                            "what it decides folds, such as an If on it")


def _add_compile_args(c: argparse.ArgumentParser) -> None:
    c.add_argument("model")
    _add_shape_arg(c)
    c.add_argument("--name", default="default", help="model name, a C identifier")
    c.add_argument("--alignment", type=int, default=16, help="bytes (a power of two)")
    c.add_argument("--interface", default="c", help="c or c,rust")
    c.add_argument("--io-in-pool", action="store_true",
                   help="place inputs and outputs in the workspace pool")
    c.add_argument("--constants-in-pool", action="store_true",
                   help="constants in a pool the application supplies")
    c.add_argument("--patch-stages", metavar="auto|N",
                   help="run the first, high-resolution stage in N bands of rows "
                        "(auto: the stage end and N of the smallest workspace)")
    c.add_argument("--fastest-scratch", action="store_true",
                   help="--target cortex-m: every convolution keeps its fastest scratch, "
                        "even where a smaller one would shrink the pool")
    c.add_argument("--pool", action="append", metavar="NAME[:LIMIT[:KINDS]]",
                   help="a workspace pool (in order of preference), e.g. sram:64k, or "
                        "sram:8k:intermediate,scratch (the kinds of buffer it takes: "
                        "intermediate, input, output, scratch)")
    c.add_argument("--device", action="append", metavar="NAME:OP[,OP...]",
                   help="hand these operators to an external device")
    c.add_argument("--constants-section", metavar="NAME",
                   help="put the constant arrays in this linker section (e.g. .ext_flash)")
    c.add_argument("--workspace-section", metavar="NAME",
                   help="the linker section the workspace pools belong in (the header's "
                        "TVMGEN_<NAME>_WORKSPACE_SECTION, for the application's pools)")
    c.add_argument("--constants-align", type=int, metavar="N",
                   help="the constant arrays' alignment in bytes (a power of two; "
                        "default: --alignment, and at least 64 for --target host)")
    c.add_argument("--svg", metavar="PLAN.svg", help="draw the memory plan")
    c.add_argument("--target", default="host", choices=["host", "cortex-m", "wasm32"],
                   help="where the archive runs fastest (every archive runs everywhere): "
                        "host (default), cortex-m (the cores with the DSP extension: "
                        "M4, M7, M33, M55), wasm32")


def serve_binary() -> Optional[str]:
    """The tvmnode-serve program: $TVMNODE_SERVE, on PATH, or built in the
    build tree ($TVMNODE_BUILD_DIR/go/tvmnode-serve, go/run_tests.sh)."""
    env = os.environ.get("TVMNODE_SERVE")
    if env:
        return env
    found = shutil.which("tvmnode-serve")
    if found:
        return found
    build = os.environ.get("TVMNODE_BUILD_DIR")
    if build and os.access(os.path.join(build, "go", "tvmnode-serve"), os.X_OK):
        return os.path.join(build, "go", "tvmnode-serve")
    return None


def serve(argv: Sequence[str]) -> int:
    """Runs tvmnode-serve (Go, go/serve) with argv in place of this process."""
    prog = serve_binary()
    if prog is None:
        print("tvmnode serve: tvmnode-serve not found: build it (go/run_tests.sh BUILD, or "
              "cd go/serve && go build ./cmd/tvmnode-serve), put it on PATH or set "
              "TVMNODE_SERVE", file=sys.stderr)
        return 1
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(prog, [prog] + list(argv))
    return 1  # pragma: no cover (execv does not return)


def cmd_serve(args: argparse.Namespace) -> int:
    return serve(args.serve_args)


def _add_serve_parser(sub: Any) -> None:
    s = sub.add_parser("serve", add_help=False,
                       help="serve compiled models (.so) on the Open Inference Protocol "
                            "(gRPC and HTTP): runs tvmnode-serve, see docs/remote.md")
    s.add_argument("serve_args", nargs=argparse.REMAINDER,
                   help="tvmnode-serve's arguments (tvmnode serve -h lists them)")
    s.set_defaults(fn=cmd_serve)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tvmnode", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    i = sub.add_parser("import", help="import a model and write its IR (text, or .json)")
    i.add_argument("model")
    _add_shape_arg(i)
    i.add_argument("-o", "--output", required=True, help="OUT.tn, OUT.json or - for stdout")
    i.set_defaults(fn=cmd_import)
    n = sub.add_parser("info", help="inputs, outputs, operators, MACs, parameter bytes")
    n.add_argument("model")
    _add_shape_arg(n)
    n.set_defaults(fn=cmd_info)
    r = sub.add_parser("run", help="run a model through the host executor, or a compiled "
                       "library (.so) as a runtime Module")
    r.add_argument("model", help="a model (.tflite, .onnx, a saved module) or a library "
                   "built by `compile --shared` or `build`")
    r.add_argument("--name", help="the model to run of a library holding several")
    _add_shape_arg(r)
    r.add_argument("--input", action="append", metavar="FILE.npy",
                   help="one per model input, in order (default: random, --seed)")
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--repeat", type=int, default=0, help="time this many more runs")
    r.add_argument("--threads", type=int, default=1,
                   help="run the largest convolutions and dense layers over N "
                   "threads, in the executor or the library's Module (default 1: off)")
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
    pa = sub.add_parser("params", help="write a parameter blob: a constant-pool "
                                       "model's weights, supplied at run time")
    pa.add_argument("archive", help="OUT/ or OUT.tar, compiled with --constants-in-pool")
    pa.add_argument("weights", nargs="?",
                    help="a parameter file of the constants (const<i>, the dtypes and "
                         "shapes of the archive's parameters/<name>.params; default: "
                         "that file)")
    pa.add_argument("-o", "--output", required=True, metavar="BLOB")
    pa.add_argument("--weights-version", type=int, default=0, metavar="N",
                    help="recorded in the blob for the application (default 0)")
    pa.set_defaults(fn=cmd_params)
    pl = sub.add_parser("plan", help="print (and draw) the static memory plan")
    _add_compile_args(pl)
    pl.set_defaults(fn=cmd_plan)
    ch = sub.add_parser("check", help="the conformance table: imports, runs, matches "
                                      "TFLite Micro or onnxruntime, compiles, RAM",
                        description=CHECK_HELP,
                        formatter_class=argparse.RawDescriptionHelpFormatter)
    ch.add_argument("models", nargs="+", metavar="MODEL_OR_DIR",
                    help=".tflite and .onnx files, or folders of them")
    _add_shape_arg(ch, values=False)
    ch.add_argument("--json", metavar="FILE", help="write every result as JSON")
    ch.add_argument("--seed", type=int, default=0, help="of the random inputs")
    ch.add_argument("--timeout", type=float, default=900.0,
                    help="seconds one model may take (default %(default)s)")
    ch.add_argument("-v", "--verbose", action="store_true", help="a line per model as it ends")
    ch.set_defaults(fn=cmd_check)
    _add_serve_parser(sub)
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["serve"]:  # every argument is tvmnode-serve's, -h too
        return serve(argv[1:])
    args = parser().parse_args(argv)
    from .frontend import ModelImportError

    try:
        return int(args.fn(args))
    except (ModelImportError, OSError, ValueError, TypeError, NotImplementedError,
            ArithmeticError, LookupError) as e:
        # what the library raises for a bad model, module or option: one
        # line naming it (TVMNODE_TRACEBACK=1 shows where it came from)
        if os.environ.get("TVMNODE_TRACEBACK"):
            raise
        msg = "; ".join(ln.strip() for ln in str(e).strip().splitlines() if ln.strip())
        print("tvmnode %s: %s" % (args.command, msg or type(e).__name__), file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
