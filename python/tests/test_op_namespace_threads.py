"""The generated operator namespaces change atomically: registering or
removing an operator in one thread never makes the functions of other
operators (ir.op.nn.conv2d, ir.op.add, ...) vanish for another thread."""
import threading
import time
from typing import Any, List

from tvmnode import ir
from tvmnode.ir import op

SCRATCH = "pytest_threads.scratch"


def _same_type(arg_types: Any, attrs: Any) -> Any:
    return arg_types[0]


def test_register_and_unregister_keep_other_functions_visible() -> None:
    stop = threading.Event()
    errors: List[BaseException] = []
    reads = [0]
    changes = [0]

    def reader() -> None:
        top: Any = op
        nn: Any = op.nn
        qnn: Any = op.qnn
        try:
            while not stop.is_set():
                for f in (nn.conv2d, nn.relu, top.add, top.reshape, qnn.quantize):
                    assert callable(f)
                assert "conv2d" in nn.__all__ and "add" in top.__all__
                reads[0] += 1
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)
            stop.set()

    def writer(name: str) -> None:
        try:
            while not stop.is_set():
                ir.register_op(name, 1, _same_type, pattern="elemwise")
                ir.unregister_op(name)
                changes[0] += 1
        except BaseException as e:  # noqa: BLE001
            errors.append(e)
            stop.set()

    threads = [threading.Thread(target=reader) for _ in range(3)]
    # two writers, so refreshes also run at the same time
    threads += [threading.Thread(target=writer, args=(n,)) for n in (SCRATCH, SCRATCH + "2")]
    for t in threads:
        t.start()
    time.sleep(1.0)
    stop.set()
    for t in threads:
        t.join()
    assert ir.Op.get("nn.conv2d") is not None
    assert not errors, "%d reads, %d changes; first error: %r" % (reads[0], changes[0], errors[0])
    assert reads[0] > 0 and changes[0] > 0
    # the scratch operator is gone again, function included
    scratch: Any = getattr(op, "pytest_threads")
    assert not hasattr(scratch, "scratch") and not hasattr(scratch, "scratch2")
    x = ir.var("x", shape=(1, 2))
    assert op.nn.relu(x).op.name == "nn.relu"


def test_functions_of_a_new_operator_appear_and_go() -> None:
    ir.register_op(SCRATCH, 1, _same_type, pattern="elemwise")
    try:
        ns: Any = getattr(op, "pytest_threads")
        assert "scratch" in ns.__all__
        x = ir.var("x", shape=(2,))
        assert ns.scratch(x).op.name == SCRATCH
    finally:
        ir.unregister_op(SCRATCH)
    assert "scratch" not in ns.__all__ and not hasattr(ns, "scratch")
    assert hasattr(op.nn, "conv2d")
