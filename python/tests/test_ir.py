"""The IR API: builders, generated operator functions, modules, text format,
visitors and mutators written in Python."""
import inspect
import os
from typing import Any, List

import numpy as np
import pytest

import tvmnode as tn
from tvmnode import ir, transform
from tvmnode.ir import op
from tvmnode.ir.op import _gen


def test_var_and_const() -> None:
    x = ir.var("x", shape=(1, 640), dtype="float32")
    assert isinstance(x, ir.Var) and x.name_hint == "x"
    assert x.type_annotation is not None and x.type_annotation.shape == (1, 640)
    assert x.checked_type.dtype == "float32"
    assert ir.var("u").type_annotation is None
    with pytest.raises(ValueError, match="run InferType"):
        ir.var("u").checked_type
    c = ir.const(1.5)
    assert isinstance(c, ir.Constant) and c.data.dtype == "float32" and c.data.shape == ()
    assert ir.const(3).data.dtype == "int32" and ir.const(True).data.dtype == "bool"
    assert ir.const(2, "int8").data.dtype == "int8"
    w = np.arange(6, dtype="float32").reshape(2, 3)
    cw = ir.const(w)
    w[0, 0] = 99  # const copies: later changes do not leak into the graph
    assert cw.data.shape == (2, 3) and cw.data.numpy()[0, 0] == 0
    assert ir.const([[1, 2]], "int64").data.dtype == "int64"
    assert ir.const(np.float64(2.0)).data.dtype == "float64"


def test_op_functions_generated_from_registry() -> None:
    names = set(tn._ffi.op_list())
    for n in names:
        ns, _, short = n.rpartition(".")
        mod = {"": op, "nn": op.nn, "qnn": op.qnn, "image": op.image}[ns]
        assert callable(getattr(mod, short)), n
    sig = inspect.signature(op.nn.conv2d)
    params = sig.parameters
    assert list(params)[:2] == ["data", "weight"]
    assert params["groups"].default == 1 and params["data_layout"].default == "NCHW"
    assert params["strides"].default is None
    assert list(inspect.signature(op.reshape).parameters) == ["data", "newshape"]
    assert inspect.signature(op.qnn.quantize).parameters["out_dtype"].default == "int8"
    assert "ir.Conv2DAttrs" in (op.nn.conv2d.__doc__ or "")


def test_op_stubs_match_registry() -> None:
    here = os.path.dirname(_gen.__file__)
    for prefix, f in (("", "__init__.pyi"), ("nn", "nn.pyi"), ("qnn", "qnn.pyi"),
                      ("image", "image.pyi")):
        with open(os.path.join(here, f)) as fh:
            assert fh.read() == _gen.stub_text(prefix), f


def test_conv2d_with_attrs() -> None:
    x = ir.var("x", shape=(1, 8, 8, 3))
    w = ir.var("w", shape=(3, 3, 3, 16))
    y = op.nn.conv2d(x, w, strides=(2, 2), padding=(1, 1, 1, 1), data_layout="NHWC",
                     kernel_layout="HWIO")
    assert y.checked_type.shape == (1, 4, 4, 16)
    assert list(y.attrs.strides) == [2, 2] and y.attrs.data_layout == "NHWC"
    assert y.op == ir.Op.get("nn.conv2d")


def test_concatenate_takes_a_list() -> None:
    a, b = ir.var("a", shape=(1, 2)), ir.var("b", shape=(1, 3))
    c = op.concatenate([a, b], axis=1)
    assert c.checked_type.shape == (1, 5)
    assert isinstance(c.args[0], ir.Tuple) and len(c.args[0]) == 2


def test_operator_errors_name_op_and_argument() -> None:
    x = ir.var("x", shape=(2, 3))
    with pytest.raises(TypeError, match=r"nn\.relu: argument 0: expected ir\.Expr, got int"):
        op.nn.relu(3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"add: argument 1: expected ir\.Expr, got str"):
        op.add(x, "y")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"add: argument 0 has type Tensor\[\(2, 3\), float32\] "
                                        r"and argument 1 has type Tensor\[\(4, 3\)"):
        op.add(x, ir.var("y", shape=(4, 3)))
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'newshape'"):
        op.reshape(x)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        op.nn.relu(x, bogus=1)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="takes 1 positional argument"):
        op.nn.relu(x, x)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="nn.dense: attribute 'units'"):
        op.nn.dense(x, x, units={1})
    with pytest.raises(KeyError, match="no.such"):
        ir.Op.get("no.such")
    with pytest.raises(TypeError, match="Op.get"):
        ir.Op()


def test_expression_arithmetic() -> None:
    x = ir.var("x", shape=(4,), dtype="float32")
    y = (x + 1.0) * 2.0 - x / 4.0
    assert y.op.name == "subtract" and y.checked_type.shape == (4,)
    z = 1.0 - (-x)
    assert z.op.name == "subtract" and z.args[1].op.name == "negative"
    i = ir.var("i", shape=(2,), dtype="int8")
    assert (i + 1).args[1].data.dtype == "int8"


