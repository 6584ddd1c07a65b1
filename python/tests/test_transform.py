"""Passes from Python: decorators (functions and classes), Sequential with
C passes, PassContext, instruments, and every failure path."""
import traceback
from typing import Any, List

import numpy as np
import pytest

import tvmnode as tn
from tvmnode import ir, transform
from tvmnode.instrument import PassTimingInstrument, pass_instrument
from tvmnode.ir import op


def small_module() -> ir.IRModule:
    x = ir.var("x", shape=(1, 4))
    w = ir.const(np.ones((4, 4), "float32"))
    y = op.nn.relu(op.nn.bias_add(op.nn.dense(x, op.transpose(w, axes=[1, 0]), units=4),
                                  ir.const(np.zeros(4, "float32"))))
    return ir.IRModule.from_expr(ir.Function([x], op.add(y, ir.const(0.0))))


class CountCalls(ir.ExprVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.n = 0

    def visit_call(self, call: Any) -> None:
        self.n += 1
        super().visit_call(call)


def count_calls(mod: ir.IRModule) -> int:
    v = CountCalls()
    v.visit(mod["main"])
    return v.n


def test_builtin_passes_by_name() -> None:
    for name in ("InferType", "SimplifyExpr", "FoldConstant", "DeadCodeElimination", "FuseOps",
                 "ConvertKernelLayout", "FoldInputOffset", "PackDenseWeights", "PatchStages"):
        p = getattr(transform, name)()
        assert isinstance(p, transform.Pass) and p.name == name
        g = tn.get_global_func("transform." + name)
        assert g is not None and g().info.name == name
        assert transform.get_pass(name).name == name
    assert transform.SimplifyExpr().info.required[0] == "InferType"
    assert "FuseOps" in transform.list_passes()


def test_c_passes_run_from_python() -> None:
    mod = small_module()
    assert count_calls(mod) == 5
    out = transform.SimplifyExpr()(mod)
    assert count_calls(out) == 4  # x + 0 is gone
    out = transform.FoldConstant()(out)
    assert count_calls(out) == 3  # transpose of a constant folded
    assert count_calls(mod) == 5  # the input module is unchanged


def test_function_pass_decorator_forms() -> None:
    seen: List[str] = []

    @transform.function_pass(opt_level=1)
    def rename(func: Any, mod: Any, ctx: Any) -> Any:
        seen.append(type(ctx).__name__)
        return func

    assert isinstance(rename, transform.FunctionPass)
    assert rename.name == "rename" and rename.opt_level == 1

    @transform.function_pass
    def plain(func: Any, mod: Any, ctx: Any) -> Any:
        return func

    assert plain.opt_level == 0
    named = transform.function_pass(lambda f, m, c: f, opt_level=2, name="lam",
                                    required=["InferType"])
    assert named.name == "lam" and list(named.info.required) == ["InferType"]
    mod = small_module()
    assert rename(mod) == mod  # nothing changed: the same module back
    assert seen == ["PassContext"]


def test_class_passes() -> None:
    @transform.function_pass(opt_level=0, name="ReluToNeg")
    class ReluToNeg:
        def __init__(self, label: str) -> None:
            self.label = label
            self.count = 0

        def transform_function(self, func: Any, mod: Any, ctx: Any) -> Any:
            outer = self

            class M(ir.ExprMutator):
                def visit_call(self, call: Any) -> Any:
                    new = super().visit_call(call)
                    if new.op.name == "nn.relu":
                        outer.count += 1
                        return op.negative(new.args[0])
                    return new

            return M().visit(func)

    p = ReluToNeg("x")
    assert isinstance(p, transform.FunctionPass) and p.name == "ReluToNeg"
    assert p.label == "x"  # attributes of the instance show through
    out = p(small_module())
    assert p.count == 1 and "negative" in out.astext() and "nn.relu" not in out.astext()

    @transform.module_pass(opt_level=0)
    class AddMain2:
        def transform_module(self, mod: Any, ctx: Any) -> Any:
            mod["main2"] = mod["main"]
            return mod

    # mypy does not apply class decorators: the class is still the class
    out2 = AddMain2()(small_module())  # type: ignore[operator]
    assert sorted(out2) == ["main", "main2"]
    with pytest.raises(TypeError, match="no transform_function"):
        transform.function_pass(type("Empty", (), {}))


def test_module_pass_function() -> None:
    @transform.module_pass(opt_level=0, name="Drop")
    def drop(mod: Any, ctx: Any) -> Any:
        return ir.IRModule({"main": mod["main"]})

    assert isinstance(drop, transform.ModulePass)
    m = small_module()
    m["extra"] = m["main"]
    assert list(drop(m)) == ["main"]


def test_python_and_c_passes_in_one_sequential() -> None:
    order: List[str] = []

    @transform.function_pass(opt_level=0)
    def count_before(func: Any, mod: Any, ctx: Any) -> Any:
        v = CountCalls()
        v.visit(func)
        order.append("py:%d" % v.n)
        return func

    @pass_instrument
    class Log:
        def run_before_pass(self, mod: Any, info: Any) -> None:
            order.append(info.name)

    seq = transform.Sequential([count_before, transform.InferType(), transform.SimplifyExpr(),
                                transform.FoldConstant(), transform.FuseOps(), count_before])
    timing = PassTimingInstrument()
    with transform.PassContext(opt_level=3, instruments=[Log(), timing]):  # type: ignore[list-item]
        out = seq(small_module())
    assert order[:2] == ["count_before", "py:5"]
    # one call of the fused primitive function, and the three inside it
    assert order[-2:] == ["count_before", "py:4"]
    assert {"InferType", "SimplifyExpr", "FoldConstant", "FuseOps"} <= set(order)
    report = timing.render()
    assert "count_before" in report and "FuseOps" in report and "total" in report
    assert "Primitive=1" in out.astext()


def test_pass_context_opt_level_and_disabled() -> None:
    ran: List[str] = []

    @transform.function_pass(opt_level=3, name="Level3")
    def level3(func: Any, mod: Any, ctx: Any) -> Any:
        ran.append("level3@%d" % ctx.opt_level)
        return func

    level3(small_module())  # default context: opt_level 2
    assert ran == []
    with transform.PassContext(opt_level=3):
        assert transform.PassContext.current().opt_level == 3
        level3(small_module())
        with transform.PassContext(opt_level=3, disabled_pass=["Level3"]):
            level3(small_module())
        with transform.PassContext(opt_level=0, required_pass=["Level3"]):
            level3(small_module())
    assert ran == ["level3@3", "level3@0"]
    assert transform.PassContext.current().opt_level == 2


def test_pass_context_config() -> None:
    with transform.PassContext(config={"FoldConstant.max_elements": 10}) as ctx:
        assert ctx.config["FoldConstant.max_elements"] == 10
    with pytest.raises(ValueError, match="no.such.option"):
        transform.PassContext(config={"no.such.option": 1})
    with pytest.raises(TypeError, match="FoldConstant.max_elements"):
        transform.PassContext(config={"FoldConstant.max_elements": "ten"})
    with pytest.raises(TypeError, match="expected a dict"):
        transform.PassContext(config=[1])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"instruments\[0\]': expected ir.PassInstrument"):
        transform.PassContext(instruments=[1])  # type: ignore[list-item]


