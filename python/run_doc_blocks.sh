#!/usr/bin/env bash
# run_doc_blocks.sh BUILD_DIR [ARGS]: every C, Python, Go and Rust block of
# the README files and docs/ compiled and run (tools/doc_blocks.py: Python
# in this venv, C against BUILD_DIR's libtvmnode, Go in a module over go/,
# Rust in a crate over rust-sys/tvmnode), one line per block. The last line
# reads
#   docs tests: N passed, M failed
set -u
BUILD=${1:-}
shift || true
TNPY_PACKAGES="numpy tflite"
. "$(dirname "$0")/tools/env.sh"
exec "$VPY" "$HERE/tools/doc_blocks.py" --build "$BUILD" "$@"
