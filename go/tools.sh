# go/tools.sh BUILD_DIR: sourced by run_tests.sh and run_bench.sh. Points cgo
# at the headers in the source tree and the library in BUILD_DIR (an
# autotools build tree), and keeps Go's caches inside it.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [[ $# -lt 1 || ! -d "$1" ]]; then
  echo "usage: $0 BUILD_DIR" >&2
  echo "go tests: 0 passed, 1 failed"
  exit 2
fi
build="$(cd "$1" && pwd)"
if ! command -v go >/dev/null && [[ -x /usr/local/go/bin/go ]]; then
  export PATH="/usr/local/go/bin:$PATH"
fi
if ! command -v go >/dev/null; then
  echo "go not found (./dev installs golang-go)" >&2
  echo "go tests: 0 passed, 1 failed"
  exit 1
fi
export CGO_ENABLED=1
export CGO_CFLAGS="-O2 -g -I$here/../libtvmnode/include"
export CGO_LDFLAGS="-L$build/libtvmnode/.libs -Wl,-rpath,$build/libtvmnode/.libs"
export GOCACHE="${GOCACHE:-$build/go/cache}"
export GOPATH="${GOPATH:-$build/go/path}"
export GOFLAGS="${GOFLAGS:--buildvcs=false}"
export GOTOOLCHAIN=local
cd "$here"
