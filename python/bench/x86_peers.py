"""What bench_x86.py needs beyond the bundled models and LiteRT: the two
public MLPerf Tiny models that are not in ../shared/models (VWW and the
large ResNet), and onnxruntime on ONNX conversions of the .tflite files.

Models. A model file is looked for in the models folder (--models,
TVMNODE_MODELS), then in the cache (below). The public ones missing from
both (PUBLIC: their pinned mlcommons/tiny commit, path and sha256 are the
lines of tools/conformance_models.txt) are fetched into the cache by
tools/fetch_conformance_models.py: from a folder of bare git mirrors when
TVMNODE_GIT_MIRRORS names one (OWNER+REPO/repo or OWNER/REPO.git, holding
mlcommons/tiny), else from GitHub's raw file host at that commit. The
sha256 is checked either way. Where neither is reachable, put the file
(of that sha256) into the models folder or the cache's models/ folder,
or point TVMNODE_GIT_MIRRORS at a clone of mlcommons/tiny; until then the
model is skipped with a message saying so.

onnxruntime. Each .tflite is converted to ONNX once by tf2onnx's TFLite
path (`python -m tf2onnx.convert --tflite`, opset OPSET), in a virtual
environment of its own that this module makes in the cache with pinned
versions from PyPI (CONVERTER: tensorflow-cpu, which tf2onnx imports,
tf2onnx and onnx), so that TensorFlow never enters the benchmark's own
environment. Conversions are cached by the sha256 of the .tflite file and
the converter's pins, a failed conversion too (its log is the reason the
table gives). The benchmark's process runs onnxruntime itself (pinned in
python/run_bench.sh): an InferenceSession on the CPU provider, one thread
(intra_op_num_threads = inter_op_num_threads = 1), default graph
optimizations, called through an IO binding made once (input and output
OrtValues bound ahead, so a call copies nothing in Python).

The cache is $TVMNODE_BENCH_CACHE, else $XDG_CACHE_HOME/tvmnode-bench,
else ~/.cache/tvmnode-bench.
"""
from __future__ import annotations

import hashlib
import importlib
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

HERE = Path(__file__).resolve().parent
TOOLS = HERE.parents[1] / "tools"

# tf2onnx imports TensorFlow at start-up; its environment (onnx writes the file)
CONVERTER = ("tensorflow-cpu==2.21.0", "tf2onnx==1.17.0", "onnx==1.23.2")
OPSET = 17

# model file -> its name in tools/conformance_models.txt
PUBLIC = {"vww_96_int8.tflite": "tiny_vww_96_int8.tflite",
          "vww_96_float.tflite": "tiny_vww_96_float.tflite",
          "pretrainedResnet_large_int8.tflite": "tiny_pretrainedResnet_large_int8.tflite",
          "pretrainedResnet_large_float.tflite": "tiny_pretrainedResnet_large_float.tflite"}


