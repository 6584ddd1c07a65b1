#!/usr/bin/env bash
# rust-sys/run_tests.sh BUILD_DIR: build the Rust binding against the C
# library in BUILD_DIR (an autotools build tree, after `make`) and run
# cargo test for both crates, the example, clippy (-D warnings), rustdoc
# (-D warnings) and rustfmt --check. Needs cargo (rustup installs clippy
# and rustfmt if they are missing) and crates.io for the one build
# dependency (pkg-config). The last line is
#   rust tests: N passed, M failed
# where N and M count cargo's tests plus one per check; exits non-zero on
# any failure.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
if [[ $# -lt 1 || ! -d "$1" ]]; then
  echo "usage: $0 BUILD_DIR" >&2
  echo "rust tests: 0 passed, 1 failed"
  exit 2
fi
export TVMNODE_BUILD_DIR="$(cd "$1" && pwd)"
cd "$here"

if ! command -v cargo >/dev/null; then
  echo "cargo not found (install rustup)" >&2
  echo "rust tests: 0 passed, 1 failed"
  exit 1
fi
if command -v rustup >/dev/null; then
  cargo clippy --version >/dev/null 2>&1 || rustup component add clippy >/dev/null 2>&1
  cargo fmt --version >/dev/null 2>&1 || rustup component add rustfmt >/dev/null 2>&1
fi

passed=0
failed=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# cargo test: count the tests its summary lines report.
cargo test --workspace 2>&1 | tee "$log"
test_rc=${PIPESTATUS[0]}
p=$(awk '/^test result: / { for (i = 1; i <= NF; i++) if ($i ~ /^passed;?$/) n += $(i-1) } END { print n + 0 }' "$log")
f=$(awk '/^test result: / { for (i = 1; i <= NF; i++) if ($i ~ /^failed;?$/) n += $(i-1) } END { print n + 0 }' "$log")
passed=$((passed + ${p:-0}))
failed=$((failed + ${f:-0}))
if [[ $test_rc -ne 0 && ${f:-0} -eq 0 ]]; then
  failed=$((failed + 1)) # a build failure reports no test at all
fi

check() {
  local name=$1
  shift
  echo "== $name: $*"
  if "$@"; then
    passed=$((passed + 1))
  else
    echo "FAILED: $name"
    failed=$((failed + 1))
  fi
}
check example cargo run -q --example tour
check clippy cargo clippy --workspace --all-targets -- -D warnings
check rustdoc env RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps -q
if cargo fmt --version >/dev/null 2>&1; then
  check rustfmt cargo fmt --all -- --check
fi

echo "rust tests: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
