"""tvm_ffi_tests.py: run apache-tvm-ffi's own Python tests against tvmnode.

    python tools/tvm_ffi_tests.py [--repo GIT_DIR] [--rev REV] [--keep]
                                  [--top N] [FILE ...]

Takes tvm-ffi's test files (tests/python/FILE.py, default: the files about
what python/README.md maps: containers, dtypes, devices, functions, objects,
dataclasses, access paths, structural functions, metadata, load_inline)
out of a git checkout or bare mirror of apache/tvm-ffi at run time into a
temporary folder, and runs each with pytest under the interpreter running
this script. Nothing of tvm-ffi is kept or checked in.

The tests reach tvmnode through an import alias written into the temporary
folder, not part of the package: a `tvm_ffi` package whose import of
`tvm_ffi.X` gives the module `tvmnode.X` (the same module object, so
classes stay the same; `tvm_ffi.dataclasses.enum` is `tvmnode._enum`).
What tvmnode has no counterpart for resolves to placeholders that fail
when used, so that a file collects and only the tests that use them fail
(counted, and classified under the placeholder's message):
`tvm_ffi.testing` is tvm-ffi's C++ test library (classes and functions
registered from C++; its `requires_py3xx` markers are real), and
`tvm_ffi._ffi_api` / `tvm_ffi._dunder` are internals ("tvm-ffi internal,
not in tvmnode"). `tvm_ffi.core` is tvmnode's top level, with the same
placeholders for the Cython core's other names (`CAny`, `FFIProperty`).

Prints per file: passed / failed / skipped / errors (an error in
collection counts as one error for the file), the totals, and the most
common failures grouped by the first line of their message. Needs pytest
and numpy; PYTHONPATH must reach tvmnode (as for python/tests). This is a
measuring tool, not a test: failing tests are its output.
"""
from __future__ import annotations

import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

DEFAULT_REPO = os.environ.get("TVM_FFI_REPO", "/work/.mirror/apache+tvm-ffi/repo")
DEFAULT_FILES = [
    "test_container", "test_dtype", "test_device", "test_function", "test_object",
    "test_string", "test_error", "test_access_path", "test_structural",
    "test_structural_py_class", "test_metadata", "test_type_converter",
    "test_typed_method", "test_build_inline", "test_load_inline",
    "test_dataclass_common", "test_dataclass_compare", "test_dataclass_copy",
    "test_dataclass_enum", "test_dataclass_frozen", "test_dataclass_hash",
    "test_dataclass_init", "test_dataclass_py_class", "test_dataclass_repr",
]

SHIM = r'''
"""tvm_ffi -> tvmnode import alias (written by tools/tvm_ffi_tests.py)."""
import importlib
import importlib.abc
import importlib.util
import sys
import types

import pytest

import tvmnode as _tn

# modules of tvm-ffi's internals (C++-registered functions, Cython core
# helpers): their names are placeholders, as tvm_ffi.testing's are
_INTERNAL = ("_ffi_api", "_dunder")


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith("tvm_ffi.") or fullname in sys.modules:
            return None
        sub = fullname[len("tvm_ffi."):]
        real = "tvmnode._enum" if sub == "dataclasses.enum" else "tvmnode." + sub
        try:
            mod = importlib.import_module(real)
        except ImportError:
            return None
        spec = importlib.util.spec_from_loader(fullname, self)
        spec._tn_module = mod
        return spec

    def create_module(self, spec):
        return spec._tn_module

    def exec_module(self, module):
        pass


sys.meta_path.insert(0, _Alias())


class _Placeholder:
    """A name tvmnode does not have, from tvm-ffi's C++ test library or
    its internals: fails when used."""

    def __init__(self, what):
        self._what = what

    def _fail(self, *args, **kwargs):
        raise NotImplementedError(self._what)

    __call__ = _fail

    def __getattr__(self, attr):
        if attr.startswith("__") and not attr.startswith("__tvm_ffi"):
            raise AttributeError(attr)
        self._fail()

    def __mro_entries__(self, bases):
        self._fail()


class _Placeholders(types.ModuleType):
    def __init__(self, name, what, real=None):
        super().__init__(name)
        self.__path__ = []
        self._what = what
        self._real = real

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        if self._real is not None and hasattr(self._real, name):
            return getattr(self._real, name)
        return _Placeholder("%s: %s.%s" % (self._what, self.__name__, name))


def _install(name, what, real=None):
    mod = _Placeholders(name, what, real)
    sys.modules[name] = mod
    return mod


testing = _install("tvm_ffi.testing", "needs tvm-ffi's C++ test library")
testing_testing = _install("tvm_ffi.testing.testing", "needs tvm-ffi's C++ test library")
for _v in (10, 11, 12, 13, 14):
    setattr(testing_testing, "requires_py3%d" % _v, pytest.mark.skipif(
        sys.version_info < (3, _v), reason="needs Python 3.%d" % _v))
testing.testing = testing_testing
# tvm_ffi.core: tvmnode's top level, tvm-ffi internals as placeholders
core = _install("tvm_ffi.core", "tvm-ffi internal, not in tvmnode", _tn)
for _m in _INTERNAL:
    globals()[_m] = _install("tvm_ffi." + _m, "tvm-ffi internal, not in tvmnode")

for _name in dir(_tn):
    if not _name.startswith("__"):
        globals()[_name] = getattr(_tn, _name)
'''


def classify(message: str) -> str:
    line = message.strip().splitlines()[0] if message.strip() else "(no message)"
    line = re.sub(r"0x[0-9a-fA-F]+", "0x..", line)
    line = re.sub(r"/tmp/[^\s'\"]+", "/tmp/...", line)
    return line[:150]


