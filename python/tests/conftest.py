"""Shared fixtures: every test must leave no tvmnode object alive.

The C library counts live objects (tn_object_live_count). The autouse
fixture reads the count before each test and asserts it is back to that
value afterwards (after a garbage collection, since Python proxies may sit
in cycles until then). A session fixture first runs a little of
everything, so that what the library or the binding makes once and keeps
(operator entries, cached classes) is made before any baseline is taken.

That fixture then freezes what exists then (gc.freeze): the collected
items, every test module and the packages they import, about 140,000
objects in each pytest-xdist worker, which a full collection would
otherwise walk twice a test (test_frontend_tflite_movement.py's 202 tests,
run with the whole suite collected, took 42 s of CPU without the freeze
and 5 s with it). A frozen object is never freed by the collector but
still keeps what it refers to alive, so a leak is found as before: what
the tests make is collected as it was.
"""
import gc
from typing import Iterator

import numpy as np
import pytest

import tvmnode as tn
from tvmnode import ir, transform
from tvmnode.instrument import PassTimingInstrument
from tvmnode.ir import op


def _warm_up() -> None:
    x = ir.var("x", shape=(1, 8))
    w = ir.const(np.ones((8, 8), "float32"))
    y = op.nn.relu(op.nn.dense(x, w, units=8))
    mod = ir.IRModule.from_expr(ir.Function([x], y))
    t = PassTimingInstrument()
    with transform.PassContext(opt_level=3, instruments=[t]):
        transform.Sequential([transform.InferType(), transform.SimplifyExpr(),
                              transform.FoldConstant(), transform.DeadCodeElimination(),
                              transform.FuseOps()])(mod)
    t.render()
    ir.parse(mod.astext())
    tn.load_json(tn.save_json(mod))
    try:
        tn.get_global_func("testing.raise")("ValueError", "warm-up")
    except ValueError:
        pass


@pytest.fixture(scope="session", autouse=True)
def warmed() -> None:
    _warm_up()
    gc.collect()
    gc.freeze()


def live() -> int:
    # Python exceptions remembered by dead C errors are let go first: they
    # may hold frames (and so proxies) in cycles that only gc frees.
    tn._ffi._kept_error_count()
    gc.collect()
    return tn.live_object_count()


@pytest.fixture(autouse=True)
def no_leaks(warmed: None) -> Iterator[None]:
    before = live()
    yield
    after = live()
    assert after == before, "tvmnode objects leaked: %d before, %d after" % (before, after)
