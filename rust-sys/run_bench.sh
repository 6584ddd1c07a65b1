#!/usr/bin/env bash
# rust-sys/run_bench.sh BUILD_DIR OUT_DIR: the Rust <-> C call benchmarks
# against the library in BUILD_DIR (configure it with CFLAGS="-O2 -g" for
# meaningful figures). Prints the table and writes OUT_DIR/rust_calls.json.
# The C side is measured in the same process (benches/harness.c, compiled at
# -O2 and loaded by the bench), so both languages share one harness and one
# run. Uses its own cargo target directory so it does not disturb the debug
# build of run_tests.sh.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
if [[ $# -ne 2 || ! -d "$1" ]]; then
  echo "usage: $0 BUILD_DIR OUT_DIR" >&2
  exit 2
fi
export TVMNODE_BUILD_DIR="$(cd "$1" && pwd)"
mkdir -p "$2"
out="$(cd "$2" && pwd)"
cd "$here"
export CARGO_TARGET_DIR="$here/target/bench-rel"
cargo bench -q --bench calls -- --json "$out/rust_calls.json"
cargo bench -q --bench module -- --json "$out/rust_module.json"
