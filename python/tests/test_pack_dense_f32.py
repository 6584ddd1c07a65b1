"""PackDenseWeights on float32 dense layers: nn.dense with a constant
float32 weight [N, K] gets it packed as tn_crt_dense_f32_pack lays it out
(weight_layout "N16K1": blocks of 16 outputs, each block input-major), and
the outputs stay within 1e-6 of the output range of the portable kernels
on [N, K]: through the executor at every ISA level, and through the
compiled C for each target (codegen.compile packs for "host" only; the
generated C of a packed layer on the Cortex-M boards and wasm32 is
test_op_device's, through test_op_codegen's float dense cases)."""
from typing import Any, List, Tuple

import numpy as np
import pytest

from tvmnode import codegen, ir, runtime, transform
from tvmnode.ir import op

from exec_util import isa
from test_pack_dense_weights import _dense_calls as _int8_dense_calls, _exec, _pack

LEVELS = ["portable", "avx2", "avx512"]


def pack_reference(w: np.ndarray) -> np.ndarray:
    """w [N, K] packed from the layout's description: blocks of 16 outputs
    (the last the rest), each block's weights input by input."""
    n, k = w.shape
    return np.concatenate([w[j0:j0 + 16].T.reshape(-1) for j0 in range(0, n, 16)]).reshape(n, k)


def _layer(batch: int, cin: int, cout: int, seed: int, bias: bool = True,
           relu: bool = True, const_weight: bool = True) -> Tuple[ir.IRModule, np.ndarray]:
    rng = np.random.default_rng(seed)
    w = rng.uniform(-1, 1, (cout, cin)).astype("float32")
    x = ir.var("x", shape=(batch, cin), dtype="float32")
    params = [x]
    if const_weight:
        wv: Any = ir.const(w)
    else:
        wv = ir.var("w", shape=(cout, cin), dtype="float32")
        params.append(wv)
    y = op.nn.dense(x, wv)
    if bias:
        y = op.nn.bias_add(y, ir.const(rng.uniform(-1, 1, cout).astype("float32")), axis=1)
    if relu:
        y = op.nn.relu(y)
    return ir.IRModule.from_expr(ir.Function(params, y)), w


def _dense_calls(mod: ir.IRModule) -> List[Any]:
    return _int8_dense_calls(mod, "nn.dense")


def _inputs(batch: int, cin: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1, 1, (batch, cin)).astype("float32")


def _close(got: np.ndarray, want: np.ndarray, what: str) -> None:
    """Within 1e-6 of want's range (want: the portable kernels on [N, K])."""
    span = float(want.max() - want.min()) or 1.0
    err = float(np.abs(got.astype(np.float64) - want).max())
    assert err <= 1e-6 * span, "%s: %.3g off, over a range of %.3g" % (what, err, span)


@pytest.mark.parametrize("batch,cin,cout", [(1, 8, 6), (1, 640, 128), (2, 37, 70),
                                            (3, 128, 8), (1, 8, 128), (1, 5, 161)])
def test_a_float_dense_layer_is_packed_and_stays_within_tolerance(batch: int, cin: int,
                                                                  cout: int) -> None:
    mod, w = _layer(batch, cin, cout, seed=cin * cout + batch, relu=cout % 2 == 0)
    out = _pack(mod)
    [before] = _dense_calls(transform.InferType()(mod))
    [after] = _dense_calls(out)
    assert str(before.attrs.weight_layout) == "NK"
    assert str(after.attrs.weight_layout) == "N16K1"
    np.testing.assert_array_equal(np.array(after.args[1].data), pack_reference(w))
    x = _inputs(batch, cin, cout)
    with isa("portable"):
        want = _exec(mod, x)
    outs = {}
    for level in LEVELS:
        with isa(level) as got_level:
            outs[got_level] = _exec(out, x)
            _close(outs[got_level], want, "packed at %s" % got_level)
    # the AVX2 + FMA and AVX-512F forms run the same fused chains
    if "avx2" in outs and "avx512" in outs:
        np.testing.assert_array_equal(outs["avx2"], outs["avx512"])


def test_compile_packs_float_dense_for_host_only() -> None:
    mod, _ = _layer(2, 40, 36, seed=5)
    host = codegen.compile(mod, name="m")
    dev = codegen.compile(mod, name="m", target="cortex-m")
    wasm = codegen.compile(mod, name="m", target="wasm32")
    layouts = [[str(c.attrs.weight_layout) for c in _dense_calls(a.module)]
               for a in (host, dev, wasm)]
    assert layouts == [["N16K1"], ["NK"], ["NK"]]
    src = "".join(v for k, v in host.files.items() if k.endswith(".c"))
    assert ".packed = 1" in src and "tn_crt_call_dense_f32" in src
    assert ".packed = 1" not in "".join(v for k, v in dev.files.items() if k.endswith(".c"))
    x = _inputs(2, 40, 1)
    with isa("portable"):
        want = _exec(mod, x)
    for a in (host, dev, wasm):
        for level in LEVELS:
            with isa(level):
                _close(np.array(runtime.Executor(a.module)(x)), want, "compiled, %s" % level)


@pytest.mark.parametrize("case", ["parameter weight", "packed already", "int8 data"])
def test_what_must_stay_is_left_alone(case: str) -> None:
    if case == "parameter weight":
        mod = _layer(1, 8, 20, seed=1, const_weight=False)[0]
    elif case == "packed already":
        mod = _pack(_layer(1, 8, 20, seed=1)[0])
    else:
        x = ir.var("x", shape=(1, 8), dtype="int8")
        y = op.nn.dense(x, ir.const(np.ones((4, 8), "int8")), out_dtype="int32")
        mod = ir.IRModule.from_expr(ir.Function([x], y))
    before = transform.InferType()(mod)
    assert _pack(mod)["main"].same_as(before["main"])


def test_a_float_packed_weight_is_refused_by_the_int8_kernels() -> None:
    # qnn.dense given the float layout by hand: no int8 kernel reads it
    x = ir.var("x", shape=(1, 8), dtype="int8")
    c = lambda v, d="float32": ir.const(np.array(v, d))  # noqa: E731
    y = op.qnn.dense(x, ir.const(np.ones((4, 8), "int8")), c(3, "int32"), c(0, "int32"),
                     c(0.05), c(0.01), out_dtype="int32", weight_layout="N16K1")
    mod = ir.IRModule.from_expr(ir.Function([x], y))
    with pytest.raises(NotImplementedError, match="weight_layout 'N16K1'.*float32 dense"):
        _exec(mod, np.zeros((1, 8), "int8"))
