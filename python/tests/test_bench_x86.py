"""bench/bench_x86.py's peers and bench/x86_peers.py without their heavy
parts: the public models found, fetched from a git mirror and refused on a
wrong digest; the ONNX conversion cached by file hash (a stand-in
converter, not tf2onnx); onnxruntime's column on a small ONNX model built
here; the peers' calls on a bundled model; the table with every column and
the reasons of what was skipped."""
from __future__ import annotations

import hashlib
import importlib.util
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
sys.path.insert(0, str(BENCH))
import x86_peers  # noqa: E402

MODELS = Path(os.environ.get("TVMNODE_MODELS", str(BENCH.parents[2] / "shared" / "models")))


def test_find_model_in_the_folder_and_not_public(tmp_path: Path) -> None:
    (tmp_path / "m.tflite").write_bytes(b"x")
    assert x86_peers.find_model("m.tflite", tmp_path, tmp_path / "c") == (tmp_path / "m.tflite",
                                                                       "")
    path, why = x86_peers.find_model("other.tflite", tmp_path, tmp_path / "c")
    assert path is None and why == "other.tflite: not in %s" % tmp_path


def test_find_model_says_how_to_supply_it(tmp_path: Path) -> None:
    path, why = x86_peers.find_model("vww_96_int8.tflite", tmp_path, tmp_path / "c", fetch=False)
    assert path is None
    assert "597a384c8c2c8a1276f04702f25013b7838f2f814f1ca7c174d295b73e3d6b7b" in why
    assert "TVMNODE_GIT_MIRRORS" in why and "mlcommons/tiny" in why
    # a file of another digest in the cache is not taken
    (tmp_path / "c" / "models").mkdir(parents=True)
    (tmp_path / "c" / "models" / "vww_96_int8.tflite").write_bytes(b"not the model")
    path, why = x86_peers.find_model("vww_96_int8.tflite", tmp_path, tmp_path / "c", fetch=False)
    assert path is None and "has sha256 %s" % hashlib.sha256(b"not the model").hexdigest() in why


def git(*args: str, cwd: Path) -> str:
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@t")
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True,
                          text=True).stdout.strip()


def test_find_model_fetches_from_a_mirror_and_checks_the_digest(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work = tmp_path / "work"
    (work / "d").mkdir(parents=True)
    data = b"a public model"
    (work / "d" / "model.tflite").write_bytes(data)
    git("init", "-q", cwd=work)
    git("add", ".", cwd=work)
    git("commit", "-q", "-m", "m", cwd=work)
    commit = git("rev-parse", "HEAD", cwd=work)
    mirrors = tmp_path / "mirrors"
    mirrors.mkdir()
    git("clone", "-q", "--bare", str(work), str(mirrors / "o+r" / "repo"), cwd=tmp_path)
    fcm = x86_peers._fetcher()
    digest = hashlib.sha256(data).hexdigest()
    entries = [("tiny_vww_96_int8.tflite", "github:o/r@" + commit, "d/model.tflite", digest)]
    monkeypatch.setattr(fcm, "read_list", lambda _: entries)
    monkeypatch.setattr(x86_peers, "_fetcher", lambda: fcm)
    monkeypatch.setenv("TVMNODE_GIT_MIRRORS", str(mirrors))
    cache = tmp_path / "cache"
    path, why = x86_peers.find_model("vww_96_int8.tflite", tmp_path / "none", cache)
    assert (path, why) == (cache / "models" / "vww_96_int8.tflite", "")
    assert path is not None and path.read_bytes() == data
    # found in the cache the next time, with no mirror
    monkeypatch.setenv("TVMNODE_GIT_MIRRORS", str(tmp_path / "empty"))
    assert x86_peers.find_model("vww_96_int8.tflite", tmp_path / "none", cache) == (path, "")
    # the mirror fails: the reason and how to supply the file
    path2, why = x86_peers.find_model("vww_96_int8.tflite", tmp_path / "none", tmp_path / "c2")
    assert path2 is None and "fetching it failed (no mirror of o/r under" in why
    assert "put the file" in why
    # a mirror holding other bytes at that path is refused
    entries[0] = entries[0][:3] + ("0" * 64,)
    monkeypatch.setenv("TVMNODE_GIT_MIRRORS", str(mirrors))
    path3, why = x86_peers.find_model("vww_96_int8.tflite", tmp_path / "none", tmp_path / "c3")
    assert path3 is None and "has sha256 %s, not %s" % (digest, "0" * 64) in why
    assert not (tmp_path / "c3" / "models" / "vww_96_int8.tflite").exists()


FAKE_CONVERT = r'''
import sys
args = sys.argv[1:]
src, dst = args[args.index("--tflite") + 1], args[args.index("--output") + 1]
with open(sys.argv[0] + ".calls", "a") as f:
    f.write(src + "\n")
data = open(src, "rb").read()
if data.startswith(b"bad"):
    print("ValueError: tflite op CUSTOM is not supported", file=sys.stderr)
    sys.exit(1)
open(dst, "wb").write(b"onnx:" + data)
'''


def fake_converter(tmp_path: Path) -> Tuple[str, Path]:
    """An interpreter whose `-m tf2onnx.convert` is FAKE_CONVERT, and the
    file listing its calls."""
    pkg = tmp_path / "fake" / "tf2onnx"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "convert.py").write_text(FAKE_CONVERT)
    py = tmp_path / "python"
    py.write_text("#!/bin/sh\nPYTHONPATH=%s exec %s \"$@\"\n" % (tmp_path / "fake",
                                                                 sys.executable))
    py.chmod(py.stat().st_mode | stat.S_IXUSR)
    return str(py), pkg / "convert.py.calls"


