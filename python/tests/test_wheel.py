"""test_wheel.py: the wheel built from this checkout stands on its own.

With TVMNODE_TEST_WHEEL=1 the test builds the wheel as a user would
(`pip wheel ./python`, no TVMNODE_BUILD_DIR: setup.py builds libtvmnode
itself) into a temporary folder, installs it in a fresh virtual environment
and runs a smoke script there with no build tree on any path
(TVMNODE_BUILD_DIR, PYTHONPATH and LD_LIBRARY_PATH unset, the working
directory elsewhere): import, a registered function, a tiny IR run by the
executor, the library loaded from the package, the crt sources and the C
headers in the package and usable by a C compiler. Skipped otherwise: it
takes most of a minute. tools/test_versions.sh runs the whole suite against
such wheels for every CPython that pyenv has.
"""
import importlib.util
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.wheel

PYDIR = Path(__file__).resolve().parent.parent  # python/
CRT = PYDIR.parent / "runtime" / "crt"

SMOKE = r'''
import os, subprocess, shutil, sys
import numpy as np
import tvmnode as tn
from tvmnode import ir, runtime
from tvmnode.ir import op

pkg = os.path.dirname(tn.__file__)
assert pkg.startswith(sys.prefix), "tvmnode comes from %s, not the venv" % pkg
libs = {l.split()[-1] for l in open("/proc/self/maps") if "libtvmnode" in l}
assert libs == {os.path.join(pkg, "libtvmnode.so.0")}, libs

assert tn.get_global_func("testing.echo")(41) == 41
x = ir.var("x", shape=(2, 3))
mod = ir.IRModule.from_expr(ir.Function([x], op.nn.relu(op.add(x, x))))
a = np.array([[-1, 2, -3], [4, -5, 6]], "float32")
y = runtime.Executor(mod)(a)
assert np.array_equal(y, np.maximum(a + a, 0)), y

crt, inc = tn._crt_dir(), tn._include_dir()
for d in (crt, inc):
    assert str(d).startswith(pkg), d
srcs = sorted(str(p.relative_to(crt)) for p in crt.rglob("*") if p.suffix in (".c", ".h"))
assert "src/status.c" in srcs and "include/tvmnode/crt/kernels.h" in srcs, srcs
for h in ("tvmnode/tvmnode.h", "tvmnode/executor.h", "tvmnode/crt/status.h"):
    assert (inc / h).is_file(), h
cc = shutil.which("cc") or shutil.which("gcc")
if cc:  # the headers and the crt sources compile as shipped
    subprocess.run([cc, "-std=c11", "-fsyntax-only", "-I", str(inc), "-x", "c", "-"],
                   input=b"#include <tvmnode/tvmnode.h>\nint main(void) { return 0; }\n",
                   check=True)
    subprocess.run([cc, "-std=c11", "-ffreestanding", "-fsyntax-only",
                    "-I", str(crt / "include"), str(crt / "src" / "status.c")], check=True)
print("smoke: ok", len(srcs), "crt files")
'''


def _clean_env(**extra: str) -> "dict[str, str]":
    env = {k: v for k, v in os.environ.items()
           if k not in ("TVMNODE_BUILD_DIR", "TVMNODE_SOURCE_DIR", "PYTHONPATH",
                        "PYTHONHOME", "LD_LIBRARY_PATH", "VIRTUAL_ENV")}
    env.update(extra)
    return env


def _run(cmd: "list[str]", cwd: Path, env: "dict[str, str]") -> str:
    p = subprocess.run(cmd, cwd=str(cwd), env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    assert p.returncode == 0, "%s failed (exit %d):\n%s" % (
        " ".join(cmd), p.returncode, p.stdout[-8000:])
    return p.stdout


@pytest.mark.skipif(os.environ.get("TVMNODE_TEST_WHEEL") != "1",
                    reason="builds and installs a wheel (most of a minute): "
                           "set TVMNODE_TEST_WHEEL=1")
def test_wheel_is_self_contained(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    # the build environment of this interpreter when it has one (offline and
    # faster), else pip's isolated one
    own = ["--no-build-isolation"] if importlib.util.find_spec("setuptools") and \
        importlib.util.find_spec("wheel") else []
    _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps",
          "--disable-pip-version-check", *own, "-w", str(dist), str(PYDIR)], tmp_path,
         _clean_env(TVMNODE_PY_BUILD_BASE=str(tmp_path / "build")))
    wheels = list(dist.glob("tvmnode-*.whl"))
    assert len(wheels) == 1, wheels

    # every .c and .h of runtime/crt/{include,src} is in the wheel
    names = set(zipfile.ZipFile(wheels[0]).namelist())
    want = {"tvmnode/crt/" + str(p.relative_to(CRT)) for sub in ("include", "src")
            for p in (CRT / sub).rglob("*") if p.suffix in (".c", ".h")}
    assert want and want <= names, sorted(want - names)
    assert "tvmnode/libtvmnode.so.0" in names
    # numpy is a dependency (tensors, Modules and the executor speak it);
    # the importers' parsers come with the "frontend" extra
    meta = next(n for n in names if n.endswith(".dist-info/METADATA"))
    requires = [ln.split(":", 1)[1].strip() for ln in
                zipfile.ZipFile(wheels[0]).read(meta).decode().splitlines()
                if ln.startswith("Requires-Dist:")]
    assert "numpy" in requires, requires
    for parser in ("tflite", "onnx"):
        assert any(r.startswith(parser) and 'extra == "frontend"' in r for r in requires), requires

    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], tmp_path, _clean_env())
    vpy = str(venv / "bin" / "python")
    _run([vpy, "-m", "pip", "install", "-q", "--disable-pip-version-check",
          str(wheels[0]), "numpy"], tmp_path, _clean_env())
    script = tmp_path / "smoke.py"
    script.write_text(SMOKE)
    work = tmp_path / "elsewhere"
    work.mkdir()
    out = _run([vpy, str(script)], work, _clean_env())
    assert "smoke: ok" in out, out
