"""The main job (examples/deploy.py): the MACs its LayerAudit pass reports
are the ones `tvmnode info` reports, for every layout and form of
convolution; a model LiteRT refuses costs LiteRT's column, not the job; and
`./dev run --model x.onnx` works in the environment run_deploy.sh makes."""
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


# ---- 2. a model LiteRT refuses ------------------------------------------------

def _deploy(tmp_path: Path, model: Path, monkeypatch: pytest.MonkeyPatch) -> "tuple[int, str]":
    monkeypatch.setattr(deploy, "run_on_m4", lambda *a: None)  # not this test's business
    out = io.StringIO()
    with redirect_stdout(out):
        rc = deploy.main(["--model", str(model), "--out", str(tmp_path / "out"),
                          "--repeat", "2"])
    return rc, out.getvalue()


def test_litert_refusal_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("tflite")
    litert = pytest.importorskip("ai_edge_litert.interpreter")
    if not KWS.exists():
        pytest.skip("the trained models are not at %s" % MODELS)

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise ValueError("Model provided has model identifier 'x',\nshould be 'TFL3'\n")

    monkeypatch.setattr(litert, "Interpreter", refuse)
    rc, text = _deploy(tmp_path, KWS, monkeypatch)
    assert rc == 0, text
    assert ("LiteRT could not load this model: Model provided has model identifier 'x', "
            "should be 'TFL3'; skipping its column\n") in text
    assert "LiteRT" not in text.replace("LiteRT could not load this model", "")
    assert "deployed: kws ran 3 samples from generated C" in text
    if _has("tflite_micro"):
        assert "outputs equal to TFLite Micro's (the int8 reference): yes, bit for bit" in text


def _bump_op_version(src: Path, dst: Path, version: int) -> None:
    """The model with its first operator code's version set to `version`:
    LiteRT's resolver has no kernel of that version and refuses the model
    (as it refuses TFLite Micro's person_detect, whose flatbuffer it does
    not take either); TFLite Micro and tvmnode go by the builtin code."""
    import tflite

    buf = bytearray(src.read_bytes())
    m = tflite.Model.GetRootAsModel(buf, 0)
    for i in range(m.OperatorCodesLength()):
        code = m.OperatorCodes(i)
        o = code._tab.Offset(8)  # OperatorCode.version
        if o:
            pos = code._tab.Pos + o
            buf[pos:pos + 4] = int(version).to_bytes(4, "little")
            dst.write_bytes(bytes(buf))
            return
    pytest.skip("no operator code stores its version")


def test_model_litert_refuses_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("tflite")
    litert = pytest.importorskip("ai_edge_litert.interpreter")
    if not KWS.exists():
        pytest.skip("the trained models are not at %s" % MODELS)
    bad = tmp_path / "kws_v99.tflite"
    _bump_op_version(KWS, bad, 99)
    with pytest.raises(Exception):
        it = litert.Interpreter(model_path=str(bad))
        it.allocate_tensors()
    rc, text = _deploy(tmp_path, bad, monkeypatch)
    assert rc == 0, text
    line = [x for x in text.splitlines() if x.startswith("LiteRT could not load this model: ")]
    assert len(line) == 1 and line[0].endswith("; skipping its column"), text
    assert "version" in line[0]
    assert "deployed: kws ran 3 samples from generated C" in text
    if _has("tflite_micro"):
        assert "outputs equal to TFLite Micro's (the int8 reference): yes, bit for bit" in text


# ---- 3. ./dev run --model x.onnx -----------------------------------------------

def test_run_deploy_installs_what_the_importers_import() -> None:
    script = (PYDIR / "run_deploy.sh").read_text()
    m = re.search(r'^TNPY_PACKAGES="([^"]*)"', script, re.M)
    assert m, "run_deploy.sh sets no TNPY_PACKAGES"
    packages = set(m.group(1).split())
    for module, package in (("tflite", "tflite"), ("onnx", "onnx")):
        src = (PYDIR / "tvmnode" / "frontend" / (module + ".py")).read_text()
        assert re.search(r"^\s*import %s\b|^\s*from %s\b" % (module, module), src, re.M)
        assert package in packages, "%s imports %s; run_deploy.sh does not install it" % (
            module, package)


def _small_onnx(path: Path) -> None:
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(7)
    inits = {"w": rng.standard_normal((4, 1, 3, 3)).astype("float32"),
             "b": rng.standard_normal(4).astype("float32"),
             "fw": rng.standard_normal((4 * 8 * 6, 5)).astype("float32") * 0.1,
             "fb": rng.standard_normal(5).astype("float32")}
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("Flatten", ["r"], ["f"]),
             helper.make_node("Gemm", ["f", "fw", "fb"], ["y"])]
    g = helper.make_graph(nodes, "tiny",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 8, 6])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 5])],
                          [numpy_helper.from_array(a, k) for k, a in inits.items()])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), str(path))


def test_dev_run_onnx_model(tmp_path: Path) -> None:
    """`./dev run --model tiny.onnx` (run_deploy.sh against this build tree
    when the tests run on another one than ./dev's build/)."""
    build = os.environ.get("TVMNODE_BUILD_DIR")
    if not build or shutil.which("bash") is None:
        pytest.skip("needs TVMNODE_BUILD_DIR")
    model = tmp_path / "tiny.onnx"
    _small_onnx(model)
    args = ["--model", str(model), "--name", "tiny", "--out", str(tmp_path / "out"),
            "--repeat", "2"]
    if Path(build).resolve() == (ROOT / "build").resolve():
        cmd = [str(ROOT / "dev"), "run", *args]
    else:
        cmd = [str(PYDIR / "run_deploy.sh"), build, *args]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    p = subprocess.run(cmd, cwd=str(tmp_path), env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=600)
    assert p.returncode == 0, p.stdout[-6000:]
    assert "deployed: tiny ran 3 samples from generated C" in p.stdout, p.stdout[-6000:]
    assert "LayerAudit   2 float32 layers, %d MACs" % (8 * 6 * 4 * 9 + 192 * 5) in p.stdout
    m = re.search(r"largest difference from ONNX reference: (\S+)", p.stdout)
    assert m and float(m.group(1)) < 1e-4, p.stdout[-3000:]
