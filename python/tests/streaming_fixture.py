"""A streaming model for the Go and Rust Module tests: the int8
accumulator of test_stateful (two states) compiled into a library, with
the inputs of STEPS runs and what the host executor gives for each, a
reset before step RESET_AT.

    python streaming_fixture.py OUTDIR

writes OUTDIR/stream.so (model "stream"), OUTDIR/inputs.bin (STEPS inputs
of 8 int8 each) and OUTDIR/want.bin (per step: output "sum", then output
"prev", 8 int8 each)."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from test_stateful import int8_model  # noqa: E402
from tvmnode import codegen, frontend  # noqa: E402
from tvmnode.runtime import Executor  # noqa: E402

STEPS, RESET_AT = 6, 4


def main(out: str) -> None:
    mod = frontend.from_tflite(int8_model())
    arch = codegen.compile(mod, name="stream")
    codegen.build_library(arch.export(os.path.join(out, "stream")),
                          os.path.join(out, "stream.so"))
    rng = np.random.default_rng(5)
    xs = [rng.integers(-128, 127, (1, 8)).astype(np.int8) for _ in range(STEPS)]
    ex = Executor(mod)
    want = []
    for k, x in enumerate(xs):
        if k == RESET_AT:
            ex.reset()
        want += [np.asarray(y) for y in ex(x)]
    with open(os.path.join(out, "inputs.bin"), "wb") as f:
        f.write(b"".join(x.tobytes() for x in xs))
    with open(os.path.join(out, "want.bin"), "wb") as f:
        f.write(b"".join(y.astype(np.int8).tobytes() for y in want))


if __name__ == "__main__":
    main(sys.argv[1])
