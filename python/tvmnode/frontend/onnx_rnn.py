"""ONNX's recurrent operators (LSTM, GRU, RNN) for from_onnx, unrolled over
the sequence, whose length the imported graph fixes, into IR operators.

The input projection of every step is one product (the whole sequence times
W, plus both biases where they add); each step then adds its hidden state
times R and applies the gates. Each direction is unrolled on its own and the
results are stacked as ONNX lays them out (layout 0: Y [seq, dirs, batch,
hidden], Y_h / Y_c [dirs, batch, hidden]; layout 1: batch first).

Supported: every direction, both layouts, initial states, LSTM's peepholes,
GRU's linear_before_reset, and the activations Sigmoid, Tanh, Relu,
HardSigmoid, LeakyRelu, Affine, ScaledTanh, ThresholdedRelu, Elu, Softsign
and Softplus (with their alpha / beta). Not supported (an error names the
node and the attribute): clip, LSTM's input_forget, and a sequence_lens
shorter than the sequence for some batch entry (a sequence_lens that is a
constant equal to the sequence length everywhere is accepted)."""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .. import ir
from .common import call, gt_mask as _gt_mask, scalar
from .onnx import _Ctx
from .onnx_ops import _shape_of

F = "float32"
# per operator: gates, default activations
_GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}
_DEFAULT_ACTS = {"LSTM": ["Sigmoid", "Tanh", "Tanh"], "GRU": ["Sigmoid", "Tanh"],
                 "RNN": ["Tanh"]}
# activation: (default alpha, default beta)
_ACTS: Dict[str, Tuple[Optional[float], Optional[float]]] = {
    "Sigmoid": (None, None), "Tanh": (None, None), "Relu": (None, None),
    "HardSigmoid": (0.2, 0.5), "LeakyRelu": (0.01, None), "Affine": (1.0, 0.0),
    "ScaledTanh": (1.0, 1.0), "ThresholdedRelu": (1.0, None), "Elu": (1.0, None),
    "Softsign": (None, None), "Softplus": (None, None),
}


def _f(v: float) -> ir.Expr:
    return scalar(float(v), F)


def _activation(name: str, alpha: Optional[float], beta: Optional[float]
                ) -> Callable[[ir.Expr], ir.Expr]:
    """An activation of the recurrent operators' list, as IR operators."""
    if name == "Sigmoid":
        return lambda x: call("sigmoid", x)
    if name == "Tanh":
        return lambda x: call("tanh", x)
    if name == "Relu":
        return lambda x: call("nn.relu", x)
    a = float(alpha) if alpha is not None else 0.0
    b = float(beta) if beta is not None else 0.0
    if name == "HardSigmoid":
        return lambda x: call("clip", call("add", call("multiply", x, _f(a)), _f(b)),
                              a_min=0.0, a_max=1.0)
    if name == "LeakyRelu":
        return lambda x: call("nn.leaky_relu", x, alpha=a)
    if name == "Affine":
        return lambda x: call("add", call("multiply", x, _f(a)), _f(b))
    if name == "ScaledTanh":
        return lambda x: call("multiply", call("tanh", call("multiply", x, _f(b))), _f(a))
    if name == "ThresholdedRelu":
        return lambda x: call("multiply", x, _gt_mask(call("subtract", x, _f(a)), F))
    if name == "Elu":
        return lambda x: call("add", call("nn.relu", x), call("multiply", _f(a), call(
            "subtract", call("exp", call("minimum", x, _f(0.0))), _f(1.0))))
    if name == "Softsign":
        return lambda x: call("divide", x, call("add", call("abs", x), _f(1.0)))
    if name == "Softplus":  # log(1 + exp(x)), as max(x, 0) + log(1 + exp(-|x|))
        return lambda x: call("add", call("nn.relu", x), call("log", call(
            "add", call("exp", call("negative", call("abs", x))), _f(1.0))))
    raise ValueError("activation %s is not supported" % name)


