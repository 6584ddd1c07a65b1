#!/usr/bin/env bash
# run_deploy.sh BUILD_DIR [ARGS]: the main job, the deployment path
# (examples/deploy.py): a trained model imported, optimised by C and
# Python passes, compiled to C in the Model Library Format, built with the
# system compiler and run on the bundled samples beside LiteRT and TFLite
# Micro. ARGS go to deploy.py; its files go to BUILD_DIR/deploy.
#
# TNPY_PACKAGES is what every model file deploy.py takes needs: the
# importers' parsers (tflite for .tflite, onnx for .onnx; onnx also gives
# the reference column of an ONNX model) and the peers (LiteRT, TFLite
# Micro). tests/test_deploy.py checks it against the importers' imports.
set -u
BUILD=${1:-}
shift || true
TNPY_PACKAGES="numpy tflite onnx tflite-micro ai-edge-litert"
. "$(dirname "$0")/tools/env.sh"
exec "$VPY" "$HERE/examples/deploy.py" --out "$BUILD/deploy" "$@"
