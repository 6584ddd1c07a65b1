"""Weights updated in the field (docs/firmware.md, tvmnode/crt/params.h): a
model compiled with constants_in_pool records its model id (a hash of the
code that reads the constant pool and of the pool's layout, not of the
weights) in tvmgen_<name>_params_layout, the header and metadata.json;
codegen.params_blob writes a parameter blob for a second set of weights of
the same layout. Keyword spotting with its weights scaled by 3/4 has the
same id; the anomaly detector, or keyword spotting with another alignment,
another. On the emulated Cortex-M4 (firmware/common/params_check.c) the
blobs are loaded into the PSRAM apart from the firmware: the model runs
with weights A bound in place, then B, each output the host executor's for
those weights; another model's blob, a blob with a bad CRC and a truncated
one are refused with their codes and B kept; B from a misaligned buffer is
copied into a RAM pool and gives the same output.
"""
from __future__ import annotations

import os
import struct
from typing import Any, Dict, Iterator, List, Tuple

import numpy as np
import pytest

from aot_util import HostModel
from tvmnode import cli, codegen, frontend, ir, runtime

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODELS = os.environ.get("TVMNODE_MODELS",
                        os.path.join(os.path.dirname(ROOT), "shared", "models"))
KWS = os.path.join(MODELS, "kws_ref_model.tflite")
AD = os.path.join(MODELS, "ad01_int8.tflite")
if not (os.path.exists(KWS) and os.path.exists(AD)):
    pytest.skip("no %s or %s" % (KWS, AD), allow_module_level=True)

SLOTS, SLOT_BYTES = 0x21000000, 0x80000


class Scaled(ir.ExprMutator):
    """The int8 weights (4-d constants) times 3/4, rounded: a second set of
    weights of the same layout."""

    def visit_constant(self, c: Any) -> Any:
        a = np.asarray(c.data)
        if a.dtype == np.int8 and a.ndim == 4:
            return ir.Constant(np.round(a.astype(np.float32) * 0.75).astype(np.int8))
        return c


class Models:
    def __init__(self) -> None:
        kws = frontend.load_model(KWS)
        kws_b = ir.IRModule({"main": Scaled().visit(kws["main"])})
        self.a = codegen.compile(kws, name="kws", constants_in_pool=True)
        self.b = codegen.compile(kws_b, name="kws", constants_in_pool=True)
        self.plain = codegen.compile(kws, name="kws")
        self.wider = codegen.compile(kws, name="kws", constants_in_pool=True, alignment=32)
        self.m4_a = codegen.compile(kws, name="kws", constants_in_pool=True, target="cortex-m")
        self.m4_b = codegen.compile(kws_b, name="kws", constants_in_pool=True,
                                    target="cortex-m")
        self.m4_ad = codegen.compile(frontend.load_model(AD), name="ad",
                                     constants_in_pool=True, target="cortex-m")
        spec = self.a.info["inputs"][0]
        self.x = np.random.default_rng(34).integers(-128, 127, spec["shape"],
                                                    endpoint=True).astype(np.int8)
        self.ref_a = np.array(runtime.Executor(self.a.module)(self.x), copy=True)
        self.ref_b = np.array(runtime.Executor(self.b.module)(self.x), copy=True)
        del kws, kws_b


@pytest.fixture(scope="module")
def models() -> Iterator[Models]:
    yield Models()


def _id(arch: codegen.Archive) -> str:
    return str(arch.info["params"]["model_id"])


def test_model_id_recorded(models: Models) -> None:
    a, b = models.a, models.b
    mid = _id(a)
    assert mid.startswith("0x") and len(mid) == 18
    hdr = a.files["codegen/host/include/tvmgen_kws.h"]
    assert "#define TVMGEN_KWS_MODEL_ID UINT64_C(%s)" % mid in hdr
    assert "extern TVMGEN_API const TnCrtParamsLayout tvmgen_kws_params_layout;" in hdr
    assert '#include "tvmnode/crt/params.h"' in hdr
    assert "tvmgen_kws_params_layout = {" in a.files["codegen/host/src/kws_lib1.c"]
    assert "src/params.c" in a.runtime_sources
    p = a.info["params"]
    assert (p["version"], p["pool"], p["alignment"]) == (1, "constants", 16)
    assert p["size_bytes"] == next(q["size_bytes"] for q in a.info["memory"]["pools"]
                                   if q["kind"] == "constant")
    assert [c["name"] for c in p["constants"]] == list(a.constants)
    # the weights do not enter the id; the code and the layout do
    assert _id(b) == mid
    assert any(not np.array_equal(a.constants[k], b.constants[k]) for k in a.constants)
    assert _id(models.wider) != mid
    assert _id(models.m4_a) not in (mid, _id(models.m4_ad))
    assert _id(models.m4_b) == _id(models.m4_a)