def _directions(ctx: _Ctx) -> List[bool]:
    """For each direction, whether it runs the sequence backwards."""
    d = ctx.only("direction", ("forward", "reverse", "bidirectional"), "forward")
    return {"forward": [False], "reverse": [True], "bidirectional": [False, True]}[d]


def _activations(ctx: _Ctx) -> List[List[Callable[[ir.Expr], ir.Expr]]]:
    """The activations of each direction (the attribute lists them for
    the first direction, then the second)."""
    n = len(_DEFAULT_ACTS[ctx.op])
    dirs = len(_directions(ctx))
    names = ctx.attr("activations")
    if names is None:
        names = _DEFAULT_ACTS[ctx.op] * dirs
    names = [str(v) for v in names]
    if len(names) != n * dirs:
        raise ctx.error("attribute activations=%s needs %d names (%d per direction)"
                        % (names, n * dirs, n))
    alphas = list(ctx.attr("activation_alpha") or [])
    betas = list(ctx.attr("activation_beta") or [])
    out: List[List[Callable[[ir.Expr], ir.Expr]]] = []
    ia = ib = 0
    for d in range(dirs):
        fs = []
        for name in names[d * n:(d + 1) * n]:
            spec = _ACTS.get(name)
            if spec is None:
                raise ctx.unsupported("activation %r is not supported (%s)"
                                      % (name, ", ".join(_ACTS)))
            alpha = beta = None
            if spec[0] is not None:  # the lists hold values only for those that take them
                alpha = alphas[ia] if ia < len(alphas) else spec[0]
                ia += 1
            if spec[1] is not None:
                beta = betas[ib] if ib < len(betas) else spec[1]
                ib += 1
            fs.append(_activation(name, alpha, beta))
        out.append(fs)
    return out


def _chk_rnn(ctx: _Ctx) -> None:
    """The first pass; the same checks run again on the built shapes."""
    ctx.dtypes((F,), 0, 1, 2)
    _directions(ctx)
    _activations(ctx)
    if ctx.attr("clip") is not None:
        raise ctx.unsupported("attribute clip is not supported")
    if ctx.op == "LSTM" and int(ctx.attr("input_forget", 0)):
        raise ctx.unsupported("attribute input_forget=1 is not supported")
    ctx.only("layout", (0, 1), 0)
    shapes = [_shape_of(ctx, i) if ctx.has(i) else [] for i in range(8)]
    if all(s is not None for s in shapes):
        _check_shapes(ctx, shapes)  # type: ignore[arg-type]


def _check_shapes(ctx: _Ctx, shapes: List[List[int]]) -> Tuple[int, int, int, int]:
    """Every input's shape against X's and hidden_size: (seq, batch, input
    size, hidden_size)."""
    op, g = ctx.op, _GATES[ctx.op]
    dirs = len(_directions(ctx))
    layout = int(ctx.attr("layout", 0))
    x, w, r = shapes[0], shapes[1], shapes[2]
    for i, what in ((0, "X"), (1, "W"), (2, "R")):
        if len(shapes[i]) != 3:
            raise ctx.error("input %d (%s) must be 3-d, got shape %s" % (i, what, shapes[i]))
    hid = ctx.attr("hidden_size")
    hid = int(hid) if hid is not None else int(r[2])
    seq, batch = (x[0], x[1]) if layout == 0 else (x[1], x[0])
    want = {1: [dirs, g * hid, x[2]], 2: [dirs, g * hid, hid]}
    for i, s in ((1, w), (2, r)):
        if list(s) != want[i]:
            raise ctx.error("input %d (%s) has shape %s, expected %s (directions, %d x "
                            "hidden_size, %s)" % (i, "W" if i == 1 else "R", list(s), want[i],
                                                  g, "input size" if i == 1 else "hidden_size"))
    if ctx.has(3) and list(shapes[3]) != [dirs, 2 * g * hid]:
        raise ctx.error("input 3 (B) has shape %s, expected %s" % (list(shapes[3]),
                                                                    [dirs, 2 * g * hid]))
    if ctx.has(4):
        lens = ctx.value(4, "sequence_lens")
        if lens.shape != (batch,) or np.any(lens != seq):
            raise ctx.unsupported("input 4 (sequence_lens) is supported only when it is the "
                                  "sequence length (%d) for every batch entry, got %s"
                                  % (seq, lens.tolist()))
    states = [(5, "initial_h")] + ([(6, "initial_c")] if op == "LSTM" else [])
    st = [dirs, batch, hid] if layout == 0 else [batch, dirs, hid]
    for i, what in states:
        if ctx.has(i) and list(shapes[i]) != st:
            raise ctx.error("input %d (%s) has shape %s, expected %s" % (i, what,
                                                                         list(shapes[i]), st))
    if op == "LSTM" and ctx.has(7) and list(shapes[7]) != [dirs, 3 * hid]:
        raise ctx.error("input 7 (P) has shape %s, expected %s" % (list(shapes[7]),
                                                                    [dirs, 3 * hid]))
    return seq, batch, x[2], hid