def calls(log: Path) -> List[str]:
    return log.read_text().split() if log.exists() else []


def test_to_onnx_converts_once_per_file_hash(tmp_path: Path) -> None:
    py, log = fake_converter(tmp_path)
    cache = tmp_path / "cache"
    m = tmp_path / "m.tflite"
    m.write_bytes(b"model one")
    out, why = x86_peers.to_onnx(m, py, cache)
    assert why == "" and out is not None and out.read_bytes() == b"onnx:model one"
    assert out.name == "m-%s.onnx" % x86_peers.conversion_key(m)
    assert x86_peers.to_onnx(m, py, cache) == (out, "") and len(calls(log)) == 1
    m.write_bytes(b"model two")  # other bytes, another conversion
    out2, _ = x86_peers.to_onnx(m, py, cache)
    assert out2 is not None and out2 != out and out2.read_bytes() == b"onnx:model two"
    assert len(calls(log)) == 2
    bad = tmp_path / "bad.tflite"
    bad.write_bytes(b"bad model")
    none, why = x86_peers.to_onnx(bad, py, cache)
    assert none is None
    assert why == "tf2onnx failed (exit 1): ValueError: tflite op CUSTOM is not supported"
    assert x86_peers.to_onnx(bad, py, cache) == (None, why) and len(calls(log)) == 3
    assert sorted(p.name for p in (cache / "onnx").iterdir()) == sorted(
        [out.name, out2.name, "bad-%s.err" % x86_peers.conversion_key(bad)])


