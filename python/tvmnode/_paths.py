"""_paths.py: where the C files that go with tvmnode are.

A wheel carries copies of the microcontroller runtime (runtime/crt: its
include/ and src/, every .c and .h) in tvmnode/crt, for code generators to
copy into generated archives, and the installed C headers (libtvmnode's,
the host executor's and the crt's, laid out as `make install` lays them
out) in tvmnode/include, for compiling against the bundled library. A
package built for development (TVMNODE_BUILD_DIR: run_tests.sh, ./dev)
carries no copies, so these functions fall back to the source tree, found
through TVMNODE_SOURCE_DIR, then as the checkout this package sits in
(python/tvmnode), then as the source folder of the build tree named by
TVMNODE_BUILD_DIR. In a source tree the executor's and the crt's headers
stay in runtime/host/include and runtime/crt/include.
"""
from __future__ import annotations

import os
import re
from importlib import resources
from pathlib import Path
from typing import Iterator, Optional


def _packaged(name: str) -> Optional[Path]:
    p = Path(str(resources.files("tvmnode") / name))
    return p if p.is_dir() else None


def _source_trees() -> Iterator[Path]:
    env = os.environ.get("TVMNODE_SOURCE_DIR")
    if env:
        yield Path(env)
    yield Path(__file__).resolve().parent.parent.parent
    build = os.environ.get("TVMNODE_BUILD_DIR")
    if build:
        try:
            with open(os.path.join(build, "Makefile")) as f:
                m = re.search(r"^abs_top_srcdir = (.*)$", f.read(), re.M)
        except OSError:
            m = None
        if m:
            yield Path(m.group(1).strip())


def _find(packaged: str, in_source: str, marker: str) -> Path:
    p = _packaged(packaged)
    if p is not None:
        return p
    for tree in _source_trees():
        d = tree / in_source
        if (d / marker).exists():
            return d.resolve()
    raise FileNotFoundError(
        "tvmnode: no %s: this package carries no copy (it was built against a build "
        "tree) and no source tree was found; set TVMNODE_SOURCE_DIR to the repository"
        % packaged)


def _crt_dir() -> Path:
    """The crt's sources: a folder with include/tvmnode/crt/*.h and src/**."""
    return _find("crt", "runtime/crt", "include/tvmnode/crt/status.h")


def _include_dir() -> Path:
    """The folder to put on the include path for <tvmnode/tvmnode.h>."""
    return _find("include", "libtvmnode/include", "tvmnode/tvmnode.h")
