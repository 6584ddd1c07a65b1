"""tvmnode-serve (go/serve) driven by unchanged Open Inference Protocol
clients: tritonclient over gRPC and HTTP, and plain HTTP/JSON, started with
`tvmnode serve` and compared with the Module run in-process.

The server program is $TVMNODE_SERVE, or built here from go/serve into the
build tree (needs Go 1.26; skipped without Go)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from typing import Any, Dict, Iterator, List, Tuple

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
    """A running server: its gRPC and HTTP addresses, the library served."""

    def __init__(self, proc: "subprocess.Popen[str]", grpc: str, http: str, so: str) -> None:
        self.proc, self.grpc, self.http, self.so = proc, grpc, http, so
        self.lines: List[str] = []


@pytest.fixture(scope="module")
def served(tmp_path_factory: Any) -> Iterator[Served]:
    model = os.path.join(MODELS, "kws_ref_model.tflite")
    if not os.path.exists(model):
        pytest.skip("model %s not found" % model)
    prog = _server_program()
    d = tmp_path_factory.mktemp("serve")
    so = str(d / "kws.so")
    assert cli.main(["compile", model, "--name", "kws", "-o", str(d / "kws"), "--shared", so]) == 0
    env = dict(os.environ, TVMNODE_SERVE=prog)
    # `tvmnode serve` execs the server; default address: loopback
    proc = subprocess.Popen([sys.executable, "-m", "tvmnode", "serve", "--grpc-port", "0",
                             "--http-port", "0", "--instances", "2", so],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    assert proc.stdout is not None
    addrs: Dict[str, str] = {}
    timer = threading.Timer(60, proc.kill)
    timer.start()
    try:
        for line in proc.stdout:
            if line.startswith("tvmnode-serve: grpc on "):
                addrs["grpc"] = line.split()[-1]
            elif line.startswith("tvmnode-serve: http on "):
                addrs["http"] = line.split()[-1]
            elif line.startswith("tvmnode-serve: models"):
                break
    finally:
        timer.cancel()
    assert set(addrs) == {"grpc", "http"}, "the server did not start: %s" % addrs
    s = Served(proc, addrs["grpc"], addrs["http"], so)
    yield s
    if proc.poll() is None:
        proc.kill()
        proc.wait()


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
    with pytest.raises(remote.RemoteError, match=r"is INT8, got datatype FP32") as e:
        m.run(x.astype(np.float32))
    assert e.value.status == 400
    with pytest.raises(KeyError, match="model 'nope' is not served"):
        sess.model("nope")
    with pytest.raises(TypeError, match="takes 1 inputs, got 2"):
        m.run(x, x)


def test_sigterm_drains_and_stops(served: Served) -> None:
    # last in the file: it stops the module's server
    served.proc.send_signal(signal.SIGTERM)
    out, _ = served.proc.communicate(timeout=30)
    assert served.proc.returncode == 0, out
    assert "tvmnode-serve: stopped" in out


def test_cli_serve_without_the_program(monkeypatch: Any, tmp_path: Any, capsys: Any) -> None:
    monkeypatch.delenv("TVMNODE_SERVE", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("TVMNODE_BUILD_DIR", str(tmp_path))
    assert cli.main(["serve", "kws.so"]) == 1
    assert "tvmnode-serve not found" in capsys.readouterr().err
