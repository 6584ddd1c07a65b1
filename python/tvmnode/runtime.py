"""tvmnode.runtime: run models on the host.

    ex = tvmnode.runtime.Executor(mod)          # an IRModule, through the crt kernels
    y = ex(x)                                   # numpy in, numpy out
    y = ex.run(input=x)                         # by parameter name

    with tvmnode.runtime.load_module("kws.so") as m:   # a compiled model
        (y,) = m.run(x)                         # list of numpy arrays
        m.benchmark(number=100, repeat=5)       # {"median_ms": ..., ...}

Executor inputs reach the kernels without a copy when they are compact CPU
arrays (DLPack); outputs are new numpy arrays over new tensors. An executor
may be used from several threads, one run at a time (a second concurrent
run is a RuntimeError).

A Module runs a model compiled ahead of time (docs/mlf.md) from a shared
library built by `tvmnode build` or tvmnode.codegen.build_library, or from
the program's system library (system_module). It needs no compiler. Inputs
are read without a copy when the array is compact and aligned for its
dtype, else copied once, and stay the inputs until set again. run(x, ...)
with every input given, as arrays of exactly the inputs' dtypes and
shapes, is one C call. Outputs live in the Module's buffers, which the
next run overwrites, so run() and get_output() return copies unless
copy=False (then the array views the buffer and keeps the Module's memory
alive). One Module serves one thread at a time (another thread gets a
RuntimeError); make a Module per thread to run in parallel: runs release
the GIL. See docs/runtime.md, "Modules".
"""
from __future__ import annotations

import threading
from typing import Any, Dict, List, Optional, Tuple, Union

from ._core import get_global_func
from ._ffi import _module_run

_new = get_global_func("runtime.Executor")
_run = get_global_func("runtime.ExecutorRun")
_inputs = get_global_func("runtime.ExecutorInputs")
_outputs = get_global_func("runtime.ExecutorOutputs")
_stats = get_global_func("runtime.ExecutorStats")
_profile = get_global_func("runtime.ExecutorProfile")
_threads = get_global_func("runtime.ExecutorThreads")
_isa_limit = get_global_func("runtime.IsaLimit")

ISA_LEVELS = ("portable", "sse2", "sse41", "avx2", "avx512bw", "avx512vnni")


def set_isa(level: Union[str, int]) -> str:
    """Caps the instruction-set forms the int8/float kernels take in this
    process (the Executor's and every Module's): "portable", "sse2",
    "sse41", "avx2", "avxvnni" (AVX2 and the AVX-VNNI forms: reads back
    as "avx2"), "avx512" (AVX-512BW), "vnni" (AVX-512 VNNI), or a level
    0-5; the CPU's own level is the ceiling. TVMNODE_ISA sets the
    same at start-up. Returns the name of the level now in effect;
    ValueError for a level it does not know."""
    return ISA_LEVELS[int(_isa_limit(level))]


def isa() -> str:
    """The name of the instruction-set level the kernels take now."""
    return ISA_LEVELS[int(_isa_limit(-1))]


def _describe(items: Any) -> List[Dict[str, Any]]:
    return [{"name": str(m["name"]), "shape": tuple(int(d) for d in m["shape"]),
             "dtype": str(m["dtype"])} for m in items]


