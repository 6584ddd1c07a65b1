#!/usr/bin/env bash
# run_bench.sh BUILD_DIR OUT_DIR [--samples N]: the Python binding's
# benchmarks beside apache-tvm-ffi (pinned, from PyPI), ctypes and CPython
# builtins, in one run; then the trained models' import time and latency
# beside TFLite Micro and LiteRT (bench/bench_models.py), compiled C
# (bench_aot.py; bench_x86.py, the int8 and float models on process CPU time
# beside LiteRT, onnxruntime and TFLite Micro, and bench_x86_layers.py, ResNet-8's int8 convolution layers alone), a
# compiled model's per-call cost from Python beside LiteRT
# (bench_module.py), compile time against model size (bench_compile.py),
# the emulated Cortex-M4 (bench_device.py) and every Cortex-M core of
# firmware/targets.txt (bench_cores.py). BUILD_DIR should be an optimised build tree
# (../configure CFLAGS="-O2 -g"). Prints a table; writes
# OUT_DIR/bench_python.json (every sample) and OUT_DIR/bench_python.md.
set -u
BUILD=${1:-}
OUT=${2:-}
[ -n "$OUT" ] || { echo "usage: $0 BUILD_DIR OUT_DIR [--samples N]" >&2; exit 2; }
shift 2
TNPY_PACKAGES="numpy pytest apache-tvm-ffi==0.1.15.post2 tflite tflite-micro ai-edge-litert onnxruntime==1.32.0"  # tvm_ffi.testing imports pytest
. "$(dirname "$0")/tools/env.sh"
mkdir -p "$OUT"
out_abs=$(cd "$OUT" && pwd)
"$VPY" "$HERE/bench/bench_python.py" --out "$out_abs" "$@" || exit
# the trained models beside TFLite Micro and LiteRT (bench_models.md/.json)
"$VPY" "$HERE/bench/bench_models.py" --out "$out_abs" || exit
"$VPY" "$HERE/bench/bench_aot.py" --out "$out_abs" || exit
# the int8 models compiled to C beside LiteRT (XNNPACK and reference kernels), onnxruntime
# (tf2onnx conversions, made and cached by bench/x86_peers.py) and TFLite Micro on process
# CPU time, uncapped and with the AVX2 forms forced (bench_x86.md/.json)
"$VPY" "$HERE/bench/bench_x86.py" --isa avx2 --out "$out_abs" || exit
# the float32 models likewise, outputs within a tolerance of LiteRT's (bench_x86_float.md/.json)
"$VPY" "$HERE/bench/bench_x86.py" --float --isa avx2 --out "$out_abs" || exit
# ResNet-8's int8 convolution layers alone, GMAC/s per shape and ISA level (bench_x86_layers.md/.json)
"$VPY" "$HERE/bench/bench_x86_layers.py" --out "$out_abs" || exit
# compile time from 1k to 1M operators, chains and random DAGs (bench_compile.md/.json)
"$VPY" "$HERE/bench/bench_compile.py" --out "$out_abs" || exit
# a compiled model run from Python beside LiteRT, per call (bench_module.md/.json)
"$VPY" "$HERE/bench/bench_module.py" --out "$out_abs" || exit
# the int8 and float models on every Cortex-M core of the target table (bench_cores.md/.json)
"$VPY" "$HERE/bench/bench_cores.py" --out "$out_abs" || exit
# the same models on the emulated Cortex-M4 and in wasm32 (bench_device.md/.json)
exec "$VPY" "$HERE/bench/bench_device.py" --out "$out_abs"
