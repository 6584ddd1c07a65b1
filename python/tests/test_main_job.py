"""The main job's Python part: the AD autoencoder built in Python through a
pipeline of Python and C passes gives the module the C main job gives."""
import io
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples"))

import main_job  # noqa: E402

from tvmnode import ir  # noqa: E402


def test_main_job_runs_and_reports() -> None:
    out = io.StringIO()
    result = main_job.run("after", out)
    text = out.getvalue()
    assert "== passes ==" in text and "PretransposeDense" in text and "FuseOps" in text
    assert "rewrote 10 dense weights in Python" in text
    after = [line for line in text.splitlines() if line.startswith("after:")][0]
    assert "10 fused calls" in after and "transpose" not in after
    assert "nn.dense x10" in after and "nn.relu x9" in after
    assert result.astext(False).count("Primitive=1") == 10


def test_same_module_as_the_c_main_job() -> None:
    build = os.environ.get("TVMNODE_BUILD_DIR")
    tool = os.path.join(build, "tools", "tvmnode-opt") if build else None
    if tool is None or not os.path.exists(tool):
        pytest.skip("tvmnode-opt not found (set TVMNODE_BUILD_DIR)")
    c_text = subprocess.run(
        [tool, "--model", "ad", "--passes", "InferType,SimplifyExpr,FoldConstant,FuseOps",
         "--print", "after"], check=True, capture_output=True, text=True).stdout
    ours = main_job.run("none", io.StringIO()).astext(False)
    # same graph, same types, same fusion; only the weight values differ and
    # those are in the metadata, which neither prints here
    start = c_text.index("def @main")
    assert c_text[start:start + len(ours)].strip() == ours.strip()
