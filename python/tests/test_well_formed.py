"""Untrusted IR from Python: typed container fields, the well-formedness
check, and JSON graphs that lie about themselves."""
import json

import numpy as np
import pytest

import tvmnode as tn
from tvmnode import ir, transform
from tvmnode.ir import op


def _relu_module() -> ir.IRModule:
    x = ir.var("x", shape=(1, 4))
    return ir.IRModule.from_expr(ir.Function([x], op.nn.relu(x)))


def _nodes(mod: ir.IRModule) -> dict:
    return json.loads(tn.save_json(mod))


def test_well_formed_accepts_built_modules() -> None:
    mod = _relu_module()
    ir.well_formed(mod)
    ir.well_formed(transform.InferType()(mod))
    ir.well_formed(mod["main"].body)


def test_well_formed_names_a_free_variable() -> None:
    x, y = ir.var("x", shape=(4,)), ir.var("y", shape=(4,))
    fn = ir.Function([x], op.add(x, y))
    with pytest.raises(ValueError, match="%y is used where it is not defined"):
        ir.well_formed(fn)
    with pytest.raises(TypeError, match="ir.IRModule, ir.Function or ir.Expr"):
        ir.well_formed(ir.TensorType((1,)))


def test_json_params_of_the_wrong_element_type_are_refused() -> None:
    doc = _nodes(_relu_module())
    for node in doc["nodes"]:
        if node["type"] == "ir.Function":
            params = node["fields"]["params"]["$node"]
            doc["nodes"][params]["items"] = [7]
    with pytest.raises(ValueError, match=r"expects tn.Array<ir.Var>: element 0 is int"):
        tn.load_json(json.dumps(doc))


def _insert_before(doc: dict, at: int, new_nodes: list) -> None:
    """Insert nodes at index `at`, renumbering every reference after it."""
    k = len(new_nodes)

    def shift(v: object) -> object:
        if isinstance(v, dict):
            if set(v) == {"$node"} and v["$node"] >= at:
                return {"$node": v["$node"] + k}
            return {key: shift(x) for key, x in v.items()}
        if isinstance(v, list):
            return [shift(x) for x in v]
        return v

    doc["nodes"] = doc["nodes"][:at] + new_nodes + [shift(n) for n in doc["nodes"][at:]]
    doc["root"] = shift(doc["root"])


def test_json_saved_type_that_lies_is_refused() -> None:
    doc = _nodes(_relu_module())
    call = next(i for i, n in enumerate(doc["nodes"]) if n["type"] == "ir.Call")
    _insert_before(doc, call, [
        {"type": "tn.Shape", "dims": [9]},
        {"type": "ir.TensorType", "fields": {"shape": {"$node": call},
                                             "dtype": {"$dtype": "float32"}}}])
    tn.load_json(json.dumps(doc))  # still the truth: loads
    doc["nodes"][call + 2]["fields"]["checked_type"] = {"$node": call + 1}
    with pytest.raises(ValueError, match=r"@main: the saved type Tensor\[\(9,\), float32\] "
                                         r"of a call of nn.relu is wrong"):
        tn.load_json(json.dumps(doc))


def test_typed_fields_through_the_generic_constructor() -> None:
    x = ir.var("x", shape=(4,))
    t = ir.Function._tn_type_index
    with pytest.raises(TypeError, match=r"tn.Array<ir.Var>: element 0 is int"):
        tn._ffi.node_new(t, ("params", "body"), (tn.convert([3]), x))
    fn = tn._ffi.node_new(t, ("params", "body"), (tn.convert([x]), x))
    ir.well_formed(fn)


def test_infer_type_does_not_trust_a_lying_constant() -> None:
    c = ir.const(np.ones((2,), "float32"))
    x = ir.var("x", shape=(2,))
    mod = ir.IRModule.from_expr(ir.Function([x], op.add(x, c)))
    ir.well_formed(mod)
    out = transform.FoldConstant()(transform.InferType()(mod))
    ir.well_formed(out)
    assert out["main"].body.checked_type.shape == (2,)
