"""The main job (examples/deploy.py): the MACs its LayerAudit pass reports
are the ones `tvmnode info` reports, for every layout and form of
convolution."""
import io
import os
import re
import shutil
import subprocess
import sys
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any, List

import numpy as np
import pytest

from tvmnode import cli, frontend, ir, runtime, transform
from tvmnode.ir import op

HERE = Path(__file__).resolve().parent
PYDIR = HERE.parent
ROOT = PYDIR.parent
sys.path.insert(0, str(PYDIR / "examples"))

import deploy  # noqa: E402

MODELS = Path(os.environ.get("TVMNODE_MODELS", ROOT.parent / "shared" / "models"))
KWS = MODELS / "kws_ref_model.tflite"


def _has(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def audit_macs(mod: Any) -> int:
    audit: Any = deploy.LayerAudit()
    out = transform.Sequential([transform.InferType(), transform.SimplifyExpr(), audit])(mod)
    attrs: Any = out.attrs
    return sum(int(x["macs"]) for x in attrs["layers"])


# ---- 1. LayerAudit's MACs ------------------------------------------------------

@pytest.mark.parametrize("name", sorted(p.name for p in MODELS.glob("*.tflite")) or ["none"])
def test_layer_audit_macs_equal_tvmnode_info(name: str) -> None:
    pytest.importorskip("tflite")
    path = MODELS / name
    if not path.exists():
        pytest.skip("the trained models are not at %s" % MODELS)
    mod = frontend.load_model(str(path))
    assert audit_macs(mod) == cli.summary(mod)["macs"] > 0


def test_layer_audit_kws_figure() -> None:
    pytest.importorskip("tflite")
    if not KWS.exists():
        pytest.skip("the trained models are not at %s" % MODELS)
    # issue 26: it printed 139,264,768 (divided by the kernel height)
    assert audit_macs(frontend.load_model(str(KWS))) == 2656768


def _executor_macs(mod: Any) -> int:
    return int(runtime.Executor(transform.FuseOps()(transform.InferType()(mod))).stats()["macs"])


def _conv_cases() -> List[Any]:
    """(name, module) for every form: NCHW/OIHW and NHWC/HWIO, plain,
    grouped, depthwise (with a channel multiplier), strided; dense; matmul."""
    rng = np.random.default_rng(3)

    def w(*shape: int) -> Any:
        return ir.const(rng.standard_normal(shape).astype("float32"))

    cases = []
    x = ir.var("x", shape=(1, 8, 9, 7))  # NCHW
    for label, weight, groups, strides in (
            ("plain", w(6, 8, 3, 3), 1, (1, 1)),
            ("grouped", w(8, 2, 3, 1), 4, (1, 1)),
            ("depthwise x2", w(16, 1, 3, 3), 8, (2, 1))):
        y = op.nn.conv2d(x, weight, strides=strides, padding=(1, 1), groups=groups,
                         channels=int(weight.data.shape[0]))
        cases.append(("OIHW " + label, ir.Function([x], y)))
    x = ir.var("x", shape=(2, 9, 7, 8))  # NHWC
    for label, weight, groups in (("plain", w(3, 3, 8, 6), 1),
                                  ("grouped", w(1, 3, 2, 8), 4),
                                  ("depthwise", w(3, 3, 1, 8), 8)):
        y = op.nn.conv2d(x, weight, padding=(0, 1), groups=groups,
                         channels=int(weight.data.shape[3]), data_layout="NHWC",
                         kernel_layout="HWIO")
        cases.append(("HWIO " + label, ir.Function([x], y)))
    x = ir.var("x", shape=(3, 20))
    cases.append(("dense", ir.Function([x], op.nn.dense(x, w(5, 20), units=5))))
    x = ir.var("x", shape=(2, 4, 6))
    cases.append(("matmul", ir.Function([x], op.matmul(x, w(6, 5)))))
    cases.append(("matmul transposed", ir.Function(
        [x], op.matmul(x, w(4, 3), transpose_a=True))))
    return cases


def test_layer_macs_every_form() -> None:
    for label, fn in _conv_cases():
        mod = ir.IRModule.from_expr(fn)
        want = _executor_macs(mod)
        assert want > 0, label
        assert audit_macs(mod) == want, label
