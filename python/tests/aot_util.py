"""Compiling an archive with the system C compiler and calling its
generated C interface through ctypes, for the code generator's tests."""
from __future__ import annotations

import ctypes
import os
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

from tvmnode import codegen

STRICT = ("-O2", "-Wall", "-Wextra", "-Werror")


def _struct(fields: Sequence[str]) -> Any:
    class S(ctypes.Structure):
        _fields_ = [(f, ctypes.c_void_p) for f in (fields or ["unused"])]
    return S


def aligned(nbytes: int, align: int = 16, offset: int = 0) -> np.ndarray:
    """A uint8 buffer whose address is `offset` past a multiple of align."""
    raw = np.zeros(nbytes + 2 * align, np.uint8)
    skip = (-raw.ctypes.data) % align + offset
    return raw[skip:skip + nbytes]


class HostModel:
    """An archive built into a shared library and loaded; run() calls
    tvmgen_<name>_run with freshly allocated pools."""

    def __init__(self, arch: codegen.Archive, workdir: str,
                 cflags: Sequence[str] = STRICT,
                 extra_sources: Optional[Dict[str, str]] = None) -> None:
        """extra_sources: more C files (name -> text) built in with the
        generated code (a device hook, say)."""
        self.arch = arch
        self.dir = arch.export(os.path.join(workdir, arch.name))
        for fname, text in (extra_sources or {}).items():
            with open(os.path.join(self.dir, "codegen", "host", "src", fname), "w") as f:
                f.write(text)
        self.so = codegen.build_library(self.dir, os.path.join(workdir, "lib%s.so" % arch.name),
                                        cflags=cflags)
        self.lib = ctypes.CDLL(self.so)
        info = arch.info
        self.inputs: List[Dict[str, Any]] = info["inputs"]
        self.outputs: List[Dict[str, Any]] = info["outputs"]
        self.io_in_pool = bool(info["interface"]["io_in_pool"])
        self.align = int(info["interface"]["alignment"])
        self.pools = [p for p in info["memory"]["pools"] if p["kind"] == "workspace"
                      and (p["size_bytes"] > 0 or (self.io_in_pool and p is
                                                   info["memory"]["pools"][0]))]
        self.const_pool = [p for p in info["memory"]["pools"] if p["kind"] == "constant"]
        self.devices = info["interface"]["devices"]
        n = arch.name
        self.In = _struct([i["name"] for i in self.inputs])
        self.Out = _struct([o["name"] for o in self.outputs])
        self.Ws = _struct([p["name"] for p in self.pools])
        self.run_fn = getattr(self.lib, "tvmgen_%s_run" % n)
        self.run_fn.restype = ctypes.c_int32
        self.device_structs: Optional[Any] = None

    def new_pools(self, offset: int = 0) -> List[np.ndarray]:
        return [aligned(p["size_bytes"], self.align, offset) for p in self.pools]

    def run(self, *arrays: np.ndarray, pools: Optional[List[np.ndarray]] = None,
            const_pool: Optional[np.ndarray] = None, devices: Sequence[int] = (),
            raw_status: bool = False, state: Optional[np.ndarray] = None) -> Any:
        """state: a stateful model's state pool (kept by the caller)."""
        pools = self.new_pools() if pools is None else pools
        ws = self.Ws(*[p.ctypes.data for p in pools])
        args: List[Any] = []
        outs = [np.zeros(o["shape"], o["dtype"]) for o in self.outputs]
        ins = [np.ascontiguousarray(a, dtype=i["dtype"]).reshape(i["shape"])
               for a, i in zip(arrays, self.inputs)]
        if self.io_in_pool:
            for a, i in zip(ins, self.inputs):
                base = pools[[p["name"] for p in self.pools].index(i["pool"])]
                base[i["offset"]:i["offset"] + a.nbytes] = a.view(np.uint8).reshape(-1)
        else:
            args += [ctypes.byref(self.In(*[a.ctypes.data for a in ins])),
                     ctypes.byref(self.Out(*[o.ctypes.data for o in outs]))]
        if self.pools:
            args.append(ctypes.byref(ws))
        if self.const_pool:
            cp = const_pool
            if cp is None:
                data = (ctypes.c_uint8 * self.const_pool[0]["size_bytes"]).in_dll(
                    self.lib, "tvmgen_%s_constant_pool_data" % self.arch.name)
                cp = aligned(self.const_pool[0]["size_bytes"], self.align)
                cp[:] = np.frombuffer(data, np.uint8)
            args.append(ctypes.byref(_struct(["constants"])(cp.ctypes.data)))
        if self.devices:
            args.append(ctypes.byref(_struct(self.devices)(*devices)))
        if state is not None:
            args.append(ctypes.c_void_p(state.ctypes.data))
        st = self.run_fn(*args)
        if raw_status:
            return st
        if st != 0:
            raise RuntimeError("tvmgen_%s_run returned %d" % (self.arch.name, st))
        if self.io_in_pool:
            outs = []
            for o in self.outputs:
                base = pools[[p["name"] for p in self.pools].index(o["pool"])]
                raw = base[o["offset"]:o["offset"] + o["size_bytes"]].copy()
                outs.append(raw.view(o["dtype"]).reshape(o["shape"]))
        return outs