class Executor:
    """Runs function `entry` of an IRModule (typed with InferType first if
    it is not). Works before and after FuseOps and the rest of the pass
    pipeline; operators without a kernel for their types raise
    NotImplementedError naming them when the executor is made.

    threads: run the largest convolutions and dense layers over this many
    threads (a pool made once, each thread a band of a convolution's output
    rows or a block of a dense layer's outputs); 1, the default, is
    off. int8 outputs are the same bytes for any count; ValueError outside
    1..64."""

    def __init__(self, mod: Any, entry: str = "main", threads: int = 1) -> None:
        self._prog = _new(mod, entry)
        if isinstance(threads, bool) or threads != 1:
            self.set_threads(threads)
        inputs = _describe(_inputs(self._prog))
        outputs = _describe(_outputs(self._prog))
        # a stateful module's states are parameters and results of its
        # entry that the executor feeds and keeps (module attribute "states")
        self._states = _module_states(mod) if entry == "main" else []
        sp = {s["param"] for s in self._states}
        sr = {s["result"] for s in self._states}
        self.inputs = [d for i, d in enumerate(inputs) if i not in sp]
        self.outputs = [d for i, d in enumerate(outputs) if i not in sr]
        self._nin, self._nout = len(inputs), len(outputs)
        self._real_in = [i for i in range(len(inputs)) if i not in sp]
        self._real_out = [i for i in range(len(outputs)) if i not in sr]
        self._names = [i["name"] for i in self.inputs]
        self._buffers: List[Any] = []
        self.reset()

    @property
    def stateful(self) -> bool:
        """Whether the model keeps state between runs."""
        return bool(self._states)

    def reset(self) -> None:
        """Give every state its initial value (as after construction)."""
        self._buffers = [s["init"].copy() for s in self._states]

    def states(self) -> Dict[str, Any]:
        """Each state's current value (copies), by name."""
        return {s["name"]: b.copy() for s, b in zip(self._states, self._buffers)}

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
        bound; intermediates and kernel scratch, as the generated code's
        workspace pool), the most scratch one kernel call takes
        ("scratch_bytes", inside the arena), multiply-accumulates per run ("macs"),
        and with profiling on the runs timed, their total time and the time
        inside kernels ("runs", "run_ns", "kernel_ns")."""
        return {str(k): int(v) for k, v in _stats(self._prog).items()}

    @property
    def threads(self) -> int:
        """The threads runs take (1: off)."""
        return int(_threads(self._prog))

    def set_threads(self, n: int) -> None:
        """Run the largest convolutions and dense layers over n threads from
        now on (1: off; ValueError outside 1..64, TypeError for a non-int)."""
        if isinstance(n, bool) or not hasattr(type(n), "__index__"):
            raise TypeError("Executor.set_threads: argument n: expected an "
                            "int, got %s" % type(n).__name__)
        _threads(self._prog, n.__index__())

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
            elif isinstance(a, numpy.ndarray) and not a.flags.c_contiguous:
                # a strided view is copied, as Module.run does (other
                # DLPack producers are passed as they are)
                a = numpy.ascontiguousarray(a)
            args.append(a)
        if not self._states:
            return [numpy.from_dlpack(t) for t in _run(self._prog, *args)]
        full: List[Any] = [None] * self._nin
        for k, a in zip(self._real_in, args):
            full[k] = a
        for s, b in zip(self._states, self._buffers):
            full[s["param"]] = b
        outs = [numpy.from_dlpack(t) for t in _run(self._prog, *full)]
        # the new values are the run's own results: nothing reads the old
        # buffers any more
        self._buffers = [numpy.array(outs[s["result"]], copy=True) for s in self._states]
        return [outs[k] for k in self._real_out]


def _module_states(mod: Any) -> List[Dict[str, Any]]:
    """The "states" attribute of a module (tvmnode.frontend.tflite_state):
    per state its name, initial value (numpy), parameter and result index."""
    import numpy

    attrs = getattr(mod, "attrs", None)
    if attrs is None or "states" not in attrs:
        return []
    out = []
    for s in attrs["states"]:
        dtype = numpy.dtype("bool" if str(s["dtype"]) == "bool" else str(s["dtype"]))
        init = numpy.array([v for v in s["init"]], dtype=dtype).reshape(
            tuple(int(d) for d in s["shape"]))
        out.append({"name": str(s["name"]), "init": init, "param": int(s["param"]),
                    "result": int(s["result"])})
    return out



# ---- compiled models ---------------------------------------------------------------

_mod_load = get_global_func("runtime.ModuleLoad")
_mod_system = get_global_func("runtime.ModuleSystem")
_mod_describe = get_global_func("runtime.ModuleDescribe")
_mod_set_input = get_global_func("runtime.ModuleSetInput")
_mod_get_output = get_global_func("runtime.ModuleGetOutput")
_mod_invoke = get_global_func("runtime.ModuleInvoke")
_mod_time = get_global_func("runtime.ModuleTime")
_mod_set_workspace = get_global_func("runtime.ModuleSetWorkspace")
_mod_reset = get_global_func("runtime.ModuleReset")
_mod_threads = get_global_func("runtime.ModuleThreads")
_mod_invoke.release_gil = True  # a model may run for milliseconds
_mod_time.release_gil = True


def load_module(path: str, name: Optional[str] = None, threads: int = 1) -> "Module":
    """The model `name` (may be left out when there is one) of the shared
    library at `path`. OSError when the library cannot be loaded or holds
    no model; KeyError when it holds no model of that name. The library
    stays loaded while the Module or an output array of it lives.
    threads: see Module.set_threads (1, the default: off)."""
    m = Module(_mod_load(str(path), name))
    if isinstance(threads, bool) or threads != 1:
        m.set_threads(threads)
    return m


def system_module(name: str) -> "Module":
    """The model `name` of the system library: archives compiled with
    -DTVMGEN_SYSTEM_LIB and linked into the program. KeyError naming the
    models there when it has none of that name."""
    return Module(_mod_system(name))


def _tensor_infos(items: Any) -> List[Dict[str, Any]]:
    return [dict(d, scale=float(m["scale"]), zero_point=int(m["zero_point"]))
            for d, m in zip(_describe(items), items)]


class Module:
    """A compiled model with its own memory (see the module docstring).
    `inputs` and `outputs` describe its tensors: name, shape, dtype and the
    quantization scale and zero point (0.0 and 0 when not quantized)."""

    def __init__(self, handle: Any) -> None:
        d = _mod_describe(handle)
        self._h: Any = handle
        self._busy = threading.Lock()
        self._views: List[Any] = []
        self._lent: Optional[Tuple[Tuple[Any, ...], int]] = None  # see _keep_lent
        self.name: str = str(d["name"])
        self.inputs = _tensor_infos(d["inputs"])
        self.outputs = _tensor_infos(d["outputs"])
        self.macs = int(d["macs"])
        self.workspace_bytes = int(d["workspace_bytes"])
        self.pools: List[Dict[str, Any]] = [
            {"name": str(p["name"]), "size": int(p["size"]), "alignment": int(p["alignment"])}
            for p in d["workspace_pools"]]
        # a streaming model's state pool (0: each run is independent)
        self.state_bytes = int(d["state_bytes"])
        self._names = [i["name"] for i in self.inputs]

    def __repr__(self) -> str:
        state = "closed" if self._h is None else "%d inputs, %d outputs" % (
            len(self.inputs), len(self.outputs))
        return "<tvmnode.runtime.Module '%s': %s>" % (self.name, state)

    @property
    def handle(self) -> Any:
        """The tn.Module object (for the registry's runtime.Module* functions)."""
        if self._h is None:
            raise ValueError("Module '%s' is closed" % self.name)
        return self._h

    def close(self) -> None:
        """Let go of the Module. Arrays returned with copy=False stay valid:
        they keep its memory (and its library) alive."""
        self._h = None
        self._views = []
        self._lent = None

    def __enter__(self) -> "Module":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _array(self, a: Any, info: Dict[str, Any]) -> Any:
        import numpy

        if isinstance(a, numpy.ndarray):
            return numpy.ascontiguousarray(a)  # no copy when already compact
        if hasattr(a, "__dlpack__") or isinstance(a, bytes):
            return a
        try:
            return numpy.asarray(a, dtype=info["dtype"])
        except (TypeError, ValueError) as e:
            raise TypeError("model '%s', input '%s': expected an array of %s with shape "
                            "%s, got %s (%s)" % (self.name, info["name"], info["dtype"],
                                                 list(info["shape"]), type(a).__name__, e)
                            ) from None

    def _info(self, key: Union[int, str]) -> Dict[str, Any]:
        if isinstance(key, str):
            if key not in self._names:
                raise KeyError("model '%s' has no input '%s' (its inputs: %s)"
                               % (self.name, key, ", ".join(self._names)))
            return self.inputs[self._names.index(key)]
        if not 0 <= int(key) < len(self.inputs):
            raise IndexError("model '%s' has %d inputs, no input %d"
                             % (self.name, len(self.inputs), key))
        return self.inputs[int(key)]

    def set_input(self, key: Union[int, str], array: Any) -> None:
        """Set input `key` (an index or a name) from an array (numpy, any
        DLPack producer, or bytes of the input's size). A compact array
        aligned for its dtype is read in place at run(): changing it
        before the run changes what the model sees."""
        info = self._info(key)
        with self._claim():
            self._keep_lent(skip=(self._names.index(info["name"]),))
            _mod_set_input(self.handle, key, self._array(array, info))

    def run(self, *arrays: Any, copy: bool = True, **named: Any) -> List[Any]:
        """Set the inputs given (positionally from the first, and/or by
        name), run once, and return every output as a numpy array: copies,
        or with copy=False views of the Module's buffers that the next run
        overwrites. Inputs not given keep what was set before."""
        if len(arrays) == len(self.inputs) and not named:
            # every input given: one C call that reads them in place when
            # they are exactly the inputs' dtype and shape (else None, and
            # the path below converts or names what is wrong)
            h, busy, box = self.handle, self._busy, [None]
            if not busy.acquire(False):
                raise _in_use(self)
            try:
                try:
                    ran = _module_run(h, arrays, box)
                finally:
                    if box[0] is not None:  # a run was tried: these were lent
                        self._lent = (arrays, box[0])
                if ran is not None:
                    # the outputs are read before another thread may run
                    views = self._views or self._output_views_held()
                    return [v.copy() for v in views] if copy else [v[...] for v in views]
            finally:
                busy.release()
        import numpy

        if len(arrays) > len(self.inputs):
            raise TypeError("model '%s' has %d inputs (%s), got %d arrays"
                            % (self.name, len(self.inputs), ", ".join(self._names),
                               len(arrays)))
        h = self.handle
        given = {self._names.index(self._info(key)["name"]) for key in named}
        with self._claim():
            self._keep_lent(skip=given.union(range(len(arrays))))
            ins = [self._array(a, i) for a, i in zip(arrays, self.inputs)]
            for key, a in named.items():
                k = self._names.index(self._info(key)["name"])
                if k < len(arrays):
                    raise TypeError("input '%s' given twice" % key)
                _mod_set_input(h, k, self._array(a, self.inputs[k]))
            outs = _mod_invoke(h, *ins)
            views = [numpy.from_dlpack(t) for t in outs]
            return [v.copy() for v in views] if copy else views

    __call__ = run

    @property
    def stateful(self) -> bool:
        """Whether the model keeps state between runs (a streaming model:
        LSTM, SVDF, resource variables). Its state starts at its initial
        values, every run advances it, and reset() starts it over."""
        return self.state_bytes > 0

    def reset(self) -> None:
        """Give a streaming model's states their initial values again, as
        when the Module was loaded (nothing to do for a model without
        state)."""
        with self._claim():
            _mod_reset(self.handle)

    def set_workspace(self, pool: int, array: Any = None) -> None:
        """Run in the caller's memory for workspace pool `pool` (an index
        into `pools`): a writable, compact array of at least the pool's
        bytes, aligned as the pool says (numpy.zeros(n, numpy.uint8) is,
        up to 16 bytes; larger alignments need an offset slice). The
        Module keeps the array alive until the pool is set again; None
        gives it back its own. Inputs that lived in the pool must be set
        again, and so must outputs be read again after a run."""
        with self._claim():
            self._keep_lent()
            self._views = []  # outputs in the pool move with it
            _mod_set_workspace(self.handle, pool, None if array is None else array)

    def _keep_lent(self, skip: Any = ()) -> None:
        """The C Module forgets arrays that one run read in place; before
        anything else reads or sets inputs, set them for good (in place,
        as set_input does), so that they stay the inputs until replaced.
        Inputs in `skip` are about to be replaced: left alone."""
        lent, self._lent = self._lent, None
        if lent is not None:
            arrays, mask = lent
            for k, (a, info) in enumerate(zip(arrays, self.inputs)):
                if not mask >> k & 1 or k in skip:  # copied (still set), or replaced
                    continue
                try:
                    _mod_set_input(self.handle, k, self._array(a, info))
                except (TypeError, ValueError) as e:  # e.g. a memoryview released since
                    raise ValueError("model '%s', input '%s': the %s given to the last "
                                     "run() can no longer be read (%s); set the input "
                                     "again" % (self.name, info["name"], type(a).__name__,
                                                e)) from None

    def _output_views_held(self) -> List[Any]:
        """Views of the Module's output buffers, made once (with the lock
        held): the buffers move only with set_workspace, which drops them,
        and each view keeps the Module's memory alive. Callers hand out
        copies or new views of them, never these objects."""
        import numpy

        self._views = [numpy.from_dlpack(_mod_get_output(self.handle, i))
                       for i in range(len(self.outputs))]
        return self._views

    def get_output(self, i: int, copy: bool = True) -> Any:
        """Output `i` of the last run (a copy, or with copy=False a view that
        the next run overwrites)."""
        import numpy

        with self._claim():
            v = numpy.from_dlpack(_mod_get_output(self.handle, i))
            return v.copy() if copy else v

    def benchmark(self, number: int = 10, repeat: int = 5) -> Dict[str, Any]:
        """Time `repeat` rounds of `number` runs each on the inputs set
        (inside C, without Python's overhead): milliseconds per run, as the
        median, mean, min, max and standard deviation over the rounds, and
        each round's value ("results_ms")."""
        import numpy

        with self._claim():
            self._keep_lent()
            ms = numpy.array([float(x) for x in _mod_time(self.handle, number, repeat)])
        return {"median_ms": float(numpy.median(ms)), "mean_ms": float(ms.mean()),
                "min_ms": float(ms.min()), "max_ms": float(ms.max()),
                "std_ms": float(ms.std()), "number": int(number), "repeat": int(repeat),
                "results_ms": ms.tolist()}

    @property
    def threads(self) -> int:
        """The threads runs take (1: off)."""
        return int(_mod_threads(self.handle)[0])

    @property
    def split_calls(self) -> int:
        """How many calls the last run ran in parts over the threads."""
        return int(_mod_threads(self.handle)[1])

    def set_threads(self, n: int) -> None:
        """Run the model's largest convolutions and dense layers (those its
        host archive hands to the crt's parallel hook) in parts over n
        threads from now on: a pool of n - 1 threads made here, once (1:
        off). The int8 outputs are the same bytes for any n. ValueError
        outside 1..64, TypeError for a non-int."""
        if isinstance(n, bool) or not hasattr(type(n), "__index__"):
            raise TypeError("Module.set_threads: argument n: expected an "
                            "int, got %s" % type(n).__name__)
        with self._claim():
            _mod_threads(self.handle, n.__index__())

    def _claim(self) -> "_Claim":
        return _Claim(self)


class _Claim:
    """Holds a Module's lock for one call; another thread that finds it
    held gets the RuntimeError the C Module gives, instead of interleaving
    its set_input and run with ours."""

    __slots__ = ("_m",)

    def __init__(self, m: Module) -> None:
        self._m = m

    def __enter__(self) -> None:
        if not self._m._busy.acquire(blocking=False):
            raise _in_use(self._m)

    def __exit__(self, *exc: Any) -> None:
        self._m._busy.release()


def _in_use(m: Module) -> RuntimeError:
    return RuntimeError("model '%s': the Module is in use by another thread (a Module "
                        "serves one thread at a time; make one Module per thread)" % m.name)
