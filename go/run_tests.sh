#!/usr/bin/env bash
# go/run_tests.sh BUILD_DIR: build the Go binding against the C library in
# BUILD_DIR (an autotools build tree, after `make`) and check it: gofmt,
# go vet, go test with the race detector (every test asserts that no
# tvmnode object is left alive), and the example; then the same for the
# model server, the module in serve/ (tvmnode-serve). The last line reads
#   go tests: N passed, M failed
# where N and M count the Go tests plus one per check; exits non-zero on
# any failure.
set -uo pipefail
. "$(dirname "$0")/tools.sh"

passed=0
failed=0
step() { # step NAME CMD...: one check
  echo "== $1: ${*:2}"
  if "${@:2}"; then passed=$((passed + 1)); else echo "FAILED: $1"; failed=$((failed + 1)); fi
}
gofmt_clean() {
  local bad
  bad="$(gofmt -l .)"
  [[ -z $bad ]] || { echo "not gofmt-formatted: $bad"; return 1; }
}

mkdir -p "$build/go"
go version
# gotest NAME: go test -race over the module in the current folder, counted
# per test; failing tests' output is shown.
gotest() {
json="$build/go/test-$1.json"
go test -count=1 -race -json ./... >"$json"
rc=$?
read -r tp tf < <(python3 - "$json" <<'PYEOF'
import json, sys
passed = failed = 0
out = {}
for line in open(sys.argv[1]):
    try:
        e = json.loads(line)
    except ValueError:
        print(line, end="", file=sys.stderr)
        continue
    key = (e.get("Package"), e.get("Test"))
    if e.get("Action") == "output":
        out.setdefault(key, []).append(e.get("Output", ""))
    if e.get("Test") and e.get("Action") in ("pass", "fail"):
        if e["Action"] == "pass":
            passed += 1
        else:
            failed += 1
            sys.stderr.write("".join(out.get(key, [])))
    elif not e.get("Test") and e.get("Action") == "fail":
        failed += 1  # a package that failed to build or crashed
        sys.stderr.write("".join(out.get(key, [])))
print(passed, failed)
PYEOF
)
passed=$((passed + tp))
failed=$((failed + tf))
if [[ $rc -ne 0 && $tf -eq 0 ]]; then failed=$((failed + 1)); fi
echo "go test ($1): $tp passed, $tf failed"
}

gotest binding
step gofmt gofmt_clean
step vet go vet ./...
step example go run ./examples/tour
# The model server is a module of its own (serve/go.mod), which ./...
# above does not enter; its dependencies come from the module proxy.
# It needs the Go its go.mod names (grpc-go's minimum).
need="$(sed -n 's/^go \([0-9.]*\)$/\1/p' serve/go.mod)"
have="$(go env GOVERSION)"
have="${have#go}"
if [[ "$(printf '%s\n' "$need" "$have" | sort -V | head -1)" == "$need" ]]; then
  cd serve
  gotest serve
  step serve-vet go vet ./...
  step serve-build go build -o "$build/go/tvmnode-serve" ./cmd/tvmnode-serve
  cd ..
else
  echo "serve: not tested: tvmnode-serve needs Go $need, this is Go $have"
fi

echo "go tests: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
