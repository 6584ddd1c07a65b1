"""Hostile but legal Python must not crash the interpreter (issue 18).

Each case runs in a child interpreter, so that a crash fails the test
instead of killing pytest: the child prints OK when what it tried behaved,
and the test asserts on its exit status and output. PYTHONMALLOC=debug
fills freed memory and guards the ends of every PyMem block, so a use
after free or a buffer overrun fails loudly instead of by luck.
"""
import os
import subprocess
import sys
import textwrap
from typing import Dict, Optional

import tvmnode as tn


def run_child(code: str, timeout: float = 120,
              env: Optional[Dict[str, str]] = None) -> "subprocess.CompletedProcess[str]":
    e = dict(os.environ)
    e["PYTHONMALLOC"] = "debug"
    e["PYTHONFAULTHANDLER"] = "1"
    if env:
        e.update(env)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=e,
                          capture_output=True, text=True, timeout=timeout)


def assert_ok(code: str, timeout: float = 120) -> str:
    r = run_child(code, timeout)
    assert r.returncode == 0, "child failed (%d):\n%s\n%s" % (r.returncode, r.stdout, r.stderr)
    assert r.stdout.strip().endswith("OK"), r.stdout + r.stderr
    return r.stdout


# -- 1. self-referencing containers -------------------------------------------

def test_list_that_contains_itself_raises() -> None:
    assert_ok("""
        import tvmnode as tn
        l = [1]
        l.append(l)
        try:
            tn.convert(l)
        except ValueError as e:
            assert str(e) == "item 1: cannot convert a list that contains itself", e
        else:
            raise AssertionError("no error")
        d = {"a": 1}
        d["self"] = [0, d]
        try:
            tn.get_global_func("testing.echo")(d)
        except ValueError as e:
            assert "argument 0: key 'self': item 1: cannot convert a dict" in str(e), e
        else:
            raise AssertionError("no error")
        print("OK")
    """)


def test_self_reference_in_process_does_not_leak() -> None:
    # only once a child interpreter survived it
    assert_ok("import tvmnode as tn; l = [[]]; l[0].append(l)\n"
              "try: tn.convert(l)\nexcept ValueError: print('OK')")
    before = tn.live_object_count()
    inner = [1, "a string longer than seven", {"k": 2.5}]
    loop: list = [inner, inner]
    loop.append(loop)
    for _ in range(3):
        try:
            tn.convert(loop)
        except ValueError as e:
            assert "item 2" in str(e)
        else:
            raise AssertionError("no error")
    # a container seen twice but not on its own path is not a cycle
    assert len(tn.convert([inner, inner, (inner,)])) == 3
    assert tn.live_object_count() == before


# -- 2. deep nesting ---------------------------------------------------------------

def test_deep_nesting_converts() -> None:
    assert_ok("""
        import tvmnode as tn
        echo = tn.get_global_func("testing.echo")
        base = tn.live_object_count()
        x = []
        for _ in range(20000):
            x = [x]
        r = echo(x)
        n = 0
        while len(r):
            r = r[0]
            n += 1
        assert n == 20000, n
        d = {}
        for _ in range(50000):
            d = {"k": d}
        r = echo(d)
        n = 0
        while len(r):
            r = r["k"]
            n += 1
        assert n == 50000, n
        del r
        assert tn.live_object_count() == base, tn.live_object_count() - base
        print("OK")
    """)


# -- 3. user code that empties the list being converted --------------------------

def test_item_hooks_that_clear_the_list() -> None:
    assert_ok("""
        import gc
        import tvmnode as tn
        echo = tn.get_global_func("testing.echo")

        class Payload:
            def __init__(self, i):
                self.blob = [i] * 50

        def victim(hook_cls):
            l = []
            l.append(hook_cls(l))
            l.extend(Payload(i) for i in range(50))
            return l

        class ByIndex:
            def __init__(self, l): self.l = l
            def __index__(self):
                self.l.clear(); gc.collect()
                junk = [bytearray(64) for _ in range(1000)]
                return 7

        class ByFloat:
            def __init__(self, l): self.l = l
            def __float__(self):
                self.l.clear(); gc.collect()
                junk = [bytearray(64) for _ in range(1000)]
                return 1.5

        class ByDLPack:
            def __init__(self, l): self.l = l
            @property
            def __dlpack__(self):
                self.l.clear(); gc.collect()
                junk = [bytearray(64) for _ in range(1000)]
                raise AttributeError("no")

        class ByDevice(tn.Device):
            __slots__ = ("l",)
            def __init__(self, l):
                super().__init__(1, 0)
                self.l = l
            def __getattribute__(self, name):
                if name == "device_type":
                    l = object.__getattribute__(self, "l")
                    l.clear(); gc.collect()
                    junk = [bytearray(64) for _ in range(1000)]
                return object.__getattribute__(self, name)

        for cls in (ByIndex, ByFloat, ByDLPack, ByDevice):
            for conv in (tn.convert, echo):
                try:
                    r = conv(victim(cls))
                except TypeError:
                    pass   # Payload is not convertible: the snapshot was read
        print("OK")
    """)


# -- 4. user code that grows the dict being converted ----------------------------

def test_dict_value_that_adds_keys() -> None:
    assert_ok("""
        import tvmnode as tn
        d = {}

        class Grow:
            def __index__(self):
                for i in range(1000):
                    d[1000 + i] = i
                return 0

        d["a"] = Grow()
        try:
            tn.convert(d)
        except RuntimeError as e:
            assert "changed size" in str(e), e
        else:
            raise AssertionError("no error")

        class Shrink:
            def __index__(self):
                d2.clear()
                return 0
        d2 = {i: i for i in range(100)}
        d2[-1] = Shrink()
        d2.update({str(i): [i] for i in range(100)})
        try:
            tn.convert(d2)
        except RuntimeError as e:
            assert "changed size" in str(e), e
        print("OK")
    """)


