"""The `tvmnode` command line on the bundled trained models: info, import
(text and JSON that load back to the same module), run (random and .npy
inputs, the same numbers as the executor), and its errors."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tvmnode as tn
from tvmnode import cli, frontend, ir

pytest.importorskip("tflite")
MODELS = Path(os.environ.get("TVMNODE_MODELS",
                             Path(__file__).resolve().parents[2].parent / "shared" / "models"))
KWS = MODELS / "kws_ref_model.tflite"
if not KWS.exists():
    pytest.skip("the trained models are not at %s" % MODELS, allow_module_level=True)


def test_info(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["info", str(KWS)]) == 0
    out = capsys.readouterr().out
    assert "input_1                      1x49x10x1        int8  scale 0.584703 zero point 83" \
        in out
    assert "qnn.conv2d                   9" in out
    # DS-CNN KWS: 2.66 M multiply-accumulates, as the executor counts them
    assert "MACs         2656768" in out
    s = cli.summary(frontend.from_tflite(KWS))
    assert s["macs"] == 2656768 and s["operators"]["qnn.softmax"] == 1
    assert 20000 < s["parameter_bytes"] < 40000


def test_import_text_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mod = frontend.from_tflite(KWS)
    for name in ("kws.tn", "kws.json"):
        out = tmp_path / name
        assert cli.main(["import", str(KWS), "-o", str(out)]) == 0
        assert "wrote %s" % out in capsys.readouterr().out
        back = cli.load(str(out))
        ir.assert_structural_equal(back, mod)
        # and info works on the saved module too
        assert cli.main(["info", str(out)]) == 0
        assert "qnn.dense" in capsys.readouterr().out


def test_run_matches_the_executor(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    x = np.random.default_rng(5).integers(-128, 128, (1, 49, 10, 1), dtype=np.int8)
    np.save(tmp_path / "x.npy", x)
    assert cli.main(["run", str(KWS), "--input", str(tmp_path / "x.npy"), "--output",
                     str(tmp_path / "y.npy"), "--repeat", "3"]) == 0
    out = capsys.readouterr().out
    assert "Identity int8 [1, 12]" in out and "latency      median" in out
    want = tn.runtime.Executor(frontend.from_tflite(KWS))(x)
    np.testing.assert_array_equal(np.load(tmp_path / "y.npy"), want)
    # over two threads: the same bytes
    assert cli.main(["run", str(KWS), "--input", str(tmp_path / "x.npy"), "--output",
                     str(tmp_path / "y2.npy"), "--threads", "2"]) == 0
    capsys.readouterr()
    np.testing.assert_array_equal(np.load(tmp_path / "y2.npy"), want)
    assert cli.main(["run", str(KWS), "--threads", "0"]) == 1
    assert "argument n (threads): expected 1 to 64, got 0" in capsys.readouterr().err


def test_run_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    np.save(tmp_path / "bad.npy", np.zeros((1, 49, 10, 1), np.float32))
    assert cli.main(["run", str(KWS), "--input", str(tmp_path / "bad.npy")]) == 2
    err = capsys.readouterr().err
    assert "holds float32 [1, 49, 10, 1], input 'input_1' is int8 [1, 49, 10, 1]" in err
    assert cli.main(["info", str(tmp_path / "missing.tflite")]) == 1
    assert "No such file" in capsys.readouterr().err
    (tmp_path / "junk.tflite").write_bytes(b"\x00" * 64)
    assert cli.main(["info", str(tmp_path / "junk.tflite")]) == 1
    assert "not a TFLite model" in capsys.readouterr().err


def test_module_entry_point() -> None:
    """`python -m tvmnode` is the same command (the installed console
    script `tvmnode` calls the same main)."""
    r = subprocess.run([sys.executable, "-m", "tvmnode", "run", str(MODELS / "ad01_fp32.tflite")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "float32 [1, 640]" in r.stdout


def test_console_script() -> None:
    """The `tvmnode` command that `pip install ./python` puts beside the
    interpreter (python/run_tests.sh installs the package into its venv)."""
    script = Path(sys.executable).parent / "tvmnode"
    if not script.exists():
        pytest.skip("the package is not installed in this interpreter's environment")
    r = subprocess.run([str(script), "info", str(MODELS / "ad01_int8.tflite")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "input_1                      1x640            int8" in r.stdout
    r = subprocess.run([str(script), "bogus"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "invalid choice: 'bogus'" in r.stderr
