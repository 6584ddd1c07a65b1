"""Model files and module attributes that lie about their quantization
(issue 32, finding 2): zero points outside their tensor's range and scales
that are not positive finite numbers are refused where they enter, naming
the tensor and the value, instead of running as another model."""
import os
import shutil
from typing import Any

import numpy as np
import pytest

import tvmnode as tn
from tvmnode import cli, codegen, ir
from tvmnode.ir import op

pytest.importorskip("tflite")
from tflite_build import TensorSpec, single_op_model  # noqa: E402

from tvmnode.frontend import ModelImportError, from_onnx, from_tflite  # noqa: E402


def _relu_model(dtype: str, scale: float, zp: int) -> bytes:
    return single_op_model(
        "RELU", inputs=[TensorSpec((1, 4), dtype, quant=(0.5, 0), name="x")],
        outputs=[TensorSpec((1, 4), dtype, quant=(scale, zp), name="y")])


@pytest.mark.parametrize("dtype,zp", [
    ("int8", 2**62), ("int8", 2**32 + 89), ("int8", -2**31), ("int8", 128), ("int8", -129),
    ("uint8", -1), ("uint8", 256), ("int16", 32768), ("int16", -2**63),
])
def test_tflite_zero_point_outside_its_dtype(dtype: str, zp: int) -> None:
    # 2^62 ran as 0 and 2^32 + 89 as 89 while the module's `inputs`
    # attribute reported the original; -2^31 reached a negation in int32.
    with pytest.raises(ModelImportError, match=r"tensor 1 'y' \(%s\) has zero point %d; a %s "
                       r"tensor's zero points lie in" % (dtype, zp, dtype)):
        from_tflite(_relu_model(dtype, 0.25, zp))


@pytest.mark.parametrize("zp", [-128, 127])
def test_tflite_zero_point_at_the_edges_imports(zp: int) -> None:
    mod = from_tflite(_relu_model("int8", 0.25, zp))
    assert [int(z) for z in mod.attrs["outputs"][0]["zero_point"]] == [zp]


@pytest.mark.parametrize("scale", [np.inf, -np.inf, np.nan, 0.0, -0.5])
def test_tflite_scale_not_positive_finite(scale: float) -> None:
    with pytest.raises(ModelImportError, match=r"tensor 1 'y' has a scale that is not a "
                       r"positive finite number"):
        from_tflite(_relu_model("int8", scale, 0))


def test_onnx_int32_zero_point_without_a_negation() -> None:
    pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper
    inits = [numpy_helper.from_array(np.array(0.5, "float32"), "s"),
             numpy_helper.from_array(np.array(-2**31, "int32"), "z")]
    g = helper.make_graph(
        [helper.make_node("DequantizeLinear", ["x", "s", "z"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.INT32, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)])
    with pytest.raises(ModelImportError, match=r"zero point -2147483648"):
        from_onnx(m)
    for scale in (np.inf, 0.0, np.nan):
        inits[0] = numpy_helper.from_array(np.array(scale, "float32"), "s")
        inits[1] = numpy_helper.from_array(np.array(0, "int32"), "z")
        g = helper.make_graph(
            [helper.make_node("DequantizeLinear", ["x", "s", "z"], ["y"])], "g",
            [helper.make_tensor_value_info("x", TensorProto.INT32, [4])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])], inits)
        with pytest.raises(ModelImportError, match=r"scale must be positive and finite"):
            from_onnx(helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)]))


def _identity_module() -> ir.IRModule:
    x = ir.var("x", shape=(1, 4), dtype="float32")
    return ir.IRModule.from_expr(ir.Function([x], op.nn.relu(x)))


@pytest.mark.parametrize("scale,zp", [(float("inf"), 0), (float("nan"), 0), (-1.0, 0),
                                      (0.5, 2**40), (0.5, -2**31)])
def test_compile_refuses_io_attributes_it_cannot_write(scale: float, zp: int) -> None:
    # an infinite scale came out as a bare `inf` in metadata.json, which
    # then failed to parse
    mod = _identity_module().with_attr(
        "inputs", [{"name": "x", "scale": [scale], "zero_point": [zp]}])
    with pytest.raises(ValueError, match=r"module attribute 'inputs'\[0\]: scale .* and zero "
                       r"point %d; expected a positive finite scale" % zp):
        codegen.compile(mod, "m")


def test_compile_keeps_valid_io_attributes() -> None:
    mod = _identity_module().with_attr(
        "inputs", [{"name": "x", "scale": [0.5], "zero_point": [-3]}])
    arch = codegen.compile(mod, "m")
    assert arch.info["inputs"][0]["scale"] == 0.5
    assert arch.info["inputs"][0]["zero_point"] == -3