# -- 5. a tn.Dict mutated by one thread while another hashes and saves it -----

def test_dict_mutated_while_hashed_in_other_thread() -> None:
    assert_ok("""
        import threading, time
        import tvmnode as tn
        from tvmnode import ir

        d = tn.Dict({i: [i, str(i) * 3] for i in range(2000)})
        lst = tn.List(list(range(2000)))
        stop = time.monotonic() + 3
        errors = []

        def mutate():
            i = 0
            while time.monotonic() < stop:
                i += 1
                d[i % 5000] = [i] * (i % 7)
                if i % 3 == 0:
                    d.pop(i % 4000, None)
                lst.append(i)
                if len(lst) > 4000:
                    lst.clear()

        def read():
            while time.monotonic() < stop:
                try:
                    ir.structural_hash(d)
                    tn.save_json(d)
                    ir.structural_equal(lst, lst)
                    ir.structural_hash(lst)
                except Exception as e:  # an error is allowed, a crash is not
                    errors.append(e)

        ts = [threading.Thread(target=mutate) for _ in range(2)]
        ts += [threading.Thread(target=read) for _ in range(2)]
        for t in ts: t.start()
        for t in ts: t.join()
        assert not errors, errors[:3]
        print("OK")
    """)


# -- 6. cycles in C containers; Ctrl-C ----------------------------------------------

def test_structural_hash_of_self_containing_list_and_dict() -> None:
    from tvmnode import ir
    lst = tn.List([1, 2])
    d = tn.Dict({"a": 1})
    lst.append(lst)
    d["me"] = d
    try:
        for f in (ir.structural_hash, lambda v: ir.structural_equal(v, v.__class__(v)),
                  tn.save_json):
            for v in (lst, d):
                try:
                    f(v)
                except ValueError as e:
                    assert "contains itself" in str(e) or "cycle" in str(e), e
    finally:
        del lst[2]
        del d["me"]


def test_ctrl_c_during_a_long_conversion() -> None:
    out = assert_ok("""
        import signal, time
        import tvmnode as tn
        # SIGALRM behaves as Ctrl-C would
        signal.signal(signal.SIGALRM, signal.default_int_handler)
        class Arm:
            def __index__(self):
                signal.setitimer(signal.ITIMER_REAL, 0.05)
                return 0
        base = tn.live_object_count()
        inner = list(range(100))
        big = [0] + [inner] * 200000
        t0 = time.monotonic()
        r = tn.convert(big)
        full = time.monotonic() - t0
        del r
        big[0] = Arm()
        t0 = time.monotonic()
        try:
            tn.convert(big)
        except KeyboardInterrupt:
            dt = time.monotonic() - t0
            print("interrupted after %.3f s of %.3f" % (dt, full))
            assert dt < full / 2, (dt, full)  # during the conversion, not after
        else:
            raise AssertionError("not interrupted")
        assert tn.live_object_count() == base, tn.live_object_count() - base
        print("OK")
    """)
    assert "interrupted" in out


def test_ctrl_c_during_a_long_call_that_releases_the_gil() -> None:
    out = assert_ok("""
        import signal, time
        import tvmnode as tn
        signal.signal(signal.SIGALRM, signal.default_int_handler)
        sleep = tn._ffi._sleep_function()
        sleep.interruptible = True
        assert sleep.release_gil and sleep(1) == 1
        signal.setitimer(signal.ITIMER_REAL, 0.1)
        t0 = time.monotonic()
        try:
            sleep(5000)
        except KeyboardInterrupt:
            dt = time.monotonic() - t0
            assert dt < 2.5, dt
            print("interrupted after %.3f s" % dt)
        else:
            raise AssertionError("not interrupted")
        print("OK")
    """)
    assert "interrupted" in out


# -- a handle replaced while C borrows it ------------------------------------

def test_handle_replaced_during_a_call_stays_alive_until_it_returns() -> None:
    """C borrows the handle of every proxy argument; user code that runs
    during the call (a later argument's protocol, a callback, a Python
    pass) may replace that proxy's handle (IRModule.__setitem__ does). The
    old handle lives until the outermost call returns."""
    assert_ok("""
        import tvmnode as tn
        from tvmnode import ir, transform
        echo = tn.get_global_func("testing.echo")
        call = tn.get_global_func("testing.call")
        base = tn.live_object_count()
        for i in range(200):
            x = ir.var("x", shape=(2,))
            y = ir.var("y", shape=(3,))
            mod = ir.IRModule.from_expr(ir.Function([x], x))
            other = ir.IRModule.from_expr(ir.Function([y], y))
            class Evil:
                def __tvmnode_object__(self):
                    mod._move_handle_from(other)  # drops what argument 0 lent
                    return other
            r = echo(mod, Evil())
            assert r._type_key == "ir.IRModule" and "Tensor[(2,)" in r.astext()
            mod = ir.IRModule.from_expr(ir.Function([x], x))
            def cb(m):
                mod["main"] = other["main"]  # replaces the module C holds
                return m
            r = call(cb, mod)
            assert "Tensor[(2,)" in r.astext() and "Tensor[(3,)" in mod.astext()
            mod = ir.IRModule.from_expr(ir.Function([x], x))
            @transform.module_pass(opt_level=0)
            def swap(m, ctx):
                mod["main"] = other["main"]
                return m
            r = swap(mod)
            assert "Tensor[(2,)" in r.astext()
            del x, y, mod, other, Evil, r, cb, swap
        assert tn.live_object_count() == base, tn.live_object_count() - base
        print("OK")
    """)
