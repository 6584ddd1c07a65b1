# tools/env.sh: sourced by run_tests.sh, run_main.sh and run_bench.sh.
#
# Sets up what the Python binding needs on a fresh Debian machine that has
# python3 and pip: the CPython headers (apt, when missing and we are root),
# a virtual environment under the build tree with the packages given in
# $TNPY_PACKAGES (pip from PyPI), and the extension built against the C
# library of that build tree. Afterwards $VPY is the interpreter to use and
# $TNPY_LIB the directory to put on PYTHONPATH.

tnpy_die() { echo "$*" >&2; exit 2; }

[ -n "${BUILD:-}" ] || tnpy_die "usage: $0 BUILD_DIR"
[ -d "$BUILD" ] || tnpy_die "$BUILD: no such build directory"
BUILD=$(cd "$BUILD" && pwd)
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PY=${PYTHON:-python3}
[ -f "$BUILD/libtvmnode/.libs/libtvmnode.so" ] ||
  tnpy_die "$BUILD: libtvmnode is not built (run make there first)"

# Python.h (Debian keeps it in python3-dev)
inc=$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
if [ ! -f "$inc/Python.h" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "installing python3-dev (Python.h is missing)" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-dev >&2 ||
      tnpy_die "could not install python3-dev"
  else
    tnpy_die "Python.h not found in $inc: install the Python development headers"
  fi
fi

VENV="$BUILD/python/venv"
if [ ! -x "$VENV/bin/python" ]; then
  if ! "$PY" -m venv "$VENV" >/dev/null 2>&1; then
    rm -rf "$VENV"
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
      pyver=$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -qq "python$pyver-venv" >&2 || apt-get install -y -qq python3-venv >&2
    fi
    "$PY" -m venv "$VENV" || tnpy_die "could not make a virtual environment"
  fi
fi
VPY="$VENV/bin/python"
"$VPY" -m pip install -q --disable-pip-version-check setuptools ${TNPY_PACKAGES:-} ||
  tnpy_die "pip install failed"

# Build the package (pure Python files, stubs and the extension) into the
# build tree, against this tree's libtvmnode.
TNPY_LIB="$BUILD/python/lib"
(cd "$HERE" && TVMNODE_BUILD_DIR="$BUILD" "$VPY" setup.py -q build \
    --build-base "$BUILD/python/build" --build-lib "$TNPY_LIB" >"$BUILD/python/build.log" 2>&1) || {
  cat "$BUILD/python/build.log" >&2
  tnpy_die "building the extension failed"
}
export PYTHONPATH="$TNPY_LIB${PYTHONPATH:+:$PYTHONPATH}"
export TVMNODE_BUILD_DIR="$BUILD"
