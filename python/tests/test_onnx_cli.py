"""ONNX models through the `tvmnode` command line: --shape NAME=DIMS on
info, import, run, compile, plan and check; a dynamic batch dimension
defaulted to 1 with a note; bad shapes named by input; every missing
operator listed, with its nodes, before any shape is needed; and
`tvmnode check` on .onnx models against onnxruntime."""
import json
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import tvmnode as tn  # noqa: E402
from tvmnode import cli  # noqa: E402
from tvmnode.frontend import (DynamicShapeWarning, ModelImportError,  # noqa: E402
                              UnsupportedOperatorError, from_onnx)

RNG = np.random.default_rng(7)


def _model(nodes: Sequence[Any], inputs: Dict[str, Any], outputs: Dict[str, Any],
           inits: Optional[Dict[str, np.ndarray]] = None, opset: int = 17) -> Any:
    """A model over `inputs` and `outputs` (name -> (element type, dims or
    None), dims may hold names for dynamic dimensions)."""
    ins = [helper.make_tensor_value_info(k, t, d) for k, (t, d) in inputs.items()]
    outs = [helper.make_tensor_value_info(k, t, d) for k, (t, d) in outputs.items()]
    g = helper.make_graph(list(nodes), "g", ins, outs,
                          [numpy_helper.from_array(a, k) for k, a in (inits or {}).items()])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def _dense_model(batch: Any = "N") -> Any:
    """x [batch, 4] -> Relu(x @ W + b) [batch, 3], float32."""
    w = RNG.standard_normal((4, 3)).astype("float32")
    b = RNG.standard_normal(3).astype("float32")
    nodes = [helper.make_node("MatMul", ["x", "w"], ["m"], name="mm"),
             helper.make_node("Add", ["m", "b"], ["a"], name="add"),
             helper.make_node("Relu", ["a"], ["y"], name="relu")]
    return _model(nodes, {"x": (TensorProto.FLOAT, [batch, 4])},
                  {"y": (TensorProto.FLOAT, [batch, 3])}, {"w": w, "b": b})


def _relu_model(dims: Optional[List[Any]], name: str = "x") -> Any:
    return _model([helper.make_node("Relu", [name], ["y"])], {name: (TensorProto.FLOAT, dims)},
                  {"y": (TensorProto.FLOAT, dims)})


def _int_model() -> Any:
    """x int32 [N, 5] -> Max(x, c), an integer output."""
    c = RNG.integers(-1000, 1000, 5).astype("int32")
    return _model([helper.make_node("Max", ["x", "c"], ["y"], name="max")],
                  {"x": (TensorProto.INT32, ["N", 5])}, {"y": (TensorProto.INT32, ["N", 5])},
                  {"c": c})


def _unsupported_model() -> Any:
    """Dynamic inputs and three operator types the importer lacks, used by
    four nodes (one unnamed), between supported ones."""
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("Det", ["r"], ["d1"], name="det1"),
             helper.make_node("Det", ["r"], ["d2"]),
             helper.make_node("Unique", ["r"], ["h"], name="hm"),
             helper.make_node("Frobnicate", ["h"], ["f"], name="frob", domain="com.example"),
             helper.make_node("Add", ["d1", "d2"], ["y"], name="add")]
    m = _model(nodes, {"x": (TensorProto.FLOAT, ["N", "K", 2, 2])},
               {"y": (TensorProto.FLOAT, None), "f": (TensorProto.FLOAT, None)})
    m.opset_import.append(helper.make_opsetid("com.example", 1))
    return m


def _save(m: Any, path: Path) -> str:
    onnx.save(m, str(path))
    return str(path)


# ---- the importer: shapes ------------------------------------------------------------

