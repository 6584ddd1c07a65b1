"""Operator functions, generated from the C operator registry.

For every registered operator this makes a Python function whose
parameters are the operator's inputs followed by the fields of its attrs
node type, with the defaults the reflection table declares (attributes the
table declares without a default are required keywords, optional ones
default to None). The function calls the C builder once, so the call is
typed and checked as it is made. Input names and the one-line doc are the
operator's "input_names" and "doc" attributes.

`stub_text` writes the matching .pyi, which is checked in so mypy sees the
functions; tests compare it with what the registry says today.
"""
from __future__ import annotations

import keyword
from typing import Any, Dict, List, Set, Tuple

from ... import _ffi

# Operators whose (single) input is a tuple: a list of expressions is
# accepted and made into an ir.Tuple, as TVM's concatenate does.
TUPLE_INPUT = {"concatenate"}


def _python_fields(type_index: int) -> Tuple[Set[str], Dict[str, Any]]:
    """For an attrs type declared from Python (tvmnode.register_object):
    the names of its fields declared there and their defaults, which live
    in Python (C keeps those fields as Any slots without defaults)."""
    cls = _ffi._registered_class(type_index)
    declared: Set[str] = set()
    defaults: Dict[str, Any] = {}
    for c in reversed(getattr(cls, "__mro__", ())):
        if "_tn_py_defaults" in c.__dict__:
            declared.update(c.__dict__["_tn_py_types"])
            defaults.update(c.__dict__["_tn_py_defaults"])
    return declared, defaults


class OpSpec:
    """What the registry says about one operator."""

    def __init__(self, name: str) -> None:
        op = _ffi.ir_op(name)
        self.name = name
        self.short = name.rsplit(".", 1)[-1]
        self.num_inputs: int = op.num_inputs
        self.inputs: List[str] = op.input_names if self.num_inputs >= 0 else []
        self.description = op.description
        self.required: List[str] = []
        self.optional: List[Tuple[str, Any]] = []
        self.attrs_type = op.attrs_type
        if op.attrs_type:
            declared, py_defaults = _python_fields(_ffi.type_index(op.attrs_type))
            for f in _ffi._type_fields(_ffi.type_index(op.attrs_type)):
                if f.name in py_defaults:
                    self.optional.append((f.name, py_defaults[f.name]))
                elif f.name in declared:
                    self.required.append(f.name)
                elif f.has_default:
                    self.optional.append((f.name, f.default))
                elif f.flags & _ffi.FIELD_OPTIONAL:
                    self.optional.append((f.name, None))
                else:
                    self.required.append(f.name)
        self.attr_names = tuple(self.required + [n for n, _ in self.optional])
        for n in self.inputs + list(self.attr_names):
            if keyword.iskeyword(n) or not n.isidentifier():
                raise ValueError("operator %s: %r is not a usable parameter name" % (name, n))


def _doc(spec: OpSpec) -> str:
    lines = []
    if spec.description:
        lines += [spec.description[:1].upper() + spec.description[1:] + ".", ""]
    if spec.num_inputs >= 0:
        lines.append("The %s operator (%d input%s: %s)." % (
            spec.name, spec.num_inputs, "" if spec.num_inputs == 1 else "s",
            ", ".join(spec.inputs)))
    else:
        lines.append("The %s operator (any number of inputs)." % spec.name)
    if spec.attrs_type:
        lines.append("")
        lines.append("Attributes (%s):" % spec.attrs_type)
        for n in spec.required:
            lines.append("    %s: required" % n)
        for n, d in spec.optional:
            lines.append("    %s: default %r" % (n, d))
    return "\n".join(lines)


def make_function(spec: OpSpec) -> Any:
    ns: Dict[str, Any] = {"_call_op": _ffi.ir_call_op, "_NAME": spec.name,
                          "_ATTRS": spec.attr_names, "_Tuple": _ffi.ir_tuple}
    params = list(spec.inputs) if spec.num_inputs >= 0 else ["*args"]
    params += spec.required
    for i, (n, d) in enumerate(spec.optional):
        ns["_d%d" % i] = d
        params.append("%s=_d%d" % (n, i))
    if spec.num_inputs >= 0:
        inputs = "(" + "".join(n + ", " for n in spec.inputs) + ")"
    else:
        inputs = "tuple(args)"
    body = []
    if spec.name in TUPLE_INPUT:
        body.append("    if type(data) in (list, tuple): data = _Tuple(list(data))")
    values = "(" + "".join(n + ", " for n in spec.attr_names) + ")"
    body.append("    return _call_op(_NAME, %s, _ATTRS, %s)" % (inputs, values))
    src = "def %s(%s):\n%s\n" % (spec.short, ", ".join(params), "\n".join(body))
    exec(compile(src, "<tvmnode op %s>" % spec.name, "exec"), ns)
    fn = ns[spec.short]
    fn.__doc__ = _doc(spec)
    fn.__qualname__ = spec.short
    fn.__module__ = "tvmnode.ir.op" + ("." + spec.name.rsplit(".", 1)[0] if "." in spec.name else "")
    return fn


def specs(prefix: str) -> List[OpSpec]:
    """The operators in one namespace ("" for top-level ones, "nn", "qnn").
    An operator another thread removes while this runs is left out (that
    thread's refresh() follows)."""
    out = []
    for name in _ffi.op_list():
        ns = name.rsplit(".", 1)[0] if "." in name else ""
        if ns == prefix:
            try:
                out.append(OpSpec(name))
            except KeyError:
                if name in _ffi.op_list():
                    raise
    return out


def functions(prefix: str) -> Dict[str, Any]:
    """The functions of one namespace, by short name, in registry order;
    nothing is defined anywhere yet."""
    return {spec.short: make_function(spec) for spec in specs(prefix)}


def populate(namespace: Dict[str, Any], prefix: str) -> List[str]:
    """Define the functions of one namespace in a module's globals."""
    made = functions(prefix)
    namespace.update(made)
    return list(made)


def namespaces() -> List[str]:
    return sorted({n.rsplit(".", 1)[0] if "." in n else "" for n in _ffi.op_list()})


def _stub_default(d: Any) -> str:
    return "..."


def stub_text(prefix: str) -> str:
    """The .pyi for one namespace."""
    lines = ['"""Generated from the operator registry by tvmnode.ir.op._gen.stub_text'
             '("%s"); do not edit."""' % prefix,
             "from typing import Any, Optional, Sequence, Union",
             "from tvmnode.ir import Call, Expr", ""]
    if prefix == "":
        subs = [n for n in namespaces() if n]
        for s in subs:
            lines.append("from . import %s as %s" % (s, s))
        lines.append("")
    for spec in specs(prefix):
        ptype = "Union[Expr, Sequence[Expr]]" if spec.name in TUPLE_INPUT else "Expr"
        params = ["%s: %s" % (n, ptype) for n in spec.inputs] if spec.num_inputs >= 0 \
            else ["*args: Expr"]
        params += ["%s: Any" % n for n in spec.required]
        params += ["%s: Any = ..." % n for n, _ in spec.optional]
        lines.append("def %s(%s) -> Call: ..." % (spec.short, ", ".join(params)))
    if prefix == "":
        lines.append("def check_name(name: str) -> None: ...")
        lines.append("def refresh() -> None: ...")
    return "\n".join(lines) + "\n"
