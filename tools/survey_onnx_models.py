#!/usr/bin/env python3
"""Where the ONNX importer stands on a folder of models.

    python3 tools/survey_onnx_models.py DIR [--timeout S] [--json FILE] [NAME...]

For each DIR/*.onnx (or the NAMEs given): the operators it uses that the
importer does not map (read from the file, so every one is listed, not
only the first the importer meets), then from_onnx with the inputs' dynamic
dimensions fixed (batch 1; the sizes in SHAPES below for the others), an
executor run and onnxruntime on the same seeded random input. Float outputs
are compared as the largest difference over the range of the reference
output (the suite's bar is 1e-5); integer outputs must be equal. Models
holding QuantizeLinear / QLinear operators are also compared for exact
equality, against onnxruntime with its graph optimizations off (which runs
the float operators between the QDQ pairs, the ONNX definition) and on
(its fused integer kernels), both reported.

Each model runs in a child process with a time limit, so a crash or a hang
is reported as such. Needs tvmnode, onnx, onnxruntime and numpy.
"""
from __future__ import annotations

import argparse
import collections
import glob
import json
import os
import subprocess
import sys
import time
import traceback
import zlib
from typing import Any, Dict, List, Optional

# Sizes for dynamic dimensions that are not the batch, by model-name prefix
# (so the quantized versions NAME_qdq_... share their float model's row):
# {input name: shape}.
SHAPES: Dict[str, Dict[str, List[int]]] = {
    "pypi_rapidocr_det": {"x": [1, 3, 320, 320]},
    "pypi_rapidocr_cls": {"x": [1, 3, 48, 192]},
    "pypi_rapidocr_rec": {"x": [1, 3, 48, 320]},
    "pypi_nudenet_320n": {"images": [1, 3, 320, 320]},
    "pypi_ddddocr": {"input1": [1, 1, 64, 128]},
    "pypi_silero_vad": {"input": [1, 512], "state": [2, 1, 128]},
    "pypi_oww_silero_vad": {"input": [1, 512], "h": [2, 1, 64], "c": [2, 1, 64]},
    "pypi_oww_melspectrogram": {"input": [1, 1280]},
}

# Integer inputs that are not free data: value ranges (low, high exclusive),
# or a fixed value.
INT_RANGES: Dict[str, Dict[str, Any]] = {
    "pypi_magika": {"bytes": (0, 257)},
    "pypi_silero_vad": {"sr": 16000},
    "pypi_oww_silero_vad": {"sr": 16000},
}

_NP = {1: "float32", 2: "uint8", 3: "int8", 5: "int16", 6: "int32", 7: "int64", 9: "bool",
       11: "float64"}


def _lookup(table: Dict[str, Any], name: str) -> Dict[str, Any]:
    for k, v in table.items():
        if name.startswith(k):
            return v
    return {}


def model_inputs(m: Any, name: str):
    """(input name, numpy dtype, fixed shape) of the graph inputs that are
    not initializers."""
    inits = {t.name for t in m.graph.initializer}
    fixed = _lookup(SHAPES, name)
    out = []
    for vi in m.graph.input:
        if vi.name in inits:
            continue
        tt = vi.type.tensor_type
        dims = [d.dim_value if d.HasField("dim_value") and d.dim_value > 0 else None
                for d in tt.shape.dim]
        if vi.name in fixed:
            shp = list(fixed[vi.name])
        else:
            shp = [1 if d is None else d for d in dims]
            if any(d is None for d in dims[1:]):
                raise ValueError("input '%s' has dynamic dimensions %s; give sizes in SHAPES"
                                 % (vi.name, dims))
        out.append((vi.name, _NP.get(tt.elem_type, "elem%d" % tt.elem_type), shp))
    return out


def make_inputs(m: Any, name: str):
    import numpy as np

    rng = np.random.default_rng(zlib.crc32(name.encode()))
    ranges = _lookup(INT_RANGES, name)
    arrays = {}
    for iname, dt, shp in model_inputs(m, name):
        r = ranges.get(iname)
        if isinstance(r, (int, float)):
            arrays[iname] = np.full(shp, r, dtype=dt)
        elif dt.startswith("float"):
            arrays[iname] = rng.uniform(-1, 1, size=shp).astype(dt)
        elif dt == "bool":
            arrays[iname] = rng.integers(0, 2, size=shp).astype(bool)
        else:
            lo, hi = r if r else ((0, 256) if dt == "uint8" else (-128, 128) if dt == "int8"
                                  else (0, 100))
            arrays[iname] = rng.integers(lo, hi, size=shp).astype(dt)
    return arrays