def test_function_module_and_indexing() -> None:
    x = ir.var("x", shape=(1, 4))
    f = ir.Function([x], op.nn.relu(x))
    mod = ir.IRModule.from_expr(f)
    assert isinstance(mod, ir.IRModule)
    assert "main" in mod and len(mod) == 1 and list(mod) == ["main"]
    assert mod["main"] == f
    assert mod[ir.GlobalVar("main")] == f
    with pytest.raises(KeyError, match="nope"):
        mod["nope"]
    g = ir.Function([x], op.exp(x)).with_attr("Primitive", 1)
    assert g.attrs["Primitive"] == 1
    old = mod._handle
    mod["helper"] = g
    assert mod._handle != old and "helper" in mod and mod["helper"] == g
    m2 = ir.IRModule({"main": f, ir.GlobalVar("g"): g})
    assert sorted(m2) == ["g", "main"]
    assert [v.name_hint for v in m2.get_global_vars()] == list(m2)
    # an expression with free variables: they become the parameters
    y = ir.var("y", shape=(2,))
    m3 = ir.IRModule.from_expr(op.exp(y))
    assert list(m3["main"].params) == [y]


def test_tuple_let_global_var() -> None:
    x = ir.var("x", shape=(2,))
    t = ir.Tuple([x, op.exp(x)])
    item = ir.TupleGetItem(t, 1)
    assert item.index == 1 and item.tuple_value == t and t[0] == x
    assert item.checked_type.shape == (2,)
    v = ir.var("v")
    let = ir.Let(v, op.exp(x), op.negative(v))
    assert let.var == v and let.body.args[0] == v
    gv = ir.GlobalVar("f")
    assert gv.name_hint == "f"
    assert isinstance(ir.tuple_get_item(t, 0), ir.TupleGetItem)


def test_types() -> None:
    t = ir.TensorType((2, 3), "int8")
    assert t.concrete_shape == (2, 3) and t.dtype == "int8"
    tt = ir.TupleType([t, t])
    assert len(tt.fields) == 2
    ft = ir.FuncType([t], tt)
    assert ft.ret_type == tt
    assert ir.structural_equal(ir.TensorType((2, 3), "int8"), t)


def test_parse_and_astext_roundtrip() -> None:
    x = ir.var("x", shape=(1, 4))
    w = ir.const(np.ones((4, 4), "float32"))
    f = ir.Function([x], op.nn.relu(op.nn.dense(x, w, units=4)))
    mod = ir.IRModule.from_expr(f)
    text = mod.astext()
    assert "#[metadata]" in text and "nn.dense" in text
    back = ir.parse(text)
    ir.assert_structural_equal(back, mod)
    assert ir.structural_hash(back) == ir.structural_hash(mod)
    assert "metadata omitted" in str(mod)


def test_parse_errors_give_position() -> None:
    with pytest.raises(ValueError, match=r"line 2, column \d+"):
        ir.parse("def @main(%x: Tensor[(1), float32]) {\n  nn.relu(%x,, )\n}")
    with pytest.raises(TypeError, match="line 2"):
        ir.parse("def @main(%x: Tensor[(1, 2), float32], %y: Tensor[(3,), float32]) {\n"
                 "  add(%x, %y)\n}")


# ---- visitors and mutators ------------------------------------------------------

def _chain(n: int) -> Any:
    x = ir.var("x", shape=(1, 8))
    y: Any = x
    for i in range(n):
        y = op.nn.relu(y) if i % 2 else op.add(y, x)
    return x, y


def test_visitor_visits_each_node_once() -> None:
    x = ir.var("x", shape=(2,))
    shared = op.exp(x)
    y = op.add(shared, shared)
    seen: List[str] = []

    class Count(ir.ExprVisitor):
        def visit_call(self, call: Any) -> None:
            seen.append(call.op.name)
            super().visit_call(call)

        def visit_var(self, var: Any) -> None:
            seen.append("%" + var.name_hint)

    v = Count()
    assert v.visit(y) is None
    assert seen == ["%x", "exp", "add"]
    v.visit(y)  # memoised across calls too
    assert len(seen) == 3 and v.memo_size() == 5  # x, exp, add, two ops
    v.reset()
    v.visit(y)
    assert len(seen) == 6


def test_visitor_order_matches_recursive_definition() -> None:
    x = ir.var("x", shape=(2,))
    y = op.add(op.exp(x), op.negative(x))
    order: List[str] = []

    class Order(ir.ExprVisitor):
        def visit_call(self, call: Any) -> None:
            super().visit_call(call)
            order.append(call.op.name)

        def visit_op(self, o: Any) -> None:
            order.append("op:" + o.name)

    Order().visit(y)
    assert order == ["op:add", "op:exp", "exp", "op:negative", "negative", "add"]


