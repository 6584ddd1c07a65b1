"""Threads for the compiled host Modules (Module.set_threads): a host
archive calls its large convolutions and dense layers through the crt's
tn_crt_call_split, and a Module with threads runs them in parts on its
pool. On the trained int8 models the outputs with 2 and 3 threads are the
bytes one thread gives (and the executor's), run after run, with calls
really run in parts; bad counts are clear errors; a firmware archive keeps
its code as it was."""
import os
from typing import Any

import numpy as np
import pytest

from tvmnode import codegen, frontend, runtime

from test_module import built, model_path


@pytest.mark.parametrize("fname", ["pretrainedResnet_quant.tflite", "kws_ref_model.tflite"])
def test_threads_give_the_one_thread_bytes(fname: str, tmp_path_factory: Any) -> None:
    b = built(fname, tmp_path_factory, name=fname.split(".")[0].lower())
    with open(os.path.join(b.dir, "codegen", "host", "src",
                           "%s_lib0.c" % fname.split(".")[0].lower())) as f:
        cut = f.read().count("tn_crt_call_split(")
    assert cut > 0, "the host archive hands no call to the parallel hook"
    one = runtime.load_module(b.so)
    assert one.threads == 1
    rng = np.random.default_rng(7)
    info = one.inputs[0]
    xs = [rng.integers(-128, 128, info["shape"], dtype=np.int8) for _ in range(3)]
    want = [one.run(x)[0].copy() for x in xs]
    assert one.split_calls == 0
    for xs_case, outs in b.cases:  # the executor's outputs, for the same inputs
        np.testing.assert_array_equal(one.run(*xs_case)[0], outs[0])
    for threads in (2, 3):
        m = runtime.load_module(b.so, threads=threads)
        assert m.threads == threads
        for _ in range(2):
            for x, w in zip(xs, want):
                got = m.run(x)[0]
                assert got.tobytes() == w.tobytes(), "%d threads" % threads
                # every call the code hands over is cut (each has >= 2 rows
                # or blocks and reads input in every band)
                assert m.split_calls == cut
        for xs_case, outs in b.cases:
            np.testing.assert_array_equal(m.run(*xs_case)[0], outs[0])
        m.set_threads(1)
        assert m.threads == 1
        m.run(xs[0])
        assert m.split_calls == 0
        m.close()
    one.close()


def test_bad_thread_counts_are_named(tmp_path_factory: Any) -> None:
    b = built("kws_ref_model.tflite", tmp_path_factory, name="kws_ref_model")
    m = runtime.load_module(b.so)
    for bad in (0, -1, 65):
        with pytest.raises(ValueError, match=r"tn_module_set_threads: model 'kws_ref_model': "
                           r"argument n \(threads\): expected 1 to 64, got %d" % bad):
            m.set_threads(bad)
        with pytest.raises(ValueError, match=r"argument n \(threads\)"):
            runtime.load_module(b.so, threads=bad)
        assert m.threads == 1
    for wrong in (2.0, "2", True, None):
        with pytest.raises(TypeError, match="Module.set_threads: argument n: expected an int"):
            m.set_threads(wrong)  # type: ignore[arg-type]
    m.set_threads(np.int64(2))  # type: ignore[arg-type]
    assert m.threads == 2
    m.set_threads(64)  # the most: 63 workers, ended by the next call
    assert m.threads == 64
    m.set_threads(1)
    m.close()


def test_a_library_with_nothing_to_cut_starts_no_thread(tmp_path: Any) -> None:
    from tvmnode import ir
    from tvmnode.ir import op

    v = ir.var("x", shape=(1, 4))
    arch = codegen.compile(ir.IRModule.from_expr(ir.Function([v], op.nn.relu(v))), name="small")
    assert "tn_crt_call_split(" not in arch.files["codegen/host/src/small_lib0.c"]
    d = arch.export(str(tmp_path / "small"))
    del arch, v
    assert not os.path.exists(os.path.join(d, "runtime", "src", "split.c"))
    so = codegen.build_library(d, str(tmp_path / "libsmall.so"))
    m = runtime.load_module(so, threads=2)
    assert m.threads == 2
    out = m.run(np.array([[-1, 0, 1, 2]], "float32"))[0]
    assert out.tolist() == [[0, 0, 1, 2]]
    assert m.split_calls == 0
    m.close()


def test_firmware_archives_keep_their_code() -> None:
    mod = frontend.load_model(model_path("kws_ref_model.tflite"))
    for target in ("cortex-m", "wasm32"):
        arch = codegen.compile(mod, name="kws", target=target)
        assert "tn_crt_call_split" not in arch.files["codegen/host/src/kws_lib0.c"]
        assert "src/kernels/split.c" not in arch.runtime_sources
        del arch
    arch = codegen.compile(mod, name="kws", target="host")
    assert "src/kernels/split.c" in arch.runtime_sources
    del arch, mod


def test_cli_run_takes_a_library_and_its_threads(tmp_path: Any, capsys: Any,
                                                 monkeypatch: Any, tmp_path_factory: Any) -> None:
    """`tvmnode run LIB.so --threads n` runs the compiled library as a
    Module over n threads: the executor's bytes, with the calls cut."""
    from tvmnode import cli

    b = built("kws_ref_model.tflite", tmp_path_factory, name="kws_ref_model")
    xs, want = b.cases[0]
    np.save(tmp_path / "x.npy", xs[0])
    seen = []
    close = runtime.Module.close

    def noting_close(m: runtime.Module) -> None:  # what the command's Module did
        seen.append((m.threads, m.split_calls))
        close(m)

    monkeypatch.setattr(runtime.Module, "close", noting_close)
    for threads in (1, 2, 3):
        y = tmp_path / ("y%d.npy" % threads)
        assert cli.main(["run", b.so, "--input", str(tmp_path / "x.npy"), "--output", str(y),
                         "--threads", str(threads), "--repeat", "2"]) == 0
        out = capsys.readouterr().out
        # the library's name of the output (a C identifier)
        assert "identity int8 [1, 12]" in out and "latency      median" in out
        assert np.load(y).tobytes() == want[0].tobytes(), "%d threads" % threads
        assert seen[-1][0] == threads and (seen[-1][1] > 0) == (threads > 1), seen
    assert cli.main(["run", b.so, "--threads", "0"]) == 1
    err = capsys.readouterr().err
    assert ("tvmnode run: tn_module_set_threads: model 'kws_ref_model': argument n (threads): "
            "expected 1 to 64, got 0") in err
    assert cli.main(["run", b.so, "--name", "other"]) == 1
    assert "'other'" in capsys.readouterr().err
    assert cli.main(["run", b.so, "--shape", "x=1,2"]) == 1
    assert "apply to models, not to the compiled library" in capsys.readouterr().err
    assert cli.main(["run", model_path("kws_ref_model.tflite"), "--name", "kws"]) == 1
    assert "picks a model of a compiled library" in capsys.readouterr().err
