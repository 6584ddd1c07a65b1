"""A small client of tvmnode-serve (docs/remote.md) over its HTTP form of
the Open Inference Protocol, with Apache TVM's `rpc.connect` habits where
they fit, and nothing but the standard library and numpy:

    sess = tvmnode.remote.connect("127.0.0.1", 8000)
    m = sess.model("kws")                  # its inputs and outputs, as Module's
    (scores,) = m.run(x)                   # numpy in, numpy out
    f = m.time_evaluator(number=20, repeat=5)
    print(f(x).median)                     # seconds per run, timed on the server
    print(f(x).instructions)               # instructions per run, from a device
    print(f(x).cycles)                     # estimated cycles per run, emulated M4

Tensors travel with the binary tensor data extension. Errors the server
answers are RemoteError (a RuntimeError) with its message and HTTP status;
a model that is not served is a KeyError. Any client of the protocol
(tritonclient, ...) works with the server as well: this one is a
convenience."""

from __future__ import annotations

import json
import ssl
import statistics
import urllib.error
import urllib.request
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

__all__ = ["connect", "Session", "RemoteModel", "RemoteError", "BenchmarkResult"]

_DTYPES = {"BOOL": np.bool_, "INT8": np.int8, "UINT8": np.uint8, "INT16": np.int16,
           "UINT16": np.uint16, "INT32": np.int32, "UINT32": np.uint32, "INT64": np.int64,
           "UINT64": np.uint64, "FP32": np.float32, "FP64": np.float64}