def test_dynamic_batch_defaults_to_one_with_a_warning() -> None:
    with pytest.warns(DynamicShapeWarning,
                      match=r"input 'x': dynamic batch dimension set to 1; use --shape x=B,4"):
        mod = from_onnx(_dense_model())
    io = tn.frontend.model_io(mod)
    assert io["inputs"] == [{"name": "x", "shape": [1, 4], "dtype": "float32"}]
    assert io["outputs"][0]["shape"] == [1, 3]
    # a batch given explicitly: no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mod = from_onnx(_dense_model(), shape={"x": [5, 4]})
    assert tn.frontend.model_io(mod)["inputs"][0]["shape"] == [5, 4]
    x = RNG.standard_normal((5, 4)).astype("float32")
    y = tn.runtime.Executor(mod)(x)
    assert isinstance(y, np.ndarray) and y.shape == (5, 3)


def test_a_declared_zero_dimension_is_zero_size() -> None:
    # ONNX defines dim_value 0 as a zero-size dimension, not an unknown one
    mod = from_onnx(_relu_model([0, 3]))
    assert tn.frontend.model_io(mod)["inputs"][0]["shape"] == [0, 3]
    # and runs: numpy gives a zero-size array strides of 0, and a step whose
    # output has no elements computes nothing
    y = np.asarray(tn.runtime.Executor(mod)(np.zeros((0, 3), np.float32)))
    assert y.shape == (0, 3) and y.dtype == np.float32
    with pytest.raises(TypeError, match=r"input 0 \('x'\): expected Tensor\[\(0, 3\), "
                                        r"float32\], got Tensor\[\(1, 3\)"):
        tn.runtime.Executor(mod)(np.zeros((1, 3), np.float32))



@pytest.mark.parametrize("dims,shown", [([3, "N"], r"\[3, N\]"), (["B", "T", 4], r"\[B, T, 4\]"),
                                        (["N"], r"\[N\]")])
def test_other_dynamic_dims_need_a_shape(dims: List[Any], shown: str) -> None:
    with pytest.raises(ModelImportError,
                       match=r"input 'x' has dynamic shape %s; give it with --shape x=" % shown):
        from_onnx(_relu_model(dims))


def test_an_input_without_a_shape_needs_one() -> None:
    with pytest.raises(ModelImportError, match="input 'x' has no declared shape.*--shape x="):
        from_onnx(_relu_model(None))
    mod = from_onnx(_relu_model(None), shape={"x": [2, 2]})
    assert tn.frontend.model_io(mod)["inputs"][0]["shape"] == [2, 2]


@pytest.mark.parametrize("given,match", [
    ([0, 4], r"shape \[0, 4\] given for input 'x' has dimension 0 = 0; dimensions must be "
             r"positive"),
    ([-1, 4], r"input 'x' has dimension 0 = -1; dimensions must be positive"),
    ([2, 4, 1], r"shape \[2, 4, 1\] given for input 'x' has rank 3, the input's declared "
                r"shape \[N, 4\] has rank 2"),
    ([2, 5], r"input 'x' does not fit its declared shape \[N, 4\]: dimension 1 is fixed to 4"),
    ([2, 1.5], r"the shape given for input 'x' must be a list of integers"),
    ("ab", r"the shape given for input 'x' must be a list of integers"),
])
def test_bad_shapes_name_the_input(given: Any, match: str) -> None:
    with pytest.raises(ModelImportError, match=match):
        from_onnx(_dense_model(), shape={"x": given})


def test_a_shape_for_an_unknown_input_lists_the_inputs() -> None:
    with pytest.raises(ModelImportError,
                       match=r"shape names 'image', which is not an input of the model "
                             r"\(inputs: 'x'\)"):
        from_onnx(_dense_model(), shape={"image": [1, 4]})
    # an initializer is not an input either
    with pytest.raises(ModelImportError, match="shape names 'w'"):
        from_onnx(_dense_model(), shape={"w": [4, 3]})


# ---- the importer: every missing operator, before shapes -----------------------------

