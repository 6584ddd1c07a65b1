#!/usr/bin/env bash
# go/serve/run_bench.sh BUILD_DIR OUT_DIR: tvmnode-serve under load on
# loopback (bench/main.go says what is measured), then the device
# session's round trip on an emulated board (bench/main.go, where qemu
# and arm-none-eabi-gcc are installed): the tables go to
# OUT_DIR/serve_bench.md and stdout. ROUNDS and REQUESTS bound it (default
# 5 rounds of 2000 requests per configuration: well under a minute).
set -euo pipefail
mkdir -p "${2:?usage: $0 BUILD_DIR OUT_DIR}"
out="$(cd "$2" && pwd)" # before tools.sh changes the folder
. "$(dirname "$0")/../tools.sh"
cd serve
go build -o "$out/tvmnode-serve-bench" ./bench
"$out/tvmnode-serve-bench" -rounds "${ROUNDS:-5}" -requests "${REQUESTS:-2000}" | tee "$out/serve_bench.md"