def op_census(m: Any) -> Dict[str, Any]:
    """Operator counts and the unmapped ones (domain-qualified when not the
    default domain), including those inside If/Loop/Scan bodies."""
    from tvmnode.frontend.onnx import supported_operators

    sup = set(supported_operators())
    counts: collections.Counter = collections.Counter()

    def walk(g: Any) -> None:
        for n in g.node:
            key = n.op_type if n.domain in ("", "ai.onnx") else "%s.%s" % (n.domain, n.op_type)
            counts[key] += 1
            for a in n.attribute:
                if a.HasField("g"):
                    walk(a.g)
                for sg in a.graphs:
                    walk(sg)

    walk(m.graph)
    missing = {k: v for k, v in counts.items() if k not in sup}
    opsets = {(o.domain or "ai.onnx"): o.version for o in m.opset_import}
    return {"ops": dict(counts), "missing": missing, "opsets": opsets,
            "quantized": any(k in counts for k in ("QuantizeLinear", "QLinearConv",
                                                   "QLinearMatMul", "DynamicQuantizeLinear",
                                                   "ConvInteger", "MatMulInteger"))}


def check_all(m: Any, shape: Dict[str, List[int]]) -> List[str]:
    """Every node the importer's first pass rejects, not only the first one
    (from_onnx stops there): its per-node checks run over the whole graph
    and each refusal is kept, operators it does not map left out (the
    census lists those). Reads the importer's internals, so a change there
    can break it; it then says so in place of the list."""
    import re

    from tvmnode.frontend import onnx as fo

    try:
        imp = fo._Importer(fo._Graph(m, shape))
        g = imp.g
    except Exception as e:
        return ["(the model cannot be read: %s: %s)" % (type(e).__name__, str(e)[:200])]
    out: List[str] = []
    for k, node in enumerate(g.nodes):
        try:
            ctx = fo._Ctx(imp, k, node)
            spec = fo._spec(node)
            if spec is None:
                continue
            if node.op_type == "Constant":
                g.values[node.output[0]] = fo._constant_value(ctx)
                v = g.values[node.output[0]]
                g.inferred[node.output[0]] = (str(v.dtype), list(v.shape))
            elif spec[1] is not None:
                spec[1](ctx)
        except Exception as e:
            # names vary from node to node; the operator and the reason are the news
            msg = re.sub(r"'[^']*'", "'.'", re.sub(r"node \d+ '[^']*' ", "", str(e)))
            out.append(msg[:300])
    return out


def compare(ref: Any, got: Any) -> Dict[str, Any]:
    import numpy as np

    ref = np.asarray(ref)
    got = np.asarray(got)
    r: Dict[str, Any] = {"shape": list(ref.shape), "dtype": str(ref.dtype)}
    if got.shape != ref.shape:
        r.update(ok=False, error="shape %s, onnxruntime %s" % (list(got.shape), list(ref.shape)))
        return r
    if ref.dtype.kind == "f":
        d = np.abs(got.astype("float64") - ref.astype("float64"))
        rng = float(ref.max() - ref.min()) if ref.size else 0.0
        worst = float(np.nanmax(d)) if d.size else 0.0
        if np.isnan(got).any() != np.isnan(ref).any():
            worst = float("inf")
        rel = worst / rng if rng > 0 else worst
        r.update(max_abs=worst, range=rng, rel=rel, exact=bool(np.array_equal(got, ref)),
                 ok=rel <= 1e-5)
    else:
        diff = got.astype("int64") - ref.astype("int64")
        r.update(exact=bool(not diff.any()), mismatches=int(np.count_nonzero(diff)),
                 max_abs=int(np.abs(diff).max()) if diff.size else 0, ok=not diff.any())
    return r


def _step(res: Dict[str, Any], stage: str, fn: Any):
    """(True, fn()) with the time it took in res[stage + "_s"], or (False,
    None) with the stage and the error in res."""
    t0 = time.time()
    try:
        value = fn()
    except Exception as e:
        res["stage"] = stage
        res["error"] = "%s: %s" % (type(e).__name__, str(e)[:500])
        return False, None
    res[stage + "_s"] = round(time.time() - t0, 2)
    return True, value


