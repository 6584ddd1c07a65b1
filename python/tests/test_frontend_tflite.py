"""The TFLite importer on the trained MLPerf Tiny models, against the two
reference runtimes in this process: TFLite Micro (the exact reference: int8
outputs identical on every element) and LiteRT with its reference kernels
(no further from us than TFLite Micro is from it). Float models agree with
both within 1e-4 of the output's range. Also: round trips through the text
format and JSON, the model's described inputs and outputs, and files that
are corrupt, truncated or use operators we cannot map."""
import os
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

import numpy as np
import pytest

import tvmnode as tn
from tvmnode import frontend, ir, transform

tflm_runtime = pytest.importorskip("tflite_micro.python.tflite_micro.runtime")
litert = pytest.importorskip("ai_edge_litert.interpreter")

MODELS = Path(os.environ.get("TVMNODE_MODELS",
                             Path(__file__).resolve().parents[2].parent / "shared" / "models"))
INT8 = ["kws_ref_model.tflite", "pretrainedResnet_quant.tflite", "ad01_int8.tflite",
        "str_ww_ref_model.tflite"]
FLOAT = ["pretrainedResnet.tflite", "ad01_fp32.tflite"]
HYBRID = ["kws_ref_model_float32.tflite"]  # float activations, int8 conv filters
INPUTS = 20

if not MODELS.is_dir():
    pytest.skip("the trained models are not at %s (set TVMNODE_MODELS)" % MODELS,
                allow_module_level=True)


def model_bytes(name: str) -> bytes:
    return (MODELS / name).read_bytes()


def tflm(name: str) -> Callable[[np.ndarray], np.ndarray]:
    it = tflm_runtime.Interpreter.from_bytes(model_bytes(name))

    def run(x: np.ndarray) -> np.ndarray:
        it.set_input(x, 0)
        it.invoke()
        return np.array(it.get_output(0))
    return run


def litert_ref(name: str) -> Callable[[np.ndarray], np.ndarray]:
    it = litert.Interpreter(model_path=str(MODELS / name), num_threads=1,
                            experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF)
    it.allocate_tensors()
    i, o = it.get_input_details()[0]["index"], it.get_output_details()[0]["index"]

    def run(x: np.ndarray) -> np.ndarray:
        it.set_tensor(i, x)
        it.invoke()
        return np.array(it.get_tensor(o))
    return run


def inputs(mod: ir.IRModule, n: int, seed: int) -> List[np.ndarray]:
    info = frontend.model_io(mod)["inputs"][0]
    rng = np.random.default_rng(seed)
    if info["dtype"] == "int8":
        return [rng.integers(-128, 128, info["shape"], dtype=np.int8) for _ in range(n)]
    return [rng.standard_normal(info["shape"]).astype(np.float32) for _ in range(n)]


def executors(mod: ir.IRModule) -> Dict[str, Any]:
    return {"unfused": tn.runtime.Executor(mod),
            "fused": tn.runtime.Executor(transform.FuseOps()(mod))}


@pytest.mark.parametrize("name", INT8)
def test_int8_models_match_tflite_micro_exactly(name: str) -> None:
    mod = frontend.from_tflite(MODELS / name)
    exs = executors(mod)
    ref, lrt = tflm(name), litert_ref(name)
    micro_vs_litert = ours_vs_litert = 0
    for x in inputs(mod, INPUTS, seed=7):
        want = ref(x)
        assert want.dtype == np.int8
        for how, ex in exs.items():
            got = ex(x)
            assert got.dtype == np.int8 and got.shape == want.shape
            diff = np.flatnonzero(got != want)
            assert diff.size == 0, "%s (%s): %d elements differ from TFLite Micro, first at %d: " \
                "%d vs %d" % (name, how, diff.size, diff[0], got.flat[diff[0]], want.flat[diff[0]])
        other = lrt(x).astype(np.int32)
        micro_vs_litert = max(micro_vs_litert, int(np.abs(want.astype(np.int32) - other).max()))
        ours_vs_litert = max(ours_vs_litert, int(np.abs(exs["fused"](x).astype(np.int32)
                                                        - other).max()))
    assert ours_vs_litert <= micro_vs_litert


