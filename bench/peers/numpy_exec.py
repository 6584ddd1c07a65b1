#!/usr/bin/env python3
"""numpy_exec.py: bench_exec's peer, the AD autoencoder run by numpy.

Run by bench/run.py (suite "exec") with PYTHONPATH at the pip --target
install of numpy it makes; by hand: python3 bench/peers/numpy_exec.py.

The MLPerf Tiny anomaly-detection autoencoder is a chain of dense layers
(640-128-128-128-128-8-128-128-128-128-640, ReLU after all but the last),
which numpy runs as one matrix-vector product per layer: the easy network
to set beside the executor. Row "ad" is ns per inference of a (1, 640)
float32 input, weights stored as the executor folds them ([in, out], so
each layer is x @ W + b), timed as bench_util.h times (calibrated ~20 ms
samples, 9 of them, the median). numpy's own BLAS threads are limited to
one, as the executor runs on one thread.
"""
import json
import os
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
import numpy as np  # noqa: E402

DIMS = [640, 128, 128, 128, 128, 8, 128, 128, 128, 128, 640]


def bench(group, name, fn):
    iters = 1
    while True:
        t0 = time.perf_counter_ns()
        fn(iters)
        dt = time.perf_counter_ns() - t0
        if dt > 2e7:
            break
        iters *= 10 if dt < 2e6 else 2
    samples = []
    for _ in range(9):
        t0 = time.perf_counter_ns()
        fn(iters)
        samples.append((time.perf_counter_ns() - t0) / iters)
    samples.sort()
    print(json.dumps({"group": group, "name": name, "ns_per_op": samples[4],
                      "min": samples[0], "max": samples[-1], "iters": iters}),
          flush=True)


def main():
    rng = np.random.default_rng(0)
    layers = [(rng.standard_normal((a, b), dtype=np.float32) * 0.05,
               rng.standard_normal(b, dtype=np.float32) * 0.05)
              for a, b in zip(DIMS, DIMS[1:])]
    x0 = rng.standard_normal((1, 640), dtype=np.float32)

    def ad(iters):
        for _ in range(iters):
            x = x0
            for i, (w, b) in enumerate(layers):
                x = x @ w + b
                if i + 1 < len(layers):
                    np.maximum(x, 0, out=x)

    bench("exec", "ad", ad)


if __name__ == "__main__":
    main()