def test_instrument_enter_exit_and_after() -> None:
    events: List[str] = []

    @pass_instrument
    class Full:
        def enter_pass_ctx(self) -> None:
            events.append("enter")

        def exit_pass_ctx(self) -> None:
            events.append("exit")

        def run_after_pass(self, mod: Any, info: Any) -> None:
            events.append("after " + info.name)

    inst = Full()
    with transform.PassContext(instruments=[inst]):  # type: ignore[list-item]
        transform.InferType()(small_module())
    assert events == ["enter", "after InferType", "exit"]


def test_pass_returning_wrong_type_names_the_pass() -> None:
    @transform.function_pass(opt_level=0, name="ReturnsInt")
    def bad(func: Any, mod: Any, ctx: Any) -> Any:
        return 3

    with pytest.raises(TypeError, match=r"pass 'ReturnsInt' failed: the pass returned int"):
        bad(small_module())

    @transform.module_pass(opt_level=0, name="ReturnsFunc")
    def bad_module(mod: Any, ctx: Any) -> Any:
        return mod["main"]

    with pytest.raises(TypeError, match=r"pass 'ReturnsFunc' failed: the pass returned "
                                        r"ir\.Function, not an ir\.IRModule"):
        bad_module(small_module())
    with pytest.raises(TypeError, match=r"ReturnsInt"):
        transform.Sequential([transform.InferType(), bad])(small_module())


def test_pass_exception_crosses_the_pass_infrastructure() -> None:
    class PassFailure(Exception):
        pass

    # ids only: a closure held by a C pass that kept the exception itself
    # would close a cycle (exception -> frames -> this test's frame -> the
    # pass -> the closure) through a C reference the cycle collector cannot
    # see
    raised: List[int] = []

    @transform.function_pass(opt_level=0, name="Explodes")
    def explodes(func: Any, mod: Any, ctx: Any) -> Any:
        e = PassFailure("kaboom")
        raised.append(id(e))
        raise e

    mod = small_module()
    with pytest.raises(PassFailure, match="pass 'Explodes' failed: kaboom") as info:
        transform.Sequential([transform.InferType(), explodes])(mod)
    assert id(info.value.__cause__) == raised[0]
    text = "".join(traceback.format_exception(info.type, info.value, info.tb))
    assert "in explodes" in text and "libtvmnode" in text
    assert count_calls(mod) == 5  # the module is as it was


def test_instrument_failure() -> None:
    @pass_instrument
    class Fails:
        def run_before_pass(self, mod: Any, info: Any) -> None:
            raise RuntimeError("instrument broke")

    with transform.PassContext(instruments=[Fails()]):  # type: ignore[list-item]
        with pytest.raises(RuntimeError, match="instrument 'Fails' failed before pass "
                                               "'InferType'"):
            transform.InferType()(small_module())


def test_decorator_bad_input() -> None:
    with pytest.raises(TypeError, match="expected a function or a class"):
        transform.function_pass(3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="opt_level must be an int"):
        transform.module_pass(opt_level="high")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"Sequential: argument 'passes\[1\]': expected "
                                        r"ir\.Pass, got int"):
        transform.Sequential([transform.InferType(), 1])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="expected ir.IRModule, got int"):
        transform.InferType()(1)  # type: ignore[arg-type]


def test_register_pass_by_name() -> None:
    @transform.module_pass(opt_level=0, name="PyTestRegistered")
    def noop(mod: Any, ctx: Any) -> Any:
        return mod

    transform.register_pass(noop)
    try:
        assert transform.get_pass("PyTestRegistered").same_as(noop)
        with pytest.raises(ValueError):
            transform.register_pass(noop)
        needs: List[str] = []

        @transform.module_pass(opt_level=0, required=["PyTestRegistered"])
        def needy(mod: Any, ctx: Any) -> Any:
            needs.append("ran")
            return mod

        needy(small_module())
        assert needs == ["ran"]
    finally:
        transform.unregister_pass("PyTestRegistered")
