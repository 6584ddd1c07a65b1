#!/usr/bin/env bash
# run_fuzz_models.sh BUILD_DIR SECONDS OUT_DIR: fuzz/fuzz_models.py (hostile
# model files through import, the pipeline, the code generator and the
# executor) on the library of BUILD_DIR, seeded with the bundled trained
# models (../shared/models) and a few ONNX node tests (libonnx-testdata).
# When BUILD_DIR was configured with --enable-sanitizers (./dev fuzz uses
# build-asan), AddressSanitizer's runtime is preloaded into Python, so a
# memory error in the library kills the case and is kept as a crash.
# Findings go to OUT_DIR; the last line is the fuzzer's summary.
set -u
BUILD=${1:-}
SECS=${2:-60}
OUT=${3:-}
[ -n "$OUT" ] || { echo "usage: $0 BUILD_DIR SECONDS OUT_DIR" >&2; exit 2; }
TNPY_PACKAGES="numpy tflite onnx"
. "$(dirname "$0")/tools/env.sh"
MODELS=${TVMNODE_MODELS:-$(cd "$HERE/../.." && pwd)/shared/models}
NODE=/usr/share/libonnx-testdata/data/node
seeds=()
for m in kws_ref_model ad01_int8 str_ww_ref_model ad01_fp32; do
  [ -f "$MODELS/$m.tflite" ] && seeds+=("$MODELS/$m.tflite")
done
for t in conv_with_strides_padding maxpool_2d_pads averagepool_2d_pads qlinearconv \
         qlinearmatmul_2D convtranspose dequantizelinear quantizelinear gather_0 slice \
         resize_upsample_scales_nearest reshape_reordered_all_dims concat_2d_axis_0; do
  [ -f "$NODE/test_$t/model.onnx" ] && seeds+=("$NODE/test_$t/model.onnx")
done
pre=()
if grep -q -- "-fsanitize=address" "$BUILD/config.log" 2>/dev/null ||
   grep -q "enable-sanitizers" "$BUILD/config.log" 2>/dev/null; then
  # libstdc++ too: else ASan's __cxa_throw interceptor aborts on the first
  # exception a C++ extension (onnx) throws
  pre=(env "LD_PRELOAD=$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libstdc++.so)"
       "ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:allocator_may_return_null=1"
       "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")
fi
mkdir -p "$OUT"
"${pre[@]}" "$VPY" "$HERE/../fuzz/fuzz_models.py" --seconds "$SECS" --out "$OUT" "${seeds[@]}"
