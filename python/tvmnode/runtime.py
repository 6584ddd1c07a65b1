"""tvmnode.runtime: run IR modules on the host through the crt kernels.

    ex = tvmnode.runtime.Executor(mod)          # types and lowers "main" once
    y = ex(x)                                   # numpy in, numpy out
    y = ex.run(input=x)                         # by parameter name

Inputs reach the kernels without a copy when they are compact CPU arrays
(DLPack); outputs are new numpy arrays over new tensors. An executor may be
used from several threads, one run at a time (a second concurrent run is a
RuntimeError).
"""
from __future__ import annotations

from typing import Any, Dict, List, Tuple, Union

from ._core import get_global_func

_new = get_global_func("runtime.Executor")
_run = get_global_func("runtime.ExecutorRun")
_inputs = get_global_func("runtime.ExecutorInputs")
_outputs = get_global_func("runtime.ExecutorOutputs")
_stats = get_global_func("runtime.ExecutorStats")
_profile = get_global_func("runtime.ExecutorProfile")


def _describe(items: Any) -> List[Dict[str, Any]]:
    return [{"name": str(m["name"]), "shape": tuple(int(d) for d in m["shape"]),
             "dtype": str(m["dtype"])} for m in items]


class Executor:
    """Runs function `entry` of an IRModule (typed with InferType first if
    it is not). Works before and after FuseOps and the rest of the pass
    pipeline; operators without a kernel for their types raise
    NotImplementedError naming them when the executor is made."""

    def __init__(self, mod: Any, entry: str = "main") -> None:
        self._prog = _new(mod, entry)
        self.inputs = _describe(_inputs(self._prog))
        self.outputs = _describe(_outputs(self._prog))
        self._names = [i["name"] for i in self.inputs]

    def __call__(self, *arrays: Any) -> Union[Any, Tuple[Any, ...]]:
        """Run on positional inputs; one output comes back as one numpy
        array, several as a tuple."""
        outs = self._invoke(arrays)
        return outs[0] if len(outs) == 1 else tuple(outs)

    def run(self, **named: Any) -> Union[Any, Tuple[Any, ...]]:
        """Run with inputs by parameter name."""
        unknown = sorted(set(named) - set(self._names))
        if unknown:
            raise TypeError("Executor.run: unknown input %s (inputs: %s)"
                            % (", ".join(unknown), ", ".join(self._names)))
        missing = [n for n in self._names if n not in named]
        if missing:
            raise TypeError("Executor.run: missing input %s" % ", ".join(missing))
        return self(*[named[n] for n in self._names])

    def stats(self) -> Dict[str, int]:
        """Kernel calls per run ("steps"), arena bytes (planned and lower
        bound), kernel scratch bytes, multiply-accumulates per run ("macs"),
        and with profiling on the runs timed, their total time and the time
        inside kernels ("runs", "run_ns", "kernel_ns")."""
        return {str(k): int(v) for k, v in _stats(self._prog).items()}

    def profile(self, on: bool = True) -> None:
        """Time runs and kernel calls from now on (or stop); resets the
        counters that stats() reports."""
        _profile(self._prog, on)

    def _invoke(self, arrays: Tuple[Any, ...]) -> List[Any]:
        import numpy

        if len(arrays) != len(self.inputs):
            raise TypeError("Executor: expected %d inputs (%s), got %d"
                            % (len(self.inputs), ", ".join(self._names), len(arrays)))
        args = []
        for a, info in zip(arrays, self.inputs):
            if not hasattr(a, "__dlpack__"):
                a = numpy.asarray(a, dtype=info["dtype"])
            args.append(a)
        return [numpy.from_dlpack(t) for t in _run(self._prog, *args)]