def test_default_output_unchanged(models: Models) -> None:
    plain = models.plain
    assert "params" not in plain.info
    # the crt's headers are the same in every archive; params.c only here
    assert "include/tvmnode/crt/params.h" in plain.runtime_sources
    assert "src/params.c" not in plain.runtime_sources
    for path, text in plain.files.items():
        if not path.endswith((".c", ".h")):
            continue
        assert "MODEL_ID" not in text and "params.h" not in text, path
        assert "params_layout" not in text and "TnCrtParams" not in text, path


def test_blob_layout(models: Models) -> None:
    a, b = models.a, models.b
    blob = codegen.params_blob(a, b.constants, weights_version=5)
    # a parameter file the host reads
    loaded = codegen.load_params(blob)
    assert list(loaded) == ["tvmnode.model_id", "tvmnode.pad", "constants"]
    mid, version, wv = struct.unpack("<QII", loaded["tvmnode.model_id"].tobytes())
    assert (hex(mid), version, wv) == (_id(a), 1, 5)
    pool = loaded["constants"]
    assert pool.dtype == np.uint8 and pool.size == a.info["params"]["size_bytes"]
    # the image starts aligned from the blob's first byte, before the CRC
    at = len(blob) - 4 - pool.size
    assert at % 16 == 0 and blob[at:len(blob) - 4] == pool.tobytes()
    for c in a.info["params"]["constants"]:
        got = pool[c["offset"]:c["offset"] + c["size_bytes"]]
        assert got.tobytes() == np.ascontiguousarray(b.constants[c["name"]]).tobytes()
    # the metadata dict serves as well as the archive; another alignment pads
    # to it
    assert codegen.params_blob(a.metadata, b.constants, weights_version=5) == blob
    w = codegen.params_blob(models.wider, models.wider.constants)
    n = models.wider.info["params"]["size_bytes"]
    assert (len(w) - 4 - n) % 32 == 0


def test_blob_refusals(models: Models) -> None:
    a = models.a
    consts: Dict[str, Any] = dict(a.constants)
    first = next(iter(consts))
    with pytest.raises(ValueError, match="params_blob: constant '%s' is missing" % first):
        codegen.params_blob(a, {k: v for k, v in consts.items() if k != first})
    with pytest.raises(ValueError, match="'bogus' is not a constant of model 'kws'"):
        codegen.params_blob(a, dict(consts, bogus=np.zeros(1, np.int8)))
    bad = dict(consts)
    bad[first] = consts[first].astype(np.int16)
    with pytest.raises(ValueError, match="constant '%s' must be int8.*got int16" % first):
        codegen.params_blob(a, bad)
    bad[first] = consts[first].reshape(-1)
    with pytest.raises(ValueError, match="constant '%s' must be int8" % first):
        codegen.params_blob(a, bad)
    with pytest.raises(ValueError, match="not compiled with constants_in_pool"):
        codegen.params_blob(models.plain, consts)
    with pytest.raises(ValueError, match="weights_version"):
        codegen.params_blob(a, consts, weights_version=-1)


