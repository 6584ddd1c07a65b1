"""test_readme_python.py: the top-level README's Python section works
verbatim on a machine with nothing but Python and a C compiler.

With TVMNODE_TEST_WHEEL=1 (run_tests.sh sets it) the test takes the
section's two blocks out of README.md and runs them as written: the shell
block in a clean environment whose HOME is a temporary folder (so its
`~/tvmnode-env` is new and `pip install './python[frontend]'` builds the
package from this checkout and fetches numpy and the importers' parsers
from the package index), then the Python block with that environment's
interpreter, in a folder holding the model it names. Its output must carry
what the comments in the block promise. The doc-block runner
(run_doc_blocks.sh) also runs the Python block against the build tree.
"""
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.wheel

ROOT = Path(__file__).resolve().parents[2]
MODELS = Path(os.environ.get("TVMNODE_MODELS", ROOT.parent / "shared" / "models"))


def _section_blocks() -> "dict[str, str]":
    text = (ROOT / "README.md").read_text()
    m = re.search(r"^## Python\n(.*?)^## ", text, re.S | re.M)
    assert m, "README.md has no '## Python' section"
    blocks = re.findall(r"^```(\w+)\n(.*?)^```", m.group(1), re.S | re.M)
    langs = [lang for lang, _ in blocks]
    assert langs == ["sh", "python"], "expected one sh and one python block, got %s" % langs
    return {lang: body for lang, body in blocks}


def test_section_names_what_it_installs() -> None:
    blocks = _section_blocks()
    assert "pip install './python[frontend]'" in blocks["sh"]
    for what in ("get_global_func", "register_func", "py_class", "function_pass",
                 "from_tflite", "Executor"):
        assert what in blocks["python"], what


@pytest.mark.skipif(os.environ.get("TVMNODE_TEST_WHEEL") != "1",
                    reason="builds the package and installs it with its dependencies in a "
                           "new environment (a minute or more): set TVMNODE_TEST_WHEEL=1")
def test_readme_python_runs_verbatim(tmp_path: Path) -> None:
    model = MODELS / "kws_ref_model.tflite"
    if not model.is_file():
        pytest.skip("%s is missing (TVMNODE_MODELS)" % model)
    blocks = _section_blocks()
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items()
           if k not in ("TVMNODE_BUILD_DIR", "TVMNODE_SOURCE_DIR", "PYTHONPATH", "PYTHONHOME",
                        "LD_LIBRARY_PATH", "VIRTUAL_ENV")}
    # the real pip cache (downloads once per machine), setuptools' build
    # folder off the checkout (other tests build from it at the same time)
    env.update(HOME=str(home), PIP_CACHE_DIR=os.path.expanduser("~/.cache/pip"),
               TVMNODE_PY_BUILD_BASE=str(tmp_path / "build"),
               PIP_DISABLE_PIP_VERSION_CHECK="1")
    p = subprocess.run(["bash", "-e", "-c", blocks["sh"]], cwd=str(ROOT), env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert p.returncode == 0, "the README's install block failed:\n" + p.stdout[-8000:]

    work = tmp_path / "work"
    work.mkdir()
    shutil.copy(model, work / model.name)
    (work / "quickstart.py").write_text(blocks["python"])
    vpy = home / "tvmnode-env" / "bin" / "python"
    assert vpy.is_file(), "the install block made no ~/tvmnode-env"
    p = subprocess.run([str(vpy), "quickstart.py"], cwd=str(work), env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert p.returncode == 0, "the README's Python block failed:\n" + p.stdout[-8000:]
    lines = p.stdout.splitlines()
    assert lines[0] == "5" and lines[1] == "42", lines[:2]
    assert lines[2] == "Layer(name='conv1', channels=16) 16", lines[2]
    assert re.fullmatch(r"operators: [1-9][0-9]*", lines[3]), lines[3]
    assert lines[-1].startswith("scores: [[") and len(lines[-1].split()) >= 12, lines[-1]