def test_lowering_refuses_a_zero_point_it_cannot_negate() -> None:
    # a qnn call built by hand (or loaded) with INT32_MIN as its zero
    # point: the lowering negated it in int32 (undefined behaviour)
    x = ir.var("x", shape=(1, 4), dtype="int32")
    y = op.qnn.requantize(x, ir.const(np.float32(0.5)), ir.const(np.int32(-2**31)),
                          ir.const(np.float32(0.25)), ir.const(np.int32(0)), out_dtype="int8")
    mod = ir.IRModule.from_expr(ir.Function([x], y))
    with pytest.raises(ValueError, match=r"qnn\.requantize: argument 2 \(input_zero_point\) "
                       r"holds -2147483648 at 0; expected a whole number within "
                       r"\+-2147483647"):
        tn.runtime.Executor(mod)


# ---- finding 5: the text parser accepts what JSON loading accepts ----------

ILL_TYPED = """fn (%x: Tensor[(1, 4), float32], %b: Tensor[(3,), float32]) {
  let %y = nn.relu(%x);
  nn.bias_add(%y, %b)
}
"""


def test_text_parser_runs_the_well_formed_check() -> None:
    # the call behind a let was not typed while parsing, so this parsed and
    # failed later, wherever it was used
    with pytest.raises(ValueError, match=r"a call of nn\.bias_add does not type: nn\.bias_add: "
                       r"argument 1 \(bias\)"):
        ir.parse(ILL_TYPED)
    # the well-typed module still parses, and a parameter without a type
    # leaves its uses untyped as before
    ir.parse(ILL_TYPED.replace("(3,)", "(4,)"))
    ir.parse("fn (%x, %b: Tensor[(3,), float32]) {\n  let %z = nn.bias_add(%x, %b);\n  %z\n}\n")


# ---- finding 10: one-line CLI errors -----------------------------------------

MODELS = os.environ.get("TVMNODE_MODELS", os.path.join(os.path.dirname(__file__), "..", "..",
                                                       "..", "shared", "models"))
AD = os.path.join(MODELS, "ad01_int8.tflite")


def _cli_error(capsys: pytest.CaptureFixture[str], argv: list) -> str:
    assert cli.main(argv) == 1
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    return err


