"""Operators registered from Python: inference written in Python, seen by
the C builders, the text format and the C passes."""
from typing import Any

import numpy as np
import pytest

import tvmnode as tn
from tvmnode import ir, transform
from tvmnode.ir import op


@tn.register_object("pytest.ScaleAttrs")
class ScaleAttrs(ir.Attrs):
    factor: float = 2.0


def _same_type(arg_types: Any, attrs: Any) -> Any:
    t = arg_types[0]
    if t.dtype != "float32":
        raise TypeError("pytest.scale takes float32, got %s" % t.dtype)
    return t


def test_register_op_with_python_inference_and_attrs() -> None:
    ir.register_op("pytest.scale", 1, _same_type, pattern="elemwise",
                   attrs_type="pytest.ScaleAttrs", doc="x * factor")
    try:
        o = ir.Op.get("pytest.scale")
        assert (o.num_inputs, o.attrs_type, o.pattern) == (1, "pytest.ScaleAttrs", 0)
        # Registered at run time, so static checkers do not know them.
        ops: Any = getattr(op, "pytest")
        x = ir.var("x", shape=(2, 3))
        y = ops.scale(x, factor=3.0)
        assert y.op.same_as(o)
        assert y.attrs.factor == 3.0
        assert str(y.checked_type) == str(ir.TensorType((2, 3), "float32"))
        assert ops.scale(x).attrs.factor == 2.0  # the declared default
        assert "factor: default 2.0" in (ops.scale.__doc__ or "")

        # The inference's TypeError surfaces where the call is built.
        with pytest.raises(TypeError, match="pytest.scale takes float32, got int8"):
            ops.scale(ir.var("q", shape=(2,), dtype="int8"))
        with pytest.raises(TypeError, match="pytest.scale"):
            ir.Call(o, [x, x], ScaleAttrs())  # arity

        # Printed and parsed by name, attributes included.
        mod = ir.IRModule.from_expr(ir.Function([x], op.nn.relu(y)))
        text = mod.astext()
        assert "pytest.scale(%x, factor=3.0)" in text
        ir.assert_structural_equal(ir.parse(text), mod)

        # The C passes see it: FuseOps groups it with relu (both
        # elementwise), FoldConstant leaves a call it cannot evaluate.
        c = ir.const(np.ones((2, 3), "float32"))
        mod2 = ir.IRModule.from_expr(ir.Function([x], op.add(x, ops.scale(c))))
        folded = transform.FoldConstant()(mod2)
        assert "pytest.scale(" in folded.astext()
        fused = transform.FuseOps()(mod)
        prims = [line for line in fused.astext().splitlines() if "Primitive=1" in line]
        assert len(prims) == 1
    finally:
        ir.unregister_op("pytest.scale")
    assert not hasattr(getattr(op, "pytest", None), "scale")
    with pytest.raises(KeyError, match="pytest.scale"):
        ir.Op.get("pytest.scale")


def test_register_op_as_decorator_any_arity_and_existing_namespace() -> None:
    @ir.register_op("nn.pytest_sum", -1, pattern="broadcast")
    def _infer(arg_types: Any, attrs: Any) -> Any:
        return arg_types[0]

    try:
        a, b, c = (ir.var(n, shape=(4,)) for n in "abc")
        call = getattr(op.nn, "pytest_sum")(a, b, c)
        assert len(call.args) == 3 and call.checked_type.shape == (4,)
    finally:
        ir.unregister_op("nn.pytest_sum")
    assert not hasattr(op.nn, "pytest_sum")
    assert callable(op.nn.relu)


def test_register_op_bad_input() -> None:
    with pytest.raises(ValueError, match="already registered"):
        ir.register_op("add", 2, _same_type)
    with pytest.raises(ValueError, match="unknown pattern 'elementwise'"):
        ir.register_op("pytest.bad", 1, _same_type, pattern="elementwise")
    with pytest.raises(ValueError, match="unknown pattern 5"):
        ir.register_op("pytest.bad", 1, _same_type, pattern=5)
    with pytest.raises(ValueError, match="add is an operator, not a namespace"):
        ir.register_op("add.more", 1, _same_type)
    with pytest.raises(ValueError, match="must be an identifier"):
        ir.register_op("pytest.not-a-name", 1, _same_type)
    with pytest.raises(TypeError, match="not a registered ir.Attrs node type"):
        ir.register_op("pytest.bad", 1, _same_type, attrs_type="pytest.Nope")
    with pytest.raises(TypeError, match="expected a callable"):
        ir.register_op("pytest.bad", 1, 42)  # type: ignore[arg-type]
    with pytest.raises(KeyError, match="pytest.bad"):
        ir.unregister_op("pytest.bad")
    assert "pytest.bad" not in tn._ffi.op_list()


def test_inference_returning_a_non_type_is_a_type_error() -> None:
    ir.register_op("pytest.broken", 1, lambda types, attrs: 42)
    try:
        with pytest.raises(TypeError, match=r"pytest.broken: type inference returned int"):
            getattr(op, "pytest").broken(ir.var("x", shape=(1,)))
    finally:
        ir.unregister_op("pytest.broken")


def test_operator_attributes_from_python() -> None:
    """Input names, doc and pattern are operator attributes: the generated
    functions take their parameter names and docstrings from them, and any
    attribute set from Python is what C (and every other binding) reads."""
    conv = ir.Op.get("nn.conv2d")
    assert conv.input_names == ["data", "weight"]
    assert "convolution" in (conv.description or "")
    assert conv.get_attr("pattern") == ir.OP_PATTERNS["out_fusable"]
    assert callable(conv.get_attr("infer_type"))
    assert conv.get_attr("no_such_attribute") is None
    assert (op.nn.conv2d.__doc__ or "").startswith("2-D convolution")
    assert "data, weight" in (op.nn.conv2d.__doc__ or "")

    ir.register_op("pytest.blend", 2, lambda ts, a: ts[0], pattern="broadcast",
                   input_names=("base", "overlay"), doc="mix two images")
    try:
        o = ir.Op.get("pytest.blend")
        assert o.input_names == ["base", "overlay"]
        ops: Any = getattr(op, "pytest")
        x = ir.var("x", shape=(4,))
        assert ops.blend(base=x, overlay=x).op.same_as(o)
        o.set_attr("layout", "NHWC")
        assert o.get_attr("layout") == "NHWC"
        assert tn.get_global_func("ir.OpGetAttr")("pytest.blend", "layout") == "NHWC"
        with pytest.raises(ValueError, match="already has attribute 'layout'"):
            o.set_attr("layout", "NCHW")
        o.set_attr("layout", "NCHW", override=True)
        assert o.get_attr("layout") == "NCHW"
        with pytest.raises(TypeError, match="'pattern' takes an int"):
            o.set_attr("pattern", "opaque", override=True)
        with pytest.raises(ValueError, match="needs 2 names, got 1"):
            o.set_attr("input_names", ["only"], override=True)
        o.set_attr("pattern", ir.OP_PATTERNS["opaque"], override=True)
        assert o.pattern == ir.OP_PATTERNS["opaque"]
    finally:
        ir.unregister_op("pytest.blend")
    with pytest.raises(ValueError, match="takes 2 inputs but input_names has 1"):
        ir.register_op("pytest.bad", 2, lambda ts, a: ts[0], input_names=["x"])
    with pytest.raises(ValueError, match="not an identifier"):
        ir.register_op("pytest.bad", 1, lambda ts, a: ts[0], input_names=["class"])
    with pytest.raises(KeyError):
        ir.Op.get("pytest.bad")