def kind_of(message: str) -> str:
    """What a failure needs: tvm-ffi's C++ test library (its classes, or
    the testing.* global functions it registers), tvm-ffi internals (the
    placeholders, its ffi.* global functions), or something else (a
    difference of behaviour or a missing feature)."""
    if "C++ test library" in message or "global function 'testing." in message:
        return "tvm-ffi's C++ test library (tvm_ffi.testing, testing.* functions)"
    if "tvm-ffi internal" in message or "_Placeholder" in message or \
            "global function 'ffi." in message:
        return "tvm-ffi internals (_ffi_api, _dunder, Cython core names, ffi.* functions)"
    return "other (behaviour or feature differences)"


def run_file(py: str, tests: str, shim: str, name: str, timeout: int) -> tuple:
    xml = os.path.join(tests, name + ".xml")
    env = dict(os.environ)
    env["PYTHONPATH"] = shim + os.pathsep + env.get("PYTHONPATH", "")
    cmd = [py, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--junitxml", xml,
           "-o", "junit_family=xunit1", os.path.join(tests, name + ".py")]
    try:
        subprocess.run(cmd, env=env, cwd=tests, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return 0, 0, 0, 1, [("timeout after %ds" % timeout)]
    try:
        root = ET.parse(xml).getroot()
    except (OSError, ET.ParseError):
        return 0, 0, 0, 1, ["pytest wrote no report (crashed?)"]
    passed = failed = skipped = errors = 0
    reasons = []
    cases = list(root.iter("testcase"))
    for case in cases:
        kinds = {child.tag: child for child in case}
        if "failure" in kinds:
            failed += 1
            reasons.append(classify(kinds["failure"].get("message", "")))
        elif "error" in kinds:
            errors += 1
            text = kinds["error"].text or ""
            # a collection error's message is "collection failure": the
            # exception is the last "E   " line of the report
            elines = [ln[1:].strip() for ln in text.splitlines() if ln.startswith("E ")]
            why = classify(elines[-1] if elines else kinds["error"].get("message", "") or text)
            if kinds["error"].get("message") == "collection failure":
                why = "[collection] " + why
            reasons.append(why)
        elif "skipped" in kinds:
            skipped += 1
        else:
            passed += 1
    return passed, failed, skipped, errors, reasons


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", default=DEFAULT_REPO, help="apache/tvm-ffi git dir")
    ap.add_argument("--rev", default="HEAD")
    ap.add_argument("--top", type=int, default=25, help="failure classes to print")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per file")
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder")
    ap.add_argument("files", nargs="*", help="test file names (default: the usual set)")
    args = ap.parse_args()

    git = ["git", "-C", args.repo]
    try:
        listed = subprocess.run(git + ["ls-tree", "--name-only", args.rev, "tests/python/"],
                                capture_output=True, text=True, check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError) as e:
        print("tvm_ffi_tests: cannot list tests/python in %s at %s: %s"
              % (args.repo, args.rev, e), file=sys.stderr)
        return 2
    present = {os.path.basename(p)[:-3] for p in listed if p.endswith(".py")}
    names = [f[:-3] if f.endswith(".py") else f for f in args.files] or \
        [f for f in DEFAULT_FILES if f in present]
    missing = [n for n in names if n not in present]
    if missing:
        print("tvm_ffi_tests: not in %s:tests/python: %s" % (args.rev, ", ".join(missing)),
              file=sys.stderr)
        return 2
    rev = subprocess.run(git + ["rev-parse", args.rev], capture_output=True,
                         text=True).stdout.strip()

    tmp = tempfile.mkdtemp(prefix="tvm_ffi_tests.")
    shim = os.path.join(tmp, "shim")
    tests = os.path.join(tmp, "tests")
    os.makedirs(os.path.join(shim, "tvm_ffi"))
    os.makedirs(tests)
    with open(os.path.join(shim, "tvm_ffi", "__init__.py"), "w") as f:
        f.write(SHIM)
    for n in names:
        src = subprocess.run(git + ["show", "%s:tests/python/%s.py" % (args.rev, n)],
                             capture_output=True, check=True).stdout
        with open(os.path.join(tests, n + ".py"), "wb") as f:
            f.write(src)

    print("apache-tvm-ffi %s tests/python, Python %s" % (rev[:12], sys.version.split()[0]))
    print("%-28s %6s %6s %7s %6s" % ("file", "passed", "failed", "skipped", "errors"))
    totals = [0, 0, 0, 0]
    reasons: collections.Counter = collections.Counter()
    uncollected = []
    for n in names:
        p, fl, s, e, why = run_file(sys.executable, tests, shim, n, args.timeout)
        for i, v in enumerate((p, fl, s, e)):
            totals[i] += v
        reasons.update(why)
        uncollected.extend((n, w[len("[collection] "):]) for w in why
                           if w.startswith("[collection] "))
        print("%-28s %6d %6d %7d %6d" % (n, p, fl, s, e), flush=True)
    print("%-28s %6d %6d %7d %6d" % ("total", *totals))
    if uncollected:
        print("\nfiles that did not collect:")
        for n, w in uncollected:
            print("  %-26s %s" % (n, w))
    kinds: collections.Counter = collections.Counter()
    for msg, count in reasons.items():
        kinds[kind_of(msg)] += count
    print("\nfailures and errors by what they need:")
    for kind, count in kinds.most_common():
        print("%5d  %s" % (count, kind))
    print("\nfailures and errors by first line of message:")
    for msg, count in reasons.most_common(args.top):
        print("%5d  %s" % (count, msg))
    if args.keep:
        print("\nkept", tmp)
    else:
        subprocess.run(["rm", "-rf", tmp], check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