def test_cli_params(models: Models, tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    out = str(tmp_path / "kws")
    assert cli.main(["compile", KWS, "--name", "kws", "-o", out, "--constants-in-pool"]) == 0
    capsys.readouterr()
    blob = str(tmp_path / "own.bin")
    # the archive's own weights by default
    assert cli.main(["params", out, "-o", blob]) == 0
    text = capsys.readouterr().out
    want = ("for model kws (id %s), pool constants of %d bytes aligned to 16, weights "
            "version 0" % (_id(models.a), models.a.info["params"]["size_bytes"]))
    assert want in text, text
    with open(blob, "rb") as f:
        assert f.read() == codegen.params_blob(models.a, models.a.constants)
    # a second set of weights from a parameter file, from a .tar archive
    weights = str(tmp_path / "b.params")
    with open(weights, "wb") as f:
        f.write(codegen.save_params(models.b.constants))
    tar = models.a.export(str(tmp_path / "kws.tar"))
    assert cli.main(["params", tar, weights, "-o", blob, "--weights-version", "3"]) == 0
    capsys.readouterr()
    with open(blob, "rb") as f:
        assert f.read() == codegen.params_blob(models.a, models.b.constants,
                                               weights_version=3)
    # refusals: weights of another model, an archive without a constant pool
    other = str(tmp_path / "ad.params")
    with open(other, "wb") as f:
        f.write(codegen.save_params(models.m4_ad.constants))
    assert cli.main(["params", out, other, "-o", blob]) == 1
    assert "tvmnode params: params_blob: " in capsys.readouterr().err
    plain = models.plain.export(str(tmp_path / "plain"))
    assert cli.main(["params", plain, "-o", blob]) == 1
    assert "not compiled with constants_in_pool" in capsys.readouterr().err


def test_host_build_unchanged_outputs(models: Models, tmp_path: Any) -> None:
    """The archive with params.c builds under -Wall -Wextra -Werror on the
    host and computes the executor's output from its built-in weights."""
    got = HostModel(models.a, str(tmp_path)).run(models.x)[0]
    np.testing.assert_array_equal(got, models.ref_a)


# ---- on the Cortex-M4 -------------------------------------------------------

def _load_runner() -> Any:
    import importlib.machinery
    import types
    path = os.path.join(ROOT, "firmware", "common", "run.py")
    mod = types.ModuleType("firmware_common_run_params")
    mod.__file__ = path
    importlib.machinery.SourceFileLoader(mod.__name__, path).exec_module(mod)
    return mod


fw = _load_runner()
_missing = fw.toolchain_missing()


def _slot(path: str, data: bytes) -> str:
    assert len(data) + 16 <= SLOT_BYTES
    with open(path, "wb") as f:
        f.write(struct.pack("<I", len(data)) + bytes(12) + data)
    return path


@pytest.mark.skipif(_missing is not None, reason="Cortex-M firmware: %s" % _missing)
def test_m4_weights_swapped_and_refused(models: Models, tmp_path: Any) -> None:
    arch = models.m4_a.export(str(tmp_path / "kws"))
    blob_a = codegen.params_blob(models.m4_a, models.m4_a.constants, weights_version=1)
    blob_b = codegen.params_blob(models.m4_a, models.m4_b.constants, weights_version=2)
    other = codegen.params_blob(models.m4_ad, models.m4_ad.constants)
    badcrc = bytearray(blob_b)
    badcrc[len(badcrc) // 2] ^= 0x10
    # the refusals are the crt's, not a guess: the host reads them the same way
    with pytest.raises(ValueError, match="checksum mismatch"):
        codegen.load_params(bytes(badcrc))
    truncated = blob_b[:len(blob_b) - 1000]
    slots = [blob_a, blob_b, other, bytes(badcrc), truncated, models.x.tobytes()]
    loads: List[Tuple[str, int]] = [
        (_slot(str(tmp_path / ("slot%d.bin" % i)), data), SLOTS + i * SLOT_BYTES)
        for i, data in enumerate(slots)]
    src = os.path.join(arch, "codegen", "host", "src")
    elf = fw.build_program(
        ["params_check.c"] + sorted(os.path.join(src, f) for f in os.listdir(src)
                                    if f.endswith(".c")),
        str(tmp_path / "fw"), crt=os.path.join(arch, "runtime"),
        include_dirs=[os.path.join(arch, "codegen", "host", "include")],
        flags=["-DPC_LAYOUT=tvmgen_kws_params_layout"])
    code, text = fw.run_program(elf, timeout=120, loads=loads)
    lines = {ln.split(" st=")[0] if " st=" in ln else " ".join(ln.split()[:2]): ln
             for ln in text.splitlines()}
    assert code == 0 and "done 0" in text, text
    cost = {k: int(lines[k].split(" instructions=")[1]) for k in ("init", "bind B",
                                                                "bind copy")}
    assert lines["init"].startswith("init st=OK copied=0 version=1 "), text
    assert lines["bind B"].startswith("bind B st=OK copied=0 version=2 "), text
    assert lines["bind other"] == "bind other st=PARAMS_WRONG_MODEL", text
    assert lines["bind badcrc"] == "bind badcrc st=PARAMS_CHECKSUM", text
    assert lines["bind truncated"] == "bind truncated st=PARAMS_TRUNCATED", text
    assert lines["bind copy"].startswith("bind copy st=OK copied=1 version=2 "), text
    # the check reads the blob (the CRC over every byte): a few instructions
    # a byte; the copy adds a pass over the pool
    size = models.m4_a.info["params"]["size_bytes"]
    assert size < cost["bind B"] < 40 * size and cost["bind copy"] > cost["bind B"], cost
    print("M4 blob of %d bytes: verify and bind in place %d instructions, with the copy "
          "%d" % (len(blob_b), cost["bind B"], cost["bind copy"]))

    def out(key: str) -> np.ndarray:
        raw = bytes.fromhex(lines["out " + key].split()[2])
        return np.frombuffer(raw, np.int8).reshape(models.ref_a.shape)

    np.testing.assert_array_equal(out("A"), models.ref_a)
    np.testing.assert_array_equal(out("B"), models.ref_b)
    assert not np.array_equal(models.ref_a, models.ref_b)
    np.testing.assert_array_equal(out("kept"), models.ref_b)
    np.testing.assert_array_equal(out("copy"), models.ref_b)
