#!/usr/bin/env python3
"""make_archives.py OUT [MODEL.tflite]: the archives the Rust example builds
from (TVMGEN_ARCHIVES=OUT).

Compiles the keyword-spotting model (by default ../../../../shared/models/
kws_ref_model.tflite, or $TVMNODE_MODELS/kws_ref_model.tflite) with
--interface c,rust in the five variants src/lib.rs uses (kws, kws_io,
kws_cp, kws_2p, kws_dev), exports each to OUT/<name>/, and writes
OUT/input.bin (a seeded random int8 input) and OUT/expected.bin (what the
host executor computes from it, which the generated C computes bit for
bit; python/tests/test_rust_iface.py also checks that against the C run).
Needs the tvmnode Python package on the path.
"""
from __future__ import annotations

import os
import sys
from typing import Any, Dict

import numpy as np

VARIANTS: Dict[str, Dict[str, Any]] = {
    "kws": {},
    "kws_io": {"io_in_pool": True},
    "kws_cp": {"constants_in_pool": True},
    "kws_2p": {"pools": [{"name": "sram", "limit": 4096}, {"name": "dram", "limit": 0}]},
    "kws_dev": {"devices": {"npu": ["qnn.conv2d"]}},
}
# A seeded input near the input's zero point (83): full-range noise drives
# the classifier to one or two classes, this one gives five non-trivial
# scores, a stricter comparison.
SEED, LOW, HIGH = 1, 60, 110


def default_model() -> str:
    models = os.environ.get("TVMNODE_MODELS") or os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "shared", "models")
    return os.path.normpath(os.path.join(models, "kws_ref_model.tflite"))


def make(out: str, model: str) -> Dict[str, Any]:
    """Write the archives, input.bin and expected.bin to `out`; returns
    {"input": int8 array, "expected": int8 array}. Keeps no tvmnode
    object alive."""
    from tvmnode import codegen, frontend, runtime

    os.makedirs(out, exist_ok=True)
    x = np.random.default_rng(SEED).integers(LOW, HIGH, (1, 49, 10, 1)).astype(np.int8)
    expected = None
    for name, opts in VARIANTS.items():
        arch = codegen.compile(frontend.load_model(model), name=name, interface="c,rust", **opts)
        arch.export(os.path.join(out, name))
        if name == "kws":
            expected = np.asarray(runtime.Executor(arch.module)(x)).astype(np.int8).copy()
        del arch
    assert expected is not None
    with open(os.path.join(out, "input.bin"), "wb") as f:
        f.write(x.tobytes())
    with open(os.path.join(out, "expected.bin"), "wb") as f:
        f.write(expected.tobytes())
    return {"input": x, "expected": expected}


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    make(sys.argv[1], sys.argv[2] if len(sys.argv) == 3 else default_model())