def test_missing_operators_are_listed_at_once_before_shapes() -> None:
    with pytest.raises(UnsupportedOperatorError) as e:
        from_onnx(_unsupported_model())  # dims N and K are dynamic: not reached
    msg = str(e.value)
    assert ("3 operator types are not supported: Det (nodes: det1, #2), Unique (node: hm), "
            "com.example.Frobnicate (node: frob); supported: ") in msg, msg
    assert "dynamic" not in msg
    missing = e.value.missing  # type: ignore[attr-defined]
    assert [(m["operator"], m["count"], m["first"], m["nodes"]) for m in missing] == [
        ("Det", 2, 1, ["det1", "#2"]), ("Unique", 1, 3, ["hm"]),
        ("com.example.Frobnicate", 1, 4, ["frob"])]
    assert [m["output"] for m in missing] == ["d1", "h", "f"]


def test_many_nodes_of_one_missing_type_are_elided() -> None:
    nodes = [helper.make_node("Det", ["x"], ["d%d" % i], name="det%d" % i) for i in range(11)]
    m = _model(nodes, {"x": (TensorProto.FLOAT, [2, 2])},
               {"d%d" % i: (TensorProto.FLOAT, None) for i in range(11)})
    with pytest.raises(UnsupportedOperatorError,
                       match=r"Det \(nodes: det0, det1, det2, det3, det4, det5, det6, det7 "
                             r"and 3 more\)"):
        from_onnx(m)


# ---- the command line ----------------------------------------------------------------

def test_parse_shapes() -> None:
    assert cli.parse_shapes(None) is None
    assert cli.parse_shapes(["x=1,3,224,224", "y=2x5", "s=", "a=b=4"]) == {
        "x": [1, 3, 224, 224], "y": [2, 5], "s": [], "a=b": [4]}
    for bad, match in (("x", "expects NAME=DIMS"), ("=1,2", "expects NAME=DIMS"),
                       ("x=1,y", "must be integers")):
        with pytest.raises(ValueError, match=match):
            cli.parse_shapes([bad])
    with pytest.raises(ValueError, match="input 'x' twice"):
        cli.parse_shapes(["x=1", "x=2"])