@pytest.mark.parametrize("name", FLOAT)
def test_float_models_match_both_references(name: str) -> None:
    mod = frontend.from_tflite(MODELS / name)
    exs = executors(mod)
    refs = {"tflite-micro": tflm(name), "litert": litert_ref(name)}
    for x in inputs(mod, INPUTS, seed=8):
        for rname, ref in refs.items():
            want = ref(x).astype(np.float64)
            scale = max(float(np.abs(want).max()), 1e-30)
            for how, ex in exs.items():
                got = ex(x).astype(np.float64)
                err = float(np.abs(got - want).max()) / scale
                assert err <= 1e-4, "%s %s vs %s: %.3g of the output range" % (name, how, rname,
                                                                              err)


@pytest.mark.parametrize("name", HYBRID)
def test_hybrid_model_matches_litert(name: str) -> None:
    """TFLite Micro cannot run hybrid layers; LiteRT quantizes their
    activations at run time, and so do we, as it does (its hybrid
    convolutions here have one filter scale each): the outputs agree to
    float32 rounding, not just to the quantization's error."""
    mod = frontend.from_tflite(MODELS / name)
    ref = litert_ref(name)
    for how, ex in executors(mod).items():
        for x in inputs(mod, 10, seed=9):
            got, want = ex(x), ref(x)
            scale = max(float(np.abs(want).max()), 1e-30)
            err = float(np.abs(got - want).max()) / scale
            assert err <= 1e-5, "%s %s: %.3g of the output range" % (name, how, err)
            assert np.argmax(got) == np.argmax(want)


def test_model_io_is_described() -> None:
    mod = frontend.from_tflite(MODELS / "kws_ref_model.tflite")
    io = frontend.model_io(mod)
    (i,), (o,) = io["inputs"], io["outputs"]
    assert i["name"] == "input_1" and i["shape"] == [1, 49, 10, 1] and i["dtype"] == "int8"
    assert i["zero_point"] == [83] and abs(i["scale"][0] - 0.5847029) < 1e-6
    assert o["shape"] == [1, 12] and o["dtype"] == "int8"
    assert str(mod.attrs["source"]) == "tflite:kws_ref_model.tflite"
    # the executor sees the same signature
    ex = tn.runtime.Executor(mod)
    assert ex.inputs[0]["shape"] == (1, 49, 10, 1) and ex.outputs[0]["dtype"] == "int8"


@pytest.mark.parametrize("name", ["str_ww_ref_model.tflite", "ad01_fp32.tflite"])
def test_round_trips(name: str) -> None:
    mod = frontend.from_tflite(model_bytes(name))
    ir.assert_structural_equal(ir.parse(mod.astext()), mod)
    ir.assert_structural_equal(tn.load_json(tn.save_json(mod)), mod)


def test_no_transposes_and_nhwc_kept() -> None:
    mod = frontend.from_tflite(MODELS / "pretrainedResnet_quant.tflite")
    names: List[str] = []

    def visit(e: Any) -> None:
        if isinstance(e, ir.Call) and isinstance(e.op, ir.Op):
            names.append(e.op.name)
            if e.op.name == "qnn.conv2d":
                assert str(e.attrs.data_layout) == "NHWC"
    ir.post_order_visit(mod["main"].body, visit)
    assert "transpose" not in names
    assert names.count("qnn.conv2d") == 9 and names.count("qnn.add") == 3


# ---- bad files --------------------------------------------------------------

def test_not_a_model() -> None:
    with pytest.raises(frontend.ModelImportError, match="not a TFLite model"):
        frontend.from_tflite(b"PK\x03\x04 this is a zip file, not a model")
    with pytest.raises(frontend.ModelImportError, match="too short"):
        frontend.from_tflite(b"TFL")


def _import_or_error(buf: bytes) -> Optional[str]:
    try:
        frontend.from_tflite(buf)
    except frontend.ModelImportError as e:
        return str(e)
    return None