def cache_dir() -> Path:
    env = os.environ.get("TVMNODE_BENCH_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "tvmnode-bench"


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _fetcher() -> Any:
    sys.path.insert(0, str(TOOLS))
    try:
        return importlib.import_module("fetch_conformance_models")
    finally:
        sys.path.remove(str(TOOLS))


def find_model(name: str, models: Path, cache: Optional[Path] = None,
               fetch: bool = True) -> Tuple[Optional[Path], str]:
    """(path, "") for the model file `name`, or (None, why it is not
    there and how to supply it)."""
    if (models / name).is_file():
        return models / name, ""
    if name not in PUBLIC:
        return None, "%s: not in %s" % (name, models)
    fcm = _fetcher()
    entry = next((e for e in fcm.read_list(fcm.DEFAULT_LIST) if e[0] == PUBLIC[name]), None)
    if entry is None:
        return None, "%s: %s is not in %s" % (name, PUBLIC[name], fcm.DEFAULT_LIST)
    _, source, member, want = entry
    dst = (cache or cache_dir()) / "models" / name
    if dst.is_file():
        got = sha256(dst)
        if got == want:
            return dst, ""
        why = "%s in the cache has sha256 %s, not %s" % (dst, got, want)
    else:
        why = "not in %s nor in %s" % (models, dst.parent)
    how = ("put the file (%s %s, sha256 %s) in %s or %s, or set TVMNODE_GIT_MIRRORS "
           "to a folder holding a bare clone of %s" % (source, member, want, models,
                                                       dst.parent, source.split("@")[0][7:]))
    if not fetch:
        return None, "%s: %s; %s" % (name, why, how)
    try:
        with tempfile.TemporaryDirectory(prefix="x86-peers-") as tmp:
            data = fcm.fetch(entry, os.environ.get("TVMNODE_GIT_MIRRORS") or None, tmp)
    except (ValueError, OSError, KeyError) as e:
        return None, "%s: %s, and fetching it failed (%s); %s" % (
            name, why, str(e).splitlines()[0][:160] if str(e) else type(e).__name__, how)
    got = hashlib.sha256(data).hexdigest()
    if got != want:
        return None, "%s: fetched %s has sha256 %s, not %s; %s" % (name, member, got, want, how)
    dst.parent.mkdir(parents=True, exist_ok=True)
    part = dst.with_suffix(".part")
    part.write_bytes(data)
    part.replace(dst)
    return dst, ""


def converter_python(cache: Optional[Path] = None) -> Tuple[Optional[str], str]:
    """The interpreter of the converter's environment, made (pip, PyPI)
    when missing; (None, why) when it cannot be made."""
    key = hashlib.sha256(" ".join(CONVERTER).encode()).hexdigest()[:12]
    venv = (cache or cache_dir()) / ("tf2onnx-" + key)
    py = venv / "bin" / "python"
    done = venv / "installed"
    if py.exists() and done.exists():
        return str(py), ""
    print("x86_peers: installing %s into %s" % (" ".join(CONVERTER), venv),
          file=sys.stderr, flush=True)
    steps = [[sys.executable, "-m", "venv", "--clear", str(venv)],
             [str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check",
              *CONVERTER]]
    for cmd in steps:
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["exit %d"
                                                                              % proc.returncode]
            return None, "making the converter's environment failed: %s: %s" % (
                " ".join(cmd[:4]), tail[0][:200])
    done.write_text(" ".join(CONVERTER) + "\n")
    return str(py), ""


def conversion_key(tflite: Path) -> str:
    """The cache key of a conversion: the file's bytes and the pins."""
    h = hashlib.sha256(sha256(tflite).encode())
    h.update((" ".join(CONVERTER) + " opset %d" % OPSET).encode())
    return h.hexdigest()[:16]


def to_onnx(tflite: Path, python: Optional[str] = None,
            cache: Optional[Path] = None) -> Tuple[Optional[Path], str]:
    """(path of the ONNX conversion, "") or (None, why it failed); from the
    cache when this file was converted before with these pins."""
    out_dir = (cache or cache_dir()) / "onnx"
    stem = "%s-%s" % (tflite.stem, conversion_key(tflite))
    onnx_path, err_path = out_dir / (stem + ".onnx"), out_dir / (stem + ".err")
    if onnx_path.is_file():
        return onnx_path, ""
    if err_path.is_file():
        return None, err_path.read_text().strip()
    if python is None:
        python, why = converter_python(cache)
        if python is None:
            return None, why
    out_dir.mkdir(parents=True, exist_ok=True)
    part = out_dir / (stem + ".part.onnx")
    cmd = [python, "-m", "tf2onnx.convert", "--tflite", str(tflite), "--output", str(part),
           "--opset", str(OPSET)]
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", CUDA_VISIBLE_DEVICES="")
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode != 0 or not part.is_file():
        lines = [ln for ln in (proc.stderr + proc.stdout).splitlines() if ln.strip()]
        errs = [ln for ln in lines if "Error" in ln or "error" in ln] or lines or ["no output"]
        why = "tf2onnx failed (exit %d): %s" % (proc.returncode, errs[-1].strip()[:240])
        err_path.write_text(why + "\n")
        part.unlink(missing_ok=True)
        return None, why
    part.replace(onnx_path)
    return onnx_path, ""


class OrtRunner:
    """One onnxruntime session of a model on one input, one thread, its
    default optimizations, called through an IO binding made once."""

    def __init__(self, path: Path, x: np.ndarray) -> None:
        import onnxruntime as ort

        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        so.inter_op_num_threads = 1
        self.sess = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
        ins = self.sess.get_inputs()
        if len(ins) != 1:
            raise ValueError("OrtRunner: expected a model of 1 input, received %d" % len(ins))
        want = tuple(d if isinstance(d, int) else 1 for d in ins[0].shape)
        if want != x.shape and int(np.prod(want)) == x.size:
            x = x.reshape(want)
        self.x = np.ascontiguousarray(x)
        self.bind = self.sess.io_binding()
        self.bind.bind_cpu_input(ins[0].name, self.x)
        for o in self.sess.get_outputs():
            self.bind.bind_output(o.name, "cpu")
        self.sess.run_with_iobinding(self.bind)  # the outputs allocated once
        self.out = self.bind.get_outputs()
        for o, v in zip(self.sess.get_outputs(), self.out):
            self.bind.bind_ortvalue_output(o.name, v)

    def __call__(self) -> None:
        self.sess.run_with_iobinding(self.bind)

    def outputs(self) -> List[np.ndarray]:
        return [np.asarray(v.numpy()) for v in self.out]


def compare(ours: np.ndarray, peer: np.ndarray) -> Dict[str, Any]:
    """A peer's output against ours: exact, or the largest difference
    (integer outputs: in steps, with the count of elements that differ;
    float: also over the range of ours)."""
    ours = np.asarray(ours)
    peer = np.asarray(peer)
    if ours.size != peer.size:
        return {"exact": False, "error": "%d elements, ours %d" % (peer.size, ours.size)}
    peer = peer.reshape(ours.shape)
    if np.array_equal(ours, peer):
        return {"exact": True}
    d = np.abs(peer.astype(np.float64) - ours.astype(np.float64))
    out: Dict[str, Any] = {"exact": False, "max_abs": float(d.max()),
                           "differ": int(np.count_nonzero(d)), "size": int(ours.size)}
    if ours.dtype.kind == "f":
        out["rel"] = float(d.max()) / max(float(ours.max() - ours.min()), 1e-30)
    return out


def agreement(c: Dict[str, Any]) -> str:
    if "error" in c:
        return c["error"]
    if c["exact"]:
        return "exact"
    if "rel" in c:
        return "max \\|Δ\\| %.2g of range" % c["rel"]
    return "max \\|Δ\\| %g (%d of %d differ)" % (c["max_abs"], c["differ"], c["size"])


def onnxruntime_column(tflite: Path, x: np.ndarray, ours: np.ndarray,
                       convert: Optional[Callable[[Path], Tuple[Optional[Path], str]]] = None
                       ) -> Tuple[Optional[OrtRunner], Dict[str, Any]]:
    """The onnxruntime runner of a .tflite model (converted by `convert`,
    default to_onnx) and what the table says of it: {"version", "onnx",
    "agreement"} or {"skipped": why}."""
    try:
        import onnxruntime as ort
    except ImportError:
        return None, {"skipped": "onnxruntime is not installed in %s" % sys.executable}
    path, why = (convert or to_onnx)(tflite)
    if path is None:
        return None, {"skipped": why}
    try:
        r = OrtRunner(path, x)
        r()
    except Exception as e:  # a session onnxruntime refuses: the column says why
        return None, {"skipped": "onnxruntime %s: %s: %s" % (
            ort.__version__, type(e).__name__, str(e).splitlines()[0][:200] if str(e) else "")}
    return r, {"version": ort.__version__, "onnx": str(path),
               "agreement": compare(ours, r.outputs()[0])}