def _pick(x: ir.Expr, axis: int, i: int, n: int = 1) -> ir.Expr:
    return call("strided_slice", x, begin=[i], end=[i + n], strides=[1], axes=[axis])


def _row(x: ir.Expr, d: int, shape: Sequence[int]) -> ir.Expr:
    """Entry d of a per-direction input, reshaped."""
    return call("reshape", _pick(x, 0, d), newshape=list(shape))


def _rnn(ctx: _Ctx) -> List[Optional[ir.Expr]]:
    op, g = ctx.op, _GATES[ctx.op]
    layout = int(ctx.attr("layout", 0))
    seq, batch, n_in, hid = _check_shapes(ctx, [ctx.shape(i) if ctx.has(i) else []
                                                for i in range(8)])
    x = ctx.expr(0)
    if layout == 1:
        x = call("transpose", x, axes=[1, 0, 2])
    backwards = _directions(ctx)
    acts = _activations(ctx)
    w_all, r_all = ctx.expr(1), ctx.expr(2)
    b_all = ctx.expr(3) if ctx.has(3) else None

    def state(i: int, d: int) -> ir.Expr:
        if not ctx.has(i):
            return ir.const(np.zeros((batch, hid), np.float32))
        s = ctx.expr(i)
        return _row(s if layout == 0 else call("transpose", s, axes=[1, 0, 2]), d,
                    [batch, hid])

    ys, hs, cs = [], [], []
    for d, back in enumerate(backwards):
        f = acts[d]
        w = _row(w_all, d, [g * hid, n_in])
        r = _row(r_all, d, [g * hid, hid])
        wb = rb = None
        if b_all is not None:
            b = _row(b_all, d, [2 * g * hid])
            wb, rb = _pick(b, 0, 0, g * hid), _pick(b, 0, g * hid, g * hid)
        # every step's input projection at once: [seq * batch, g * hid]
        xw = call("nn.dense", call("reshape", x, newshape=[seq * batch, n_in]), w,
                  units=g * hid)
        if wb is not None:
            # GRU's hidden gate adds R's bias after the reset when linear_before_reset
            both = call("add", wb, rb) if op != "GRU" else None
            xw = call("add", xw, both if both is not None else wb)
        h, c = state(5, d), state(6, d) if op == "LSTM" else None
        p = _row(ctx.expr(7), d, [3 * hid]) if op == "LSTM" and ctx.has(7) else None
        steps: List[ir.Expr] = []
        for t in (range(seq - 1, -1, -1) if back else range(seq)):
            xt = _pick(xw, 0, t * batch, batch)
            if c is not None:  # LSTM
                h, c = _lstm_step(xt, h, c, r, p, hid, f)
            elif op == "GRU":
                h = _gru_step(xt, h, r, rb, hid, f, int(ctx.attr("linear_before_reset", 0)))
            else:
                h = f[0](call("add", xt, call("nn.dense", h, r, units=hid)))
            steps.append(h)
        if back:
            steps.reverse()
        ys.append(call("concatenate", ir.Tuple([call("reshape", s, newshape=[1, 1, batch, hid])
                                               for s in steps]), axis=0)
                  if len(steps) > 1 else call("reshape", steps[0], newshape=[1, 1, batch, hid]))
        hs.append(call("reshape", h, newshape=[1, batch, hid]))
        if c is not None:
            cs.append(call("reshape", c, newshape=[1, batch, hid]))

    def cat(parts: List[ir.Expr], axis: int) -> ir.Expr:
        return parts[0] if len(parts) == 1 else call("concatenate", ir.Tuple(parts), axis=axis)
    y, yh = cat(ys, 1), cat(hs, 0)
    yc = cat(cs, 0) if cs else None
    if layout == 1:
        y = call("transpose", y, axes=[2, 0, 1, 3])
        yh = call("transpose", yh, axes=[1, 0, 2])
        yc = call("transpose", yc, axes=[1, 0, 2]) if yc is not None else None
    return [y, yh] + ([yc] if op == "LSTM" else [])


