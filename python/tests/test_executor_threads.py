"""The executor's threads option on the trained models: with 2 and 3
threads the int8 models give the bytes one thread gives, and the float ones
agree within rounding, run after run; bad counts are clear errors."""
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tvmnode as tn
from tvmnode import codegen, frontend

MODELS = Path(os.environ.get("TVMNODE_MODELS", Path(__file__).resolve().parents[3] / "shared" / "models"))
INT8 = ["kws_ref_model.tflite", "pretrainedResnet_quant.tflite", "ad01_int8.tflite",
        "str_ww_ref_model.tflite"]
FLOAT = ["kws_ref_model_float32.tflite", "pretrainedResnet.tflite", "ad01_fp32.tflite"]

pytestmark = pytest.mark.skipif(not MODELS.is_dir(), reason="no trained models (TVMNODE_MODELS)")


def host_module(name: str) -> Any:
    """The model as the host archive compiles it (the same passes)."""
    return codegen._pipeline(frontend.from_tflite(MODELS / name), "host")


def random_inputs(ex: Any, n: int, seed: int) -> list:
    rng = np.random.default_rng(seed)
    info = ex.inputs[0]
    if info["dtype"] == "int8":
        return [rng.integers(-128, 128, info["shape"], dtype=np.int8) for _ in range(n)]
    return [rng.standard_normal(info["shape"]).astype(np.float32) for _ in range(n)]


@pytest.mark.parametrize("name", INT8 + FLOAT)
def test_threads_give_the_one_thread_outputs(name: str) -> None:
    mod = host_module(name)
    one = tn.runtime.Executor(mod)
    assert one.threads == 1 and one.stats()["split_steps"] == 0
    xs = random_inputs(one, 3, seed=5)
    want = [np.asarray(one(x)).copy() for x in xs]
    for threads in (2, 3):
        ex = tn.runtime.Executor(mod, threads=threads)
        assert ex.threads == threads
        stats = ex.stats()
        assert stats["threads"] == threads
        # every model has a convolution or dense layer large enough to cut
        assert stats["split_steps"] > 0, stats
        for _ in range(2):
            for x, w in zip(xs, want):
                got = np.asarray(ex(x))
                if name in INT8:
                    np.testing.assert_array_equal(got, w)
                else:
                    span = float(np.max(w) - np.min(w)) or 1.0
                    np.testing.assert_allclose(got, w, rtol=0, atol=1e-6 * span)


def test_threads_can_change_and_bad_counts_are_named() -> None:
    mod = host_module("kws_ref_model.tflite")
    ex = tn.runtime.Executor(mod)
    x = random_inputs(ex, 1, seed=1)[0]
    want = np.asarray(ex(x)).copy()
    for n in (2, 1, 3, 1):
        ex.set_threads(n)
        assert ex.threads == n
        np.testing.assert_array_equal(np.asarray(ex(x)), want)
    for bad in (0, -1, 65, 2**40):
        with pytest.raises(ValueError, match=r"tn_program_set_threads: argument n \(threads\): "
                           r"expected 1 to 64, got %d" % bad):
            ex.set_threads(bad)
        with pytest.raises(ValueError, match="expected 1 to 64"):
            tn.runtime.Executor(mod, threads=bad)
    for wrong in (2.0, "2", True):
        with pytest.raises(TypeError, match="Executor.set_threads: argument n: expected an int"):
            ex.set_threads(wrong)  # type: ignore[arg-type]
    # a bool is not a count, even at the default's value
    with pytest.raises(TypeError, match="Executor.set_threads: argument n: expected an int"):
        tn.runtime.Executor(mod, threads=True)
    assert ex.threads == 1
    # numpy's integers are counts
    ex.set_threads(np.int64(2))  # type: ignore[arg-type]
    assert ex.threads == 2
    ex.set_threads(1)
