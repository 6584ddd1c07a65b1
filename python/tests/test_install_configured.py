"""test_install_configured.py: `pip install ./python` from a checkout that
was configured and built in its own folder (`./configure && make`).

autoconf refuses to configure a second, out-of-tree build of a source folder
that holds a config.status ("source directory already configured"), which
is what setup.py's self-contained build used to do. The test copies this
checkout's files (tracked and new, not ignored: no build products) to a
temporary folder, runs `./autogen.sh && ./configure && make -j2` there,
then `pip install ./python` into a fresh virtual environment, and runs the
wheel test's smoke script there, from another folder, with no build tree
on any path. About two minutes of CPU on 2 cores (the library is built
unoptimised); TVMNODE_TEST_WHEEL=0 skips it, as it does the wheel test.
"""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.wheel

PYDIR = Path(__file__).resolve().parent.parent  # python/
ROOT = PYDIR.parent

# the wheel test's smoke script and helpers: the package installed here must
# stand on its own just as the wheel does
from test_wheel import SMOKE, _clean_env, _run  # noqa: E402


def _copy_checkout(dst: Path) -> None:
    """The checkout's files as a clone would have them, with the work
    tree's edits: tracked and new files, none that .gitignore names."""
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others",
                            "--exclude-standard"], cwd=str(ROOT), check=True,
                           stdout=subprocess.PIPE).stdout.decode().split("\0")
    for f in files:
        src = ROOT / f
        if not f or not src.is_file():  # deleted in the work tree
            continue
        out = dst / f
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, out)


@pytest.mark.skipif(os.environ.get("TVMNODE_TEST_WHEEL") == "0",
                    reason="TVMNODE_TEST_WHEEL=0: the slow install tests are skipped")
@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(),
                    reason="needs git and a checkout")
def test_pip_install_from_a_checkout_configured_in_place(tmp_path: Path) -> None:
    src = tmp_path / "tvmnode"
    _copy_checkout(src)
    env = _clean_env()
    env.pop("MAKEFLAGS", None)
    _run(["sh", "./autogen.sh"], src, env)
    # -O0 and no debug info: the compile is most of the test's time, and
    # the failure was configure's, whatever the flags
    _run(["./configure", "-q", "CFLAGS=-O0 -g0"], src, env)
    _run(["make", "-j2", "-s"], src, env)
    assert (src / "config.status").exists()

    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], tmp_path, env)
    vpy = str(venv / "bin" / "python")
    out = _run([vpy, "-m", "pip", "install", "--disable-pip-version-check", "numpy",
                "./python"], src, env)
    assert "Successfully installed" in out, out
    # the library is the one make built in place, not a second configuration
    assert not list((src / "python" / "build").glob("temp.*/libtvmnode/config.status"))
    script = tmp_path / "smoke.py"
    script.write_text(SMOKE)
    work = tmp_path / "elsewhere"
    work.mkdir()
    assert "smoke: ok" in _run([vpy, str(script)], work, env)