def test_cli_errors_are_one_line(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    if not os.path.exists(AD):
        pytest.skip("no bundled models at %s" % MODELS)
    bad = tmp_path / "bad.txt"
    bad.write_text(ILL_TYPED)
    assert "does not type: nn.bias_add" in _cli_error(capsys, ["info", str(bad)])
    # a TFLite file without its extension, and bytes that are no model
    noext = tmp_path / "model"
    shutil.copy(AD, noext)
    assert "holds a TFLite model" in _cli_error(capsys, ["info", str(noext)])
    rnd = tmp_path / "rnd"
    rnd.write_bytes(bytes(range(128, 256)))
    assert "is not a model this command reads" in _cli_error(capsys, ["info", str(rnd)])
    out = str(tmp_path / "out")
    assert "does not fit in a 64-bit" in _cli_error(
        capsys, ["compile", AD, "-o", out, "--pool", "sram:99999999999999999999"])
    assert "'no.such.op', which is not a registered operator" in _cli_error(
        capsys, ["compile", AD, "-o", out, "--device", "npu:no.such.op"])
    # an operator without a kernel for its types
    nok = tmp_path / "nok.txt"
    nok.write_text("fn (%x: Tensor[(4,), int8]) {\n  exp(cast(%x, dtype=\"float16\"))\n}\n")
    assert "no kernel" in _cli_error(capsys, ["compile", str(nok), "-o", out])


def test_executor_copies_a_strided_array_as_module_run_does() -> None:
    x = ir.var("x", shape=(2, 4), dtype="float32")
    ex = tn.runtime.Executor(ir.IRModule.from_expr(ir.Function([x], op.nn.relu(x))))
    a = (np.arange(16, dtype="float32").reshape(2, 8) - 8)[:, ::2]
    assert not a.flags.c_contiguous
    np.testing.assert_array_equal(ex(a), np.maximum(a, 0))


# ---- finding 8: paths and names -------------------------------------------------

def test_load_module_takes_a_bare_name_as_a_local_file(tmp_path: Any,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    # "libz.so.1" opened zlib from the system's library path (running its
    # constructors) before saying it held no model
    monkeypatch.chdir(tmp_path)
    with pytest.raises(OSError, match=r"cannot load 'libz\.so\.1': \./libz\.so\.1: cannot open"):
        tn.runtime.load_module("libz.so.1")


def test_nul_bytes_in_paths_and_names_are_refused() -> None:
    with pytest.raises(ValueError, match="the path holds a NUL byte at 3"):
        tn.runtime.load_module("lib\x00.so")
    with pytest.raises(ValueError, match="the model name holds a NUL byte at 1"):
        tn.runtime.load_module("/nonexistent/lib.so", "k\x00ws")
    with pytest.raises(ValueError, match="the model name holds a NUL byte at 0"):
        tn.runtime.system_module("\x00")


# ---- finding 9: parameter files --------------------------------------------------

def _resum(b: bytearray) -> bytes:
    import struct
    import zlib
    b[-4:] = struct.pack("<I", zlib.crc32(bytes(b[:-4])))
    return bytes(b)


def test_params_with_a_repeated_name_are_refused() -> None:
    # the last of two same-named tensors won silently
    b = bytearray(codegen.save_params({"wa": np.zeros(2, "float32"),
                                       "wb": np.ones(2, "float32")}))
    i = b.index(b"wb")
    b[i:i + 2] = b"wa"
    with pytest.raises(ValueError, match="entries 0 and 1 are both named 'wa'"):
        codegen.load_params(_resum(b))


def test_params_with_a_negative_dimension_are_refused() -> None:
    # numpy would read -1 as a wildcard; the one loader (C) refuses it
    b = bytearray(codegen.save_params({"w": np.zeros((2, 3), "float32")}))
    i = b.index((3).to_bytes(8, "little"))
    b[i:i + 8] = (-1).to_bytes(8, "little", signed=True)
    with pytest.raises(ValueError, match="dimension 1 is negative"):
        codegen.load_params(_resum(b))


# ---- finding 4: size ---------------------------------------------------------------

def test_a_chain_deeper_than_the_old_nesting_limit_runs_and_compiles() -> None:
    # 30,000 calls nested in one expression (no FuseOps, no lets): the
    # lowering recursed per call and stopped at 10,000; the scheduler
    # scanned every step for each pick
    x = ir.var("x", shape=(1, 4), dtype="float32")
    y: Any = x
    n = 30000
    for i in range(n):
        y = op.nn.relu(y) if i % 2 else op.add(y, x)
    mod = ir.IRModule.from_expr(ir.Function([x], y))
    a = np.array([[1, -2, 3, -4]], "float32")
    # each add then relu: y <- relu(y + x), from y = x
    np.testing.assert_array_equal(tn.runtime.Executor(mod)(a),
                                  np.maximum(a, 0) * (n // 2 + 1))
    arch = codegen.compile(mod, "deep", run_passes=False)
    assert arch.info["memory"]["functions"]["main"][0]["workspace_size_bytes"] <= 64


def test_nesting_inside_a_let_value_is_still_bounded() -> None:
    # the one part that still recurses (a let whose value is a let ...):
    # a clear error past 10,000, never a stack overflow; below, it runs
    x = ir.var("x", shape=(2,), dtype="float32")
    for depth, ok in ((3000, True), (12000, False)):
        e: Any = x
        for i in range(depth):
            v = ir.var("v%d" % i, shape=(2,), dtype="float32")
            e = ir.Let(v, op.nn.relu(e), v)
        mod = ir.IRModule.from_expr(ir.Function([x], e))
        if ok:
            np.testing.assert_array_equal(tn.runtime.Executor(mod)(np.array([1, -1], "float32")),
                                          [1, 0])
        else:
            with pytest.raises(ValueError, match="expressions nest deeper than 10000"):
                tn.runtime.Executor(mod)


def test_onnx_input_too_large_for_the_kernels_is_refused_before_shape_inference() -> None:
    # found by fuzz_models.py: a declared int64[2^31] input of Slice kept
    # onnx's shape inference (called by the importer) busy for minutes
    pytest.importorskip("onnx")
    from onnx import TensorProto, helper
    ins = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [20, 10, 5])] + [
        helper.make_tensor_value_info(n, TensorProto.INT64, [2**31 if n == "ends" else 2])
        for n in ("starts", "ends", "axes", "steps")]
    g = helper.make_graph([helper.make_node("Slice", ["x", "starts", "ends", "axes", "steps"],
                                            ["y"])], "g", ins,
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    with pytest.raises(ModelImportError, match=r"input 'ends' of shape \[2147483648\] has "
                       r"2147483648 elements; the kernels take at most 2147483647"):
        from_onnx(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]))
