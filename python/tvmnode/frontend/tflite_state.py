"""State of streaming TFLite models, kept functional in the IR.

TFLite keeps state between runs in resource variables: VAR_HANDLE names a
variable (its shared_name), READ_VARIABLE reads it, ASSIGN_VARIABLE writes
it, and CALL_ONCE runs an init subgraph on the first run (and again after
a reset) that assigns the initial values. Nothing in the IR has effects:
each variable becomes a *state* of the module. "main" takes the state's
current value as an extra parameter (after the model's inputs) and returns
its new value as an extra result (after the model's outputs); READ_VARIABLE
is the value the variable holds at that point of the graph (the parameter,
or what an earlier ASSIGN_VARIABLE gave it) and the last ASSIGN_VARIABLE's
value is the result. The module attribute "states" lists, per state, its
name, shape, dtype, quantization, initial value (a flat list of numbers) and the indices
of its parameter and result; the runtimes own the buffers (the executor in
tvmnode.runtime, the generated C's state pool).

The init subgraph is evaluated here: it may only assign constants (the
initial values; a variable it does not assign starts at zeros). TFLite's
variable tensors (is_variable, the h/c/state tensors of LSTM and SVDF) are
states of the same kind; their kernels add them through `variable_tensor`.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Set

import numpy as np

from .. import ir
from .common import ModelImportError, UnsupportedOperatorError, var_name

WHO = "from_tflite"

STATE_OPS = ("VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE", "CALL_ONCE")


class State:
    """One variable: where its value is now, while the graph is converted."""

    __slots__ = ("name", "shape", "dtype", "scale", "zero_point", "init", "param", "value",
                 "assigned")

    def __init__(self, name: str) -> None:
        self.name = name
        self.shape: Optional[List[int]] = None
        self.dtype: Optional[str] = None
        self.scale: List[float] = []
        self.zero_point: List[int] = []
        self.init: Optional[np.ndarray] = None
        self.param: Optional[ir.Var] = None
        self.value: Optional[ir.Expr] = None  # after the last ASSIGN_VARIABLE
        self.assigned = False


class States:
    """The state operators of a model's main subgraph, found before any
    operator is converted; `handles(k)` says operator k is one of them and
    `convert(k)` takes it in graph order."""

    def __init__(self, imp: Any) -> None:
        self.imp = imp
        r = imp.r
        self.r = r
        self.ops: Set[int] = set()
        self.handle_of: Dict[int, str] = {}  # resource tensor -> variable name
        self.states: Dict[str, State] = {}
        self.order: List[str] = []
        self.call_once: List[int] = []
        self.used: Dict[str, int] = {}
        for k, op in enumerate(r.ops):
            name = r.op_name(k)
            if name not in STATE_OPS:
                continue
            self.ops.add(k)
            if name == "VAR_HANDLE":
                self.handle_of[self._one_output(k, name)] = self._shared_name(op, k, 0)
            elif name == "CALL_ONCE":
                self.call_once.append(k)
        for k in sorted(self.ops):
            name = r.op_name(k)
            op = r.ops[k]
            if name == "READ_VARIABLE":
                st = self._state(k, name, op.inputs[0] if op.inputs else -1)
                self._typed(st, r.tensors[self._one_output(k, name)], k, name)
            elif name == "ASSIGN_VARIABLE":
                if len(op.inputs) != 2:
                    raise self._error(k, name, "takes a resource and a value, got %d inputs"
                                      % len(op.inputs))
                st = self._state(k, name, op.inputs[0])
                self._typed(st, r.tensors[r._index(op.inputs[1], "input 1 of operator %d"
                                                   % k)], k, name)
        for k in self.call_once:
            self._run_init(k)
        for n in self.order:
            st = self.states[n]
            if st.shape is None or st.dtype is None:
                raise ModelImportError("%s: variable '%s' is neither read nor assigned in "
                                       "the main subgraph, so its shape is unknown" % (WHO, n))
            if st.init is None:
                st.init = np.zeros(st.shape, _np_dtype(st.dtype))

    # ---- finding the variables ------------------------------------------------

    def _error(self, k: int, name: str, msg: str, sub: int = 0) -> ModelImportError:
        where = "" if sub == 0 else "subgraph %d, " % sub
        return ModelImportError("%s: %soperator %d %s: %s" % (WHO, where, k, name, msg))

    def _one_output(self, k: int, name: str) -> int:
        outs = self.r.ops[k].outputs
        if len(outs) != 1:
            raise self._error(k, name, "expects one output, got %d" % len(outs))
        return self.r._index(outs[0], "the output of operator %d" % k)

    def _shared_name(self, op: Any, k: int, sub: int) -> str:
        o = self.r.options(op, "VarHandleOptions")
        raw = o.SharedName() if o is not None else None
        if not raw:
            raise self._error(k, "VAR_HANDLE", "has no shared_name; the variable cannot be "
                              "identified", sub)
        cont = o.Container()
        name = raw.decode("utf-8", "replace")
        return (cont.decode("utf-8", "replace") + "/" + name) if cont else name

    def _state(self, k: int, name: str, handle: int) -> State:
        var = self.handle_of.get(handle)
        if var is None:
            raise self._error(k, name, "its resource input (tensor %d) does not come from a "
                              "VAR_HANDLE" % handle)
        st = self.states.get(var)
        if st is None:
            st = self.states[var] = State(var)
            self.order.append(var)
        return st

    def _typed(self, st: State, t: Any, k: int, name: str) -> None:
        if t.dtype not in ("float32", "int8", "int16", "int32", "uint8", "int64", "bool"):
            raise UnsupportedOperatorError(
                "%s: operator %d %s: variable '%s' of type %s is not supported"
                % (WHO, k, name, st.name, t.dtype))
        if st.shape is None:
            st.shape, st.dtype = list(t.shape), t.dtype
            if t.scale is not None and t.zero_point is not None:
                st.scale = [float(s) for s in t.scale]
                st.zero_point = [int(z) for z in t.zero_point]
        elif st.shape != list(t.shape) or st.dtype != t.dtype:
            raise self._error(k, name, "variable '%s' is %s %s here but %s %s before"
                              % (st.name, t.dtype, list(t.shape), st.dtype, st.shape))

    def _run_init(self, k: int) -> None:
        """Evaluate CALL_ONCE's init subgraph: its ASSIGN_VARIABLEs of
        constants give the initial values."""
        r = self.r
        o = r.options(r.ops[k], "CallOnceOptions")
        if o is None:
            raise self._error(k, "CALL_ONCE", "its CallOnceOptions are missing")
        sub = int(o.InitSubgraphIndex())
        m = r.model
        if not 0 < sub < m.SubgraphsLength():
            raise self._error(k, "CALL_ONCE", "init subgraph %d does not exist (the model has "
                              "%d subgraphs)" % (sub, m.SubgraphsLength()))
        g = m.Subgraphs(sub)
        nbuf = m.BuffersLength()
        tensors = [r._tensor(i, g.Tensors(i), nbuf) for i in range(g.TensorsLength())]
        handles: Dict[int, str] = {}
        from .tflite import _Op  # the reader's operator record

        for j in range(g.OperatorsLength()):
            op = _Op(g.Operators(j))
            if not 0 <= op.opcode < len(r.opcodes):
                raise self._error(j, "?", "refers to operator code %d" % op.opcode, sub)
            name = r.opcodes[op.opcode][1]
            if name == "VAR_HANDLE":
                if len(op.outputs) != 1:
                    raise self._error(j, name, "expects one output", sub)
                handles[op.outputs[0]] = self._shared_name(op, j, sub)
            elif name == "ASSIGN_VARIABLE":
                if len(op.inputs) != 2 or op.inputs[0] not in handles:
                    raise self._error(j, name, "must assign a VAR_HANDLE of this subgraph",
                                      sub)
                if not 0 <= op.inputs[1] < len(tensors):
                    raise self._error(j, name, "its value is tensor %d; the subgraph has %d"
                                      % (op.inputs[1], len(tensors)), sub)
                t = tensors[op.inputs[1]]
                var = handles[op.inputs[0]]
                st = self.states.get(var)
                if st is None:  # initialised but never used by the model: dropped
                    continue
                if t.data is None:
                    raise UnsupportedOperatorError(
                        "%s: subgraph %d (CALL_ONCE init), operator %d ASSIGN_VARIABLE: the "
                        "value of variable '%s' must be a constant; init subgraphs that "
                        "compute are not supported" % (WHO, sub, j, var))
                if list(t.data.shape) != st.shape or t.dtype != st.dtype:
                    raise self._error(j, name, "initialises variable '%s' with %s %s; the "
                                      "model uses it as %s %s" % (var, t.dtype,
                                                                  list(t.data.shape),
                                                                  st.dtype, st.shape), sub)
                st.init = np.array(t.data, copy=True)
            else:
                raise UnsupportedOperatorError(
                    "%s: subgraph %d (CALL_ONCE init), operator %d %s: an init subgraph may "
                    "only assign constants to variables (VAR_HANDLE, ASSIGN_VARIABLE)"
                    % (WHO, sub, j, name))

    # ---- conversion ---------------------------------------------------------

    def handles(self, k: int) -> bool:
        return k in self.ops

    def begin(self, used: Dict[str, int]) -> None:
        """Before the first operator: parameter names are taken from `used`."""
        self.used = used

    def _value(self, st: State) -> ir.Expr:
        if st.param is None:
            assert st.shape is not None and st.dtype is not None
            st.param = ir.var(var_name("state_" + st.name, self.used), shape=st.shape,
                              dtype=st.dtype)
        if st.value is None:
            st.value = st.param
        return st.value

    def params(self) -> List[ir.Var]:
        """The states' parameters, in order (after every operator)."""
        out = []
        for n in self.order:
            st = self.states[n]
            self._value(st)
            assert st.param is not None
            out.append(st.param)
        return out

    def variable(self, t: Any) -> ir.Expr:
        """The value now of TFLite variable tensor `t` (is_variable: an LSTM's
        or SVDF's state), a state of its own named after the tensor whose
        initial value is the tensor's data or zeros (an int8 tensor's zero
        point); a kernel gives its new
        value with assign(t, expr)."""
        key = "tensor:%s" % t.name
        st = self.states.get(key)
        if st is None:
            st = self.states[key] = State(key)
            self.order.append(key)
            st.shape, st.dtype = list(t.shape), t.dtype
            if t.scale is not None and t.zero_point is not None:
                st.scale = [float(s) for s in t.scale]
                st.zero_point = [int(z) for z in t.zero_point]
            # as TFLite Micro resets variable tensors: zeros, an int8 one
            # its zero point
            fill = int(t.zero_point[0]) if (t.dtype == "int8" and t.zero_point is not None
                                            and t.zero_point.size == 1) else 0
            st.init = (np.array(t.data, copy=True) if t.data is not None
                       else np.full(st.shape, fill, _np_dtype(st.dtype)))
        return self._value(st)

    def assign(self, t: Any, value: ir.Expr) -> None:
        """Variable tensor `t` holds `value` from here on (see variable)."""
        self.variable(t)
        self.states["tensor:%s" % t.name].value = value

    def convert(self, k: int) -> None:
        r = self.r
        name = r.op_name(k)
        op = r.ops[k]
        if name == "READ_VARIABLE":
            st = self.states[self.handle_of[op.inputs[0]]]
            self.imp.exprs[op.outputs[0]] = self._value(st)
        elif name == "ASSIGN_VARIABLE":
            st = self.states[self.handle_of[op.inputs[0]]]
            st.value = self.imp.expr(r.tensors[op.inputs[1]])
            st.assigned = True

    def results(self) -> List[ir.Expr]:
        out = []
        for n in self.order:
            out.append(self._value(self.states[n]))
        return out

    def attach(self, mod: ir.IRModule, nparams: int, nresults: int) -> ir.IRModule:
        """The module with its "states" attribute (nothing when stateless)."""
        if not self.order:
            return mod
        items = []
        for i, n in enumerate(self.order):
            st = self.states[n]
            assert st.init is not None and st.shape is not None
            items.append({"name": n, "shape": list(st.shape), "dtype": st.dtype,
                          "scale": st.scale, "zero_point": st.zero_point,
                          "init": _plain(st.init),
                          "param": nparams + i, "result": nresults + i})
        return mod.with_attr("states", items)


def _plain(a: np.ndarray) -> List[Any]:
    """An initial value as module attributes hold it: a flat list of numbers
    (float32 values are exact as doubles)."""
    flat = np.ascontiguousarray(a).reshape(-1)
    if flat.dtype.kind == "f":
        return [float(v) for v in flat]
    return [int(v) for v in flat]


def _np_dtype(dtype: str) -> Any:
    return np.bool_ if dtype == "bool" else np.dtype(dtype)
