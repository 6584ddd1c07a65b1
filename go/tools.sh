# go/tools.sh BUILD_DIR: sourced by run_tests.sh and run_bench.sh. The
# package finds the library with pkg-config (#cgo pkg-config: tvmnode); this
# points pkg-config at the headers in the source tree and the library in
# BUILD_DIR (an autotools build tree) through a tvmnode-uninstalled.pc,
# which pkg-config prefers to tvmnode.pc, and keeps Go's caches in BUILD_DIR.
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
# BUILD_DIR/tvmnode.pc names the install prefix; the uninstalled one is
# the same with the directories of the trees (and an rpath, so that the
# test binaries find the library where it was built).
if [[ ! -f $build/tvmnode.pc || ! -d $build/libtvmnode/.libs ]]; then
  echo "$build: no tvmnode.pc or libtvmnode/.libs (configure and make it first)" >&2
  echo "go tests: 0 passed, 1 failed"
  exit 1
fi
mkdir -p "$build/go/pkgconfig"
# Installed, the runtime's headers (tvmnode/module.h, tvmnode/crt/*.h) sit
# beside the library's; in the source tree they have folders of their own.
src="$(cd "$here/.." && pwd)"
sed -e "s|^prefix=.*|prefix=$build|" \
    -e "s|^libdir=.*|libdir=$build/libtvmnode/.libs|" \
    -e "s|^includedir=.*|includedir=$(cd "$here/../libtvmnode/include" && pwd)|" \
    -e 's|^Libs: -L${libdir}|Libs: -L${libdir} -Wl,-rpath,${libdir}|' \
    -e "s|^Cflags: -I\${includedir}|& -I$src/runtime/host/include -I$src/runtime/crt/include|" \
    "$build/tvmnode.pc" >"$build/go/pkgconfig/tvmnode-uninstalled.pc"
export PKG_CONFIG_PATH="$build/go/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
export CGO_ENABLED=1
export CGO_CFLAGS="${CGO_CFLAGS:--O2 -g}"
export GOCACHE="${GOCACHE:-$build/go/cache}"
export GOPATH="${GOPATH:-$build/go/path}"
export GOFLAGS="${GOFLAGS:--buildvcs=false}"
export GOTOOLCHAIN=local
# The model tests compile models with the Python tooling of this build tree
# (go/tvmnode/module_test.go; TVMNODE_PYTHON overrides).
export TVMNODE_BUILD_DIR="$build"
cd "$here"