class RemoteError(RuntimeError):
    """An error the server answered: .status is the HTTP status."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class BenchmarkResult:
    """Seconds per run, one per repeat, as time_evaluator's result has them
    (.results, .mean, .median, .min, .max, .std), and .instructions: the
    instructions per run, one per repeat, counted by a device that counts
    them (the emulated Cortex-M4 of tvmnode-serve --device
    NAME=qemu-m4:ARCHIVE), or None for a model that runs on the host; and
    .cycles: on that emulated Cortex-M4, the estimated cycles per run, one
    per repeat (firmware/common/cycles.py's timing table applied to the
    instructions that ran: an estimate, not a board's count), else None.
    Instructions are not cycles."""

    def __init__(self, results: Sequence[float], number: int,
                 instructions: Optional[Sequence[int]] = None,
                 cycles: Optional[Sequence[int]] = None) -> None:
        self.results = tuple(results)
        self.number = number
        self.instructions = None if instructions is None else tuple(instructions)
        self.cycles = None if cycles is None else tuple(cycles)
        self.mean = statistics.mean(self.results)
        self.median = statistics.median(self.results)
        self.min = min(self.results)
        self.max = max(self.results)
        self.std = statistics.pstdev(self.results)

    def __repr__(self) -> str:
        counts = ""
        if self.instructions is not None:
            counts = ", instructions=%d" % statistics.median_low(self.instructions)
        if self.cycles is not None:
            counts += ", cycles=%d" % statistics.median_low(self.cycles)
        return ("BenchmarkResult(median=%.3g s, mean=%.3g s, min=%.3g s, max=%.3g s%s, "
                "repeat=%d, number=%d)" % (self.median, self.mean, self.min, self.max, counts,
                                           len(self.results), self.number))


class Session:
    """A connection to one server (made by connect)."""

    def __init__(self, url: str, token: Optional[str], timeout: float,
                 context: Optional[ssl.SSLContext]) -> None:
        self.url = url.rstrip("/")
        self.timeout = timeout
        self._token = token
        self._context = context

    def _request(self, method: str, path: str, body: Optional[bytes] = None,
                 headers: Optional[Dict[str, str]] = None) -> Tuple[bytes, Dict[str, str]]:
        h = dict(headers or {})
        if self._token is not None:
            h["Authorization"] = "Bearer " + self._token
        req = urllib.request.Request(self.url + path, data=body, method=method, headers=h)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout, context=self._context) as r:
                return r.read(), {k.lower(): v for k, v in r.headers.items()}
        except urllib.error.HTTPError as e:
            text = e.read().decode("utf-8", "replace")
            try:
                message = str(json.loads(text)["error"])
            except (ValueError, KeyError, TypeError):
                message = text or e.reason
            if e.code == 404:
                raise KeyError(message) from None
            raise RemoteError("%s %s: %s" % (method, path, message), e.code) from None

    def _json(self, method: str, path: str) -> Any:
        return json.loads(self._request(method, path)[0])

    def is_live(self) -> bool:
        return bool(self._json("GET", "/v2/health/live").get("live"))

    def metadata(self) -> Dict[str, Any]:
        """The server's name, version and extensions."""
        return dict(self._json("GET", "/v2"))

    def model(self, name: str) -> "RemoteModel":
        """The served model `name` (KeyError if it is not served)."""
        return RemoteModel(self, name, self._json("GET", "/v2/models/" + name))


class RemoteModel:
    """A model on the server: .inputs and .outputs as Module has them (name,
    shape, dtype, scale, zero_point), run() and time_evaluator()."""

    def __init__(self, sess: Session, name: str, meta: Dict[str, Any]) -> None:
        self.session = sess
        self.name = name

        def info(t: Dict[str, Any]) -> Dict[str, Any]:
            p = t.get("parameters") or {}
            return {"name": t["name"], "shape": tuple(t["shape"]),
                    "dtype": np.dtype(_DTYPES[t["datatype"]]).name, "datatype": t["datatype"],
                    "scale": float(p.get("scale", 0.0)), "zero_point": int(p.get("zero_point", 0))}

        self.inputs: List[Dict[str, Any]] = [info(t) for t in meta["inputs"]]
        self.outputs: List[Dict[str, Any]] = [info(t) for t in meta["outputs"]]

    def _infer(self, arrays: Sequence[Any], named: Dict[str, Any],
               parameters: Dict[str, Any]) -> Tuple[List[np.ndarray], Dict[str, Any]]:
        if arrays and named:
            raise TypeError("RemoteModel.run: give the inputs in order or by name, not both")
        if named:
            unknown = set(named) - {i["name"] for i in self.inputs}
            if unknown:
                raise TypeError("RemoteModel.run: model '%s' has no input %s (its inputs: %s)"
                                % (self.name, sorted(unknown), [i["name"] for i in self.inputs]))
            arrays = [named.get(i["name"]) for i in self.inputs]
        if len(arrays) != len(self.inputs):
            raise TypeError("RemoteModel.run: model '%s' takes %d inputs, got %d"
                            % (self.name, len(self.inputs), len(arrays)))
        heads, blobs = [], []
        for info, a in zip(self.inputs, arrays):
            if a is None:
                raise TypeError("RemoteModel.run: input '%s' not given" % info["name"])
            x = np.ascontiguousarray(a)
            data = x.astype(x.dtype.newbyteorder("<"), copy=False).tobytes()
            native = x.dtype.newbyteorder("=")
            datatype = next((k for k, v in _DTYPES.items() if np.dtype(v) == native), None)
            if datatype is None:
                raise TypeError("RemoteModel.run: input '%s': arrays of %s are not sent"
                                % (info["name"], x.dtype))
            heads.append({"name": info["name"], "shape": list(x.shape), "datatype": datatype,
                          "parameters": {"binary_data_size": len(data)}})
            blobs.append(data)
        params: Dict[str, Any] = {"binary_data_output": True}
        params.update(parameters)
        head = json.dumps({"inputs": heads, "parameters": params}).encode()
        body, headers = self.session._request(
            "POST", "/v2/models/%s/infer" % self.name, head + b"".join(blobs),
            {"Content-Type": "application/octet-stream",
             "Inference-Header-Content-Length": str(len(head))})
        n = int(headers.get("inference-header-content-length", len(body)))
        resp = json.loads(body[:n])
        rest = body[n:]
        outs = []
        for o in resp["outputs"]:
            dtype = np.dtype(_DTYPES[o["datatype"]]).newbyteorder("<")
            size = int((o.get("parameters") or {}).get("binary_data_size", -1))
            if size >= 0:
                a = np.frombuffer(rest[:size], dtype).reshape(o["shape"])
                rest = rest[size:]
            else:
                a = np.asarray(o["data"], dtype).reshape(o["shape"])
            outs.append(a.astype(a.dtype.newbyteorder("="), copy=True))
        return outs, dict(resp.get("parameters") or {})

    def run(self, *arrays: Any, **named: Any) -> List[np.ndarray]:
        """Runs the model on the server: inputs in order or by name (numpy
        arrays of the input's dtype and shape; the server checks them and
        says what is wrong), the outputs as new arrays."""
        return self._infer(arrays, named, {})[0]

    def time_evaluator(self, number: int = 10, repeat: int = 1, min_repeat_ms: int = 0) -> Any:
        """A function of the model's inputs that times it on the server (one
        warm-up, then `repeat` times `number` runs, timed in C; `number` is
        raised until a repeat lasts `min_repeat_ms`) and returns a
        BenchmarkResult in seconds per run. A model on a device that counts
        instructions (the server answers `repeat_instructions`) gives its
        instructions per run too, in the result's .instructions, and the
        emulated Cortex-M4 its estimated cycles per run (`repeat_cycles`) in
        .cycles; a device takes at most 32 repeats and no `min_repeat_ms`."""
        params = {"repeat": int(repeat), "number": int(number), "min_repeat_ms": int(min_repeat_ms)}

        def evaluate(*arrays: Any, **named: Any) -> BenchmarkResult:
            _, p = self._infer(arrays, named, params)
            secs = _numbers(p, "repeat_seconds", float)
            counts: Dict[str, Optional[List[int]]] = {}
            for key in ("repeat_instructions", "repeat_cycles"):
                counts[key] = None
                if key in p:
                    counts[key] = c = _numbers(p, key, int)
                    if len(c) != len(secs):
                        raise RemoteError("model '%s': the server answered %d %s for %d "
                                          "repeat_seconds" % (self.name, len(c), key, len(secs)),
                                          200)
            return BenchmarkResult(secs, int(p["number"]), counts["repeat_instructions"],
                                   counts["repeat_cycles"])

        return evaluate

    def __repr__(self) -> str:
        return "RemoteModel(%r at %s)" % (self.name, self.session.url)


def _numbers(params: Dict[str, Any], key: str, kind: Any) -> List[Any]:
    # a timing parameter: numbers, one per repeat, comma-separated
    text = params.get(key)
    try:
        return [kind(v) for v in str(text).split(",")]
    except ValueError:
        raise RemoteError("the server answered %s=%r: expected comma-separated %s numbers"
                          % (key, text, "integer" if kind is int else "decimal"), 200) from None


def connect(host: str = "127.0.0.1", port: int = 8000, *, token: Optional[str] = None,
            tls: bool = False, cafile: Optional[str] = None, timeout: float = 60.0) -> Session:
    """A session with the tvmnode-serve at host:port (its HTTP port), as
    Apache TVM's rpc.connect(url, port) makes one: `token` is the bearer
    token of a server started with --token-file, `tls` (and `cafile`, the
    certificate to trust) for one with --tls-cert. Checks that the server
    is live."""
    context = ssl.create_default_context(cafile=cafile) if tls else None
    url = "%s://%s:%d" % ("https" if tls else "http", host, port)
    sess = Session(url, token, timeout, context)
    if not sess.is_live():
        raise RemoteError("%s is not live" % url, 503)
    return sess