def survey_one(path: str) -> Dict[str, Any]:
    import numpy as np
    import onnx
    import onnxruntime as ort
    import tvmnode as tn
    from tvmnode.frontend import from_onnx

    name = os.path.basename(path)
    res: Dict[str, Any] = {"model": name, "bytes": os.path.getsize(path)}
    m = onnx.load(path)
    res.update(op_census(m))
    try:
        ins = model_inputs(m, name)
        arrays = make_inputs(m, name)
    except Exception as e:
        res["stage"] = "inputs"
        res["error"] = "%s: %s" % (type(e).__name__, e)
        return res
    res["inputs"] = [[n, dt, shp] for n, dt, shp in ins]
    try:
        res["check_errors"] = sorted(collections.Counter(
            check_all(m, {n: shp for n, _, shp in ins})).items())
    except Exception as e:
        res["check_errors"] = [["(the check probe failed: %s: %s)" % (type(e).__name__, e), 1]]
    refs: Dict[str, Any] = {}
    for label, level in (("ort", ort.GraphOptimizationLevel.ORT_DISABLE_ALL),
                         ("ort_opt", ort.GraphOptimizationLevel.ORT_ENABLE_ALL)):
        if label == "ort_opt" and not res["quantized"]:
            continue
        try:
            so = ort.SessionOptions()
            so.graph_optimization_level = level
            so.intra_op_num_threads = 1
            sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
            refs[label] = sess.run(None, arrays)
        except Exception as e:
            res["%s_error" % label] = "%s: %s" % (type(e).__name__, str(e)[:300])
    # inputs with a fixed value (a sample rate) are given to the importer as
    # constants, so that what they decide folds
    fixed = {k: v for k, v in _lookup(INT_RANGES, name).items()
             if isinstance(v, (int, float)) and k in arrays}
    ins = [i for i in ins if i[0] not in fixed]
    ok, mod = _step(res, "import", lambda: from_onnx(
        path, shape={n: shp for n, _, shp in ins}, values={k: arrays[k] for k in fixed}))
    if not ok:
        return res
    res["imports"] = True
    ok, outs = _step(res, "run",
                     lambda: tn.runtime.Executor(mod)(*[arrays[n] for n, _, _ in ins]))
    if not ok:
        return res
    res["runs"] = True
    if not isinstance(outs, tuple):
        outs = (outs,)
    for label, ref in refs.items():
        if len(ref) != len(outs):
            res[label] = [{"ok": False, "error": "%d outputs, onnxruntime %d"
                           % (len(outs), len(ref))}]
            continue
        res[label] = [compare(r, o) for r, o in zip(ref, outs)]
    if "ort" in res:
        res["matches"] = all(c["ok"] for c in res["ort"])
        if res["quantized"]:
            res["exact"] = all(c.get("exact") for c in res["ort"])
    return res


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("dir")
    p.add_argument("names", nargs="*")
    p.add_argument("--timeout", type=float, default=600)
    p.add_argument("--json", help="write the results here (one object a line)")
    p.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_intermixed_args(argv)
    if args.one:  # the child: one model, its result on stdout
        try:
            r = survey_one(os.path.join(args.dir, args.names[0]))
        except Exception:
            r = {"model": args.names[0], "stage": "survey", "error": traceback.format_exc()[-800:]}
        print("RESULT " + json.dumps(r))
        return 0
    names = args.names or sorted(os.path.basename(f)
                                 for f in glob.glob(os.path.join(args.dir, "*.onnx")))
    results = []
    for n in names:
        t0 = time.time()
        try:
            proc = subprocess.run([sys.executable, os.path.abspath(__file__), args.dir, n,
                                   "--one"], capture_output=True, text=True,
                                  timeout=args.timeout)
            line = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
            if line:
                r = json.loads(line[-1][7:])
            else:
                r = {"model": n, "stage": "crash",
                     "error": "exit status %d: %s" % (proc.returncode, proc.stderr[-600:])}
        except subprocess.TimeoutExpired:
            r = {"model": n, "stage": "timeout", "error": "over %gs" % args.timeout}
        r["wall_s"] = round(time.time() - t0, 1)
        results.append(r)
        print(summary(r), flush=True)
        if args.json:
            with open(args.json, "a", encoding="utf-8") as f:
                f.write(json.dumps(r) + "\n")
    return 0


def summary(r: Dict[str, Any]) -> str:
    cells = [r["model"]]
    if r.get("runs") and "ort" in r:
        worst = max((c.get("rel", c.get("max_abs", 0)) for c in r["ort"] if "error" not in c),
                    default=None)
        cells.append("matches" if r.get("matches") else "DIFFERS")
        cells.append("worst %s" % worst)
        if r.get("quantized"):
            cells.append("exact" if r.get("exact") else "not exact")
    elif r.get("runs"):
        cells.append("runs (no onnxruntime reference: %s)" % r.get("ort_error"))
    else:
        cells.append("%s: %s" % (r.get("stage"), (r.get("error") or "").splitlines()[-1:]))
    if r.get("missing"):
        cells.append("missing %s" % r["missing"])
    return " | ".join(str(c) for c in cells)


if __name__ == "__main__":
    sys.exit(main())
