"""Running small IR functions through the executor in tests: built from a
function of their parameters, run before and after FuseOps."""
from typing import Any, Callable

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
