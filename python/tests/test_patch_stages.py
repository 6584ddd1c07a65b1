"""Patch-based execution (the PatchStages pass, compile's patch_stages):
every bundled model compiled with patch_stages="auto" computes the plain
build's outputs byte for byte, on the executor and in the generated C, and
its workspace shrinks where BENCHMARKS.md says it does."""
from __future__ import annotations

import json
import os
from typing import Any, List

import numpy as np
import pytest

from tvmnode import cli, codegen, frontend, runtime

from aot_util import HostModel
from test_codegen import ALL, MODELS, expected, inputs_for, model

VWW = os.path.join(os.environ.get("TVMNODE_TFLM_SOURCES", "/work/tflm-sources"),
                   "mlcommons-tiny/benchmark/training/visual_wake_words/trained_models/"
                   "vww_96_int8.tflite")

# workspace with patch_stages="auto" at most this share of the plain plan
# (which equals TFLite Micro's arena head on these three)
SHRINKS = {"pretrainedResnet_quant.tflite": 0.5, "pretrainedResnet.tflite": 0.5,
           "str_ww_ref_model.tflite": 0.8}


def outputs(ex: runtime.Executor, xs: List[np.ndarray]) -> List[np.ndarray]:
    r = ex(*xs)
    return [np.asarray(o) for o in (r if isinstance(r, tuple) else (r,))]


@pytest.mark.parametrize("fname", ALL)
def test_auto_is_byte_identical_on_the_executor_and_in_c(fname: str, tmp_path: Any) -> None:
    mod = model(fname)
    name = fname.split(".")[0].lower()
    plain = codegen.compile(mod, name=name)
    patched = codegen.compile(mod, name=name, patch_stages="auto")
    ps = patched.info["patch_stages"]
    assert ps["requested"] == "auto"
    assert patched.workspace_bytes <= plain.workspace_bytes
    if fname in SHRINKS:
        assert ps["bands"] >= 2 and ps["plain_bytes"] == plain.workspace_bytes
        assert ps["bytes"] == patched.workspace_bytes
        assert patched.workspace_bytes <= SHRINKS[fname] * plain.workspace_bytes
    if ps["bands"] == 1:  # left whole: the same plan, nothing to build again
        assert patched.workspace_bytes == plain.workspace_bytes
        assert patched.files["codegen/host/src/%s_lib1.c" % name] == \
            plain.files["codegen/host/src/%s_lib1.c" % name]
        return
    hm = HostModel(patched, str(tmp_path))
    ex = runtime.Executor(patched.module)
    for seed in range(2):
        xs = inputs_for(hm.inputs, seed)
        want = expected(plain, xs)
        for got_c, got_ex, w in zip(hm.run(*xs), outputs(ex, xs), want):
            assert got_ex.tobytes() == w.tobytes()
            assert got_c.tobytes() == w.tobytes()


def test_vww_below_half_tflm_and_byte_identical() -> None:
    if not os.path.exists(VWW):
        pytest.skip("%s not found (bench/peers/tflm_m4.py fetches it)" % VWW)
    mod = frontend.load_model(VWW)
    plain = codegen.compile(mod, name="vww")
    patched = codegen.compile(mod, name="vww", patch_stages="auto")
    assert plain.workspace_bytes == 55296
    assert patched.workspace_bytes <= 36864  # 0.5x TFLite Micro's 73,728 B
    xs = inputs_for(runtime.Executor(plain.module).inputs, 0)
    for got, want in zip(outputs(runtime.Executor(patched.module), xs), expected(plain, xs)):
        assert got.tobytes() == want.tobytes()


def test_a_fixed_band_count_and_its_refusals() -> None:
    mod = model("pretrainedResnet_quant.tflite")
    two = codegen.compile(mod, name="ic", patch_stages=2)
    assert two.info["patch_stages"]["bands"] == 2
    one = codegen.compile(mod, name="ic", patch_stages="1")
    assert one.info["patch_stages"]["bands"] == 1
    assert one.workspace_bytes == codegen.compile(mod, name="ic").workspace_bytes
    with pytest.raises(ValueError, match="'PatchStages.count' must be at most"):
        codegen.compile(mod, name="ic", patch_stages=1000)
    for bad in ("x", 0, -2, True, "2.5"):
        with pytest.raises(ValueError, match="patch_stages must be 'auto' or a number"):
            codegen.compile(mod, name="ic", patch_stages=bad)


def test_cli_compile_patch_stages(tmp_path: Any, capsys: Any) -> None:
    path = os.path.join(MODELS, "pretrainedResnet_quant.tflite")
    if not os.path.exists(path):
        pytest.skip("model not found")
    out = str(tmp_path / "ic")
    assert cli.main(["compile", path, "--name", "ic", "-o", out, "--patch-stages", "2"]) == 0
    text = capsys.readouterr().out
    assert "patch stages                2 bands to qnn.add" in text
    with open(os.path.join(out, "metadata.json")) as f:
        assert json.load(f)["modules"]["ic"]["patch_stages"]["bands"] == 2
    assert cli.main(["compile", path, "-o", out, "--patch-stages", "many"]) == 1
    assert "patch_stages must be 'auto' or a number" in capsys.readouterr().err


# TFLite Micro's arena head (BENCHMARKS.md), which holds CMSIS-NN's scratch
# too, so it compares like for like with a Cortex-M archive's pool
TFLM_HEAD = {"str_ww_ref_model.tflite": 6656, "pretrainedResnet_quant.tflite": 49152}


@pytest.mark.parametrize("fname", sorted(TFLM_HEAD))
def test_cortex_m_auto_below_tflm_with_the_dsp_scratch(fname: str) -> None:
    """For target "cortex-m" the pass compares plans with the DSP forms'
    scratch in the pool (PatchStages.isa), where the planner may give a
    layer at the peak a smaller scratch: the pool stays under 0.8x TFLite
    Micro's plan, and the outputs are the plain build's."""
    mod = model(fname)
    plain = codegen.compile(mod, name="m", target="cortex-m")
    patched = codegen.compile(mod, name="m", target="cortex-m", patch_stages="auto")
    fastest = codegen.compile(mod, name="m", target="cortex-m", patch_stages="auto",
                              shrink_scratch=False)
    assert patched.info["interface"]["scratch_isa"] == "arm_dsp"
    assert patched.info["patch_stages"]["bands"] >= 2
    assert patched.workspace_bytes <= 0.8 * TFLM_HEAD[fname]
    assert patched.workspace_bytes <= fastest.workspace_bytes
    ex = runtime.Executor(patched.module)
    for seed in range(2):
        xs = inputs_for(ex.inputs, seed)
        for got, want in zip(outputs(ex, xs), expected(plain, xs)):
            assert got.tobytes() == want.tobytes()


def test_patch_stages_isa_option_is_checked() -> None:
    from tvmnode import transform
    mod = model("str_ww_ref_model.tflite")
    with transform.PassContext(config={"PatchStages.isa": "avx9"}):
        with pytest.raises(ValueError, match="'PatchStages.isa' must be 'portable' or "
                                             "'arm_dsp', got 'avx9'"):
            transform.PatchStages()(mod)