def small_onnx(path: Path) -> None:
    """y = x * 2 over a [1, 4] float tensor."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    g = helper.make_graph(
        [helper.make_node("Mul", ["x", "two"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 4])],
        [helper.make_tensor("two", TensorProto.FLOAT, [], [2.0])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, str(path))


def test_onnxruntime_column(tmp_path: Path) -> None:
    pytest.importorskip("onnxruntime")
    small_onnx(tmp_path / "m.onnx")
    x = np.arange(4, dtype=np.float32).reshape(1, 4)
    conv = lambda _: (tmp_path / "m.onnx", "")  # noqa: E731
    r, info = x86_peers.onnxruntime_column(tmp_path / "m.tflite", x, x * 2, conv)
    assert r is not None and info["agreement"] == {"exact": True}
    r()
    np.testing.assert_array_equal(r.outputs()[0], x * 2)
    ours = x * 2
    ours[0, 3] += 0.5  # 6.5 where onnxruntime has 6: 0.5 over a range of 6.5
    _, info = x86_peers.onnxruntime_column(tmp_path / "m.tflite", x.reshape(4), ours, conv)
    assert info["agreement"] == {"exact": False, "max_abs": 0.5, "differ": 1, "size": 4,
                                 "rel": 0.5 / 6.5}
    assert x86_peers.agreement(info["agreement"]) == "max \\|Δ\\| 0.077 of range"
    _, info = x86_peers.onnxruntime_column(tmp_path / "m.tflite", x, x,
                                           lambda _: (None, "tf2onnx failed (exit 1): no"))
    assert info == {"skipped": "tf2onnx failed (exit 1): no"}
    (tmp_path / "junk.onnx").write_bytes(b"not a model")
    r, info = x86_peers.onnxruntime_column(tmp_path / "m.tflite", x, x,
                                           lambda _: (tmp_path / "junk.onnx", ""))
    assert r is None and info["skipped"].startswith("onnxruntime ")
    assert "InvalidProtobuf" in info["skipped"] or "INVALID_PROTOBUF" in info["skipped"]


def test_onnxruntime_column_without_onnxruntime(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # import fails
    r, info = x86_peers.onnxruntime_column(Path("m.tflite"), np.zeros(1), np.zeros(1),
                                           lambda _: pytest.fail("converted"))
    assert r is None and info == {"skipped": "onnxruntime is not installed in %s"
                                  % sys.executable}


def test_compare_int8() -> None:
    a = np.array([1, 2, 3], np.int8)
    assert x86_peers.compare(a, a.copy()) == {"exact": True}
    c = x86_peers.compare(a, np.array([[1, 4, 3]], np.int8))
    assert x86_peers.agreement(c) == "max \\|Δ\\| 2 (1 of 3 differ)"
    assert x86_peers.agreement(x86_peers.compare(a, a[:2])) == "2 elements, ours 3"


def bench_x86() -> Any:
    import bench_x86 as b

    return b


def test_peers_on_a_bundled_model(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("ai_edge_litert")
    pytest.importorskip("tflite_micro")
    path = MODELS / "ad01_int8.tflite"
    if not path.exists():
        pytest.skip("%s not found (TVMNODE_MODELS)" % path)
    b = bench_x86()
    x = np.random.default_rng(0).integers(-128, 128, (1, 640), dtype=np.int8)
    monkeypatch.setattr(x86_peers, "to_onnx", lambda p: (None, "no converter in this test"))
    found: Dict[str, Any] = {}
    fns, notes = b.peers(path, x, np.zeros((1, 640), np.int8), True)
    assert sorted(fns) == ["litert", "litert-ref", "tflite-micro"]
    # (onnxruntime absent, as in the wheel matrix's venvs, it says so first)
    want = ("no converter in this test" if importlib.util.find_spec("onnxruntime")
            else "onnxruntime is not installed in %s" % sys.executable)
    assert notes == {"skipped": {"onnxruntime": want}}
    for k, fn in fns.items():
        found[k] = b.cpu_per_call(fn, 0.0)
        assert found[k] > 0
    fns, notes = b.peers(path, x, np.zeros((1, 640), np.int8), False)
    assert sorted(fns) == ["litert", "litert-ref", "tflite-micro"] and notes == {"skipped": {}}


def results(with_ort: bool) -> Dict[str, Any]:
    def model(new: float, ort: Optional[float]) -> Dict[str, Any]:
        m = {"new": new, "new@avx2": 2 * new, "litert": 1e-5, "litert-ref": 1e-4,
             "tflite-micro": 2e-4}
        r: Dict[str, Any] = {"macs": 1234, "equal_to_tflite_micro": {"new": True,
                                                                     "new@avx2": True}}
        if ort is not None:
            m["onnxruntime"] = ort
            r["onnxruntime"] = {"agreement": {"exact": True}}
        else:
            r["skipped"] = {"onnxruntime": "tf2onnx failed (exit 1): no"}
        r["median_s"] = m
        return r

    return {"cpu": "A CPU", "cpu_flags": {"avx2": True, "avx512_vnni": False}, "rounds": 3,
            "versions": {"onnxruntime": "9.9"},
            "models": {"a.tflite": model(2e-5, 4e-5 if with_ort else None),
                       "b.tflite": model(5e-6, None)},
            "skipped": {"c.tflite": "c.tflite: not in /x"}}


def test_table_has_every_peer_and_says_what_was_skipped() -> None:
    text = bench_x86().table(results(True))
    lines = text.splitlines()
    assert "A CPU (avx2 yes, avx512_vnni no)" in lines[0]
    head = lines[2]
    for col in ("new µs", "new@avx2 µs", "LiteRT XNNPACK µs", "LiteRT ref µs", "onnxruntime µs",
                "TFLite Micro µs", "new ÷ XNNPACK", "new ÷ ORT", "new@avx2 ÷ XNNPACK",
                "new@avx2 ÷ ORT", "new ÷ LiteRT ref", "new ÷ TFLM"):
        assert "| %s |" % col in head, col
    assert "new ÷ base" not in head
    assert lines[3].count("|") == head.count("|")
    a = lines[4].split(" | ")
    assert a[:9] == ["| a.tflite", "1,234", "20.0", "40.0", "10.0", "100.0", "40.0", "200.0",
                     "2.00"]
    assert a[9:15] == ["0.50", "4.00", "1.00", "0.20", "0.10", "new yes, new@avx2 yes"]
    assert a[15] == "exact |"
    b = lines[5].split(" | ")
    assert b[6] == "—" and b[9] == "—" and b[11] == "—" and b[15] == "— |"
    assert "- b.tflite, onnxruntime: tf2onnx failed (exit 1): no" in lines
    assert "- c.tflite: skipped: c.tflite: not in /x" in lines
    assert "- Versions: onnxruntime 9.9" in lines
    # no model with onnxruntime: no column for it
    assert "onnxruntime µs" not in bench_x86().table(results(False)).splitlines()[2]


# bench_x86_emulated.py: the instruction-count plugin on qemu's user-mode
# emulator, and its table

needs_qemu_user = pytest.mark.skipif(
    __import__("shutil").which("qemu-x86_64") is None,
    reason="no qemu-x86_64 (./dev installs qemu-user)")

COUNTED_C = r"""
#include <stdio.h>
#include <stdlib.h>
extern long syscall(long number, ...);
int main(int argc, char **argv) {
  long turns = atol(argv[1]);
  syscall(0x7ff0L, 0L);  /* a close with no window open: nothing */
  syscall(0x7ff0L, 1L);
  /* two instructions a turn */
  __asm__ volatile("1: dec %0\n\tjnz 1b" : "+r"(turns) : : "cc");
  syscall(0x7ff0L, 0L);
  printf("avx2 %d avx512f %d\n", __builtin_cpu_supports("avx2") != 0,
         __builtin_cpu_supports("avx512f") != 0);
  return 0;
}
"""


@needs_qemu_user
def test_insn_count_plugin_counts_between_the_marks(tmp_path: Path) -> None:
    """The plugin counts what runs between the marks: a loop of two
    instructions a turn adds exactly two a turn, the process's start-up
    stays out, and on the Haswell the bench emulates the program sees AVX2
    and no AVX-512 (what makes each library pick its AVX2 forms)."""
    em = importlib.import_module("bench_x86_emulated")
    so = em.plugin(str(tmp_path))
    exe = str(tmp_path / "counted")
    src = tmp_path / "counted.c"
    src.write_text(COUNTED_C)
    subprocess.run([os.environ.get("CC", "cc"), "-O1", "-o", exe, str(src)], check=True)
    runs = {n: em.counted([exe, str(n)], n, so, str(tmp_path)) for n in (1000, 3000)}
    window = {n: round(r["per_call"] * n) for n, r in runs.items()}
    assert window[3000] - window[1000] == 2 * 2000, window
    assert 2000 <= window[1000] < 2000 + 64, window  # the marks' blocks alone around it
    assert runs[1000]["total"] > 10 * window[1000]   # the process's start is not in it
    out = subprocess.run(["qemu-x86_64", "-cpu", em.CPU, exe, "1"], capture_output=True,
                         text=True, check=True).stdout
    assert out == "avx2 1 avx512f 0\n"


@needs_qemu_user
def test_insn_count_plugin_refuses_a_run_without_marks(tmp_path: Path) -> None:
    em = importlib.import_module("bench_x86_emulated")
    so = em.plugin(str(tmp_path))
    with pytest.raises(RuntimeError, match="no instructions between the marks"):
        em.counted(["/bin/true"], 1, so, str(tmp_path))
    with pytest.raises(RuntimeError, match="failed"):
        em.counted(["/bin/false"], 1, so, str(tmp_path))


def test_emulated_table() -> None:
    em = importlib.import_module("bench_x86_emulated")
    res = {"n": 10, "models": {"a.tflite": {
        "macs": 2_500_000, "ours": {"per_call": 800_000.0}, "xnnpack": {"per_call": 1_010_000.0},
        "python_call_floor": 10_000.0, "ours_isa": 3, "ours_equal_to_tflite_micro": True,
        "xnnpack_max_diff_from_tflite_micro": 1}}}
    lines = em.table(res).splitlines()
    assert lines[2] == ("| a.tflite | 2.50 | 800,000 | 1,010,000 | 0.79 | 10,000 | 0.80 | yes "
                        "| 1 |")
    assert "qemu-x86_64 -cpu Haswell, 10 calls counted a side" in lines[4]
    assert "ISA level there: 3 (3 = AVX2)" in lines[4]


def test_ops_times_every_operator_and_pairs_the_layers(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """bench_x86_ops: every operator call of the generated entry point is
    timed, once a call, and the model's outputs are those of the untimed
    build; the compute layers pair in order, the rest summed."""
    path = MODELS / "ad01_int8.tflite"
    if not path.exists():
        pytest.skip("%s not found (TVMNODE_MODELS)" % path)
    import bench_x86_ops as ops
    from tvmnode import codegen, frontend

    arch = codegen.compile(frontend.load_model(str(path)), name="ad")
    x = np.random.default_rng(1).integers(-128, 128, (1, 640), dtype=np.int8)
    o = ops.ours(arch, x, 0.02, 5, str(tmp_path))
    kinds = [d["op"] for d in o["ops"]]
    assert kinds.count("dense_s8") == 10 and all(d["us"] > 0 for d in o["ops"])
    assert all(d["layer"] == "" for d in o["ops"])  # no convolution
    assert o["whole_us"] > 0 and o["macs"] == int(arch.info["macs"])
    plain = np.fromfile(tmp_path / "plain" / "ad.out0", np.int8)
    timed = np.fromfile(tmp_path / "timed" / "ad.out0", np.int8)
    assert plain.size == 640 and np.array_equal(plain, timed)
    p = {"ops": [{"op": "QLinearMatMul", "us": 2.0}, {"op": "QuantizeLinear", "us": 1.0}]}
    rows = ops.pair(o, p)
    assert rows[0][0] == "dense_s8" and rows[0][2:] == ("QLinearMatMul", 2.0)
    assert rows[1][2] == "—" and rows[-1][0] == "the rest" and rows[-1][3] == 1.0
    text = ops.table("ad", o, p | {"whole_us": 3.0})
    assert "| 1 | dense_s8 |" in text and "the rest" in text
    # onnxruntime's layers labelled from its shapes: a float Conv's weight
    # tells its window; its NHWC QLinearConv's does not (packed at load)
    conv = {"op_name": "Conv", "input_type_shape": [{"float": [1, 1, 49, 10]},
                                                    {"float": [64, 1, 10, 4]}, {"float": [64]}],
            "output_type_shape": [{"float": [1, 64, 25, 5]}]}
    assert ops.ort_layer(conv) == "10x4 25x5 1->64 s2"
    q = {"op_name": "QLinearConv",
         "input_type_shape": [{"uint8": [1, 25, 5, 64]}, {"float": []}, {"uint8": []},
                              {"float": [64]}, {"int8": [64]}, {"float": []}, {"uint8": []},
                              {"int32": [64]}],
         "output_type_shape": [{"uint8": [1, 25, 5, 64]}]}
    assert ops.ort_layer(q) == "?x? 25x5 64->64"
    assert ops.ort_layer({"op_name": "Transpose"}) == ""
    assert ops.same_layer("3x3 25x5 64->64 dw", "?x? 25x5 64->64")
    assert ops.same_layer("1x1 25x5 64->64", "?x? 25x5 64->64")
    assert not ops.same_layer("1x1 25x5 64->32", "?x? 25x5 64->64")
    assert ops.same_layer("10x4 25x5 1->64 s2", ops.ort_layer(conv))
    # a generated file without operator calls is refused, naming the folder
    empty = tmp_path / "empty" / "codegen" / "host" / "src"
    empty.mkdir(parents=True)
    (empty / "a.c").write_text("int x;\n")
    with pytest.raises(ValueError, match="no operator call in .*empty"):
        ops.instrument(str(tmp_path / "empty"))
