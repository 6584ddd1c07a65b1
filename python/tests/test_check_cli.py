"""`tvmnode check`, the conformance runner, and the state line of
`tvmnode info`: trained models import, run, match TFLite Micro, compile to
C whose outputs equal the executor's, in no more RAM than TFLite Micro's
arena head; an unsupported model is reported with every missing operator,
not as a failure of the run; a model that takes too long is reported at
the stage it was in, and the others go on."""
import json
import os
from pathlib import Path
from typing import Any, Dict

import numpy as np
import pytest

from tvmnode import cli

pytest.importorskip("tflite")
pytest.importorskip("tflite_micro")
from tflite_build import TensorSpec, builtin_options, single_op_model  # noqa: E402

MODELS = Path(os.environ.get("TVMNODE_MODELS",
                             Path(__file__).resolve().parents[2].parent / "shared" / "models"))
SMALL = ["kws_ref_model.tflite", "ad01_int8.tflite", "ad01_fp32.tflite"]


def _paths() -> list:
    paths = [MODELS / f for f in SMALL]
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        pytest.skip("trained models not found: %s" % ", ".join(missing))
    return paths


def _unsupported_model(path: Path) -> None:
    """TOPK_V2, which neither the importer nor TFLite Micro has: float
    values [1, 8] and k = 3 -> the top values and their indices."""
    path.write_bytes(single_op_model(
        "TOPK_V2",
        inputs=[TensorSpec((1, 8), "float32"),
                TensorSpec((), "int32", data=np.array(3, "int32"))],
        outputs=[TensorSpec((1, 3), "float32"), TensorSpec((1, 3), "int32")]))


@pytest.fixture(scope="module")
def checked(tmp_path_factory: Any) -> Dict[str, Any]:
    """One `tvmnode check` run over the small models and the unsupported
    one, in a folder given as a folder: its exit status, its table and its
    JSON results by file name."""
    d = tmp_path_factory.mktemp("check")
    for p in _paths():
        (d / p.name).write_bytes(p.read_bytes())
    _unsupported_model(d / "topk_unsupported.tflite")
    (d / "notes.txt").write_text("not a model: the folder's .tflite files are checked")
    out = d / "results.json"
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "tvmnode", "check", str(d), "--json",
                           str(out)], capture_output=True, text=True, timeout=1800)
    with open(out, encoding="utf-8") as f:
        results = {r["name"]: r for r in json.load(f)["models"]}
    return {"rc": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr,
            "results": results}


@pytest.mark.parametrize("name", SMALL)
def test_trained_models_pass_every_column(checked: Dict[str, Any], name: str) -> None:
    r = checked["results"][name]
    assert r["stage"] == "done" and "crash" not in r, r
    assert (r["import"], r["run"], r["match"], r["compile"], r["c_equal"]) == (
        True, True, True, True, True), r
    assert r["reference"] == "tflite-micro"
    assert r["stateful"] == []
    assert r["c_max_diff"] == 0
    if "int8" in name or name.startswith("kws"):
        assert r["max_diff"] == 0  # integer outputs: bit for bit
    else:
        assert 0 <= r["max_diff"] < 1e-3
    # RAM: the planned workspace (inputs and outputs in it) against TFLite
    # Micro's arena head, which holds the same tensors
    assert 0 < r["workspace_bytes"] <= r["tflm_arena_head_bytes"]
    assert r["ram_ratio"] == pytest.approx(r["workspace_bytes"] / r["tflm_arena_head_bytes"])
    assert r["tflm_arena_total_bytes"] >= r["tflm_arena_head_bytes"]


def test_unsupported_model_lists_what_it_lacks(checked: Dict[str, Any]) -> None:
    r = checked["results"]["topk_unsupported.tflite"]
    assert r["stage"] == "done" and "crash" not in r, r
    assert r["import"] is False
    assert (r["run"], r["match"], r["compile"], r["c_equal"]) == (None, None, None, None)
    assert r["operators"] == {"TOPK_V2": 1}
    assert [(m["operator"], m["count"], m["first"]) for m in r["missing"]] == [
        ("TOPK_V2", 1, 0)]
    assert "1 operator type is not supported: TOPK_V2" in r["error"]


def test_table_and_exit_status(checked: Dict[str, Any]) -> None:
    assert checked["rc"] == 0, checked["stderr"]
    lines = checked["stdout"].splitlines()
    assert lines[0].split()[:8] == ["model", "import", "run", "match", "max", "diff",
                                    "compile", "C=ex"]
    assert len(checked["results"]) == 4  # notes.txt is not a model
    row = next(ln for ln in lines if ln.startswith("kws_ref_model.tflite"))
    cols = row.split()
    assert cols[1:5] == ["yes", "yes", "yes", "0"] and cols[5:8] == ["yes", "yes", "tflm"]
    ratio = checked["results"]["kws_ref_model.tflite"]["ram_ratio"]
    assert cols[10] == "%.2f" % ratio
    row = next(ln for ln in lines if ln.startswith("topk_unsupported.tflite"))
    assert row.split()[1:3] == ["NO", "-"] and row.endswith("missing TOPK_V2 x1")
    assert ("4 models: 3 import, 3 run, 3 match, 3 compile, 3 generated C equal to the "
            "executor; 0 crashed, 0 wrong") in checked["stdout"]


def test_a_model_that_takes_too_long_is_reported_and_the_run_goes_on(tmp_path: Path) -> None:
    kws = _paths()[0]
    r = cli._check_isolated(str(kws), seed=0, timeout=0.5)
    assert r["crash"].startswith("timed out after 0.5 s in stage '")
    assert r["seconds"] < 30


def test_check_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["check", str(tmp_path)]) == 2
    assert "no .tflite or .onnx files in" in capsys.readouterr().err
    assert cli.main(["check", str(tmp_path / "absent.tflite")]) == 1
    assert "absent.tflite: no such file or folder" in capsys.readouterr().err


def _svdf_model(path: Path) -> None:
    """One SVDF operator (state in its fifth input): a stateful model."""
    units, rank, memory, n = 2, 1, 4, 3
    path.write_bytes(single_op_model(
        "SVDF",
        inputs=[TensorSpec((1, n), "float32"),
                TensorSpec((units * rank, n), "float32",
                           data=np.ones((units * rank, n), "float32")),
                TensorSpec((units * rank, memory), "float32",
                           data=np.ones((units * rank, memory), "float32")),
                None,
                TensorSpec((1, memory * units * rank), "float32",
                           data=np.zeros((1, memory * units * rank), "float32"))],
        outputs=[TensorSpec((1, units), "float32")],
        options=builtin_options("SVDFOptions", rank=rank)))


def test_info_names_state(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    kws = _paths()[0]
    assert cli.main(["info", str(kws)]) == 0
    assert "state        none (each run is independent of the last)" in capsys.readouterr().out
    svdf = tmp_path / "svdf.tflite"
    _svdf_model(svdf)
    cli.main(["info", str(svdf)])  # whether or not the importer maps SVDF yet
    assert "state        stateful: SVDF (state tensors kept between runs)" \
        in capsys.readouterr().out
    assert cli.stateful_operators({"VAR_HANDLE": 1, "CALL_ONCE": 1, "ADD": 2}) == [
        "VAR_HANDLE", "CALL_ONCE"]
    line = cli._state_line(str(svdf))
    assert line is not None and "SVDF" in line
