"""The wasm32 build (firmware/wasm): each bundled model compiled to C, built
by clang and wasm-ld freestanding (no libc, no WASI) and run under node gives
the host executor's outputs bit for bit, int8 and float32 alike; the module
imports nothing; the generated run returns TN_CRT_NULL_POINTER for a NULL
input and TN_CRT_POOL_MISALIGNED for a misaligned pool instead of trapping;
the .wasm's size is printed and checked against the model's constants; and
run.py works from the command line. Skipped when clang (with wasm32),
wasm-ld or node is missing."""
from __future__ import annotations

import importlib.util
import os
from typing import Any

import numpy as np
import pytest

from tvmnode import codegen
from tvmnode import runtime as tn_runtime

from test_codegen import expected, inputs_for, model
from exec_util import isa

HERE = os.path.dirname(os.path.abspath(__file__))
RUN_PY = os.path.normpath(os.path.join(HERE, "..", "..", "firmware", "wasm", "run.py"))


def _load_runner() -> Any:
    """firmware/wasm/run.py as a module (None where the tree lacks it)."""
    if not os.path.exists(RUN_PY):
        return None
    spec = importlib.util.spec_from_file_location("tvmnode_wasm_run", RUN_PY)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


wasm: Any = _load_runner()
MISSING = "no %s" % RUN_PY if wasm is None else wasm.tools()
pytestmark = pytest.mark.skipif(MISSING is not None, reason="wasm32 build: %s" % MISSING)

# name the model compiles under -> file
CASES = {
    "kws": "kws_ref_model.tflite",
    "ad01": "ad01_int8.tflite",
    "str_ww": "str_ww_ref_model.tflite",
    "resnet_q": "pretrainedResnet_quant.tflite",
    "ad01_f32": "ad01_fp32.tflite",
    "kws_f32": "kws_ref_model_float32.tflite",  # softmax: expf
    "resnet_f32": "pretrainedResnet.tflite",
}
# Code, crt and glue on top of the constants, in bytes: the models above
# need 5 to 35 KiB, except the hybrid KWS, which links the float kernels,
# the int8 convolution's and the run-time quantization's (about 88 KiB).
MAX_CODE = 64 * 1024
MAX_CODE_OF = {"kws_f32": 96 * 1024}


def compile_model(fname: str, name: str) -> codegen.Archive:
    """A bundled model, imported and compiled (nothing cached: tests leave
    no object alive)."""
    return codegen.compile(model(fname), name=name)


@pytest.mark.parametrize("name", list(CASES))
def test_model_in_wasm_matches_the_host(name: str, tmp_path: Any, capsys: Any) -> None:
    arch = compile_model(CASES[name], name)
    built = wasm.build(arch.export(str(tmp_path / "mlf")), str(tmp_path / "wasm"))
    xs = inputs_for(arch.info["inputs"], seed=len(name))
    res = wasm.run(built, xs, check=True)
    assert res["imports"] == []
    assert "trap" not in res, res
    assert res["status"] == 0
    assert res["checks"] == wasm.EXPECTED_CHECKS
    # float: the host's portable kernels, whose bits wasm's C reproduces
    # (the x86 float forms fuse multiply-adds: exec_util.isa)
    floats = any(np.dtype(o["dtype"]).kind == "f" for o in arch.info["outputs"])
    with isa("portable" if floats else tn_runtime.isa()):
        want = expected(arch, xs)
    assert len(res["outputs"]) == len(want)
    for got, exp in zip(res["outputs"], want):
        assert got.dtype == exp.dtype and got.shape == exp.shape
        # bit for bit: float outputs are compared as bytes, not by value
        assert got.tobytes() == exp.tobytes(), (
            "%s: wasm and host differ at %d of %d elements" %
            (name, int(np.sum(got != exp)), got.size))
    consts = arch.info["memory"]["constants_in_flash_bytes"]
    assert consts < built.size <= consts + MAX_CODE_OF.get(name, MAX_CODE)
    with capsys.disabled():
        print("\nwasm %-10s %8d bytes (%d of constants), %.2f ms a run"
              % (name, built.size, consts, res["run_ms"]), end="")


def test_run_py_command_line(tmp_path: Any, capsys: Any) -> None:
    arch = compile_model(CASES["kws"], "kws")
    archive = arch.export(str(tmp_path / "mlf"))
    (x,) = inputs_for(arch.info["inputs"], seed=7)
    (want,) = expected(arch, [x])
    raw = tmp_path / "in.bin"
    raw.write_bytes(x.tobytes())
    out = tmp_path / "out.npz"
    assert wasm.main([archive, str(raw), "--check", "--out", str(tmp_path / "b"),
                      "--save", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "status 0" in printed and '"null_input": 9' in printed
    assert (tmp_path / "b" / "kws.wasm").exists()
    with np.load(str(out)) as got:
        assert got[arch.info["outputs"][0]["name"]].tobytes() == want.tobytes()
    # a wrong-sized input is refused before anything runs
    raw.write_bytes(x.tobytes()[:-1])
    assert wasm.main([archive, str(raw)]) == 2
    assert "489 bytes given, the model takes 490" in capsys.readouterr().err