@pytest.mark.parametrize("command", ["info", "import", "run", "compile", "plan", "check"])
def test_every_model_command_documents_shape(command: str,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main([command, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--shape NAME=DIMS fix an ONNX model's input shape, e.g. input=1,3,224,224 or " \
           "input=1x3x224x224" in text, text


def test_info_notes_the_batch_and_takes_shape(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    p = _save(_dense_model(), tmp_path / "dense.onnx")
    assert cli.main(["info", p]) == 0
    out, err = capsys.readouterr()
    assert "note: from_onnx: input 'x': dynamic batch dimension set to 1; use --shape x=B,4" \
        in err
    assert [ln.split() for ln in out.splitlines() if ln.startswith("  x ")] == [
        ["x", "1x4", "float32"]]
    assert cli.main(["info", p, "--shape", "x=6x4"]) == 0
    out, err = capsys.readouterr()
    assert "note:" not in err
    assert [ln.split() for ln in out.splitlines() if ln.startswith("  x ")] == [
        ["x", "6x4", "float32"]]
    assert [ln.split() for ln in out.splitlines() if ln.startswith("  y ")] == [
        ["y", "6x3", "float32"]]
    assert "MACs         %d" % (6 * 4 * 3) in out


def test_info_lists_missing_operators_of_a_dynamic_model(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = _save(_unsupported_model(), tmp_path / "unsupported.onnx")
    assert cli.main(["info", p]) == 1
    err = capsys.readouterr().err
    assert err.startswith("tvmnode info: from_onnx: 3 operator types are not supported: "
                          "Det (nodes: det1, #2), Unique (node: hm), "
                          "com.example.Frobnicate (node: frob)"), err


@pytest.mark.parametrize("command", ["info", "import", "run", "compile", "plan"])
def test_every_model_command_reports_bad_shapes(tmp_path: Path, command: str,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    p = _save(_dense_model(), tmp_path / "dense.onnx")
    extra = {"import": ["-o", "-"], "compile": ["-o", str(tmp_path / "out")]}.get(command, [])
    for shape, match in (("x=0,4", "input 'x' has dimension 0 = 0"),
                         ("x=-1,4", "input 'x' has dimension 0 = -1"),
                         ("x=1,4,1", "input 'x' has rank 3"),
                         ("z=1,4", "shape names 'z', which is not an input of the model "
                                   "(inputs: 'x')")):
        assert cli.main([command, p, *extra, "--shape", shape]) == 1
        err = capsys.readouterr().err
        assert err.startswith("tvmnode %s: from_onnx: " % command) and match in err, err


def test_shape_is_for_onnx_models_only(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    tfl = tmp_path / "m.tflite"
    tfl.write_bytes(b"")  # refused before it is read
    assert cli.main(["info", str(tfl), "--shape", "x=1,4"]) == 1
    assert "--shape applies to ONNX models only; '%s' is a TFLite model" % tfl \
        in capsys.readouterr().err
    with pytest.raises(ModelImportError, match="apply to ONNX models only"):
        tn.frontend.load_model(str(tfl), {"x": [1, 4]})
    tn_file = tmp_path / "m.tn"
    tn_file.write_text("")
    assert cli.main(["run", str(tn_file), "--shape", "x=1,4"]) == 1
    assert "--shape applies to ONNX models only" in capsys.readouterr().err


def test_run_import_compile_and_plan_take_shape(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    m = _dense_model()
    p = _save(m, tmp_path / "dense.onnx")
    x = RNG.standard_normal((3, 4)).astype("float32")
    np.save(tmp_path / "x.npy", x)
    out_npy = tmp_path / "y.npy"
    assert cli.main(["run", p, "--shape", "x=3,4", "--input", str(tmp_path / "x.npy"),
                     "--output", str(out_npy)]) == 0
    assert "y float32 [3, 3]" in capsys.readouterr().out
    w = numpy_helper.to_array(m.graph.initializer[0])
    b = numpy_helper.to_array(m.graph.initializer[1])
    np.testing.assert_allclose(np.load(out_npy), np.maximum(x @ w + b, 0), rtol=1e-5,
                               atol=1e-6)
    # without --shape the batch is 1, so a batch of 3 does not fit
    assert cli.main(["run", p, "--input", str(tmp_path / "x.npy")]) == 2
    assert "input 'x' is float32 [1, 4]" in capsys.readouterr().err

    assert cli.main(["import", p, "--shape", "x=3x4", "-o", "-"]) == 0
    assert "Tensor[(3, 4), float32]" in capsys.readouterr().out

    assert cli.main(["compile", p, "--shape", "x=3,4", "-o", str(tmp_path / "arch"),
                     "--io-in-pool"]) == 0
    out = capsys.readouterr().out
    assert "inputs + outputs     %8d bytes" % ((3 * 4 + 3 * 3) * 4) in out, out
    assert cli.main(["plan", p, "--shape", "x=3,4"]) == 0
    assert "lower bound:" in capsys.readouterr().out


# ---- tvmnode check on .onnx models ---------------------------------------------------

@pytest.fixture(scope="module")
def checked(tmp_path_factory: Any) -> Dict[str, Any]:
    """One `tvmnode check` over a folder of .onnx models (with --shape for
    one of them): its exit status, output and JSON results by name."""
    pytest.importorskip("onnxruntime")
    d = tmp_path_factory.mktemp("check_onnx")
    _save(_dense_model(), d / "dense.onnx")
    _save(_int_model(), d / "int_max.onnx")
    _save(_relu_model([3, "T"], "seq"), d / "seq_relu.onnx")
    _save(_unsupported_model(), d / "unsupported.onnx")
    out = d / "results.json"
    proc = subprocess.run([sys.executable, "-m", "tvmnode", "check", str(d), "--json", str(out),
                           "--shape", "seq=3,5", "--shape", "nobody=1"],
                          capture_output=True, text=True, timeout=900)
    with open(out, encoding="utf-8") as f:
        results = {r["name"]: r for r in json.load(f)["models"]}
    return {"rc": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr,
            "results": results}


def test_check_onnx_models_match_onnxruntime(checked: Dict[str, Any]) -> None:
    for name in ("int_max.onnx", "seq_relu.onnx", "dense.onnx"):
        r = checked["results"][name]
        assert r["stage"] == "done" and "crash" not in r, r
        assert r["reference"] == "onnxruntime", r
        assert (r["import"], r["run"], r["match"], r["compile"], r["c_equal"]) == (
            True, True, True, True, True), r
        assert r["c_max_diff"] == 0 and r["stateful"] == []
        assert r["workspace_bytes"] > 0 and "ram_ratio" not in r
    assert checked["results"]["int_max.onnx"]["max_diff"] == 0  # integers: equal
    assert checked["results"]["int_max.onnx"]["outputs"] == [{"shape": [1, 5],
                                                              "dtype": "int32"}]
    dense = checked["results"]["dense.onnx"]
    assert 0 <= dense["max_diff"] <= 1e-5 * 10
    # --shape seq=3,5 applies to the model with that input only
    seq = checked["results"]["seq_relu.onnx"]
    assert seq["shape"] == {"seq": [3, 5]} and seq["inputs"][0]["shape"] == [3, 5]
    assert "notes" not in seq and "shape" not in dense
    assert checked["results"]["int_max.onnx"]["notes"] == [
        "from_onnx: input 'x': dynamic batch dimension set to 1; use --shape x=B,5 "
        "(from_onnx's shape={'x': [B, 5]}) for another batch"]


def test_check_onnx_unsupported_model_lists_what_it_lacks(checked: Dict[str, Any]) -> None:
    r = checked["results"]["unsupported.onnx"]
    assert r["stage"] == "done" and "crash" not in r, r
    assert r["import"] is False and r["run"] is None and r["match"] is None
    assert r["operators"] == {"Relu": 1, "Det": 2, "Unique": 1, "com.example.Frobnicate": 1,
                              "Add": 1}
    assert [(m["operator"], m["count"], m["nodes"]) for m in r["missing"]] == [
        ("Det", 2, ["det1", "#2"]), ("Unique", 1, ["hm"]),
        ("com.example.Frobnicate", 1, ["frob"])]
    row = next(ln for ln in checked["stdout"].splitlines() if ln.startswith("unsupported.onnx"))
    assert row.endswith("missing Det x2, Unique x1, com.example.Frobnicate x1")


def test_check_onnx_table_and_shape_names(checked: Dict[str, Any]) -> None:
    lines = checked["stdout"].splitlines()
    line = next(ln for ln in lines if ln.startswith("int_max.onnx"))
    row = line.split()
    assert row[1:5] == ["yes", "yes", "yes", "0"] and row[5:8] == ["yes", "yes", "ort"]
    assert line.endswith("  input 'x': dynamic batch dimension set to 1")
    assert next(ln for ln in lines if ln.startswith("seq_relu.onnx")).endswith("-      -  ")
    assert "tvmnode check: --shape names 'nobody', an input of none of the ONNX models" \
        in checked["stderr"]


def test_shape_arithmetic_on_a_dynamic_batch_folds_at_import() -> None:
    # the exporters' "flatten all but the batch" chain: Shape -> Gather ->
    # Unsqueeze -> Concat -> Reshape, over a tensor of a dynamic batch
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("Shape", ["r"], ["s"], name="shape"),
             helper.make_node("Gather", ["s", "zero"], ["n"], name="batch", axis=0),
             helper.make_node("Unsqueeze", ["n", "axes"], ["n1"], name="unsq"),
             helper.make_node("Concat", ["n1", "minus1"], ["target"], name="cat", axis=0),
             helper.make_node("Reshape", ["r", "target"], ["y"], name="flat")]
    m = _model(nodes, {"x": (TensorProto.FLOAT, ["N", 2, 3])}, {"y": (TensorProto.FLOAT, ["N", 6])},
               {"zero": np.array(0, np.int64), "axes": np.array([0], np.int64),
                "minus1": np.array([-1], np.int64)})
    for shape, batch in ((None, 1), ({"x": [3, 2, 3]}, 3)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DynamicShapeWarning)
            mod = from_onnx(m, shape=shape)
        text = mod.astext()
        assert "take(" not in text and "concatenate(" not in text  # all folded
        x = RNG.standard_normal((batch, 2, 3)).astype("float32")
        np.testing.assert_array_equal(tn.runtime.Executor(mod)(x),
                                      np.maximum(x, 0).reshape(batch, 6))


def _sr_model() -> Any:
    """y = If(sr == 16000) then x * 2 else x * 3; sr an int64 scalar input."""
    def branch(name: str, k: float) -> Any:
        return helper.make_graph(
            [helper.make_node("Mul", ["x", name + "_k"], [name + "_y"])], name, [],
            [helper.make_tensor_value_info(name + "_y", TensorProto.FLOAT, None)],
            [numpy_helper.from_array(np.array(k, np.float32), name + "_k")])
    nodes = [helper.make_node("Equal", ["sr", "sr16k"], ["c"]),
             helper.make_node("If", ["c"], ["y"], name="by_rate",
                              then_branch=branch("hi", 2.0), else_branch=branch("lo", 3.0))]
    return _model(nodes, {"x": (TensorProto.FLOAT, ["N", 4]), "sr": (TensorProto.INT64, [])},
                  {"y": (TensorProto.FLOAT, ["N", 4])},
                  {"sr16k": np.array(16000, np.int64)})


def test_value_fixes_an_input_on_every_model_command(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    p = _save(_sr_model(), tmp_path / "sr.onnx")
    x = RNG.standard_normal((1, 4)).astype("float32")
    np.save(tmp_path / "x.npy", x)
    for sr, k in ((16000, 2.0), (8000, 3.0)):
        out_npy = tmp_path / ("y%d.npy" % sr)
        assert cli.main(["run", p, "--value", "sr=%d" % sr, "--input",
                         str(tmp_path / "x.npy"), "--output", str(out_npy)]) == 0
        np.testing.assert_array_equal(np.load(out_npy), x * np.float32(k))
    capsys.readouterr()
    assert cli.main(["info", p, "--value", "sr=16000"]) == 0
    out = capsys.readouterr().out
    assert "  sr " not in out and [ln.split()[0] for ln in out.splitlines()
                                   if ln.startswith("  x ")] == ["x"]
    assert cli.main(["compile", p, "--value", "sr=8000", "-o", str(tmp_path / "arch")]) == 0
    assert cli.main(["plan", p, "--value", "sr=8000"]) == 0
    capsys.readouterr()
    # without it the If cannot be decided at import
    assert cli.main(["run", p]) == 1
    assert "'by_rate' (If): is supported only when its condition 'c' is known at import" \
        in capsys.readouterr().err
    for bad, match in (("sr", "--value expects NAME=V[,V...] (e.g. sr=16000), got 'sr'"),
                       ("sr=fast", "--value sr=fast: the values must be numbers"),
                       ("sr=1.5", "must be numbers that int64 holds exactly")):
        assert cli.main(["run", p, "--value", bad]) == 1
        assert match in capsys.readouterr().err


def test_parse_values() -> None:
    got = cli.parse_values(["sr=16000", "w=1.5,2", "n=-3,4"])
    assert got is not None
    assert got["sr"].dtype.kind == "i" and got["sr"].shape == () and int(got["sr"]) == 16000
    assert got["w"].tolist() == [1.5, 2.0] and got["n"].tolist() == [-3, 4]
    assert cli.parse_values(None) is None
    with pytest.raises(ValueError, match="--value gives input 'sr' twice"):
        cli.parse_values(["sr=1", "sr=2"])
