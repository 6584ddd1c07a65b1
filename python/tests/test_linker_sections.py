"""Linker placement (docs/firmware.md): constants_section puts the constant
arrays in a named section, workspace_section names the section the pools
belong in (the header's TVMGEN_<NAME>_WORKSPACE_SECTION, which the
application declares its pools with), constants_align sets the constants'
alignment. Options in compile(...) and on the CLI, recorded in
metadata.json's interface and shown in the compile report; bad values
refused with errors naming the option. On the emulated Cortex-M4 a linker
script (firmware/m4/mps2_an386_psram.ld) maps both sections to the board's
second memory region, the PSRAM at 0x21000000: nm and objdump -h show the
symbols there, and the outputs are the host executor's. Keyword spotting is
compiled once per placement for the module.
"""
from __future__ import annotations

import importlib.machinery
import os
import re
import shutil
import subprocess
import types
from typing import Any, Dict, Iterator, List

import numpy as np
import pytest

from aot_util import HostModel
from tvmnode import cli, codegen, frontend, get_global_func, runtime

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RUNNER = os.path.join(ROOT, "firmware", "common", "run.py")
PSRAM_LD = os.path.join(ROOT, "firmware", "m4", "mps2_an386_psram.ld")
MODELS = os.environ.get("TVMNODE_MODELS",
                        os.path.join(os.path.dirname(ROOT), "shared", "models"))
KWS = os.path.join(MODELS, "kws_ref_model.tflite")
if not os.path.exists(KWS):
    pytest.skip("no %s" % KWS, allow_module_level=True)

PLACED = {"constants_section": ".ext_weights", "workspace_section": ".ext_pool",
          "constants_align": 64}
PSRAM = (0x21000000, 0x22000000)


def _load_runner() -> Any:
    mod = types.ModuleType("firmware_common_run_sections")
    mod.__file__ = RUNNER
    importlib.machinery.SourceFileLoader(mod.__name__, RUNNER).exec_module(mod)
    return mod


class Compiled:
    def __init__(self, work: str) -> None:
        mod = frontend.load_model(KWS)
        plain = codegen.compile(mod, name="kws")
        placed = codegen.compile(mod, name="kws", **PLACED)  # type: ignore[arg-type]
        m4_plain = codegen.compile(mod, name="kws", target="cortex-m")
        self.m4_plain_info: Dict[str, Any] = m4_plain.info
        self.m4_plain_lib0 = m4_plain.files["codegen/host/src/kws_lib0.c"]
        self.plain_files = dict(plain.files)
        self.placed_files = dict(placed.files)
        self.plain_info: Dict[str, Any] = plain.info
        self.info: Dict[str, Any] = placed.info
        self.n_consts = len(placed.constants)
        rng = np.random.default_rng(5)
        spec = self.info["inputs"][0]
        self.x = rng.integers(-128, 127, spec["shape"], endpoint=True).astype(np.int8)
        ref = runtime.Executor(plain.module)(self.x)
        self.ref = np.array(ref, copy=True)
        self.host_placed = HostModel(placed, os.path.join(work, "host")).run(self.x)[0].copy()
        m4 = codegen.compile(mod, name="kws", target="cortex-m", **PLACED)  # type: ignore[arg-type]
        self.m4 = m4.export(os.path.join(work, "m4", "kws"))
        self.xfile = os.path.join(work, "x.npy")
        np.save(self.xfile, self.x)
        del plain, placed, m4, m4_plain, ref, mod


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Compiled]:
    yield Compiled(str(tmp_path_factory.mktemp("sections")))


def test_recorded_and_emitted(compiled: Compiled) -> None:
    iface = compiled.info["interface"]
    assert iface["constants_section"] == ".ext_weights"
    assert iface["workspace_section"] == ".ext_pool"
    assert iface["constants_align"] == 64 and iface["alignment"] == 16
    hdr = compiled.placed_files["codegen/host/include/tvmgen_kws.h"]
    assert '#define TVMGEN_KWS_CONSTANTS_SECTION_NAME ".ext_weights"' in hdr
    assert '#define TVMGEN_KWS_WORKSPACE_SECTION __attribute__((section(".ext_pool")))' in hdr
    lib0 = compiled.placed_files["codegen/host/src/kws_lib0.c"]
    defs = re.findall(r"const\d+\[\d+\] TVMGEN_ALIGNED\((\d+)\) TVMGEN_KWS_CONSTANTS_SECTION = ",
                      lib0)
    assert len(defs) == compiled.n_consts and set(defs) == {"64"}
    # the same outputs on the host
    np.testing.assert_array_equal(compiled.host_placed, compiled.ref)


def test_default_constants_align_per_target(compiled: Compiled) -> None:
    """Without constants_align, a host archive's constants start on a cache
    line (CONSTANTS_ALIGN["host"]: the x86 forms' 64-byte loads), and a
    Cortex-M archive's at the pools' alignment, as before (flash)."""
    host = compiled.plain_info["interface"]
    assert (host["alignment"], host["constants_align"]) == (16, 64)
    lib0 = compiled.plain_files["codegen/host/src/kws_lib0.c"]
    assert set(re.findall(r"const\d+\[\d+\] TVMGEN_ALIGNED\((\d+)\)", lib0)) == {"64"}
    m4 = compiled.m4_plain_info["interface"]
    assert m4["constants_align"] == m4["alignment"] == 16
    assert set(re.findall(r"const\d+\[\d+\] TVMGEN_ALIGNED\((\d+)\)",
                          compiled.m4_plain_lib0)) == {"16"}


