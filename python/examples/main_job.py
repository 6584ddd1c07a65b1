"""The main job, from Python: build the MLPerf Tiny anomaly-detection
autoencoder as IR, run a pipeline that mixes passes written in Python with
the C passes under the timing instrument, and print the result.

The model is the one models/mlperf_tiny.c builds: dense layers
640-128-128-128-128-8-128-128-128-128-640, each a bias_add and (except the
last) a ReLU, with the weights stored as an importer leaves them, [in, out]
behind a transpose. The pipeline:

  LayerStats          (Python, module pass)   counts operators and weights
  InferType, SimplifyExpr                      (C)
  PretransposeDense   (Python, function pass)  rewrites nn.dense(x,
                      transpose(W)) with W constant into nn.dense(x, W')
                      with W' = W.T computed by numpy: a real rewrite that
                      leaves FoldConstant less to do
  FoldConstant, FuseOps                        (C)
  LayerStats          (Python)                 the same counts, after

Run: python examples/main_job.py [--print before|after|both|none]
"""
from __future__ import annotations

import argparse
import collections
import sys
from typing import Any, Dict, List

import numpy as np

import tvmnode as tn
from tvmnode import ir, transform
from tvmnode.instrument import PassTimingInstrument
from tvmnode.ir import op

DIMS = [640, 128, 128, 128, 128, 8, 128, 128, 128, 128, 640]


def build_ad(seed: int = 0) -> ir.IRModule:
    """The autoencoder, float32, batch 1."""
    rng = np.random.default_rng(seed)
    x = ir.var("input", shape=(1, DIMS[0]))
    y: ir.Expr = x
    for i, (n_in, n_out) in enumerate(zip(DIMS, DIMS[1:])):
        r = 1.0 / n_in
        w = ir.const(rng.uniform(-r, r, (n_in, n_out)).astype("float32"))
        b = ir.const(rng.uniform(-0.1, 0.1, n_out).astype("float32"))
        y = op.nn.dense(y, op.transpose(w, axes=[1, 0]), units=n_out)
        y = op.nn.bias_add(y, b, axis=1)
        if i + 2 < len(DIMS):
            y = op.nn.relu(y)
    return ir.IRModule.from_expr(ir.Function([x], y))


class Stats(ir.ExprVisitor):
    """Operator calls by name and weight elements, primitive functions
    included."""

    def __init__(self) -> None:
        super().__init__()
        self.ops: Dict[str, int] = collections.Counter()
        self.weights = 0
        self.fused = 0

    def visit_call(self, call: Any) -> None:
        if isinstance(call.op, ir.Op):
            self.ops[call.op.name] += 1
        else:
            self.fused += 1
        super().visit_call(call)

    def visit_constant(self, c: Any) -> None:
        self.weights += int(np.prod(c.data.shape))


REPORT: List[str] = []


@transform.module_pass(opt_level=0, name="LayerStats")
def layer_stats(mod: ir.IRModule, ctx: Any) -> ir.IRModule:
    s = Stats()
    s.visit(mod["main"])
    ops = ", ".join("%s x%d" % kv for kv in sorted(s.ops.items()))
    REPORT.append("%d weight elements; %d fused calls; %s" % (s.weights, s.fused, ops))
    return mod


@transform.function_pass(opt_level=1, name="PretransposeDense", required=["InferType"])
class PretransposeDense:
    """nn.dense(x, transpose(W)) -> nn.dense(x, W.T) for constant W."""

    def __init__(self) -> None:
        self.rewritten = 0

    def transform_function(self, func: ir.Function, mod: ir.IRModule, ctx: Any) -> ir.Function:
        outer = self

        class Rewrite(ir.ExprMutator):
            def visit_call(self, call: Any) -> Any:
                new = super().visit_call(call)
                if not (isinstance(new.op, ir.Op) and new.op.name == "nn.dense"):
                    return new
                w = new.args[1]
                if not (isinstance(w, ir.Call) and w.op.name == "transpose"
                        and isinstance(w.args[0], ir.Constant)):
                    return new
                axes = w.attrs.axes
                if axes is not None and list(axes) != [1, 0]:
                    return new
                data = w.args[0].data.numpy()  # zero-copy view of the C tensor
                outer.rewritten += 1
                return op.nn.dense(new.args[0], ir.const(np.ascontiguousarray(data.T)),
                                   units=new.attrs.units, out_dtype=new.attrs.out_dtype)

        out: ir.Function = Rewrite().visit(func)
        return out


def run(print_what: str = "after", out: Any = sys.stdout) -> ir.IRModule:
    mod = build_ad()
    if print_what in ("before", "both"):
        print("== before ==", file=out)
        print(mod, file=out)
    # (mypy does not apply class decorators, so it sees the plain class)
    pretranspose: Any = PretransposeDense()
    pipeline = transform.Sequential([
        layer_stats, transform.InferType(), transform.SimplifyExpr(), pretranspose,
        transform.FoldConstant(), transform.FuseOps(), layer_stats,
    ], opt_level=0, name="main_job")
    timing = PassTimingInstrument()
    with transform.PassContext(opt_level=3, instruments=[timing]):
        result = pipeline(mod)
    if print_what in ("after", "both"):
        print("== after ==", file=out)
        print(result, file=out)
    print("== passes ==", file=out)
    print(timing.render(), file=out)
    print("== stats ==", file=out)
    print("before: " + REPORT[-2], file=out)
    print("after:  " + REPORT[-1], file=out)
    print("PretransposeDense rewrote %d dense weights in Python" % pretranspose.rewritten,
          file=out)
    # the result still prints, parses and compares equal: it is an ordinary
    # module whichever language wrote its passes
    ir.assert_structural_equal(ir.parse(result.astext()), result)
    # and it runs: the host executor on one input, before and after the
    # pipeline (Python's rewrite included), beside numpy's own dense chain
    x = np.sin(np.arange(640, dtype="float32") * 0.37).reshape(1, 640)
    y0: Any = tn.runtime.Executor(mod)(x)
    y1: Any = tn.runtime.Executor(result)(x)
    print("== run ==", file=out)
    print("outputs before and after the pipeline: max |difference| %.3g"
          % float(np.abs(y0 - y1).max()), file=out)
    print("output: " + " ".join("%.4f" % v for v in y1.reshape(-1)[:8]) + " ...",
          file=out)
    return result


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--print", dest="print_what", default="after",
                   choices=["before", "after", "both", "none"])
    args = p.parse_args()
    run(args.print_what)
    print("live tvmnode objects at exit: %d" % tn.live_object_count())
    return 0


if __name__ == "__main__":
    sys.exit(main())
