"""tvmnode-serve (go/serve) driven by unchanged Open Inference Protocol
clients: tritonclient over gRPC and HTTP, plain HTTP/JSON, and
tvmnode.remote, started with `tvmnode serve` and compared with the Module
run in-process; and tvmnode.remote against a model on an emulated
Cortex-M4 the server starts (--device NAME=qemu-m4:ARCHIVE), timed in the
board's instructions.

The server program is $TVMNODE_SERVE, or built here from go/serve into the
build tree (needs Go 1.26; skipped without Go); the board needs
qemu-system-arm and arm-none-eabi-gcc (skipped without them)."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from typing import Any, Dict, Iterator, List, Optional, Tuple

import numpy as np
import pytest

from tvmnode import cli, runtime

MODELS = os.environ.get("TVMNODE_MODELS", os.path.normpath(
    os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "models")))
ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))


def _build_dir() -> str:
    return os.environ.get("TVMNODE_BUILD_DIR") or os.path.join(ROOT, "build")


def _server_program() -> str:
    # $TVMNODE_SERVE, or else built from this tree's go/serve (go build
    # redoes only what changed), never a stale program found on PATH
    if os.environ.get("TVMNODE_SERVE"):
        return os.environ["TVMNODE_SERVE"]
    build = _build_dir()
    prog = os.path.join(build, "go", "tvmnode-serve")
    if not os.path.isdir(os.path.join(build, "libtvmnode")):
        pytest.skip("no build tree at %s to build tvmnode-serve against" % build)
    script = ('. "$1/go/tools.sh" "$2" >/dev/null && cd serve && '
              'go build -o "$3" ./cmd/tvmnode-serve')
    r = subprocess.run(["bash", "-c", script, "-", ROOT, build, prog],
                       capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        if "go not found" in r.stderr:
            pytest.skip("tvmnode-serve needs Go: " + r.stderr.strip())
        raise AssertionError("building tvmnode-serve failed:\n" + r.stdout + r.stderr)
    return prog


class Served:
    """A running server: its gRPC and HTTP addresses, the library served,
    and the lines it printed (read on a thread of their own)."""

    def __init__(self, proc: "subprocess.Popen[str]", grpc: str, http: str, so: str) -> None:
        self.proc, self.grpc, self.http, self.so = proc, grpc, http, so
        self.lines: List[str] = []
        self.reader: Optional[threading.Thread] = None

    def terminate(self) -> str:
        """Stops the server with SIGTERM, as a service manager does, and
        returns all it printed."""
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=30)
        if self.reader is not None:
            self.reader.join(timeout=10)
        return "".join(self.lines)


def _start(args: List[str], so: str, env: Dict[str, str]) -> Served:
    # `tvmnode serve` execs the server; default address: loopback
    proc = subprocess.Popen([sys.executable, "-m", "tvmnode", "serve"] + args,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    assert proc.stdout is not None
    addrs: Dict[str, str] = {}
    lines: List[str] = []
    started = False
    timer = threading.Timer(60, proc.kill)
    timer.start()
    try:
        for line in proc.stdout:
            lines.append(line)
            if line.startswith("tvmnode-serve: grpc on "):
                addrs["grpc"] = line.split()[-1]
            elif line.startswith("tvmnode-serve: http on "):
                addrs["http"] = line.split()[-1]
            elif line.startswith("tvmnode-serve: models"):
                started = True
                break
    finally:
        timer.cancel()
    if not started:
        proc.kill()
        proc.wait()
        raise AssertionError("the server did not start:\n" + "".join(lines))
    s = Served(proc, addrs.get("grpc", ""), addrs.get("http", ""), so)
    s.lines = lines
    # the server's later lines (device logs, the stop) are read as they
    # come, so that it never blocks on a full pipe
    out = proc.stdout

    def drain() -> None:
        for line in out:
            s.lines.append(line)

    s.reader = threading.Thread(target=drain, daemon=True)
    s.reader.start()
    return s


def _stop(s: Served) -> None:
    if s.proc.poll() is None:
        s.proc.kill()
        s.proc.wait()


@pytest.fixture(scope="module")
def served(tmp_path_factory: Any) -> Iterator[Served]:
    model = os.path.join(MODELS, "kws_ref_model.tflite")
    if not os.path.exists(model):
        pytest.skip("model %s not found" % model)
    prog = _server_program()
    d = tmp_path_factory.mktemp("serve")
    so = str(d / "kws.so")
    assert cli.main(["compile", model, "--name", "kws", "-o", str(d / "kws"), "--shared", so]) == 0
    s = _start(["--grpc-port", "0", "--http-port", "0", "--instances", "2", so], so,
               dict(os.environ, TVMNODE_SERVE=prog))
    assert s.grpc and s.http, "the server did not print its addresses: %s" % s.lines
    yield s
    _stop(s)


def _expected(so: str, x: np.ndarray) -> Tuple[str, np.ndarray]:
    with runtime.load_module(so) as m:
        name = m.inputs[0]["name"]
        (y,) = m.run(x)
        return name, np.array(y, copy=True)


def test_listens_on_loopback_by_default(served: Served) -> None:
    assert served.grpc.startswith("127.0.0.1:")
    assert served.http.startswith("http://127.0.0.1:")


def test_tritonclient_grpc(served: Served) -> None:
    grpcclient = pytest.importorskip("tritonclient.grpc")
    rng = np.random.default_rng(1)
    with runtime.load_module(served.so) as m:
        info = m.inputs[0]
    x = rng.integers(-128, 128, size=info["shape"], dtype=np.int8)
    name, want = _expected(served.so, x)
    c = grpcclient.InferenceServerClient(url=served.grpc)
    try:
        assert c.is_server_live() and c.is_server_ready() and c.is_model_ready("kws")
        md = c.get_model_metadata("kws", as_json=True)
        assert md["inputs"][0]["name"] == name and md["inputs"][0]["datatype"] == "INT8"
        inp = grpcclient.InferInput(name, list(x.shape), "INT8")
        inp.set_data_from_numpy(x)
        res = c.infer("kws", [inp])
        np.testing.assert_array_equal(res.as_numpy(res.get_response().outputs[0].name), want)
        # timing, as a tuning client asks for it
        res = c.infer("kws", [inp], parameters={"repeat": 3, "number": 2})
        params = res.get_response().parameters
        secs = [float(v) for v in params["repeat_seconds"].string_param.split(",")]
        assert len(secs) == 3 and all(0 < v < 1 for v in secs)
        assert params["number"].int64_param == 2
        # a wrong shape is refused, saying what is wrong
        bad = grpcclient.InferInput(name, [1, 7], "INT8")
        bad.set_data_from_numpy(np.zeros((1, 7), np.int8))
        with pytest.raises(Exception, match=r"got shape \[1 7\]"):
            c.infer("kws", [bad])
    finally:
        c.close()


def test_tritonclient_http(served: Served) -> None:
    httpclient = pytest.importorskip("tritonclient.http")
    rng = np.random.default_rng(2)
    with runtime.load_module(served.so) as m:
        info = m.inputs[0]
    x = rng.integers(-128, 128, size=info["shape"], dtype=np.int8)
    name, want = _expected(served.so, x)
    c = httpclient.InferenceServerClient(url=served.http[len("http://"):])
    try:
        assert c.is_server_live() and c.is_model_ready("kws")
        for binary in (True, False):
            inp = httpclient.InferInput(name, list(x.shape), "INT8")
            inp.set_data_from_numpy(x, binary_data=binary)
            out = httpclient.InferRequestedOutput(m_output_name(c), binary_data=binary)
            res = c.infer("kws", [inp], outputs=[out])
            np.testing.assert_array_equal(res.as_numpy(m_output_name(c)), want)
        with pytest.raises(Exception, match="model 'nope' is not served"):
            c.infer("nope", [inp])
    finally:
        c.close()


def m_output_name(c: Any) -> str:
    return str(c.get_model_metadata("kws")["outputs"][0]["name"])


def test_plain_http(served: Served) -> None:
    rng = np.random.default_rng(3)
    with runtime.load_module(served.so) as m:
        info = m.inputs[0]
    x = rng.integers(-128, 128, size=info["shape"], dtype=np.int8)
    name, want = _expected(served.so, x)
    body = {"inputs": [{"name": name, "shape": list(x.shape), "datatype": "INT8",
                        "data": x.ravel().tolist()}]}
    req = urllib.request.Request(served.http + "/v2/models/kws/infer",
                                 data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=20) as r:
        out = json.load(r)
    got = np.array(out["outputs"][0]["data"], np.int8).reshape(out["outputs"][0]["shape"])
    np.testing.assert_array_equal(got, want)
    body["inputs"][0]["shape"] = [1, 3]
    req = urllib.request.Request(served.http + "/v2/models/kws/infer",
                                 data=json.dumps(body).encode(), method="POST")
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(req, timeout=20)
    assert e.value.code == 400
    assert "got shape [1 3]" in json.load(e.value)["error"]
    with urllib.request.urlopen(served.http + "/metrics", timeout=20) as r:
        text = r.read().decode()
    assert 'tvmnode_serve_requests_total{code="OK",model="kws",protocol="http"}' in text


def test_remote_client(served: Served) -> None:
    from tvmnode import remote
    host, port = served.http[len("http://"):].rsplit(":", 1)
    sess = remote.connect(host, int(port))
    m = sess.model("kws")
    with runtime.load_module(served.so) as mod:
        assert m.inputs[0]["name"] == mod.inputs[0]["name"]
        assert m.inputs[0]["scale"] == pytest.approx(mod.inputs[0]["scale"])
        assert m.outputs[0]["zero_point"] == mod.outputs[0]["zero_point"]
    x = np.random.default_rng(4).integers(-128, 128, size=m.inputs[0]["shape"], dtype=np.int8)
    name, want = _expected(served.so, x)
    (y,) = m.run(x)
    np.testing.assert_array_equal(y, want)
    (y,) = m.run(**{name: x})
    np.testing.assert_array_equal(y, want)
    r = m.time_evaluator(number=3, repeat=4)(x)
    assert len(r.results) == 4 and r.number == 3 and 0 < r.min <= r.median <= r.max < 1
    assert r.instructions is None  # a host Module counts no instructions
    with pytest.raises(remote.RemoteError, match=r"is INT8, got datatype FP32") as e:
        m.run(x.astype(np.float32))
    assert e.value.status == 400
    with pytest.raises(KeyError, match="model 'nope' is not served"):
        sess.model("nope")
    with pytest.raises(TypeError, match="takes 1 inputs, got 2"):
        m.run(x, x)


def _tools_for_the_board() -> None:
    missing = [t for t in ("qemu-system-arm", "arm-none-eabi-gcc") if shutil.which(t) is None]
    if missing:
        pytest.skip("the emulated Cortex-M4 needs %s (./dev installs them)"
                    % " and ".join(missing))


@pytest.fixture(scope="module")
def device_served(tmp_path_factory: Any) -> Iterator[Served]:
    """tvmnode-serve serving AD (int8) on an emulated Cortex-M4 it starts
    (--device ad=qemu-m4:ARCHIVE, the firmware built into a fresh cache)
    and the same model compiled for the host, as `host`."""
    _tools_for_the_board()
    prog = _server_program()
    model = os.path.join(MODELS, "ad01_int8.tflite")
    assert os.path.exists(model), "model %s not found (TVMNODE_MODELS)" % model
    d = tmp_path_factory.mktemp("serve_device")
    arch, so = str(d / "ad_m4"), str(d / "ad.so")
    assert cli.main(["compile", model, "--name", "ad", "--target", "cortex-m", "-o", arch]) == 0
    assert cli.main(["compile", model, "--name", "ad", "-o", str(d / "ad_host"),
                     "--shared", so]) == 0
    # the server builds the firmware with firmware/common/run.py of these sources
    env = dict(os.environ, TVMNODE_SERVE=prog, TVMNODE_SOURCE_DIR=ROOT)
    s = _start(["--grpc-port", "-1", "--http-port", "0", "--firmware-cache", str(d / "firmware"),
                "--device", "ad=qemu-m4:" + arch, "host=" + so], so, env)
    yield s
    _stop(s)


def test_remote_client_on_an_emulated_device(device_served: Served) -> None:
    """tvmnode.remote against a model on the emulated board: its outputs
    are the host Module's, byte for byte, and time_evaluator gives the
    board's instructions per run beside its seconds; the same model on
    the host gives none."""
    from tvmnode import remote
    host, port = device_served.http[len("http://"):].rsplit(":", 1)
    sess = remote.connect(host, int(port))
    dev, cpu = sess.model("ad"), sess.model("host")
    with runtime.load_module(device_served.so) as mod:
        for mine, theirs in ((dev.inputs, mod.inputs), (dev.outputs, mod.outputs)):
            assert [(t["name"], t["shape"], t["dtype"], t["zero_point"]) for t in mine] == \
                [(t["name"], tuple(t["shape"]), t["dtype"], t["zero_point"]) for t in theirs]
            assert [t["scale"] for t in mine] == pytest.approx([t["scale"] for t in theirs])
        rng = np.random.default_rng(5)
        for _ in range(3):
            x = rng.integers(-128, 128, size=dev.inputs[0]["shape"], dtype=np.int8)
            (want,) = mod.run(x)
            (got,) = dev.run(x)
            np.testing.assert_array_equal(got, np.asarray(want))
            (got,) = cpu.run(x)
            np.testing.assert_array_equal(got, np.asarray(want))

    r = dev.time_evaluator(number=2, repeat=3)(x)
    assert r.number == 2 and len(r.results) == 3
    assert r.instructions is not None and len(r.instructions) == 3, r
    assert all(isinstance(n, int) and n > 0 for n in r.instructions), r.instructions
    # the same run each repeat: counts from the board's SysTick agree to a
    # few of its ticks (40 instructions a tick)
    assert max(r.instructions) - min(r.instructions) <= 100, r.instructions
    # under -icount shift=0 the board's time is 1 ns an instruction
    for secs, n in zip(r.results, r.instructions):
        assert abs(secs * 1e9 - n) <= 100, (r.results, r.instructions)
    assert "instructions=" in repr(r)
    # the emulated M4's estimated cycles a run, from the cycle plugin the
    # server runs qemu with: each at least an instruction's cycle, and the
    # same run each repeat the same count
    assert r.cycles is not None and len(r.cycles) == 3, r
    assert all(n <= c <= 3 * n for n, c in zip(r.instructions, r.cycles)), (r.instructions, r.cycles)
    assert max(r.cycles) - min(r.cycles) <= 100, r.cycles
    assert "cycles=" in repr(r)

    h = cpu.time_evaluator(number=2, repeat=3)(x)
    assert len(h.results) == 3 and h.instructions is None and h.cycles is None
    assert "instructions" not in repr(h) and "cycles" not in repr(h)

    # what the board cannot do is refused, saying so
    with pytest.raises(remote.RemoteError, match="parameter 'repeat' must be in") as e:
        dev.time_evaluator(repeat=33)(x)
    assert e.value.status == 400
    with pytest.raises(remote.RemoteError, match="'min_repeat_ms' is not supported"):
        dev.time_evaluator(min_repeat_ms=5)(x)


def test_device_server_stops_with_its_board(device_served: Served) -> None:
    # after the test above: SIGTERM stops the server and the qemu it started
    pids = [int(m.group(1)) for m in
            (re.search(r"qemu pid (\d+) serving", line) for line in device_served.lines) if m]
    assert pids, "no qemu started: %s" % device_served.lines
    out = device_served.terminate()
    assert device_served.proc.returncode == 0, out
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_remote_timing_parameters(monkeypatch: Any) -> None:
    """What a timed answer's parameters become, and a malformed one
    refused, without a server."""
    from tvmnode import remote
    meta = {"inputs": [{"name": "x", "shape": [1], "datatype": "INT8"}],
            "outputs": [{"name": "y", "shape": [1], "datatype": "INT8"}]}
    m = remote.RemoteModel(remote.Session("http://127.0.0.1:1", None, 1.0, None), "dev", meta)
    answers: List[Dict[str, Any]] = []
    monkeypatch.setattr(m, "_infer", lambda arrays, named, params: ([], answers.pop(0)))
    x = np.zeros(1, np.int8)

    answers.append({"repeat_seconds": "0.5,0.25", "number": 2, "repeat_instructions": "7,9"})
    r = m.time_evaluator(repeat=2)(x)
    assert r.results == (0.5, 0.25) and r.instructions == (7, 9) and r.number == 2
    assert r.median == 0.375 and "instructions=7," in repr(r) and r.cycles is None
    answers.append({"repeat_seconds": "0.5,0.25", "number": 2, "repeat_instructions": "7,9",
                    "repeat_cycles": "12,15"})
    r = m.time_evaluator(repeat=2)(x)
    assert r.instructions == (7, 9) and r.cycles == (12, 15) and "cycles=12," in repr(r)
    answers.append({"repeat_seconds": "0.5", "number": 1})
    assert m.time_evaluator()(x).instructions is None
    for bad, why in (({"repeat_instructions": "7,9,11"}, "3 repeat_instructions for 2"),
                     ({"repeat_cycles": "12"}, "1 repeat_cycles for 2"),
                     ({"repeat_instructions": "7,x"}, "repeat_instructions='7,x': expected "
                                                      "comma-separated integer numbers"),
                     ({"repeat_seconds": None}, "repeat_seconds=None: expected")):
        answers.append(dict({"repeat_seconds": "0.5,0.25", "number": 2}, **bad))
        with pytest.raises(remote.RemoteError, match=re.escape(why)):
            m.time_evaluator(repeat=2)(x)


def test_sigterm_drains_and_stops(served: Served) -> None:
    # last in the file: it stops the module's server
    out = served.terminate()
    assert served.proc.returncode == 0, out
    assert "tvmnode-serve: stopped" in out


def test_cli_serve_without_the_program(monkeypatch: Any, tmp_path: Any, capsys: Any) -> None:
    monkeypatch.delenv("TVMNODE_SERVE", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("TVMNODE_BUILD_DIR", str(tmp_path))
    assert cli.main(["serve", "kws.so"]) == 1
    assert "tvmnode-serve not found" in capsys.readouterr().err
