"""ConvertKernelLayout and codegen.compile(target=...): the weights of
one-group convolutions move between OIHW, HWIO and OHWI, and every result
stays what it was."""
from typing import Any, List

import numpy as np
import pytest

from tvmnode import codegen, ir, runtime, transform
from tvmnode.ir import op

from exec_util import isa

LAYOUTS = ["OIHW", "HWIO", "OHWI"]


def _weights(layout: str, cout: int, cin: int, k: int, dtype: str) -> np.ndarray:
    rng = np.random.default_rng(len(layout) + cout + cin)
    oihw = (rng.integers(-128, 128, (cout, cin, k, k)) if dtype == "int8"
            else rng.standard_normal((cout, cin, k, k))).astype(dtype)
    return np.ascontiguousarray(oihw.transpose(["OIHW".index(c) for c in layout]))


def _conv(layout: str, groups: int = 1, quantized: bool = True,
          const_weight: bool = True) -> ir.IRModule:
    cin, cout, k = 4 * groups, 6, 3
    dtype = "int8" if quantized else "float32"
    x = ir.var("x", shape=(1, 5, 6, cin), dtype=dtype)
    wv = _weights(layout, cout, cin // groups, k, dtype)
    params = [x]
    if const_weight:
        w: Any = ir.const(wv)
    else:
        w = ir.var("w", shape=wv.shape, dtype=dtype)
        params.append(w)
    attrs = dict(strides=[1, 2], padding=[1, 0, 1, 2], groups=groups, channels=cout,
                 kernel_size=[k, k], data_layout="NHWC", kernel_layout=layout)
    if quantized:
        y = op.qnn.conv2d(x, w, ir.const(np.array(5, "int32")), ir.const(np.array(0, "int32")),
                          ir.const(np.array(0.5, "float32")),
                          ir.const(np.array(0.25, "float32")), out_dtype="int32", **attrs)
    else:
        y = op.nn.conv2d(x, w, **attrs)
    return ir.IRModule.from_expr(ir.Function(params, y))


def _convert(mod: ir.IRModule, layout: str) -> ir.IRModule:
    with transform.PassContext(config={"ConvertKernelLayout.layout": layout}):
        return transform.Sequential([transform.InferType(), transform.ConvertKernelLayout(),
                                     transform.InferType()])(mod)


def _layouts(mod: ir.IRModule) -> List[str]:
    found: List[str] = []

    def visit(e: Any) -> None:
        if isinstance(e, ir.Call) and str(e.op.name).endswith("conv2d"):
            found.append(str(e.attrs.kernel_layout))
    ir.post_order_visit(mod["main"], visit)
    return found


def _run(mod: ir.IRModule, *args: np.ndarray) -> np.ndarray:
    out = runtime.Executor(mod)(*args)
    return np.array(out, copy=True)


@pytest.mark.parametrize("quantized", [True, False])
@pytest.mark.parametrize("src", LAYOUTS)
@pytest.mark.parametrize("dst", LAYOUTS)
def test_every_layout_to_every_other_keeps_the_result(src: str, dst: str,
                                                      quantized: bool) -> None:
    mod = _conv(src, quantized=quantized)
    rng = np.random.default_rng(1)
    x = (rng.integers(-128, 128, (1, 5, 6, 4)).astype("int8") if quantized
         else rng.standard_normal((1, 5, 6, 4)).astype("float32"))
    # float: each layout takes its own kernel path, the same bits only in
    # the portable kernels (the x86 float forms fuse multiply-adds); within
    # the forms' tolerance otherwise
    with isa(runtime.isa() if quantized else "portable"):
        before = _run(mod, x)
        out = _convert(mod, dst)
        assert _layouts(out) == [dst]
        np.testing.assert_array_equal(_run(out, x), before)
    if not quantized:
        got = _run(out, x)
        np.testing.assert_allclose(got, before, rtol=0, atol=1e-6 * float(np.ptp(before)))
    if src == dst:  # nothing to do: the very same function
        assert out["main"].same_as(transform.InferType()(mod)["main"])


def test_grouped_and_parameter_weights_are_left_alone() -> None:
    assert _layouts(_convert(_conv("HWIO", groups=2), "OHWI")) == ["HWIO"]
    assert _layouts(_convert(_conv("HWIO", const_weight=False), "OHWI")) == ["HWIO"]


def test_the_default_layout_is_ohwi() -> None:
    out = transform.Sequential([transform.InferType(), transform.ConvertKernelLayout()])(
        _conv("HWIO"))
    assert _layouts(out) == ["OHWI"]


def test_an_unknown_layout_is_refused_by_name() -> None:
    with pytest.raises(ValueError) as e:
        _convert(_conv("HWIO"), "IOHW")
    assert "ConvertKernelLayout.layout" in str(e.value) and "IOHW" in str(e.value)


def test_an_unknown_kernel_layout_attribute_is_a_type_error() -> None:
    with pytest.raises(TypeError) as e:
        transform.InferType()(_conv("IOHW"))
    assert "IOHW" in str(e.value) and "OHWI" in str(e.value)


def test_compile_target_gives_cortex_m_ohwi_weights_and_the_same_outputs(tmp_path: Any) -> None:
    mod = _conv("HWIO")
    x = np.random.default_rng(2).integers(-128, 128, (1, 5, 6, 4)).astype("int8")
    host = codegen.compile(mod, name="conv")
    dev = codegen.compile(mod, name="conv", target="cortex-m")
    np.testing.assert_array_equal(_run(dev.module, x), _run(host.module, x))
    assert sorted(codegen.TARGETS) == ["cortex-m", "host", "wasm32"]
    # the archive's constant is the transposed weight
    w_host = [a for a in host.constants.values() if a.ndim == 4]
    w_dev = [a for a in dev.constants.values() if a.ndim == 4]
    assert len(w_host) == len(w_dev) == 1
    np.testing.assert_array_equal(w_dev[0], w_host[0].transpose(3, 0, 1, 2))


def test_compile_refuses_an_unknown_target() -> None:
    with pytest.raises(ValueError) as e:
        codegen.compile(_conv("HWIO"), name="conv", target="cortex-a")
    assert "cortex-a" in str(e.value) and "cortex-m" in str(e.value)