def test_default_output_unchanged(compiled: Compiled) -> None:
    iface = compiled.plain_info["interface"]
    assert iface["constants_section"] is None and iface["workspace_section"] is None
    for path, text in compiled.plain_files.items():
        if path.endswith((".c", ".h")):
            assert "SECTION" not in text and "section(" not in text, path


@pytest.mark.parametrize("key,value,message", [
    ("constants_section", "", "is not a section name"),
    ("constants_section", "1weights", "is not a section name"),
    ("constants_section", 'x") evil("', "is not a section name"),
    ("workspace_section", "two words", "is not a section name"),
    ("workspace_section", "a" * 65, "is not a section name"),
    ("constants_align", 3, "is not a power of two"),
    ("constants_align", 0, "is not a power of two"),
    ("constants_align", 8192, "is not a power of two up to 4096"),
])
def test_bad_values_are_refused(key: str, value: Any, message: str) -> None:
    mod = frontend.load_model(KWS)
    with pytest.raises(ValueError, match="option '%s'.*%s" % (key, message)):
        codegen.compile(mod, name="kws", **{key: value})
    del mod


def test_wrong_type_is_refused() -> None:
    mod = frontend.load_model(KWS)
    aot = get_global_func("codegen.AOT")
    with pytest.raises(TypeError, match="option 'constants_section' expects a str, got int"):
        aot(mod, {"name": "kws", "constants_section": 5})
    with pytest.raises(TypeError, match="constants_align"):
        aot(mod, {"name": "kws", "constants_align": "64"})
    del mod, aot


def test_cli_options_and_report(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    out = str(tmp_path / "kws")
    assert cli.main(["compile", KWS, "--name", "kws", "-o", out, "--constants-section",
                     ".ext_weights", "--workspace-section", ".ext_pool",
                     "--constants-align", "32"]) == 0
    text = capsys.readouterr().out
    assert "workspace section    .ext_pool" in text
    assert re.search(r"constants +\d+ bytes \(flash, section \.ext_weights, aligned to 32\)",
                     text), text
    import json
    with open(os.path.join(out, "metadata.json")) as f:
        iface = json.load(f)["modules"]["kws"]["interface"]
    assert (iface["constants_section"], iface["workspace_section"],
            iface["constants_align"]) == (".ext_weights", ".ext_pool", 32)
    assert cli.main(["compile", KWS, "-o", str(tmp_path / "bad"),
                     "--constants-section", "a-b"]) == 1
    err = capsys.readouterr().err
    assert "option 'constants_section': 'a-b' is not a section name" in err
    assert cli.main(["compile", KWS, "-o", str(tmp_path / "bad2"),
                     "--constants-align", "48"]) == 1
    assert "option 'constants_align': 48 is not a power of two" in capsys.readouterr().err


fw = _load_runner()
_missing = fw.toolchain_missing() or (None if shutil.which("cmake") else "cmake is not installed")


@pytest.mark.skipif(_missing is not None, reason="Cortex-M firmware: %s" % _missing)
def test_m4_sections_in_the_second_region(compiled: Compiled, tmp_path: Any) -> None:
    res = fw.build_and_run(compiled.m4, "kws", [compiled.xfile], str(tmp_path / "fw"),
                           cmake=True, linker_script=PSRAM_LD)
    assert res["ok"], res.get("log")
    got = np.array(res["outputs"]["identity"]["values"], np.int8).reshape(compiled.ref.shape)
    np.testing.assert_array_equal(got, compiled.ref)
    elf = res["elf"]
    heads: Dict[str, List[str]] = {}
    for line in subprocess.run(["arm-none-eabi-objdump", "-h", elf], capture_output=True,
                               text=True, check=True).stdout.splitlines():
        w = line.split()
        if len(w) >= 7 and w[0].isdigit():
            heads[w[1]] = w
    for sec in (".ext_weights", ".ext_pool"):
        vma = int(heads[sec][3], 16)
        assert PSRAM[0] <= vma < PSRAM[1], (sec, hex(vma))
    assert int(heads[".ext_weights"][2], 16) >= compiled.info["memory"]["constants_in_flash_bytes"]
    assert int(heads[".ext_pool"][2], 16) >= compiled.info["memory"]["pools"][0]["size_bytes"]
    syms: Dict[str, int] = {}
    for line in subprocess.run(["arm-none-eabi-nm", elf], capture_output=True, text=True,
                               check=True).stdout.splitlines():
        w = line.split()
        if len(w) == 3:
            syms[w[2]] = int(w[0], 16)
    consts = {n: a for n, a in syms.items() if re.fullmatch(r"tvmgen_kws_const\d+", n)}
    assert len(consts) == compiled.n_consts
    for n, a in consts.items():
        assert PSRAM[0] <= a < PSRAM[1] and a % 64 == 0, (n, hex(a))
    assert PSRAM[0] <= syms["pool_global_workspace"] < PSRAM[1]
    # the main RAM keeps the rest: the I/O buffers stay there
    assert 0x20000000 <= syms["out_identity"] < 0x20400000
