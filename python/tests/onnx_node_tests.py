"""The ONNX backend node tests (Debian's libonnx-testdata) through
tvmnode.frontend.from_onnx and the executor.

Each test directory holds model.onnx and test_data_set_*/{input,output}_*.pb.
A test whose import raises UnsupportedOperatorError is "unsupported"; every
other test is "supported", and passes when every data set's outputs match
within rtol 1e-3, atol 1e-5 (numpy.testing.assert_allclose). An import
error that is not "unsupported", an executor error or a mismatch fails it.

Graph inputs that parameterise an operator (Reshape's shape, Slice's
starts, ...: onnx.PARAMETER_INPUTS) are frozen into initializers from the
test data when every data set gives them the same value: the importer
needs them as constants.

    python onnx_node_tests.py [DATA_DIR] [-v] [-k SUBSTRING]
"""
from __future__ import annotations

import gc
import os
import sys
import time
from typing import Dict, List, Optional, Tuple

import numpy as np

DEFAULT_DIRS = ["/usr/share/libonnx-testdata/data/node",
                "/usr/lib/python3/dist-packages/onnx/backend/test/data/node"]
RTOL, ATOL = 1e-3, 1e-5


def data_dir() -> Optional[str]:
    env = os.environ.get("ONNX_NODE_TEST_DIR")
    for d in ([env] if env else []) + DEFAULT_DIRS:
        if d and os.path.isdir(d):
            return d
    return None


def _read_pb(onnx, path: str) -> np.ndarray:
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return onnx.numpy_helper.to_array(t)


def _data_sets(onnx, test_dir: str) -> List[Tuple[List[np.ndarray], List[np.ndarray]]]:
    sets = []
    for d in sorted(os.listdir(test_dir)):
        p = os.path.join(test_dir, d)
        if not d.startswith("test_data_set_") or not os.path.isdir(p):
            continue
        ins, outs = [], []
        i = 0
        while os.path.exists(os.path.join(p, "input_%d.pb" % i)):
            ins.append(_read_pb(onnx, os.path.join(p, "input_%d.pb" % i)))
            i += 1
        i = 0
        while os.path.exists(os.path.join(p, "output_%d.pb" % i)):
            outs.append(_read_pb(onnx, os.path.join(p, "output_%d.pb" % i)))
            i += 1
        sets.append((ins, outs))
    return sets


def _freeze(onnx, model, sets) -> Tuple[object, List[int]]:
    """The model with its parameter inputs made initializers, and the
    positions of the inputs that remain."""
    from tvmnode.frontend.onnx import PARAMETER_INPUTS

    g = model.graph
    init = {t.name for t in g.initializer}
    real = [vi for vi in g.input if vi.name not in init]
    params = set()
    for node in g.node:
        for pos in PARAMETER_INPUTS.get(node.op_type, ()):
            if pos < len(node.input) and node.input[pos]:
                params.add(node.input[pos])
    frozen = []
    for i, vi in enumerate(real):
        if vi.name in params and all(len(s[0]) > i for s in sets):
            vals = [s[0][i] for s in sets]
            if all(v.shape == vals[0].shape and np.array_equal(v, vals[0]) for v in vals):
                frozen.append(i)
    if not frozen:
        return model, list(range(len(real)))
    m = onnx.ModelProto()
    m.CopyFrom(model)
    names = {real[i].name: i for i in frozen}
    for vi in list(m.graph.input):
        if vi.name in names:
            m.graph.input.remove(vi)
            m.graph.initializer.append(onnx.numpy_helper.from_array(
                sets[0][0][names[vi.name]], vi.name))
    return m, [i for i in range(len(real)) if i not in frozen]


def run_one(onnx, test_dir: str) -> Tuple[str, str]:
    """('unsupported' | 'passing' | 'failing', detail)."""
    import tvmnode as tn
    from tvmnode.frontend import ModelImportError
    from tvmnode.frontend.onnx import UnsupportedOperatorError, from_onnx

    try:
        model = onnx.load(os.path.join(test_dir, "model.onnx"))
    except Exception as e:
        return "failing", "reading the model: %s: %s" % (type(e).__name__, e)
    try:
        sets: Optional[list] = _data_sets(onnx, test_dir)
    except Exception as e:  # sequences, optionals: the model will be unsupported
        sets, data_error = None, "%s: %s" % (type(e).__name__, e)
    keep: List[int] = []
    if sets is not None:
        model, keep = _freeze(onnx, model, sets)
    try:
        mod = from_onnx(model)
    except UnsupportedOperatorError as e:
        return "unsupported", str(e)
    except ModelImportError as e:
        return "failing", "import: %s" % e
    except Exception as e:
        return "failing", "import: %s: %s" % (type(e).__name__, e)
    if sets is None:
        return "failing", "reading the test data: %s" % data_error
    ex = None
    try:
        ex = tn.runtime.Executor(mod)
        for n, (ins, outs) in enumerate(sets):
            got = ex(*[ins[i] for i in keep])
            got = list(got) if isinstance(got, (list, tuple)) else [got]
            if len(got) != len(outs):
                return "failing", "data set %d: %d outputs, expected %d" % (n, len(got),
                                                                           len(outs))
            for j, (g_, w) in enumerate(zip(got, outs)):
                g_ = np.asarray(g_)
                if g_.shape != w.shape or g_.dtype != w.dtype:
                    return "failing", "data set %d output %d: %s %s, expected %s %s" % (
                        n, j, g_.shape, g_.dtype, w.shape, w.dtype)
                np.testing.assert_allclose(g_, w, rtol=RTOL, atol=ATOL)
    except AssertionError as e:
        return "failing", "mismatch: %s" % str(e).strip().splitlines()[:6]
    except Exception as e:
        return "failing", "run: %s: %s" % (type(e).__name__, e)
    finally:
        del mod, ex
    return "passing", ""


def run_all(root: str, select: str = "", verbose: bool = False) -> Dict[str, List[str]]:
    import onnx

    res: Dict[str, List[str]] = {"unsupported": [], "passing": [], "failing": []}
    details: Dict[str, str] = {}
    for name in sorted(os.listdir(root)):
        d = os.path.join(root, name)
        if select not in name or not os.path.isfile(os.path.join(d, "model.onnx")):
            continue
        kind, detail = run_one(onnx, d)
        res[kind].append(name)
        details[name] = detail
        if verbose and kind != "unsupported":
            print("%-60s %s %s" % (name, kind, detail[:300]))
    gc.collect()
    res["details"] = [details[n] for n in res["failing"]]
    return res


def summary(res: Dict[str, List[str]]) -> str:
    s, p, f = len(res["passing"]) + len(res["failing"]), len(res["passing"]), len(res["failing"])
    lines = ["onnx node tests: %d total, %d supported, %d passing, %d failing"
             % (s + len(res["unsupported"]), s, p, f)]
    for n, d in zip(res["failing"], res["details"]):
        lines.append("  FAIL %s: %s" % (n, d[:400]))
    return "\n".join(lines)


def main(argv: List[str]) -> int:
    args = [a for a in argv if not a.startswith("-")]
    verbose = "-v" in argv
    select = ""
    if "-k" in argv:
        select = argv[argv.index("-k") + 1]
        args.remove(select)
    root = args[0] if args else data_dir()
    if root is None:
        print("onnx node tests: no test data (apt-get install libonnx-testdata)")
        return 2
    t0 = time.time()
    res = run_all(root, select, verbose)
    print(summary(res))
    print("(%.1f s)" % (time.time() - t0))
    return 1 if res["failing"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