def _lstm_step(xt: ir.Expr, h: ir.Expr, c: ir.Expr, r: ir.Expr, p: Optional[ir.Expr],
               hid: int, f: List[Callable[[ir.Expr], ir.Expr]]) -> Tuple[ir.Expr, ir.Expr]:
    """One LSTM step; the gates are ordered i, o, f, c (ONNX's order)."""
    z = call("add", xt, call("nn.dense", h, r, units=4 * hid))
    zi, zo, zf, zc = (_pick(z, 1, k * hid, hid) for k in range(4))
    if p is not None:
        pi, po, pf = (_pick(p, 0, k * hid, hid) for k in range(3))
        zi = call("add", zi, call("multiply", pi, c))
        zf = call("add", zf, call("multiply", pf, c))
    i, fg, cc = f[0](zi), f[0](zf), f[1](zc)
    c = call("add", call("multiply", fg, c), call("multiply", i, cc))
    if p is not None:
        zo = call("add", zo, call("multiply", po, c))
    h = call("multiply", f[0](zo), f[2](c))
    return h, c


def _gru_step(xt: ir.Expr, h: ir.Expr, r: ir.Expr, rb: Optional[ir.Expr], hid: int,
              f: List[Callable[[ir.Expr], ir.Expr]], linear_before_reset: int) -> ir.Expr:
    """One GRU step; the gates are ordered z, r, h (ONNX's order). xt holds
    X W^T + Wb; R's bias is added here, where ONNX adds it."""
    hr = call("nn.dense", h, r, units=3 * hid)
    if rb is not None:
        hr = call("add", hr, rb)
    xz, xr, xh = (_pick(xt, 1, k * hid, hid) for k in range(3))
    hz, hrr, hh = (_pick(hr, 1, k * hid, hid) for k in range(3))
    z = f[0](call("add", xz, hz))
    rg = f[0](call("add", xr, hrr))
    if linear_before_reset:
        cand = f[1](call("add", xh, call("multiply", rg, hh)))
    else:
        rh = _pick(r, 0, 2 * hid, hid)
        lin = call("nn.dense", call("multiply", rg, h), rh, units=hid)
        if rb is not None:
            lin = call("add", lin, _pick(rb, 0, 2 * hid, hid))
        cand = f[1](call("add", xh, lin))
    # (1 - z) * cand + z * h
    return call("add", cand, call("multiply", z, call("subtract", h, cand)))


CONVERTERS: Dict[str, Tuple[Callable[[_Ctx], Any], Optional[Callable[[_Ctx], None]]]] = {
    "LSTM": (_rnn, _chk_rnn),
    "GRU": (_rnn, _chk_rnn),
    "RNN": (_rnn, _chk_rnn),
}

PARAMETER_INPUTS: Dict[str, Tuple[int, ...]] = {"LSTM": (4,), "GRU": (4,), "RNN": (4,)}
