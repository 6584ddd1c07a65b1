"""Running small IR functions through the executor in tests: built from a
function of their parameters, run before and after FuseOps."""
import contextlib
from typing import Any, Callable, Iterator

import numpy as np

import tvmnode as tn
from tvmnode import ir, transform


def executor(build: Callable[..., Any], *arrays: np.ndarray, fuse: bool) -> Any:
    """An executor of `build(*params)` with one parameter per array."""
    params = [ir.var("x%d" % i, shape=a.shape, dtype=str(a.dtype)) for i, a in enumerate(arrays)]
    mod = ir.IRModule.from_expr(ir.Function(params, build(*params)))
    if fuse:
        mod = transform.FuseOps()(transform.InferType()(mod))
    return tn.runtime.Executor(mod)


def run_both(build: Callable[..., Any], *arrays: np.ndarray) -> np.ndarray:
    """Run unfused and fused; both must agree exactly."""
    a = np.asarray(executor(build, *arrays, fuse=False)(*arrays))
    f = np.asarray(executor(build, *arrays, fuse=True)(*arrays))
    np.testing.assert_array_equal(a, f)
    return a


@contextlib.contextmanager
def isa(level: str) -> Iterator[str]:
    """The crt's ISA forms capped at `level` in this process for the block
    (runtime.set_isa), then set back. Float outputs are the same bits on
    every target only from the portable kernels: the x86 float forms fuse
    their multiply-adds (within 1e-6 of the output range, not bit for bit),
    so a bit-for-bit comparison with a device, wasm or another layout takes
    the host's portable results."""
    old = tn.runtime.isa()
    try:
        yield tn.runtime.set_isa(level)
    finally:
        tn.runtime.set_isa(old)