def test_visitor_can_skip_function_bodies() -> None:
    x = ir.var("x", shape=(2,))
    inner = ir.Function([x], op.exp(x)).with_attr("Primitive", 1)
    y = ir.var("y", shape=(2,))
    outer = ir.Call(inner, [op.negative(y)])
    calls: List[str] = []

    class Skip(ir.ExprVisitor):
        def visit_function(self, fn: Any) -> None:
            pass  # do not enter primitive functions

        def visit_call(self, call: Any) -> None:
            calls.append(call.op.name if isinstance(call.op, ir.Op) else "fn")
            super().visit_call(call)

    Skip().visit(outer)
    assert calls == ["negative", "fn"]


def test_mutator_rewrites_and_keeps_sharing() -> None:
    x = ir.var("x", shape=(2,))
    e = op.exp(x)
    y = op.add(e, e)

    class ExpToNeg(ir.ExprMutator):
        def visit_call(self, call: Any) -> Any:
            new = super().visit_call(call)
            if new.op.name == "exp":
                return op.negative(new.args[0])
            return new

    out = ExpToNeg().visit(y)
    assert out.op.name == "add" and out.args[0].op.name == "negative"
    assert out.args[0] == out.args[1]  # memoised: one replacement for the shared node
    assert out.checked_type.shape == (2,)


def test_mutator_without_changes_returns_same_object() -> None:
    x, y = _chain(50)

    class Nothing(ir.ExprMutator):
        def visit_call(self, call: Any) -> Any:
            return super().visit_call(call)

    assert Nothing().visit(y) == y
    assert ir.ExprMutator().visit(y) == y


def test_mutator_replaces_variables_in_functions() -> None:
    x = ir.var("x", shape=(2,))
    c = ir.const(np.ones(2, "float32"))
    f = ir.Function([x], op.add(x, x))

    class Subst(ir.ExprMutator):
        def visit_var(self, v: Any) -> Any:
            return c if v == x else v

    g = Subst().visit(f)
    assert isinstance(g, ir.Function)
    assert list(g.params) == [x]  # the definition stays
    assert g.body.args[0] == c and g.body.args[1] == c


def test_mutator_wrong_return_type() -> None:
    x = ir.var("x", shape=(2,))

    class Bad(ir.ExprMutator):
        def visit_call(self, call: Any) -> Any:
            return 42

    with pytest.raises(TypeError, match=r"Bad\.visit_call returned int, expected an ir\.Expr"):
        Bad().visit(op.exp(x))

    class BadNode(ir.ExprMutator):
        def visit_var(self, v: Any) -> Any:
            return tn.convert([1])

    with pytest.raises(TypeError, match="returned tn.Array"):
        BadNode().visit(op.exp(x))
    with pytest.raises(TypeError, match="expected an ir.Expr, got str"):
        ir.ExprMutator().visit("x")


def test_mutator_exception_propagates() -> None:
    x = ir.var("x", shape=(2,))

    class Boom(ir.ExprMutator):
        def visit_call(self, call: Any) -> Any:
            raise ZeroDivisionError("no")

    with pytest.raises(ZeroDivisionError):
        Boom().visit(op.exp(x))


def test_deep_chain_needs_no_recursion() -> None:
    x, y = _chain(20000)
    count = [0]

    class Rewrite(ir.ExprMutator):
        def visit_call(self, call: Any) -> Any:
            count[0] += 1
            new = super().visit_call(call)
            if new.op.name == "nn.relu":
                return op.negative(new.args[0])
            return new

    out = Rewrite().visit(y)
    assert count[0] == 20000
    assert out.op.name == "negative" and out.args[0].op.name == "add"


def test_post_order_visit() -> None:
    x = ir.var("x", shape=(2,))
    y = op.add(op.exp(x), x)
    seen: List[str] = []
    ir.post_order_visit(y, lambda n: seen.append(type(n).__name__))
    assert seen == ["Op", "Op", "Var", "Call", "Call"]


def test_module_attributes() -> None:
    x = ir.var("x", shape=(2,))
    mod = ir.IRModule.from_expr(ir.Function([x], x))
    m2 = mod.with_attr("inputs", [{"name": "x:0", "scale": [0.5], "zero_point": [3]}])
    m2 = m2.with_attr("source", "test")
    assert mod.attrs is None or len(mod.attrs) == 0
    attrs = m2.attrs
    assert attrs is not None
    assert str(attrs["source"]) == "test"
    assert float(attrs["inputs"][0]["scale"][0]) == 0.5
    ir.assert_structural_equal(ir.parse(m2.astext()), m2)
    ir.assert_structural_equal(tn.load_json(tn.save_json(m2)), m2)
    m3 = transform.InferType()(m2)
    assert m3.attrs is not None and str(m3.attrs["source"]) == "test"
    # attributes are plain data: an IR node is refused by the check
    bad = mod.with_attr("node", x)
    with pytest.raises(ValueError, match="the module: an attribute value holds a ir.Var"):
        ir.well_formed(bad)