def test_truncated_files_are_clear_errors() -> None:
    """A cut file is an error naming the importer, unless the bytes lost
    were ones no tensor or operator reads (the file's tail padding and
    metadata): then the import is the same model."""
    buf = model_bytes("ad01_int8.tflite")
    whole = frontend.from_tflite(buf)
    errors = 0
    for cut in [8, 16, 64, 1000, len(buf) // 3, len(buf) // 2, len(buf) - 100, len(buf) - 1]:
        try:
            mod = frontend.from_tflite(buf[:cut])
        except frontend.ModelImportError as e:
            assert str(e).startswith("from_tflite:"), (cut, e)
            errors += 1
        else:
            ir.assert_structural_equal(mod, whole)
    assert errors >= 6


def test_corrupted_bytes_never_escape_as_other_errors() -> None:
    """Flipped bytes anywhere: the import succeeds (the byte was data) or
    raises ModelImportError; nothing else, and nothing is left alive."""
    buf = bytearray(model_bytes("str_ww_ref_model.tflite"))
    rng = np.random.default_rng(3)
    outcomes = {"ok": 0, "error": 0}
    for _ in range(150):
        b = bytearray(buf)
        for pos in rng.integers(0, len(b), 4):
            b[int(pos)] = int(rng.integers(0, 256))
        outcomes["ok" if _import_or_error(bytes(b)) is None else "error"] += 1
    assert outcomes["error"] > 0


def _recode(buf: bytearray, index: int, code: int) -> None:
    """Rewrite operator code `index` of the model in `buf` to builtin `code`
    in place; these files keep it in the one-byte deprecated_builtin_code
    (field 0)."""
    tflite = pytest.importorskip("tflite")
    oc = tflite.Model.GetRootAsModel(buf, 0).OperatorCodes(index)
    pos = oc._tab.Offset(4)
    assert pos and oc.BuiltinCode() in (0, oc.DeprecatedBuiltinCode())
    buf[oc._tab.Pos + pos] = code
    assert tflite.Model.GetRootAsModel(buf, 0).OperatorCodes(index).DeprecatedBuiltinCode() == code


# builtin operators that no TFLite Micro model needs: LSH_PROJECTION, SKIP_GRAM
_LSH_PROJECTION, _SKIP_GRAM = 15, 30


def test_unsupported_operator_is_named_before_building() -> None:
    buf = bytearray(model_bytes("ad01_int8.tflite"))
    _recode(buf, 0, _LSH_PROJECTION)  # all ten FULLY_CONNECTED nodes
    with pytest.raises(frontend.UnsupportedOperatorError,
                       match=r"1 operator type is not supported: LSH_PROJECTION \(10 nodes, "
                             r"first: operator 0, output '.*'\); supported: ") as info:
        frontend.from_tflite(bytes(buf))
    (m,) = info.value.missing  # type: ignore[attr-defined]
    assert (m["operator"], m["count"], m["first"]) == ("LSH_PROJECTION", 10, 0)


def test_every_missing_operator_type_is_named_at_once() -> None:
    """Two missing types: each with its count and first node, in the order
    the graph first uses them."""
    tflite = pytest.importorskip("tflite")
    buf = bytearray(model_bytes("kws_ref_model.tflite"))
    m = tflite.Model.GetRootAsModel(buf, 0)
    names = {v: k for k, v in vars(tflite.BuiltinOperator).items() if not k.startswith("_")}
    codes = [names[m.OperatorCodes(i).DeprecatedBuiltinCode()]
             for i in range(m.OperatorCodesLength())]
    g = m.Subgraphs(0)
    nodes = [codes[g.Operators(k).OpcodeIndex()] for k in range(g.OperatorsLength())]
    first_dw, first_conv = nodes.index("DEPTHWISE_CONV_2D"), nodes.index("CONV_2D")
    _recode(buf, codes.index("DEPTHWISE_CONV_2D"), _SKIP_GRAM)
    _recode(buf, codes.index("CONV_2D"), _LSH_PROJECTION)
    with pytest.raises(frontend.UnsupportedOperatorError) as info:
        frontend.from_tflite(bytes(buf))
    msg = str(info.value)
    assert msg.startswith("from_tflite: 2 operator types are not supported: "), msg
    assert "LSH_PROJECTION (%d nodes, first: operator %d" % (
        nodes.count("CONV_2D"), first_conv) in msg
    assert "SKIP_GRAM (%d nodes, first: operator %d" % (
        nodes.count("DEPTHWISE_CONV_2D"), first_dw) in msg
    got = [(x["operator"], x["count"], x["first"])
           for x in info.value.missing]  # type: ignore[attr-defined]
    assert got == sorted([("LSH_PROJECTION", nodes.count("CONV_2D"), first_conv),
                          ("SKIP_GRAM", nodes.count("DEPTHWISE_CONV_2D"), first_dw)],
                         key=lambda x: x[2])


def test_lying_shape_is_caught() -> None:
    """A declared output shape that the graph does not compute is an error
    naming the output, not a silently different model."""
    tflite = pytest.importorskip("tflite")
    buf = bytearray(model_bytes("ad01_int8.tflite"))
    m = tflite.Model.GetRootAsModel(buf, 0)
    g = m.Subgraphs(0)
    out = g.Tensors(g.Outputs(0))
    shape = out.ShapeAsNumpy()
    shape[1] = 639  # a view into buf: 640 -> 639
    err = _import_or_error(bytes(buf))
    assert err is not None and "639" in err, err
